"""Hypothesis strategies producing random, well-typed TIR kernels for differential fuzzing.

:func:`programs` draws a :class:`Program`: a PrimFunc built with the IRBuilder (nested
serial/parallel/vectorized/unrolled loops, blocks with init and ``T.where``, ``T.compute``
with ``T.sum``, allocations and ``decl_buffer`` aliases, casts, selects, ``if_then_else``,
floordiv/floormod of negative values, guarded and unguarded data division, math
intrinsics) together with its argument arrays. Every buffer index is kept in bounds by
``floormod(expr, extent)``; every parallel or vectorized loop writes distinct locations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import And, Buffer, DataType, Not, PrimExpr, PrimFunc, Var, as_dtype, const

__all__ = ["FLOAT_DTYPES", "INT_DTYPES", "Program", "make_args", "programs"]

INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
"""Integer element types the generator uses."""
FLOAT_DTYPES = ("float32", "float64")
"""Float types used in arithmetic; ``float16`` appears only as buffer storage."""
_STORAGE = (*INT_DTYPES, *FLOAT_DTYPES, "float16")
_EXACT_MATH = ("floor", "ceil", "trunc", "round", "fabs")
_INEXACT_MATH = ("exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "erf", "rsqrt")


@dataclass
class Program:
    """A generated kernel, its argument arrays' recipe and whether floats need tolerance."""

    func: PrimFunc
    arg_seed: int
    inexact: bool = False
    notes: list[str] = field(default_factory=list)

    def args(self) -> list[Any]:
        """Fresh argument arrays (deterministic in ``arg_seed``)."""
        return make_args(self.func, self.arg_seed)


def make_args(func: PrimFunc, seed: int) -> list[Any]:
    """Random arrays for the buffer params and ints for scalar params of ``func``."""
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    for param in func.params:
        buf = func.buffer_map.get(param)
        if buf is None:
            out.append(int(rng.integers(-20, 20)))
            continue
        shape = tuple(int(d.value) for d in buf.shape)  # type: ignore[attr-defined]
        dt = np.dtype(str(buf.dtype))
        if dt.kind == "f":
            vals = rng.integers(-8, 9, shape).astype(dt)
            frac = rng.standard_normal(shape).astype(dt)
            use = rng.random(shape) < 0.5
            out.append(np.where(use, vals, frac * 4).astype(dt))
        else:
            info = np.iinfo(dt)
            small = rng.integers(max(info.min, -9), min(info.max, 9) + 1, shape)
            wide = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
            use = rng.random(shape) < 0.6
            out.append(np.where(use, small.astype(dt), wide).astype(dt))
    return out


@dataclass
class _Scope:
    """What an expression may read: loop vars (with extents) and buffers."""

    vars: list[tuple[PrimExpr, int]]
    bufs: list[Buffer]


class _Gen:
    """Draws expressions and statements, building IR through the active IRBuilder."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.inexact = False
        self.exact_only = 0  # > 0 while generating a value a float->int cast will see

    # -- expressions -----------------------------------------------------------------------

    def index(self, scope: _Scope, extent: int) -> PrimExpr:
        """An int32 index in ``[0, extent)``, possibly via negative floordiv/floormod."""
        d = self.draw
        terms: list[PrimExpr] = [const(d(st.integers(-7, 7)), "int32")]
        for var, _ in scope.vars:
            if d(st.booleans()):
                v = var if var.dtype == as_dtype("int32") else T.cast(var, "int32")
                terms.append(v * d(st.integers(-3, 3)))
        expr = terms[0]
        for t in terms[1:]:
            expr = expr + t
        if d(st.integers(0, 3)) == 0:
            expr = T.floordiv(expr, d(st.sampled_from([-3, -2, 2, 3])))
        if d(st.integers(0, 4)) == 0 and scope.bufs:
            # Data-dependent index (still in bounds through floormod below).
            expr = expr + self.load(scope, "int32", depth=0)
        return T.floormod(expr, extent) if extent > 1 else const(0, "int32")

    def load(self, scope: _Scope, dtype: str, depth: int) -> PrimExpr:
        """A load from a random readable buffer, cast to ``dtype``."""
        buf = self.draw(st.sampled_from(scope.bufs))
        idx = [self.index(scope, int(e.value)) for e in buf.shape]
        value: PrimExpr = buf[tuple(idx)] if len(idx) > 1 else buf[idx[0]]
        return self.cast(value, dtype)

    def cast(self, value: PrimExpr, dtype: str) -> PrimExpr:
        """``value`` as ``dtype`` (float16 is widened to float32 first)."""
        if str(value.dtype) == "float16":
            value = T.cast(value, "float32")
        if str(value.dtype) == dtype:
            return value
        return T.cast(value, dtype)

    def leaf(self, scope: _Scope, dtype: str) -> PrimExpr:
        d = self.draw
        dt = as_dtype(dtype)
        choice = d(st.integers(0, 3))
        if choice == 0 or (choice == 1 and not scope.vars):
            if dt.is_float:
                return const(float(d(st.sampled_from([0.0, 1.0, -2.5, 0.5, 3.0, -7.0]))), dtype)
            lo, hi = _range(dt)
            return const(d(st.one_of(st.integers(-5, 5), st.integers(lo, hi))) if dt.is_int
                         else d(st.one_of(st.integers(0, 5), st.integers(lo, hi))), dtype)
        if choice == 1:
            var, _ = d(st.sampled_from(scope.vars))
            return self.cast(var, dtype)
        return self.load(scope, dtype, 0)

    def expr(self, scope: _Scope, dtype: str, depth: int) -> PrimExpr:
        """A random expression of ``dtype`` (scalar) at most ``depth`` deep."""
        d = self.draw
        if depth <= 0 or d(st.integers(0, 4)) == 0:
            return self.leaf(scope, dtype)
        dt = as_dtype(dtype)
        ops = ["add", "sub", "mul", "min", "max", "select", "ite", "cast", "cdiv", "ddiv"]
        ops += ["fmath"] if dt.is_float else ["bits", "shift", "tdiv"]
        op = d(st.sampled_from(ops))
        sub = depth - 1
        if op in ("add", "sub", "mul", "min", "max"):
            a, b = self.expr(scope, dtype, sub), self.expr(scope, dtype, sub)
            if op == "min":
                return T.min(a, b)
            if op == "max":
                return T.max(a, b)
            return a + b if op == "add" else (a - b if op == "sub" else a * b)
        if op in ("select", "ite"):
            cond = self.cond(scope, sub)
            a, b = self.expr(scope, dtype, sub), self.expr(scope, dtype, sub)
            return T.Select(cond, a, b) if op == "select" else T.if_then_else(cond, a, b)
        if op == "cast":
            src = d(st.sampled_from([*INT_DTYPES, *FLOAT_DTYPES]))
            if as_dtype(src).is_float and not dt.is_float:
                # float -> int amplifies rounding: only cast exactly reproducible values.
                self.exact_only += 1
                inner = self.expr(scope, src, sub)
                self.exact_only -= 1
                return T.cast(inner, dtype)
            return T.cast(self.expr(scope, src, sub), dtype)
        if op == "cdiv":
            a = self.expr(scope, dtype, sub)
            c = d(st.sampled_from([-7, -3, -2, -1, 2, 3, 5] if dt.is_int else [2, 3, 5, 7]))
            fn = d(st.sampled_from(["floordiv", "floormod"]))
            if dt.is_float:
                return a / const(float(c), dtype) if fn == "floordiv" else a * const(0.5, dtype)
            return _call(getattr(T, fn), a, const(c, dtype))
        if op == "ddiv":
            a, b = self.expr(scope, dtype, sub), self.expr(scope, dtype, sub)
            if dt.is_float:
                return a / T.max(T.abs(b), const(1.0, dtype))
            fn = getattr(T, d(st.sampled_from(["floordiv", "floormod", "truncdiv", "truncmod"])))
            if d(st.booleans()):  # guarded: if_then_else evaluates one branch
                return T.if_then_else(b != const(0, dtype), fn(a, b), a)
            return _call(fn, a, b)  # may divide by zero: both backends must raise
        if op == "tdiv":
            a = self.expr(scope, dtype, sub)
            c = d(st.sampled_from([-5, -2, 3, 4] if dt.is_int else [3, 4]))
            fn = getattr(T, d(st.sampled_from(["truncdiv", "truncmod"])))
            return _call(fn, a, const(c, dtype))
        if op == "bits":
            a, b = self.expr(scope, dtype, sub), self.expr(scope, dtype, sub)
            fn = d(st.sampled_from(["bitwise_and", "bitwise_or", "bitwise_xor"]))
            return _call(getattr(T, fn), a, b)
        if op == "shift":
            a = self.expr(scope, dtype, sub)
            amount = const(d(st.integers(0, dt.bits - 1)), dtype)
            return (T.shift_left if d(st.booleans()) else T.shift_right)(a, amount)
        # fmath
        names = _EXACT_MATH if self.exact_only else (*_EXACT_MATH, *_INEXACT_MATH)
        name = d(st.sampled_from(names))
        a = self.expr(scope, dtype, sub)
        if name in _INEXACT_MATH:
            self.inexact = True
            if name in ("log", "sqrt", "rsqrt"):
                a = T.abs(a) + const(1.0, dtype)
            if name == "exp":
                a = T.min(T.max(a, const(-20.0, dtype)), const(20.0, dtype))
        return _call(getattr(T, name), a)

    def cond(self, scope: _Scope, depth: int) -> PrimExpr:
        """A boolean condition from integer comparisons (exactly reproducible)."""
        d = self.draw
        dtype = d(st.sampled_from(INT_DTYPES))
        self.exact_only += 1
        a, b = self.expr(scope, dtype, min(depth, 1)), self.expr(scope, dtype, min(depth, 1))
        op = d(st.sampled_from(["lt", "le", "eq", "ne", "gt", "ge"]))
        self.exact_only -= 1
        c = {"lt": a < b, "le": a <= b, "eq": a == b, "ne": a != b, "gt": a > b, "ge": a >= b}[op]
        if d(st.integers(0, 3)) == 0:
            c = Not(c)
        return c


def _call(fn: Any, *args: PrimExpr) -> PrimExpr:
    out = fn(*args)
    assert isinstance(out, PrimExpr)
    return out


def _range(dt: DataType) -> tuple[int, int]:
    info = np.iinfo(str(dt))
    return int(info.min), int(info.max)


def _shape(draw: Any) -> tuple[int, ...]:
    if draw(st.booleans()):
        return (draw(st.integers(1, 9)),)
    return (draw(st.integers(1, 4)), draw(st.integers(1, 6)))


def _store(buf: Buffer, idx: list[PrimExpr], value: PrimExpr) -> None:
    dt = str(buf.dtype)
    if dt == "float16":
        value = T.cast(value, "float16")
    elif str(value.dtype) != dt:
        value = T.cast(value, dt)
    T.buffer_store(buf, value, idx)


def _value_dtype(buf: Buffer) -> str:
    return "float32" if str(buf.dtype) == "float16" else str(buf.dtype)


class _Stages:
    """The statement-level generator: each stage writes (part of) the output."""

    def __init__(self, g: _Gen, inputs: list[Buffer], out: Buffer) -> None:
        self.g = g
        self.draw = g.draw
        self.inputs = inputs
        self.out = out

    def loop_nest(self, target: Buffer, reads: list[Buffer], value_fn: Any = None,
                  guard: bool = True) -> None:
        """A loop per dim of ``target`` (random kinds) storing a random value per element."""
        d = self.draw
        dims = [int(e.value) for e in target.shape]  # type: ignore[attr-defined]
        kinds = []
        # Reading the target at other indices makes iterations dependent: serial only.
        independent = not any(r is target for r in reads)
        for pos, _ in enumerate(dims):
            options = ["serial", "unroll"]
            if pos == 0 and independent:
                options.append("parallel")
            if pos == len(dims) - 1 and independent:
                options.append("vectorized")
            kinds.append(d(st.sampled_from(options)))
        offsets = [d(st.sampled_from([0, 0, 3, -2])) for _ in dims]
        self._nest(target, reads, dims, kinds, offsets, [], value_fn, guard)

    def _nest(self, target: Buffer, reads: list[Buffer], dims: list[int], kinds: list[str],
              offsets: list[int], vars_: list[PrimExpr], value_fn: Any, guard: bool) -> None:
        d = self.draw
        if len(vars_) == len(dims):
            idx = list(vars_)
            scope = _Scope([(v, e) for v, e in zip(vars_, dims)], reads)
            vt = _value_dtype(target)
            value = value_fn(idx) if value_fn else self.g.expr(scope, vt, d(st.integers(0, 4)))
            if guard and d(st.integers(0, 5)) == 0:
                with T.If(self.g.cond(scope, 1)):
                    with T.Then():
                        _store(target, idx, value)
            else:
                _store(target, idx, value)
            return
        pos = len(vars_)
        off = offsets[pos]
        frame = getattr(T, kinds[pos])(off, off + dims[pos]) if off else \
            getattr(T, kinds[pos])(dims[pos])
        with frame as v:
            self._nest(target, reads, dims, kinds, offsets,
                       [*vars_, v - off if off else v], value_fn, guard)

    def block_reduce(self) -> None:
        """``out[i...] = init; out[i...] += expr(k)`` through a block with init and where."""
        d = self.draw
        out = self.out
        dims = [int(e.value) for e in out.shape]  # type: ignore[attr-defined]
        vt = _value_dtype(out)
        # Long reductions reach the lane split (and, on AVX-512 hosts, its jam of four
        # outputs); their float sums would differ from the interpreter's order in
        # rounding, so long float reductions take max/min (exact in any order).
        kext = d(st.sampled_from([1, 2, 3, 4, 5, 130]))
        long_float = kext > 5 and as_dtype(vt).is_float
        with T.grid(*dims, kext) as loops:
            loops = list(loops) if isinstance(loops, (list, tuple)) else [loops]
            with T.block("red"):
                axes = T.axis.remap("S" * len(dims) + "R", loops)
                vs, vk = list(axes[:-1]), axes[-1]
                if d(st.booleans()):
                    T.where(loops[0] < d(st.integers(1, dims[0])))
                with T.init():
                    _store(out, vs, self.g.leaf(_Scope([], self.inputs), vt))
                scope = _Scope([(v, e) for v, e in zip([*vs, vk], [*dims, kext])], self.inputs)
                term = self.g.expr(scope, vt, d(st.integers(0, 2)))
                acc = out[tuple(vs)] if len(vs) > 1 else out[vs[0]]
                acc = self.g.cast(acc, vt)
                comb = d(st.sampled_from(["max", "min"] if long_float else ["add", "max", "min"]))
                new = acc + term if comb == "add" else (T.max(acc, term) if comb == "max"
                                                         else T.min(acc, term))
                _store(out, vs, new)

    def two_output_reduce(self) -> None:
        """A block with two accumulators (``out`` and a scratch buffer), each with its own
        combiner, then ``out += scratch``: the multi-output lane split of
        ``vectorize_reductions``. Long float reductions combine by max/min only (exact in
        any order, the guard included); float sums stay short (no lanes)."""
        d = self.draw
        out = self.out
        dims = [int(e.value) for e in out.shape]  # type: ignore[attr-defined]
        kext = d(st.sampled_from([1, 3, 5, 130, 200]))
        tmp = T.alloc_buffer(tuple(dims), d(st.sampled_from(_STORAGE)))
        with T.grid(*dims, kext) as loops:
            loops = list(loops) if isinstance(loops, (list, tuple)) else [loops]
            with T.block("red2"):
                axes = T.axis.remap("S" * len(dims) + "R", loops)
                vs, vk = list(axes[:-1]), axes[-1]
                with T.init():
                    for buf in (out, tmp):
                        _store(buf, vs, self.g.leaf(_Scope([], self.inputs), _value_dtype(buf)))
                scope = _Scope([(v, e) for v, e in zip([*vs, vk], [*dims, kext])], self.inputs)
                for buf in (out, tmp):
                    vt = _value_dtype(buf)
                    exact = as_dtype(vt).is_float and kext > 5
                    comb = d(st.sampled_from(["max", "min"] if exact else ["add", "max", "min"]))
                    term = self.g.expr(scope, vt, d(st.integers(0, 2)))
                    acc = self.g.cast(buf[tuple(vs)] if len(vs) > 1 else buf[vs[0]], vt)
                    new = acc + term if comb == "add" else (
                        T.max(acc, term) if comb == "max" else T.min(acc, term))
                    _store(buf, vs, new)
        vt = _value_dtype(out)
        self.loop_nest(out, [tmp, out], value_fn=lambda idx: self.g.cast(
            out[tuple(idx)] if len(idx) > 1 else out[idx[0]], vt) + self.g.cast(
            tmp[tuple(idx)] if len(idx) > 1 else tmp[idx[0]], vt))

    def compute(self) -> None:
        """A ``T.compute`` tensor (maybe a ``T.sum`` reduction) copied into the output."""
        d = self.draw
        out = self.out
        dims = [int(e.value) for e in out.shape]  # type: ignore[attr-defined]
        vt = d(st.sampled_from([*INT_DTYPES, *FLOAT_DTYPES]))
        reduce = d(st.booleans())
        kext = d(st.integers(1, 4))
        g = self.g

        def body(*ix: Var) -> PrimExpr:
            if reduce:
                k = T.reduce_axis(0, kext)
                scope = _Scope([*[(v, e) for v, e in zip(ix, dims)], (k, kext)],
                               self.inputs)
                return T.sum(g.expr(scope, vt, 2), axis=k)
            return g.expr(_Scope([(v, e) for v, e in zip(ix, dims)], self.inputs), vt, 3)

        tensor = T.compute(tuple(dims), body, name="t", dtype=vt)
        self.loop_nest(out, [tensor], value_fn=lambda idx: g.cast(
            tensor[tuple(idx)] if len(idx) > 1 else tensor[idx[0]], _value_dtype(out)))

    def alloc(self) -> None:
        """A scratch allocation (``alloc_buffer`` or ``allocate`` + ``decl_buffer`` alias)."""
        d = self.draw
        dt = d(st.sampled_from(_STORAGE))
        n = d(st.integers(1, 12))
        if d(st.booleans()):
            tmp = T.alloc_buffer((n,), dt)
            self._fill_and_use(tmp, tmp)
            return
        rows = d(st.sampled_from([r for r in (1, 2, 3, 4) if n % r == 0]))
        data = T.allocate([n], dt)
        with data as ptr:
            with T.decl_buffer((n,), dt, data=ptr) as flat:
                with T.decl_buffer((rows, n // rows), dt, data=ptr) as view:
                    self._fill_and_use(flat, view)

    def facts(self) -> None:
        """A condition (or assume/assert) on a scratch element that the program then
        overwrites, re-tested after the store: a fact about memory must die at the store."""
        d = self.draw
        n = d(st.integers(2, 6)) * 2
        shape = d(st.sampled_from(["if", "nested_if", "loop", "assume", "assert", "alias"]))
        if shape == "alias":
            data = T.allocate([n], "int32")
            with data as ptr:
                with T.decl_buffer((n,), "int32", data=ptr) as flat:
                    with T.decl_buffer((2, n // 2), "int32", data=ptr) as view:
                        self.loop_nest(flat, self.inputs, guard=False)
                        k = d(st.integers(0, n - 1))
                        seen = view[k // (n // 2), k % (n // 2)]
                        cond = self._fact_cond(seen)
                        with T.If(cond):
                            with T.Then():
                                _store(flat, [const(k, "int32")], self._fact_value())
                                _store(flat, [const((k + 1) % n, "int32")],
                                       T.if_then_else(self._fact_cond(seen, cond), 1, -1))
                        self.loop_nest(self.out, [*self.inputs, view])
            return
        buf = T.alloc_buffer((n,), "int32")
        self.loop_nest(buf, self.inputs, guard=False)
        k = d(st.integers(0, n - 1))
        k2 = const((k + d(st.integers(1, n - 1))) % n, "int32")
        kk = const(k, "int32")
        cond = self._fact_cond(buf[k])
        again = self._fact_cond(buf[k], cond)
        if shape in ("assume", "assert"):
            c = const(int(d(st.integers(-3, 3))), "int32")
            _store(buf, [kk], c)
            if shape == "assume":
                T.evaluate(T.assume(buf[k] == c))
            else:
                T.Assert(buf[k] == c, "fuzz: the fact holds here")
            _store(buf, [kk], self._fact_value())
            _store(buf, [k2], T.if_then_else(buf[k] == c, 1, -1))
        elif shape == "loop":
            with T.If(cond):
                with T.Then():
                    with T.serial(d(st.integers(2, 4))):
                        _store(buf, [k2], buf[k2] + T.if_then_else(again, 1, -1))
                        _store(buf, [kk], buf[k] + d(st.sampled_from([-3, 3, 7])))
        elif shape == "nested_if":
            with T.If(cond):
                with T.Then():
                    with T.If(buf[k2] < const(0, "int32")):
                        with T.Then():
                            _store(buf, [kk], self._fact_value())
                    _store(buf, [k2], T.if_then_else(again, 1, -1))
        else:
            with T.If(cond):
                with T.Then():
                    _store(buf, [kk], self._fact_value())
                    _store(buf, [k2], T.if_then_else(again, 1, -1))
        self.loop_nest(self.out, [*self.inputs, buf])

    def padded_window(self) -> None:
        """A padding stage (TOPI's ``pad_temp``): an array one element wider than the
        output on each side of every axis, a random value inside and a constant border,
        read by the output through a 3-wide window along its first axis (every output loop
        moves the index: ``inline_padding`` computes it at the loads when the value is
        cheap)."""
        d = self.draw
        out = self.out
        dims = [int(e.value) for e in out.shape]  # type: ignore[attr-defined]
        pad = T.alloc_buffer(tuple(e + 2 for e in dims), d(st.sampled_from(_STORAGE)))
        vt = _value_dtype(pad)
        border = self.g.cast(const(d(st.integers(-3, 3)), "int32"), vt)
        depth = d(st.integers(0, 2))

        def padding(idx: list[PrimExpr]) -> PrimExpr:
            inside: PrimExpr = const(True, "bool")
            for v, e in zip(idx, dims):
                inside = And(inside, And(1 <= v, v < e + 1))
            scope = _Scope([(v, e + 2) for v, e in zip(idx, dims)], self.inputs)
            return T.if_then_else(inside, self.g.expr(scope, vt, depth), border)

        self.loop_nest(pad, self.inputs, value_fn=padding, guard=False)
        ot = _value_dtype(out)

        def window(idx: list[PrimExpr]) -> PrimExpr:
            total: PrimExpr | None = None
            for k in range(3):
                at = [idx[0] + k, *(v + 1 for v in idx[1:])]
                term = self.g.cast(pad[tuple(at)] if len(at) > 1 else pad[at[0]], ot)
                total = term if total is None else total + term
            assert total is not None
            return total

        self.loop_nest(out, [*self.inputs, pad], value_fn=window)

    def _fact_cond(self, value: PrimExpr, like: PrimExpr | None = None) -> PrimExpr:
        """A comparison of ``value`` with a small constant (``like``'s, when given)."""
        if like is not None:
            return type(like)(value, like.b)  # type: ignore[attr-defined, call-arg]
        c = const(self.draw(st.integers(-3, 3)), "int32")
        op = self.draw(st.sampled_from(["lt", "le", "eq", "ne", "gt", "ge"]))
        return {"lt": value < c, "le": value <= c, "eq": value == c, "ne": value != c,
                "gt": value > c, "ge": value >= c}[op]

    def _fact_value(self) -> PrimExpr:
        return const(self.draw(st.integers(-5, 5)), "int32")

    def _fill_and_use(self, writer: Buffer, reader: Buffer) -> None:
        self.loop_nest(writer, self.inputs, guard=False)  # scratch is read fully: fill it all
        self.loop_nest(self.out, [*self.inputs, reader])


@st.composite
def programs(draw: Any, max_stages: int = 3) -> Program:
    """A random :class:`Program` (kernel + argument recipe)."""
    g = _Gen(draw)
    n_inputs = draw(st.integers(1, 3))
    in_specs = [(draw(st.sampled_from(_STORAGE)), _shape(draw)) for _ in range(n_inputs)]
    out_spec = (draw(st.sampled_from(_STORAGE)), _shape(draw))
    stage_kinds = draw(st.lists(st.sampled_from(["loop", "loop", "block", "compute", "alloc",
                                                 "facts", "block2", "pad"]),
                                min_size=1, max_size=max_stages))
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("fuzz")
            inputs = [T.arg(f"A{i}", T.Buffer(shape, dt)) for i, (dt, shape) in
                      enumerate(in_specs)]
            out = T.arg("OUT", T.Buffer(out_spec[1], out_spec[0]))
            stages = _Stages(g, inputs, out)
            for kind in stage_kinds:
                if kind == "loop":
                    stages.loop_nest(out, [*inputs, out] if draw(st.booleans()) else inputs)
                elif kind == "block":
                    stages.block_reduce()
                elif kind == "block2":
                    stages.two_output_reduce()
                elif kind == "compute":
                    stages.compute()
                elif kind == "facts":
                    stages.facts()
                elif kind == "pad":
                    stages.padded_window()
                else:
                    stages.alloc()
    func = b.get()
    assert isinstance(func, PrimFunc)
    return Program(func, draw(st.integers(0, 2**31 - 1)), g.inexact, list(stage_kinds))
