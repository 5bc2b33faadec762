"""2-d convolution, NCHW input, KCRS weights, 3x3 window, stride 1, no padding."""

from __future__ import annotations

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T

N, C, H, W = 2, 8, 18, 18
K = 16
OH, OW = H - 2, W - 2


@T.prim_func
def conv2d(
    data: T.Buffer((N, C, H, W), "float32"),
    weight: T.Buffer((K, C, 3, 3), "float32"),
    out: T.Buffer((N, K, OH, OW), "float32"),
) -> None:
    for n, k in T.grid(N, K):
        for y, x in T.grid(OH, OW):
            out[n, k, y, x] = T.float32(0)
        # x innermost: consecutive outputs read consecutive inputs, so the loop vectorizes.
        for c, y, dy, dx, x in T.grid(C, OH, 3, 3, OW):
            out[n, k, y, x] = out[n, k, y, x] + data[n, c, y + dy, x + dx] * weight[k, c, dy, dx]


def numpy_conv2d(data: np.ndarray, weight: np.ndarray) -> np.ndarray:
    windows = np.lib.stride_tricks.sliding_window_view(data, (3, 3), axis=(2, 3))
    result: np.ndarray = np.einsum("ncyxrs,kcrs->nkyx", windows, weight, optimize=True)
    return result


def main() -> None:
    kernel = tvmscript.build(conv2d)
    rng = np.random.default_rng(0)
    data = rng.random((N, C, H, W), dtype=np.float32)
    weight = rng.random((K, C, 3, 3), dtype=np.float32)
    out = np.empty((N, K, OH, OW), np.float32)
    kernel(data, weight, out)
    np.testing.assert_allclose(out, numpy_conv2d(data, weight), rtol=1e-5)
    print("conv2d matches numpy")
    report(f"conv2d NCHW {N}x{C}x{H}x{W}, {K} 3x3 filters", lambda: kernel(data, weight, out),
           lambda: numpy_conv2d(data, weight))


if __name__ == "__main__":
    main()
