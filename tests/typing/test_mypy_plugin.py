"""Kernels type-check with ``mypy --strict`` and tvmscript.mypy_plugin; mistakes are located.

mypy runs once (a subprocess, its own cache) over a few kernel files; each test reads its
part of the report.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parents[2]

GOOD = '''
from __future__ import annotations

from typing import Any

import numpy as np

import tvmscript
from tvmscript import tir as T


@T.prim_func
def matmul(
    A: T.Buffer((128, 128), "float32"),
    B: T.Buffer((128, 128), "float32"),
    C: T.Buffer((128, 128), "float32"),
) -> None:
    for i, j, k in T.grid(128, 128, 128):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def scale(n: T.int32, A: T.Buffer((n,), "float32"), s: T.float32) -> None:  # noqa: F821
    for i in range(n):
        A[i] = T.exp(A[i]) * s + T.max(A[i], T.float32(0))
    for i in T.serial(n):
        if i > 2:
            A[i] = T.sqrt(A[i])


def helper(buf: Any, i: Any) -> Any:
    return buf[i] + T.float32(1)


@T.prim_func(capture=[helper])
def uses_helper(A: T.Buffer((8,), "float32")) -> None:
    for i in range(8):
        A[i] = helper(A, i)


@T.prim_func
def tensors(A: T.Buffer((8,), "float32")) -> tuple[T.Buffer, T.Buffer]:
    D = T.compute((8,), lambda i: A[i] * T.float32(2))
    E = T.compute((8,), lambda i: D[i] + T.float32(1))
    return D, E


@T.prim_func
def views_and_meta(A: T.Buffer((6,), "float32"), B: T.Buffer((2,), "float32")) -> None:
    M = T.decl_buffer((2, 3), "float32", data=A.data)
    k = T.int32()
    three = T.meta_var(3)
    for i in range(2):
        B[i] = T.reduce("sum", M[i, k], axis=[T.iter_var(k, T.Range(0, three), "CommReduce", "")])


def constants() -> T.PrimExpr:
    kind: T.CallKind = T.CallKind.EXTERN
    assert isinstance(T.int32(), T.Var) and kind.value == "extern"
    return T.const(1, T.as_dtype("int8")) + T.convert(2)


def run() -> None:
    kernel = tvmscript.build(scale)
    a = np.ones(16, "float32")
    kernel(16, a, 2.0)
    d, e = tvmscript.build(tensors)(a[:8])
'''

BAD = '''
from tvmscript import tir as T


@T.prim_func
def wrong(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")) -> None:
    for i in range(16):
        B[i] = T.exp(A[i], A[i])
        B[i] = T.max(A[i])
        B[i] = T.sqrt(A[i], approx=True)


@T.prim_func
def bad_buffers(
    A: T.Buffer((16,), "flaot32"),
    B: T.Buffer((16,), "float32", scpoe="global"),
    C: T.Buffer("16", "float32"),
) -> None:
    for i in range(16):
        C[i] = A[i] + B[i]
'''


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[int, str]]]:
    folder = tmp_path_factory.mktemp("typing")
    (folder / "good_kernels.py").write_text(textwrap.dedent(GOOD))
    (folder / "bad_kernels.py").write_text(textwrap.dedent(BAD))
    (folder / "mypy.ini").write_text(
        "[mypy]\nstrict = True\nplugins = tvmscript.mypy_plugin\n"
        "[mypy-llvmlite.*]\nignore_missing_imports = True\n"
    )
    env = {**os.environ, "MYPYPATH": str(ROOT), "PYTHONPATH": str(ROOT)}

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir",
             str(folder / "cache"), "--no-error-summary", "good_kernels.py", "bad_kernels.py"],
            cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False,
        )

    done = run()
    assert "INTERNAL ERROR" not in done.stdout + done.stderr, done.stdout + done.stderr
    # Incremental: a second run from mypy's cache reports exactly the same.
    assert run().stdout == done.stdout
    lines: dict[str, list[tuple[int, str]]] = {"good_kernels.py": [], "bad_kernels.py": []}
    for line in done.stdout.splitlines():
        match = re.match(r"(\w+\.py):(\d+): error: (.*?)(  \[[\w-]+\])?$", line)
        if match:
            lines.setdefault(match[1], []).append((int(match[2]), match[3]))
    return lines


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in line)


def test_kernels_pass_strict_mypy(report: dict[str, list[tuple[int, str]]]) -> None:
    assert report["good_kernels.py"] == []


def test_wrong_t_arguments_are_errors_on_their_line(
    report: dict[str, list[tuple[int, str]]],
) -> None:
    errors = report["bad_kernels.py"]
    exp_line = _line_of(BAD, "T.exp(A[i], A[i])")
    assert any(line == exp_line and msg.startswith("Too many") and 'arguments for "exp"' in msg
               for line, msg in errors)
    max_line = _line_of(BAD, "T.max(A[i])")
    assert any(line == max_line and "Missing positional argument" in msg for line, msg in errors)
    kw_line = _line_of(BAD, "approx=True")
    assert any(line == kw_line and 'Unexpected keyword argument "approx"' in msg
               for line, msg in errors), errors


def test_buffer_annotation_mistakes_are_errors_on_their_line(
    report: dict[str, list[tuple[int, str]]],
) -> None:
    errors = report["bad_kernels.py"]
    assert (_line_of(BAD, '"flaot32"'), 'T.Buffer() unknown dtype "flaot32"') in errors
    assert (_line_of(BAD, "scpoe="), 'T.Buffer() got an unexpected keyword argument "scpoe"') \
        in errors
    assert (_line_of(BAD, 'T.Buffer("16"'),
            "T.Buffer() shape must be a tuple of dimensions, not str") in errors
