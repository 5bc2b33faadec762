"""Running one generated program through the interpreter and LLVM, and comparing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from progen import Program
from progen_parallel import ParallelProgram

import lowering
import tvmscript
from irbuilder.ir import PrimFunc
from tvmscript.diagnostics import DiagnosticError

__all__ = ["Outcome", "check_parallel_program", "check_program", "compare", "is_race_refusal",
           "run_both"]


@dataclass
class Outcome:
    """The arrays after a run, or the exception type it raised."""

    arrays: list[Any] | None
    error: str | None


def _run(kernel: Any, args: list[Any]) -> Outcome:
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        with np.errstate(all="ignore"):
            kernel(*copies)
    except (ZeroDivisionError, ArithmeticError) as exc:
        return Outcome(None, type(exc).__name__)
    return Outcome(copies, None)


def run_both(func: PrimFunc, args: list[Any], opt_level: int = 3) -> tuple[Outcome, Outcome]:
    """(interpreter outcome, LLVM outcome) on copies of ``args``."""
    interp = _run(tvmscript.build(func, target="interp"), args)
    native = _run(tvmscript.build(func, opt_level=opt_level), args)
    return interp, native


def compare(want: Outcome, got: Outcome, inexact: bool) -> str | None:
    """None when the outcomes agree; else a description of the first difference."""
    if want.error or got.error:
        if want.error != got.error:
            return f"interp raised {want.error}, llvm raised {got.error}"
        return None
    assert want.arrays is not None and got.arrays is not None
    for i, (w, g) in enumerate(zip(want.arrays, got.arrays)):
        if not isinstance(w, np.ndarray):
            continue
        if w.dtype.kind == "f":
            rtol = {2: 1e-3, 4: 1e-5, 8: 1e-12}[w.dtype.itemsize]
            if inexact:  # transcendental intrinsics: vector libm vs numpy, maybe in float32
                rtol = max(rtol * 10, 1e-4 if w.dtype.itemsize == 4 else 1e-6)
            atol = rtol
            if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                return f"arg {i}: float mismatch\ninterp={w!r}\nllvm  ={g!r}"
        elif not np.array_equal(g, w):
            # an integer cast of a transcendental result may move by one when the vector
            # library and the interpreter round that result an ulp apart
            if inexact and w.dtype.kind in "iu" and np.allclose(
                g.astype(np.float64), w.astype(np.float64), rtol=1e-4, atol=1
            ):
                continue
            return f"arg {i}: int mismatch\ninterp={w!r}\nllvm  ={g!r}"
    return None


DEAD_TRAP_REMOVALS = [0]
"""Programs whose only difference was a division by zero in a computation whose result is
never observed (e.g. a store to a scratch buffer nobody reads), which lowering removed.
Documented semantics: an integer division by zero raises ZeroDivisionError when its
result is used; unobserved computations may be deleted (as in C and TVM).
tests/fuzz/test_regressions.py checks that *live* trapping divisions are kept."""


def _dead_trap_removed(want: Outcome, got: Outcome, lowered: PrimFunc,
                       prog: Program | ParallelProgram) -> bool:
    """Whether the only difference is a trapping division whose result is never observed,
    which lowering removed: accepted only when the interpreter on the *lowered* IR agrees
    with LLVM exactly (the division was removed as dead code, not mis-compiled)."""
    if want.error not in ("ZeroDivisionError", "OverflowError") or got.error is not None:
        return False
    after = _run(tvmscript.build(lowered, target="interp"), prog.args())
    if compare(after, got, prog.inexact) is not None:
        return False
    DEAD_TRAP_REMOVALS[0] += 1
    return True


def check_program(prog: Program, opt_level: int = 3) -> None:
    """Assert the verifier accepts every stage and LLVM agrees with the interpreter.

    The native build verifies its own lowering after every pass (``verify=True``), so the
    program is lowered once; the lowered IR is made again only to judge a difference."""
    want = _run(tvmscript.build(prog.func, target="interp"), prog.args())
    got = _run(tvmscript.build(prog.func, opt_level=opt_level, verify=True), prog.args())
    problem = compare(want, got, prog.inexact)
    if problem is not None and _dead_trap_removed(want, got, _lowered(prog, opt_level), prog):
        return
    if problem is not None:
        raise AssertionError(f"{problem}\nprogram:\n{prog.func.script()}\nseed={prog.arg_seed}")


def _lowered(prog: Program | ParallelProgram, opt_level: int) -> PrimFunc:
    lowered = lowering.lower(prog.func, opt_level=opt_level)
    assert isinstance(lowered, PrimFunc)
    return lowered


def is_race_refusal(exc: BaseException) -> bool:
    """Whether a build error is the static race check refusing a parallel loop."""
    return isinstance(exc, DiagnosticError) and "race" in str(exc).lower()


def check_parallel_program(prog: ParallelProgram, opt_level: int = 3, runs: int = 3) -> None:
    """A planted race is refused when building; a race-free program builds, and every one of
    ``runs`` native calls (on all cores) agrees with the interpreter."""
    try:  # verify=True: the verifier accepts every stage of the lowering
        native = tvmscript.build(prog.func, opt_level=opt_level, verify=True)
    except DiagnosticError as exc:
        if not is_race_refusal(exc):
            raise
        if prog.racy:
            return
        raise AssertionError(f"race-free program refused:\n{exc}\nprogram:\n"
                             f"{prog.func.script()}") from None
    if prog.racy:
        raise AssertionError(f"planted race {prog.notes} was not refused\nprogram:\n"
                             f"{prog.func.script()}")
    want = _run(tvmscript.build(prog.func, target="interp"), prog.args())
    for attempt in range(runs):
        got = _run(native, prog.args())
        problem = compare(want, got, prog.inexact)
        if problem is not None and _dead_trap_removed(want, got, _lowered(prog, opt_level), prog):
            return
        if problem is not None:
            raise AssertionError(f"run {attempt + 1} of {runs}: {problem}\nprogram:\n"
                                 f"{prog.func.script()}\nseed={prog.arg_seed}")
