"""One PrimFunc to ``define i32 @name(...)`` following the native kernel ABI."""

from __future__ import annotations

from backend.runtime.target import machine_cpu_and_features
from irbuilder.ir import Call, CallKind, PrimFunc, Stmt, as_dtype
from lowering.checks.verifier import ENTRY_CHECKED_ATTR
from lowering.target import as_target

from .context import CodegenError, ModuleContext, llvm_type
from .entry_table import emit_entry_checks
from .gather_policy import function_attributes
from .stmt import StmtEmitter
from .streaming import STREAMING_FENCE, stream_conditions

__all__ = ["emit_primfunc", "kernel_signature"]

_HANDLE = as_dtype("handle")


def kernel_signature(func: PrimFunc) -> list[str]:
    """LLVM parameter types: ``ptr`` per handle (an ndarray PyObject*), scalars by dtype."""
    types = []
    for param in func.params:
        if param.dtype.lanes != 1:
            raise CodegenError(
                f"function {func.name!r}: parameter {param.name!r} has vector type {param.dtype}"
            )
        ty = llvm_type(param.dtype)
        types.append(f"{ty} zeroext" if param.dtype.is_bool else ty)
    return types


def emit_primfunc(ctx: ModuleContext, func: PrimFunc) -> None:
    """Append ``i32 @<name>(params)`` to the module: 0 on success, -1 with a Python error set."""
    em = StmtEmitter(ctx)
    em.func_name = func.name
    em.buffer_handles = frozenset(id(handle) for handle in func.buffer_map)
    em.streaming = stream_conditions(func)
    target = as_target(ctx.options.target)
    em.hardware_gathers = target.has_feature("avx512f")
    em.function_attributes = function_attributes(
        func, target, machine_cpu_and_features(ctx.options.target)[1]
    )
    params = []
    for param, ty in zip(func.params, kernel_signature(func)):
        value = em.tmp(param.name)
        params.append(f"{ty} {value}")
        em.bind(param, value)
    for handle, buffer in func.buffer_map.items():
        if id(handle) not in em.vars:
            raise CodegenError(
                f"function {func.name!r}: buffer {buffer.name!r} maps from {handle.name!r}, "
                "which is not a parameter"
            )
        if id(buffer.data) not in em.vars:
            # The entry-check pass normally binds data vars with a LetStmt; bind them here
            # too so hand-built IR works (LLVM removes the duplicate load).
            em.bind(buffer.data, em.expr(Call(_HANDLE, "array_data", (handle,), CallKind.BUILTIN)))
    body: Stmt | None = func.body
    if ctx.options.error_abi == "python" and func.attrs.get(ENTRY_CHECKED_ATTR):
        body = emit_entry_checks(em, func.body)
    if body is not None:
        em.stmt(body)
    header = f'define i32 @"{func.name}"({", ".join(params)}) nounwind{em.function_attributes}'
    fence = [STREAMING_FENCE] if em.streamed else []
    ctx.definitions.append(em.finish(header, [*fence, "  ret i32 0"], [*fence, "  ret i32 -1"]))
