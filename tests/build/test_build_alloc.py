"""Heap allocations through build(): freed on every exit, counted per library."""

from __future__ import annotations

import numpy as np
import pytest
from kits import buf, make

import tvmscript
from irbuilder import tir as T
from irbuilder.ir import PrimFunc

N = 1 << 18  # 1 MiB of float32: far above the stack limit, so a heap allocation


def scratch_kernel() -> PrimFunc:
    """Copy A through a large scratch buffer; assert ``limit`` is positive halfway."""

    def body() -> None:
        A, B = buf("A", (N,)), buf("B", (N,))
        limit = T.arg("limit", T.int32())
        with T.decl_buffer((N,), "float32") as tmp:
            with T.serial(N) as i:
                T.buffer_store(tmp, A[i] + T.float32(1), [i])
            T.Assert(limit > 0, "ValueError: limit must be positive")
            with T.serial(N) as i:
                T.buffer_store(B, tmp[i], [i])

    return make("scratch", body)


def test_allocation_freed_on_assertion_failure() -> None:
    tvmscript.clear_build_cache()
    k = tvmscript.build(scratch_kernel())
    a = np.arange(N, dtype="float32")
    b = np.zeros_like(a)
    def counts() -> dict[str, int]:
        stats = k.allocation_stats()
        return {"live": stats["live"], "total": stats["total"]}

    assert counts() == {"live": 0, "total": 0}
    k(a, b, 1)
    np.testing.assert_array_equal(b, a + 1)
    assert counts() == {"live": 0, "total": 1}
    stats = k.allocation_stats()
    assert stats["live_bytes"] == 0 and stats["total_bytes"] == N * 4
    assert stats["peak"] == 1 and stats["peak_bytes"] == N * 4
    for calls in range(2, 6):
        with pytest.raises(ValueError, match="limit must be positive"):
            k(a, b, 0)
        assert counts() == {"live": 0, "total": calls}
    assert k.allocation_stats()["live_bytes"] == 0
    # The entry checks fail before anything is allocated.
    with pytest.raises(ValueError, match="shape"):
        k(a[:10], b, 1)
    assert counts() == {"live": 0, "total": 5}
    k.reset_allocation_stats()
    assert k.allocation_stats()["total_bytes"] == 0 and k.allocation_stats()["peak"] == 0


def test_allocation_stats_are_per_library_and_optional() -> None:
    tvmscript.clear_build_cache()  # fresh counters, not the previous test's kernel
    k1 = tvmscript.build(scratch_kernel())
    k2 = tvmscript.build(scratch_kernel(), opt_level=2)
    a = np.zeros(N, "float32")
    k1(a, a.copy(), 1)
    assert k1.allocation_stats()["total"] == 1
    assert k2.allocation_stats()["total"] == 0
    off = tvmscript.build(scratch_kernel(), count_allocations=False)
    off(a, a.copy(), 1)
    with pytest.raises(ValueError, match="count_allocations"):
        off.allocation_stats()


def test_parallel_allocation_freed_on_failure() -> None:
    def body() -> None:
        A = buf("A", (64, 4096))
        with T.parallel(64) as i, T.decl_buffer((1 << 16,), "float32") as tmp:
            with T.serial(4096) as j:
                T.buffer_store(tmp, A[i, j], [j])
            T.Assert(tmp[0] >= T.float32(0), "ValueError: negative row")
            with T.serial(4096) as j:
                T.buffer_store(A, tmp[j] * T.float32(2), [i, j])

    k = tvmscript.build(make("par_scratch", body))
    a = np.ones((64, 4096), "float32")
    k(a)
    assert (a == 2).all()
    a[7, 0] = -1
    with pytest.raises(Exception, match=r"negative row|parallel"):
        k(a)
    stats = k.allocation_stats()
    assert stats["live"] == 0 and stats["total"] >= 64
