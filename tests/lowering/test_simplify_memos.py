"""The compile-time memos of ``simplify`` and the analyzer (docs/compile-time.md) never hand
back a stale answer: a statement or expression that changed is looked at anew, the same
object always gets the same answer, and results equal those computed without the memos."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import (
    GT,
    LT,
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    For,
    ForKind,
    IntImm,
    Let,
    Not,
    SeqStmt,
    SizeVar,
    StringImm,
    Var,
    as_dtype,
    structural_equal,
)
from irbuilder.ir.buffer import make_data_var
from lowering.arith import Analyzer
from tvmscript import tir as T


def _simplify_module() -> Any:
    import lowering.transforms.simplify  # noqa: F401  (the package attribute is the pass)

    return sys.modules["lowering.transforms.simplify"]


I32 = as_dtype("int32")
I64 = as_dtype("int64")


def decl_buffer(shape: tuple[int, ...], dtype: str, name: str) -> Buffer:
    return Buffer(name, make_data_var(name, as_dtype(dtype)), tuple(_int(n) for n in shape),
                  as_dtype(dtype))


def _int(v: int) -> IntImm:
    return IntImm(I32, v)


def test_structural_equal_shortcuts_agree_with_the_full_comparison() -> None:
    i = Var("i", I32)
    n = SizeVar("n", I32)
    assert structural_equal(i, i)
    assert not structural_equal(i, n)  # Var vs SizeVar: different classes
    assert not structural_equal(i + 1, i - 1)
    assert structural_equal(i + 1, i + 1)
    j = Var("j", I32)
    assert not structural_equal(i + 1, j + 1)
    assert structural_equal(i + 1, j + 1, map_free_vars=True)
    # below an operator: a variable a Let binds maps to the other side's, a free one not
    x, y = Var("x", I32), Var("y", I32)
    assert structural_equal(Let(x, _int(1), x + i) * 2, Let(y, _int(1), y + i) * 2)
    assert not structural_equal(Let(x, _int(1), x + i) * 2, Let(y, _int(1), y + j) * 2)
    def below() -> Not:
        return Not(LT(Cast(I64, i), Cast(I64, n)))

    assert structural_equal(below(), below())
    assert not structural_equal(Cast(I64, i) + 1, Cast(as_dtype("uint64"), i) + 1)
    assert not structural_equal(IntImm(I32, 1) + i, IntImm(I32, 2) + i)


def test_fact_memory_reads_are_recomputed_for_a_new_fact_object() -> None:
    buf = decl_buffer((4,), "int32", "A")
    other = decl_buffer((4,), "int32", "B")
    analyzer = Analyzer()
    reads_a = LT(BufferLoad(buf, (_int(0),)), _int(3))
    reads_b = LT(BufferLoad(other, (_int(0),)), _int(3))
    analyzer.add_constraint(reads_a)
    analyzer.add_constraint(reads_b)
    assert analyzer.prove(reads_a) and analyzer.prove(reads_b)
    analyzer.forget_memory(lambda data: data is buf.data)
    assert analyzer.prove(reads_a) is None
    assert analyzer.prove(reads_b)
    # the same condition text on another buffer is another fact, with its own reads
    again = LT(BufferLoad(other, (_int(0),)), _int(3))
    analyzer.add_constraint(again)
    analyzer.forget_memory(lambda data: data is other.data)
    assert analyzer.prove(again) is None and analyzer.prove(reads_b) is None


def test_a_shared_loop_body_object_forgets_the_same_stores_each_time() -> None:
    # One body object used by two loops: the second loop's lookup of what it stores is a
    # memo hit and must still kill the fact read from B.
    simplify = _simplify_module()
    a = decl_buffer((8,), "int32", "A")
    b = decl_buffer((8,), "int32", "B")
    i = Var("i", I32)
    body = BufferStore(b, _int(1), (i,))
    fact = GT(BufferLoad(b, (_int(0),)), _int(0))
    analyzer = Analyzer()
    simplifier = simplify.Simplifier(analyzer)
    analyzer.add_constraint(fact)
    simplifier.visit_stmt(For(i, _int(0), _int(8), ForKind.SERIAL, body))
    assert analyzer.prove(fact) is None
    analyzer.add_constraint(fact)
    simplifier.visit_stmt(For(i, _int(0), _int(8), ForKind.SERIAL, body))
    assert analyzer.prove(fact) is None
    # a loop storing only to A keeps a fact about B... unless A and B may be views of one
    # array (parameters): the aliasing rule of _Stores decides, memo or not
    analyzer.add_constraint(fact)
    simplifier.visit_stmt(For(i, _int(0), _int(8), ForKind.SERIAL, BufferStore(a, _int(1), (i,))))
    fresh = simplify.Simplifier(Analyzer())
    fresh.analyzer.add_constraint(fact)
    fresh.visit_stmt(For(i, _int(0), _int(8), ForKind.SERIAL, BufferStore(a, _int(1), (i,))))
    assert analyzer.prove(fact) == fresh.analyzer.prove(fact)


def _simplify_inputs() -> list[Any]:
    """Every statement the pipeline hands ``simplify`` while building two suite kernels."""
    simplify = _simplify_module()
    captured: list[Any] = []
    real = simplify.simplify_stmt

    def grab(stmt: Any, analyzer: Any = None, max_rounds: int = 4) -> Any:
        captured.append(stmt)
        return real(stmt, analyzer, max_rounds)

    from benchmarks.kernels import KERNELS

    simplify.simplify_stmt = grab
    try:
        for name in ("stencil", "matmul_tiled"):
            tvmscript.build(KERNELS[name], cache=False, target="llvm -mcpu=haswell")
    finally:
        simplify.simplify_stmt = real
    return captured


def test_rounds_with_shared_memos_give_what_fresh_rounds_give(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    simplify = _simplify_module()
    tvmscript.clear_build_cache()
    inputs = _simplify_inputs()
    assert inputs
    shared = [simplify.simplify_stmt(s, Analyzer()) for s in inputs]
    monkeypatch.setattr(simplify.Simplifier, "share_memos", lambda self, other: None)
    fresh = [simplify.simplify_stmt(s, Analyzer()) for s in inputs]
    for got, want in zip(shared, fresh):
        assert structural_equal(got, want)


def test_an_edited_kernel_is_simplified_anew_in_the_same_process() -> None:
    @T.prim_func
    def first(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
        for i in range(8):
            B[i] = A[i] + 1 - 1

    @T.prim_func
    def second(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
        for i in range(8):
            B[i] = A[i] + 2 - 1

    a = np.arange(8, dtype="int32")
    for func, plus in ((first, 0), (second, 1), (first, 0)):
        b = np.zeros(8, "int32")
        tvmscript.build(func, cache=False)(a, b)
        np.testing.assert_array_equal(b, a + plus)


def test_a_sequence_flattened_in_round_one_is_simplified_again() -> None:
    # Round 1 flattens the inner sequence; round 2 sees the assert's fact beside the later
    # store and folds its condition. Shared memos must not keep round 1's answer.
    simplify = _simplify_module()
    out = decl_buffer((2,), "int32", "out")
    n = Var("n", I32)
    inner = SeqStmt((AssertStmt(LT(n, _int(4)), StringImm("n < 4")),))
    store = BufferStore(out, T.if_then_else(LT(n, _int(4)), _int(1), _int(0)), (_int(0),))
    result = simplify.simplify_stmt(SeqStmt((inner, store)), Analyzer())
    assert isinstance(result, SeqStmt)
    stored = result.seq[-1]
    assert isinstance(stored, BufferStore)
    assert isinstance(stored.value, IntImm) and stored.value.value == 1


def test_a_loop_whose_dead_store_goes_away_is_simplified_again() -> None:
    # Round 1 forgets `A[0] < 4` at the loop (its body stores to A) before it finds that
    # store dead and the loop empty; the round asks for another one, which keeps the fact.
    @T.prim_func
    def guarded(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
        if A[0] < 4:
            for i in range(4):
                if i > 10:
                    A[0] = 5
            B[0] = T.if_then_else(A[0] < 4, 1, 0)

    simplify = _simplify_module()
    simplifier = simplify.Simplifier(Analyzer())
    simplifier.visit_stmt(guarded.body)
    assert simplifier.revisit
    text = guarded.with_body(simplify.simplify_stmt(guarded.body, Analyzer())).script()
    assert "B[0] = 1" in text and "A[0] = 5" not in text


def test_one_round_is_enough_without_a_reason_for_another() -> None:
    @T.prim_func
    def plain(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in range(16):
            B[i] = A[i] + 2 - 2 + i * 0

    simplify = _simplify_module()
    rounds: list[Any] = []

    class Counting(simplify.Simplifier):  # type: ignore[misc, name-defined]
        def __init__(self, analyzer: Any = None) -> None:
            super().__init__(analyzer)
            rounds.append(self)

    original = simplify.Simplifier
    simplify.Simplifier = Counting
    try:
        result = simplify.simplify_stmt(plain.body, Analyzer())
    finally:
        simplify.Simplifier = original
    assert len(rounds) == 1 and not rounds[0].revisit
    assert "B[i] = A[i]" in plain.with_body(result).script()
