"""Make ``late_kit`` importable (``--import-mode=importlib``); the ``small_streams`` fixture."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def small_streams(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every write-only parameter array of 64 bytes or more is a stream (the real thresholds,
    16 MiB and 48 MiB in all, would make the tests slow)."""
    import lowering.late.align_streams as align
    import tvmscript

    monkeypatch.setattr(align, "STREAMING_MIN_BYTES", 64)
    monkeypatch.setattr(align, "STREAMING_MIN_FOOTPRINT", 64)
    tvmscript.clear_build_cache()
    yield
    tvmscript.clear_build_cache()
