"""Entry checks emitted as one branch pair and a table per buffer (backend/codegen/entry_table.py):
the same errors, in the same order, as the asserts they stand for (the interpreter runs those
asserts one by one), and the asserts the table does not cover still run."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T

TARGET = "llvm -mcpu=znver3"


@T.prim_func
def scale_rows(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32"),
               I: T.Buffer((4,), "int64")):
    for i, j in T.grid(4, 6):
        B[i, j] = A[i, j] * T.Cast("float32", I[i])


@T.prim_func
def add_n(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, 3), "float32")
    B = T.match_buffer(b, (n, 3), "float32")
    for i, j in T.grid(n, 3):
        B[i, j] = A[i, j] + T.float32(1)


@pytest.fixture(scope="module")
def kernels() -> dict[str, tuple[Any, Any]]:
    return {
        f.attrs["global_symbol"]: (tvmscript.build(f, target=TARGET, cache=False),
                                   tvmscript.build(f, target="interp"))
        for f in (scale_rows, add_n)
    }


def _error(call: Callable[[], object]) -> tuple[type[BaseException], str]:
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    return info.type, str(info.value)


def _good() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.ones((4, 6), np.float32), np.zeros((4, 6), np.float32),
            np.arange(4, dtype=np.int64))


BAD_SCALE_ROWS: list[tuple[str, Callable[..., tuple[object, ...]]]] = [
    ("0-d array", lambda a, b, i: (np.ones((), np.float32), b, i)),
    ("ndim", lambda a, b, i: (a.reshape(24), b, i)),
    ("dtype", lambda a, b, i: (a.astype(np.float64), b, i)),
    ("byte order", lambda a, b, i: (a.astype(">f4"), b, i)),
    ("shape[0]", lambda a, b, i: (np.ones((5, 6), np.float32), b, i)),
    ("shape[1]", lambda a, b, i: (a, np.zeros((4, 7), np.float32), i)),
    ("strides", lambda a, b, i: (a, np.zeros((4, 12), np.float32)[:, ::2], i)),
    ("read-only output", lambda a, b, i: (a, _read_only(b), i)),
    ("third buffer", lambda a, b, i: (a, b, i.astype(np.int32))),
    ("two bad, first reported", lambda a, b, i: (a.astype(np.float64), b[:3], i)),
]


def _read_only(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    x.setflags(write=False)
    return x


@pytest.mark.parametrize("case", BAD_SCALE_ROWS, ids=[c[0] for c in BAD_SCALE_ROWS])
def test_table_errors_equal_the_asserts(kernels: dict[str, tuple[Any, Any]],
                                        case: tuple[str, Callable[..., tuple[object, ...]]]) -> None:
    compiled, interpreted = kernels["scale_rows"]
    args = case[1](*_good())
    got = _error(lambda: compiled(*args))
    want = _error(lambda: interpreted(*args))
    assert got == want
    assert got[1].startswith(("A:", "B:", "I:")), got


def test_kernel_module_checks_each_buffer_through_one_table(
        kernels: dict[str, tuple[Any, Any]]) -> None:
    compiled, _ = kernels["scale_rows"]
    ll = compiled.get_source("ll")
    calls = re.findall(r"call i32 @tvms_check_array\(ptr [^,]*%(\w+),", ll)
    assert sorted(calls) == ["A", "B", "I"]
    # ... and still computes.
    a, b, i = _good()
    compiled(a, b, i)
    np.testing.assert_array_equal(b, a * i[:, None].astype(np.float32))


def test_symbolic_extents_keep_their_asserts(kernels: dict[str, tuple[Any, Any]]) -> None:
    compiled, interpreted = kernels["add_n"]
    a = np.ones((5, 3), np.float32)
    b = np.zeros((5, 3), np.float32)
    compiled(a, b)
    np.testing.assert_array_equal(b, a + 1)
    for args in ((a, np.zeros((4, 3), np.float32)), (a, np.zeros((5, 2), np.float32)),
                 (a.astype(np.int32), b), (a[None], b)):
        assert _error(lambda: compiled(*args)) == _error(lambda: interpreted(*args))
    assert "expected shape[0] == n = 5, got 4" in _error(
        lambda: compiled(a, np.zeros((4, 3), np.float32)))[1]


@pytest.mark.skipif(shutil.which("nm") is None, reason="no nm to list the object's symbols")
def test_exported_object_defines_the_table_helper(tmp_path: Path) -> None:
    kernel = tvmscript.build(scale_rows, target=TARGET, cache=False)
    assert "tvms_check_array" in kernel.get_source("ll")
    obj = kernel.export_object(tmp_path / "k.o")
    listing = subprocess.run(["nm", str(obj)], capture_output=True, text=True,
                             check=True).stdout
    kinds = {line.split()[-1]: line.split()[-2] for line in listing.splitlines()}
    assert kinds.get("tvms_check_array") == "t"  # defined, local to the object
