"""The vector form of one reduction chain of a row group (``row_vectorize.py``): each tile
of ``L`` columns is ``L`` contiguous row loads transposed in registers (two-vector shuffles,
``register_transpose.transpose_bindings``), the chain's update once per column in the lanes,
the leftover columns from strided loads, and prefetches of the next group's rows."""

from __future__ import annotations

from irbuilder.ir import (
    Add,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IntImm,
    LetStmt,
    Max,
    Min,
    Mul,
    PrimExpr,
    Ramp,
    SeqStmt,
    Shuffle,
    Stmt,
    Sub,
    Var,
    as_dtype,
    seq,
    structural_equal,
)

from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on
from ..arith import simplify_expr, to_linear
from ..arith.canonical import linear_coefficient
from .register_transpose import HALF_LOADS_MIN_BITS, transpose_bindings, transpose_from_halves
from .row_chains import Chain, Update, loads

__all__ = ["ChainVectorizer", "tiled_loads"]

_CACHE_LINE = 64
_I32 = as_dtype("int32")


def tiled_loads(chain: Chain, row: Var) -> list[BufferLoad]:
    """The chain's loads stepping with the column and the row (read as row tiles and
    transposed), each once."""
    out: list[BufferLoad] = []
    for load in [ld for x in chain.operands() for ld in loads(x)]:
        (index,) = load.indices
        if linear_coefficient(index, chain.loop.loop_var) != 1:
            continue
        if not depends_on(index, row):
            continue
        if not any(structural_equal(load, seen) for seen in out):
            out.append(load)
    return out


def _transpose(rows: list[Var], name: str) -> tuple[list[LetStmt], list[PrimExpr]]:
    """Bindings transposing ``rows`` (vectors of as many lanes as there are rows) by
    two-vector shuffles (:func:`.register_transpose.transpose_bindings`), and the columns: lane
    ``u`` of column ``k`` is lane ``k`` of row ``u``."""
    bindings, columns = transpose_bindings(list(rows), name)
    return [LetStmt(var, value, _NOP) for var, value in bindings], columns


_NOP = SeqStmt(())


def _nest(lets: list[LetStmt], body: Stmt) -> Stmt:
    for let in reversed(lets):
        body = LetStmt(let.var, let.value, body, span=let.span)
    return body


def _row_stride(index: PrimExpr, row: Var) -> PrimExpr | None:
    """The symbolic factor ``s`` of the one term ``row * s`` of ``index`` (``s`` free of
    ``row``), or None."""
    terms = [(atom, coef) for atom, coef in to_linear(index).live_terms()
             if depends_on(atom, row)]
    if len(terms) != 1 or terms[0][1] != 1 or not isinstance(terms[0][0], Mul):
        return None
    atom = terms[0][0]
    if (atom.a is row) == (atom.b is row):
        return None
    other = atom.b if atom.a is row else atom.a
    return None if depends_on(other, row) else other


class ChainVectorizer:
    """Builds the vector form of one chain for the rows ``first + u``, ``u < lanes *
    blocks``: ``blocks`` independent vectors of ``lanes`` rows each, interleaved."""

    def __init__(self, chain: Chain, rows: dict[int, Buffer], lanes: int, first: PrimExpr,
                 row: Var, last_row: PrimExpr | None = None, blocks: int = 1,
                 halves: bool = False) -> None:
        self.chain, self.rows, self.lanes, self.first, self.row = chain, rows, lanes, first, row
        self.blocks = blocks
        self.halves = halves
        """Whether tiles of at least ``HALF_LOADS_MIN_BITS`` are read as half rows
        (:func:`.register_transpose.transpose_from_halves`)."""
        self.dtype = chain.dtype.with_lanes(lanes)
        self.last_row = last_row
        """The loop's last row, when the next group's rows are to be prefetched."""

    def index_at(self, load: BufferLoad, col: PrimExpr, u: int = 0) -> PrimExpr:
        (index,) = load.indices
        row_at: PrimExpr = self.first if u == 0 else self.first + IntImm(self.first.dtype, u)
        return substitute_expr(index, {self.row: row_at, self.chain.loop.loop_var: col})

    def lanes_of(self, load: BufferLoad, col: PrimExpr, block: int) -> PrimExpr:
        """The load for every row of vector ``block`` at column ``col``: broadcast, strided,
        or one load per row (a row stride that is not a constant)."""
        (index,) = load.indices
        base = block * self.lanes
        if not depends_on(index, self.row):
            return Broadcast(BufferLoad(load.buffer, (self.index_at(load, col),)), self.lanes)
        stride = linear_coefficient(index, self.row)
        at = self.index_at(load, col, base)
        if stride is not None:
            return BufferLoad(load.buffer, (Ramp(at, IntImm(at.dtype, stride), self.lanes),))
        per_row = tuple(BufferLoad(load.buffer, (self.index_at(load, col, base + u),))
                        for u in range(self.lanes))
        return Shuffle(per_row, tuple(range(self.lanes)))

    def vector(self, expr: PrimExpr, col: PrimExpr, columns: dict[int, PrimExpr],
               block: int) -> PrimExpr:
        """``expr`` for every row of vector ``block`` at column ``col`` (``columns``: loads
        already transposed)."""
        if isinstance(expr, (FloatImm, IntImm, Var)):
            return Broadcast(expr, self.lanes)
        if isinstance(expr, Cast):
            return Cast(expr.dtype.with_lanes(self.lanes),
                        self.vector(expr.value, col, columns, block))
        if isinstance(expr, BufferLoad):
            if id(expr) in columns:
                return columns[id(expr)]
            rows = self.rows.get(id(expr.buffer.data))
            if rows is not None:  # an earlier chain's result: its lanes, one vector
                (k,) = expr.indices
                assert isinstance(k, IntImm)
                at = (k.value * self.blocks + block) * self.lanes
                return BufferLoad(rows, (Ramp(IntImm(_I32, at), IntImm(_I32, 1), self.lanes),))
            return self.lanes_of(expr, col, block)
        assert isinstance(expr, (Add, Sub, Mul, Div, Max, Min))
        return type(expr)(self.vector(expr.a, col, columns, block),
                          self.vector(expr.b, col, columns, block))

    def update(self, update: Update, value: PrimExpr, block: int) -> Stmt:
        """``rows[v*L : v*L + L] = rows[...] <op> value`` with ``v = at * blocks + block``
        (operands in the source's order)."""
        rows = self.rows[id(update.acc.data)]
        at = (update.at * self.blocks + block) * self.lanes
        ramp = Ramp(IntImm(_I32, at), IntImm(_I32, 1), self.lanes)
        acc = BufferLoad(rows, (ramp,))
        a, b = (acc, value) if update.acc_first else (value, acc)
        return BufferStore(rows, update.op(a, b), (ramp,))

    def prefetches(self, jo: Var, tiles: PrimExpr) -> list[Stmt]:
        """Hints fetching the next group's rows of each tiled load, in address order, spread
        evenly over the ``tiles`` iterations of the tile loop (see ``PREFETCH_NEXT_ROWS``).

        For a constant column count the line's row and column are divisions by constants;
        the row is clamped to the loop's last row, so the hint never names an address
        outside the buffer. A symbolic count is served where a row's elements follow the
        previous row's (row stride = column count): the next group is then one contiguous
        run, walked at the pace of a constant count's (its lines spread over the tiles,
        clamped to the last row's last element)."""
        red = self.chain.loop
        if self.last_row is None:
            return []
        if not isinstance(red.extent, IntImm) or not isinstance(tiles, IntImm):
            return self._contiguous_prefetches(jo)
        if tiles.value <= 0:
            return []
        m = red.extent.value
        out: list[Stmt] = []
        for load in self.tiled_loads():
            per_line = max(1, _CACHE_LINE // load.buffer.dtype.itemsize)
            lines = -(-self.lanes * self.blocks * m // per_line)
            per_tile = -(-lines // tiles.value)
            idt = jo.dtype
            for q in range(per_tile):
                element: PrimExpr = jo * IntImm(idt, per_tile * per_line)
                if q:
                    element = element + IntImm(idt, q * per_line)
                row_at = Min(self.first + IntImm(self.first.dtype, self.lanes * self.blocks)
                             + FloorDiv(element, IntImm(idt, m)), self.last_row)
                col: PrimExpr = FloorMod(element, IntImm(idt, m))
                if not (isinstance(red.min, IntImm) and red.min.value == 0):
                    col = red.min + col
                (index,) = load.indices
                at = substitute_expr(index, {self.row: row_at, red.loop_var: col})
                hint = Call(_I32, "prefetch", (BufferLoad(load.buffer, (at,)), IntImm(_I32, 1)),
                            CallKind.BUILTIN)
                out.append(Evaluate(hint))
        return out

    def _contiguous_prefetches(self, jo: Var) -> list[Stmt]:
        """:meth:`prefetches` for a symbolic column count, loads whose rows are contiguous
        (index ``row * m + col + c``, ``m`` the column count); none for other loads."""
        red = self.chain.loop
        assert self.last_row is not None
        if not (isinstance(red.min, IntImm) and red.min.value == 0):
            return []
        out: list[Stmt] = []
        for load in self.tiled_loads():
            (index,) = load.indices
            stride = _row_stride(index, self.row)
            if (stride is None or linear_coefficient(index, red.loop_var) != 1
                    or not structural_equal(stride, red.extent)):
                continue
            per_line = max(1, _CACHE_LINE // load.buffer.dtype.itemsize)
            per_tile = -(-self.lanes * self.lanes * self.blocks // per_line)
            idt = index.dtype
            start = simplify_expr(substitute_expr(index, {
                self.row: self.first + IntImm(self.first.dtype, self.lanes * self.blocks),
                red.loop_var: IntImm(red.loop_var.dtype, 0)}))
            end = substitute_expr(index, {
                self.row: self.last_row, red.loop_var: red.extent - IntImm(red.extent.dtype, 1)})
            step = jo if jo.dtype == idt else Cast(idt, jo)
            for q in range(per_tile):
                element: PrimExpr = step * IntImm(idt, per_tile * per_line)
                if q:
                    element = element + IntImm(idt, q * per_line)
                at = Min(start + element, end)
                hint = Call(_I32, "prefetch", (BufferLoad(load.buffer, (at,)), IntImm(_I32, 1)),
                            CallKind.BUILTIN)
                out.append(Evaluate(hint))
        return out

    def tiled_loads(self) -> list[BufferLoad]:
        """The loads transposed from row tiles (:func:`_tiled_loads`)."""
        return tiled_loads(self.chain, self.row)

    def _transpose_halves(self, load: BufferLoad, start: PrimExpr, block: int,
                          name: str) -> tuple[list[LetStmt], list[PrimExpr]]:
        """The tile of ``load`` for vector ``block`` from half-row loads
        (:func:`.register_transpose.transpose_from_halves`): bindings and columns."""
        h = self.lanes // 2

        def half_row(u: int, p: int) -> PrimExpr:
            col = start if p == 0 else start + IntImm(start.dtype, p * h)
            at = self.index_at(load, col, block * self.lanes + u)
            return BufferLoad(load.buffer, (Ramp(at, IntImm(at.dtype, 1), h),))

        bindings, columns = transpose_from_halves(half_row, self.lanes, name)
        return [LetStmt(var, value, _NOP) for var, value in bindings], columns

    def loops(self) -> Stmt:
        """The tile loop and the remainder loop replacing the chain's loop."""
        red = self.chain.loop
        j = red.loop_var
        jdt = j.dtype
        width = IntImm(jdt, self.lanes)
        tiles = FloorDiv(red.extent, width) if not isinstance(red.extent, IntImm) \
            else IntImm(jdt, red.extent.value // self.lanes)
        rest = FloorMod(red.extent, width) if not isinstance(red.extent, IntImm) \
            else IntImm(jdt, red.extent.value % self.lanes)
        jo = Var(f"{j.name}_tile", jdt)
        start = red.min + jo * width
        lets: list[LetStmt] = []
        by_load: dict[tuple[int, int], list[PrimExpr]] = {}
        for block in range(self.blocks):
            for n, load in enumerate(self.tiled_loads()):
                name = f"{load.buffer.name}_{n}" if n else load.buffer.name
                if self.blocks > 1:
                    name = f"{name}_b{block}"
                if self.halves and self.lanes >= 4 \
                        and load.dtype.bits * self.lanes >= HALF_LOADS_MIN_BITS:
                    lets_, transposed = self._transpose_halves(load, start, block, name)
                    lets.extend(lets_)
                    by_load[(id(load), block)] = transposed
                    continue
                row_vars: list[Var] = []
                for u in range(self.lanes):
                    at = self.index_at(load, start, block * self.lanes + u)
                    var = Var(f"{name}_row{u}", load.dtype.with_lanes(self.lanes))
                    ramp = Ramp(at, IntImm(at.dtype, 1), self.lanes)
                    lets.append(LetStmt(var, BufferLoad(load.buffer, (ramp,)), _NOP))
                    row_vars.append(var)
                stage_lets, transposed = _transpose(row_vars, name)
                lets.extend(stage_lets)
                by_load[(id(load), block)] = transposed
        updates: list[Stmt] = []
        for k in range(self.lanes):
            col = start + IntImm(jdt, k)
            for update in self.chain.updates:
                for block in range(self.blocks):  # independent chains side by side
                    columns: dict[int, PrimExpr] = {}
                    for load in loads(update.x):
                        for tiled in self.tiled_loads():
                            if structural_equal(load, tiled):
                                columns[id(load)] = by_load[(id(tiled), block)][k]
                    value = self.vector(update.x, col, columns, block)
                    updates.append(self.update(update, value, block))
        tile_loop = For(jo, IntImm(jdt, 0), tiles, ForKind.SERIAL,
                        _nest(lets, SeqStmt((*self.prefetches(jo, tiles), *updates))),
                        span=red.span)
        jr = Var(f"{j.name}_rest", jdt)
        col = red.min + tiles * width + jr
        rest_updates = [self.update(u, self.vector(u.x, col, {}, b), b)
                        for u in self.chain.updates for b in range(self.blocks)]
        rest_loop = For(jr, IntImm(jdt, 0), rest, ForKind.SERIAL, seq(rest_updates),
                        span=red.span)
        parts: list[Stmt] = []
        if not (isinstance(tiles, IntImm) and tiles.value == 0):
            parts.append(tile_loop)
        if not (isinstance(rest, IntImm) and rest.value == 0):
            parts.append(rest_loop)
        return seq(parts)


