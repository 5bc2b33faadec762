"""Expression code generation: every lowered PrimExpr node to LLVM IR text."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from backend.llvm_types import mask_type
from irbuilder.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    DataType,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    Shuffle,
    StringImm,
    Sub,
    Var,
    as_dtype,
)
from irbuilder.ir.buffer import Buffer

from .builder import FunctionBuilder
from .context import (
    CodegenError,
    ErrorKind,
    align_of,
    const_int,
    float_const,
    intrinsic_suffix,
    llvm_type,
    mem_type,
    scalar_type,
)
from .intrinsics import emit_call
from .strided import shuffled_stride, strided_load

__all__ = ["ExprEmitter"]

_F32 = as_dtype("float32")
_I64 = as_dtype("int64")
_INDEX_OPS: dict[type[PrimExpr], str] = {Add: "add", Sub: "sub", Mul: "mul"}


_INT_CMP_SIGNED = {EQ: "eq", NE: "ne", LT: "slt", LE: "sle", GT: "sgt", GE: "sge"}
_INT_CMP_UNSIGNED = {EQ: "eq", NE: "ne", LT: "ult", LE: "ule", GT: "ugt", GE: "uge"}
# NE is unordered so that NaN != x holds, as in C and numpy.
_FLOAT_CMP = {EQ: "oeq", NE: "une", LT: "olt", LE: "ole", GT: "ogt", GE: "oge"}


class ExprEmitter(FunctionBuilder):
    """Translates expressions; each ``visit`` returns an LLVM value (SSA name or literal)."""

    streaming: Mapping[int, PrimExpr | None] = {}
    """Data vars (by id) whose contiguous vector stores stream, each with its run-time size
    test or None (:func:`.streaming.stream_conditions`); replaced per function."""
    streamed: bool = False
    """Whether a streaming store was emitted (the function must end with a fence)."""
    hardware_gathers: bool = False
    """Whether vector loads at per-lane indices become hardware gathers (AVX-512 targets)."""
    function_attributes: str = ""
    """Attributes appended to the function headers (:mod:`.gather_policy`)."""
    alias_scopes: dict[int, str] = {}  # replaced per region, never mutated in place
    """Per data var (by id): metadata suffix of its accesses inside a no-overlap region
    (see :mod:`lowering.late.alias_version`)."""

    @property
    def fm(self) -> str:
        """Fast-math flags (with a trailing space) for float instructions, or ``""``."""
        return "fast " if self.ctx.options.fastmath else ""

    @property
    def fm_arith(self) -> str:
        """Flags for ``fadd``/``fsub``/``fmul``: ``fast``, else ``contract`` when FMA
        contraction is allowed (:attr:`CodegenOptions.fp_contract`), else ``""``."""
        options = self.ctx.options
        if options.fastmath:
            return "fast "
        return "contract " if options.fp_contract else ""

    def expr(self, node: PrimExpr) -> str:
        """Emit ``node``; return its value."""
        handler = _HANDLERS.get(type(node))
        if handler is None:
            for klass in type(node).__mro__:
                handler = _HANDLERS.get(klass)
                if handler is not None:
                    break
        if handler is None:
            raise CodegenError(
                f"cannot generate code for {type(node).__name__} ({node.dtype}): "
                "it must be lowered away before code generation"
            )
        return handler(self, node)

    # -- small helpers --------------------------------------------------------
    def zero(self, dtype: DataType) -> str:
        """The zero literal of ``dtype`` (vectors: ``zeroinitializer``)."""
        if dtype.lanes > 1:
            return "zeroinitializer"
        if dtype.is_float:
            return float_const(0.0, dtype)
        if dtype.is_bool:
            return "false"
        if dtype.is_handle:
            return "null"
        return "0"

    def splat(self, literal: str, dtype: DataType) -> str:
        """A constant vector (or scalar) with every lane equal to ``literal``."""
        if dtype.lanes == 1:
            return literal
        elem = scalar_type(dtype)
        return "<" + ", ".join([f"{elem} {literal}"] * dtype.lanes) + ">"

    def int_literal(self, value: int, dtype: DataType) -> str:
        """An integer (or bool) literal splatted to ``dtype``'s lanes."""
        if dtype.element_of().is_bool:
            return self.splat("true" if value else "false", dtype)
        return self.splat(str(value), dtype)

    def broadcast(self, value: str, dtype: DataType) -> str:
        """Broadcast a scalar value to the vector type ``dtype``."""
        elem = scalar_type(dtype)
        vty = llvm_type(dtype)
        ins = self.assign("bc", f"insertelement {vty} poison, {elem} {value}, i64 0")
        return self.assign(
            "bc", f"shufflevector {vty} {ins}, {vty} poison, <{dtype.lanes} x i32> zeroinitializer"
        )

    def any_lane(self, mask: str, lanes: int) -> str:
        """An ``i1`` that is true when any lane of the ``<lanes x i1>`` mask is set."""
        if lanes == 1:
            return mask
        bits = self.assign("any", f"bitcast <{lanes} x i1> {mask} to i{lanes}")
        return self.assign("any", f"icmp ne i{lanes} {bits}, 0")

    def promote_half(self, value: str, dtype: DataType) -> tuple[str, DataType]:
        """float16 is storage-only: extend a half value to float for arithmetic."""
        if dtype.element_of().bits != 16 or not dtype.is_float:
            return value, dtype
        wide = _F32.with_lanes(dtype.lanes)
        ext = self.assign("ext", f"fpext {llvm_type(dtype)} {value} to {llvm_type(wide)}")
        return ext, wide

    def demote_half(self, value: str, wide: DataType, dtype: DataType) -> str:
        """Round a float result back to float16 when ``dtype`` is float16."""
        if wide == dtype:
            return value
        return self.assign("trunc", f"fptrunc {llvm_type(wide)} {value} to {llvm_type(dtype)}")

    def float_binop(self, op: str, a: str, b: str, dtype: DataType) -> str:
        """``op`` (fadd, fmul, ...) on floats, computing float16 in float32."""
        a2, wide = self.promote_half(a, dtype)
        b2, _ = self.promote_half(b, dtype)
        flags = self.fm_arith if op in ("fadd", "fsub", "fmul") else self.fm
        res = self.assign(op, f"{op} {flags}{llvm_type(wide)} {a2}, {b2}")
        return self.demote_half(res, wide, dtype)

    def call_intrinsic(self, name: str, dtype: DataType, args: list[str]) -> str:
        """Call ``llvm.<name>.<suffix>`` with same-typed arguments (float16 promoted)."""
        promoted = [self.promote_half(a, dtype) for a in args]
        wide = promoted[0][1] if promoted else dtype
        ty = llvm_type(wide)
        fname = f"llvm.{name}.{intrinsic_suffix(wide)}"
        self.ctx.declare(fname, ty, [ty] * len(args))
        arglist = ", ".join(f"{ty} {v}" for v, _ in promoted)
        fm = self.fm if wide.is_float else ""
        res = self.assign(name, f"call {fm}{ty} @{fname}({arglist})")
        return self.demote_half(res, wide, dtype)

    # -- casts ----------------------------------------------------------------
    def cast(self, value: str, src: DataType, dst: DataType) -> str:
        """Convert ``value`` from ``src`` to ``dst`` with the right signedness."""
        if src == dst:
            return value
        st, dt = llvm_type(src), llvm_type(dst)
        if dst.is_bool:
            if src.is_float:
                return self.assign("tobool", f"fcmp une {st} {value}, {self.zero(src)}")
            if src.is_handle:
                return self.assign("tobool", f"icmp ne ptr {value}, null")
            return self.assign("tobool", f"icmp ne {st} {value}, {self.zero(src)}")
        if src.is_handle or dst.is_handle:
            if src.is_handle and dst.is_handle:
                return value
            op = "ptrtoint" if src.is_handle else "inttoptr"
            return self.assign("cast", f"{op} {st} {value} to {dt}")
        if src.is_bool:
            op = "uitofp" if dst.is_float else "zext"
            return self.assign("cast", f"{op} {st} {value} to {dt}")
        if src.is_integer and dst.is_integer:
            if src.bits == dst.bits:
                return value
            if src.bits > dst.bits:
                return self.assign("cast", f"trunc {st} {value} to {dt}")
            op = "sext" if src.is_int else "zext"
            return self.assign("cast", f"{op} {st} {value} to {dt}")
        if src.is_integer and dst.is_float:
            op = "sitofp" if src.is_int else "uitofp"
            return self.assign("cast", f"{op} {st} {value} to {dt}")
        if src.is_float and dst.is_integer:
            # Saturating (NaN -> 0), the semantics the interpreter defines: a plain
            # fptosi of an out-of-range value is poison in LLVM.
            if src.lanes > 1 and src.element_of().bits in (32, 64):
                return self.saturating_vector_cast(value, src, dst)
            op = "fptosi" if dst.is_int else "fptoui"
            fname = f"llvm.{op}.sat.{intrinsic_suffix(dst)}.{intrinsic_suffix(src)}"
            self.ctx.declare(fname, dt, [st])
            return self.assign("cast", f"call {dt} @{fname}({st} {value})")
        if src.is_float and dst.is_float:
            if src.bits == dst.bits:
                return value
            op = "fpext" if src.bits < dst.bits else "fptrunc"
            return self.assign("cast", f"{op} {st} {value} to {dt}")
        raise CodegenError(f"unsupported cast from {src} to {dst}")

    def saturating_vector_cast(self, value: str, src: DataType, dst: DataType) -> str:
        """``llvm.fpto[su]i.sat`` of a float32/float64 vector (out-of-range lanes clamp to the
        integer range, NaN gives 0) spelled as clamps, one plain conversion of in-range values
        and selects: x86 code generation expands the vector intrinsic one lane at a time (16
        float32 lanes to int8: about 65 instructions instead of 9). The clamp bounds are the
        integer range's ends when the float type holds them exactly, else the largest float
        below the first value out of range, whose lanes then select the integer maximum."""
        elem = src.element_of()
        signed = dst.is_int
        low, first_out = int(dst.min_value), int(dst.max_value) + 1
        mantissa = 24 if elem.bits == 32 else 53
        exact = (first_out - 1).bit_length() <= mantissa
        # else the largest float below first_out, a power of two: its last ulp is cut off
        high = first_out - 1 if exact else first_out - (first_out >> mantissa)
        st, dt = llvm_type(src), llvm_type(dst)
        mask = f"<{src.lanes} x i1>"

        def fconst(number: int) -> str:
            return self.splat(float_const(float(number), elem), src)

        # NaN lanes clamp low too, so the conversion below never sees a value out of range
        below = self.assign("sat", f"fcmp ult {st} {value}, {fconst(low)}")
        x = self.assign("sat", f"select {mask} {below}, {st} {fconst(low)}, {st} {value}")
        above = self.assign("sat", f"fcmp ogt {st} {x}, {fconst(high)}")
        x = self.assign("sat", f"select {mask} {above}, {st} {fconst(high)}, {st} {x}")
        op = "fptosi" if signed else "fptoui"
        result = self.assign("cast", f"{op} {st} {x} to {dt}")
        if not exact:
            over = self.assign("sat", f"fcmp oge {st} {value}, {fconst(first_out)}")
            top = self.int_literal(first_out - 1 if signed else -1, dst)
            result = self.assign("sat", f"select {mask} {over}, {dt} {top}, {dt} {result}")
        nan = self.assign("sat", f"fcmp uno {st} {value}, {value}")
        return self.assign("cast", f"select {mask} {nan}, {dt} zeroinitializer, {dt} {result}")

    # -- memory -----------------------------------------------------------------
    def element_pointer(self, buffer: Buffer, index: str, index_dtype: DataType) -> str:
        """``getelementptr inbounds`` to element ``index`` of ``buffer`` (i64 index)."""
        base = self.buffer_pointer(buffer)
        idx = self.to_i64(index, index_dtype)
        offset = const_int(buffer.elem_offset)
        if offset != 0:
            off = self.to_i64(self.expr(buffer.elem_offset), buffer.elem_offset.dtype)
            idx = self.assign("idx", f"add nsw i64 {idx}, {off}")
        return self.assign(
            "ptr", f"getelementptr inbounds {mem_type(buffer.dtype)}, ptr {base}, i64 {idx}"
        )

    def index_i64(self, node: PrimExpr) -> str:
        """A scalar buffer index as an ``i64`` value.

        Signed 32/64-bit ``+ - *`` are computed in i64 with ``nsw``: an index whose int32
        arithmetic would wrap addresses outside the buffer anyway, and i64 ``nsw``
        arithmetic lets LLVM fold the index into addressing modes and strength-reduce it
        (wrapping i32 math costs a sign extension per access and blocks both).
        """
        dtype = node.dtype
        if dtype.lanes != 1 or not dtype.is_int or dtype.bits not in (32, 64):
            return self.to_i64(self.expr(node), dtype)
        if isinstance(node, IntImm):
            return str(node.value)
        op = _INDEX_OPS.get(type(node))
        if op is not None:
            assert isinstance(node, (Add, Sub, Mul))
            a, b = self.index_i64(node.a), self.index_i64(node.b)
            return self.assign("ix", f"{op} nsw i64 {a}, {b}")
        return self.to_i64(self.expr(node), dtype)

    def index_pointer(self, buffer: Buffer, index: PrimExpr) -> str:
        """``getelementptr inbounds`` to element ``index`` (a scalar index expression)."""
        return self.element_pointer(buffer, self.index_i64(index), _I64)

    def load_scalar_at(self, ptr: str, dtype: DataType, md: str = "") -> str:
        """Load a ``dtype`` value stored at ``ptr`` (bool: byte -> i1) at element alignment.

        ``md`` is appended to the instruction (e.g. ``", !alias.scope !3, !noalias !4"``).
        """
        mty = mem_type(dtype)
        align = align_of(dtype.element_of())
        val = self.assign("ld", f"load {mty}, ptr {ptr}, align {align}{md}")
        if dtype.element_of().is_bool:
            zero = "0" if dtype.lanes == 1 else "zeroinitializer"
            return self.assign("ld", f"icmp ne {mty} {val}, {zero}")
        return val

    def store_at(self, ptr: str, value: str, dtype: DataType, md: str = "") -> None:
        """Store a ``dtype`` value at ``ptr`` (bool: i1 -> byte) at element alignment."""
        mty = mem_type(dtype)
        if dtype.element_of().is_bool:
            value = self.assign("st", f"zext {llvm_type(dtype)} {value} to {mty}")
        self.emit(f"store {mty} {value}, ptr {ptr}, align {align_of(dtype.element_of())}{md}")

    def alias_md(self, buffer: Buffer) -> str:
        """Scoped no-alias metadata for accesses of ``buffer`` in a no-overlap region, or ``""``."""
        return self.alias_scopes.get(id(buffer.data), "")

    def flat_index(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> PrimExpr:
        """The single index of a flat (1-d) access; N-d accesses must be flattened first."""
        if len(indices) != 1:
            raise CodegenError(
                f"buffer {buffer.name!r} is accessed with {len(indices)} indices: lowered IR "
                "must access flat 1-d buffers (run the flattening pass first)"
            )
        return indices[0]

    def is_contiguous_ramp(self, index: PrimExpr, buffer: Buffer) -> bool:
        """A stride-1 Ramp over a scalar buffer: one plain vector load/store."""
        return isinstance(index, Ramp) and const_int(index.stride) == 1 and buffer.dtype.lanes == 1

    def lane_pointers(self, buffer: Buffer, index: PrimExpr) -> list[str]:
        """Per-lane element pointers of a vector index (for gathers and scatters)."""
        if isinstance(index, Ramp) and index.base.dtype.lanes == 1:
            return self._ramp_lane_pointers(buffer, index)
        vec = self.expr(index)
        lanes = index.dtype.lanes
        elem = index.dtype.element_of()
        ptrs = []
        for lane in range(lanes):
            one = self.assign("lane", f"extractelement {llvm_type(index.dtype)} {vec}, i64 {lane}")
            ptrs.append(self.element_pointer(buffer, one, elem))
        return ptrs

    def _ramp_lane_pointers(self, buffer: Buffer, index: Ramp) -> list[str]:
        """Lane ``k`` of ``Ramp(b, s, n)`` at ``&buffer[b] + k * s``: scalar address
        arithmetic with constant offsets (a strided load becomes one scalar load per lane
        at a displacement of the same base register) instead of a vector of indices whose
        lanes are extracted one by one. The offsets are i64 like every index (see
        :meth:`index_i64`): an int32 Ramp that wraps addresses outside the buffer anyway."""
        base = self.index_pointer(buffer, index.base)
        mty = mem_type(buffer.dtype)
        stride = const_int(index.stride)
        step = None if stride is not None else self.index_i64(index.stride)
        ptrs = [base]
        for lane in range(1, index.dtype.lanes):
            if stride is not None:
                offset = str(lane * stride)
            else:
                offset = self.assign("ix", f"mul nsw i64 {step}, {lane}")
            ptrs.append(self.assign(
                "ptr", f"getelementptr inbounds {mty}, ptr {base}, i64 {offset}"))
        return ptrs


# ---------------------------------------------------------------------------
# handlers
# ---------------------------------------------------------------------------


def _var(em: ExprEmitter, node: Var) -> str:
    return em.lookup(node)


def _int_imm(em: ExprEmitter, node: IntImm) -> str:
    if node.dtype.is_bool:
        return "true" if node.value else "false"
    return str(node.value)


def _float_imm(em: ExprEmitter, node: FloatImm) -> str:
    return float_const(node.value, node.dtype)


def _string_imm(em: ExprEmitter, node: StringImm) -> str:
    return em.ctx.string(node.value)


def _cast(em: ExprEmitter, node: Cast) -> str:
    src, dst = node.value.dtype, node.dtype
    value = em.expr(node.value)
    if src.is_float and dst.is_integer and not dst.is_bool:
        low, high, nan_free = _float_range(node.value)
        if nan_free and dst.min_value - 1 < low and high < dst.max_value + 1:
            # clamped into range by the program (a quantization's min/max): every lane
            # converts exactly, no saturation to spell out
            op = "fptosi" if dst.is_int else "fptoui"
            return em.assign("cast", f"{op} {llvm_type(src)} {value} to {llvm_type(dst)}")
    return em.cast(value, src, dst)


def _float_range(expr: PrimExpr) -> tuple[float, float, bool]:
    """Bounds of a float expression's non-NaN values and whether it is never NaN, from the
    clamps at its top: ``T.max(a, b)`` is ``a > b ? a : b``, so a NaN ``a`` gives ``b`` (``b``
    is then all that bounds it from below) and a NaN ``b`` gives NaN; ``T.min`` alike."""
    if isinstance(expr, Broadcast):
        return _float_range(expr.value)
    if isinstance(expr, FloatImm):
        v = float(expr.value)
        return v, v, v == v
    if isinstance(expr, (Min, Max)):
        a_low, a_high, a_clean = _float_range(expr.a)
        b_low, b_high, b_clean = _float_range(expr.b)
        if isinstance(expr, Max):
            return (max(a_low, b_low) if a_clean else b_low), max(a_high, b_high), b_clean
        return min(a_low, b_low), (min(a_high, b_high) if a_clean else b_high), b_clean
    return -math.inf, math.inf, False


_ARITH = {Add: ("add", "fadd"), Sub: ("sub", "fsub"), Mul: ("mul", "fmul")}


def _arith(em: ExprEmitter, node: Add | Sub | Mul) -> str:
    a, b = em.expr(node.a), em.expr(node.b)
    int_op, float_op = _ARITH[type(node)]
    if node.dtype.is_float:
        return em.float_binop(float_op, a, b, node.dtype)
    if node.dtype.element_of().is_bool:
        raise CodegenError(f"{type(node).__name__} on bool values is not defined; cast first")
    # Integer arithmetic wraps (no nsw): user code may rely on two's complement overflow.
    return em.assign(int_op, f"{int_op} {llvm_type(node.dtype)} {a}, {b}")


def _int_division(em: ExprEmitter, node: Div | Mod | FloorDiv | FloorMod, a: str, b: str) -> str:
    dtype = node.dtype
    ty = llvm_type(dtype)
    signed = dtype.is_int
    want_div = isinstance(node, (Div, FloorDiv))
    floor = isinstance(node, (FloorDiv, FloorMod))
    known = const_int(node.b)
    if known is None or known == 0 or (signed and known == -1):
        # Division by zero must raise, not SIGFPE.
        is_zero = em.assign("iszero", f"icmp eq {ty} {b}, {em.zero(dtype)}")
        nonzero = em.assign("nonzero", f"xor i1 {em.any_lane(is_zero, dtype.lanes)}, true")
        message = "integer division by zero" if want_div else "integer modulo by zero"
        em.check(nonzero, ErrorKind.ZERO_DIVISION, message, hint="divzero")
    if not signed:
        op = "udiv" if want_div else "urem"
        return em.assign(op, f"{op} {ty} {a}, {b}")
    if known is not None and known > 0 and floor and known & (known - 1) == 0:
        shift = known.bit_length() - 1
        if want_div:
            return em.assign("fdiv", f"ashr {ty} {a}, {em.int_literal(shift, dtype)}")
        return em.assign("fmod", f"and {ty} {a}, {em.int_literal(known - 1, dtype)}")
    if known is not None and known not in (0, -1):
        safe_b = b
        minus_one = None
    else:
        # INT_MIN / -1 traps in hardware, and its quotient does not fit the dtype: a quotient
        # raises OverflowError; the remainder (0, exact) divides by 1 instead.
        minus_one = em.assign("isneg1", f"icmp eq {ty} {b}, {em.int_literal(-1, dtype)}")
        if want_div:
            element = dtype.element_of()
            lowest = -(1 << (element.bits - 1))
            is_lowest = em.assign("ismin", f"icmp eq {ty} {a}, {em.int_literal(lowest, dtype)}")
            overflow = em.assign("ovf", f"and {mask_type(dtype)} {is_lowest}, {minus_one}")
            fits = em.assign("fits", f"xor i1 {em.any_lane(overflow, dtype.lanes)}, true")
            em.check(
                fits,
                ErrorKind.OVERFLOW,
                f"integer division overflow: {lowest} divided by -1 does not fit {element}",
                hint="divovf",
            )
        safe_b = em.assign(
            "safeb",
            f"select {mask_type(dtype)} {minus_one}, {ty} {em.int_literal(1, dtype)}, {ty} {b}",
        )
    if want_div:
        q = em.assign("q", f"sdiv {ty} {a}, {safe_b}")
        if minus_one is not None:
            neg = em.assign("neg", f"sub {ty} {em.zero(dtype)}, {a}")
            q = em.assign("q", f"select {mask_type(dtype)} {minus_one}, {ty} {neg}, {ty} {q}")
    r = em.assign("r", f"srem {ty} {a}, {safe_b}")
    if minus_one is not None:
        zero = em.zero(dtype)
        r = em.assign("r", f"select {mask_type(dtype)} {minus_one}, {ty} {zero}, {ty} {r}")
    if not floor:
        return q if want_div else r
    # Round toward -inf: adjust when the remainder is nonzero and its sign differs from b's.
    rnz = em.assign("rnz", f"icmp ne {ty} {r}, {em.zero(dtype)}")
    sign = em.assign("sx", f"xor {ty} {r}, {b}")
    diff = em.assign("sdiff", f"icmp slt {ty} {sign}, {em.zero(dtype)}")
    need = em.assign("adj", f"and {mask_type(dtype)} {rnz}, {diff}")
    if want_div:
        q1 = em.assign("qm1", f"sub {ty} {q}, {em.int_literal(1, dtype)}")
        return em.assign("fq", f"select {mask_type(dtype)} {need}, {ty} {q1}, {ty} {q}")
    rb = em.assign("rpb", f"add {ty} {r}, {b}")
    return em.assign("fr", f"select {mask_type(dtype)} {need}, {ty} {rb}, {ty} {r}")


def _division(em: ExprEmitter, node: Div | Mod | FloorDiv | FloorMod) -> str:
    a, b = em.expr(node.a), em.expr(node.b)
    dtype = node.dtype
    if dtype.element_of().is_bool:
        raise CodegenError(f"{type(node).__name__} on bool values is not defined; cast first")
    if not dtype.is_float:
        return _int_division(em, node, a, b)
    if isinstance(node, Div):
        return em.float_binop("fdiv", a, b, dtype)
    if isinstance(node, Mod):
        return em.float_binop("frem", a, b, dtype)
    if isinstance(node, FloorDiv):
        quotient = em.float_binop("fdiv", a, b, dtype)
        return em.call_intrinsic("floor", dtype, [quotient])
    # FloorMod: fmod, then move into b's sign when signs differ (exact, like numpy).
    a2, wide = em.promote_half(a, dtype)
    b2, _ = em.promote_half(b, dtype)
    ty = llvm_type(wide)
    zero = em.zero(wide)
    r = em.assign("frem", f"frem {em.fm}{ty} {a2}, {b2}")
    rnz = em.assign("rnz", f"fcmp une {ty} {r}, {zero}")
    rneg = em.assign("rneg", f"fcmp olt {ty} {r}, {zero}")
    bneg = em.assign("bneg", f"fcmp olt {ty} {b2}, {zero}")
    diff = em.assign("sdiff", f"xor {mask_type(wide)} {rneg}, {bneg}")
    need = em.assign("adj", f"and {mask_type(wide)} {rnz}, {diff}")
    rb = em.assign("rpb", f"fadd {em.fm}{ty} {r}, {b2}")
    res = em.assign("fmod", f"select {mask_type(wide)} {need}, {ty} {rb}, {ty} {r}")
    return em.demote_half(res, wide, dtype)


def _minmax(em: ExprEmitter, node: Min | Max) -> str:
    a, b = em.expr(node.a), em.expr(node.b)
    dtype = node.dtype
    ty = llvm_type(dtype)
    is_min = isinstance(node, Min)
    if dtype.element_of().is_bool:
        return em.assign("mm", f"{'and' if is_min else 'or'} {ty} {a}, {b}")
    if dtype.is_float:
        pred = "olt" if is_min else "ogt"
        cmp = em.assign("mmc", f"fcmp {em.fm}{pred} {ty} {a}, {b}")
    else:
        pred = ("s" if dtype.is_int else "u") + ("lt" if is_min else "gt")
        cmp = em.assign("mmc", f"icmp {pred} {ty} {a}, {b}")
    name = "min" if is_min else "max"
    return em.assign(name, f"select {mask_type(dtype)} {cmp}, {ty} {a}, {ty} {b}")


def _compare(em: ExprEmitter, node: EQ | NE | LT | LE | GT | GE) -> str:
    a, b = em.expr(node.a), em.expr(node.b)
    operand = node.a.dtype
    ty = llvm_type(operand)
    kind = type(node)
    if operand.is_float:
        return em.assign("cmp", f"fcmp {em.fm}{_FLOAT_CMP[kind]} {ty} {a}, {b}")
    table = _INT_CMP_SIGNED if operand.is_int else _INT_CMP_UNSIGNED
    return em.assign("cmp", f"icmp {table[kind]} {ty} {a}, {b}")


def _logical(em: ExprEmitter, node: And | Or) -> str:
    a, b = em.expr(node.a), em.expr(node.b)
    op = "and" if isinstance(node, And) else "or"
    return em.assign(op, f"{op} {llvm_type(node.dtype)} {a}, {b}")


def _not(em: ExprEmitter, node: Not) -> str:
    a = em.expr(node.a)
    return em.assign("not", f"xor {llvm_type(node.dtype)} {a}, {em.int_literal(1, node.dtype)}")


def _select(em: ExprEmitter, node: Select) -> str:
    cond = em.expr(node.condition)
    t = em.expr(node.true_value)
    f = em.expr(node.false_value)
    ty = llvm_type(node.dtype)
    cond_ty = llvm_type(node.condition.dtype)
    if node.condition.dtype.lanes not in (1, node.dtype.lanes):
        raise CodegenError(
            f"Select condition has {node.condition.dtype.lanes} lanes, "
            f"values have {node.dtype.lanes}"
        )
    return em.assign("sel", f"select {cond_ty} {cond}, {ty} {t}, {ty} {f}")


def _let(em: ExprEmitter, node: Let) -> str:
    old = em.vars.get(id(node.var))
    em.bind(node.var, em.expr(node.value))
    try:
        return em.expr(node.body)
    finally:
        if old is None:
            em.vars.pop(id(node.var), None)
        else:
            em.vars[id(node.var)] = old


def _ramp(em: ExprEmitter, node: Ramp) -> str:
    dtype = node.dtype
    elem = scalar_type(dtype)
    base = em.broadcast(em.expr(node.base), dtype)
    stride_val = em.expr(node.stride)
    if dtype.is_float:
        steps = (
            "<"
            + ", ".join(
                f"{elem} {float_const(float(i), dtype.element_of())}" for i in range(node.lanes)
            )
            + ">"
        )
        stride = em.broadcast(stride_val, dtype)
        off = em.assign("rs", f"fmul {em.fm}{llvm_type(dtype)} {stride}, {steps}")
        return em.assign("ramp", f"fadd {em.fm}{llvm_type(dtype)} {base}, {off}")
    steps = "<" + ", ".join(f"{elem} {i}" for i in range(node.lanes)) + ">"
    if const_int(node.stride) == 1:
        off = steps
    else:
        stride = em.broadcast(stride_val, dtype)
        off = em.assign("rs", f"mul {llvm_type(dtype)} {stride}, {steps}")
    return em.assign("ramp", f"add {llvm_type(dtype)} {base}, {off}")


def _broadcast(em: ExprEmitter, node: Broadcast) -> str:
    return em.broadcast(em.expr(node.value), node.dtype)


def _shuffle(em: ExprEmitter, node: Shuffle) -> str:
    dtype = node.dtype
    values = [em.expr(v) for v in node.vectors]
    lanes = [v.dtype.lanes for v in node.vectors]
    elem = scalar_type(dtype)
    mask = f"<{len(node.indices)} x i32> <" + ", ".join(f"i32 {i}" for i in node.indices) + ">"
    if len(node.indices) > 1 and len(values) == 1 and lanes[0] > 1:
        vty = llvm_type(node.vectors[0].dtype)
        return em.assign("shuf", f"shufflevector {vty} {values[0]}, {vty} poison, {mask}")
    if len(node.indices) > 1 and len(values) == 2 and lanes[0] == lanes[1] > 1:
        vty = llvm_type(node.vectors[0].dtype)
        return em.assign("shuf", f"shufflevector {vty} {values[0]}, {vty} {values[1]}, {mask}")
    # General case: pick lanes one by one from the concatenation.
    sources: list[tuple[str, int]] = []
    for value, count, vec in zip(values, lanes, node.vectors):
        for lane in range(count):
            sources.append(
                (
                    value if count == 1 else f"{llvm_type(vec.dtype)} {value}",
                    lane if count > 1 else -1,
                )
            )
    picked = []
    for index in node.indices:
        src, lane = sources[index]
        if lane < 0:
            picked.append(src)
        else:
            picked.append(em.assign("lane", f"extractelement {src}, i64 {lane}"))
    if len(picked) == 1:
        return picked[0]
    acc = "poison"
    vty = llvm_type(dtype)
    for lane, value in enumerate(picked):
        acc = em.assign("shuf", f"insertelement {vty} {acc}, {elem} {value}, i64 {lane}")
    return acc


def _buffer_load(em: ExprEmitter, node: BufferLoad) -> str:
    buffer = node.buffer
    index = em.flat_index(buffer, node.indices)
    md = em.alias_md(buffer)
    if index.dtype.lanes == 1:
        ptr = em.index_pointer(buffer, index)
        return em.load_scalar_at(ptr, buffer.dtype, md)
    if em.is_contiguous_ramp(index, buffer):
        assert isinstance(index, Ramp)
        ptr = em.index_pointer(buffer, index.base)
        return em.load_scalar_at(ptr, node.dtype, md)
    if isinstance(index, Ramp):
        stride = shuffled_stride(node, index)
        if stride is not None:
            return strided_load(em, node, index, stride, md)
    if (em.hardware_gathers and not isinstance(index, (Ramp, Broadcast))
            and buffer.dtype.lanes == 1 and not buffer.dtype.is_bool):
        return _hardware_gather(em, node, index, md)
    # Gather: one scalar load per lane (LLVM keeps them scalar unless its cost model, which
    # rates gathers expensive on AMD CPUs, forms a hardware gather).
    acc = "poison"
    vty = llvm_type(node.dtype)
    elem_dtype = buffer.dtype
    for lane, ptr in enumerate(em.lane_pointers(buffer, index)):
        value = em.load_scalar_at(ptr, elem_dtype, md)
        if elem_dtype.lanes > 1:
            raise CodegenError(f"gather from vector-typed buffer {buffer.name!r} is not supported")
        acc = em.assign(
            "gather", f"insertelement {vty} {acc}, {llvm_type(elem_dtype)} {value}, i64 {lane}"
        )
    return acc


def _hardware_gather(em: ExprEmitter, node: BufferLoad, index: PrimExpr, md: str) -> str:
    """``llvm.masked.gather`` of every lane (all lanes on) at a data-dependent index
    (``T[I[Ramp]]``; strided Ramps keep per-lane loads, which LLVM turns into shuffles of
    contiguous loads): one ``vgatherdps``-style instruction on AVX-512 targets, where LLVM's
    cost model keeps per-lane loads and inserts, which measured slower on the suite's
    16M-element gather (docs/performance.md). The lanes load the same elements, so the
    result is the same."""
    buffer = node.buffer
    lanes = index.dtype.lanes
    idx_elem = index.dtype.element_of()
    vec = em.expr(index)
    wide = f"<{lanes} x i64>"
    if idx_elem.bits < 64:
        ext = "zext" if idx_elem.is_uint or idx_elem.is_bool else "sext"
        vec = em.assign("gidx", f"{ext} {llvm_type(index.dtype)} {vec} to {wide}")
    offset = const_int(buffer.elem_offset)
    if offset != 0:
        off = em.to_i64(em.expr(buffer.elem_offset), buffer.elem_offset.dtype)
        offsets = em.broadcast(off, _I64.with_lanes(lanes))
        vec = em.assign("gidx", f"add nsw {wide} {vec}, {offsets}")
    base = em.buffer_pointer(buffer)
    ptrs = em.assign(
        "gptr", f"getelementptr inbounds {mem_type(buffer.dtype)}, ptr {base}, {wide} {vec}"
    )
    vty = llvm_type(node.dtype)
    name = f"llvm.masked.gather.{intrinsic_suffix(node.dtype)}.v{lanes}p0"
    em.ctx.declare(name, vty, [f"<{lanes} x ptr>", "i32", f"<{lanes} x i1>", vty])
    ones = "<" + ", ".join(["i1 true"] * lanes) + ">"
    align = align_of(buffer.dtype)
    return em.assign(
        "gather",
        f"call {vty} @{name}(<{lanes} x ptr> {ptrs}, i32 {align}, <{lanes} x i1> {ones}, "
        f"{vty} poison){md}",
    )


def _call(em: ExprEmitter, node: Call) -> str:
    return emit_call(em, node)


_HANDLERS: dict[type, Callable[[ExprEmitter, Any], str]] = {
    Var: _var,
    IntImm: _int_imm,
    FloatImm: _float_imm,
    StringImm: _string_imm,
    Cast: _cast,
    Add: _arith,
    Sub: _arith,
    Mul: _arith,
    Div: _division,
    Mod: _division,
    FloorDiv: _division,
    FloorMod: _division,
    Min: _minmax,
    Max: _minmax,
    EQ: _compare,
    NE: _compare,
    LT: _compare,
    LE: _compare,
    GT: _compare,
    GE: _compare,
    And: _logical,
    Or: _logical,
    Not: _not,
    Select: _select,
    Let: _let,
    Ramp: _ramp,
    Broadcast: _broadcast,
    Shuffle: _shuffle,
    BufferLoad: _buffer_load,
    Call: _call,
}
