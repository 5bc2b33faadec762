"""Resources: no leak across many calls, compiled code freed, thread-safe build and call."""

from __future__ import annotations

import gc
import os
import threading
import weakref
from typing import Any

import numpy as np
import pytest
from relkit import kernel

import tvmscript
from irbuilder import tir as T
from irbuilder.ir import PrimFunc

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """Resident set size of this process, from /proc/self/statm."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def _scratch_kernel(n: int = 1 << 16, name: str = "scratch") -> PrimFunc:
    """A kernel with a heap-sized scratch buffer: B[i] = sum of a window of A via scratch."""

    def body() -> None:
        a = T.arg("A", T.Buffer((64,), "float32"))
        b = T.arg("B", T.Buffer((64,), "float32"))
        tmp = T.alloc_buffer((n,), "float32")
        with T.serial(64) as i:
            T.buffer_store(tmp, a[i] * 2.0, [i * (n // 64)])
        with T.serial(64) as i:
            T.buffer_store(b, tmp[i * (n // 64)] + 1.0, [i])

    return kernel(name, body)


def test_no_leak_across_100000_calls() -> None:
    k = tvmscript.build(_scratch_kernel(), count_allocations=True)
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    bad = np.zeros(63, "float32")
    for _ in range(2000):  # warm up allocator arenas
        k(a, b)
    before_stats = k.allocation_stats()
    gc.collect()
    before = rss_bytes()
    for _ in range(100_000):
        k(a, b)
    for _ in range(20_000):  # the error path (argument check failures) must not leak either
        try:
            k(a, bad)
        except ValueError:
            pass
    gc.collect()
    grown = rss_bytes() - before
    stats = k.allocation_stats()
    np.testing.assert_array_equal(b, a * 2 + 1)
    assert stats["live"] == 0, stats
    assert stats["total"] - before_stats["total"] in (0, 100_000), stats
    assert grown < 8 << 20, f"RSS grew by {grown / 2**20:.1f} MiB over 120,000 calls"


def test_failed_assert_inside_kernel_frees_its_allocations() -> None:
    def body() -> None:
        a = T.arg("A", T.Buffer((8,), "int32"))
        tmp = T.alloc_buffer((1 << 16,), "int32")
        with T.serial(8) as i:
            T.buffer_store(tmp, a[i], [i])
        with T.serial(8) as i:
            T.Assert(tmp[i] >= 0, "ValueError: negative input")
            T.buffer_store(a, tmp[i] + 1, [i])

    k = tvmscript.build(kernel("check_neg", body), count_allocations=True)
    bad = np.full(8, -1, "int32")
    for _ in range(1000):
        with pytest.raises(ValueError, match="negative input"):
            k(bad)
    assert k.allocation_stats()["live"] == 0
    ok = np.arange(8, dtype="int32")
    k(ok)
    np.testing.assert_array_equal(ok, np.arange(8) + 1)
    assert k.allocation_stats()["live"] == 0


def _const_kernel(c: int) -> PrimFunc:
    def body() -> None:
        a = T.arg("A", T.Buffer((16,), "int32"))
        with T.serial(16) as i:
            T.buffer_store(a, a[i] * 3 + c, [i])

    return kernel(f"const_{c}", body)


def test_compiled_code_is_released_when_kernels_are_dropped() -> None:
    tvmscript.clear_build_cache()
    gc.collect()
    refs: list[weakref.ref[Any]] = []
    start = rss_bytes()
    for c in range(200):
        k = tvmscript.build(_const_kernel(c))
        a = np.ones(16, "int32")
        k(a)
        assert a[0] == 3 + c
        refs.append(weakref.ref(k._library))
        del k
    first = rss_bytes() - start
    tvmscript.clear_build_cache()
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert alive == 0, f"{alive} of 200 compiled libraries still alive after dropping kernels"
    # A second round of 200 new kernels must reuse the freed memory (bounded growth).
    mid = rss_bytes()
    for c in range(200, 400):
        k = tvmscript.build(_const_kernel(c))
        del k
    tvmscript.clear_build_cache()
    gc.collect()
    second = rss_bytes() - mid
    assert second < max(first, 16 << 20) + (16 << 20), (first, second)


def test_build_cache_is_bounded() -> None:
    tvmscript.clear_build_cache()
    gc.collect()
    refs = []
    for c in range(1000, 1100):
        refs.append(weakref.ref(tvmscript.build(_const_kernel(c))._library))
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert alive <= 64, alive  # the LRU keeps at most 64 kernels
    tvmscript.clear_build_cache()


def test_building_from_several_threads_gives_correct_kernels() -> None:
    results: dict[int, Any] = {}
    errors: list[BaseException] = []

    def work(c: int) -> None:
        try:
            k = tvmscript.build(_const_kernel(5000 + c))
            a = np.ones(16, "int32")
            k(a)
            results[c] = a
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(c,)) for c in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    for c in range(8):
        np.testing.assert_array_equal(results[c], 3 + 5000 + c)


def test_building_the_same_function_from_several_threads() -> None:
    func = _const_kernel(7777)
    kernels: list[Any] = []

    def work() -> None:
        kernels.append(tvmscript.build(func))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert len(kernels) == 4
    for k in kernels:
        a = np.zeros(16, "int32")
        k(a)
        np.testing.assert_array_equal(a, 7777)


def _parallel_kernel() -> PrimFunc:
    def body() -> None:
        a = T.arg("A", T.Buffer((32, 64), "float32"))
        b = T.arg("B", T.Buffer((32,), "float32"))
        with T.parallel(32) as i:
            T.buffer_store(b, T.float32(0), [i])
            with T.serial(64) as j:
                T.buffer_store(b, b[i] + a[i, j], [i])

    return kernel("rowsum", body)


@pytest.mark.parametrize("release_gil", [False, True])
def test_calling_one_kernel_from_several_threads(release_gil: bool) -> None:
    k = tvmscript.build(_parallel_kernel(), release_gil=release_gil)
    errors: list[str] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(200):
            a = rng.integers(-50, 50, (32, 64)).astype("float32")
            b = np.zeros(32, "float32")
            k(a, b)
            if not np.array_equal(b, a.sum(axis=1)):
                errors.append(f"thread {seed}: wrong row sums")
                return

    threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
