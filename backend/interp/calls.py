"""Calls in the reference interpreter: builtins, entry builtins, intrinsics and externs.

``likely`` is the identity, ``assume`` a no-op (value 1), ``if_then_else`` evaluates
only the chosen side (both, lane-wise, for a vector condition), ``reinterpret`` is a
bit cast. The entry builtins read the argument arrays (``array_stride`` in bytes,
``array_flags`` numpy's flag bits). Externs: a table of libm names (``expf``,
``sqrt``, ...), ``memset`` and the other functions of the module being run (each in an
interpreter of its own); any other symbol raises ``NotImplementedError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from irbuilder.ir import INTRINSICS as INTRINSIC_TABLE
from irbuilder.ir import (
    BufferLoad,
    Call,
    CallKind,
    PrimExpr,
    StringImm,
    as_dtype,
    llvm_intrinsic_spec,
)
from irbuilder.tir.tvm_ops import llvm_intrinsic_operands
from lowering.transforms.flatten_buffer import flat_index

from . import values as V
from .arguments import ArrayArg
from .intrinsics import EXTERN_MATH, INTRINSICS, call_extern_math, call_intrinsic
from .memory import Pointer
from .x86_dot import X86_DOT_PRODUCTS, x86_dot_product

__all__ = ["BUILTINS", "Evaluator", "FunctionReturn", "evaluate_call"]


class FunctionReturn(Exception):
    """``T.ret(value)``: unwinds the interpreter to the function's caller with ``value``."""

    def __init__(self, value: V.Value) -> None:
        super().__init__("T.ret")
        self.value = value

_BITWISE = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"})


class Evaluator(Protocol):
    """What call evaluation needs from the interpreter."""

    def eval(self, expr: PrimExpr) -> V.Value:
        """The value of ``expr``."""

    def eval_int(self, expr: PrimExpr, what: str) -> int:
        """The value of a scalar integer expression."""

    def call_function(self, name: str, args: tuple[PrimExpr, ...]) -> V.Value | None:
        """Run the module's function ``name`` on ``args`` (None: no such function)."""


def evaluate_call(interp: Evaluator, expr: Call) -> V.Value:
    """The value of a :class:`Call` of any kind."""
    op = expr.op
    if expr.kind in (CallKind.EXTERN, CallKind.PURE_EXTERN):
        return _call_extern(interp, expr)
    if op in BUILTINS:
        return BUILTINS[op](interp, expr)
    if op in _BITWISE:
        if len(expr.args) != 2:
            raise TypeError(f"{op} takes 2 arguments, got {len(expr.args)}")
        a, b = expr.args
        return V.binary(op, interp.eval(a), interp.eval(b), a.dtype)
    spec = INTRINSIC_TABLE.get(op)
    if spec is not None and spec.expand is not None:
        return interp.eval(spec.expand(expr.args))
    if op in INTRINSICS or expr.kind is CallKind.INTRINSIC:
        values = [interp.eval(a) for a in expr.args]
        return call_intrinsic(op, values, [a.dtype for a in expr.args], expr.dtype)
    raise NotImplementedError(f"the interpreter does not implement builtin {op!r}")


def _call_extern(interp: Evaluator, expr: Call) -> V.Value:
    symbol = expr.op
    result = interp.call_function(symbol, expr.args)  # another kernel of the module
    if result is not None:
        return result
    if symbol in EXTERN_MATH:
        values = [interp.eval(a) for a in expr.args]
        return call_extern_math(symbol, values, [a.dtype for a in expr.args], expr.dtype)
    if symbol == "memset":
        if len(expr.args) != 3:
            raise TypeError(f"memset takes 3 arguments, got {len(expr.args)}")
        pointer = interp.eval(expr.args[0])
        if not isinstance(pointer, Pointer):
            raise TypeError(f"memset needs a data pointer, got {pointer!r}")
        byte = interp.eval_int(expr.args[1], "memset value")
        nbytes = interp.eval_int(expr.args[2], "memset size")
        pointer.fill(byte, nbytes, "memset")
        return pointer if expr.dtype.is_handle else V.from_python(0, expr.dtype)
    if symbol in ("memcpy", "memmove"):
        if len(expr.args) != 3:
            raise TypeError(f"{symbol} takes 3 arguments, got {len(expr.args)}")
        dst, src = interp.eval(expr.args[0]), interp.eval(expr.args[1])
        if not isinstance(dst, Pointer) or not isinstance(src, Pointer):
            raise TypeError(f"{symbol} needs data pointers")
        dst.copy_from(src, interp.eval_int(expr.args[2], f"{symbol} size"), symbol)
        return dst if expr.dtype.is_handle else V.from_python(0, expr.dtype)
    raise NotImplementedError(f"the interpreter does not know extern function {symbol!r}")


def _array_arg(interp: Evaluator, expr: Call) -> ArrayArg:
    if not expr.args:
        raise TypeError(f"{expr.op} needs an array handle argument")
    handle = interp.eval(expr.args[0])
    if not isinstance(handle, ArrayArg):
        raise TypeError(f"{expr.op} needs an array handle, got {handle!r}")
    return handle


def _axis(interp: Evaluator, expr: Call, arg: ArrayArg) -> int:
    if len(expr.args) != 2:
        raise TypeError(f"{expr.op} takes (handle, axis), got {len(expr.args)} arguments")
    axis = interp.eval_int(expr.args[1], f"{expr.op} axis")
    if not 0 <= axis < arg.array.ndim:
        raise IndexError(f"{expr.op}: axis {axis} out of range for a {arg.array.ndim}-d array")
    return axis


def _builtin_likely(interp: Evaluator, expr: Call) -> V.Value:
    return interp.eval(expr.args[0])


def _builtin_assume(interp: Evaluator, expr: Call) -> V.Value:
    return V.from_python(1, expr.dtype) if not expr.dtype.is_handle else None


def _builtin_if_then_else(interp: Evaluator, expr: Call) -> V.Value:
    if len(expr.args) != 3:
        raise TypeError(f"if_then_else takes 3 arguments, got {len(expr.args)}")
    cond_expr, a, b = expr.args
    if cond_expr.dtype.is_vector:
        return V.select(
            interp.eval(cond_expr), cond_expr.dtype, interp.eval(a), interp.eval(b), expr.dtype
        )
    return interp.eval(a) if V.truthy(interp.eval(cond_expr)) else interp.eval(b)


def _builtin_reinterpret(interp: Evaluator, expr: Call) -> V.Value:
    (arg,) = expr.args
    return V.reinterpret(interp.eval(arg), arg.dtype, expr.dtype)


def _builtin_address_of(interp: Evaluator, expr: Call) -> V.Value:
    if len(expr.args) != 1 or not isinstance(expr.args[0], BufferLoad):
        raise TypeError("address_of takes one buffer element (T.address_of(A[i]))")
    load = expr.args[0]
    pointer = interp.eval(load.buffer.data)
    if not isinstance(pointer, Pointer):
        raise TypeError(f"address_of: buffer {load.buffer.name!r} has no data pointer")
    index = interp.eval_int(flat_index(load.buffer, load.indices), "address_of index")
    return pointer + index * load.buffer.dtype.itemsize


def _builtin_array_data(interp: Evaluator, expr: Call) -> V.Value:
    return _array_arg(interp, expr).pointer


def _builtin_array_ndim(interp: Evaluator, expr: Call) -> V.Value:
    return V.from_python(_array_arg(interp, expr).array.ndim, expr.dtype)


def _builtin_array_shape(interp: Evaluator, expr: Call) -> V.Value:
    arg = _array_arg(interp, expr)
    return V.from_python(arg.array.shape[_axis(interp, expr, arg)], expr.dtype)


def _builtin_array_stride(interp: Evaluator, expr: Call) -> V.Value:
    arg = _array_arg(interp, expr)
    return V.from_python(arg.array.strides[_axis(interp, expr, arg)], expr.dtype)


def _builtin_array_flags(interp: Evaluator, expr: Call) -> V.Value:
    return V.from_python(_array_arg(interp, expr).array.flags.num, expr.dtype)


def _builtin_array_dtype_is(interp: Evaluator, expr: Call) -> V.Value:
    arg = _array_arg(interp, expr)
    if len(expr.args) != 2 or not isinstance(expr.args[1], StringImm):
        raise TypeError('array_dtype_is takes (handle, "dtype name")')
    wanted = as_dtype(expr.args[1].value).numpy_dtype
    return 1 if arg.array.dtype == wanted else 0


def _builtin_array_descr(interp: Evaluator, expr: Call) -> V.Value:
    return _array_arg(interp, expr).array.dtype


def _builtin_no_op(interp: Evaluator, expr: Call) -> V.Value:
    # Profiling markers: we have no profiler hooks.
    return None if expr.dtype.is_handle else V.from_python(0, expr.dtype)


def _builtin_ret(interp: Evaluator, expr: Call) -> V.Value:
    if len(expr.args) != 1:
        raise TypeError(f"ret takes 1 argument, got {len(expr.args)}")
    raise FunctionReturn(interp.eval(expr.args[0]))


def _builtin_undef(interp: Evaluator, expr: Call) -> V.Value:
    # Any value is correct; the code generator also gives zero.
    return V.from_python(0, expr.dtype)


def _builtin_isnullptr(interp: Evaluator, expr: Call) -> V.Value:
    (arg,) = expr.args
    value = interp.eval(arg)
    return 1 if value is None or (isinstance(value, int) and value == 0) else 0


def _builtin_llvm_intrin(interp: Evaluator, expr: Call) -> V.Value:
    if not expr.args or not isinstance(expr.args[0], StringImm):
        raise TypeError(f"{expr.op} needs the LLVM intrinsic name as its first argument")
    name = expr.args[0].value
    if name in X86_DOT_PRODUCTS:
        rest = llvm_intrinsic_operands(expr)
        return x86_dot_product(name, [interp.eval(a) for a in rest], [a.dtype for a in rest],
                               expr.dtype)
    spec = llvm_intrinsic_spec(name)
    if spec is None:
        raise NotImplementedError(f"the interpreter does not implement LLVM intrinsic {name!r}")
    rest = llvm_intrinsic_operands(expr)
    values = [interp.eval(a) for a in rest]
    return call_intrinsic(spec.name, values, [a.dtype for a in rest], expr.dtype)


def _builtin_access_ptr(interp: Evaluator, expr: Call) -> V.Value:
    if len(expr.args) != 5:
        raise TypeError(f"tvm_access_ptr takes 5 arguments, got {len(expr.args)}")
    annotation, data, offset = expr.args[:3]
    pointer = interp.eval(data)
    if not isinstance(pointer, Pointer):
        raise TypeError(f"tvm_access_ptr needs a data pointer, got {pointer!r}")
    itemsize = 1 if annotation.dtype.is_handle else annotation.dtype.itemsize
    return pointer + interp.eval_int(offset, "tvm_access_ptr offset") * itemsize


BUILTINS: dict[str, Callable[[Evaluator, Call], V.Value]] = {
    "tvm_access_ptr": _builtin_access_ptr,
    "start_profile_intrinsic": _builtin_no_op,
    "end_profile_intrinsic": _builtin_no_op,
    "undef": _builtin_undef,
    "prefetch": _builtin_no_op,
    "ret": _builtin_ret,
    "isnullptr": _builtin_isnullptr,
    "call_llvm_intrin": _builtin_llvm_intrin,
    "call_llvm_pure_intrin": _builtin_llvm_intrin,
    "likely": _builtin_likely,
    "assume": _builtin_assume,
    "if_then_else": _builtin_if_then_else,
    "reinterpret": _builtin_reinterpret,
    "address_of": _builtin_address_of,
    "array_data": _builtin_array_data,
    "array_ndim": _builtin_array_ndim,
    "array_shape": _builtin_array_shape,
    "array_stride": _builtin_array_stride,
    "array_flags": _builtin_array_flags,
    "array_dtype_is": _builtin_array_dtype_is,
    "array_descr": _builtin_array_descr,
}
"""Builtin name -> evaluation (the arguments are evaluated as each needs)."""
