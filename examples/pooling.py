"""2x2 max pooling and average pooling with stride 2 on NCHW data."""

from __future__ import annotations

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T

N, C, H, W = 2, 16, 32, 32


@T.prim_func
def pool2x2(
    data: T.Buffer((N, C, H, W), "float32"),
    max_out: T.Buffer((N, C, H // 2, W // 2), "float32"),
    avg_out: T.Buffer((N, C, H // 2, W // 2), "float32"),
) -> None:
    for n, c, y, x in T.grid(N, C, H // 2, W // 2):
        max_out[n, c, y, x] = data[n, c, 2 * y, 2 * x]
        avg_out[n, c, y, x] = T.float32(0)
        for dy, dx in T.grid(2, 2):
            max_out[n, c, y, x] = T.max(max_out[n, c, y, x], data[n, c, 2 * y + dy, 2 * x + dx])
            avg_out[n, c, y, x] = avg_out[n, c, y, x] + data[n, c, 2 * y + dy, 2 * x + dx]
        avg_out[n, c, y, x] = avg_out[n, c, y, x] * T.float32(0.25)


def numpy_pool(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    blocks = data.reshape(N, C, H // 2, 2, W // 2, 2)
    return blocks.max(axis=(3, 5)), blocks.mean(axis=(3, 5))


def main() -> None:
    kernel = tvmscript.build(pool2x2)
    data = np.random.default_rng(0).random((N, C, H, W), dtype=np.float32)
    max_out = np.empty((N, C, H // 2, W // 2), np.float32)
    avg_out = np.empty_like(max_out)
    kernel(data, max_out, avg_out)
    want_max, want_avg = numpy_pool(data)
    np.testing.assert_array_equal(max_out, want_max)
    np.testing.assert_allclose(avg_out, want_avg, rtol=1e-6)
    print("max and average pooling match numpy")
    report(f"pool2x2 {N}x{C}x{H}x{W}", lambda: kernel(data, max_out, avg_out),
           lambda: numpy_pool(data))


if __name__ == "__main__":
    main()
