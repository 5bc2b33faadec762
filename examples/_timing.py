"""Timing helper shared by the examples: best-of-N time per call, printed beside numpy's."""

from __future__ import annotations

import timeit
from collections.abc import Callable


def best_seconds(call: Callable[[], object], repeat: int = 3, budget: float = 0.01) -> float:
    """The best time of one call over ``repeat`` rounds of about ``budget`` seconds each."""
    timer = timeit.Timer(call)
    number = 1
    while timer.timeit(number) < budget and number < 1_000_000:
        number *= 10
    return min(timer.repeat(repeat, number)) / number


def report(name: str, ours: Callable[[], object], numpy: Callable[[], object]) -> None:
    """Print ``name: tvmscript X, numpy Y`` (results are checked by the caller)."""
    t_ours, t_numpy = best_seconds(ours), best_seconds(numpy)
    print(f"{name}: tvmscript {_fmt(t_ours)}, numpy {_fmt(t_numpy)} "
          f"(numpy / tvmscript = {t_numpy / t_ours:.2f})")


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"
