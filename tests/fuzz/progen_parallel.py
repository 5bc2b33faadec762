"""Random ``T.parallel`` kernels: per-iteration scratch buffers, blocks, shared rows, races.

:func:`parallel_programs` draws a :class:`ParallelProgram`: one to three stages, each a
``T.parallel`` loop over the rows of the output (sometimes inside a serial repeat loop,
sometimes at an offset start) whose iterations allocate scratch buffers with
``T.alloc_buffer`` at every depth (TVM places them at the lowest common ancestor of their
uses, so each iteration owns a copy), nest a second ``T.parallel`` loop with its own
scratch, write through a block's ``T.match_buffer`` of their row, fill a block's own
``alloc_buffers``, and write a function-level shared buffer at rows indexed by the
parallel variable (read back by a later stage). About one program in six carries a
deliberate race (another iteration's row written or read, a shared accumulator, a
histogram); :attr:`ParallelProgram.racy` says so and the build must refuse it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from progen import FLOAT_DTYPES, INT_DTYPES, _Gen, _Scope, _store, _value_dtype, make_args

from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import Buffer, PrimExpr, PrimFunc, const

__all__ = ["RACE_KINDS", "ParallelProgram", "parallel_programs"]

RACE_KINDS = ("other_row_write", "other_row_read", "shared_accumulator", "histogram")
"""The deliberate races the generator plants (one per racy program)."""

_SCRATCH_DTYPES = (*INT_DTYPES, *FLOAT_DTYPES)


@dataclass
class ParallelProgram:
    """A generated kernel with ``T.parallel`` loops and whether it has a planted race."""

    func: PrimFunc
    arg_seed: int
    racy: bool
    inexact: bool = False
    notes: list[str] = field(default_factory=list)

    def args(self) -> list[Any]:
        """Fresh argument arrays (deterministic in ``arg_seed``)."""
        return make_args(self.func, self.arg_seed)


class _Rows:
    """Builds the parallel stages; every write of a race-free stage lands in row ``i``."""

    def __init__(self, g: _Gen, inputs: list[Buffer], out: Buffer, shared: Buffer | None,
                 race: str | None) -> None:
        self.g = g
        self.draw = g.draw
        self.inputs = inputs
        self.out = out
        self.shared = shared
        self.shared_written = False
        self.race = race
        self.rows = int(out.shape[0].value)  # type: ignore[attr-defined]
        self.cols = int(out.shape[1].value)  # type: ignore[attr-defined]
        self.notes: list[str] = []
        self.pending_shared = False
        self.accumulator: Buffer | None = None
        self.block_count = 0

    # -- helpers -------------------------------------------------------------------------

    def readable(self) -> list[Buffer]:
        """Buffers any iteration may read anywhere: inputs, and the shared rows once a
        previous stage (a previous parallel loop) has written them."""
        bufs = list(self.inputs)
        if self.shared is not None and self.shared_written:
            bufs.append(self.shared)
        return bufs

    def value(self, scope_vars: list[tuple[PrimExpr, int]], bufs: list[Buffer],
              dtype: str) -> PrimExpr:
        return self.g.expr(_Scope(scope_vars, bufs), dtype, self.draw(st.integers(0, 3)))

    def scratch(self, n: int) -> Buffer:
        """A per-iteration scratch buffer, declared where the code needs it."""
        dt = self.draw(st.sampled_from(_SCRATCH_DTYPES))
        return T.alloc_buffer((n,), dt)

    def fill(self, buf: Buffer, scope_vars: list[tuple[PrimExpr, int]], bufs: list[Buffer],
             accumulate: bool) -> None:
        """Every element of ``buf`` written, then maybe ``buf[0]`` accumulated over a loop
        (every element is written first: the data-dependent indices may read any)."""
        d = self.draw
        n = int(buf.shape[0].value)  # type: ignore[attr-defined]
        vt = _value_dtype(buf)
        kind = d(st.sampled_from(["serial", "unroll", "vectorized"]))
        with getattr(T, kind)(n) as j:
            _store(buf, [j], self.value([*scope_vars, (j, n)], bufs, vt))
        if accumulate:
            with T.serial(d(st.sampled_from([1, 2, 5, 24]))) as k:
                acc = self.g.cast(buf[0], vt)
                term = self.value([*scope_vars, (k, 5)], bufs, vt)
                comb = d(st.sampled_from(["add", "max", "min"]))
                new = acc + term if comb == "add" else (
                    T.max(acc, term) if comb == "max" else T.min(acc, term))
                _store(buf, [const(0, "int32")], new)

    # -- one parallel stage --------------------------------------------------------------

    def stage(self) -> None:
        d = self.draw
        offset = d(st.sampled_from([0, 0, 0, 2]))
        repeat = d(st.sampled_from([1, 1, 2]))
        if repeat > 1:
            with T.serial(repeat):
                self._parallel(offset)
        else:
            self._parallel(offset)

    def _parallel(self, offset: int) -> None:
        d = self.draw
        frame = T.parallel(offset, offset + self.rows) if offset else T.parallel(self.rows)
        with frame as iv:
            i = iv - offset if offset else iv
            scope = [(i, self.rows)]
            local: list[Buffer] = []
            if d(st.booleans()):
                t = self.scratch(d(st.integers(1, 6)))
                self.fill(t, scope, self.readable(), accumulate=d(st.booleans()))
                local.append(t)
            if self.shared is not None and not self.shared_written and d(st.booleans()):
                # Written once, by one stage; later stages read any row of it.
                self._write_shared_row(i, scope, local)
            body = d(st.sampled_from(["row", "row", "nested", "match", "block_alloc"]))
            if body == "nested":
                self._nested_parallel(i, scope, local)
            elif body == "match":
                self._match_row(i, scope, local)
            elif body == "block_alloc":
                self._block_alloc_row(i, scope, local)
            else:
                self._row(i, scope, local)
            if self.race is not None and not self.notes:
                self._plant_race(i, scope)

    def _row(self, i: PrimExpr, scope: list[tuple[PrimExpr, int]], local: list[Buffer]) -> None:
        """``OUT[i, j] = f(inputs, scratch, OUT[i, :])`` for every column."""
        d = self.draw
        kind = d(st.sampled_from(["serial", "unroll", "vectorized"]))
        with getattr(T, kind)(self.cols) as j:
            v = self.value([*scope, (j, self.cols)], [*self.readable(), *local],
                           _value_dtype(self.out))
            if kind == "serial" and d(st.integers(0, 3)) == 0:
                # Reading the own row at another column: still private to iteration i.
                jj = T.floormod(j + d(st.integers(1, 3)), self.cols)
                v = v + self.g.cast(self.out[i, jj], _value_dtype(self.out))
            _store(self.out, [i, j], v)

    def _nested_parallel(self, i: PrimExpr, scope: list[tuple[PrimExpr, int]],
                         local: list[Buffer]) -> None:
        """An inner ``T.parallel`` over the columns, each with its own scratch."""
        d = self.draw
        with T.parallel(self.cols) as j:
            inner = [*scope, (j, self.cols)]
            mine: list[Buffer] = []
            if d(st.booleans()):
                u = self.scratch(d(st.integers(1, 4)))
                self.fill(u, inner, [*self.readable(), *local], accumulate=d(st.booleans()))
                mine.append(u)
            v = self.value(inner, [*self.readable(), *local, *mine], _value_dtype(self.out))
            _store(self.out, [i, j], v)

    def _match_row(self, i: PrimExpr, scope: list[tuple[PrimExpr, int]],
                   local: list[Buffer]) -> None:
        """The row written through a block's ``T.match_buffer`` of ``OUT[i, 0:cols]``."""
        self.block_count += 1
        with T.block(f"row{self.block_count}"):
            row = T.match_buffer(self.out[i, 0:self.cols], (self.cols,))
            with T.serial(self.cols) as j:
                v = self.value([*scope, (j, self.cols)], [*self.readable(), *local],
                               _value_dtype(self.out))
                _store(row, [j], v)

    def _block_alloc_row(self, i: PrimExpr, scope: list[tuple[PrimExpr, int]],
                         local: list[Buffer]) -> None:
        """A block owning its scratch (``alloc_buffers``), filled then read into row i."""
        d = self.draw
        self.block_count += 1
        with T.block(f"scratch{self.block_count}"):
            s = self.scratch(d(st.integers(1, 6)))
            self.fill(s, scope, [*self.readable(), *local], accumulate=False)
            with T.serial(self.cols) as j:
                v = self.value([*scope, (j, self.cols)], [*self.readable(), *local, s],
                               _value_dtype(self.out))
                _store(self.out, [i, j], v)

    def _write_shared_row(self, i: PrimExpr, scope: list[tuple[PrimExpr, int]],
                          local: list[Buffer]) -> None:
        """The function-level shared buffer written at row ``i`` only (no race)."""
        assert self.shared is not None
        width = int(self.shared.shape[1].value)  # type: ignore[attr-defined]
        with T.serial(width) as k:
            v = self.value([*scope, (k, width)], [*self.readable(), *local],
                           _value_dtype(self.shared))
            _store(self.shared, [i, k], v)
        self.pending_shared = True

    def _plant_race(self, i: PrimExpr, scope: list[tuple[PrimExpr, int]]) -> None:
        d = self.draw
        race = self.race
        assert race is not None
        self.notes.append(race)
        vt = _value_dtype(self.out)
        if race == "other_row_write":
            other = T.floormod(i + 1, self.rows)  # rows > 1: never the own row
            _store(self.out, [other, const(0, "int32")], self.value(scope, self.inputs, vt))
        elif race == "other_row_read":
            other = T.floormod(i + 1, self.rows)
            _store(self.out, [i, const(0, "int32")],
                   self.g.cast(self.out[other, 0], vt) + self.value(scope, self.inputs, vt))
        elif race == "shared_accumulator":
            acc = T.alloc_buffer((1,), "int32")
            _store(acc, [const(0, "int32")],
                   acc[0] + self.g.cast(self.value(scope, self.inputs, "int32"), "int32"))
            self.accumulator = acc
        else:  # histogram: the bin depends on the data, not on the iteration
            src = self.inputs[0]
            bins = T.floormod(self.g.cast(src[tuple(const(0, "int32")
                                                  for _ in src.shape)], "int32")
                              + i, self.cols)
            _store(self.out, [const(0, "int32"), bins],
                   self.g.cast(self.out[0, bins], vt) + self.g.cast(const(1, "int32"), vt))


@st.composite
def parallel_programs(draw: Any, max_stages: int = 3) -> ParallelProgram:
    """A random :class:`ParallelProgram`."""
    g = _Gen(draw)
    rows = draw(st.sampled_from([1, 2, 3, 5, 8, 9, 32, 48]))
    cols = draw(st.integers(1, 6))
    n_inputs = draw(st.integers(1, 2))
    in_specs = [(draw(st.sampled_from(_SCRATCH_DTYPES)),
                 draw(st.sampled_from([(rows, cols), (draw(st.integers(1, 9)),)])))
                for _ in range(n_inputs)]
    out_dtype = draw(st.sampled_from((*_SCRATCH_DTYPES, "float16")))
    race = draw(st.sampled_from(RACE_KINDS)) if rows > 1 and draw(
        st.integers(0, 5)) == 0 else None
    n_stages = draw(st.integers(1, max_stages))
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("fuzz_parallel")
            inputs = [T.arg(f"A{k}", T.Buffer(shape, dt)) for k, (dt, shape) in
                      enumerate(in_specs)]
            out = T.arg("OUT", T.Buffer((rows, cols), out_dtype))
            shared = None
            if draw(st.booleans()):
                shared = T.alloc_buffer((rows, draw(st.integers(1, 4))),
                                        draw(st.sampled_from(_SCRATCH_DTYPES)))
            gen = _Rows(g, inputs, out, shared, race)
            for _ in range(n_stages):
                gen.pending_shared = False
                gen.stage()
                gen.shared_written = gen.shared_written or gen.pending_shared
            if shared is not None and gen.shared_written:
                # Read the shared rows back (any row: the loop that wrote them has ended).
                with T.serial(rows) as r:
                    with T.serial(cols) as c:
                        v = g.cast(shared[T.floormod(r + c, rows),
                                          T.floormod(c, int(shared.shape[1].value))],
                                   _value_dtype(out))
                        _store(out, [r, c], g.cast(out[r, c], _value_dtype(out)) + v)
            acc = gen.accumulator
            if acc is not None:  # the shared accumulator is observed after the loop
                _store(out, [const(0, "int32"), const(0, "int32")],
                       g.cast(acc[0], _value_dtype(out)))
    func = b.get()
    assert isinstance(func, PrimFunc)
    return ParallelProgram(func, draw(st.integers(0, 2**31 - 1)), racy=bool(gen.notes),
                           inexact=g.inexact, notes=gen.notes)
