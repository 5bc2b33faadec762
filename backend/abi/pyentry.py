"""CPython ``METH_FASTCALL`` entry points for kernels, generated as LLVM IR text.

Kernel ABI (what the code generator must emit)::

    define i32 @<kernel_symbol>(<param 0>, <param 1>, ...)

in the order of :class:`EntrySpec` ``params``; a :class:`BufferParam` is passed as the borrowed
``ptr`` to an object whose type is *exactly* ``numpy.ndarray`` (the kernel checks dtype, ndim,
shape, strides and flags itself with the ``tvms_array_*`` prelude helpers), a
:class:`ScalarParam` as its LLVM type (``bool`` -> ``i1``, ``int8``/``uint8`` -> ``i8`` ...,
``float16`` -> ``half``, ``float32`` -> ``float``, ``float64`` -> ``double``).  Return 0 on success;
on failure set a Python exception (``tvms_raise``/``tvms_raise_fmt``, see
:mod:`backend.abi.pyabi`) and return non-zero.

The wrapper ``ptr @<name>__py(ptr self, ptr args, i64 nargs, ptr kwnames)`` (``METH_FASTCALL |
METH_KEYWORDS``) sends a call with keywords or a wrong argument count to the slow path (which
binds names to positions with :func:`backend.abi.call_args.bind_call_arguments`), checks every
buffer argument is an exact ``numpy.ndarray`` (anything else goes to the same Python slow
path, stored in the module global ``@<name>__py_slowpath`` by :func:`make_builtin`, which
converts array-likes and calls the builtin again), unboxes and range-checks scalars, calls the
kernel and returns ``None`` or ``NULL``.
"""

from __future__ import annotations

import ctypes
import keyword
import re
import types
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irbuilder.ir import as_dtype

from ..llvm_types import scalar_type
from ..runtime.engine import CompiledLibrary
from .call_args import CallBinder, as_ndarray
from .pyabi import c_string_global, ndarray_layout, runtime_prelude_ir

__all__ = [
    "BufferParam",
    "EntrySpec",
    "ScalarParam",
    "SCALAR_DTYPES",
    "entry_wrapper_ir",
    "make_builtin",
    "wrapper_symbol",
]

#: Scalar parameter dtypes -> LLVM type passed to the kernel.
SCALAR_DTYPES: dict[str, str] = {
    name: scalar_type(as_dtype(name))
    for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64",
    )
}

_LLVM_NAME = re.compile(r"[A-Za-z_.$][\w.$]*")

# Inline metadata (no numbered `!N` node that could clash with the rest of the module).
_LIKELY = '!{!"branch_weights", i32 2000, i32 1}'

_FLOAT_MAX = {"float16": 65504.0, "float32": float(np.finfo(np.float32).max)}


def _check_identifier(what: str, name: str) -> None:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"{what} must be a Python identifier, got {name!r}")


@dataclass(frozen=True)
class BufferParam:
    """A parameter passed to the kernel as the ``PyObject*`` of an exact ``numpy.ndarray``.

    ``dtype`` (optional) is only a hint for the Python slow path: lists/tuples are converted to
    arrays of that dtype.  The kernel itself must still check the dtype of what it receives.
    ``copy_noncontiguous=True`` (only for buffers the kernel never writes) sends an array that is
    not C-contiguous to the slow path, which passes a contiguous copy instead.
    ``written=True`` (the kernel stores to the buffer) makes the slow path refuse a list or
    tuple for it: the results could not reach the sequence.
    """

    name: str
    dtype: str | None = None
    copy_noncontiguous: bool = False
    written: bool = False

    def __post_init__(self) -> None:
        _check_identifier("buffer parameter name", self.name)
        if self.dtype is not None:
            np.dtype(self.dtype)  # raises TypeError for unknown dtypes


@dataclass(frozen=True)
class ScalarParam:
    """A scalar parameter unboxed (and range-checked) to ``dtype`` before calling the kernel."""

    name: str
    dtype: str

    def __post_init__(self) -> None:
        _check_identifier("scalar parameter name", self.name)
        if self.dtype not in SCALAR_DTYPES:
            raise ValueError(
                f"unsupported scalar dtype {self.dtype!r} for parameter {self.name!r}; "
                f"expected one of {', '.join(SCALAR_DTYPES)}"
            )


Param = BufferParam | ScalarParam


@dataclass(frozen=True)
class EntrySpec:
    """Python-visible signature of a kernel: function name and ordered parameters.

    ``release_gil=True`` releases the GIL around the kernel call (worth it for long kernels;
    costs about 35 ns per call).  Kernels may still raise through ``tvms_raise*``.
    """

    name: str
    params: tuple[Param, ...]
    release_gil: bool = False
    doc: str | None = None

    def __init__(
        self,
        name: str,
        params: Sequence[Param],
        *,
        release_gil: bool = False,
        doc: str | None = None,
    ) -> None:
        _check_identifier("function name", name)
        ps = tuple(params)
        for p in ps:
            if not isinstance(p, (BufferParam, ScalarParam)):
                raise TypeError(f"params must be BufferParam/ScalarParam, got {p!r}")
        names = [p.name for p in ps]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate parameter name(s): {', '.join(sorted(dup))}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "params", ps)
        object.__setattr__(self, "release_gil", bool(release_gil))
        object.__setattr__(self, "doc", doc)

    def kernel_signature(self, kernel_symbol: str) -> str:
        """The IR signature the kernel must have, e.g. ``i32 @k(ptr, ptr, i64)``."""
        types = ["ptr" if isinstance(p, BufferParam) else SCALAR_DTYPES[p.dtype]
                 for p in self.params]
        return f"i32 @{kernel_symbol}({', '.join(types)})"


def wrapper_symbol(spec: EntrySpec) -> str:
    """Name of the generated fastcall function: ``<name>__py``."""
    return f"{spec.name}__py"


def _slot_symbol(spec: EntrySpec) -> str:
    return f"{spec.name}__py_slowpath"


def _hex_double(value: float) -> str:
    return "0x" + np.array(value, dtype=np.float64).view(np.uint64).item().to_bytes(8, "big").hex()


class _Emitter:
    """Accumulates the wrapper's body and string constants."""

    def __init__(self, spec: EntrySpec) -> None:
        self.spec = spec
        self.lines: list[str] = []
        self.consts: list[str] = []

    def const(self, key: str, text: str) -> str:
        name = f"{self.spec.name}__py.{key}"
        self.consts.append(c_string_global(name, text))
        return f"@{name}"

    def __call__(self, line: str) -> None:
        self.lines.append(line)


def _emit_scalar(em: _Emitter, i: int, p: ScalarParam) -> str:
    """Emit unboxing of argument *i* into block ``s{i}``; return the kernel operand."""
    f, o, dt = em.spec.name, f"%a{i}", p.dtype
    arg = f"{f}(): argument '{p.name}'"
    ty = SCALAR_DTYPES[dt]
    nxt = f"s{i + 1}"
    if dt == "bool":
        msg = em.const(f"{p.name}.type", f"{arg} must be bool, not %.200s")
        em(f"s{i}:\n  %t{i} = icmp eq ptr {o}, @tvms_py_True\n"
           f"  %f{i} = icmp eq ptr {o}, @tvms_py_False\n  %tf{i} = or i1 %t{i}, %f{i}\n"
           f"  br i1 %tf{i}, label %s{i}.fast, label %s{i}.slow\n"
           f"s{i}.fast:\n  br label %s{i}.join\n"
           f"s{i}.slow:\n  %b{i} = call i32 @tvms_arg_as_bool(ptr {o}, ptr {msg})\n"
           f"  %be{i} = icmp slt i32 %b{i}, 0\n  br i1 %be{i}, label %fail, label %s{i}.slowok\n"
           f"s{i}.slowok:\n  %bn{i} = icmp ne i32 %b{i}, 0\n  br label %s{i}.join\n"
           f"s{i}.join:\n  %x{i} = phi i1 [ %t{i}, %s{i}.fast ], [ %bn{i}, %s{i}.slowok ]\n"
           f"  br label %{nxt}\n")
        return f"%x{i}"
    if dt.startswith("float"):
        tmsg = em.const(f"{p.name}.type", f"{arg} must be a real number ({dt}), not %.200s")
        rmsg = em.const(f"{p.name}.range", f"{arg} is out of range for {dt}: %R")
        em(f"s{i}:\n  %v{i} = call double @PyFloat_AsDouble(ptr {o})\n"
           f"  %m{i} = fcmp oeq double %v{i}, -1.0\n"
           f"  br i1 %m{i}, label %s{i}.chk, label %s{i}.rng\n"
           f"s{i}.chk:\n  %e{i} = call ptr @PyErr_Occurred()\n  %he{i} = icmp ne ptr %e{i}, null\n"
           f"  br i1 %he{i}, label %s{i}.err, label %s{i}.rng\n"
           f"s{i}.err:\n  %ce{i} = call ptr @tvms_arg_conv_error(ptr {o}, ptr {tmsg}, ptr {rmsg})\n"
           f"  br label %fail\n")
        if dt == "float64":
            em(f"s{i}.rng:\n  br label %{nxt}\n")
            return f"%v{i}"
        # finite and |v| > max  <=>  v in (max, inf) or (-inf, -max); NaN compares false.
        em(f"s{i}.rng:\n  %hi{i} = fcmp ogt double %v{i}, {_hex_double(_FLOAT_MAX[dt])}\n"
           f"  %lo{i} = fcmp olt double %v{i}, {_hex_double(-_FLOAT_MAX[dt])}\n"
           f"  %big{i} = or i1 %hi{i}, %lo{i}\n"
           f"  %fin{i} = fcmp one double %v{i}, 0x7FF0000000000000\n"
           f"  %nfin{i} = fcmp one double %v{i}, 0xFFF0000000000000\n"
           f"  %fin2{i} = and i1 %fin{i}, %nfin{i}\n"
           f"  %bad{i} = and i1 %big{i}, %fin2{i}\n"
           f"  br i1 %bad{i}, label %s{i}.rerr, label %s{i}.ok\n"
           f"s{i}.rerr:\n  %re{i} = call ptr @tvms_arg_range_error(ptr {o}, ptr {rmsg})\n"
           f"  br label %fail\n"
           f"s{i}.ok:\n  %x{i} = fptrunc double %v{i} to {ty}\n  br label %{nxt}\n")
        return f"%x{i}"
    # integers
    bits = int(dt.lstrip("uint"))
    signed = not dt.startswith("u")
    tmsg = em.const(f"{p.name}.type", f"{arg} must be an integer ({dt}), not %.200s")
    rmsg = em.const(f"{p.name}.range", f"{arg} is out of range for {dt}: %R")
    if dt == "uint64":
        # PyLong_AsUnsignedLongLong does not call __index__ (numpy integers): do it explicitly.
        em(f"s{i}:\n  %ix{i} = call ptr @PyNumber_Index(ptr {o})\n"
           f"  %ixn{i} = icmp eq ptr %ix{i}, null\n"
           f"  br i1 %ixn{i}, label %s{i}.err, label %s{i}.conv\n"
           f"s{i}.conv:\n  %v{i} = call i64 @PyLong_AsUnsignedLongLong(ptr %ix{i})\n"
           f"  call void @Py_DecRef(ptr %ix{i})\n")
    else:
        em(f"s{i}:\n  %v{i} = call i64 @PyLong_AsLongLong(ptr {o})\n")
    em(f"  %m{i} = icmp eq i64 %v{i}, -1\n  br i1 %m{i}, label %s{i}.chk, label %s{i}.rng\n"
       f"s{i}.chk:\n  %e{i} = call ptr @PyErr_Occurred()\n  %he{i} = icmp ne ptr %e{i}, null\n"
       f"  br i1 %he{i}, label %s{i}.err, label %s{i}.rng\n"
       f"s{i}.err:\n  %ce{i} = call ptr @tvms_arg_conv_error(ptr {o}, ptr {tmsg}, ptr {rmsg})\n"
       f"  br label %fail\n")
    if bits == 64:
        em(f"s{i}.rng:\n  br label %{nxt}\n")
        return f"%v{i}"
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    em(f"s{i}.rng:\n  %lo{i} = icmp sge i64 %v{i}, {lo}\n  %hi{i} = icmp sle i64 %v{i}, {hi}\n"
       f"  %in{i} = and i1 %lo{i}, %hi{i}\n  br i1 %in{i}, label %s{i}.ok, label %s{i}.rerr\n"
       f"s{i}.rerr:\n  %re{i} = call ptr @tvms_arg_range_error(ptr {o}, ptr {rmsg})\n"
       f"  br label %fail\n"
       f"s{i}.ok:\n  %x{i} = trunc i64 %v{i} to {ty}\n  br label %{nxt}\n")
    return f"%x{i}"


def entry_wrapper_ir(spec: EntrySpec, kernel_symbol: str, *, with_prelude: bool = True) -> str:
    """IR text of the fastcall wrapper ``ptr @<name>__py(ptr self, ptr args, i64 nargs)``.

    The result is appended to the module that defines ``kernel_symbol`` (see the module
    docstring for the kernel ABI).  The module needs :func:`runtime_prelude_ir` exactly once:
    pass ``with_prelude=False`` when the code generator already emitted it.
    """
    if not _LLVM_NAME.fullmatch(kernel_symbol):
        raise ValueError(f"kernel symbol must be a plain LLVM identifier, got {kernel_symbol!r}")
    ndarray_layout()  # fail loudly before generating code that relies on it
    em = _Emitter(spec)
    f, n = spec.name, len(spec.params)
    plural = "argument" if n == 1 else "arguments"
    argc_fmt = em.const("argc", f"{f}() takes {n} {plural} (%lld given)")
    noslow = em.const("noslow", f"{f}(): array arguments must be numpy.ndarray")
    failed = em.const(
        "failed", f"{f}(): kernel failed (error code %lld) without setting an exception"
    )
    # Keywords or a wrong count go to the slow path, which binds names to positions (the
    # fast path costs one more compare: kwnames is NULL for a positional call).
    # optnone: the wrapper is written as tight straight-line SSA already, so LLVM's O3 pipeline
    # had almost nothing to gain on it, yet cost about 4 ms of a build (its per-function
    # analyses); the kernel it calls keeps the full pipeline (docs/compile-time.md).
    em(f"define ptr @{wrapper_symbol(spec)}(ptr %self, ptr %args, i64 %nargs, ptr %kwnames)"
       f" optnone noinline {{\n"
       f"entry:\n  %argc_ok = icmp eq i64 %nargs, {n}\n"
       f"  %no_kw = icmp eq ptr %kwnames, null\n"
       f"  %positional = and i1 %argc_ok, %no_kw\n"
       f"  br i1 %positional, label %load, label %bind, !prof {_LIKELY}\n"
       f"bind:\n  %bsp = load ptr, ptr @{_slot_symbol(spec)}, align 8\n"
       f"  %br = call ptr @tvms_py_bind_call(ptr %bsp, ptr %args, i64 %nargs, ptr %kwnames, "
       f"ptr {argc_fmt})\n  ret ptr %br\n"
       f"load:\n")
    checks: list[str] = []
    for i, p in enumerate(spec.params):
        em(f"  %ap{i} = getelementptr inbounds ptr, ptr %args, i64 {i}\n"
           f"  %a{i} = load ptr, ptr %ap{i}, align 8\n")
        if isinstance(p, BufferParam):
            em(f"  %tpp{i} = getelementptr inbounds i8, ptr %a{i}, i64 {ndarray_layout().ob_type}\n"
               f"  %tp{i} = load ptr, ptr %tpp{i}, align 8\n"
               f"  %isarr{i} = icmp eq ptr %tp{i}, @tvms_ndarray_type\n")
            checks.append(f"%isarr{i}")
            if p.copy_noncontiguous:
                # Flags are read only when the type check passed (select keeps it branch-free
                # yet never dereferences a non-ndarray's memory past its header).
                em(f"  %flp{i} = getelementptr inbounds i8, ptr %a{i}, "
                   f"i64 {ndarray_layout().flags}\n"
                   f"  %flsrc{i} = select i1 %isarr{i}, ptr %flp{i}, ptr @{f}__py.one\n"
                   f"  %fl{i} = load i32, ptr %flsrc{i}, align 4\n"
                   f"  %cc{i} = and i32 %fl{i}, 1\n"
                   f"  %iscc{i} = icmp ne i32 %cc{i}, 0\n")
                checks.append(f"%iscc{i}")
    cond = "true"
    for k, c in enumerate(checks):
        em(f"  %all{k} = and i1 {cond}, {c}\n")
        cond = f"%all{k}"
    em(f"  br i1 {cond}, label %s0, label %slow, !prof {_LIKELY}\n"
       f"slow:\n  %sp = load ptr, ptr @{_slot_symbol(spec)}, align 8\n"
       f"  %sr = call ptr @tvms_py_slow_call(ptr %sp, ptr %args, i64 %nargs, ptr {noslow})\n"
       f"  ret ptr %sr\n")
    operands: list[str] = []
    for i, p in enumerate(spec.params):
        if isinstance(p, BufferParam):
            em(f"s{i}:\n  br label %s{i + 1}\n")
            operands.append(f"ptr %a{i}")
            continue
        value = _emit_scalar(em, i, p)
        operands.append(f"{SCALAR_DTYPES[p.dtype]} {value}")
    em(f"s{n}:\n")
    if spec.release_gil:
        em("  %ts = call ptr @PyEval_SaveThread()\n")
    em(f"  %rc = call i32 @{kernel_symbol}({', '.join(operands)})\n")
    if spec.release_gil:
        em("  call void @PyEval_RestoreThread(ptr %ts)\n")
    em(f"  %ok = icmp eq i32 %rc, 0\n"
       f"  br i1 %ok, label %ret_none, label %kfail, !prof {_LIKELY}\n"
       f"ret_none:\n  call void @Py_IncRef(ptr @tvms_py_None)\n  ret ptr @tvms_py_None\n"
       f"kfail:\n  %kf = call ptr @tvms_py_kernel_failed(i32 %rc, ptr {failed})\n"
       f"  ret ptr null\n"
       f"fail:\n  ret ptr null\n}}\n")
    head = runtime_prelude_ir() if with_prelude else ""
    return (
        head
        + f"; ---- fastcall entry for {f} ----\n"
        + f"@{_slot_symbol(spec)} = global ptr null, align 8\n"
        + (f"@{f}__py.one = private unnamed_addr constant i32 1, align 4\n"
           if any(isinstance(p, BufferParam) and p.copy_noncontiguous for p in spec.params)
           else "")
        + "".join(em.consts)
        + "".join(em.lines)
    )


# ----------------------------------------------------------------------------------------------
# Python side: slow path and builtin construction
# ----------------------------------------------------------------------------------------------


def _make_slow_path(spec: EntrySpec, fast_ref: Callable[[], Any]) -> Callable[..., Any]:
    buffers = [(i, p.name, p.dtype, p.copy_noncontiguous, p.written)
               for i, p in enumerate(spec.params) if isinstance(p, BufferParam)]

    names = [p.name for p in spec.params]
    bind = CallBinder(spec.name, names)

    def slow_path(*args: object, **kwargs: object) -> object:
        fast = fast_ref()
        if fast is None:  # pragma: no cover - the builtin is alive while it calls us
            raise RuntimeError(f"{spec.name}(): kernel was released")
        if kwargs or len(args) != len(names):
            # Bound positionally, the call takes the fast path (which comes back here only
            # when a buffer needs converting).
            return fast(*bind(args, kwargs))
        conv = list(args)
        for i, pname, dtype, copy, written in buffers:
            arg = args[i]
            if written and isinstance(arg, (list, tuple)):
                raise ValueError(
                    f"{pname}: expected a writable array, got a {type(arg).__name__}: the "
                    "kernel writes this buffer and its results cannot reach a Python sequence; "
                    "pass a numpy array (e.g. numpy.empty)"
                )
            arr = as_ndarray(arg, spec.name, pname, dtype)
            if copy and not arr.flags.c_contiguous:
                arr = np.ascontiguousarray(arr)
            conv[i] = arr
        return fast(*conv)

    slow_path.__name__ = f"{spec.name}_slow_path"
    return slow_path


class PyMethodDef(ctypes.Structure):
    """ctypes mirror of CPython's ``PyMethodDef``."""

    _fields_ = [
        ("ml_name", ctypes.c_char_p),
        ("ml_meth", ctypes.c_void_p),
        ("ml_flags", ctypes.c_int),
        ("ml_doc", ctypes.c_char_p),
    ]


_METH_FASTCALL_KEYWORDS = 0x80 | 0x02  # METH_FASTCALL | METH_KEYWORDS

_new_cfunction = ctypes.pythonapi.PyCFunction_NewEx
_new_cfunction.restype = ctypes.py_object
_new_cfunction.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]


class KernelOwner(types.ModuleType):
    """``__self__`` of a kernel builtin: keeps the library, method def and slow path alive.

    It is a module object because CPython names a builtin whose ``__self__`` is a module by its
    own name (``<built-in function add>``, ``add() ...`` in messages) instead of
    ``KernelOwner.add``: users never see this class.
    """

    def __init__(self, library: CompiledLibrary, spec: EntrySpec) -> None:
        super().__init__(spec.name)
        self.library = library
        self.spec = spec
        self.method_def: PyMethodDef | None = None
        self.slow_path: Callable[..., Any] | None = None
        self._name = b""
        self._doc = b""

    def __repr__(self) -> str:
        return f"<tvmscript kernel {self.spec.name} in {self.library!r}>"


def make_builtin(
    library: CompiledLibrary, spec: EntrySpec, kernel_symbol: str
) -> Callable[..., Any]:
    """Turn the wrapper compiled into *library* into a real builtin function.

    The returned ``builtin_function_or_method`` has ``__self__`` set to a :class:`KernelOwner`
    that keeps *library* (the machine code), the ``PyMethodDef`` and the slow path alive; the
    machine code is freed once the builtin is garbage collected.
    """
    sym = wrapper_symbol(spec)
    try:
        entry = library.address(sym)
        slot = library.address(_slot_symbol(spec))
    except KeyError:
        raise ValueError(
            f"library {library.name!r} has no entry wrapper for {spec.name!r}: compile "
            f"entry_wrapper_ir(spec, {kernel_symbol!r}) into the same module"
        ) from None
    owner = KernelOwner(library, spec)
    names = ", ".join(p.name for p in spec.params)
    owner._name = spec.name.encode()
    doc = f"{spec.name}({names})\n--\n\n{spec.doc or f'tvmscript kernel {kernel_symbol}'}"
    owner._doc = doc.encode()
    owner.method_def = PyMethodDef(owner._name, entry, _METH_FASTCALL_KEYWORDS, owner._doc)
    fn: Callable[..., Any] = _new_cfunction(ctypes.addressof(owner.method_def), owner, None)
    owner.slow_path = _make_slow_path(spec, weakref.ref(fn))
    # The slot holds a borrowed reference; owner.slow_path keeps the function alive.
    ctypes.c_void_p.from_address(slot).value = id(owner.slow_path)
    return fn
