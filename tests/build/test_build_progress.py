"""build(..., progress=True) / TVMSCRIPT_PROGRESS and the timing of LLVM phases."""

from __future__ import annotations

import re

import pytest

import tvmscript
from lowering import PassContext, TimePasses
from tvmscript import tir as T
from tvmscript.compiler import progress as build_progress


def _kernel(scale: float) -> object:
    # A fresh constant per test: the in-memory build cache must not answer.
    @T.prim_func
    def axpy(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")) -> None:
        for i in range(64):
            B[i] = A[i] * T.float32(scale) + B[i]

    return axpy


def test_progress_reports_passes_and_llvm_phases_after_the_threshold(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(build_progress, "THRESHOLD", 0.0)  # every build is "long"
    tvmscript.build(_kernel(1.25), cache=False, progress=True)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("[tvmscript]")]
    assert lines[0].startswith("[tvmscript] building 'axpy': ")
    text = "\n".join(lines)
    for step in ("pass lower_blocks", "pass flatten_buffer", "codegen", "llvm-optimize",
                 "llvm-codegen"):
        assert re.search(rf"\[tvmscript\]   {step}: [\d.]+ ms", text), (step, text)
    assert re.search(r"built 'axpy' in [\d.]+ s \(lowering passes [\d.]+ s, codegen", lines[-1])


def test_short_builds_print_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    tvmscript.build(_kernel(1.5), cache=False, progress=True)
    assert "[tvmscript]" not in capsys.readouterr().err


def test_environment_variable_turns_it_on_and_the_option_off(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(build_progress, "THRESHOLD", 0.0)
    monkeypatch.setenv("TVMSCRIPT_PROGRESS", "1")
    tvmscript.build(_kernel(1.75), cache=False)
    assert "[tvmscript] built 'axpy'" in capsys.readouterr().err
    tvmscript.build(_kernel(2.25), cache=False, progress=False)
    assert "[tvmscript]" not in capsys.readouterr().err


def test_progress_option_is_checked() -> None:
    with pytest.raises(TypeError, match="progress must be a bool or None"):
        tvmscript.build(_kernel(2.5), progress="yes")


def test_time_passes_reports_llvm_phases_too() -> None:
    timer = TimePasses()
    with PassContext(instruments=[timer]):
        tvmscript.build(_kernel(2.75), cache=False)
    for step in ("lower_blocks", "simplify", "codegen", "llvm-optimize", "llvm-codegen",
                 "llvm-link"):
        assert step in timer.seconds, (step, timer.seconds)
    report = timer.report()
    assert "llvm-optimize" in report and "lower_blocks" in report
