"""``bounds_check=True`` tests each loop nest's affine indices once (lowering.checks.bounds_hoist).

The versioned nest must behave exactly like the per-access checks: same results when every
access is in bounds, and when one is not, the same IndexError message after the same writes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from relkit import bounds_checked_passes, kernel, lower_bounds_checked

import lowering
import tvmscript
from irbuilder import tir as T
from irbuilder.ir import AssertStmt, Call, For, IfThenElse, PrimFunc, StringImm, post_order_visit
from lowering.checks.bounds_hoist import hoist_bounds_checks
from lowering.pass_infra import Sequential

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
from progen import Program, programs


def _matmul(symbolic: bool) -> PrimFunc:
    def body() -> None:
        if symbolic:
            n = T.int32()
            shape: Any = (n, n)
        else:
            n, shape = 64, (64, 64)
        a = T.arg("A", T.Buffer(shape, "float32"))
        b = T.arg("B", T.Buffer(shape, "float32"))
        c = T.arg("C", T.Buffer(shape, "float32"))
        with T.parallel(n) as i:
            with T.serial(n) as j:
                T.buffer_store(c, T.float32(0), [i, j])
            with T.serial(n) as k:
                with T.serial(n) as j:
                    T.buffer_store(c, c[i, j] + a[i, k] * b[k, j], [i, j])

    return kernel("matmul", body)


def _message(check: AssertStmt) -> str:
    """The assert's message text (a format_message's template)."""
    msg = check.message
    text = msg.args[0] if isinstance(msg, Call) else msg
    assert isinstance(text, StringImm)
    return text.value


def _index_asserts(node: Any) -> list[AssertStmt]:
    found: list[AssertStmt] = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, AssertStmt)
                     and _message(n).startswith("IndexError") else None)
    return found


def _unhoisted(func: PrimFunc) -> PrimFunc:
    """The per-access checks only (the reference the versioned nests must match)."""
    with lowering.PassContext(opt_level=3, config={"insert_bounds_checks": {"hoist": False}}):
        return Sequential(bounds_checked_passes(3))(func)


def test_constant_nest_in_bounds_loses_every_assert() -> None:
    func = _matmul(symbolic=False)
    assert _index_asserts(lower_bounds_checked(func).body) == []
    assert len(_index_asserts(_unhoisted(func).body)) == 5
    a, b = (np.random.default_rng(s).random((64, 64), dtype="float32") for s in (1, 2))
    c = np.empty((64, 64), "float32")
    tvmscript.build(func, bounds_check=True)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_symbolic_nest_is_versioned_once_at_its_outermost_loop() -> None:
    lowered = lower_bounds_checked(_matmul(symbolic=True))
    versions: list[IfThenElse] = []
    post_order_visit(lowered.body, lambda n: versions.append(n)
                     if isinstance(n, IfThenElse) and isinstance(n.then_case, For) else None)
    assert len(versions) == 1
    (version,) = versions
    assert _index_asserts(version.then_case) == []
    assert len(_index_asserts(version.else_case)) == 5
    k = tvmscript.build(_matmul(symbolic=True), bounds_check=True)
    for n in (1, 7, 40):
        a, b = (np.random.default_rng(n + s).random((n, n), dtype="float32") for s in (0, 1))
        c = np.empty((n, n), "float32")
        k(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def _shifted_copy() -> PrimFunc:
    def body() -> None:
        n = T.int32()
        a = T.arg("A", T.Buffer((n,), "int32"))
        b = T.arg("B", T.Buffer((n,), "int32"))
        shift = T.arg("shift", T.int32())
        with T.serial(n) as i:
            T.buffer_store(b, a[i + shift] * 2, [i])

    return kernel("shifted", body)


@pytest.mark.parametrize("shift", [-1, 0, 1, 3])
def test_a_failing_nest_raises_the_per_access_error_after_the_same_writes(shift: int) -> None:
    func = _shifted_copy()
    native = tvmscript.build(func, bounds_check=True)
    reference = tvmscript.build(_unhoisted(func), target="interp")
    outcomes = []
    for run in (native, reference):
        a = np.arange(10, dtype="int32")
        b = np.full(10, -7, "int32")
        try:
            run(a, b, shift)
            error = None
        except IndexError as exc:
            error = str(exc)
        outcomes.append((error, b.tolist()))
    assert outcomes[0] == outcomes[1]
    if shift:
        bad = -1 if shift < 0 else 10  # the first access past either end
        assert re.fullmatch(rf"A: index i \+ shift = {bad} out of bounds for shape \(\w+,\)",
                            outcomes[0][0] or "")
    else:
        assert outcomes[0] == (None, [2 * v for v in range(10)])


def test_guarded_access_out_of_range_is_not_reported() -> None:
    # A[i + 1] would be out of bounds at i = n - 1, but the guard skips it there: the range
    # test fails, the checked nest runs, and nothing is raised.
    def body() -> None:
        n = T.int32()
        a = T.arg("A", T.Buffer((n,), "float32"))
        b = T.arg("B", T.Buffer((n,), "float32"))
        with T.serial(n) as i:
            T.buffer_store(b, T.if_then_else(i + 1 < n, a[i + 1], T.float32(0)), [i])

    k = tvmscript.build(kernel("guarded", body), bounds_check=True)
    out = np.empty(5, "float32")
    k(np.arange(5, dtype="float32"), out)
    np.testing.assert_array_equal(out, [1, 2, 3, 4, 0])


def test_data_dependent_index_keeps_its_check_in_the_fast_nest() -> None:
    def body() -> None:
        a = T.arg("A", T.Buffer((16,), "float32"))
        idx = T.arg("I", T.Buffer((8,), "int32"))
        b = T.arg("B", T.Buffer((8,), "float32"))
        with T.serial(8) as i:
            T.buffer_store(b, a[idx[i]], [i])

    func = kernel("gather", body)
    lowered = lower_bounds_checked(func)
    messages = [_message(a) for a in _index_asserts(lowered.body)]
    assert len(messages) == 1 and "A: index I[i]" in messages[0]
    k = tvmscript.build(func, bounds_check=True)
    with pytest.raises(IndexError, match=r"^A: index I\[i\] = 16 out of bounds for shape"):
        k(np.zeros(16, "float32"), np.array([0, 1, 2, 16, 0, 0, 0, 0], "int32"),
          np.zeros(8, "float32"))


def test_running_the_hoister_on_checked_code_twice_changes_nothing_observable() -> None:
    lowered = lower_bounds_checked(_matmul(symbolic=True))
    again = lowered.with_body(hoist_bounds_checks(lowered.body))
    k1 = tvmscript.build(lowered, target="interp")
    k2 = tvmscript.build(again, target="interp")
    a, b = (np.random.default_rng(s).random((5, 5), dtype="float32") for s in (3, 4))
    c1, c2 = np.empty((5, 5), "float32"), np.empty((5, 5), "float32")
    k1(a, b, c1)
    k2(a, b, c2)
    np.testing.assert_array_equal(c1, c2)


@settings(max_examples=60, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_programs_give_the_same_results_checked_and_unchecked(prog: Program) -> None:
    # Every index of a generated program is in bounds: the checked build must compute what
    # the interpreter computes (through the fast copies wherever they were made).
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in prog.args()]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in prog.args()]
    errors = []
    for run, args in ((tvmscript.build(prog.func, target="interp"), want),
                      (tvmscript.build(prog.func, bounds_check=True), got)):
        try:
            with np.errstate(all="ignore"):
                run(*args)
            errors.append(None)
        except ArithmeticError as exc:
            errors.append(type(exc).__name__)
    assert errors[0] == errors[1], prog.func.script()
    if errors[0] is None:
        for w, g in zip(want, got):
            if isinstance(w, np.ndarray):
                tol = 1e-3 if w.dtype.kind == "f" else 0
                assert np.allclose(g.astype("float64"), w.astype("float64"), rtol=tol,
                                   atol=tol, equal_nan=True), prog.func.script()
