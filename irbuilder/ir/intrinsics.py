"""The one declaration of every math and bit intrinsic (``Call(INTRINSIC)`` ops).

Each :class:`IntrinsicSpec` says what the intrinsic takes (arity, operand kind), what it
returns (the dtype rule), whether it is pure and lane-wise on vectors, how the reference
interpreter computes it (numpy functions, as data) and how the code generator lowers it
(:class:`Lowering` plus the LLVM intrinsic or libm symbol name, as data: the backend maps
the kind to instructions). Readers:

* ``irbuilder.tir.exprs`` makes the ``T.<name>`` builder of every ``script`` entry;
* the printer prints ``T.<name>(args)`` when the call's dtype follows the rule;
* ``backend.interp.intrinsics`` evaluates with ``float_impl``/``int_impl``;
* ``lowering.transforms.vectorize`` widens a call only when the entry is ``pure`` and ``vector``;
* ``backend.codegen.intrinsics`` lowers by ``lowering``/``symbol``, and
  ``backend.runtime.vecmath`` takes its libm/libmvec function list from the
  :data:`Lowering.VECMATH` entries.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from .dtype import as_dtype
from .expr import Call, CallKind, Cast, PrimExpr, Select, const

__all__ = [
    "INTRINSICS",
    "IntrinsicSpec",
    "Lowering",
    "Operands",
    "Result",
    "intrinsic_spec",
    "llvm_intrinsic_spec",
]


class Operands(Enum):
    """What operand types an intrinsic accepts."""

    FLOAT = "float"
    """Float operands; a Python number becomes a float32 constant; an integer is a TypeError."""
    INTEGER = "integer"
    """Integer operands (signed or unsigned)."""
    BITS = "bits"
    """Integers or bools (TVM's bool is a 1-bit unsigned integer): bitwise logic, which
    TVM's parser builds for ``and``/``or`` of bool vectors."""
    NUMBER = "number"
    """Floats or integers (``abs``)."""
    ROUNDING = "rounding"
    """Floats; an integer operand is returned unchanged (``floor(i)`` is ``i``)."""
    CLASSIFY = "classify"
    """Floats; for an integer operand the answer is a constant (``isnan(i)`` is False)."""


class Result(Enum):
    """The dtype rule of the call."""

    SAME = "same"
    """The first operand's dtype."""
    BOOL = "bool"
    """``bool`` with the operand's lanes."""


class Lowering(Enum):
    """How the code generator lowers a float intrinsic (integers: see ``symbol``)."""

    VECMATH = "vecmath"
    """The libm function ``symbol`` through the runtime's vector math (libmvec variants)."""
    LLVM = "llvm"
    """The LLVM intrinsic ``llvm.<symbol>.<type>``."""
    LIBM = "libm"
    """The scalar libm function ``symbol`` (``symbol + 'f'`` for float32), lane by lane."""
    EXPANDED = "expanded"
    """Expanded into instructions by the code generator (rsqrt, isnan, bitwise ops...)."""


@dataclass(frozen=True)
class IntrinsicSpec:
    """One intrinsic: signature, dtype rule, purity, vector form, evaluation, lowering."""

    name: str
    arity: int
    operands: Operands
    lowering: Lowering
    symbol: str = ""
    """LLVM intrinsic base name (``ctpop``, ``roundeven``) or libm base name (``expf`` is
    ``exp`` + ``f``); empty for expanded intrinsics."""
    result: Result = Result.SAME
    pure: bool = True
    vector: bool = True
    """Whether the intrinsic applies lane-wise to vector operands."""
    float_impl: Callable[..., Any] | None = None
    """Interpreter: numpy function on scalars of the operand's float precision."""
    int_impl: Callable[..., int] | None = None
    """Interpreter: ``f(*python_ints, bits)`` for integer operands (the caller wraps it)."""
    expand: Callable[[tuple[PrimExpr, ...]], PrimExpr] | None = None
    """An IR expansion both backends evaluate instead (``q_multiply_shift``)."""
    script: bool = True
    """Whether ``T.<name>`` exists (some entries are only reached through ``T.call_intrin``)."""
    doc: str = ""


def _sigmoid(x: Any) -> Any:
    one = type(x)(1)
    return one / (one + np.exp(-x))


def _erf(x: Any) -> Any:
    return type(x)(math.erf(float(x)))


def _erfc(x: Any) -> Any:
    return type(x)(math.erfc(float(x)))


def _cbrt(x: Any) -> Any:
    return np.cbrt(x)


def _round_half_away(x: Any) -> Any:
    f = float(x)
    if not math.isfinite(f):
        return x
    whole = math.trunc(f)
    if abs(f - whole) >= 0.5:  # f - whole is exact in double precision
        whole += 1 if f > 0 else -1
    return type(x)(math.copysign(float(whole), f))


def _ldexp(x: Any, e: Any) -> Any:
    return np.ldexp(x, int(e))


def _popcount(x: int, bits: int) -> int:
    return bin(x & ((1 << bits) - 1)).count("1")


def _clz(x: int, bits: int) -> int:
    # llvm.ctlz with is_zero_poison = false: clz(0) is the bit width.
    return bits - (x & ((1 << bits) - 1)).bit_length()


def _shift(op: str, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    return Call(a.dtype, op, (a, b if b.dtype == a.dtype else Cast(a.dtype, b)), CallKind.INTRINSIC)


def _expand_q_multiply_shift(args: tuple[PrimExpr, ...]) -> PrimExpr:
    # TVM's legalisation of tir.q_multiply_shift: x * y in 64 bits, rounded right shift by
    # q + max(-s, 0) after a left shift by max(s, 0); the result is truncated to int32.
    x, y, q, s = args
    lanes = x.dtype.lanes
    wide, narrow = as_dtype("int64").with_lanes(lanes), as_dtype("int32").with_lanes(lanes)
    zero = const(0, s.dtype)
    left = Select(s > zero, s, zero)
    right = Select(s > zero, zero, zero - s)
    xw: PrimExpr = Cast(wide, x)
    xw = Select(left != zero, _shift("shift_left", xw, left), xw)
    product = xw * Cast(wide, y)
    total = right + q
    rounding = _shift("shift_left", const(1, wide), total - const(1, total.dtype))
    return Cast(narrow, _shift("shift_right", product + rounding, total))


_F, _I, _N, _B = Operands.FLOAT, Operands.INTEGER, Operands.NUMBER, Operands.BITS
_VM, _LL, _LM, _EX = Lowering.VECMATH, Lowering.LLVM, Lowering.LIBM, Lowering.EXPANDED


def _vecmath(name: str, impl: Callable[..., Any], doc: str, arity: int = 1) -> IntrinsicSpec:
    return IntrinsicSpec(name, arity, _F, _VM, name, float_impl=impl, doc=doc)


_TABLE: tuple[IntrinsicSpec, ...] = (
    _vecmath("exp", np.exp, "e ** x."),
    _vecmath("exp2", np.exp2, "2 ** x."),
    _vecmath("exp10", lambda x: np.power(type(x)(10), x), "10 ** x."),
    _vecmath("log", np.log, "Natural logarithm."),
    _vecmath("log2", np.log2, "Base-2 logarithm."),
    _vecmath("log10", np.log10, "Base-10 logarithm."),
    _vecmath("log1p", np.log1p, "log(1 + x), accurate for small x."),
    _vecmath("sin", np.sin, "Sine."),
    _vecmath("cos", np.cos, "Cosine."),
    _vecmath("tan", np.tan, "Tangent."),
    _vecmath("asin", np.arcsin, "Arc sine."),
    _vecmath("acos", np.arccos, "Arc cosine."),
    _vecmath("atan", np.arctan, "Arc tangent."),
    _vecmath("sinh", np.sinh, "Hyperbolic sine."),
    _vecmath("cosh", np.cosh, "Hyperbolic cosine."),
    _vecmath("tanh", np.tanh, "Hyperbolic tangent."),
    _vecmath("asinh", np.arcsinh, "Inverse hyperbolic sine."),
    _vecmath("acosh", np.arccosh, "Inverse hyperbolic cosine."),
    _vecmath("atanh", np.arctanh, "Inverse hyperbolic tangent."),
    _vecmath("erf", _erf, "The error function."),
    _vecmath("pow", np.power, "x ** y for floats.", 2),
    _vecmath("atan2", np.arctan2, "atan(x / y) in the quadrant of the point (y, x).", 2),
    _vecmath("hypot", np.hypot, "sqrt(x ** 2 + y ** 2) without overflow.", 2),
    _vecmath("fmod", np.fmod, "Float remainder with the dividend's sign (C's fmod).", 2),
    IntrinsicSpec("expm1", 1, _F, _VM, "expm1", float_impl=np.expm1, script=False,
                  doc="exp(x) - 1."),
    IntrinsicSpec("erfc", 1, _F, _VM, "erfc", float_impl=_erfc, script=False,
                  doc="1 - erf(x)."),
    IntrinsicSpec("cbrt", 1, _F, _VM, "cbrt", float_impl=_cbrt, script=False,
                  doc="Cube root."),
    IntrinsicSpec("sigmoid", 1, _F, _EX, float_impl=_sigmoid, doc="1 / (1 + exp(-x))."),
    IntrinsicSpec("rsqrt", 1, _F, _EX, float_impl=lambda x: type(x)(1) / np.sqrt(x),
                  doc="1 / sqrt(x)."),
    IntrinsicSpec("sqrt", 1, _F, _LL, "sqrt", float_impl=np.sqrt, doc="Square root."),
    IntrinsicSpec("fabs", 1, _N, _LL, "fabs", float_impl=np.fabs,
                  int_impl=lambda x, bits: abs(x), doc="Absolute value."),
    IntrinsicSpec("abs", 1, _N, _LL, "fabs", float_impl=np.fabs,
                  int_impl=lambda x, bits: abs(x), doc="Absolute value."),
    IntrinsicSpec("floor", 1, Operands.ROUNDING, _LL, "floor", float_impl=np.floor,
                  doc="Round toward minus infinity (integers unchanged)."),
    IntrinsicSpec("ceil", 1, Operands.ROUNDING, _LL, "ceil", float_impl=np.ceil,
                  doc="Round toward plus infinity (integers unchanged)."),
    IntrinsicSpec("trunc", 1, Operands.ROUNDING, _LL, "trunc", float_impl=np.trunc,
                  doc="Round toward zero (integers unchanged)."),
    # numpy (and TVM's lowering of round) round half to even.
    IntrinsicSpec("round", 1, Operands.ROUNDING, _LL, "roundeven", float_impl=np.rint,
                  doc="Round to nearest, ties to even (integers unchanged)."),
    IntrinsicSpec("nearbyint", 1, Operands.ROUNDING, _LL, "nearbyint", float_impl=np.rint,
                  doc="Round to nearest in the current mode, ties to even (integers unchanged)."),
    IntrinsicSpec("round_half_away", 1, Operands.ROUNDING, _LM, "round",
                  float_impl=_round_half_away, script=False,
                  doc="C's round: ties away from zero."),
    IntrinsicSpec("copysign", 2, _F, _LL, "copysign", float_impl=np.copysign,
                  doc="The magnitude of x with the sign of y."),
    IntrinsicSpec("fma", 3, _F, _LL, "fma", float_impl=lambda a, b, c: a * b + c,
                  script=False, doc="a * b + c rounded once."),
    IntrinsicSpec("nextafter", 2, _F, _LM, "nextafter", float_impl=np.nextafter,
                  doc="The next representable float after x toward y."),
    IntrinsicSpec("ldexp", 2, _F, _EX, float_impl=_ldexp, doc="x * 2 ** y."),
    IntrinsicSpec("isnan", 1, Operands.CLASSIFY, _EX, result=Result.BOOL,
                  float_impl=np.isnan, doc="Whether x is NaN (False for integers)."),
    IntrinsicSpec("isinf", 1, Operands.CLASSIFY, _EX, result=Result.BOOL,
                  float_impl=np.isinf, doc="Whether x is infinite (False for integers)."),
    IntrinsicSpec("isfinite", 1, Operands.CLASSIFY, _EX, result=Result.BOOL,
                  float_impl=np.isfinite, doc="Whether x is finite (True for integers)."),
    IntrinsicSpec("popcount", 1, _I, _LL, "ctpop", int_impl=_popcount,
                  doc="The number of set bits."),
    IntrinsicSpec("clz", 1, _I, _LL, "ctlz", int_impl=_clz,
                  doc="The number of leading zero bits (the bit width for 0)."),
    IntrinsicSpec("q_multiply_shift", 4, _I, _EX, expand=_expand_q_multiply_shift,
                  doc="Fixed-point multiply: round(x * y * 2 ** (s - q)) for int32 (TVM's "
                  "legalisation)."),
    IntrinsicSpec("bitwise_not", 1, _B, _EX, int_impl=lambda x, bits: ~x,
                  doc="Bitwise complement of an integer (logical not of a bool)."),
    IntrinsicSpec("bitwise_and", 2, _B, _EX, doc="Bitwise and of integers or bools."),
    IntrinsicSpec("bitwise_or", 2, _B, _EX, doc="Bitwise or of integers or bools."),
    IntrinsicSpec("bitwise_xor", 2, _B, _EX,
                  doc="Bitwise exclusive or of integers or bools."),
    IntrinsicSpec("shift_left", 2, _I, _EX, doc="a << b for integers."),
    IntrinsicSpec("shift_right", 2, _I, _EX,
                  doc="a >> b for integers (arithmetic for signed types)."),
)  # fmt: skip

INTRINSICS: dict[str, IntrinsicSpec] = {spec.name: spec for spec in _TABLE}
"""Every intrinsic by name."""


def llvm_intrinsic_spec(name: str) -> IntrinsicSpec | None:
    """The intrinsic an LLVM intrinsic name lowers from (``"llvm.sqrt"``, ``"llvm.sqrt.f32"``,
    ``"llvm.ctpop.i32"``), or None."""
    parts = name.split(".")
    if len(parts) < 2 or parts[0] != "llvm":
        return None
    for spec in _TABLE:
        if spec.lowering is Lowering.LLVM and spec.symbol == parts[1] and spec.name != "abs":
            return spec
    return None


def intrinsic_spec(name: str) -> IntrinsicSpec | None:
    """The declaration of intrinsic ``name`` (TVM's ``tir.`` prefix allowed), or None."""
    return INTRINSICS.get(name.removeprefix("tir."))
