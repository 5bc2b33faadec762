"""Sampling instructions: perfect tiles of a loop and categorical choices (seeded)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from irbuilder.ir import For, IntImm

from .error import ScheduleError

__all__ = ["TvmRandom", "categorical", "perfect_tile"]


_MODULUS = 2**31 - 1
_MULTIPLIER = 48271


class TvmRandom(random.Random):
    """The schedule's generator: TVM's (the minimal-standard linear congruential engine,
    ``x -> x * 48271 mod (2**31 - 1)``, seeded with ``seed mod (2**31 - 1)``, 0 made 1), so
    that a seed draws the numbers it draws in TVM. ``sample_int`` is TVM's ``SampleInt``
    (libstdc++'s ``uniform_int_distribution``: reject draws at or past the largest multiple
    of the range, then divide); ``random()`` (and so ``choice``, ``randrange``) uses the
    same engine."""

    _state: int

    def __init__(self, seed: int | None = None) -> None:
        self._state = 1
        super().__init__(seed)

    def seed(self, a: object = None, version: int = 2) -> None:
        if a is None:  # TVM draws from std::random_device
            a = random.SystemRandom().randrange(1, _MODULUS)
        value = int(a) % _MODULUS  # type: ignore[call-overload]
        self._state = value if value else 1

    def getstate(self) -> tuple[int]:
        return (self._state,)

    def setstate(self, state: tuple[int]) -> None:  # type: ignore[override]
        self._state = state[0]

    def _next(self) -> int:
        self._state = self._state * _MULTIPLIER % _MODULUS
        return self._state

    def random(self) -> float:
        return (self._next() - 1) / (_MODULUS - 1)

    def sample_int(self, low: int, high: int) -> int:
        """A uniform integer of ``[low, high)``."""
        if high - low <= 1:
            return low
        span = high - low
        scaling = (_MODULUS - 1) // span
        past = span * scaling
        while True:
            drawn = self._next()
            if drawn < past:
                return low + drawn // scaling


def _divisors(value: int) -> list[int]:
    return [d for d in range(1, value + 1) if value % d == 0]


def perfect_tile(
    loop: For,
    n: int,
    max_innermost_factor: int,
    decision: Sequence[int] | None,
    rand: random.Random,
) -> list[int]:
    name = "sample_perfect_tile"
    if not isinstance(loop.extent, IntImm):
        raise ScheduleError(name, "the loop's extent is not a constant")
    if n < 1:
        raise ScheduleError(name, f"n must be at least 1, got {n}")
    extent = loop.extent.value
    if decision is not None:
        chosen = [int(d) for d in decision]
        product = 1
        for d in chosen:
            product *= d
        if len(chosen) != n or product != extent:
            raise ScheduleError(
                name, f"decision {chosen} is not {n} factors whose product is {extent}"
            )
        return chosen
    inner_choices = [d for d in _divisors(extent) if d <= max(1, max_innermost_factor)]
    innermost = rand.choice(inner_choices)
    rest = extent // innermost
    factors: list[int] = []
    for _ in range(n - 2):
        factor = rand.choice(_divisors(rest))
        factors.append(factor)
        rest //= factor
    if n == 1:
        return [extent]
    return [rest, *factors[::-1], innermost] if n > 2 else [rest, innermost]


def categorical(
    candidates: Sequence[int],
    probs: Sequence[float],
    decision: int | None,
    rand: random.Random,
) -> int:
    name = "sample_categorical"
    if len(candidates) != len(probs) or not candidates:
        raise ScheduleError(name, "candidates and probs must be non-empty and of equal length")
    if any(p < 0 for p in probs) or sum(probs) <= 0:
        raise ScheduleError(name, "probabilities must be non-negative with a positive sum")
    if decision is not None:
        if not 0 <= decision < len(candidates):
            raise ScheduleError(name, f"decision {decision} is not an index of the candidates")
        return int(decision)
    pick = rand.random() * sum(probs)
    for k, p in enumerate(probs):
        pick -= p
        if pick < 0:
            return k
    return len(candidates) - 1
