"""Kernels as Dask array blocks (threads and an in-process distributed cluster), and the
GIL released around the native call when built with ``release_gil=True``."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T

da = pytest.importorskip("dask.array")


@T.prim_func
def affine(
    n: T.int64,
    m: T.int64,
    X: T.Buffer((n, m), "float32"),  # noqa: F821
    Y: T.Buffer((n, m), "float32"),  # noqa: F821
    scale: T.float32,
) -> None:
    for i, j in T.grid(n, m):
        Y[i, j] = X[i, j] * scale + T.float32(i % 7)


@T.prim_func
def spin(n: T.int64, X: T.Buffer((n,), "float32"), rounds: T.int32) -> None:  # noqa: F821
    for _r in range(rounds):
        for i in range(n):
            X[i] = X[i] * T.float32(0.999) + T.float32(0.5)


def affine_block(block: np.ndarray, scale: float = 1.5) -> np.ndarray:
    out = np.empty_like(block)
    tvmscript.build(affine, release_gil=True)(block.shape[0], block.shape[1], block, out, scale)
    return out


def _blocks_and_whole() -> tuple[Any, np.ndarray]:
    x = np.random.default_rng(1).random((300, 200), dtype=np.float32)
    whole = affine_block(x)
    # Uneven chunks: each block has its own shape, so the row index restarts per block.
    return da.from_array(x, chunks=((100, 150, 50), (120, 80))), whole


def _expected_blockwise(x: np.ndarray, row_chunks: tuple[int, ...]) -> np.ndarray:
    starts = np.concatenate([np.arange(c) for c in row_chunks])
    return x * np.float32(1.5) + (starts % 7).astype(np.float32)[:, None]


def test_map_blocks_on_the_threaded_scheduler_matches_one_call() -> None:
    chunked, whole = _blocks_and_whole()
    result = chunked.map_blocks(affine_block, dtype=np.float32).compute(scheduler="threads")
    x = chunked.compute()
    # numpy rounds twice where the kernel may use one FMA (fp_contract): close, not equal.
    np.testing.assert_allclose(result, _expected_blockwise(x, (100, 150, 50)), rtol=1e-6)
    uniform = da.from_array(x, chunks=(300, 100))  # whole rows: the same as one call
    np.testing.assert_array_equal(
        uniform.map_blocks(affine_block, dtype=np.float32).compute(scheduler="threads"), whole
    )


def test_map_blocks_on_a_local_distributed_cluster_matches_threads() -> None:
    distributed = pytest.importorskip("distributed")
    chunked, _ = _blocks_and_whole()
    lazy = chunked.map_blocks(affine_block, dtype=np.float32)
    threaded = lazy.compute(scheduler="threads")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        result = client.compute(lazy).result()
    np.testing.assert_array_equal(result, threaded)


def test_the_package_pickles_by_name_for_dask() -> None:
    cloudpickle = pytest.importorskip("cloudpickle")
    assert cloudpickle.loads(cloudpickle.dumps(tvmscript)) is tvmscript


@pytest.mark.parametrize("release_gil", [True, False])
def test_other_threads_run_while_a_kernel_runs_only_when_the_gil_is_released(
    release_gil: bool,
) -> None:
    kernel = tvmscript.build(spin, release_gil=release_gil)
    data = np.ones(1 << 16, np.float32)
    rounds = 1
    while True:  # a call of at least ~0.2 s on this machine
        start = time.perf_counter()
        kernel(data.size, data, rounds)
        if time.perf_counter() - start > 0.2:
            break
        rounds *= 4
    stamps: list[float] = []
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set() and len(stamps) < 5_000_000:
            stamps.append(time.perf_counter())

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.01)
        begin = time.perf_counter()
        kernel(data.size, data, rounds)
        end = time.perf_counter()
    finally:
        stop.set()
        counter.join()
    # Ticks in the middle half of the call: the counter needs the GIL to tick. Held for the
    # whole native call, none can happen (a switch before the call starts is ~5 ms, well
    # under a quarter of the call).
    quarter = (end - begin) / 4
    middle = [t for t in stamps if begin + quarter < t < end - quarter]
    if release_gil:
        assert middle, "no Python ran while a GIL-free kernel ran"
    else:
        assert not middle, f"{len(middle)} ticks while the kernel held the GIL"
