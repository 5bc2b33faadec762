"""The JIT is created on a background thread from ``import tvmscript`` on; the import itself
leaves the compiler (lowering, codegen, llvmlite) to that thread and the first build."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = textwrap.dedent(
    """
    import os, sys, threading
    sys.path.insert(0, {root!r})
    import numpy as np
    import tvmscript
    from tvmscript import _prewarm, tir as T

    started_on_import = _prewarm.started()
    @T.prim_func
    def add(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i] + T.float32(1)

    started = started_on_import and _prewarm.started()
    {after_parse}
    a = np.arange(8, dtype=np.float32)
    b = np.zeros(8, np.float32)
    tvmscript.build(add, cache=False)(a, b)
    assert (b == a + 1).all()
    print("started" if started else "not started")
    """
)

_FORK = """
pid = os.fork()
if pid == 0:
    c = np.zeros(8, np.float32)
    tvmscript.build(add, cache=False)(np.ones(8, np.float32), c)
    os._exit(0 if (c == 2).all() else 3)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
"""


def _run(tmp: Path, after_parse: str = "", **env: str) -> str:
    script = tmp / "kernel_script.py"  # the parser reads kernels from their source file
    script.write_text(_SCRIPT.format(root=str(ROOT), after_parse=after_parse))
    full_env = {**os.environ, **env}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=full_env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_starts_the_jit_in_the_background(tmp_path: Path) -> None:
    assert _run(tmp_path) == "started"


def test_prewarm_can_be_switched_off(tmp_path: Path) -> None:
    assert _run(tmp_path, TVMSCRIPT_PREWARM="0") == "not started"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_right_after_parsing_gives_a_working_child(tmp_path: Path) -> None:
    assert _run(tmp_path, after_parse=_FORK) == "started"


def test_prewarm_links_a_probe_object_that_runs(tmp_path: Path) -> None:
    # The probe exercises the object-linking path a kernel's first link takes (a call into
    # the process, a read-only string, a global); it must link and run correctly.
    script = tmp_path / "probe.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import ctypes, sys
            sys.path.insert(0, {str(ROOT)!r})
            import tvmscript
            from tvmscript import _prewarm
            _prewarm._join()
            from backend.runtime import engine
            tracker = engine._probe_tracker
            assert tracker is not None
            probe = ctypes.PYFUNCTYPE(ctypes.c_char_p)(tracker["tvms_prewarm_probe"])
            print(probe().decode())
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "probe"


def test_import_leaves_the_compiler_to_the_first_build(tmp_path: Path) -> None:
    script = tmp_path / "lazy.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(ROOT)!r})
            import tvmscript
            loaded = [m for m in ("lowering.pipeline", "backend.codegen", "tvmscript.compiler.build")
                      if m in sys.modules]
            print(",".join(loaded) or "none")
            print(tvmscript.build.__module__, callable(tvmscript.build))
            from tvmscript.compiler.build import Kernel  # the submodule never replaces the function
            print(tvmscript.build.__module__, tvmscript.Kernel is Kernel)
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "TVMSCRIPT_PREWARM": "0"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["none", "tvmscript True", "tvmscript True"]


def _run_code(tmp: Path, body: str, **env: str) -> list[str]:
    script = tmp / "code.py"
    script.write_text(textwrap.dedent(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n") + body)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")


_COMPILER_LOADED = textwrap.dedent(
    """
    import tvmscript
    from tvmscript import _prewarm
    if _prewarm.started():
        _prewarm._thread.join()
    pipeline = "lower" in vars(sys.modules["lowering"]) if "lowering" in sys.modules else False
    print("tvmscript.compiler.build" in sys.modules, pipeline, tvmscript.build.__module__)
    """
)


def test_the_thread_imports_the_compiler_after_the_package(tmp_path: Path) -> None:
    # The first build then finds lowering and code generation imported; `tvmscript.build`
    # stays the function.
    assert _run_code(tmp_path, _COMPILER_LOADED)[0] == "True True tvmscript"


def test_without_the_thread_the_compiler_waits_for_the_first_build(tmp_path: Path) -> None:
    out = _run_code(tmp_path, _COMPILER_LOADED, TVMSCRIPT_PREWARM="0")
    assert out[0] == "False False tvmscript"


def test_a_program_that_only_imports_ends_without_error(tmp_path: Path) -> None:
    # Exit stops the thread between the compiler's modules (it does not wait for them all).
    assert _run_code(tmp_path, "import tvmscript\nprint('ok')\n")[0] == "ok"


_SCHEDULE_AT_ONCE = textwrap.dedent(
    """
    import sys
    import tvmscript
    from tvmscript import _prewarm, tir as T
    running = _prewarm.started() and _prewarm._thread.is_alive()
    T.Schedule  # loads the schedule library: after the thread's compiler imports
    print(running, "tvmscript.compiler.build" in sys.modules or not running)
    """
)


def test_the_schedule_library_loads_after_the_threads_imports(tmp_path: Path) -> None:
    # Two threads importing overlapping parts of the package once failed with CPython's
    # _DeadlockError in CI; tir.Schedule now lets the thread finish its imports first.
    for _ in range(3):
        assert _run_code(tmp_path, _SCHEDULE_AT_ONCE)[0].split()[1] == "True"


_BUILD_TWICE = textwrap.dedent(
    """
    import numpy as np
    import tvmscript
    from tvmscript import tir as T

    @T.prim_func
    def double(A: T.Buffer((16,), "float32")):
        for i in range(16):
            A[i] = A[i] * T.float32(2)

    kernel = tvmscript.build(double, cache=True)
    a = np.ones(16, "float32")
    kernel(a)
    loaded = [m for m in ("backend.codegen", "lowering.pipeline", "backend.interp")
              if m in sys.modules]
    print(kernel.from_cache, a[0], ",".join(loaded) or "none")
    """
)


def test_a_build_from_the_disk_cache_imports_no_code_generation(tmp_path: Path) -> None:
    cache = {"TVMSCRIPT_CACHE_DIR": str(tmp_path / "cache")}
    first = _run_code(tmp_path, _BUILD_TWICE, TVMSCRIPT_PREWARM="0", **cache)[0]
    assert first.startswith("False 2.0") and "backend.codegen" in first
    assert _run_code(tmp_path, _BUILD_TWICE, TVMSCRIPT_PREWARM="0", **cache)[0] == "True 2.0 none"
    # with the thread: the build stops its remaining imports and still gets the cached kernel
    assert _run_code(tmp_path, _BUILD_TWICE, **cache)[0].startswith("True 2.0")


_WARMED_UP = textwrap.dedent(
    """
    import tvmscript
    from tvmscript import _prewarm
    from backend.runtime import compile_stats, optimize_count
    from tvmscript.compiler.build import build_cache_info
    if _prewarm.started():
        _prewarm._thread.join()
    stats = compile_stats()
    print("backend.codegen" in sys.modules, stats["cold_compiles"], stats["cache_writes"],
          build_cache_info()["compiles"], optimize_count())
    """
)


def test_the_thread_compiles_a_throwaway_kernel_that_nothing_counts(tmp_path: Path) -> None:
    # The warm-up (tvmscript.compiler.warmup) imports code generation and runs LLVM, but
    # links, caches and counts nothing: statistics a program reads start at zero.
    cache = {"TVMSCRIPT_CACHE_DIR": str(tmp_path / "cache")}
    assert _run_code(tmp_path, _WARMED_UP, **cache)[0] == "True 0 0 0 0"
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    without = _run_code(tmp_path, _WARMED_UP, TVMSCRIPT_PREWARM="0", **cache)[0]
    assert without == "False 0 0 0 0"


def test_the_warm_up_runs_its_steps_in_order() -> None:
    from tvmscript.compiler import warmup

    assert list(warmup.steps()) == ["imports", "lowering", "codegen", "llvm"]


@pytest.mark.parametrize("delay", [0.1, 0.25, 0.4])
def test_a_build_that_starts_during_the_warm_up_gives_the_right_answer(
    tmp_path: Path, delay: float
) -> None:
    # The build stops the thread after its current step, whichever it is by then.
    assert _run(tmp_path, after_parse=f"import time; time.sleep({delay})") == "started"
