"""Target: TVM's spelling, the features each CPU implies, and what build/export do with it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import lowering
import tvmscript
from lowering import PrintAfterEach, TimePasses
from lowering.late.alias_version import NOALIAS_ATTR
from lowering.pipeline import LATE_STAGE
from tvmscript import Target
from tvmscript import tir as T

ZNVER3 = Target("llvm -mcpu=znver3")
SKX = Target("llvm -mcpu=skylake-avx512")


@T.prim_func
def gather(Tb: T.Buffer((256,), "float32"), I: T.Buffer((1024,), "int32"),
           O: T.Buffer((1024,), "float32")):
    for i in range(1024):
        O[i] = Tb[I[i]]


@T.prim_func
def matvec(A: T.Buffer((64, 64), "float32"), x: T.Buffer((64,), "float32"),
           y: T.Buffer((64,), "float32")):
    for i in range(64):
        y[i] = T.float32(0)
        for k in range(64):
            y[i] = y[i] + A[i, k] * x[k]


# -- the value ---------------------------------------------------------------------------------


def test_string_and_dict_spellings_are_the_same_target() -> None:
    a = Target("llvm -mcpu=znver4 -mattr=+avx512f,-fma")
    b = Target({"kind": "llvm", "mcpu": "znver4", "mattr": ["+avx512f", "-fma"]})
    assert a == b and hash(a) == hash(b)
    assert a.kind == "llvm" and a.keys == ("cpu",) and a.mcpu == "znver4"
    assert a.mattr == ("+avx512f", "-fma")
    assert "fma" not in a.features and a.has_feature("avx512f")
    assert Target(str(a)) == a and Target(a.export()) == a
    assert a.llvm_cpu == "znver4" and a.llvm_features == "+avx512f,-fma"


def test_cpu_names_imply_their_features() -> None:
    assert ZNVER3.vector_bits == 256 and not ZNVER3.has_feature("avx512f")
    assert SKX.vector_bits == 512 and SKX.has_feature("avx512f")
    assert Target("llvm -mcpu=x86-64").vector_bits == 128
    assert Target("llvm -mcpu=znver3 -mattr=+avx512f").vector_bits == 512
    assert ZNVER3.cache_line_bytes == 64


def test_host_is_the_default() -> None:
    host = Target.host()
    assert host.is_host and Target("llvm") == host
    assert host.missing_on_host() == ()
    assert not ZNVER3.is_host


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("cuda", ValueError, "unsupported kind 'cuda'"),
        ("llvm -mcpu=pentium9", ValueError, "unknown -mcpu=pentium9"),
        ("llvm mcpu", ValueError, "options look like -mcpu=znver3"),
        ("llvm -mattr=avx2", ValueError, "-mattr entries look like"),
        ("llvm -mtriple=aarch64-linux-gnu", ValueError, "only x86_64 triples"),
        ({"kind": "llvm", "opt": 3}, ValueError, "unknown option"),
        ({"kind": "llvm", "mcpu": 3}, TypeError, "mcpu must be a non-empty str"),
        (3, TypeError, "expected a target string or dict"),
        ("", ValueError, "empty target string"),
    ],
)
def test_bad_targets_are_refused_with_a_message(spec: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        Target(spec)  # type: ignore[arg-type]


def test_untracked_feature_question_is_an_error() -> None:
    with pytest.raises(ValueError, match="untracked feature"):
        ZNVER3.has_feature("avx512-made-up")


# -- build -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target", ["llvm", "llvm -mcpu=znver3", {"kind": "llvm", "mcpu": "haswell"}, ZNVER3]
)
def test_build_accepts_every_spelling(target: object) -> None:
    kernel = tvmscript.build(matvec, target=target)  # type: ignore[arg-type]
    a = np.random.default_rng(0).random((64, 64), dtype=np.float32)
    x = np.random.default_rng(1).random(64, dtype=np.float32)
    y, want = np.empty(64, np.float32), np.empty(64, np.float32)
    kernel(a, x, y)
    tvmscript.build(matvec, target="interp")(a, x, want)
    np.testing.assert_allclose(y, want, rtol=1e-5)


def test_target_decides_the_late_stage_not_the_host() -> None:
    avx2 = tvmscript.build(gather, target=ZNVER3).get_source("tir")
    assert NOALIAS_ATTR not in avx2
    lowered_for_skx = lowering.lower(gather, target=SKX)
    assert NOALIAS_ATTR in lowered_for_skx.script()


def test_building_to_run_for_missing_features_is_refused() -> None:
    wants = Target("llvm -mcpu=sapphirerapids")  # avx512fp16: no Zen has it
    missing = wants.missing_on_host()
    if not missing:
        pytest.skip("this host has every feature of sapphirerapids")
    with pytest.raises(ValueError, match=f"uses {missing[0]}.*lacks"):
        tvmscript.build(matvec, target=wants)


def test_bad_build_target_names_it() -> None:
    with pytest.raises(ValueError, match="unknown target 'cuda'"):
        tvmscript.build(matvec, target="cuda")
    with pytest.raises(ValueError, match="build\\(\\): Target: unknown -mcpu=nope"):
        tvmscript.build(matvec, target="llvm -mcpu=nope")
    with pytest.raises(TypeError, match="target must be"):
        tvmscript.build(matvec, target=3)  # type: ignore[arg-type]


def _disassemble(path: Path) -> str:
    try:
        return subprocess.run(["objdump", "-d", str(path)], capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("needs objdump")


def test_cross_compiled_export_for_another_cpu(tmp_path: Path) -> None:
    kernel = tvmscript.build(gather, target=ZNVER3)
    skx = _disassemble(kernel.export_object(tmp_path / "skx.o", target=SKX))
    zen3 = _disassemble(kernel.export_object(tmp_path / "zen3.o"))
    assert "zmm" in skx or "vpgatherdd" in skx or "vgatherdps" in skx
    assert "zmm" not in zen3  # the build's own target: AVX2 registers only


def test_export_library_for_another_cpu_links(tmp_path: Path) -> None:
    kernel = tvmscript.build(matvec, target=ZNVER3)
    try:
        lib = kernel.export_library(tmp_path / "libskx.so", target="llvm -mcpu=skylake-avx512")
    except tvmscript.compiler.export.CompileError as exc:  # type: ignore[attr-defined]
        pytest.skip(f"no linker: {exc}")
    assert lib.exists() and lib.with_suffix(".h").exists()


# -- one visible pipeline -----------------------------------------------------------------------


def test_user_instruments_see_every_pass_including_the_late_stage() -> None:
    timer = TimePasses()
    with lowering.PassContext(instruments=[timer]):
        tvmscript.build(matvec, target=ZNVER3, cache=False, opt_level=2)
    seen = {name.replace("-", "_") for name in timer.calls}
    assert {"lower_blocks", "flatten_buffer", "insert_entry_checks"} <= seen
    assert set(LATE_STAGE) - {"version_gathers"} <= seen


def test_print_after_each_shows_the_late_rewrites() -> None:
    printed: list[str] = []
    lowering.lower(matvec, instruments=[PrintAfterEach(printed.append)], target=ZNVER3)
    promoted = [text for text in printed if text.startswith("# after promote_accumulators")]
    assert promoted and "y_flat_acc" in promoted[0]


def test_verify_checks_the_late_passes_output() -> None:
    kernel = tvmscript.build(matvec, target=ZNVER3, verify=True, opt_level=1, cache=False)
    assert "y_flat_acc" in kernel.get_source("tir")  # the promoted accumulator is visible


def test_opt_level_0_is_the_straightforward_translation() -> None:
    kernel = tvmscript.build(matvec, target=ZNVER3, opt_level=0, cache=False)
    tir = kernel.get_source("tir")
    assert "_acc" not in tir and "if " not in tir.split("y_flat = ")[-1]  # no versioning
    a = np.random.default_rng(2).random((64, 64), dtype=np.float32)
    x = np.random.default_rng(3).random(64, dtype=np.float32)
    y, want = np.empty(64, np.float32), np.empty(64, np.float32)
    kernel(a, x, y)
    tvmscript.build(matvec, target="interp")(a, x, want)
    np.testing.assert_allclose(y, want, rtol=1e-5)


def test_user_instruments_see_the_export_pipeline(tmp_path: Path) -> None:
    kernel = tvmscript.build(matvec, target=ZNVER3)
    timer = TimePasses()
    with lowering.PassContext(instruments=[timer]):
        kernel.export_object(tmp_path / "m.o", target=SKX)
    assert "promote_accumulators" in timer.calls and "flatten_buffer" in timer.calls


def test_amd_only_extensions_the_host_lacks_are_left_out() -> None:
    """``-mcpu=znver3`` implies SSE4A, which LLVM uses unasked (``insertq`` for byte
    shuffles); code built to run here leaves out what this host does not have, so that a
    znver target's kernel runs on an Intel host."""
    from backend.runtime.target import VENDOR_EXTENSIONS, host_target, machine_cpu_and_features

    present = {f[1:] for f in host_target().features.split(",") if f.startswith("+")}
    cpu, features = machine_cpu_and_features(Target("llvm -mcpu=znver3 -mattr=+avx2"))
    assert cpu == "znver3"
    parts = features.split(",")
    assert "+avx2" in parts
    for name in VENDOR_EXTENSIONS:
        assert (f"-{name}" in parts) == (name not in present)
