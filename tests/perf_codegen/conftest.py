"""Make ``benchmarks`` (the suite's IRBuilder kernels) and ``stream_checks`` importable; the
``small_streams`` fixture of the streaming-store tests."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[2])
_HERE = str(Path(__file__).resolve().parent)  # stream_checks, under --import-mode=importlib
for _path in (_ROOT, _HERE):
    if _path not in sys.path:
        sys.path.insert(0, _path)


@pytest.fixture
def small_streams(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every write-only parameter array of 64 bytes or more streams (the real thresholds,
    16 MiB and 48 MiB in all, would make the tests slow), with no build cached across the
    change."""
    import lowering.late.align_streams as align
    import tvmscript

    monkeypatch.setattr(align, "STREAMING_MIN_BYTES", 64)
    monkeypatch.setattr(align, "STREAMING_MIN_FOOTPRINT", 64)
    tvmscript.clear_build_cache()
    yield
    tvmscript.clear_build_cache()
