"""CPython / numpy binary interface used by generated code.

* a start-up self-test of the ``PyArrayObject`` / ``PyArray_Descr`` / ``PyTypeObject`` field
  offsets the generated IR relies on (:func:`ndarray_layout`);
* the *runtime symbols* kernels may declare as ``external global`` and that the engine binds at
  load time (:data:`RUNTIME_GLOBALS`): exception type slots, numpy type and canonical dtype
  descriptor objects, ``None``/``True``/``False``;
* :func:`runtime_prelude_ir`: IR declarations plus small internal helper functions that read
  ndarray fields (include it exactly once per module); the helpers raising Python exceptions
  are declared there and defined once per process (:func:`prelude_helper_definitions`,
  compiled by :mod:`backend.abi.shared_helpers`).

Exception slots: ``@tvms_exc_ValueError`` is the address of a word holding the ``PyObject*`` of
``ValueError`` (like CPython's own ``PyExc_ValueError`` variable).  Raise from kernel IR with::

    call void @tvms_raise(ptr @tvms_exc_ValueError, ptr @msg)           ; constant C string
    call void @tvms_raise_fmt(ptr @tvms_exc_IndexError, ptr @fmt,       ; PyErr_Format, %lld args
                              i64 %i, i64 %n, i64 0, i64 0)
    ret i32 -1

Both helpers take the GIL with ``PyGILState_Ensure`` so they also work when the entry wrapper
released it.  They must be called from the thread that entered the kernel (not from a worker of
the thread pool), because the error indicator is per thread.
"""

from __future__ import annotations

import ctypes
import re
import sys
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DTYPES",
    "EXCEPTIONS",
    "SHARED_PRELUDE_HELPERS",
    "NPY_ARRAY_ALIGNED",
    "NPY_ARRAY_C_CONTIGUOUS",
    "NPY_ARRAY_F_CONTIGUOUS",
    "NPY_ARRAY_OWNDATA",
    "NPY_ARRAY_WRITEABLE",
    "DtypeInfo",
    "NdarrayLayout",
    "array_dtype_matches_ir",
    "c_string_global",
    "ndarray_layout",
    "prelude_helper_definitions",
    "runtime_global_address",
    "runtime_prelude_ir",
    "runtime_prelude_symbols",
]

# numpy array flag bits (ndarraytypes.h; identical in numpy 1.x and 2.x).
NPY_ARRAY_C_CONTIGUOUS = 0x0001
NPY_ARRAY_F_CONTIGUOUS = 0x0002
NPY_ARRAY_OWNDATA = 0x0004
NPY_ARRAY_ALIGNED = 0x0100
NPY_ARRAY_WRITEABLE = 0x0400

#: Exceptions kernels may raise through ``@tvms_exc_<Name>`` slots.
EXCEPTIONS: dict[str, type[BaseException]] = {
    "TypeError": TypeError,
    "ValueError": ValueError,
    "IndexError": IndexError,
    "AssertionError": AssertionError,
    "ZeroDivisionError": ZeroDivisionError,
    "RuntimeError": RuntimeError,
    "OverflowError": OverflowError,
    "MemoryError": MemoryError,
    "NotImplementedError": NotImplementedError,
}


@dataclass(frozen=True)
class DtypeInfo:
    """How a scalar dtype looks to numpy (``kind``/``itemsize``)."""

    name: str
    kind: str
    itemsize: int


#: Supported element / scalar dtypes.
DTYPES: dict[str, DtypeInfo] = {
    d.name: d
    for d in [
        DtypeInfo("bool", "b", 1),
        DtypeInfo("int8", "i", 1),
        DtypeInfo("int16", "i", 2),
        DtypeInfo("int32", "i", 4),
        DtypeInfo("int64", "i", 8),
        DtypeInfo("uint8", "u", 1),
        DtypeInfo("uint16", "u", 2),
        DtypeInfo("uint32", "u", 4),
        DtypeInfo("uint64", "u", 8),
        DtypeInfo("float16", "f", 2),
        DtypeInfo("float32", "f", 4),
        DtypeInfo("float64", "f", 8),
        DtypeInfo("complex64", "c", 8),
        DtypeInfo("complex128", "c", 16),
    ]
}


@dataclass(frozen=True)
class NdarrayLayout:
    """Byte offsets of the CPython/numpy struct fields read by generated code."""

    ob_type: int = 8
    data: int = 16
    nd: int = 24
    dims: int = 32
    strides: int = 40
    descr: int = 56
    flags: int = 64
    descr_kind: int = 24
    descr_byteorder: int = 26
    descr_type_num: int = 28
    descr_elsize: int = 40  # numpy 2.x: npy_intp at +40; numpy 1.x: int at +32
    descr_elsize_bits: int = 64
    tp_name: int = 24
    tp_flags: int = 168


_layout: NdarrayLayout | None = None


def _u(addr: int, ctype: type[ctypes._SimpleCData]) -> int:  # type: ignore[type-arg]
    return int(ctype.from_address(addr).value or 0)


def _check_layout(lay: NdarrayLayout) -> list[str]:
    """Compare *lay* against live objects; return a list of mismatches (empty when OK)."""
    errors: list[str] = []

    def expect(what: str, got: int, want: int) -> None:
        if got != want:
            errors.append(f"{what}: read {got}, expected {want}")

    base = np.zeros((4, 6), dtype=np.float32)
    arr = base[1:, ::2]  # non-contiguous view: distinct dims/strides/flags
    a = id(arr)
    expect("ob_type", _u(a + lay.ob_type, ctypes.c_void_p), id(np.ndarray))
    expect("data", _u(a + lay.data, ctypes.c_void_p), arr.__array_interface__["data"][0])
    expect("nd", _u(a + lay.nd, ctypes.c_int32), arr.ndim)
    dims = _u(a + lay.dims, ctypes.c_void_p)
    strides = _u(a + lay.strides, ctypes.c_void_p)
    for i in range(arr.ndim):
        expect(f"dims[{i}]", _u(dims + 8 * i, ctypes.c_int64), arr.shape[i])
        expect(f"strides[{i}]", _u(strides + 8 * i, ctypes.c_int64), arr.strides[i])
    expect("descr", _u(a + lay.descr, ctypes.c_void_p), id(arr.dtype))
    expect("flags", _u(a + lay.flags, ctypes.c_int32), arr.flags.num)
    elsize_t = ctypes.c_int64 if lay.descr_elsize_bits == 64 else ctypes.c_int32
    for dt in [np.dtype(n) for n in ("bool", "int8", "int64", "float16", "float64")] + [
        np.dtype(">f4"), np.dtype("complex128"),
    ]:
        d = id(dt)
        expect(f"{dt}.kind", _u(d + lay.descr_kind, ctypes.c_uint8), ord(dt.kind))
        expect(f"{dt}.byteorder", _u(d + lay.descr_byteorder, ctypes.c_uint8), ord(dt.byteorder))
        expect(f"{dt}.type_num", _u(d + lay.descr_type_num, ctypes.c_int32), dt.num)
        expect(f"{dt}.elsize", _u(d + lay.descr_elsize, elsize_t), dt.itemsize)
    name = ctypes.c_char_p.from_address(id(int) + lay.tp_name).value
    if name != b"int":
        errors.append(f"tp_name: read {name!r}, expected b'int'")
    str_flags = _u(id(str) + lay.tp_flags, ctypes.c_ulong)
    if not str_flags & (1 << 28) or _u(id(int) + lay.tp_flags, ctypes.c_ulong) & (1 << 28):
        errors.append("tp_flags: Py_TPFLAGS_UNICODE_SUBCLASS bit not where expected")
    return errors


def ndarray_layout() -> NdarrayLayout:
    """Return the verified struct layout, running the self-test on first use.

    Raises ``RuntimeError`` (loudly, before any IR relying on it is generated) when neither the
    numpy 2.x nor the numpy 1.x layout matches the running interpreter and numpy.
    """
    global _layout
    if _layout is not None:
        return _layout
    if sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8:
        raise RuntimeError("tvmscript's native entry points need 64-bit CPython")
    candidates = [NdarrayLayout(), NdarrayLayout(descr_elsize=32, descr_elsize_bits=32)]
    problems: list[str] = []
    for lay in candidates:
        errors = _check_layout(lay)
        if not errors:
            _layout = lay
            return lay
        problems.extend(errors)
    raise RuntimeError(
        "numpy/CPython object layout differs from what tvmscript's generated code expects "
        f"(numpy {np.__version__}, Python {sys.version.split()[0]}): " + "; ".join(problems)
    )


# ----------------------------------------------------------------------------------------------
# Runtime globals bound by the engine
# ----------------------------------------------------------------------------------------------

# Word-sized cells holding PyObject* values; kept alive for the whole process.
_cells: dict[str, ctypes.c_void_p] = {}
_objects: dict[str, object] = {}


def _object_globals() -> dict[str, object]:
    if not _objects:
        _objects.update({
            "tvms_ndarray_type": np.ndarray,
            "tvms_py_None": None,
            "tvms_py_True": True,
            "tvms_py_False": False,
        })
        for dt in DTYPES:
            _objects[f"tvms_descr_{dt}"] = np.dtype(dt)
    return _objects


def runtime_global_address(name: str) -> int | None:
    """Address for a runtime symbol name, or None if *name* is not one (engine provider).

    * ``tvms_exc_<Exc>``: a cell holding ``PyObject*`` of the exception type (``ptr`` global);
    * ``tvms_ndarray_type``, ``tvms_descr_<dtype>``, ``tvms_py_None/True/False``: the object
      itself (declare as ``external global i8`` and use the global's address as the pointer);
    * ``tvms_py_vectorcall``: ``PyObject_Vectorcall`` (function).
    """
    if name.startswith("tvms_exc_"):
        exc = EXCEPTIONS.get(name[len("tvms_exc_"):])
        if exc is None:
            return None
        cell = _cells.get(name)
        if cell is None:
            cell = _cells[name] = ctypes.c_void_p(id(exc))
        return ctypes.addressof(cell)
    if name == "tvms_py_vectorcall":
        for sym in ("PyObject_Vectorcall", "_PyObject_Vectorcall", "PyObject_VectorcallDict"):
            fn = getattr(ctypes.pythonapi, sym, None)
            if fn is not None:
                return int(ctypes.cast(fn, ctypes.c_void_p).value or 0) or None
        return None
    obj_globals = _object_globals()
    if name in obj_globals:
        return id(obj_globals[name])
    return None


# ----------------------------------------------------------------------------------------------
# IR text helpers
# ----------------------------------------------------------------------------------------------


def c_string_global(name: str, text: str) -> str:
    """IR for a private NUL-terminated UTF-8 string constant ``@name``."""
    data = text.encode() + b"\0"
    body = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}" for b in data)
    return f'@{name} = private unnamed_addr constant [{len(data)} x i8] c"{body}"\n'


def array_dtype_matches_ir(result: str, array: str, dtype: str) -> str:
    """IR instruction setting ``i1 %result`` to whether ndarray ``%array`` has *dtype*.

    Fast path: pointer equality with the canonical descr ``@tvms_descr_<dtype>``; fallback: same
    kind and itemsize with native/irrelevant byte order (metadata-carrying or aliased descrs
    such as ``'q'`` vs ``'l'`` compare equal, byte-swapped ones do not).
    """
    info = DTYPES[dtype]
    return (
        f"  %{result} = call i1 @tvms_array_dtype_matches(ptr %{array}, "
        f"ptr @tvms_descr_{dtype}, i8 {ord(info.kind)}, i64 {info.itemsize})\n"
    )


_PRELUDES: dict[bool, str] = {}

SHARED_PRELUDE_HELPERS = (
    "tvms_raise", "tvms_raise_fmt", "tvms_arg_conv_error", "tvms_arg_type_error",
    "tvms_arg_range_error", "tvms_arg_as_bool", "tvms_py_bind_call", "tvms_py_slow_call",
    "tvms_py_kernel_failed",
)
"""The prelude's error and argument-conversion helpers. Kernel modules declare them; one
library per process defines them (:mod:`backend.abi.shared_helpers`)."""

_HELPER_DECLARATIONS = """\
declare void @tvms_raise(ptr, ptr) cold nounwind
declare void @tvms_raise_fmt(ptr, ptr, i64, i64, i64, i64) cold nounwind
declare ptr @tvms_arg_conv_error(ptr, ptr, ptr) cold nounwind
declare void @tvms_arg_type_error(ptr, ptr) cold nounwind
declare ptr @tvms_arg_range_error(ptr, ptr) cold nounwind
declare i32 @tvms_arg_as_bool(ptr, ptr) nounwind
declare ptr @tvms_py_bind_call(ptr, ptr, i64, ptr, ptr) nounwind
declare ptr @tvms_py_slow_call(ptr, ptr, i64, ptr) nounwind
declare ptr @tvms_py_kernel_failed(i32, ptr) cold nounwind
"""


def prelude_helper_definitions() -> str:
    """IR text defining :data:`SHARED_PRELUDE_HELPERS` (external linkage), to follow
    :func:`runtime_prelude_ir` in the one module that defines them."""
    lay = ndarray_layout()
    return f"""\
define void @tvms_raise(ptr %slot, ptr %msg) noinline cold optnone {{
  %g = call i32 @PyGILState_Ensure()
  %exc = load ptr, ptr %slot, align 8
  call void @PyErr_SetString(ptr %exc, ptr %msg)
  call void @PyGILState_Release(i32 %g)
  ret void
}}
define void @tvms_raise_fmt(ptr %slot, ptr %fmt, i64 %a, i64 %b, i64 %c, i64 %d)
    noinline cold optnone {{
  %g = call i32 @PyGILState_Ensure()
  %exc = load ptr, ptr %slot, align 8
  %r = call ptr (ptr, ptr, ...) @PyErr_Format(ptr %exc, ptr %fmt, i64 %a, i64 %b, i64 %c, i64 %d)
  call void @PyGILState_Release(i32 %g)
  ret void
}}
; Argument conversion failed inside PyLong_As*/PyFloat_AsDouble: overflow -> ValueError(range_msg,
; obj), anything else -> TypeError(type_msg, type(obj).__name__).  Returns NULL for `ret`.
define ptr @tvms_arg_conv_error(ptr %o, ptr %type_msg, ptr %range_msg)
    noinline cold optnone {{
entry:
  %ovf_t = load ptr, ptr @tvms_exc_OverflowError, align 8
  %ovf = call i32 @PyErr_ExceptionMatches(ptr %ovf_t)
  call void @PyErr_Clear()
  %is_ovf = icmp ne i32 %ovf, 0
  br i1 %is_ovf, label %range, label %type
range:
  %ve = load ptr, ptr @tvms_exc_ValueError, align 8
  %r1 = call ptr (ptr, ptr, ...) @PyErr_Format(ptr %ve, ptr %range_msg, ptr %o)
  ret ptr null
type:
  call void @tvms_arg_type_error(ptr %o, ptr %type_msg)
  ret ptr null
}}
define void @tvms_arg_type_error(ptr %o, ptr %type_msg) noinline cold optnone {{
  %tpp = getelementptr inbounds i8, ptr %o, i64 {lay.ob_type}
  %tp = load ptr, ptr %tpp, align 8
  %np = getelementptr inbounds i8, ptr %tp, i64 {lay.tp_name}
  %tname = load ptr, ptr %np, align 8
  %te = load ptr, ptr @tvms_exc_TypeError, align 8
  %r = call ptr (ptr, ptr, ...) @PyErr_Format(ptr %te, ptr %type_msg, ptr %tname)
  ret void
}}
define ptr @tvms_arg_range_error(ptr %o, ptr %range_msg) noinline cold optnone {{
  %ve = load ptr, ptr @tvms_exc_ValueError, align 8
  %r = call ptr (ptr, ptr, ...) @PyErr_Format(ptr %ve, ptr %range_msg, ptr %o)
  ret ptr null
}}
; Truth value of a non-bool object for a bool parameter: None/str/bytes are rejected with
; TypeError(type_msg); errors of __bool__ become TypeError too.  Returns 0/1, or -1 on error.
define i32 @tvms_arg_as_bool(ptr %o, ptr %type_msg) noinline {{
entry:
  %isnone = icmp eq ptr %o, @tvms_py_None
  %tpp = getelementptr inbounds i8, ptr %o, i64 {lay.ob_type}
  %tp = load ptr, ptr %tpp, align 8
  %fp = getelementptr inbounds i8, ptr %tp, i64 {lay.tp_flags}
  %fl = load i64, ptr %fp, align 8
  %strish = and i64 %fl, {(1 << 27) | (1 << 28)}
  %isstr = icmp ne i64 %strish, 0
  %reject = or i1 %isnone, %isstr
  br i1 %reject, label %bad, label %truth
truth:
  %t = call i32 @PyObject_IsTrue(ptr %o)
  %err = icmp slt i32 %t, 0
  br i1 %err, label %clear, label %ok
ok:
  ret i32 %t
clear:
  call void @PyErr_Clear()
  br label %bad
bad:
  call void @tvms_arg_type_error(ptr %o, ptr %type_msg)
  ret i32 -1
}}
; A call with keywords or another argument count: the Python binder `bind` (the entry's slow
; path, NULL before make_builtin sets it) gets it, keywords as a dict (PyObject_VectorcallDict
; exists from 3.9 on; PyObject_Vectorcall, which takes kwnames, is a function from 3.11 on).
; Without a binder: TypeError(argc_fmt % nargs).
define ptr @tvms_py_bind_call(ptr %bind, ptr %args, i64 %nargs, ptr %kwnames, ptr %argc_fmt)
    noinline optnone {{
entry:
  %nobind = icmp eq ptr %bind, null
  br i1 %nobind, label %bad_argc, label %havebind
bad_argc:
  call void @tvms_raise_fmt(ptr @tvms_exc_TypeError, ptr %argc_fmt, i64 %nargs, i64 0, i64 0, i64 0)
  ret ptr null
havebind:
  %no_kw = icmp eq ptr %kwnames, null
  br i1 %no_kw, label %callbind, label %mkdict
callbind:
  %br = call ptr @PyObject_VectorcallDict(ptr %bind, ptr %args, i64 %nargs, ptr null)
  ret ptr %br
mkdict:
  %kwd = call ptr @PyDict_New()
  %nokwd = icmp eq ptr %kwd, null
  br i1 %nokwd, label %kwfail0, label %kwinit
kwfail0:
  ret ptr null
kwinit:
  %nkw = call i64 @PyTuple_Size(ptr %kwnames)
  br label %kwloop
kwloop:
  %k = phi i64 [ 0, %kwinit ], [ %k1, %kwset ]
  %kwmore = icmp slt i64 %k, %nkw
  br i1 %kwmore, label %kwbody, label %kwcall
kwbody:
  %kname = call ptr @PyTuple_GetItem(ptr %kwnames, i64 %k)
  %kpos = add i64 %nargs, %k
  %kvp = getelementptr inbounds ptr, ptr %args, i64 %kpos
  %kval = load ptr, ptr %kvp, align 8
  %kset = call i32 @PyDict_SetItem(ptr %kwd, ptr %kname, ptr %kval)
  %kbad = icmp slt i32 %kset, 0
  br i1 %kbad, label %kwfail, label %kwset
kwset:
  %k1 = add i64 %k, 1
  br label %kwloop
kwfail:
  call void @Py_DecRef(ptr %kwd)
  ret ptr null
kwcall:
  %kr = call ptr @PyObject_VectorcallDict(ptr %bind, ptr %args, i64 %nargs, ptr %kwd)
  call void @Py_DecRef(ptr %kwd)
  ret ptr %kr
}}
; An argument that is not an exact (C-contiguous where required) ndarray: the Python slow path
; `slow` converts it and calls the builtin again; without one, TypeError(no_slow_msg).
define ptr @tvms_py_slow_call(ptr %slow, ptr %args, i64 %nargs, ptr %no_slow_msg)
    noinline optnone {{
entry:
  %noslow = icmp eq ptr %slow, null
  br i1 %noslow, label %none, label %call
none:
  call void @tvms_raise(ptr @tvms_exc_TypeError, ptr %no_slow_msg)
  ret ptr null
call:
  %r = call ptr @tvms_py_vectorcall(ptr %slow, ptr %args, i64 %nargs, ptr null)
  ret ptr %r
}}
; The kernel returned `rc` != 0: NULL, with RuntimeError(failed_fmt % rc) unless it set one.
define ptr @tvms_py_kernel_failed(i32 %rc, ptr %failed_fmt) noinline cold optnone {{
entry:
  %pe = call ptr @PyErr_Occurred()
  %haspe = icmp ne ptr %pe, null
  br i1 %haspe, label %done, label %noexc
noexc:
  %rc64 = sext i32 %rc to i64
  call void @tvms_raise_fmt(ptr @tvms_exc_RuntimeError, ptr %failed_fmt, i64 %rc64,
                            i64 0, i64 0, i64 0)
  br label %done
done:
  ret ptr null
}}
"""


def runtime_prelude_ir(*, declare_helpers: bool = True) -> str:
    """Declarations and internal helpers for kernels and entry wrappers (once per module).

    Accessors (all ``internal`` and inlined; unused ones are deleted by the optimiser):

    ``ptr tvms_array_data(ptr arr)``, ``i32 tvms_array_ndim(ptr)``,
    ``i64 tvms_array_shape(ptr, i64 axis)``, ``i64 tvms_array_stride(ptr, i64 axis)`` (bytes),
    ``i32 tvms_array_flags(ptr)``, ``ptr tvms_array_descr(ptr)``,
    ``i8 tvms_descr_kind(ptr descr)``, ``i32 tvms_descr_type_num(ptr)``,
    ``i64 tvms_descr_elsize(ptr)``,
    ``i1 tvms_array_dtype_matches(ptr arr, ptr canonical_descr, i8 kind, i64 itemsize)``,
    and declarations of :data:`SHARED_PRELUDE_HELPERS`: ``void tvms_raise(ptr exc_slot, ptr
    msg)``, ``void tvms_raise_fmt(ptr exc_slot, ptr fmt, i64, i64, i64, i64)`` and the
    argument-conversion errors (``declare_helpers=False`` leaves them out, for the module
    that defines them).
    """
    cached = _PRELUDES.get(declare_helpers)
    if cached is not None:
        return cached
    lay = ndarray_layout()
    out = ["; ---- tvmscript runtime prelude (backend.abi.pyabi) ----\n"]
    for name in _object_globals():
        out.append(f"@{name} = external global i8\n")
    for exc in EXCEPTIONS:
        out.append(f"@tvms_exc_{exc} = external global ptr\n")
    if lay.descr_elsize_bits == 64:
        elsize_load = "%v = load i64, ptr %p, align 8\n  ret i64 %v"
    else:  # numpy 1.x: `int elsize`
        elsize_load = "%v = load i32, ptr %p, align 4\n  %w = sext i32 %v to i64\n  ret i64 %w"
    out.append(f"""\
declare void @PyErr_SetString(ptr, ptr)
declare ptr @PyErr_Format(ptr, ptr, ...)
declare ptr @PyErr_Occurred()
declare void @PyErr_Clear()
declare i32 @PyErr_ExceptionMatches(ptr)
declare i64 @PyLong_AsLongLong(ptr)
declare i64 @PyLong_AsUnsignedLongLong(ptr)
declare ptr @PyNumber_Index(ptr)
declare double @PyFloat_AsDouble(ptr)
declare i32 @PyObject_IsTrue(ptr)
declare void @Py_IncRef(ptr)
declare void @Py_DecRef(ptr)
declare i32 @PyGILState_Ensure()
declare void @PyGILState_Release(i32)
declare ptr @PyEval_SaveThread()
declare void @PyEval_RestoreThread(ptr)
declare ptr @tvms_py_vectorcall(ptr, ptr, i64, ptr)
declare ptr @PyObject_VectorcallDict(ptr, ptr, i64, ptr)
declare ptr @PyDict_New()
declare i32 @PyDict_SetItem(ptr, ptr, ptr)
declare i64 @PyTuple_Size(ptr)
declare ptr @PyTuple_GetItem(ptr, i64)

define internal ptr @tvms_array_data(ptr %a) alwaysinline {{
  %p = getelementptr inbounds i8, ptr %a, i64 {lay.data}
  %v = load ptr, ptr %p, align 8
  ret ptr %v
}}
define internal i32 @tvms_array_ndim(ptr %a) alwaysinline {{
  %p = getelementptr inbounds i8, ptr %a, i64 {lay.nd}
  %v = load i32, ptr %p, align 4
  ret i32 %v
}}
define internal i64 @tvms_array_shape(ptr %a, i64 %i) alwaysinline {{
  %p = getelementptr inbounds i8, ptr %a, i64 {lay.dims}
  %d = load ptr, ptr %p, align 8
  %e = getelementptr inbounds i64, ptr %d, i64 %i
  %v = load i64, ptr %e, align 8
  ret i64 %v
}}
define internal i64 @tvms_array_stride(ptr %a, i64 %i) alwaysinline {{
  %p = getelementptr inbounds i8, ptr %a, i64 {lay.strides}
  %d = load ptr, ptr %p, align 8
  %e = getelementptr inbounds i64, ptr %d, i64 %i
  %v = load i64, ptr %e, align 8
  ret i64 %v
}}
define internal i32 @tvms_array_flags(ptr %a) alwaysinline {{
  %p = getelementptr inbounds i8, ptr %a, i64 {lay.flags}
  %v = load i32, ptr %p, align 4
  ret i32 %v
}}
define internal ptr @tvms_array_descr(ptr %a) alwaysinline {{
  %p = getelementptr inbounds i8, ptr %a, i64 {lay.descr}
  %v = load ptr, ptr %p, align 8
  ret ptr %v
}}
define internal i8 @tvms_descr_kind(ptr %d) alwaysinline {{
  %p = getelementptr inbounds i8, ptr %d, i64 {lay.descr_kind}
  %v = load i8, ptr %p, align 1
  ret i8 %v
}}
define internal i32 @tvms_descr_type_num(ptr %d) alwaysinline {{
  %p = getelementptr inbounds i8, ptr %d, i64 {lay.descr_type_num}
  %v = load i32, ptr %p, align 4
  ret i32 %v
}}
define internal i64 @tvms_descr_elsize(ptr %d) alwaysinline {{
  %p = getelementptr inbounds i8, ptr %d, i64 {lay.descr_elsize}
  {elsize_load}
}}
define internal i1 @tvms_array_dtype_matches(ptr %a, ptr %canon, i8 %kind, i64 %size)
    alwaysinline {{
entry:
  %d = call ptr @tvms_array_descr(ptr %a)
  %same = icmp eq ptr %d, %canon
  br i1 %same, label %yes, label %slow
slow:
  %k = call i8 @tvms_descr_kind(ptr %d)
  %kok = icmp eq i8 %k, %kind
  %s = call i64 @tvms_descr_elsize(ptr %d)
  %sok = icmp eq i64 %s, %size
  %bp = getelementptr inbounds i8, ptr %d, i64 {lay.descr_byteorder}
  %bo = load i8, ptr %bp, align 1
  %swapped = icmp eq i8 %bo, {ord(">") if sys.byteorder == "little" else ord("<")}
  %bok = xor i1 %swapped, true
  %r1 = and i1 %kok, %sok
  %r = and i1 %r1, %bok
  ret i1 %r
yes:
  ret i1 true
}}
{_HELPER_DECLARATIONS if declare_helpers else ""}; ---- end of runtime prelude ----
""")
    text = "".join(out)
    _PRELUDES[declare_helpers] = text
    return text



def runtime_prelude_symbols() -> frozenset[str]:
    """Names declared or defined by :func:`runtime_prelude_ir`.

    The rest of the module must not declare them again (LLVM rejects a second declaration).
    """
    text = runtime_prelude_ir()
    funcs = re.findall(r"^(?:declare|define)\b[^@\n]*@([\w.$]+)\(", text, flags=re.M)
    globs = re.findall(r"^@([\w.$]+) =", text, flags=re.M)
    return frozenset(funcs) | frozenset(globs)
