"""Build tests never touch the user's cache directory; the disk cache is off unless asked."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TVMSCRIPT_CACHE_DIR", str(tmp_path / "tvms-cache"))
    monkeypatch.setenv("TVMSCRIPT_CACHE", "0")
    yield
