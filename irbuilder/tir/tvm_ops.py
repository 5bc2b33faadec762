"""TVM's runtime, device and profiling builtins of ``tvm.script.tir`` (v0.16), declared as data.

Each entry of :data:`TVM_OPS` names a builtin, how its result type is found and whether it has
a meaning for the CPU backend. The builders build ``Call(BUILTIN, name, args)``; strings become
``StringImm``. Those without CPU meaning parse, print and compare structurally; building a
function that uses one fails with "T.<name> is not supported by the CPU backend"
(``lowering.cpu.support``). With CPU meaning: ``T.start_profile_intrinsic``/
``T.end_profile_intrinsic`` (no-ops: we have no profiler hooks), ``T.undef`` (an arbitrary
value: zero), ``T.isnullptr``, ``T.call_llvm_intrin``/``T.call_llvm_pure_intrin`` (a call of
the LLVM intrinsic named by the first argument; see :func:`llvm_intrinsic_operands`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ir import Call, CallKind, IntImm, PrimExpr, StringImm, as_dtype
from ._common import as_expr, to_dtype

__all__ = [
    "AS_ARG",
    "AS_ARG0",
    "CPU_BUILTINS",
    "llvm_intrinsic_operands",
    "DTYPE_FIRST",
    "DTYPE_LAST",
    "TVM_OPS",
    "TVM_OP_BUILDERS",
    "TvmOp",
]

DTYPE_FIRST = "<dtype first>"
"""Result type given as the first argument (TVM's ``_dtype_forward`` ops, ``ptx_mma``)."""
DTYPE_LAST = "<dtype last>"
"""Result type given as the last argument (``tvm_struct_get(arr, index, field, dtype)``)."""
AS_ARG = "<as argument 1>"
"""The result type of the second argument (``tvm_warp_shuffle(mask, value, ...)``)."""
AS_ARG0 = "<as argument 0>"
"""The result type of the first argument (``tvm_thread_invariant(cond)``)."""


@dataclass(frozen=True)
class TvmOp:
    """One TVM builtin: its name, its result type rule, whether the CPU backend builds it."""

    name: str
    result: str
    cpu: bool = False


def _ops(result: str, names: str, cpu: bool = False) -> list[TvmOp]:
    return [TvmOp(name, result, cpu) for name in names.split()]


TVM_OPS: dict[str, TvmOp] = {
    op.name: op
    for op in [
        *_ops("int32", "tvm_throw_last_error tvm_check_return call_packed_lowered "
              "call_cpacked_lowered tvm_struct_set TVMBackendFreeWorkspace anylist_resetitem "
              "anylist_setitem_call_packed anylist_setitem_call_cpacked"),
        *_ops("handle", "tvm_tuple tvm_load_matrix_sync tvm_mma_sync tvm_bmma_sync "
              "tvm_fill_fragment tvm_store_matrix_sync TVMBackendAllocWorkspace "
              "anylist_getitem lookup_param"),
        *_ops("void", "ptx_wait_group ptx_commit_group ptx_cp_async_barrier "
              "ptx_init_barrier_thread_count ptx_arrive_barrier ptx_arrive_barrier_expect_tx "
              "ptx_wait_barrier create_barriers"),
        *_ops("uint32", "tvm_warp_activemask"),
        *_ops("int32", "vscale"),
        *_ops(DTYPE_FIRST, "ptx_mma ptx_mma_sp ptx_ldmatrix ptx_cp_async ptx_cp_async_bulk "
              "mma_store mma_fill vectorlow vectorhigh vectorcombine get_active_lane_mask"),
        *_ops("int32", "dp4a"),
        *_ops(AS_ARG, "tvm_warp_shuffle tvm_warp_shuffle_up tvm_warp_shuffle_down"),
        *_ops(AS_ARG0, "tvm_thread_invariant q_multiply_shift_per_axis"),
        *_ops(DTYPE_LAST, "tvm_struct_get"),
        *_ops("void", "start_profile_intrinsic end_profile_intrinsic", cpu=True),
        *_ops("int32", "undef", cpu=True),
        *_ops("bool", "isnullptr", cpu=True),
        *_ops(DTYPE_FIRST, "call_llvm_intrin call_llvm_pure_intrin", cpu=True),
    ]
}  # fmt: skip
"""Every TVM builtin of the table by name."""

CPU_BUILTINS = frozenset(op.name for op in TVM_OPS.values() if op.cpu)
"""The table's builtins the CPU backend builds."""


def _arg(value: Any, what: str) -> PrimExpr:
    return StringImm(value) if isinstance(value, str) else as_expr(value, what)


_RESULT_TEXT = {
    DTYPE_FIRST: "the type given as the first argument (or ``dtype=``)",
    DTYPE_LAST: "the type given as the last argument (or ``dtype=``)",
    AS_ARG: "the second argument's type",
    AS_ARG0: "the first argument's type",
    "void": "``handle`` (TVM's void)",
}


def _doc(op: TvmOp) -> str:
    where = (
        "The CPU build supports it."
        if op.cpu
        else "It parses, prints and compares; the CPU build refuses it."
    )
    result = _RESULT_TEXT.get(op.result, f"``{op.result}``")
    return (
        f"``T.{op.name}``: TVM's builtin ``tir.{op.name}`` (a BUILTIN call).\n\n    {where}\n\n"
        "    Parameters\n    ----------\n    *args : PrimExpr, number or str\n"
        "        TVM's operands, in TVM's order (strings become ``StringImm``).\n"
        "    dtype : str, optional\n        The result type, for the builtins that take one.\n\n"
        f"    Returns\n    -------\n    PrimExpr\n        The call; its type is {result}.\n"
    )


def _builder(op: TvmOp) -> Callable[..., PrimExpr]:
    what = f"T.{op.name}"

    def build(*args: Any, dtype: Any = None) -> PrimExpr:
        values = list(args)
        if op.result == DTYPE_FIRST:
            if dtype is None:
                if not values:
                    raise TypeError(f"{what} needs the result dtype as its first argument")
                dtype = values.pop(0)
            result = to_dtype(dtype)
        elif op.result == DTYPE_LAST:
            if dtype is None:
                if not values:
                    raise TypeError(f"{what} needs the result dtype as its last argument")
                dtype = values.pop()
            result = to_dtype(dtype)
        else:
            exprs = [_arg(v, what) for v in values]
            if op.result in (AS_ARG, AS_ARG0):
                position = 1 if op.result == AS_ARG else 0
                if len(exprs) <= position:
                    raise TypeError(f"{what} needs at least {position + 1} argument(s)")
                result = exprs[position].dtype
            else:
                result = as_dtype("handle" if op.result == "void" else op.result)
            return Call(result, op.name, tuple(exprs), CallKind.BUILTIN)
        return Call(result, op.name, tuple(_arg(v, what) for v in values), CallKind.BUILTIN)

    build.__name__ = build.__qualname__ = op.name
    build.__doc__ = _doc(op)
    return build


TVM_OP_BUILDERS: dict[str, Callable[..., PrimExpr]] = {
    name: _builder(op) for name, op in TVM_OPS.items()
}
"""``T.<name>`` of every builtin of the table."""


def llvm_intrinsic_operands(call: Call) -> tuple[PrimExpr, ...]:
    """The operands a ``call_llvm_intrin``/``call_llvm_pure_intrin`` passes to the intrinsic.

    TVM v0.16 calls take ``(intrinsic, num_signature, *operands)``, ``num_signature`` a
    ``uint32`` constant (how many operand types pick the overload; the intrinsic's name or
    the result type picks it here). A second argument that is a ``uint32`` constant is that
    count and not an operand; without one (our earlier spelling), every argument after the
    intrinsic is an operand.
    """
    rest = call.args[1:]
    if rest and isinstance(rest[0], IntImm) and str(rest[0].dtype) == "uint32":
        return rest[1:]
    return rest
