"""The race check tells iterations apart by the digits of a fused loop variable
(``lowering/checks/race_digits.py``): accepted kernels compute the interpreter's result,
near misses are refused, and a brute-force property keeps the rule sound."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tvmscript
from irbuilder import IRBuilder
from irbuilder import tir as IB
from irbuilder.ir import PrimFunc
from lowering.checks.race_check import find_races
from lowering.checks.race_digits import covers, digit_of
from tvmscript import tir
from tvmscript import tir as T

TARGET = tvmscript.Target({"kind": "llvm", "mcpu": "znver3"})


@T.prim_func
def scale(A: T.Buffer((64, 48, 8), "float32"), B: T.Buffer((64, 48, 8), "float32")):
    for i, j, k in T.grid(64, 48, 8):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)


def test_fused_loop_over_a_split_with_a_remainder_is_parallel() -> None:
    # j (48) split by 5 leaves a predicated tail; fusing i with the outer part gives
    # B[f // 10, f % 10 * 5 + j1]: no single dimension is injective in f
    sch = tir.Schedule(scale)
    i, j, _ = sch.get_loops(sch.get_block("B"))
    jo, _ = sch.split(j, [None, 5])
    sch.parallel(sch.fuse(i, jo))
    func = sch.mod["main"]
    assert "T.parallel(640)" in func.script()
    kernel = tvmscript.build(func, target=TARGET)
    a = np.random.default_rng(0).standard_normal((64, 48, 8), dtype="float32")
    b = np.zeros_like(a)
    kernel(a, b)
    np.testing.assert_array_equal(b, a * 2)


@T.prim_func
def digits_of_three_dims(A: T.Buffer((4, 6, 5), "int32")):
    for f in T.parallel(120):
        A[f // 30, f // 5 % 6, f % 5] = f


@T.prim_func
def digits_with_inner_loop(A: T.Buffer((8, 30), "int32")):
    for f in T.parallel(48):
        for r in range(5):
            A[f // 6, f % 6 * 5 + r] = f * 5 + r


@pytest.mark.parametrize("func", [digits_of_three_dims, digits_with_inner_loop])
def test_digit_indexed_kernels_match_the_interpreter(func: PrimFunc) -> None:
    assert find_races(func) == []
    shape = tuple(int(d.value) for d in func.buffer_map[func.params[0]].shape)  # type: ignore[attr-defined]
    out = np.full(shape, -1, "int32")
    expected = out.copy()
    tvmscript.build(func, target=TARGET)(out)
    tvmscript.build(func, target="interp")(expected)
    np.testing.assert_array_equal(out, expected)


@T.prim_func
def digits_missing(A: T.Buffer((12, 5), "int32")):
    for f in T.parallel(60):
        A[f // 10, f % 5] = f  # f and f + 5 write the same element


@T.prim_func
def digit_overlapping_rest(A: T.Buffer((8, 36), "int32")):
    for f in T.parallel(48):
        for r in range(6):
            A[f // 6, f % 6 * 5 + r] = r  # r == 5 reaches the next digit's first element


@pytest.mark.parametrize("func", [digits_missing, digit_overlapping_rest])
def test_digits_that_do_not_determine_the_iteration_are_refused(func: PrimFunc) -> None:
    problems = find_races(func)
    assert problems and "'A'" in problems[0].message


def test_digit_forms_and_coverage() -> None:
    f = T.var("int32", "f")
    assert digit_of(f, f) == (1, None)
    assert digit_of(f // 6, f) == (6, None)
    assert digit_of(f % 6, f) == (1, 6)
    assert digit_of(f // 5 % 6, f) == (5, 6)
    assert digit_of(f % 30 // 5, f) == (5, 6)
    assert digit_of(f % 30 // 7, f) is None  # 7 does not divide 30
    assert covers({(1, 5), (5, 6), (30, None)}, 10**9)
    assert covers({(1, 5), (5, 6)}, 30)
    assert not covers({(1, 5), (5, 6)}, 31)
    assert not covers({(1, 5), (10, None)}, 60)


# -- soundness against brute force ---------------------------------------------------

_DIGITS = [("f", 1, None), ("div", 2, None), ("div", 3, None), ("mod", 1, 2), ("mod", 1, 3)]
_DIGITS += [("mod", 1, 4), ("divmod", 2, 3), ("divmod", 3, 2), ("divmod", 2, 2)]


def _digit_value(kind: str, a: int, b: int | None, f: int) -> int:
    if kind == "f":
        return f
    if kind == "div":
        return f // a
    if kind == "mod":
        return f % (b or 1)
    return f // a % (b or 1)


@st.composite
def _digit_kernels(draw: st.DrawFn) -> tuple[PrimFunc, bool]:
    """A parallel loop over ``f`` around a serial ``r``, storing at indices that are sums
    of digits of ``f`` and a multiple of ``r``, and whether two iterations really write
    one element (found by enumeration)."""
    extent, inner = draw(st.integers(1, 24)), draw(st.integers(1, 4))
    ndim = draw(st.integers(1, 3))
    Digit = tuple[str, int, int | None]
    Dim = tuple[list[tuple[int, Digit]], int]
    dims: list[Dim] = []
    if draw(st.booleans()):  # a mixed-radix split of f spread over the dimensions
        radices = draw(st.lists(st.integers(2, 4), min_size=1, max_size=2))
        digits: list[Digit] = []
        low = 1
        for b in radices:
            digits.append(("mod", 1, b) if low == 1 else ("divmod", low, b))
            low *= b
        digits.append(("div", low, None))
        extent = low * draw(st.integers(1, 3)) - draw(st.integers(0, 1))
        placed: list[list[tuple[int, Digit]]] = [[] for _ in range(ndim)]
        for digit in digits:
            if draw(st.integers(0, 5)):  # sometimes a digit is left out
                coef = draw(st.sampled_from([1, 2, 3, 4, 5, 8, 12]))
                placed[draw(st.integers(0, ndim - 1))].append((coef, digit))
        dims = [(terms, draw(st.sampled_from([0, 1, 2, 3]))) for terms in placed]
    else:
        for _ in range(ndim):
            terms = [
                (draw(st.sampled_from([1, 2, 3, 4, 6, -1])), draw(st.sampled_from(_DIGITS)))
                for _ in range(draw(st.integers(0, 2)))
            ]
            dims.append((terms, draw(st.sampled_from([0, 0, 1, 2]))))

    def element(f: int, r: int) -> tuple[int, ...]:
        return tuple(
            sum(c * _digit_value(*d, f) for c, d in terms) + rc * r for terms, rc in dims
        )

    points = [(f, r) for f in range(extent) for r in range(inner)]
    low = [min(element(f, r)[d] for f, r in points) for d in range(ndim)]
    high = [max(element(f, r)[d] for f, r in points) for d in range(ndim)]
    owner: dict[tuple[int, ...], int] = {}
    conflict = False
    for f, r in points:
        seen = owner.setdefault(element(f, r), f)
        conflict = conflict or seen != f

    def expr(kind: str, a: int, b: int | None, f: Any) -> Any:
        if kind == "f":
            return f
        if kind == "div":
            return f // a
        if kind == "mod":
            return f % b
        return f // a % b

    with IRBuilder() as ib:
        with IB.prim_func():
            IB.func_name("digits")
            B = IB.arg("B", IB.Buffer(tuple(h - lo + 1 for lo, h in zip(low, high)), "int32"))
            with IB.parallel(extent) as f, IB.serial(inner) as r:
                index = [
                    sum((c * expr(*d, f) for c, d in terms), rc * r - lo)
                    for (terms, rc), lo in zip(dims, low)
                ]
                IB.buffer_store(B, IB.int32(1), index)
    return ib.get(), conflict


@settings(max_examples=200, deadline=None)
@given(_digit_kernels())
def test_accepted_digit_loops_never_conflict(case: tuple[PrimFunc, bool]) -> None:
    func, conflict = case
    if not find_races(func):
        assert not conflict, func.script()
