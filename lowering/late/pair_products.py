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
pair of steps and shared by the tile's ``R`` rows. Unsigned by signed bytes (a quantized
layer's uint8 activations and int8 weights) on an AVX-512 VNNI target take four steps per
``vpdpbusd`` instead (each 32-bit lane adds four byte products to the accumulator; the
unsigned operand goes first, whichever of the row and the columns it is).

Exact: an operand of 8 bits (or a 16-bit signed one) is exact as a 16-bit lane, each pair's
sum is formed in 32 bits, and integer addition wraps, so grouping two steps before adding
them to the accumulator gives the same 32-bit result as adding them one by one (TVM's
``add nsw`` leaves an overflowing sum undefined anyway). An odd step count ends with the
last step as written (the steps left over by four, for ``vpdpbusd``, whose four products
of at most ``255 * 128`` in magnitude sum exactly in 32 bits).

Applies to an update ``acc + int32(a) * int32(b)`` (either order) with ``a`` and ``b`` of
type int8, uint8 or int16, one varying with the tile's rows and not its columns and the
other the reverse, on x86 targets; the native width is 16 lanes with AVX-512BW, 8 with AVX2,
4 with SSE2 (a tile row of ``W`` lanes takes ``W / native`` instructions).
"""

from __future__ import annotations

from dataclasses import dataclass

from irbuilder.ir import (
    Add,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
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

__all__ = [
    "Instruction",
    "PairProduct",
    "choose_instruction",
    "match_pair_product",
    "native_lanes",
    "pair_lanes",
    "paired_steps",
]

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


@dataclass(frozen=True)
class Instruction:
    """A dot-product instruction the tile's updates use: ``group`` reduction steps per
    32-bit lane, ``lanes`` lanes per instruction."""

    name: str
    group: int
    lanes: int
    accumulates: bool
    """Whether the instruction adds into its first operand (``vpdpbusd``)."""
    unsigned_row: bool = False
    """``vpdpbusd`` only: whether the row's operand is the unsigned one (it goes first)."""


_VPDPBUSD = {16: "llvm.x86.avx512.vpdpbusd.512", 8: "llvm.x86.avx512.vpdpbusd.256"}


def choose_instruction(target: Target, width: int, pair: PairProduct) -> Instruction | None:
    """The instruction for tile rows of ``width`` 32-bit lanes: ``vpdpbusd`` (four steps)
    for an unsigned by signed byte product on an AVX-512 VNNI target, else ``pmaddwd``
    (two steps); None when no width divides ``width``."""
    types = {str(pair.row.dtype), str(pair.col.dtype)}
    if target.has_feature("avx512vnni") and types == {"uint8", "int8"}:
        for lanes in (16, 8):
            if width % lanes == 0:
                return Instruction(_VPDPBUSD[lanes], 4, lanes, True,
                                   str(pair.row.dtype) == "uint8")
    lanes = native_lanes(target, width)
    return Instruction(_INTRINSICS[lanes], 2, lanes, False) if lanes else None


def _operands(pair: PairProduct, k: Var, first: PrimExpr, lane: Var, base: PrimExpr,
              width: int, group: int) -> tuple[list[PrimExpr], list[PrimExpr]]:
    """The columns of steps ``first`` .. ``first + group - 1`` (vectors of ``width`` lanes)
    and the row's values at those steps; as int16 for two steps per lane, as they are
    (bytes) for four."""
    steps = [first + IntImm(first.dtype, n) if n else first for n in range(group)]
    cols = [vectorize_expr(lane, substitute_expr(pair.col, {k: step}), base, width)
            for step in steps]
    rows = [substitute_expr(pair.row, {k: step}) for step in steps]
    if group == 2:
        cols = [Cast(_I16.with_lanes(width), c) for c in cols]
        rows = [Cast(_I16, r) for r in rows]
    return cols, rows


def _as_words(value: PrimExpr, lanes: int) -> PrimExpr:
    """``value``'s bytes as ``lanes`` int32 lanes (the instructions' operand type before
    LLVM 21, which upgrades it)."""
    return Call(_I32.with_lanes(lanes), "reinterpret", (value,), CallKind.BUILTIN)


def _dot(acc: BufferLoad, cols: list[PrimExpr], rows: list[PrimExpr], width: int,
         op: Instruction) -> PrimExpr:
    """The accumulator's ``width`` lanes after ``op`` on the columns (interleaved: each lane
    gets its ``group`` steps side by side) and the row's values (repeated)."""
    group = op.group
    interleaved = [lane + n * width for lane in range(width) for n in range(group)]
    name = StringImm(op.name)
    parts: list[PrimExpr] = []
    for start in range(0, width, op.lanes):
        col = Shuffle(tuple(cols), tuple(interleaved[group * start: group * (start + op.lanes)]))
        row = Shuffle(tuple(rows), tuple(range(group)) * op.lanes)
        if op.accumulates:
            words = Shuffle((acc,), tuple(range(start, start + op.lanes)))
            first, second = (row, col) if op.unsigned_row else (col, row)
            args: tuple[PrimExpr, ...] = (name, IntImm(_U32, 3), words,
                                          _as_words(first, op.lanes),
                                          _as_words(second, op.lanes))
        else:
            args = (name, IntImm(_U32, 2), col, row)
        parts.append(Call(_I32.with_lanes(op.lanes), "call_llvm_pure_intrin", args,
                          CallKind.BUILTIN))
    total = parts[0] if len(parts) == 1 else Shuffle(tuple(parts), tuple(range(width)))
    return total if op.accumulates else Add(acc, total)


def native_lanes(target: Target, width: int) -> int:
    """The ``pmaddwd`` width for tile rows of ``width`` 32-bit lanes on ``target``: the
    widest dividing ``width``, 0 when none does."""
    native = pair_lanes(target)
    while native >= 4 and width % native:
        native //= 2
    return native if native >= 4 else 0


def paired_steps(steps: For, step: Stmt,
                 updates: list[tuple[PairProduct, BufferLoad, Var, PrimExpr]],
                 width: int, op: Instruction) -> Stmt:
    """The reduction loop ``steps`` (whose body is the vector statements ``step``)
    ``op.group`` steps at a time: each update (its pair product, the accumulator's
    ``width``-lane vector, the lane variable and the columns' first index) becomes an
    ``op`` update; the steps left over run ``step``."""
    k = steps.loop_var
    group = IntImm(k.dtype, op.group)
    kg = Var(k.name + ("_pair" if op.group == 2 else "_quad"), k.dtype)
    first = steps.min + kg * group
    body: list[Stmt] = []
    for pair, acc, lane, base in updates:
        cols, rows = _operands(pair, k, first, lane, base, width, op.group)
        body.append(BufferStore(acc.buffer, _dot(acc, cols, rows, width, op), acc.indices))
    loop = For(kg, IntImm(k.dtype, 0), FloorDiv(steps.extent, group), steps.kind,
               SeqStmt(tuple(body)), steps.thread_binding, steps.annotations, span=steps.span)
    done = steps.min + FloorDiv(steps.extent, group) * group
    if isinstance(steps.extent, IntImm):
        left = steps.extent.value % op.group
        if not left:
            return loop
        start = steps.min + IntImm(k.dtype, steps.extent.value - left)
        tails = [copy_with_fresh_vars(step, {k: start + IntImm(k.dtype, n) if n else start})
                 for n in range(left)]
        return SeqStmt((loop, *tails))
    kt = Var(k.name + "_left", k.dtype)
    tail = For(kt, IntImm(k.dtype, 0), FloorMod(steps.extent, group), ForKind.SERIAL,
               copy_with_fresh_vars(step, {k: done + kt}))
    return SeqStmt((loop, tail))
