"""Loops (serial, unrolled, parallel), While/If, Let, extern calls, entry builtins, kernel calls."""

from __future__ import annotations

import numpy as np
import pytest
from cgkit import AllocCounters, Kernel, build, loop

from backend.codegen import CodegenError, codegen_module
from backend.runtime import CompileError
from irbuilder.ir import (
    GT,
    LT,
    NE,
    Add,
    Allocate,
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DeclBuffer,
    Evaluate,
    FloorDiv,
    ForKind,
    IfThenElse,
    Let,
    LetStmt,
    Mul,
    SeqStmt,
    StringImm,
    Var,
    While,
    as_dtype,
    const,
    make_data_var,
)

I64 = as_dtype("int64")
I32 = as_dtype("int32")
F32 = as_dtype("float32")


def test_loop_var_types_and_nonzero_min() -> None:
    k = Kernel("l")
    c = k.buffer("C", "int32", 16)
    i = Var("i", I32)
    from irbuilder.ir import For

    body = For(
        i,
        const(3, "int32"),
        const(10, "int32"),
        ForKind.SERIAL,
        BufferStore(c, Mul(i, const(2, "int32")), (i,)),
    )
    lib = build(k.func(body))
    out = np.zeros(16, np.int32)
    lib["l"](out)
    expected = np.zeros(16, np.int32)
    expected[3:13] = np.arange(3, 13) * 2
    np.testing.assert_array_equal(out, expected)


def test_unrolled_and_vectorized_loop_metadata() -> None:
    k = Kernel("u")
    c = k.buffer("C", "float32", 8)
    body = SeqStmt(
        (
            loop(4, lambda i: BufferStore(c, const(1.0, "float32"), (i,)), kind=ForKind.UNROLLED),
            loop(
                4,
                lambda i: BufferStore(c, const(2.0, "float32"), (Add(i, const(4, "int64")),)),
                kind=ForKind.VECTORIZED,
                name="j",
            ),
        )
    )
    text = codegen_module([k.func(body)])
    assert '!"llvm.loop.unroll.full"' in text
    assert '!"llvm.loop.vectorize.enable", i1 true' in text
    lib = build(k.func(body))
    out = np.zeros(8, np.float32)
    lib["u"](out)
    np.testing.assert_array_equal(out, [1, 1, 1, 1, 2, 2, 2, 2])


def test_while_if_let() -> None:
    # Collatz steps of n, computed with a While over a stack cell.
    k = Kernel("w")
    n = k.scalar("n", "int64")
    out = k.buffer("Out", "int64", 2)
    zero = const(0, "int64")
    one = const(1, "int64")
    cell = k.buffer("Cell", "int64", 1)
    x = BufferLoad(cell, (zero,))
    step = IfThenElse(
        NE(Call(I64, "bitwise_and", (x, one), CallKind.INTRINSIC), zero),
        BufferStore(cell, Add(Mul(x, const(3, "int64")), one), (zero,)),
        BufferStore(cell, FloorDiv(x, const(2, "int64")), (zero,)),
    )
    count = BufferStore(out, Add(BufferLoad(out, (zero,)), one), (zero,))
    v = Var("v", I64)
    body = SeqStmt(
        (
            BufferStore(cell, n, (zero,)),
            BufferStore(out, zero, (zero,)),
            While(GT(x, one), SeqStmt((step, count))),
            LetStmt(
                v,
                Mul(n, const(10, "int64")),
                BufferStore(out, Let(Var("t", I64), v, Add(v, one)), (one,)),
            ),
        )
    )
    lib = build(k.func(body))
    res, c = np.zeros(2, np.int64), np.zeros(1, np.int64)
    lib["w"](27, res, c)
    assert res[0] == 111 and res[1] == 271


def test_parallel_loop_matches_serial() -> None:
    n = 10_000
    k = Kernel("p")
    a, c = k.buffer("A", "float32", n), k.buffer("C", "float32", n)
    scale = k.scalar("s", "float32")
    body = loop(
        n, lambda i: BufferStore(c, Mul(BufferLoad(a, (i,)), scale), (i,)), kind=ForKind.PARALLEL
    )
    lib = build(k.func(body))
    assert "tvms_parallel_for" in lib.ir and "__par_0" in lib.ir
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    lib["p"](x, out, 0.5)
    np.testing.assert_array_equal(out, x * 0.5)


def test_parallel_body_with_allocations_and_nested_parallel() -> None:
    counters = AllocCounters()
    rows, cols = 64, 2048
    k = Kernel("pn")
    a, c = k.buffer("A", "float32", rows * cols), k.buffer("C", "float32", rows)
    data = make_data_var("row", F32)
    row = Buffer("row", data, (const(cols, "int64"),), F32)
    acc_data = make_data_var("acc", F32)
    acc = Buffer("acc", acc_data, (const(1, "int64"),), F32)
    zero = const(0, "int64")

    def per_row(i: Var) -> Allocate:
        copy = loop(
            cols,
            lambda j: BufferStore(
                row, BufferLoad(a, (Add(Mul(i, const(cols, "int64")), j),)), (j,)
            ),
            kind=ForKind.PARALLEL,
            name="j",
        )  # nested: runs serially inside the body
        total = loop(
            cols,
            lambda j: BufferStore(
                acc, Add(BufferLoad(acc, (zero,)), BufferLoad(row, (j,))), (zero,)
            ),
            name="j2",
        )
        return Allocate(
            data,
            F32,
            const(cols, "int64"),
            const(True),
            DeclBuffer(
                row,
                Allocate(
                    acc_data,
                    F32,
                    const(1, "int64"),
                    const(True),
                    DeclBuffer(
                        acc,
                        SeqStmt(
                            (
                                BufferStore(acc, const(0.0, "float32"), (zero,)),
                                copy,
                                total,
                                BufferStore(c, BufferLoad(acc, (zero,)), (i,)),
                            )
                        ),
                    ),
                ),
            ),
        )

    body = loop(rows, per_row, kind=ForKind.PARALLEL)
    lib = build(k.func(body), symbols=counters.symbols, count_allocations=True, stack_limit=1024)
    assert lib.ir.count("call void @tvms_parallel_for(") == 1  # only the outer loop is outlined
    x = np.random.default_rng(0).integers(0, 10, rows * cols).astype(np.float32)
    out = np.zeros(rows, np.float32)
    lib["pn"](x, out)
    np.testing.assert_array_equal(out, x.reshape(rows, cols).sum(axis=1))
    assert counters.total.value == rows and counters.live.value == 0


def test_error_inside_parallel_body_is_raised_by_the_caller() -> None:
    n = 1000
    k = Kernel("pe")
    a, c = k.buffer("A", "int32", n), k.buffer("C", "int32", n)
    body = loop(
        n,
        lambda i: SeqStmt(
            (
                AssertStmt(
                    LT(BufferLoad(a, (i,)), const(500, "int32")),
                    StringImm("IndexError: value too large"),
                ),
                BufferStore(c, FloorDiv(const(1000, "int32"), BufferLoad(a, (i,))), (i,)),
            )
        ),
        kind=ForKind.PARALLEL,
    )
    lib = build(k.func(body))
    x = np.arange(1, n + 1, dtype=np.int32) % 400 + 1
    out = np.zeros(n, np.int32)
    assert lib["pe"](x, out) == 0
    np.testing.assert_array_equal(out, 1000 // x)
    x[777] = 900
    with pytest.raises(IndexError, match="value too large"):
        lib["pe"](x, out)
    x[777] = 0
    with pytest.raises(ZeroDivisionError):
        lib["pe"](x, out)


def test_extern_calls_sinf_and_memset() -> None:
    k = Kernel("ext")
    a, c = k.buffer("A", "float32", 8), k.buffer("C", "float32", 8)
    b = k.buffer("B", "uint8", 16)
    fill = Evaluate(
        Call(
            as_dtype("handle"),
            "memset",
            (b.data, const(7, "int32"), const(16, "int64")),
            CallKind.EXTERN,
        )
    )
    sines = loop(
        8,
        lambda i: BufferStore(
            c, Call(F32, "sinf", (BufferLoad(a, (i,)),), CallKind.PURE_EXTERN), (i,)
        ),
    )
    lib = build(k.func(SeqStmt((fill, sines))))
    x = np.linspace(-3, 3, 8).astype(np.float32)
    out, raw = np.zeros(8, np.float32), np.zeros(16, np.uint8)
    lib["ext"](x, out, raw)
    np.testing.assert_allclose(out, np.sin(x), rtol=1e-6)
    np.testing.assert_array_equal(raw, np.full(16, 7, np.uint8))


def test_unknown_extern_symbol_is_reported_not_a_crash() -> None:
    k = Kernel("bad")
    c = k.buffer("C", "float32", 4)
    body = BufferStore(
        c,
        Call(F32, "tvms_no_such_function", (const(1.0, "float32"),), CallKind.EXTERN),
        (const(0, "int64"),),
    )
    with pytest.raises(CompileError, match="tvms_no_such_function"):
        build(k.func(body))


def test_entry_builtins_read_the_ndarray() -> None:
    k = Kernel("meta")
    k.buffer("A", "float32", 0)
    out = k.buffer("Out", "int64", 8)
    h = k.params[0]
    zero, one = const(0, "int32"), const(1, "int32")
    values = [
        Cast(I64, Call(I32, "array_ndim", (h,), CallKind.BUILTIN)),
        Call(I64, "array_shape", (h, zero), CallKind.BUILTIN),
        Call(I64, "array_shape", (h, one), CallKind.BUILTIN),
        Call(I64, "array_stride", (h, zero), CallKind.BUILTIN),
        Cast(I64, Call(I32, "array_flags", (h,), CallKind.BUILTIN)),
        Cast(
            I64,
            Call(as_dtype("bool"), "array_dtype_is", (h, StringImm("float32")), CallKind.BUILTIN),
        ),
        Cast(
            I64,
            Call(as_dtype("bool"), "array_dtype_is", (h, StringImm("float64")), CallKind.BUILTIN),
        ),
    ]
    body = SeqStmt(tuple(BufferStore(out, v, (const(j, "int64"),)) for j, v in enumerate(values)))
    lib = build(k.func(body))
    arr = np.zeros((3, 5), np.float32)
    res = np.zeros(8, np.int64)
    lib["meta"](arr, res)
    assert list(res[:7]) == [2, 3, 5, 20, arr.flags.num, 1, 0]
    swapped = arr.astype(">f4")
    lib["meta"](swapped, res)
    assert res[5] == 0  # byte-swapped float32 is not the native dtype
    lib["meta"](np.zeros(4, np.dtype("q")), res)
    assert list(res[:2]) == [1, 4] and res[5] == 0 and res[6] == 0


def test_array_dtype_is_accepts_every_spelling_of_int64() -> None:
    k = Kernel("dt")
    k.buffer("A", "int64", 0)
    out = k.buffer("Out", "bool", 1)
    h = k.params[0]
    body = BufferStore(
        out,
        Call(as_dtype("bool"), "array_dtype_is", (h, StringImm("int64")), CallKind.BUILTIN),
        (const(0, "int64"),),
    )
    lib = build(k.func(body))
    res = np.zeros(1, bool)
    for spelling, expected in (
        ("q", True),
        ("l", True),
        ("int64", True),
        ("i4", False),
        ("u8", False),
    ):
        lib["dt"](np.zeros(2, np.dtype(spelling)), res)
        assert res[0] == expected, spelling


def test_kernels_call_each_other_and_propagate_errors() -> None:
    inner = Kernel("inner")
    ia = inner.buffer("A", "int32", 4)
    ix = inner.scalar("x", "int32")
    inner_body = SeqStmt(
        (
            AssertStmt(GT(ix, const(0, "int32")), StringImm("ValueError: x must be positive")),
            loop(4, lambda i: BufferStore(ia, Add(BufferLoad(ia, (i,)), ix), (i,))),
        )
    )
    outer = Kernel("outer")
    outer.buffer("A", "int32", 4)
    ox = outer.scalar("x", "int32")
    call = Evaluate(
        Call(I32, "inner", (outer.params[0], Mul(ox, const(2, "int32"))), CallKind.EXTERN)
    )
    lib = build([inner.func(inner_body), outer.func(SeqStmt((call, call)))])
    arr = np.zeros(4, np.int32)
    lib["outer"](arr, 3)
    np.testing.assert_array_equal(arr, [12] * 4)
    with pytest.raises(ValueError, match="x must be positive"):
        lib["outer"](arr, -1)


def test_unbound_variable_and_nd_access_are_clear_errors() -> None:
    k = Kernel("e")
    c = k.buffer("C", "int64", 4)
    stray = Var("stray", I64)
    with pytest.raises(CodegenError, match="'stray'"):
        codegen_module([k.func(BufferStore(c, stray, (const(0, "int64"),)))])
    k2 = Kernel("e2")
    data = make_data_var("D", I64)
    two_d = Buffer("D", data, (const(2, "int64"), const(2, "int64")), I64)
    k2.buffer_map[Var("D", as_dtype("handle"))] = two_d
    k2.params.append(next(iter(k2.buffer_map)))
    with pytest.raises(CodegenError, match="flat 1-d"):
        codegen_module(
            [k2.func(BufferStore(two_d, const(1, "int64"), (const(0, "int64"), const(1, "int64"))))]
        )


def test_fastmath_flags() -> None:
    k = Kernel("fm")
    a, out = k.buffer("A", "float32", 64), k.buffer("Out", "float32", 1)
    zero = const(0, "int64")
    body = loop(
        64, lambda i: BufferStore(out, Add(BufferLoad(out, (zero,)), BufferLoad(a, (i,))), (zero,))
    )
    assert "fadd fast float" in codegen_module([k.func(body)], fastmath=True)
    assert "fast" not in codegen_module([k.func(body)])
    lib = build(k.func(body), fastmath=True)
    res = np.zeros(1, np.float32)
    lib["fm"](np.ones(64, np.float32), res)
    assert res[0] == 64


def test_scalar_params_of_every_type() -> None:
    k = Kernel("sc")
    out = k.buffer("Out", "float64", 6)
    names = ["int8", "uint16", "int32", "uint64", "float32", "bool"]
    params = [k.scalar(f"p{j}", dt) for j, dt in enumerate(names)]
    body = SeqStmt(
        tuple(
            BufferStore(out, Cast(as_dtype("float64"), p), (const(j, "int64"),))
            for j, p in enumerate(params)
        )
    )
    lib = build(k.func(body))
    res = np.zeros(6)
    lib["sc"](res, -5, 65535, -(2**31), 2**64 - 1, 1.5, True)
    np.testing.assert_array_equal(res, [-5, 65535, -(2**31), float(2**64 - 1), 1.5, 1.0])


def test_extern_call_to_a_symbol_the_runtime_prelude_declares() -> None:
    # PyErr_Occurred is declared by the runtime prelude; the module must declare it once.
    k = Kernel("occ")
    out = k.buffer("Out", "int64", 1)
    value = Call(as_dtype("handle"), "PyErr_Occurred", (), CallKind.EXTERN)
    body = BufferStore(
        out,
        Cast(I64, Call(as_dtype("bool"), "isnullptr", (value,), CallKind.BUILTIN)),
        (const(0, "int64"),),
    )
    lib = build(k.func(body))
    res = np.zeros(1, np.int64)
    lib["occ"](res)
    assert res[0] == 1
