"""On-disk object cache: warm loads skip LLVM optimisation and still work."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rt_kernels import saxpy_ir

from backend.abi.pyentry import make_builtin
from backend.runtime import cache_enabled, compile_ir, compile_stats, optimize_count

TWICE = "define i64 @twice(i64 %x) {\n  %y = shl i64 %x, 1\n  ret i64 %y\n}\n"


def test_a_codegen_level_of_its_own_is_a_separate_entry(tmp_path: Path) -> None:
    # the thread pool's library: IR optimised at O2, machine code at level 0
    ir, spec = saxpy_ir()
    fast_emit = compile_ir(ir, name="saxpy", cache=True, cache_dir=tmp_path, opt_level=2,
                           codegen_opt_level=0)
    usual = compile_ir(ir, name="saxpy", cache=True, cache_dir=tmp_path, opt_level=2)
    assert not fast_emit.from_cache and not usual.from_cache  # two keys, two entries
    assert len(list(tmp_path.glob("*.tvmo"))) == 2
    again = compile_ir(ir, name="saxpy", cache=True, cache_dir=tmp_path, opt_level=2,
                       codegen_opt_level=0)
    assert again.from_cache and again.object_bytes == fast_emit.object_bytes
    fn = make_builtin(fast_emit, spec, "saxpy_kernel")
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    fn(x, x, out, 2.0, 8)
    np.testing.assert_array_equal(out, 3 * x)


def test_second_compile_loads_from_disk(tmp_path: Path) -> None:
    ir, spec = saxpy_ir()
    first = compile_ir(ir, name="saxpy", cache=True, cache_dir=tmp_path)
    assert not first.from_cache
    files = list(tmp_path.glob("*.tvmo"))
    assert len(files) == 1
    assert not list(tmp_path.glob("*.tmp"))  # atomic write left no temporary behind

    runs, hits = optimize_count(), compile_stats()["cache_hits"]
    second = compile_ir(ir, name="saxpy", cache=True, cache_dir=tmp_path)
    assert second.from_cache
    assert optimize_count() == runs  # no LLVM optimisation ran
    assert compile_stats()["cache_hits"] == hits + 1
    assert second.object_bytes == first.object_bytes
    assert second.llvm_ir == first.llvm_ir
    assert "saxpy_kernel" in second.asm

    fn = make_builtin(second, spec, "saxpy_kernel")
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    fn(x, x, out, 3.0, 8)
    np.testing.assert_array_equal(out, 4 * x)
    with pytest.raises(TypeError, match="argument 'out'"):
        fn(x, x, None, 3.0, 8)  # runtime symbols were re-bound on the warm load


def test_env_var_enables_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVMSCRIPT_CACHE_DIR", str(tmp_path / "c"))
    assert cache_enabled(None)
    compile_ir(TWICE)
    assert compile_ir(TWICE).from_cache
    assert len(list((tmp_path / "c").glob("*.tvmo"))) == 1
    assert not compile_ir(TWICE, cache=False).from_cache
    monkeypatch.setenv("TVMSCRIPT_CACHE", "0")
    assert not cache_enabled(None)
    monkeypatch.delenv("TVMSCRIPT_CACHE_DIR")
    monkeypatch.setenv("TVMSCRIPT_CACHE", "1")
    assert cache_enabled(None)


def test_key_depends_on_options(tmp_path: Path) -> None:
    compile_ir(TWICE, cache=True, cache_dir=tmp_path, opt_level=3)
    assert not compile_ir(TWICE, cache=True, cache_dir=tmp_path, opt_level=1).from_cache
    assert not compile_ir(TWICE, cache=True, cache_dir=tmp_path, fastmath=True).from_cache
    assert not compile_ir(TWICE + "\n", cache=True, cache_dir=tmp_path).from_cache
    assert len(list(tmp_path.glob("*.tvmo"))) == 4


def test_corrupt_entry_is_recompiled(tmp_path: Path) -> None:
    compile_ir(TWICE, cache=True, cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.tvmo")
    blob = bytearray(entry.read_bytes())
    blob[-40] ^= 0xFF  # flip a byte inside the object code / IR
    entry.write_bytes(bytes(blob[: len(blob) // 2]))  # and truncate
    lib = compile_ir(TWICE, cache=True, cache_dir=tmp_path)
    assert not lib.from_cache
    assert ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(lib.address("twice"))(4) == 8
    assert compile_ir(TWICE, cache=True, cache_dir=tmp_path).from_cache  # rewritten


def test_unwritable_cache_dir_warns_but_compiles(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.warns(RuntimeWarning, match="could not write object cache"):
        lib = compile_ir(TWICE, cache=True, cache_dir=blocker / "sub")
    assert ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(lib.address("twice"))(1) == 2


_CHILD = """
import sys, numpy as np
sys.path.insert(0, sys.argv[2])
from rt_kernels import saxpy_ir
from backend.abi.pyentry import make_builtin
from backend.runtime import compile_ir
ir, spec = saxpy_ir()
lib = compile_ir(ir, name="saxpy", cache=True, cache_dir=sys.argv[1])
fn = make_builtin(lib, spec, "saxpy_kernel")
x = np.arange(4, dtype=np.float32); out = np.zeros(4, np.float32)
fn(x, x, out, 1.0, 4)
assert (out == 2 * x).all()
print("hit" if lib.from_cache else "miss")
"""


def test_cache_is_reusable_across_processes(tmp_path: Path) -> None:
    """Objects contain no process-specific addresses: a fresh interpreter reuses them."""
    here = str(Path(__file__).parent)
    runs = [
        subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path), here], capture_output=True,
                       text=True, timeout=120, check=False)
        for _ in range(2)
    ]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert [r.stdout.strip() for r in runs] == ["miss", "hit"]
