"""A kernel as the block function of a chunked Dask array, on threads and on a local cluster.

``release_gil=True`` makes the generated entry release the GIL while the kernel runs, so
Dask's worker threads compute blocks truly in parallel. The kernel has symbolic extents, so one
build serves every block shape; ``map_blocks`` hands each block to a small Python function that
allocates the output block and calls the kernel. The result is compared with one call of the
same kernel on the whole array (and with numpy).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

import tvmscript
from tvmscript import tir as T

ROWS, COLS, CHUNK = 1024, 512, 256


@T.prim_func
def smooth_relu(
    n: T.int64,
    m: T.int64,
    X: T.Buffer((n, m), "float32"),  # noqa: F821  (n, m are the parameters above)
    Y: T.Buffer((n, m), "float32"),  # noqa: F821
    alpha: T.float32,
) -> None:
    for i, j in T.grid(n, m):
        Y[i, j] = T.log(T.float32(1) + T.exp(X[i, j] * alpha)) / alpha


def kernel() -> Any:
    """Built once per process (build() caches structurally equal functions)."""
    return tvmscript.build(smooth_relu, release_gil=True)


def smooth_relu_block(block: np.ndarray, alpha: float = 2.0) -> np.ndarray:
    out = np.empty_like(block)
    kernel()(block.shape[0], block.shape[1], block, out, alpha)
    return out


def numpy_smooth_relu(x: np.ndarray, alpha: float = 2.0) -> np.ndarray:
    result: np.ndarray = np.log1p(np.exp(x * np.float32(alpha))) / np.float32(alpha)
    return result


def _best(run: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    try:
        import dask
        import dask.array as da
    except ImportError:
        print("skipped: dask is not installed (pip install 'dask[distributed]')")
        return

    x = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)
    whole = smooth_relu_block(x)  # one call on the whole array
    np.testing.assert_allclose(whole, numpy_smooth_relu(x), rtol=1e-5, atol=1e-6)
    chunked = da.from_array(x, chunks=(CHUNK, CHUNK))
    lazy = chunked.map_blocks(smooth_relu_block, dtype=np.float32)

    threaded = lazy.compute(scheduler="threads")  # the first compute also warms Dask up
    np.testing.assert_array_equal(threaded, whole)
    t_threads = _best(lambda: lazy.compute(scheduler="threads"))
    print(f"threaded scheduler: {chunked.npartitions} blocks match one big call")

    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        distributed = client.compute(lazy).result()
        t_cluster = _best(lambda: client.compute(lazy).result())
    np.testing.assert_array_equal(distributed, whole)
    print("dask.distributed local cluster: blocks match one big call")

    numpy_lazy = chunked.map_blocks(numpy_smooth_relu, dtype=np.float32)
    with dask.config.set(scheduler="threads"):
        numpy_chunked = numpy_lazy.compute()
        t_numpy = _best(numpy_lazy.compute)
    np.testing.assert_allclose(numpy_chunked, whole, rtol=1e-5, atol=1e-6)
    print(f"{ROWS}x{COLS} in {CHUNK}x{CHUNK} blocks: tvmscript threads {t_threads * 1e3:.1f} ms, "
          f"cluster {t_cluster * 1e3:.1f} ms, numpy threads {t_numpy * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
