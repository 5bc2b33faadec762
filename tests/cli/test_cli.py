"""``python -m tvmscript`` end to end: subcommands, output, exit codes (subprocesses)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

KERNELS = textwrap.dedent(
    '''
    from __future__ import annotations

    from tvmscript import tir as T
    from tvmscript import ir as I

    @T.prim_func
    def add(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
            C: T.Buffer((16,), "float32")):
        for i in range(16):
            C[i] = A[i] + B[i]

    @T.prim_func
    def scale(n: T.int32, A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
              s: T.float32):
        for i in range(n):
            B[i] = A[i] * s

    @T.prim_func
    def chain(A: T.Buffer((64,), "float32")):
        D = T.compute((64,), lambda i: A[i] * T.float32(2))
        E = T.compute((64,), lambda i: D[i] + T.float32(1))
        return E

    @I.ir_module
    class Mod:
        @T.prim_func
        def zero(A: T.Buffer((8,), "int32")):
            for i in range(8):
                A[i] = 0

    if __name__ == "__main__":
        raise SystemExit("the CLI must not run the main block")
    '''
)

BROKEN = textwrap.dedent(
    '''
    from tvmscript import tir as T

    @T.prim_func
    def fine(A: T.Buffer((16,), "float32")):
        for i in range(16):
            A[i] = T.float32(0)

    @T.prim_func
    def undefined(A: T.Buffer((16,), "float32")):
        for i in range(16):
            A[i] = not_defined_anywhere

    @T.prim_func
    def arity(A: T.Buffer((16,), "float32")):
        for i in range(16):
            A[i] = T.exp(A[i], A[i])
    '''
)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    (folder / "kernels.py").write_text(KERNELS)
    (folder / "broken.py").write_text(BROKEN)
    (folder / "crash.py").write_text("import tvmscript\nraise RuntimeError('boom at load')\n")
    return folder


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TVMSCRIPT_CACHE": "0"}
    return subprocess.run(
        [sys.executable, "-m", "tvmscript", *args], cwd=folder, env=env, capture_output=True,
        text=True, timeout=300, check=False,
    )


def test_help_lists_the_subcommands(files: Path) -> None:
    done = run(files, "--help")
    assert done.returncode == 0
    for command in ("inspect", "explain", "check", "bench"):
        assert command in done.stdout
    assert run(files, "inspect", "--help").returncode == 0


def test_usage_errors_exit_2(files: Path) -> None:
    assert run(files).returncode == 2
    done = run(files, "inspect", "kernels.py", "--stage", "bogus")
    assert done.returncode == 2 and "invalid choice: 'bogus'" in done.stderr


def test_inspect_parsed_prints_the_script_that_parses_back(files: Path) -> None:
    done = run(files, "inspect", "kernels.py:add")
    assert done.returncode == 0, done.stderr
    assert "def add(A: T.Buffer((16,), \"float32\")" in done.stdout
    import tvmscript

    reparsed = tvmscript.from_source(done.stdout)
    assert reparsed.name == "add"


def test_inspect_every_kernel_of_a_file(files: Path) -> None:
    done = run(files, "inspect", "kernels.py")
    assert done.returncode == 0, done.stderr
    for label in ("add", "scale", "chain", "Mod"):
        assert f"# ---- {label} ----" in done.stdout
    assert "the CLI must not run" not in done.stdout + done.stderr


def test_inspect_lowered_llvm_asm(files: Path) -> None:
    lowered = run(files, "inspect", "kernels.py:add", "--stage", "lowered")
    assert lowered.returncode == 0 and "T.array_data(A)" in lowered.stdout
    llvm = run(files, "inspect", "kernels.py:add", "--stage", "llvm", "-O", "1")
    assert llvm.returncode == 0 and "@add(ptr" in llvm.stdout and "define " in llvm.stdout
    asm = run(files, "inspect", "kernels.py:Mod.zero", "--stage", "asm")
    assert asm.returncode == 0 and "zero:" in asm.stdout


def test_inspect_after_each_pass_shows_passes_with_times(files: Path) -> None:
    done = run(files, "inspect", "kernels.py:add", "--stage", "lowered", "--after-each-pass")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    headers = [line for line in lines if line.startswith("# after ")]
    names = [h.split()[2] for h in headers]
    assert "lower_blocks" in names and "flatten_buffer" in names and "insert_entry_checks" in names
    assert all(h.endswith(" ms)") for h in headers)
    assert any(line.startswith("# default_pipeline: ") for line in lines)


def test_explain_prints_the_bufferization_report(files: Path) -> None:
    done = run(files, "explain", "kernels.py:chain")
    assert done.returncode == 0, done.stderr
    assert "D inlined into E" in done.stdout
    assert "kernels.py:" in done.stdout  # the source line of each definition
    missing = run(files, "explain", "kernels.py")
    assert missing.returncode == 1 and "FILE.py:FUNC" in missing.stderr


def test_check_passes_good_files_and_locates_every_broken_kernel(files: Path) -> None:
    good = run(files, "check", "kernels.py")
    assert good.returncode == 0, good.stderr
    assert "kernels.py: 4 kernels ok" in good.stdout
    bad = run(files, "check", "kernels.py", "broken.py", "--lower")
    assert bad.returncode == 1
    assert "broken.py: 2 errors" in bad.stdout
    assert "--> broken.py:12:" in bad.stderr and "not_defined_anywhere" in bad.stderr
    assert "--> broken.py:17:" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_check_reports_a_file_that_fails_to_run(files: Path) -> None:
    done = run(files, "check", "crash.py")
    assert done.returncode == 1
    assert "boom at load" in done.stderr and 'crash.py", line 2' in done.stderr
    assert "cli_load" not in done.stderr and "runpy" not in done.stderr  # none of our frames


def test_unknown_kernel_and_missing_file(files: Path) -> None:
    done = run(files, "inspect", "kernels.py:nope")
    assert done.returncode == 1 and "no kernel named 'nope'" in done.stderr
    assert "add, scale, chain, Mod" in done.stderr
    missing = run(files, "check", "absent.py")
    assert missing.returncode == 1 and "absent.py" in missing.stderr


def test_bench_times_a_kernel(files: Path) -> None:
    done = run(files, "bench", "kernels.py:scale", "--shape", "n=256,s=0.5", "--repeat", "2",
               "--min-time", "0.01")
    assert done.returncode == 0, done.stderr
    assert "kernel scale(256, float32[256], float32[256], 0.5)" in done.stdout
    assert "call: median" in done.stdout and "build:" in done.stdout
    unbound = run(files, "bench", "kernels.py:scale")
    assert unbound.returncode == 1 and "--shape n=" in unbound.stderr
    returning = run(files, "bench", "kernels.py:chain", "--repeat", "1", "--min-time", "0.001")
    assert returning.returncode == 0, returning.stderr


def test_bench_random_arguments_feed_the_kernel() -> None:
    import tvmscript
    from tvmscript import tir as T
    from tvmscript.cli_bench import parse_bindings, random_arguments

    @T.prim_func
    def mul(n: T.int32, A: T.Buffer((n, 4), "int32"), B: T.Buffer((n, 4), "int32")):  # noqa: F821
        for i, j in T.grid(n, 4):
            B[i, j] = A[i, j] * 2

    args = random_arguments(mul, parse_bindings(["n=3"]))
    assert args[0] == 3 and args[1].shape == (3, 4) and args[1].dtype == np.int32
    tvmscript.build(mul)(*args)
    np.testing.assert_array_equal(args[2], args[1] * 2)
