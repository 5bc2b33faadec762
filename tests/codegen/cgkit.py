"""Helpers for codegen tests: build lowered PrimFuncs by hand, compile, call through ctypes."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from backend.codegen import CodegenOptions, generate
from backend.runtime import compile_ir
from irbuilder.ir import (
    Buffer,
    BufferLoad,
    BufferStore,
    DataType,
    For,
    ForKind,
    PrimExpr,
    PrimFunc,
    Stmt,
    Var,
    as_dtype,
    const,
    make_data_var,
)

_CTYPES = {
    "bool": ctypes.c_bool,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
}


class Kernel:
    """Collects parameters of a hand-built kernel (buffers are 1-d flat)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.params: list[Var] = []
        self.buffer_map: dict[Var, Buffer] = {}

    def buffer(self, name: str, dtype: str, size: int | PrimExpr = 16) -> Buffer:
        """A buffer parameter (the handle var is the ndarray PyObject*)."""
        handle = Var(name, as_dtype("handle"))
        data = make_data_var(f"{name}_data", as_dtype(dtype))
        buf = Buffer(
            name, data, (const(size, "int64") if isinstance(size, int) else size,), as_dtype(dtype)
        )
        self.params.append(handle)
        self.buffer_map[handle] = buf
        return buf

    def scalar(self, name: str, dtype: str) -> Var:
        """A scalar parameter."""
        var = Var(name, as_dtype(dtype))
        self.params.append(var)
        return var

    def func(self, body: Stmt) -> PrimFunc:
        """The PrimFunc over the collected parameters."""
        return PrimFunc(
            tuple(self.params),
            body,
            buffer_map=dict(self.buffer_map),
            attrs={"global_symbol": self.name},
        )


def loop(
    extent: int | PrimExpr,
    body: Callable[[Var], Stmt],
    *,
    kind: ForKind = ForKind.SERIAL,
    dtype: str = "int64",
    name: str = "i",
) -> For:
    """``for i in range(extent)`` with a loop var of ``dtype``."""
    var = Var(name, as_dtype(dtype))
    ext = const(extent, dtype) if isinstance(extent, int) else extent
    return For(var, const(0, dtype), ext, kind, body(var))


def elementwise(
    name: str, out_dtype: str, in_dtypes: Sequence[str], n: int, fn: Callable[..., PrimExpr]
) -> PrimFunc:
    """``C[i] = fn(A0[i], A1[i], ...)`` over ``n`` elements."""
    kern = Kernel(name)
    inputs = [kern.buffer(f"A{k}", dt, n) for k, dt in enumerate(in_dtypes)]
    out = kern.buffer("C", out_dtype, n)
    body = loop(n, lambda i: BufferStore(out, fn(*[BufferLoad(b, (i,)) for b in inputs]), (i,)))
    return kern.func(body)


class Compiled:
    """A compiled module; ``lib[name](*args)`` calls a kernel with the GIL held."""

    def __init__(self, funcs: Sequence[PrimFunc], ir: str, lib: Any) -> None:
        self.ir = ir
        self.lib = lib
        self._funcs = {f.name: f for f in funcs}

    def __getitem__(self, name: str) -> Callable[..., int]:
        func = self._funcs[name]
        argtypes: list[Any] = []
        for param in func.params:
            dtype: DataType = param.dtype
            argtypes.append(ctypes.py_object if dtype.is_handle else _CTYPES[str(dtype)])
        # PYFUNCTYPE keeps the GIL and raises the Python error the kernel set.
        proto = ctypes.PYFUNCTYPE(ctypes.c_int, *argtypes)
        fn = proto(self.lib.address(name))

        owner = self  # the JIT'd code lives as long as the library: keep it referenced

        def call(*args: Any) -> int:
            assert owner.lib is not None
            return int(fn(*args))

        return call


def build(
    funcs: PrimFunc | Sequence[PrimFunc],
    *,
    symbols: dict[str, int] | None = None,
    opt_level: int = 3,
    **options: Any,
) -> Compiled:
    """Generate, compile (runtime's ``compile_ir``) and wrap ``funcs``."""
    func_list = [funcs] if isinstance(funcs, PrimFunc) else list(funcs)
    result = generate(func_list, CodegenOptions(**options))
    lib = compile_ir(
        result.text, opt_level=opt_level, cache=False, symbols=symbols or {}, name=func_list[0].name
    )
    return Compiled(func_list, result.text, lib)


class AllocCounters:
    """The codegen's allocation counters as ctypes ints, for ``symbols=``."""

    def __init__(self) -> None:
        from backend.codegen.stmt import COUNTER_NAMES

        self.values = {name: ctypes.c_int64(0) for name in COUNTER_NAMES}
        self.live = self.values["tvms_cg_live_allocs"]
        self.total = self.values["tvms_cg_total_allocs"]

    @property
    def symbols(self) -> dict[str, int]:
        return {name: ctypes.addressof(v) for name, v in self.values.items()}


def rand(
    dtype: str,
    n: int,
    rng: np.random.Generator,
    *,
    low: int = -100,
    high: int = 100,
    nonzero: bool = False,
) -> np.ndarray:
    """Random test data of a numpy dtype (unsigned types get non-negative values)."""
    np_dtype = np.dtype(dtype)
    if np_dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if np_dtype.kind == "u":
        low = max(low, 0)
    values = rng.integers(low, high, n).astype(np_dtype)
    if np_dtype.kind == "f":
        values = (rng.uniform(low, high, n)).astype(np_dtype)
    if nonzero:
        values[values == 0] = 1
    return values


def code_for(func: PrimFunc, target: Any) -> tuple[str, str]:
    """The optimised LLVM IR and the assembly of ``func`` built for ``target``, made without
    loading the code: any target works on any host (a test of AVX-512 code runs on an AVX2
    machine too)."""
    import llvmlite.binding as llvm

    import lowering
    from backend.runtime.target import codegen_target_machine, optimize
    from lowering.cpu.prepare import prepare_for_cpu

    text = generate([lowering.lower(prepare_for_cpu(func), target=target)],
                    CodegenOptions(target=target)).text
    module = optimize(llvm.parse_assembly(text), 3, target=target)
    return str(module), str(codegen_target_machine(3, target=target).emit_assembly(module))
