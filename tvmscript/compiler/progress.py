"""Progress of long builds: ``build(..., progress=True)`` or ``TVMSCRIPT_PROGRESS=1``.

A build that is still running after ``threshold`` seconds (1 s) starts reporting on standard
error: what it is doing at that moment, then every lowering pass and LLVM phase as it ends,
then a summary. Shorter builds print nothing. The same phase times reach ``PassContext``
instruments that have an ``after_phase(name, seconds)`` method (``lowering.TimePasses``), so a
timing report covers LLVM's optimisation and machine-code generation as well as our passes.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from irbuilder.ir import IRModule, PrimFunc

__all__ = ["BuildProgress", "progress_requested"]

_PREFIX = "[tvmscript]"

THRESHOLD = 1.0
"""Seconds a build runs before it starts reporting."""


def progress_requested(option: object) -> bool:
    """``progress=None`` follows ``TVMSCRIPT_PROGRESS``; otherwise it must be a bool."""
    if option is None:
        flag = os.environ.get("TVMSCRIPT_PROGRESS", "").strip().lower()
        return flag not in ("", "0", "false", "no", "off")
    if not isinstance(option, bool):
        raise TypeError(f"build(): option progress must be a bool or None, got {option!r}")
    return option


class BuildProgress:
    """Phase bookkeeping for one build; a pass instrument for the lowering pipeline too."""

    def __init__(
        self,
        name: str,
        *,
        report: bool,
        instruments: Sequence[Any] = (),
        threshold: float | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.name = name
        self.report = report
        self.instruments = tuple(instruments)
        self.threshold = THRESHOLD if threshold is None else threshold
        self.stream = stream
        self.totals: dict[str, float] = {}
        self._current = "lowering"
        self._started = time.perf_counter()
        self._reporting = False
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        if report:
            self._timer = threading.Timer(self.threshold, self._cross_threshold)
            self._timer.daemon = True
            self._timer.start()

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(f"{_PREFIX} {text}\n")
        stream.flush()

    def _cross_threshold(self) -> None:
        with self._lock:
            if self._timer is None:  # finished meanwhile
                return
            self._reporting = True
            elapsed = time.perf_counter() - self._started
            self._write(f"building {self.name!r}: {elapsed:.1f} s so far, in {self._current}")

    def _ended(self, name: str, seconds: float, group: str) -> None:
        self.totals[group] = self.totals.get(group, 0.0) + seconds
        with self._lock:
            if self._reporting:
                self._write(f"  {name}: {seconds * 1e3:.1f} ms")

    # -- lowering pass instrument ---------------------------------------------------------
    def before_pass(self, name: str, ir: PrimFunc | IRModule) -> None:
        self._current = f"pass {name}"

    def after_pass(self, name: str, ir: PrimFunc | IRModule, seconds: float) -> None:
        if name in ("default_pipeline", "build_pipeline"):
            return  # the whole sequence: its passes were counted one by one
        self._ended(f"pass {name}", seconds, "lowering passes")

    # -- build and LLVM phases ------------------------------------------------------------
    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a build phase (``codegen``, ``llvm-optimize``, ``llvm-codegen`` ...)."""
        self._current = name
        start = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - start
            self._ended(name, seconds, name)
            for instrument in self.instruments:
                after_phase = getattr(instrument, "after_phase", None)
                if after_phase is not None:
                    after_phase(name, seconds)

    def finish(self) -> None:
        """Stop the timer; print the summary when the build was reported."""
        with self._lock:
            timer, self._timer = self._timer, None
            reporting = self._reporting
        if timer is not None:
            timer.cancel()
        if reporting:
            elapsed = time.perf_counter() - self._started
            parts = ", ".join(f"{k} {v:.2f} s" for k, v in self.totals.items())
            self._write(f"built {self.name!r} in {elapsed:.2f} s ({parts})")
