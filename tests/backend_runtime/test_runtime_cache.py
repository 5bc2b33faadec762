"""The runtime's own libraries (the thread pool) come from the disk cache even when kernels
are built with ``cache=False``; ``TVMSCRIPT_CACHE=0`` turns that off too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.runtime.engine import runtime_cache_enabled

ROOT = Path(__file__).resolve().parents[2]

# A parallel kernel built with cache=False, run, checked; prints where the pool came from.
_CHILD = """
import json, sys
import numpy as np
import tvmscript
from tvmscript import tir as T
from backend.runtime import threadpool
from backend.runtime.engine import compile_stats

@T.prim_func
def double(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        B[i] = A[i] * T.float32(2)

kernel = tvmscript.build(double, cache=False)
a = np.arange(4096, dtype=np.float32)
b = np.zeros_like(a)
kernel(a, b)
assert np.array_equal(b, 2 * a)
print(json.dumps({"pool_from_cache": threadpool.pool_library().from_cache,
                  "stats": compile_stats()}))
"""


def _child(env: dict[str, str], tmp: Path) -> dict[str, object]:
    script = tmp / "child.py"  # a file: the parser reads the kernel's source
    script.write_text(_CHILD)
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    full.pop("TVMSCRIPT_CACHE", None)
    full.update(env)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=full, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_pool_cached_across_processes_under_cache_false(tmp_path: Path) -> None:
    env = {"TVMSCRIPT_CACHE_DIR": str(tmp_path)}
    first = _child(env, tmp_path.parent)
    assert first["pool_from_cache"] is False
    # Only the pool was written: the kernel was built with cache=False.
    assert len(list(tmp_path.glob("*.tvmo"))) == 1
    second = _child(env, tmp_path.parent)
    assert second["pool_from_cache"] is True
    assert len(list(tmp_path.glob("*.tvmo"))) == 1


def test_pool_cache_off_when_the_environment_says_so(tmp_path: Path) -> None:
    env = {"TVMSCRIPT_CACHE_DIR": str(tmp_path), "TVMSCRIPT_CACHE": "0"}
    assert _child(env, tmp_path.parent)["pool_from_cache"] is False
    assert _child(env, tmp_path.parent)["pool_from_cache"] is False
    assert not list(tmp_path.glob("*.tvmo"))


def test_pool_cache_entry_is_keyed_by_its_ir(tmp_path: Path) -> None:
    # A stale entry (same file name scheme, other IR) is never loaded: the key hashes the IR.
    env = {"TVMSCRIPT_CACHE_DIR": str(tmp_path)}
    _child(env, tmp_path.parent)
    (entry,) = tmp_path.glob("*.tvmo")
    entry.write_bytes(b"not an object")
    # A corrupt entry under the right key is rejected by its checksum and rebuilt.
    again = _child(env, tmp_path.parent)
    assert again["pool_from_cache"] is False
    assert _child(env, tmp_path.parent)["pool_from_cache"] is True


@pytest.mark.parametrize(("flag", "expected"), [("", True), ("1", True), ("0", False),
                                                 ("off", False)])
def test_runtime_cache_flag(monkeypatch: pytest.MonkeyPatch, flag: str, expected: bool) -> None:
    monkeypatch.setenv("TVMSCRIPT_CACHE", flag)
    assert runtime_cache_enabled() is expected
