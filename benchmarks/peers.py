"""The benchmark suite's kernels for the peers: numpy, TVM 0.27 (tirx, LLVM host target) and numba.

Each peer exposes ``kernels() -> dict[name, Runner]`` where a Runner is a zero-argument
callable running the kernel once on inputs prepared in advance (``prepare(name)``),
so the timing loop measures only the kernel call. TVM and numba are optional: their
factories return ``{}`` (and say why) when the package is not importable.

The loop nests mirror ours (benchmarks/suite.py) so that ratios compare code generation,
not algorithms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.schedule import MATMUL_PACKED_TILE, host_has_avx512

#: Give numba the packed matmul nest too (off: it runs its in-place nest faster).
PACKED_FOR_NUMBA = False
#: Give numba the register-blocked conv2d nest too (off: it runs the direct nest faster).
BLOCKED_CONV_FOR_NUMBA = False

Runner = Callable[[], Any]

SIZES = {
    "vadd": 1 << 24,
    "fused": 1 << 24,
    "rowsum": (4096, 4096),
    "softmax": (4096, 1024),
    "transpose": (4096, 4096),
    "matmul_naive": 1024,
    "matmul_tiled": 1024,
    "conv2d": (64, 56, 56, 64),
    "stencil": (4096, 4096),
    "gather": (1 << 24, 1 << 16),
    "histogram": (1 << 24, 256),
}


def aligned_empty(shape: Any, dtype: Any = np.float32, align: int = 64) -> np.ndarray:
    """An uninitialised array whose data pointer is ``align``-byte aligned (TVM needs 64)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    raw = np.empty(count * dtype.itemsize + align, np.uint8)
    offset = (-raw.ctypes.data) % align
    return raw[offset : offset + count * dtype.itemsize].view(dtype).reshape(shape)


def aligned_copy(values: np.ndarray, align: int = 64) -> np.ndarray:
    """A copy of ``values`` (same shape and dtype) whose data is ``align``-byte aligned."""
    out = aligned_empty(values.shape, values.dtype, align)
    out[...] = values
    return out


def make_inputs(seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    """Inputs and output arrays for every kernel (64-byte aligned, shared by all peers)."""
    rng = np.random.default_rng(seed)

    def rand(shape: Any, dtype: Any = np.float32) -> np.ndarray:
        out = aligned_empty(shape, dtype)
        out[...] = rng.random(shape, dtype=np.float32).astype(dtype)
        return out

    n = SIZES["vadd"]
    m = SIZES["matmul_naive"]
    c, h, w, k = SIZES["conv2d"]
    gn, gt = SIZES["gather"]
    hn, bins = SIZES["histogram"]
    idx = aligned_empty(gn, np.int32)
    idx[:] = rng.integers(0, gt, gn, dtype=np.int32)
    data = aligned_empty(hn, np.int32)
    data[:] = rng.integers(0, bins, hn, dtype=np.int32)
    return {
        "vadd": {"a": rand(n), "b": rand(n), "c": aligned_empty(n)},
        "fused": {"a": rand(n), "b": rand(n), "c": rand(n), "d": aligned_empty(n)},
        "rowsum": {"a": rand(SIZES["rowsum"]), "b": aligned_empty(SIZES["rowsum"][0])},
        "softmax": {"a": rand(SIZES["softmax"]), "b": aligned_empty(SIZES["softmax"])},
        "transpose": {"a": rand(SIZES["transpose"]), "b": aligned_empty(SIZES["transpose"])},
        "matmul_naive": {"a": rand((m, m)), "b": rand((m, m)), "c": aligned_empty((m, m))},
        "matmul_tiled": {"a": rand((m, m)), "b": rand((m, m)), "c": aligned_empty((m, m))},
        "conv2d": {
            "x": rand((1, c, h + 2, w + 2)),
            "w": rand((k, c, 3, 3)),
            "y": aligned_empty((1, k, h, w)),
        },
        "stencil": {"a": rand(SIZES["stencil"]), "b": aligned_empty(SIZES["stencil"])},
        "gather": {"table": rand(gt), "idx": idx, "out": aligned_empty(gn)},
        "histogram": {"data": data, "hist": aligned_empty(bins, np.int32)},
    }


# ---------------------------------------------------------------------------
# numpy
# ---------------------------------------------------------------------------


def numpy_kernels(inputs: dict[str, dict[str, np.ndarray]]) -> dict[str, Runner]:
    """numpy's best expression of each kernel (BLAS for matmul)."""
    v = inputs

    def softmax() -> None:
        a, b = v["softmax"]["a"], v["softmax"]["b"]
        np.subtract(a, a.max(axis=1, keepdims=True), out=b)
        np.exp(b, out=b)
        b /= b.sum(axis=1, keepdims=True)

    def conv2d() -> None:
        x, w, y = v["conv2d"]["x"], v["conv2d"]["w"], v["conv2d"]["y"]
        _, c, hp, wp = x.shape
        h, wd = hp - 2, wp - 2
        cols = np.lib.stride_tricks.sliding_window_view(x[0], (3, 3), axis=(1, 2))
        cols = cols.transpose(0, 3, 4, 1, 2).reshape(c * 9, h * wd)
        np.matmul(w.reshape(w.shape[0], -1), cols, out=y.reshape(w.shape[0], -1))

    def stencil() -> None:
        a, b = v["stencil"]["a"], v["stencil"]["b"]
        b[1:-1, 1:-1] = 0.2 * (
            a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
        )

    def histogram() -> None:
        d = v["histogram"]
        d["hist"][:] = np.bincount(d["data"], minlength=d["hist"].shape[0])

    return {
        "vadd": lambda: np.add(v["vadd"]["a"], v["vadd"]["b"], out=v["vadd"]["c"]),
        "fused": lambda: np.add(
            np.multiply(np.exp(v["fused"]["a"]), v["fused"]["b"], out=v["fused"]["d"]),
            v["fused"]["c"],
            out=v["fused"]["d"],
        ),
        "rowsum": lambda: np.sum(v["rowsum"]["a"], axis=1, out=v["rowsum"]["b"]),
        "softmax": softmax,
        "transpose": lambda: np.copyto(v["transpose"]["b"], v["transpose"]["a"].T),
        "matmul_naive": lambda: np.matmul(
            v["matmul_naive"]["a"], v["matmul_naive"]["b"], out=v["matmul_naive"]["c"]
        ),
        "matmul_tiled": lambda: np.matmul(
            v["matmul_tiled"]["a"], v["matmul_tiled"]["b"], out=v["matmul_tiled"]["c"]
        ),
        "conv2d": conv2d,
        "stencil": stencil,
        "gather": lambda: np.take(v["gather"]["table"], v["gather"]["idx"], out=v["gather"]["out"]),
        "histogram": histogram,
    }


# ---------------------------------------------------------------------------
# numba
# ---------------------------------------------------------------------------


def numba_kernels(inputs: dict[str, dict[str, np.ndarray]]) -> dict[str, Runner]:
    """numba @njit versions (parallel=True where ours use T.parallel); {} without numba."""
    try:
        import numba
    except ImportError:
        return {}
    nj = numba.njit(cache=False, fastmath=False)
    njp = numba.njit(cache=False, parallel=True, fastmath=False)
    prange = numba.prange

    @nj
    def vadd(a, b, c):  # type: ignore[no-untyped-def]
        for i in range(a.shape[0]):
            c[i] = a[i] + b[i]

    @nj
    def fused(a, b, c, d):  # type: ignore[no-untyped-def]
        for i in range(a.shape[0]):
            d[i] = np.exp(a[i]) * b[i] + c[i]

    @nj
    def rowsum(a, b):  # type: ignore[no-untyped-def]
        for i in range(a.shape[0]):
            s = np.float32(0)
            for j in range(a.shape[1]):
                s += a[i, j]
            b[i] = s

    @njp
    def softmax(a, b):  # type: ignore[no-untyped-def]
        for i in prange(a.shape[0]):
            m = a[i, 0]
            for j in range(a.shape[1]):
                m = max(m, a[i, j])
            s = np.float32(0)
            for j in range(a.shape[1]):
                e = np.exp(a[i, j] - m)
                b[i, j] = e
                s += e
            for j in range(a.shape[1]):
                b[i, j] = b[i, j] / s

    @nj
    def transpose(a, b):  # type: ignore[no-untyped-def]
        n = a.shape[0]
        for io in range(0, n, 32):
            for jo in range(0, n, 32):
                for i in range(io, io + 32):
                    for j in range(jo, jo + 32):
                        b[j, i] = a[i, j]

    @nj
    def matmul_naive(a, b, c):  # type: ignore[no-untyped-def]
        n = a.shape[0]
        for i in range(n):
            for j in range(n):
                s = np.float32(0)
                for k in range(n):
                    s += a[i, k] * b[k, j]
                c[i, j] = s

    @njp
    def matmul_tiled_in_place(a, b, c):  # type: ignore[no-untyped-def]
        n = a.shape[0]
        for io in prange(n // 32):
            for jo in range(n // 64):
                for im in range(8):
                    acc = np.zeros((4, 64), np.float32)
                    for k in range(n):
                        for ii in range(4):
                            av = a[io * 32 + im * 4 + ii, k]
                            for ji in range(64):
                                acc[ii, ji] += av * b[k, jo * 64 + ji]
                    for ii in range(4):
                        for ji in range(64):
                            c[io * 32 + im * 4 + ii, jo * 64 + ji] = acc[ii, ji]

    mr, nr, nc, kc = MATMUL_PACKED_TILE

    @njp
    def matmul_tiled_packed(a, b, c):  # type: ignore[no-untyped-def]
        n = a.shape[0]
        ap = np.empty(((n + mr - 1) // mr, n, mr), np.float32)
        for ib in prange((n + mr - 1) // mr):
            for k in range(n):
                for ii in range(mr):
                    ap[ib, k, ii] = a[min(ib * mr + ii, n - 1), k]
        for jc in prange(n // nc):
            bp = np.empty((nc // nr, kc, nr), np.float32)
            for kb in range(n // kc):
                for jr in range(nc // nr):
                    for k in range(kc):
                        for ji in range(nr):
                            bp[jr, k, ji] = b[kb * kc + k, jc * nc + jr * nr + ji]
                for im in range((n + mr - 1) // mr):
                    for jr in range(nc // nr):
                        acc = np.zeros((mr, nr), np.float32)
                        if kb > 0:
                            for ii in range(mr):
                                row = min(im * mr + ii, n - 1)
                                for ji in range(nr):
                                    acc[ii, ji] = c[row, jc * nc + jr * nr + ji]
                        for k in range(kc):
                            for ii in range(mr):
                                av = ap[im, kb * kc + k, ii]
                                for ji in range(nr):
                                    acc[ii, ji] += av * bp[jr, k, ji]
                        for ii in range(mr):
                            for ji in range(nr):
                                c[min(im * mr + ii, n - 1), jc * nc + jr * nr + ji] = acc[ii, ji]

    # numba runs the packed nest about 6x slower than the in-place one on AVX2 hosts (its
    # inner loop over the packed panel does not vectorize), so it keeps its faster nest.
    matmul_tiled = matmul_tiled_in_place if host_has_avx512() or not PACKED_FOR_NUMBA else (
        matmul_tiled_packed
    )

    @njp
    def conv2d_direct(x, w, y):  # type: ignore[no-untyped-def]
        kk, cc = w.shape[0], w.shape[1]
        h, wd = y.shape[2], y.shape[3]
        for k in prange(kk):
            for i in range(h):
                for j in range(wd):
                    y[0, k, i, j] = 0
            for c in range(cc):
                for di in range(3):
                    for dj in range(3):
                        wv = w[k, c, di, dj]
                        for i in range(h):
                            for j in range(wd):
                                y[0, k, i, j] += wv * x[0, c, i + di, j + dj]

    @njp
    def conv2d_blocked(x, w, y):  # type: ignore[no-untyped-def]
        for kb in prange(8):
            for i in range(56):
                for jb in range(7):
                    acc = np.zeros((8, 8), np.float32)
                    for c in range(64):
                        for di in range(3):
                            for dj in range(3):
                                for kk in range(8):
                                    wv = w[kb * 8 + kk, c, di, dj]
                                    for j in range(8):
                                        acc[kk, j] += wv * x[0, c, i + di, jb * 8 + j + dj]
                    for kk in range(8):
                        for j in range(8):
                            y[0, kb * 8 + kk, i, jb * 8 + j] = acc[kk, j]

    # numba keeps the nest it runs fastest (see PACKED_FOR_NUMBA): the direct one.
    conv2d = conv2d_blocked if BLOCKED_CONV_FOR_NUMBA else conv2d_direct

    @njp
    def stencil(a, b):  # type: ignore[no-untyped-def]
        n, m = a.shape
        for i in prange(1, n - 1):
            for j in range(1, m - 1):
                b[i, j] = np.float32(0.2) * (
                    a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]
                )

    @nj
    def gather(table, idx, out):  # type: ignore[no-untyped-def]
        for i in range(idx.shape[0]):
            out[i] = table[idx[i]]

    @nj
    def histogram(data, hist):  # type: ignore[no-untyped-def]
        for b in range(hist.shape[0]):
            hist[b] = 0
        for i in range(data.shape[0]):
            hist[data[i]] += 1

    fns = {
        "vadd": vadd, "fused": fused, "rowsum": rowsum, "softmax": softmax,
        "transpose": transpose, "matmul_naive": matmul_naive, "matmul_tiled": matmul_tiled,
        "conv2d": conv2d, "stencil": stencil, "gather": gather, "histogram": histogram,
    }
    runners: dict[str, Runner] = {}
    for name, fn in fns.items():
        args = tuple(inputs[name].values())
        fn(*args)  # compile outside the timing
        runners[name] = lambda fn=fn, args=args: fn(*args)
    return runners


# ---------------------------------------------------------------------------
# TVM 0.27 (tirx, plain loop nests, LLVM with the host CPU)
# ---------------------------------------------------------------------------


def tvm_kernels(inputs: dict[str, dict[str, np.ndarray]]) -> dict[str, Runner]:
    """TVM 0.27 kernels built with the host CPU target; {} when tvm is not importable."""
    try:
        import tvm
        from tvm.script import tirx as T
    except ImportError:
        return {}
    from benchmarks._tvm_suite import build_tvm_suite

    return build_tvm_suite(tvm, T, inputs)
