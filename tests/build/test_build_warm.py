"""The warm path: a parsed kernel (and the thread pool) served from the disk cache in a fresh
process, the cache switch scope, and the definition-block finder the parser uses."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tvmscript
from backend.runtime.engine import cache_enabled, cache_scope
from tvmscript.parser.core.source import Source, _definition_lines

ROOT = Path(tvmscript.__file__).resolve().parent.parent

_PARSED = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, {root!r})
    import numpy as np
    import tvmscript
    from tvmscript import tir as T
    from tvmscript.compiler.build import build_cache_info
    from backend.runtime import compile_stats

    @T.prim_func
    def add(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for i in range(n):
            C[i] = A[i] + B[i]

    @T.prim_func
    def scale(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in T.parallel(n):
            B[i] = A[i] * T.float32(3)

    k = tvmscript.build(add, cache={cache})
    a = np.arange(7, dtype="float32"); c = np.empty_like(a); k(a, a, c)
    p = tvmscript.build(scale, cache={cache})
    x = np.arange(5000, dtype="float32"); y = np.empty_like(x); p(x, y)
    print(json.dumps({{
        "sum": c.tolist(), "scaled": bool((y == 3 * x).all()),
        "from_cache": [k.from_cache, p.from_cache],
        "disk_hits": build_cache_info()["disk_hits"],
        "cold_compiles": compile_stats()["cold_compiles"],
    }}))
''')


def _run_parsed(tmp_path: Path, env: dict[str, str], cache: bool) -> dict[str, object]:
    import json

    script = tmp_path / "kernels.py"  # a real file: the parser reads the kernel's source
    script.write_text(_PARSED.format(root=str(ROOT), cache=cache))
    base = {k: v for k, v in os.environ.items() if not k.startswith("TVMSCRIPT_CACHE")}
    proc = subprocess.run([sys.executable, str(script)], env={**base, **env},
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_parsed_kernels_and_thread_pool_come_from_disk_in_a_fresh_process(tmp_path: Path) -> None:
    # No TVMSCRIPT_CACHE_DIR: build(cache=True) alone must also cover the thread pool, which
    # compiles lazily with cache=None when the parallel kernel is linked.
    env = {"HOME": str(tmp_path)}
    first = _run_parsed(tmp_path, env, cache=True)
    assert first["sum"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
    assert first["scaled"] is True
    assert first["from_cache"] == [False, False]
    assert first["cold_compiles"] == 4  # two kernels, the pool and the shared error helpers
    cache_dir = tmp_path / ".cache" / "tvmscript"
    assert len(list(cache_dir.glob("b-*.tvmb"))) == 2
    second = _run_parsed(tmp_path, env, cache=True)
    assert second["sum"] == first["sum"] and second["scaled"] is True
    assert second["from_cache"] == [True, True]
    assert second["disk_hits"] == 2
    assert second["cold_compiles"] == 0  # not even the thread pool or the helpers


def test_cache_false_keeps_the_thread_pool_off_disk(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "TVMSCRIPT_CACHE": "1"}
    result = _run_parsed(tmp_path, env, cache=False)
    assert result["scaled"] is True and result["from_cache"] == [False, False]
    assert not list((tmp_path / ".cache").rglob("*.tvm*"))


def test_cache_scope_decides_cache_none_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TVMSCRIPT_CACHE", "0")
    assert cache_enabled(None) is False
    with cache_scope(True):
        assert cache_enabled(None) is True
        assert cache_enabled(False) is False  # an explicit argument still wins
        with cache_scope(False):
            assert cache_enabled(None) is False
        assert cache_enabled(None) is True
    assert cache_enabled(None) is False  # restored, also after an exception:
    with pytest.raises(RuntimeError), cache_scope(True):
        raise RuntimeError("boom")
    assert cache_enabled(None) is False


# ------------------------------------------------------------- definition block finder


def _decorated(func: object) -> object:
    return func


def plain(a: int) -> int:
    b = a + 1
    return (
        b
        * 2
)


@_decorated
def with_decorator(a: int) -> int:
    return a


def ends_with_dead_code(a: int) -> int:
    return a
    a = a + 1  # type: ignore[unreachable]  # dropped by the compiler, still in the block
    print(a)


def ends_with_pass(a: int) -> None:
    print(a)
    pass


def outer() -> object:
    def inner(x: int) -> int:
        # comment
        y = [i for i in range(x)]
        return len(y)

    # a comment less indented than inner's body ends nothing by itself
    return inner


def _inspect_lines(func: object) -> tuple[tuple[str, ...], int]:
    lines, first = inspect.getsourcelines(func)  # type: ignore[arg-type]
    return tuple(line.rstrip("\r\n") for line in lines), first


@pytest.mark.parametrize(
    "func", [plain, with_decorator, ends_with_dead_code, ends_with_pass, outer, outer()],
    ids=["plain", "decorator", "dead-code", "pass", "outer", "nested"],
)
def test_source_of_a_function_equals_inspect(func: object) -> None:
    source = Source.from_object(func)
    assert (source.lines, source.first_line) == _inspect_lines(func)


def test_quick_block_is_used_when_sure_and_declined_otherwise() -> None:
    filename = inspect.getsourcefile(plain)
    assert filename is not None
    if sys.version_info < (3, 11):  # no end lines in code objects: always inspect's way
        assert _definition_lines(plain, filename) is None  # type: ignore[arg-type]
        return
    for func in (plain, with_decorator, outer, outer()):
        quick = _definition_lines(func, filename)  # type: ignore[arg-type]
        assert quick is not None
        lines, first = _inspect_lines(func)
        assert (tuple(x.rstrip("\n") for x in quick[0]), quick[1]) == (lines, first)
    # Trailing statements the compiler dropped are indented deeper: the finder declines.
    assert _definition_lines(ends_with_dead_code, filename) is None  # type: ignore[arg-type]
