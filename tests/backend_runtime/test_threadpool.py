"""The IR thread pool: correctness of chunking, nesting, concurrency, fork safety."""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Iterator

import pytest

from backend.runtime import (
    CompiledLibrary,
    compile_ir,
    get_num_threads,
    parallel_for,
    parallel_runtime_symbols,
    running_threads,
    set_num_threads,
)
from backend.runtime.threadpool import CHUNKS_PER_THREAD

# ctx layout: { i64 acc, i64 calls, i64 inner_n, [64 x i64] tids }
PAR_IR = r"""
declare void @tvms_parallel_for(ptr, ptr, i64)
declare i64 @syscall(i64, ...)

define void @sum_body(ptr %ctx, i64 %b, i64 %e) {
entry:
  %calls = getelementptr inbounds i64, ptr %ctx, i64 1
  %c0 = atomicrmw add ptr %calls, i64 1 seq_cst
  %tid = call i64 (i64, ...) @syscall(i64 186)
  %slot0 = and i64 %c0, 63
  %slot1 = add i64 %slot0, 3
  %slot = getelementptr inbounds i64, ptr %ctx, i64 %slot1
  store i64 %tid, ptr %slot, align 8
  %ne = icmp slt i64 %b, %e
  br i1 %ne, label %loop, label %done
loop:
  %i = phi i64 [ %b, %entry ], [ %i1, %loop ]
  %s = phi i64 [ 0, %entry ], [ %s1, %loop ]
  %s1 = add i64 %s, %i
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %e
  br i1 %c, label %loop, label %fin
fin:
  %r = atomicrmw add ptr %ctx, i64 %s1 seq_cst
  br label %done
done:
  ret void
}

; nested: every outer iteration runs an inner parallel region of size ctx.inner_n
define void @outer_body(ptr %ctx, i64 %b, i64 %e) {
entry:
  %np = getelementptr inbounds i64, ptr %ctx, i64 2
  %n = load i64, ptr %np, align 8
  %ne = icmp slt i64 %b, %e
  br i1 %ne, label %loop, label %done
loop:
  %i = phi i64 [ %b, %entry ], [ %i1, %loop ]
  call void @tvms_parallel_for(ptr @sum_body, ptr %ctx, i64 %n)
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %e
  br i1 %c, label %loop, label %done
done:
  ret void
}

; records its thread like sum_body, then waits (bounded) until another chunk has been claimed
define void @wait_body(ptr %ctx, i64 %b, i64 %e) {
entry:
  %calls = getelementptr inbounds i64, ptr %ctx, i64 1
  %c0 = atomicrmw add ptr %calls, i64 1 seq_cst
  %tid = call i64 (i64, ...) @syscall(i64 186)
  %slot0 = and i64 %c0, 63
  %slot1 = add i64 %slot0, 3
  %slot = getelementptr inbounds i64, ptr %ctx, i64 %slot1
  store i64 %tid, ptr %slot, align 8
  br label %spin
spin:
  %k = phi i64 [ 0, %entry ], [ %k1, %again ]
  %c = load atomic i64, ptr %calls seq_cst, align 8
  %both = icmp sge i64 %c, 2
  br i1 %both, label %done, label %again
again:
  %k1 = add i64 %k, 1
  %limit = icmp sgt i64 %k1, 500000000
  br i1 %limit, label %done, label %spin
done:
  ret void
}

define void @run_wait(ptr %ctx, i64 %n) {
  call void @tvms_parallel_for(ptr @wait_body, ptr %ctx, i64 %n)
  ret void
}

; records each chunk's [b, e) in slots 3 + 2k, 4 + 2k (k: the chunk's claim order, < 30)
define void @range_body(ptr %ctx, i64 %b, i64 %e) {
entry:
  %calls = getelementptr inbounds i64, ptr %ctx, i64 1
  %c0 = atomicrmw add ptr %calls, i64 1 seq_cst
  %k = and i64 %c0, 31
  %lo = mul i64 %k, 2
  %lo1 = add i64 %lo, 3
  %hi1 = add i64 %lo, 4
  %plo = getelementptr inbounds i64, ptr %ctx, i64 %lo1
  %phi = getelementptr inbounds i64, ptr %ctx, i64 %hi1
  store i64 %b, ptr %plo, align 8
  store i64 %e, ptr %phi, align 8
  ret void
}

define void @run_ranges(ptr %ctx, i64 %n) {
  call void @tvms_parallel_for(ptr @range_body, ptr %ctx, i64 %n)
  ret void
}

define void @run_sum(ptr %ctx, i64 %n) {
  call void @tvms_parallel_for(ptr @sum_body, ptr %ctx, i64 %n)
  ret void
}
"""


class Ctx(ctypes.Structure):
    _fields_ = [("acc", ctypes.c_int64), ("calls", ctypes.c_int64),
                ("inner_n", ctypes.c_int64), ("tids", ctypes.c_int64 * 64)]


@pytest.fixture(scope="module")
def lib() -> Iterator[CompiledLibrary]:
    yield compile_ir(PAR_IR, name="par_test", cache=False)


@pytest.fixture(autouse=True)
def _restore_threads() -> Iterator[None]:
    before = get_num_threads()
    yield
    set_num_threads(before)


def _run_sum(lib: CompiledLibrary, n: int) -> Ctx:
    ctx = Ctx()
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(lib.address("run_sum"))
    fn(ctypes.addressof(ctx), n)
    return ctx


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 1000, 1_000_003])
def test_parallel_sum(lib: CompiledLibrary, threads: int, n: int) -> None:
    set_num_threads(threads)
    ctx = _run_sum(lib, n)
    assert ctx.acc == n * (n - 1) // 2
    # each thread's range cut into chunks of ceil(n / (threads * CHUNKS_PER_THREAD))
    # iterations, none empty; a region of fewer than 2 iterations, or with one thread, is one
    # serial call
    if n < 2 or threads == 1:
        expected = 0 if n == 0 else 1
    else:
        assert running_threads() == threads
        expected = sum(-(-(hi - lo) // _grain(n, threads)) for lo, hi in _ranges(n, threads))
    assert ctx.calls == expected


def _grain(n: int, threads: int) -> int:
    return max(1, -(-n // (threads * CHUNKS_PER_THREAD)))


def _ranges(n: int, threads: int) -> list[tuple[int, int]]:
    """The contiguous range each thread owns: sizes differ by at most one, larger first."""
    q, r = divmod(n, threads)
    return [(t * q + min(t, r), (t + 1) * q + min(t + 1, r)) for t in range(threads)]


@pytest.mark.parametrize(("threads", "n"), [(2, 2), (2, 9), (3, 10), (3, 100), (4, 7)])
def test_chunks_tile_each_threads_range(lib: CompiledLibrary, threads: int, n: int) -> None:
    """Whoever runs them, the chunks are those of the owners' ranges: each within one range,
    together covering [0, n) once, starting at the range's start every ``grain`` steps."""
    set_num_threads(threads)
    for _ in range(20):  # which thread takes which chunk varies from run to run
        ctx = Ctx()
        fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(lib.address("run_ranges"))
        fn(ctypes.addressof(ctx), n)
        assert running_threads() == threads
        chunks = sorted((ctx.tids[2 * k], ctx.tids[2 * k + 1]) for k in range(ctx.calls))
        grain = _grain(n, threads)
        expected = [(b, min(b + grain, hi)) for lo, hi in _ranges(n, threads)
                    for b in range(lo, hi, grain)]
        assert chunks == expected


def test_two_threads_really_used(lib: CompiledLibrary) -> None:
    set_num_threads(2)
    # Two one-iteration chunks whose body waits until the other chunk is claimed: only a
    # second thread can claim it while the caller waits (else the wait times out, ~0.2 s).
    ctx = Ctx()
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(lib.address("run_wait"))
    fn(ctypes.addressof(ctx), 2)
    assert running_threads() == 2
    assert ctx.calls == 2
    assert len({ctx.tids[0], ctx.tids[1]}) == 2


def test_nested_regions_run_serially_and_correctly(lib: CompiledLibrary) -> None:
    set_num_threads(2)
    ctx = Ctx()
    ctx.inner_n = 1000
    parallel_for(lib.address("outer_body"), ctypes.addressof(ctx), 10)
    assert ctx.acc == 10 * (1000 * 999 // 2)
    # 2 outer chunks + one (serial) inner region call per outer iteration
    assert ctx.calls == 10


def test_concurrent_callers_from_python_threads(lib: CompiledLibrary) -> None:
    set_num_threads(2)
    results: list[int] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                results.append(_run_sum(lib, 20_000).acc)
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert results == [20_000 * 19_999 // 2] * 150


def test_set_num_threads_validation() -> None:
    with pytest.raises(ValueError):
        set_num_threads(0)
    with pytest.raises(TypeError):
        set_num_threads(2.0)  # type: ignore[arg-type]
    set_num_threads(3)
    assert get_num_threads() == 3


def test_runtime_symbols() -> None:
    syms = parallel_runtime_symbols()
    assert set(syms) == {"tvms_parallel_for"} and syms["tvms_parallel_for"] > 0


# Forking a process whose pool threads are running is the case under test (3.12+ warn).
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_fork_child_runs_parallel_region(lib: CompiledLibrary) -> None:
    set_num_threads(2)
    assert _run_sum(lib, 1000).acc == 499500  # parent has live workers now
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 1
        try:
            ok = all(_run_sum(lib, n).acc == n * (n - 1) // 2 for n in (3, 1000, 100_000))
            code = 0 if ok and running_threads() == 2 else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 30
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.01)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("forked child hung in a parallel region")
    assert status is not None and os.waitstatus_to_exitcode(status) == 0
    assert _run_sum(lib, 1000).acc == 499500  # parent's pool unaffected
