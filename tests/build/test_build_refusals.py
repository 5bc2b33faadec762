"""build() refusals about the user's program or options show no compiler frames, and the
entry checks a Python-callable kernel relies on cannot be switched off."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvmscript
from lowering import PassContext
from tvmscript import tir as T


@T.prim_func
def gpu_loop(A: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="threadIdx.x"):
        A[i] = T.float32(1)


@T.prim_func
def racy(H: T.Buffer((4,), "int32")):
    for i in T.parallel(4):
        H[0] = H[0] + i


@T.prim_func
def fill(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.float32(1)


def _frames(call: Callable[[], Any], kind: type[Exception]) -> list[str]:
    with pytest.raises(kind) as info:
        call()
    return [frame.filename for frame in traceback.extract_tb(info.value.__traceback__)]


@pytest.mark.parametrize(
    ("call", "kind", "text"),
    [
        (lambda: tvmscript.build(gpu_loop), ValueError, "T.thread_binding"),
        (lambda: tvmscript.build(racy), tvmscript.DiagnosticError, "data race on buffer 'H'"),
        (lambda: tvmscript.build(fill, fast_math=True), TypeError, "unknown option(s): fast_math"),
        (lambda: tvmscript.build(fill, opt_level=7), ValueError, "opt_level must be 0..3"),
    ],
)
def test_refusals_show_only_the_public_entry(
    call: Callable[[], Any], kind: type[Exception], text: str
) -> None:
    frames = _frames(call, kind)
    package = Path(tvmscript.__file__).parent
    ours = [f for f in frames if Path(f).is_relative_to(package.parent) and f != __file__]
    # only the public build() itself, which re-raises: no lowering/backend/compiler frames
    assert [Path(f).relative_to(package.parent).as_posix() for f in ours] == [
        "tvmscript/__init__.py"
    ]
    with pytest.raises(kind, match=None) as info:
        call()
    assert text in str(info.value)


def test_internal_errors_keep_their_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    import tvmscript.compiler.build as build_module

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("internal failure")

    monkeypatch.setattr(build_module, "_build_llvm", broken)
    frames = _frames(lambda: tvmscript.build(fill, cache=False), RuntimeError)
    assert any(f.endswith("compiler/build.py") for f in frames)


@pytest.mark.parametrize("spelling", ["insert_entry_checks", "insert-entry-checks"])
def test_entry_checks_cannot_be_disabled_for_a_python_kernel(spelling: str) -> None:
    with PassContext(disabled_passes={spelling}):
        with pytest.raises(ValueError, match="insert_entry_checks cannot be disabled"):
            tvmscript.build(fill)
        # the interpreter checks arguments itself
        out = np.zeros(4, "float32")
        tvmscript.build(fill, target="interp")(out)
    np.testing.assert_array_equal(out, np.ones(4, "float32"))
