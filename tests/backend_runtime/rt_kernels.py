"""Hand-written LLVM IR kernels following the runtime's kernel ABI (test helpers)."""

from __future__ import annotations

from backend.abi.pyabi import (
    NPY_ARRAY_C_CONTIGUOUS,
    NPY_ARRAY_WRITEABLE,
    c_string_global,
    runtime_prelude_ir,
)
from backend.abi.pyentry import (
    SCALAR_DTYPES,
    BufferParam,
    EntrySpec,
    ScalarParam,
    entry_wrapper_ir,
)


def _check_buffer(fn: str, name: str, label: str, nxt: str, *, writeable: bool) -> str:
    """IR block ``label`` validating 1-d float32 C-contiguous array ``%name`` (len >= %n)."""
    need = NPY_ARRAY_C_CONTIGUOUS | (NPY_ARRAY_WRITEABLE if writeable else 0)
    return f"""\
{label}:
  %{name}.dt = call i1 @tvms_array_dtype_matches(ptr %{name}, ptr @tvms_descr_float32,
                                                 i8 102, i64 4)
  br i1 %{name}.dt, label %{label}.nd, label %{label}.bad_dtype
{label}.bad_dtype:
  call void @tvms_raise(ptr @tvms_exc_TypeError, ptr @{fn}.{name}.dtype)
  ret i32 -1
{label}.nd:
  %{name}.ndim = call i32 @tvms_array_ndim(ptr %{name})
  %{name}.is1 = icmp eq i32 %{name}.ndim, 1
  br i1 %{name}.is1, label %{label}.flags, label %{label}.bad_nd
{label}.bad_nd:
  %{name}.nd64 = sext i32 %{name}.ndim to i64
  call void @tvms_raise_fmt(ptr @tvms_exc_ValueError, ptr @{fn}.{name}.ndim,
                            i64 %{name}.nd64, i64 0, i64 0, i64 0)
  ret i32 -1
{label}.flags:
  %{name}.fl = call i32 @tvms_array_flags(ptr %{name})
  %{name}.m = and i32 %{name}.fl, {need}
  %{name}.fok = icmp eq i32 %{name}.m, {need}
  br i1 %{name}.fok, label %{label}.len, label %{label}.bad_flags
{label}.bad_flags:
  call void @tvms_raise(ptr @tvms_exc_ValueError, ptr @{fn}.{name}.flags)
  ret i32 -1
{label}.len:
  %{name}.len = call i64 @tvms_array_shape(ptr %{name}, i64 0)
  %{name}.lok = icmp sle i64 %n, %{name}.len
  br i1 %{name}.lok, label %{nxt}, label %{label}.bad_len
{label}.bad_len:
  call void @tvms_raise_fmt(ptr @tvms_exc_IndexError, ptr @{fn}.{name}.len,
                            i64 %n, i64 %{name}.len, i64 0, i64 0)
  ret i32 -1
"""


def saxpy_ir(with_prelude: bool = True) -> tuple[str, EntrySpec]:
    """``saxpy(x, y, out, alpha: float32, n: int64)``: out[:n] = alpha * x[:n] + y[:n]."""
    fn = "saxpy"
    spec = EntrySpec(fn, [BufferParam("x", "float32"), BufferParam("y", "float32"),
                          BufferParam("out", "float32"),
                          ScalarParam("alpha", "float32"), ScalarParam("n", "int64")])
    consts = "".join(
        c_string_global(f"{fn}.{b}.dtype", f"{fn}(): {b} must be a float32 array")
        + c_string_global(f"{fn}.{b}.ndim", f"{fn}(): {b} must be 1-d, got %lld dims")
        + c_string_global(
            f"{fn}.{b}.flags",
            f"{fn}(): {b} must be C-contiguous" + (" and writeable" if b == "out" else ""))
        + c_string_global(f"{fn}.{b}.len", f"{fn}(): n=%lld exceeds the length %lld of {b}")
        for b in ("x", "y", "out")
    ) + c_string_global(f"{fn}.neg", f"{fn}(): n must be >= 0, got %lld")
    body = f"""\
define i32 @saxpy_kernel(ptr %x, ptr %y, ptr %out, float %alpha, i64 %n) {{
entry:
  %neg = icmp slt i64 %n, 0
  br i1 %neg, label %bad_n, label %cx
bad_n:
  call void @tvms_raise_fmt(ptr @tvms_exc_ValueError, ptr @{fn}.neg, i64 %n, i64 0, i64 0, i64 0)
  ret i32 -1
{_check_buffer(fn, "x", "cx", "cy", writeable=False)}\
{_check_buffer(fn, "y", "cy", "cout", writeable=False)}\
{_check_buffer(fn, "out", "cout", "go", writeable=True)}\
go:
  %px = call ptr @tvms_array_data(ptr %x)
  %py = call ptr @tvms_array_data(ptr %y)
  %po = call ptr @tvms_array_data(ptr %out)
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i64 [ 0, %go ], [ %i1, %loop ]
  %gx = getelementptr inbounds float, ptr %px, i64 %i
  %gy = getelementptr inbounds float, ptr %py, i64 %i
  %go2 = getelementptr inbounds float, ptr %po, i64 %i
  %vx = load float, ptr %gx, align 4
  %vy = load float, ptr %gy, align 4
  %r = call float @llvm.fma.f32(float %alpha, float %vx, float %vy)
  store float %r, ptr %go2, align 4
  %i1 = add nsw i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %done
done:
  ret i32 0
}}
declare float @llvm.fma.f32(float, float, float)
"""
    prelude = runtime_prelude_ir() if with_prelude else ""
    return prelude + consts + body + entry_wrapper_ir(spec, "saxpy_kernel",
                                                      with_prelude=False), spec


def echo_ir() -> tuple[str, dict[str, EntrySpec]]:
    """One module with ``echo_<dtype>(out, v)`` kernels storing the unboxed scalar in ``out[0]``.

    ``out`` is an int64 array for integers/bool (uint64 stored bit-exactly) and float64 for
    floats; the kernels trust the caller about out's dtype.
    """
    parts = [runtime_prelude_ir()]
    specs: dict[str, EntrySpec] = {}
    for dt, ty in SCALAR_DTYPES.items():
        name = f"echo_{dt}"
        spec = EntrySpec(name, [BufferParam("out"), ScalarParam("v", dt)])
        specs[dt] = spec
        if ty in ("half", "float"):
            conv, store_ty = f"%w = fpext {ty} %v to double", "double"
        elif ty == "double":
            conv, store_ty = "%w = fadd double %v, 0.0", "double"
        elif ty == "i64":
            conv, store_ty = "%w = add i64 %v, 0", "i64"
        else:
            ext = "zext" if dt.startswith("u") or dt == "bool" else "sext"
            conv, store_ty = f"%w = {ext} {ty} %v to i64", "i64"
        parts.append(f"""\
define i32 @{name}_kernel(ptr %out, {ty} %v) {{
  %p = call ptr @tvms_array_data(ptr %out)
  {conv}
  store {store_ty} %w, ptr %p, align 8
  ret i32 0
}}
""")
        parts.append(entry_wrapper_ir(spec, f"{name}_kernel", with_prelude=False))
    return "".join(parts), specs


def raising_ir() -> tuple[str, dict[str, EntrySpec]]:
    """Kernels that fail: ``fail_exc(code)`` raises per code; ``fail_silent()`` returns 7."""
    fn = "fail_exc"
    spec = EntrySpec(fn, [ScalarParam("code", "int32")], release_gil=True)
    spec2 = EntrySpec("fail_silent", [])
    ir = runtime_prelude_ir() + c_string_global("m.zero", "division by zero in kernel") \
        + c_string_global("m.idx", "index %lld out of range [0, %lld)") \
        + c_string_global("m.assert", "assertion failed: x > 0") + """\
define i32 @fail_exc_kernel(i32 %code) {
entry:
  switch i32 %code, label %ok [ i32 1, label %zero
                                i32 2, label %idx
                                i32 3, label %asrt ]
zero:
  call void @tvms_raise(ptr @tvms_exc_ZeroDivisionError, ptr @m.zero)
  ret i32 -1
idx:
  call void @tvms_raise_fmt(ptr @tvms_exc_IndexError, ptr @m.idx, i64 12, i64 10, i64 0, i64 0)
  ret i32 -1
asrt:
  call void @tvms_raise(ptr @tvms_exc_AssertionError, ptr @m.assert)
  ret i32 -1
ok:
  ret i32 0
}
define i32 @fail_silent_kernel() {
  ret i32 7
}
""" + entry_wrapper_ir(spec, f"{fn}_kernel", with_prelude=False) + entry_wrapper_ir(
        spec2, "fail_silent_kernel", with_prelude=False)
    return ir, {"fail_exc": spec, "fail_silent": spec2}
