"""Register tiles of narrow integer products: two reduction steps per multiply-add.

An int8 dense layer or matmul accumulates ``int32(X[i, k]) * int32(Y[k, j])`` in 32-bit
lanes. ``tile_reduction_panels`` computes it as ``R x W`` tiles of such vector updates, one
``k`` at a time: a 32-bit multiply per lane and step (``vpmulld``, two micro-ops on Intel
cores). x86's ``pmaddwd`` multiplies sixteen-bit lanes and adds each adjacent pair into one
32-bit lane: with the operands of steps ``k`` and ``k + 1`` interleaved, ::

    acc[r, 0:W] += pmaddwd(interleave(Y[k, j:j+W], Y[k+1, j:j+W]),
                           repeat(X[i_r, k], X[i_r, k+1]))

does both steps in one instruction per native vector (fused with the add into
``vpdpwssd`` where the CPU has AVX-512 VNNI). The interleaved column pair is built once per
pair of steps and shared by the tile's ``R`` rows.

Exact: an operand of 8 bits (or a 16-bit signed one) is exact as a 16-bit lane, each pair's
sum is formed in 32 bits, and integer addition wraps, so grouping two steps before adding
them to the accumulator gives the same 32-bit result as adding them one by one (TVM's
``add nsw`` leaves an overflowing sum undefined anyway). An odd step count ends with the
last step as written.

Applies to an update ``acc + int32(a) * int32(b)`` (either order) with ``a`` and ``b`` of
type int8, uint8 or int16, one varying with the tile's rows and not its columns and the
other the reverse, on x86 targets; the native width is 16 lanes with AVX-512BW, 8 with AVX2,
4 with SSE2 (a tile row of ``W`` lanes takes ``W / native`` instructions).
"""

from __future__ import annotations

from dataclasses import dataclass

from irbuilder.ir import (
    EQ,
    Add,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    FloorDiv,
    FloorMod,
    For,
    IfThenElse,
    IntImm,
    Mul,
    PrimExpr,
    SeqStmt,
    Shuffle,
    Stmt,
    StringImm,
    Var,
    as_dtype,
    structural_equal,
)

from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on
from ..target import Target
from ..transforms.unroll import copy_with_fresh_vars
from ..transforms.vectorize import vectorize_expr

__all__ = ["PairProduct", "match_pair_product", "native_lanes", "pair_lanes", "paired_steps"]

_NARROW = frozenset({"int8", "uint8", "int16"})
"""Element types exact as signed 16-bit lanes."""

_I16 = as_dtype("int16")
_I32 = as_dtype("int32")
_U32 = as_dtype("uint32")

_INTRINSICS = {
    16: "llvm.x86.avx512.pmaddw.d.512",
    8: "llvm.x86.avx2.pmadd.wd",
    4: "llvm.x86.sse2.pmadd.wd",
}
"""``pmaddwd`` by its 32-bit result lanes."""


def pair_lanes(target: Target) -> int:
    """The widest ``pmaddwd`` of ``target`` by its 32-bit result lanes (every x86-64 target
    has the SSE2 one)."""
    if target.has_feature("avx512bw"):
        return 16
    if target.has_feature("avx2"):
        return 8
    return 4


@dataclass(frozen=True)
class PairProduct:
    """``acc + int32(row) * int32(col)``: ``row`` varies with the tile's rows, ``col`` with
    its columns; both are narrow integers (before their casts)."""

    row: PrimExpr
    col: PrimExpr


def _narrow(expr: PrimExpr) -> PrimExpr | None:
    """The narrow integer ``expr`` widens to 32 bits (``Cast(int32, x)``), or None."""
    if not isinstance(expr, Cast) or expr.dtype != _I32:
        return None
    value = expr.value
    return value if str(value.dtype) in _NARROW else None


def match_pair_product(value: PrimExpr, element: BufferLoad, i: Var, j: Var
                       ) -> PairProduct | None:
    """The pair product that the scalar update ``value`` of ``element`` is, with ``i`` the
    rows' and ``j`` the columns' variable; None when it is not one."""
    if not isinstance(value, Add) or value.dtype != _I32:
        return None

    def is_element(expr: PrimExpr) -> bool:
        return (isinstance(expr, BufferLoad) and expr.buffer.data is element.buffer.data
                and len(expr.indices) == 1 and structural_equal(expr.indices[0],
                                                                element.indices[0]))

    if is_element(value.a):
        product = value.b
    elif is_element(value.b):
        product = value.a
    else:
        return None
    if not isinstance(product, Mul):
        return None
    a, b = _narrow(product.a), _narrow(product.b)
    if a is None or b is None:
        return None
    for row, col in ((a, b), (b, a)):
        if (depends_on(row, i) and not depends_on(row, j)
                and depends_on(col, j) and not depends_on(col, i)):
            return PairProduct(row, col)
    return None


def _pairs(pair: PairProduct, k: Var, first: PrimExpr, lane: Var,
           width: int) -> tuple[list[PrimExpr], list[PrimExpr]]:
    """The columns of steps ``first`` and ``first + 1`` (int16 vectors of ``width`` lanes)
    and the row's two values (int16)."""
    second = first + IntImm(first.dtype, 1)
    cols: list[PrimExpr] = [
        Cast(_I16.with_lanes(width),
             vectorize_expr(lane, substitute_expr(pair.col, {k: step}),
                            IntImm(lane.dtype, 0), width))
        for step in (first, second)
    ]
    rows: list[PrimExpr] = [Cast(_I16, substitute_expr(pair.row, {k: step}))
                            for step in (first, second)]
    return cols, rows


def _madd(cols: list[PrimExpr], rows: list[PrimExpr], width: int, native: int) -> PrimExpr:
    """``width`` 32-bit lanes of the pair sums of the columns (interleaved) and the row's
    pair (repeated), in ``pmaddwd`` instructions of ``native`` lanes."""
    interleaved: list[int] = []
    for lane in range(width):
        interleaved += [lane, lane + width]
    name = StringImm(_INTRINSICS[native])
    parts: list[PrimExpr] = []
    for start in range(0, width, native):
        picked = interleaved[2 * start: 2 * (start + native)]
        parts.append(Call(_I32.with_lanes(native), "call_llvm_pure_intrin",
                          (name, IntImm(_U32, 2), Shuffle(tuple(cols), tuple(picked)),
                           Shuffle(tuple(rows), (0, 1) * native)),
                          CallKind.BUILTIN))
    if len(parts) == 1:
        return parts[0]
    return Shuffle(tuple(parts), tuple(range(width)))


def native_lanes(target: Target, width: int) -> int:
    """The ``pmaddwd`` width for tile rows of ``width`` 32-bit lanes on ``target``: the
    widest dividing ``width``, 0 when none does."""
    native = pair_lanes(target)
    while native >= 4 and width % native:
        native //= 2
    return native if native >= 4 else 0


def paired_steps(steps: For, step: Stmt,
                 updates: list[tuple[PairProduct, BufferLoad, Var]],
                 width: int, native: int) -> Stmt:
    """The reduction loop ``steps`` (whose body is the vector statements ``step``) two steps
    at a time: each update (its pair product, the accumulator's ``width``-lane vector and the
    lane variable, the columns' lanes from 0) becomes a ``pmaddwd`` update; an odd last
    step runs ``step``."""
    k = steps.loop_var
    kp = Var(k.name + "_pair", k.dtype)
    two = IntImm(k.dtype, 2)
    first = steps.min + kp * two
    body: list[Stmt] = []
    for pair, acc, lane in updates:
        cols, rows = _pairs(pair, k, first, lane, width)
        body.append(BufferStore(acc.buffer, Add(acc, _madd(cols, rows, width, native)),
                                acc.indices))
    loop = For(kp, IntImm(k.dtype, 0), FloorDiv(steps.extent, two), steps.kind,
               SeqStmt(tuple(body)), steps.thread_binding, steps.annotations, span=steps.span)
    last = steps.min + steps.extent - IntImm(k.dtype, 1)
    tail = copy_with_fresh_vars(step, {k: last})
    if isinstance(steps.extent, IntImm):
        return loop if steps.extent.value % 2 == 0 else SeqStmt((loop, tail))
    odd = EQ(FloorMod(steps.extent, two), IntImm(k.dtype, 1))
    return SeqStmt((loop, IfThenElse(odd, tail, None)))

