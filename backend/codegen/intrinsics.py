"""Calls: math intrinsics, builtins (entry builtins, likely, if_then_else...) and extern C calls."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from backend.llvm_types import mask_type
from backend.runtime.vecmath import libmvec_variants
from irbuilder.ir import (
    INTRINSICS,
    BufferLoad,
    Call,
    CallKind,
    DataType,
    Lowering,
    Operands,
    PrimExpr,
    Result,
    StringImm,
    Var,
    as_dtype,
)
from irbuilder.tir.tvm_ops import llvm_intrinsic_operands

from .context import CodegenError, ErrorKind, float_const, intrinsic_suffix, llvm_type, scalar_type

if TYPE_CHECKING:
    from .expr import ExprEmitter

__all__ = ["LIBM_FUNCTIONS", "LLVM_FLOAT_INTRINSICS", "emit_call", "numpy_type_nums"]

#: Float math that maps to an LLVM intrinsic of the same arity (``llvm.<name>.<type>``); the
#: transcendental functions (exp, log, sin, pow, erf, sigmoid...) go through the runtime's
#: ``MathLowering`` instead, so vectorised loops call libmvec rather than scalar libm.
LLVM_FLOAT_INTRINSICS: dict[str, str] = {
    spec.name: spec.symbol
    for spec in INTRINSICS.values()
    if spec.lowering is Lowering.LLVM and spec.operands is not Operands.INTEGER
}

#: Float math left to plain libm calls (``nextafterf`` for float32, ``nextafter`` for float64).
LIBM_FUNCTIONS: frozenset[str] = frozenset(
    spec.name for spec in INTRINSICS.values() if spec.lowering is Lowering.LIBM
)

_PYARRAY_DATA = 16
_PYARRAY_NDIM = 24
_PYARRAY_DIMS = 32
_PYARRAY_STRIDES = 40
_PYARRAY_DESCR = 56
_PYARRAY_FLAGS = 64
# PyArray_Descr: byteorder char at +26 and type_num int at +28 in numpy 1.x and 2.x.
_DESCR_BYTEORDER = 26
_DESCR_TYPE_NUM = 28

_INT64 = as_dtype("int64")
_INT32 = as_dtype("int32")
_BOOL = as_dtype("bool")


def numpy_type_nums(dtype_name: str) -> list[int]:
    """numpy type numbers of every scalar type equal to ``dtype_name`` (int64: long, longlong)."""
    target = as_dtype(dtype_name).numpy_dtype
    nums = {np.dtype(code).num for code in np.typecodes["All"] if np.dtype(code) == target}
    return sorted(nums)


def emit_call(em: ExprEmitter, node: Call) -> str:
    """Emit any :class:`Call`; unknown names raise :class:`CodegenError` naming the call."""
    if node.kind is CallKind.BUILTIN:
        builtin = _BUILTINS.get(node.op)
        if builtin is None:
            # Math names are accepted as builtins too (some front ends tag them so).
            return _intrinsic(em, node)
        return builtin(em, node)
    if node.kind is CallKind.INTRINSIC:
        return _intrinsic(em, node)
    return _extern(em, node)


# ---------------------------------------------------------------------------
# builtins
# ---------------------------------------------------------------------------


def _field_pointer(em: ExprEmitter, handle: str, offset: int) -> str:
    return em.assign("fld", f"getelementptr inbounds i8, ptr {handle}, i64 {offset}")


def _arg_count(node: Call, count: int) -> None:
    if len(node.args) != count:
        raise CodegenError(f"{node.op} takes {count} argument(s), got {len(node.args)}")


def _array_data(em: ExprEmitter, node: Call) -> str:
    _arg_count(node, 1)
    handle = em.expr(node.args[0])
    return em.assign("data", f"load ptr, ptr {_field_pointer(em, handle, _PYARRAY_DATA)}, align 8")


def _array_i32_field(offset: int) -> Callable[[ExprEmitter, Call], str]:
    def emit(em: ExprEmitter, node: Call) -> str:
        _arg_count(node, 1)
        handle = em.expr(node.args[0])
        value = em.assign("fld", f"load i32, ptr {_field_pointer(em, handle, offset)}, align 4")
        return em.cast(value, _INT32, node.dtype)

    return emit


def _array_dim_field(offset: int) -> Callable[[ExprEmitter, Call], str]:
    def emit(em: ExprEmitter, node: Call) -> str:
        _arg_count(node, 2)
        handle = em.expr(node.args[0])
        axis = em.to_i64(em.expr(node.args[1]), node.args[1].dtype)
        dims = em.assign("dims", f"load ptr, ptr {_field_pointer(em, handle, offset)}, align 8")
        ptr = em.assign("dimp", f"getelementptr inbounds i64, ptr {dims}, i64 {axis}")
        value = em.assign("dim", f"load i64, ptr {ptr}, align 8")
        return em.cast(value, _INT64, node.dtype)

    return emit


def _array_dtype_is(em: ExprEmitter, node: Call) -> str:
    _arg_count(node, 2)
    name_arg = node.args[1]
    if not isinstance(name_arg, StringImm):
        raise CodegenError("array_dtype_is needs a string constant dtype name as 2nd argument")
    nums = numpy_type_nums(name_arg.value)
    handle = em.expr(node.args[0])
    descr = em.assign(
        "descr", f"load ptr, ptr {_field_pointer(em, handle, _PYARRAY_DESCR)}, align 8"
    )
    num = em.assign("tnum", f"load i32, ptr {_field_pointer(em, descr, _DESCR_TYPE_NUM)}, align 4")
    ok = "false"
    for value in nums:
        hit = em.assign("tnum.eq", f"icmp eq i32 {num}, {value}")
        ok = hit if ok == "false" else em.assign("tnum.any", f"or i1 {ok}, {hit}")
    # A byte-swapped array has the same type number but byteorder '>'.
    order = em.assign("bo", f"load i8, ptr {_field_pointer(em, descr, _DESCR_BYTEORDER)}, align 1")
    native = em.assign("bo.ok", f"icmp ne i8 {order}, {ord('>')}")
    both = em.assign("dtype.ok", f"and i1 {ok}, {native}")
    return em.cast(both, _BOOL, node.dtype)


def _array_descr(em: ExprEmitter, node: Call) -> str:
    # A borrowed reference to the array's dtype object (only ever formatted into a message).
    _arg_count(node, 1)
    handle = em.expr(node.args[0])
    return em.assign(
        "descr", f"load ptr, ptr {_field_pointer(em, handle, _PYARRAY_DESCR)}, align 8"
    )


def _format_message(em: ExprEmitter, node: Call) -> str:
    raise CodegenError("format_message is only valid as the message of an AssertStmt")


def _likely(em: ExprEmitter, node: Call) -> str:
    _arg_count(node, 1)
    cond = em.expr(node.args[0])
    if node.args[0].dtype.lanes != 1:
        return cond
    em.ctx.declare("llvm.expect.i1", "i1", ["i1", "i1"])
    return em.assign("likely", f"call i1 @llvm.expect.i1(i1 {cond}, i1 true)")


def _assume(em: ExprEmitter, node: Call) -> str:
    _arg_count(node, 1)
    cond = em.expr(node.args[0])
    em.ctx.declare("llvm.assume", "void", ["i1"])
    em.emit(f"call void @llvm.assume(i1 {cond})")
    return em.zero(node.dtype)


def _reinterpret(em: ExprEmitter, node: Call) -> str:
    _arg_count(node, 1)
    src = node.args[0].dtype
    value = em.expr(node.args[0])
    if (
        src.bits * src.lanes != node.dtype.bits * node.dtype.lanes
        or src.is_bool
        or node.dtype.is_bool
    ):
        raise CodegenError(f"reinterpret from {src} to {node.dtype}: sizes differ or bool involved")
    if src == node.dtype:
        return value
    if src.is_handle or node.dtype.is_handle:
        return em.cast(value, src, node.dtype)
    return em.assign("bits", f"bitcast {llvm_type(src)} {value} to {llvm_type(node.dtype)}")


def _if_then_else(em: ExprEmitter, node: Call) -> str:
    _arg_count(node, 3)
    cond_expr, then_expr, else_expr = node.args
    if cond_expr.dtype.lanes != 1:
        # A vector condition cannot branch: evaluate both sides lane-wise.
        cond = em.expr(cond_expr)
        a, b = em.expr(then_expr), em.expr(else_expr)
        ty = llvm_type(node.dtype)
        return em.assign("ite", f"select {llvm_type(cond_expr.dtype)} {cond}, {ty} {a}, {ty} {b}")
    cond = em.expr(cond_expr)
    then_label, else_label, join = (
        em.new_label("ite.then"),
        em.new_label("ite.else"),
        em.new_label("ite.end"),
    )
    em.cond_br(cond, then_label, else_label)
    em.label(then_label)
    a = em.expr(then_expr)
    a_block = em.block
    em.br(join)
    em.label(else_label)
    b = em.expr(else_expr)
    b_block = em.block
    em.br(join)
    em.label(join)
    return em.assign("ite", f"phi {llvm_type(node.dtype)} [ {a}, %{a_block} ], [ {b}, %{b_block} ]")


def _address_of(em: ExprEmitter, node: Call) -> str:
    _arg_count(node, 1)
    load = node.args[0]
    if not isinstance(load, BufferLoad):
        raise CodegenError("address_of needs a buffer element (BufferLoad) argument")
    index = em.flat_index(load.buffer, load.indices)
    return em.index_pointer(load.buffer, index)


def _isnullptr(em: ExprEmitter, node: Call) -> str:
    _arg_count(node, 1)
    return em.assign("isnull", f"icmp eq ptr {em.expr(node.args[0])}, null")


def _no_op(em: ExprEmitter, node: Call) -> str:
    # Profiling markers: we have no profiler hooks.
    return em.zero(node.dtype)


def _undef(em: ExprEmitter, node: Call) -> str:
    # Any value is correct; zero matches the interpreter.
    return em.zero(node.dtype)


def _llvm_intrin(em: ExprEmitter, node: Call) -> str:
    if not node.args or not isinstance(node.args[0], StringImm):
        raise CodegenError(f"{node.op} needs the LLVM intrinsic name as its first argument")
    name = node.args[0].value
    if not name.startswith("llvm.") or not all(c.isalnum() or c in "_." for c in name):
        raise CodegenError(f"{node.op}: {name!r} is not an LLVM intrinsic name")
    if name.count(".") == 1:
        # a generic intrinsic (llvm.sqrt, llvm.ctpop): overloaded on the result type. A
        # target's (llvm.x86.avx2.pmadd.wd) is named in full: a suffix would name no
        # intrinsic, and the JIT would look for a function of that name
        name = f"{name}.{intrinsic_suffix(node.dtype)}"
    typed = [_extern_arg(em, a) for a in llvm_intrinsic_operands(node)]
    ret = llvm_type(node.dtype)
    em.ctx.declare(name, ret, [ty for ty, _ in typed])
    arglist = ", ".join(f"{ty} {v}" for ty, v in typed)
    return em.assign("llvm", f"call {ret} @{name}({arglist})")


def _access_ptr(em: ExprEmitter, node: Call) -> str:
    # tvm_access_ptr(type_annotation(dtype), data, offset, extent, mask): data + offset elements.
    _arg_count(node, 5)
    annotation, data, offset = node.args[:3]
    data_ptr = em.expr(data)
    index = em.to_i64(em.expr(offset), offset.dtype)
    element = llvm_type(annotation.dtype) if not annotation.dtype.is_handle else "i8"
    return em.assign("aptr", f"getelementptr inbounds {element}, ptr {data_ptr}, i64 {index}")


def _prefetch(em: ExprEmitter, node: Call) -> str:
    # prefetch(A[mins], extents...): fetch the region's first element (read, high locality).
    load = node.args[0] if node.args else None
    if not isinstance(load, BufferLoad):
        raise CodegenError("prefetch needs a buffer element (BufferLoad) as its first argument")
    address = em.index_pointer(load.buffer, em.flat_index(load.buffer, load.indices))
    em.ctx.declare("llvm.prefetch.p0", "void", ["ptr", "i32", "i32", "i32"])
    em.emit(f"call void @llvm.prefetch.p0(ptr {address}, i32 0, i32 3, i32 1)")
    return em.zero(node.dtype)


_BUILTINS: dict[str, Callable[[ExprEmitter, Call], str]] = {
    "prefetch": _prefetch,
    "tvm_access_ptr": _access_ptr,
    "start_profile_intrinsic": _no_op,
    "end_profile_intrinsic": _no_op,
    "undef": _undef,
    "call_llvm_intrin": _llvm_intrin,
    "call_llvm_pure_intrin": _llvm_intrin,
    "array_data": _array_data,
    "array_ndim": _array_i32_field(_PYARRAY_NDIM),
    "array_flags": _array_i32_field(_PYARRAY_FLAGS),
    "array_shape": _array_dim_field(_PYARRAY_DIMS),
    "array_stride": _array_dim_field(_PYARRAY_STRIDES),
    "array_dtype_is": _array_dtype_is,
    "array_descr": _array_descr,
    "format_message": _format_message,
    "likely": _likely,
    "assume": _assume,
    "reinterpret": _reinterpret,
    "if_then_else": _if_then_else,
    "address_of": _address_of,
    "isnullptr": _isnullptr,
}


# ---------------------------------------------------------------------------
# intrinsics
# ---------------------------------------------------------------------------


def _float_arg(em: ExprEmitter, node: Call, count: int) -> list[str]:
    _arg_count(node, count)
    values = []
    for arg in node.args:
        value = em.expr(arg)
        if arg.dtype != node.dtype:
            value = em.cast(value, arg.dtype, node.dtype)
        values.append(value)
    return values


def _libm_call(em: ExprEmitter, name: str, dtype: DataType, args: list[str]) -> str:
    """Call libm ``name``/``namef`` lane by lane (float16 computed in float32)."""
    promoted = [em.promote_half(a, dtype) for a in args]
    wide = promoted[0][1]
    elem = wide.element_of()
    cname = name + ("f" if elem.bits == 32 else "")
    sty = scalar_type(elem)
    em.ctx.declare(cname, sty, [sty] * len(args), "nounwind")
    if wide.lanes == 1:
        arglist = ", ".join(f"{sty} {v}" for v, _ in promoted)
        res = em.assign(name, f"call {sty} @{cname}({arglist})")
        return em.demote_half(res, wide, dtype)
    vty = llvm_type(wide)
    acc = "poison"
    for lane in range(wide.lanes):
        lane_args = [
            em.assign("lane", f"extractelement {vty} {v}, i64 {lane}") for v, _ in promoted
        ]
        arglist = ", ".join(f"{sty} {v}" for v in lane_args)
        res = em.assign(name, f"call {sty} @{cname}({arglist})")
        acc = em.assign("vm", f"insertelement {vty} {acc}, {sty} {res}, i64 {lane}")
    return em.demote_half(acc, wide, dtype)


def _vecmath_call(em: ExprEmitter, name: str, dtype: DataType, args: list[str]) -> str:
    """Math through the runtime's :class:`MathLowering` (libmvec-vectorisable scalar symbols).

    Scalars call the renamed scalar function, which the loop vectoriser widens to a
    libmvec variant; explicit vectors call the variant of matching width directly, or
    the scalar function lane by lane.
    """
    promoted = [em.promote_half(a, dtype) for a in args]
    wide = promoted[0][1]
    sty = scalar_type(wide.element_of())
    math = em.ctx.vecmath()
    symbol = math.call(name, sty)
    fm = em.fm
    if wide.lanes == 1:
        arglist = ", ".join(f"{sty} {v}" for v, _ in promoted)
        res = em.assign(name, f"call {fm}{sty} @{symbol}({arglist})")
        return em.demote_half(res, wide, dtype)
    vty = llvm_type(wide)
    variants = (
        libmvec_variants(name, sty, math.features)
        if math.use_libmvec and name != "sigmoid"
        else []
    )
    for variant, _isa, lanes in variants:
        if lanes == wide.lanes:
            arglist = ", ".join(f"{vty} {v}" for v, _ in promoted)
            res = em.assign(name, f"call {fm}{vty} @{variant}({arglist})")
            return em.demote_half(res, wide, dtype)
    acc = "poison"
    for lane in range(wide.lanes):
        parts = [em.assign("lane", f"extractelement {vty} {v}, i64 {lane}") for v, _ in promoted]
        arglist = ", ".join(f"{sty} {v}" for v in parts)
        res = em.assign(name, f"call {fm}{sty} @{symbol}({arglist})")
        acc = em.assign("vm", f"insertelement {vty} {acc}, {sty} {res}, i64 {lane}")
    return em.demote_half(acc, wide, dtype)


def _one(em: ExprEmitter, dtype: DataType) -> str:
    return em.splat(float_const(1.0, dtype.element_of()), dtype)


def _intrinsic(em: ExprEmitter, node: Call) -> str:
    op, dtype = node.op, node.dtype
    spec = INTRINSICS.get(op)
    if spec is None:
        raise CodegenError(f"unknown intrinsic {op!r} ({dtype})")
    if spec.expand is not None:
        return em.expr(spec.expand(node.args))
    if op in _INT_INTRINSICS:
        return _INT_INTRINSICS[op](em, node)
    if op in ("abs", "fabs") and not dtype.is_float:
        (value,) = [em.expr(a) for a in node.args]
        if dtype.is_uint:
            return value
        return _int_call(em, "abs", dtype, [value], extra=", i1 false")
    if spec.result is Result.BOOL:
        return _float_class(em, node)
    if not dtype.is_float:
        raise CodegenError(f"intrinsic {op!r} is not defined for {dtype} (expects a float type)")
    if spec.lowering is Lowering.VECMATH or op == "sigmoid":
        return _vecmath_call(em, spec.symbol or op, dtype, _float_arg(em, node, spec.arity))
    if spec.lowering is Lowering.LLVM:
        return em.call_intrinsic(spec.symbol, dtype, _float_arg(em, node, spec.arity))
    if spec.lowering is Lowering.LIBM:
        return _libm_call(em, spec.symbol, dtype, _float_arg(em, node, spec.arity))
    if op == "rsqrt":
        (value,) = _float_arg(em, node, 1)
        root = em.call_intrinsic("sqrt", dtype, [value])
        return em.float_binop("fdiv", _one(em, dtype), root, dtype)
    if op == "ldexp":
        # x * 2**e: exp2 of an integral value is exact over the normal range.
        x, e = _float_arg(em, node, 2)
        whole = em.call_intrinsic("trunc", dtype, [e])
        scale = _vecmath_call(em, "exp2", dtype, [whole])
        return em.float_binop("fmul", x, scale, dtype)
    raise CodegenError(f"intrinsic {op!r} has no lowering for {dtype}")


def _float_class(em: ExprEmitter, node: Call) -> str:
    _arg_count(node, 1)
    arg = node.args[0]
    value = em.expr(arg)
    if not arg.dtype.is_float:
        return em.int_literal(1 if node.op == "isfinite" else 0, node.dtype)
    ty = llvm_type(arg.dtype)
    if node.op == "isnan":
        return em.assign("isnan", f"fcmp uno {ty} {value}, {value}")
    mag = em.call_intrinsic("fabs", arg.dtype, [value])
    inf = em.splat(float_const(float("inf"), arg.dtype.element_of()), arg.dtype)
    pred = "oeq" if node.op == "isinf" else "one"
    return em.assign(node.op, f"fcmp {pred} {ty} {mag}, {inf}")


def _int_call(em: ExprEmitter, name: str, dtype: DataType, args: list[str], extra: str = "") -> str:
    ty = llvm_type(dtype)
    fname = f"llvm.{name}.{intrinsic_suffix(dtype)}"
    params = [ty] * len(args) + (["i1"] if extra else [])
    em.ctx.declare(fname, ty, params)
    arglist = ", ".join(f"{ty} {v}" for v in args)
    return em.assign(name, f"call {ty} @{fname}({arglist}{extra})")


def _int_operands(em: ExprEmitter, node: Call, count: int) -> list[str]:
    _arg_count(node, count)
    if not (node.dtype.element_of().is_integer or node.dtype.element_of().is_bool):
        raise CodegenError(f"{node.op} needs integer operands, got {node.dtype}")
    return [em.cast(em.expr(a), a.dtype, node.dtype) for a in node.args]


def _bitwise(op: str) -> Callable[[ExprEmitter, Call], str]:
    def emit(em: ExprEmitter, node: Call) -> str:
        a, b = _int_operands(em, node, 2)
        return em.assign(op, f"{op} {llvm_type(node.dtype)} {a}, {b}")

    return emit


def _bitwise_not(em: ExprEmitter, node: Call) -> str:
    (a,) = _int_operands(em, node, 1)
    ones = em.int_literal(1 if node.dtype.is_bool else -1, node.dtype)
    return em.assign("not", f"xor {llvm_type(node.dtype)} {a}, {ones}")


def _shift(em: ExprEmitter, node: Call, op: str) -> str:
    # A shift by an amount outside [0, bits) is poison in LLVM; TIR defines it as
    # 0 for shl/lshr and as the sign fill for ashr (as the interpreter does).
    a, b = _int_operands(em, node, 2)
    ty = llvm_type(node.dtype)
    bits = node.dtype.element_of().bits
    in_range = em.assign("inrange", f"icmp ult {ty} {b}, {em.int_literal(bits, node.dtype)}")
    zero = em.int_literal(0, node.dtype)
    safe_b = em.assign("amt", f"select {mask_type(node.dtype)} {in_range}, {ty} {b}, {ty} {zero}")
    shifted = em.assign("sh", f"{op} {ty} {a}, {safe_b}")
    if op == "ashr":
        fill = em.assign("fill", f"ashr {ty} {a}, {em.int_literal(bits - 1, node.dtype)}")
    else:
        fill = em.int_literal(0, node.dtype)
    mask = mask_type(node.dtype)
    return em.assign("shres", f"select {mask} {in_range}, {ty} {shifted}, {ty} {fill}")




def _shift_left(em: ExprEmitter, node: Call) -> str:
    return _shift(em, node, "shl")


def _shift_right(em: ExprEmitter, node: Call) -> str:
    return _shift(em, node, "ashr" if node.dtype.element_of().is_int else "lshr")


def _int_llvm_intrinsic(em: ExprEmitter, node: Call) -> str:
    # llvm.ctlz/cttz take an is_zero_poison flag: false, so clz(0) is the bit width.
    symbol = INTRINSICS[node.op].symbol
    (a,) = _int_operands(em, node, 1)
    extra = ", i1 false" if symbol in ("ctlz", "cttz") else ""
    return _int_call(em, symbol, node.dtype, [a], extra=extra)


_INT_INTRINSICS: dict[str, Callable[[ExprEmitter, Call], str]] = {
    "bitwise_and": _bitwise("and"),
    "bitwise_or": _bitwise("or"),
    "bitwise_xor": _bitwise("xor"),
    "bitwise_not": _bitwise_not,
    "shift_left": _shift_left,
    "shift_right": _shift_right,
    **{
        spec.name: _int_llvm_intrinsic
        for spec in INTRINSICS.values()
        if spec.operands is Operands.INTEGER and spec.lowering is Lowering.LLVM
    },
}


# ---------------------------------------------------------------------------
# extern calls
# ---------------------------------------------------------------------------


def _extern_arg(em: ExprEmitter, arg: PrimExpr) -> tuple[str, str]:
    value = em.expr(arg)
    return llvm_type(arg.dtype), value


def _check_kernel_call(
    em: ExprEmitter, name: str, args: Sequence[PrimExpr], params: tuple[DataType | None, ...]
) -> None:
    """A call to another kernel passes one of the caller's own buffer parameters for each
    buffer (the callee reads an ndarray object from it: a data pointer would be read as one)
    and a value of the parameter's dtype for each scalar."""
    if len(args) != len(params):
        raise CodegenError(
            f"call to kernel {name!r} passes {len(args)} argument(s), it takes {len(params)}"
        )
    for position, (arg, dtype) in enumerate(zip(args, params), 1):
        if dtype is None:
            if not (isinstance(arg, Var) and id(arg) in em.buffer_handles):
                raise CodegenError(
                    f"call to kernel {name!r}: argument {position} must be a buffer parameter "
                    f"of {em.func_name!r} itself (its handle, as declared), not "
                    + (f"{arg.name!r}" if isinstance(arg, Var) else f"an expression of {arg.dtype}")
                )
        elif arg.dtype != dtype:
            raise CodegenError(
                f"call to kernel {name!r}: argument {position} is {arg.dtype}, the parameter "
                f"is {dtype}; cast it"
            )


def _extern(em: ExprEmitter, node: Call) -> str:
    name = node.op
    if not name or not all(c.isalnum() or c in "_.$" for c in name):
        raise CodegenError(f"extern call to {name!r}: not a valid C symbol name")
    if name in em.ctx.function_names:
        _check_kernel_call(em, name, node.args, em.ctx.function_names[name])
    typed = [_extern_arg(em, a) for a in node.args]
    arglist = ", ".join(f"{ty} {v}" for ty, v in typed)
    if name in em.ctx.function_names:
        # Another kernel of this module: propagate its failure (its exception is already set).
        status = em.assign("status", f'call i32 @"{name}"({arglist})')
        failed = em.assign("failed", f"icmp ne i32 {status}, 0")
        ok_label, bad_label = em.new_label("call.ok"), em.new_label("call.fail")
        em.cond_br(failed, bad_label, ok_label)
        em.label(bad_label)
        if em.parallel_ctx is None:
            em.br(em.fail_label)
        else:
            # The callee set its exception on this worker thread; the caller's thread only
            # sees what the parallel context records.
            em.raise_error(ErrorKind.RUNTIME, f"kernel {name!r} failed inside a parallel loop")
        em.label(ok_label)
        return em.zero(node.dtype)
    ret = llvm_type(node.dtype)
    em.ctx.declare(name, ret, [ty for ty, _ in typed])
    em.ctx.extern_symbols.add(name)
    return em.assign("call", f"call {ret} @{name}({arglist})")
