"""T.parallel through build(): small and nested loops, fork, thread count, idle workers."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from kits import buf, make

import tvmscript
from irbuilder import tir as T
from irbuilder.ir import PrimFunc

_ROOTS = [str(Path(tvmscript.__file__).parent.parent), str(Path(__file__).parent)]


def par_fill() -> PrimFunc:
    """``B[i] = A[i] * 2 + i`` with a parallel loop over a symbolic extent."""

    def body() -> None:
        n = T.int64()
        A, B = buf("A", (n,)), buf("B", (n,))
        with T.parallel(n) as i:
            T.buffer_store(B, A[i] * T.float32(2) + T.Cast("float32", i), [i])

    return make("par_fill", body)


def par_nested() -> PrimFunc:
    """A parallel loop nested in a parallel loop (the inner one runs serially)."""

    def body() -> None:
        m, n = T.int64(), T.int64()
        A, B = buf("A", (m, n)), buf("B", (m, n))
        with T.parallel(m) as i, T.parallel(n) as j:
            T.buffer_store(B, A[i, j] + T.float32(1), [i, j])

    return make("par_nested", body)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 64, 1000, 100_003])
def test_parallel_loop_any_trip_count(n: int) -> None:
    k = tvmscript.build(par_fill())
    a = np.random.default_rng(n).standard_normal(n).astype("float32")
    b = np.full(n, np.nan, "float32")
    k(a, b)
    np.testing.assert_allclose(b, a * 2 + np.arange(n, dtype="float32"), rtol=1e-6)


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (3, 1000), (257, 9)])
def test_nested_parallel_loops(shape: tuple[int, int]) -> None:
    k = tvmscript.build(par_nested())
    a = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    b = np.zeros(shape, "float32")
    k(a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_parallel_kernel_called_from_many_python_threads() -> None:
    import threading

    k = tvmscript.build(par_fill(), release_gil=True)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            a = np.full(50_000, seed, "float32")
            b = np.zeros_like(a)
            for _ in range(20):
                k(a, b)
                np.testing.assert_array_equal(b, a * 2 + np.arange(50_000, dtype="float32"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors


def _run(code: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    full = f"import sys; sys.path[:0] = {_ROOTS!r}\n" + textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", full], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_child_runs_parallel_kernels() -> None:
    out = _run("""
        import os, signal, numpy as np, tvmscript, test_build_parallel as t
        k = t.tvmscript.build(t.par_fill())
        a = np.ones(200_000, 'float32'); b = np.zeros_like(a)
        k(a, b)                       # the pool is running in the parent
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)          # never hang: die if the pool deadlocks
            k(a, b)                   # a kernel built before the fork
            k2 = tvmscript.build(t.par_nested())   # and one built in the child
            x = np.ones((64, 300), 'float32'); y = np.zeros_like(x); k2(x, y)
            ok = (b == a * 2 + np.arange(a.size, dtype='float32')).all() and (y == 2).all()
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
        k(a, b)                       # the parent's pool still works
        print(int((b == a * 2 + np.arange(a.size, dtype='float32')).all()))
    """, timeout=60)
    assert out.split() == ["0", "1"]


def test_num_threads_environment_is_honoured() -> None:
    out = _run("""
        import numpy as np, test_build_parallel as t
        from backend.runtime import get_num_threads, running_threads
        k = t.tvmscript.build(t.par_fill())
        a = np.ones(1_000_000, 'float32'); b = np.zeros_like(a)
        for _ in range(5): k(a, b)
        print(get_num_threads(), running_threads(), int(b[-1]))
    """, env={"TVMSCRIPT_NUM_THREADS": "1"})
    nthreads, running, last = out.split()
    assert nthreads == "1" and int(running) <= 1 and last == str(2 + 999_999)


def test_workers_stop_spinning_after_a_region() -> None:
    from backend.runtime import get_num_threads

    if get_num_threads() < 2:
        pytest.skip("a single thread never spins")
    k = tvmscript.build(par_fill())
    a = np.ones(2_000_000, "float32")
    b = np.zeros_like(a)
    for _ in range(5):
        k(a, b)
    time.sleep(0.05)  # let the spin budget run out
    start = time.process_time()
    time.sleep(0.5)
    cpu = time.process_time() - start
    # A worker spinning through the sleep would burn ~0.5 s of CPU per thread.
    assert cpu < 0.1, f"process used {cpu:.3f} s CPU while idle"
