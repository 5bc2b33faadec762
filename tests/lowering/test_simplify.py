"""Tests of the simplify pass: rules before/after, facts, statements, and random programs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irbuilder.ir import (
    EQ,
    GE,
    LT,
    Add,
    And,
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    PrimFunc,
    Select,
    SeqStmt,
    Stmt,
    StringImm,
    Sub,
    Var,
    as_dtype,
    make_data_var,
    post_order_visit,
    structural_equal,
)
from lowering.arith import Analyzer, IntBound, simplify_expr, wrap_int
from lowering.pass_infra import FunctionPass
from lowering.transforms.simplify import Simplifier, is_no_op, simplify, simplify_stmt

I32 = as_dtype("int32")
F32 = as_dtype("float32")
BOOL = as_dtype("bool")


def i32(v: int) -> IntImm:
    return IntImm(I32, v)


def bounded(**ranges: tuple[int, int]) -> tuple[Analyzer, dict[str, Var]]:
    an = Analyzer()
    vars_ = {}
    for name, (lo, hi) in ranges.items():
        v = Var(name)
        an.bind(v, IntBound(lo, hi))
        vars_[name] = v
    return an, vars_


def same(a: Any, b: Any) -> bool:
    return structural_equal(a, b)


def flat_buffer(name: str, n: int = 256, dtype: str = "float32") -> Buffer:
    return Buffer(name, make_data_var(name, as_dtype(dtype)), (i32(n),), as_dtype(dtype))


def assume(cond: PrimExpr) -> Evaluate:
    return Evaluate(Call(I32, "assume", (cond,), CallKind.BUILTIN))


def nop() -> Evaluate:
    return Evaluate(i32(0))


# -- expression rules ---------------------------------------------------------


def test_pass_object() -> None:
    assert isinstance(simplify, FunctionPass) and simplify.name == "simplify"


def test_canonical_affine_index() -> None:
    an, v = bounded(i=(0, 15), j=(0, 15))
    i, j = v["i"], v["j"]
    assert same(simplify_expr(i * 16 + j + 4 - 4, an), Add(Mul(i, i32(16)), j))
    assert same(simplify_expr((i + 1) * 2 - 2, an), Mul(i, i32(2)))
    assert same(simplify_expr(j + i - j, an), i)


def test_floordiv_floormod_split() -> None:
    an, v = bounded(i=(0, 15), j=(0, 15))
    i, j = v["i"], v["j"]
    assert simplify_expr(FloorDiv(i * 16 + j, i32(16)), an) is i
    assert simplify_expr(FloorMod(i * 16 + j, i32(16)), an) is j
    # the remainder's range crosses a multiple of 16: keep the division of the remainder
    out = simplify_expr(FloorDiv(i * 16 + j + 8, i32(16)), an)
    assert same(out, Add(i, FloorDiv(Add(j, i32(8)), i32(16))))
    assert same(simplify_expr(FloorMod(i * 16 + j + 8, i32(16)), an), FloorMod(j + 8, i32(16)))


def test_floordiv_of_multiple_without_ranges() -> None:
    x = Var("x")
    an = Analyzer()
    an.bind(x, IntBound(-1000, 1000))
    assert simplify_expr(FloorDiv(x * 8, i32(8)), an) is x
    assert same(simplify_expr(FloorMod(x * 8, i32(8)), an), i32(0))
    assert same(simplify_expr(FloorDiv(FloorDiv(x, i32(4)), i32(8)), an), FloorDiv(x, i32(32)))


def test_floordiv_not_rewritten_when_it_may_overflow() -> None:
    x = Var("x")  # unbounded: x * 8 can wrap, so (x * 8) // 8 is not x
    assert same(simplify_expr(FloorDiv(x * 8, i32(8))), FloorDiv(Mul(x, i32(8)), i32(8)))


def test_truncdiv_becomes_floor_for_non_negative() -> None:
    an, v = bounded(i=(0, 15), j=(0, 3))
    i, j = v["i"], v["j"]
    assert simplify_expr(Div(i * 4 + j, i32(4)), an) is i
    assert simplify_expr(Mod(i * 4 + j, i32(4)), an) is j
    an2, v2 = bounded(k=(-4, 4))
    k = v2["k"]
    assert same(simplify_expr(Div(k * 4, i32(4)), an2), Div(Mul(k, i32(4)), i32(4)))


def test_identities() -> None:
    x = Var("x")
    f = Var("f", F32)
    assert simplify_expr(x + 0) is x
    assert simplify_expr(x * 1) is x
    assert same(simplify_expr(x * 0), i32(0))
    assert same(simplify_expr(x - x), i32(0))
    assert simplify_expr(Min(x, x)) is x
    assert simplify_expr(Max(x, x)) is x
    assert simplify_expr(f * FloatImm(F32, 1.0)) is f
    assert simplify_expr(f - FloatImm(F32, 0.0)) is f
    # f + 0.0 is not f when f is -0.0, and f * 0.0 is not 0.0 for inf/nan: the simplifier
    # keeps such nodes (the operators fold them at construction, as TVM's do)
    assert isinstance(simplify_expr(Add(f, FloatImm(F32, 0.0))), Add)
    assert isinstance(simplify_expr(Mul(f, FloatImm(F32, 0.0))), Mul)
    assert f + FloatImm(F32, 0.0) is f
    assert simplify_expr(Select(IntImm(BOOL, 1), x, x + 1)) is x
    assert simplify_expr(Select(x < 3, x, x)) is x


def test_min_max_from_ranges() -> None:
    an, v = bounded(i=(0, 15))
    i = v["i"]
    assert simplify_expr(Min(i, i32(16)), an) is i
    assert same(simplify_expr(Max(i, i32(16)), an), i32(16))
    assert simplify_expr(Max(i, i - 1), an) is i


def test_conditions_from_ranges() -> None:
    an, v = bounded(i=(0, 15))
    i = v["i"]
    assert same(simplify_expr(i < 16, an), IntImm(BOOL, 1))
    assert same(simplify_expr(GE(i, i32(16)), an), IntImm(BOOL, 0))
    likely = Call(BOOL, "likely", (LT(i, i32(20)),), CallKind.BUILTIN)
    assert same(simplify_expr(likely, an), IntImm(BOOL, 1))
    assert same(simplify_expr(And(i < 20, Var("b", BOOL)), an), Var("b", BOOL)) is False
    b = Var("b", BOOL)
    assert simplify_expr(And(i < 20, b), an) is b
    assert same(simplify_expr(Or(i < 20, b), an), IntImm(BOOL, 1))
    assert same(simplify_expr(Not(i < 3)), GE(i, i32(3)))


def test_vector_rules() -> None:
    from irbuilder.ir import Broadcast, Ramp

    x = Var("x")
    ramp = Ramp(i32(0), i32(1), 4)
    out = simplify_expr(Add(ramp, Broadcast(x, 4)))
    assert same(out, Ramp(x, i32(1), 4))
    out = simplify_expr(Mul(ramp, Broadcast(i32(2), 4)))
    assert same(out, Ramp(i32(0), i32(2), 4))
    out = simplify_expr(Add(Broadcast(i32(2), 4), Broadcast(i32(3), 4)))
    assert same(out, Broadcast(i32(5), 4))


# -- statements ---------------------------------------------------------------


def test_loop_range_facts_drop_conditions() -> None:
    A = flat_buffer("A")
    i, j = Var("i"), Var("j")
    store = BufferStore(A, FloatImm(F32, 1.0), (i * 16 + j,))
    body = For(
        i,
        i32(0),
        i32(16),
        ForKind.SERIAL,
        For(j, i32(0), i32(16), ForKind.SERIAL, IfThenElse(i * 16 + j < 256, store)),
    )
    expected = For(
        i, i32(0), i32(16), ForKind.SERIAL, For(j, i32(0), i32(16), ForKind.SERIAL, store)
    )
    assert same(simplify_stmt(body), expected)


def test_dead_branches() -> None:
    A = flat_buffer("A")
    s1 = BufferStore(A, FloatImm(F32, 1.0), (i32(0),))
    s2 = BufferStore(A, FloatImm(F32, 2.0), (i32(0),))
    assert simplify_stmt(IfThenElse(IntImm(BOOL, 1), s1, s2)) is s1
    assert simplify_stmt(IfThenElse(IntImm(BOOL, 0), s1, s2)) is s2
    assert is_no_op(simplify_stmt(IfThenElse(IntImm(BOOL, 0), s1)))
    c = Var("c", BOOL)
    out = simplify_stmt(IfThenElse(c, nop(), s2))
    assert same(out, IfThenElse(Not(c), s2))


def test_else_branch_knows_negated_condition() -> None:
    A = flat_buffer("A")
    i = Var("i")
    inner = IfThenElse(i < 5, BufferStore(A, FloatImm(F32, 1.0), (i,)))
    stmt = IfThenElse(i < 10, nop(), BufferStore(A, FloatImm(F32, 2.0), (i,)))
    stmt = IfThenElse(i < 10, inner, stmt.else_case)
    out = simplify_stmt(For(i, i32(0), i32(100), ForKind.SERIAL, stmt))
    # inside the else branch i >= 10 is known: nothing to prove there, but the
    # then branch keeps its own check (i < 5 is not implied by i < 10)
    assert isinstance(out, For) and isinstance(out.body, IfThenElse)
    assert isinstance(out.body.then_case, IfThenElse)
    nested = IfThenElse(i < 10, IfThenElse(i < 20, BufferStore(A, FloatImm(F32, 1.0), (i,))))
    out2 = simplify_stmt(For(i, i32(0), i32(100), ForKind.SERIAL, nested))
    assert isinstance(out2, For) and isinstance(out2.body, IfThenElse)
    assert isinstance(out2.body.then_case, BufferStore)


def test_empty_loops_removed() -> None:
    A = flat_buffer("A")
    i = Var("i")
    store = BufferStore(A, FloatImm(F32, 1.0), (i,))
    assert is_no_op(simplify_stmt(For(i, i32(0), i32(0), ForKind.SERIAL, store)))
    assert is_no_op(simplify_stmt(For(i, i32(0), i32(-3), ForKind.SERIAL, store)))
    assert is_no_op(simplify_stmt(For(i, i32(0), i32(10), ForKind.SERIAL, nop())))
    n = Var("n")
    kept = For(i, i32(0), n, ForKind.SERIAL, store)
    assert simplify_stmt(kept) is kept


def test_extent_one_loop_substitutes_min() -> None:
    A = flat_buffer("A")
    i, k = Var("i"), Var("k")
    loop = For(i, i32(3), i32(1), ForKind.SERIAL, BufferStore(A, FloatImm(F32, 1.0), (i * 2,)))
    assert same(simplify_stmt(loop), BufferStore(A, FloatImm(F32, 1.0), (i32(6),)))
    loop_k = For(i, k * 4, i32(1), ForKind.SERIAL, BufferStore(A, FloatImm(F32, 1.0), (i,)))
    out = simplify_stmt(loop_k)
    assert isinstance(out, LetStmt) and out.var is i and same(out.value, Mul(k, i32(4)))


def test_seq_flattening_and_no_ops() -> None:
    A = flat_buffer("A")
    s1 = BufferStore(A, FloatImm(F32, 1.0), (i32(0),))
    s2 = BufferStore(A, FloatImm(F32, 2.0), (i32(1),))
    stmt = SeqStmt((nop(), SeqStmt((s1, nop())), s2, Evaluate(i32(7))))
    assert same(simplify_stmt(stmt), SeqStmt((s1, s2)))


def test_let_constant_is_inlined_and_let_value_bounds_facts() -> None:
    A = flat_buffer("A")
    x, i, j = Var("x"), Var("i"), Var("j")
    let = LetStmt(x, i32(4), BufferStore(A, FloatImm(F32, 1.0), (x * 2,)))
    assert same(simplify_stmt(let), BufferStore(A, FloatImm(F32, 1.0), (i32(8),)))
    let2 = LetStmt(x, i * 16 + j, BufferStore(A, FloatImm(F32, 1.0), (Min(x, i32(300)),)))
    loops = For(i, i32(0), i32(16), ForKind.SERIAL, For(j, i32(0), i32(16), ForKind.SERIAL, let2))
    out = simplify_stmt(loops)
    assert isinstance(out, For) and isinstance(out.body, For)
    inner = out.body.body
    assert isinstance(inner, LetStmt) and isinstance(inner.body, BufferStore)
    assert inner.body.indices[0] is x


def test_assume_and_assert_are_facts_for_what_follows() -> None:
    A = flat_buffer("A")
    n, i = Var("n"), Var("i")
    guarded = For(
        i,
        i32(0),
        i32(8),
        ForKind.SERIAL,
        IfThenElse(i < n, BufferStore(A, FloatImm(F32, 1.0), (i,))),
    )
    expected_loop = For(i, i32(0), i32(8), ForKind.SERIAL, BufferStore(A, FloatImm(F32, 1.0), (i,)))
    fact = And(GE(n, i32(8)), LT(n, i32(1000)))
    out = simplify_stmt(SeqStmt((assume(fact), guarded)))
    assert isinstance(out, SeqStmt) and same(out.seq[1], expected_loop)
    message = StringImm("n too small")
    out2 = simplify_stmt(SeqStmt((AssertStmt(fact, message), guarded)))
    assert isinstance(out2, SeqStmt) and same(out2.seq[1], expected_loop)
    # the fact does not leak before the assert
    out3 = simplify_stmt(SeqStmt((guarded, AssertStmt(fact, message))))
    assert isinstance(out3, SeqStmt) and same(out3.seq[0], guarded)


def test_proven_assert_is_removed_and_false_one_kept() -> None:
    i = Var("i")
    msg = StringImm("bad")
    ok = For(i, i32(0), i32(4), ForKind.SERIAL, AssertStmt(i < 4, msg))
    assert is_no_op(simplify_stmt(ok))
    bad = AssertStmt(LT(i32(5), i32(4)), msg)
    out = simplify_stmt(bad)
    assert isinstance(out, AssertStmt) and same(out.condition, IntImm(BOOL, 0))


def test_division_by_zero_left_for_run_time() -> None:
    A = flat_buffer("A", dtype="int32")
    store = BufferStore(A, FloorDiv(i32(1), i32(0)), (i32(0),))
    assert simplify_stmt(store) is store


def test_pass_on_primfunc_and_idempotence() -> None:
    A = flat_buffer("A")
    i, j = Var("i"), Var("j")
    body = For(
        i,
        i32(0),
        i32(16),
        ForKind.SERIAL,
        For(
            j,
            i32(0),
            i32(16),
            ForKind.SERIAL,
            BufferStore(A, BufferLoad(A, ((i + 1) * 16 + j - 16,)), (i * 16 + j + 0,)),
        ),
    )
    func = PrimFunc((A.data,), body)
    once = simplify(func)
    twice = simplify(once)
    assert twice is once
    loop = once.body
    assert isinstance(loop, For) and isinstance(loop.body, For)
    store = loop.body.body
    assert isinstance(store, BufferStore)
    assert same(store.indices[0], Add(Mul(i, i32(16)), j))
    assert isinstance(store.value, BufferLoad) and same(store.value.indices[0], store.indices[0])
    unchanged = simplify(once)
    assert unchanged is once


# -- property tests: random integer expressions keep their value ----------------

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class _DivByZero(Exception):
    pass


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def evaluate(expr: PrimExpr, env: dict[Var, int]) -> int:
    """Reference evaluator with int32 wrap-around (bool results as 0/1)."""
    if isinstance(expr, IntImm):
        return expr.value
    if isinstance(expr, Var):
        return env[expr]
    if isinstance(expr, Select):
        c = evaluate(expr.condition, env)
        t, f = evaluate(expr.true_value, env), evaluate(expr.false_value, env)
        return t if c else f
    if isinstance(expr, Not):
        return 0 if evaluate(expr.a, env) else 1
    a = evaluate(expr.a, env)  # type: ignore[attr-defined]
    b = evaluate(expr.b, env)  # type: ignore[attr-defined]
    table = {
        Add: lambda: a + b,
        Sub: lambda: a - b,
        Mul: lambda: a * b,
        Min: lambda: min(a, b),
        Max: lambda: max(a, b),
        LT: lambda: int(a < b),
        GE: lambda: int(a >= b),
        EQ: lambda: int(a == b),
        And: lambda: int(bool(a) and bool(b)),
        Or: lambda: int(bool(a) or bool(b)),
    }
    if type(expr) in (Div, Mod, FloorDiv, FloorMod):
        if b == 0:
            raise _DivByZero
        if type(expr) is FloorDiv:
            r = a // b
        elif type(expr) is FloorMod:
            r = a % b
        elif type(expr) is Div:
            r = _trunc_div(a, b)
        else:
            r = a - _trunc_div(a, b) * b
        return wrap_int(r, I32)
    compute: Callable[[], int] = table[type(expr)]  # type: ignore[index]
    r = compute()
    return r if expr.dtype.is_bool else wrap_int(r, I32)


VAR_RANGES = {"i": (0, 15), "j": (0, 15), "k": (-50, 50), "n": (1, 1000)}


def _int_exprs(vars_: dict[str, Var]) -> st.SearchStrategy[PrimExpr]:
    leaves = st.one_of(
        st.sampled_from(list(vars_.values())),
        st.integers(-20, 20).map(i32),
        st.sampled_from([16, 64, 2**30, _INT32_MAX, _INT32_MIN]).map(i32),
    )

    def extend(children: st.SearchStrategy[PrimExpr]) -> st.SearchStrategy[PrimExpr]:
        binary = st.tuples(
            st.sampled_from([Add, Sub, Mul, Min, Max, FloorDiv, FloorMod, Div, Mod]),
            children,
            children,
        ).map(lambda t: t[0](t[1], t[2]))
        by_const = st.tuples(
            st.sampled_from([FloorDiv, FloorMod, Div, Mod, Mul]),
            children,
            st.sampled_from([1, 2, 3, 4, 8, 16, -4]).map(i32),
        ).map(lambda t: t[0](t[1], t[2]))
        select = st.tuples(
            st.sampled_from([LT, GE, EQ]), children, children, children, children
        ).map(lambda t: Select(t[0](t[1], t[2]), t[3], t[4]))
        return st.one_of(binary, by_const, select)

    return st.recursive(leaves, extend, max_leaves=12)


_VARS = {name: Var(name) for name in VAR_RANGES}


def _analyzer() -> Analyzer:
    an = Analyzer()
    for name, (lo, hi) in VAR_RANGES.items():
        an.bind(_VARS[name], IntBound(lo, hi))
    return an


@settings(max_examples=400, deadline=None)
@given(
    expr=_int_exprs(_VARS),
    points=st.lists(
        st.fixed_dictionaries({n: st.integers(lo, hi) for n, (lo, hi) in VAR_RANGES.items()}),
        min_size=1,
        max_size=6,
    ),
)
def test_random_expressions_keep_their_value(expr: PrimExpr, points: list[dict[str, int]]) -> None:
    simplified = simplify_expr(expr, _analyzer())
    for point in points:
        env = {_VARS[n]: v for n, v in point.items()}
        try:
            expected = evaluate(expr, env)
        except _DivByZero:
            continue
        assert evaluate(simplified, env) == expected


@settings(max_examples=200, deadline=None)
@given(expr=_int_exprs(_VARS))
def test_simplify_expr_is_idempotent(expr: PrimExpr) -> None:
    once = simplify_expr(expr, _analyzer())
    twice = simplify_expr(once, _analyzer())
    assert same(once, twice)


@settings(max_examples=100, deadline=None)
@given(expr=_int_exprs(_VARS), value=st.integers(-5, 20))
def test_random_conditions_in_if_keep_their_meaning(expr: PrimExpr, value: int) -> None:
    """An if on a random condition inside bounded loops: pass output decides the same."""
    A = flat_buffer("A", 16, "int32")
    i = _VARS["i"]
    cond = LT(expr, i32(value))
    stmt = For(
        i,
        i32(0),
        i32(16),
        ForKind.SERIAL,
        IfThenElse(cond, BufferStore(A, i32(1), (i,)), BufferStore(A, i32(0), (i,))),
    )
    out = Simplifier(_analyzer()).visit_stmt(stmt)
    assert isinstance(out, (For, Stmt))
    env_base = {_VARS["j"]: 3, _VARS["k"]: -7, _VARS["n"]: 5}
    for iv in range(16):
        env = dict(env_base)
        env[i] = iv
        try:
            want = evaluate(cond, env)
        except _DivByZero:
            continue
        got = _run_store_value(out, env)
        assert got == want


def _run_store_value(stmt: Stmt, env: dict[Var, int]) -> int:
    """The value stored by a one-iteration interpretation of the simplified loop body."""
    if isinstance(stmt, For):
        return _run_store_value(stmt.body, env)
    if isinstance(stmt, IfThenElse):
        branch = stmt.then_case if evaluate(stmt.condition, env) else stmt.else_case
        assert branch is not None
        return _run_store_value(branch, env)
    if isinstance(stmt, BufferStore):
        return evaluate(stmt.value, env)
    raise AssertionError(f"unexpected statement {stmt!r}")


def test_reject_nothing_silently() -> None:
    with pytest.raises(TypeError, match="const_int_bound"):
        Analyzer().const_int_bound(Var("f", F32))


# -- the divisions of fused and split loops -------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    x=_int_exprs(_VARS),
    c=st.sampled_from([3, 16, 56, 999]),
    k=st.sampled_from([1, 2, -3]),
    floor=st.booleans(),
    points=st.lists(
        st.fixed_dictionaries({n: st.integers(lo, hi) for n, (lo, hi) in VAR_RANGES.items()}),
        min_size=1, max_size=6,
    ),
)
def test_quotient_and_remainder_rejoin_keeping_their_value(
    x: PrimExpr, c: int, k: int, floor: bool, points: list[dict[str, int]]
) -> None:
    div, mod = (FloorDiv, FloorMod) if floor else (Div, Mod)
    expr = Add(Add(Mul(div(x, i32(c)), i32(k * c)), _VARS["j"]), Mul(mod(x, i32(c)), i32(k)))
    simplified = simplify_expr(expr, _analyzer())
    for point in points:
        env = {_VARS[n]: v for n, v in point.items()}
        try:
            expected = evaluate(expr, env)
        except _DivByZero:
            continue
        assert evaluate(simplified, env) == expected


def test_quotient_and_remainder_rejoin() -> None:
    f = Add(Mul(_VARS["i"], i32(3)), _VARS["k"])
    joined = Add(Mul(FloorDiv(f, i32(999)), i32(999)), FloorMod(f, i32(999)))
    assert same(simplify_expr(joined, _analyzer()), f)
    # a coefficient that is not c times the remainder's stays as written
    apart = Add(Mul(FloorDiv(f, i32(999)), i32(998)), FloorMod(f, i32(999)))
    assert "FloorDiv" in repr(simplify_expr(apart, _analyzer()))


@settings(max_examples=300, deadline=None)
@given(
    outer=st.integers(0, 400), inner=st.integers(0, 55), shift=st.integers(-60, 60),
    c=st.sampled_from([112, 3136, 56 * 7]),
)
def test_division_of_a_split_index_by_a_multiple_of_its_factor(
    outer: int, inner: int, shift: int, c: int
) -> None:
    a, b = Var("a"), Var("b")
    an = Analyzer()
    an.bind(a, IntBound(0, 400))
    an.bind(b, IntBound(0, 55))
    index = Add(Add(Mul(a, i32(56)), b), i32(shift))
    env = {a: outer, b: inner}
    for op in (FloorDiv, FloorMod):
        expr = op(index, i32(c))
        assert evaluate(simplify_expr(expr, an), env) == evaluate(expr, env)


def test_fused_axes_read_back_from_a_split_index() -> None:
    a, b = Var("a"), Var("b")
    an = Analyzer()
    an.bind(a, IntBound(0, 223))
    an.bind(b, IntBound(0, 55))
    f = Add(Mul(a, i32(56)), b)
    assert same(simplify_expr(FloorDiv(f, i32(3136)), an), FloorDiv(a, i32(56)))
    assert same(simplify_expr(FloorDiv(FloorMod(f, i32(3136)), i32(56)), an),
                FloorMod(a, i32(56)))
    assert same(simplify_expr(FloorMod(f, i32(56)), an), b)


def test_a_remainders_quotient_rejoins_with_the_finer_remainder() -> None:
    f = Var("f")
    an = Analyzer()
    an.bind(f, IntBound(0, 200703))
    # a reshape's flat index as TVM prints it for three fused axes
    index = Add(Add(Mul(FloorDiv(f, i32(3136)), i32(3136)),
                    Mul(FloorDiv(FloorMod(f, i32(3136)), i32(56)), i32(56))),
                FloorMod(f, i32(56)))
    assert same(simplify_expr(index, an), f)
    # 56 does not divide 1000: (f % 1000) // 56 * 56 + f % 56 is not f % 1000
    apart = Add(Mul(FloorDiv(FloorMod(f, i32(1000)), i32(56)), i32(56)), FloorMod(f, i32(56)))
    simplified = simplify_expr(apart, an)
    for value in (0, 55, 56, 999, 1000, 1055, 200703):
        assert evaluate(simplified, {f: value}) == evaluate(apart, {f: value})
    assert "FloorDiv" in repr(simplified)


LET_EXTENTS = """
from tvmscript import tir as T

@T.prim_func
def main(A: T.Buffer((512, 16), "int32"), C: T.Buffer((512, 16), "int32")):
    rows: T.int32 = 256 + 256
    for i in range(rows):
        m: T.int32 = 16
        for j in range(m):
            with T.block("c"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + 1
"""


@pytest.mark.parametrize("target", ["llvm -mcpu=znver3", "interp"])
def test_loop_extents_bound_by_folded_lets_build(target: str) -> None:
    # the automatic parallel loop's run-time work test (an annotation) named `rows`, which
    # simplify substituted into the loop and dropped: "variable 'rows' is used but not defined"
    import tvmscript
    from lowering.target import Target

    if target != "interp" and Target(target).missing_on_host():
        pytest.skip(f"the host cannot run {target}")
    func = tvmscript.from_source(LET_EXTENTS)
    a = np.arange(512 * 16, dtype="int32").reshape(512, 16)
    c = np.zeros_like(a)
    tvmscript.build(func, target=target, verify=True)(a, c)
    np.testing.assert_array_equal(c, a + 1)


def test_a_constant_let_inside_a_let_of_the_same_variable_restores_the_outer() -> None:
    x = Var("x", I32)
    buf = flat_buffer("C", 3, "int32")
    inner = LetStmt(x, i32(16), BufferStore(buf, x, (i32(1),)))
    body = LetStmt(x, i32(32), SeqStmt((inner, BufferStore(buf, x, (i32(2),)))))
    stores: list[BufferStore] = []
    post_order_visit(simplify_stmt(body),
                     lambda n: stores.append(n) if isinstance(n, BufferStore) else None)
    assert [s.value.value for s in stores] == [16, 32]  # type: ignore[attr-defined]
