"""Strong numba twins: each suite kernel as a skilled numba user would write it.

``@njit(parallel=True, fastmath=True)`` with ``prange`` over the outer loop wherever the
kernel has independent iterations (``fastmath`` lets LLVM vectorize float reductions and
reassociate), ``np.float32`` accumulators, contiguous inner loops, and private per-task
partial results where iterations would otherwise collide (histogram). Each kernel has 2-3
variants (``numba_strong_variants``); :data:`CHOICE` names the fastest measured on the
reference host (``benchmarks/peer_variants.py`` re-measures them). Imported only when numba
is importable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .schedule import MATMUL_PACKED_TILE

#: The variant each strong twin uses (the fastest on a Zen 4 AVX-512 host, 2 threads).
CHOICE = {
    "vadd": "prange",
    "fused": "prange_polyexp",
    "rowsum": "prange_fast",
    "softmax": "prange_polyexp",
    "transpose": "prange_t16",
    "matmul_naive": "local_acc",
    "matmul_tiled": "in_place_4x64",
    "conv2d": "direct",
    "stencil": "prange",
    "gather": "prange",
    "histogram": "serial",
}


def numba_strong_variants() -> dict[str, dict[str, Any]]:
    """Every kernel's variants as numba dispatchers: ``{kernel: {variant: fn}}``."""
    import numba

    prange = numba.prange
    njf = numba.njit(cache=False, parallel=True, fastmath=True)
    njp = numba.njit(cache=False, parallel=True, fastmath=False)
    nj = numba.njit(cache=False, fastmath=False)
    njs = numba.njit(cache=False, fastmath=True)
    V: dict[str, dict[str, Any]] = {}

    def vadd(a, b, c):  # type: ignore[no-untyped-def]
        for i in prange(a.shape[0]):
            c[i] = a[i] + b[i]

    def vadd_array(a, b, c):  # type: ignore[no-untyped-def]
        c[:] = a + b

    V["vadd"] = {"prange": njf(vadd), "array_expr": njf(vadd_array)}

    def fused(a, b, c, d):  # type: ignore[no-untyped-def]
        for i in prange(a.shape[0]):
            d[i] = np.exp(a[i]) * b[i] + c[i]

    @numba.njit(inline="always", fastmath=True)
    def poly_exp_block(x, p, bits):  # type: ignore[no-untyped-def]
        # exp as 2**n * p(r) (the TVM twin's polynomial); 2**n built in an int32 block that
        # the caller views as float32, so the loop vectorizes without SVML
        for i in range(x.shape[0]):
            v = min(max(x[i], np.float32(-87.0)), np.float32(88.0))
            n = np.floor(v * np.float32(1.4426950408889634) + np.float32(0.5))
            r = v - n * np.float32(0.693145751953125) - n * np.float32(1.428606765330187e-06)
            q = np.float32(1.0 / 720)
            q = q * r + np.float32(1.0 / 120)
            q = q * r + np.float32(1.0 / 24)
            q = q * r + np.float32(1.0 / 6)
            q = q * r + np.float32(0.5)
            q = q * r + np.float32(1.0)
            q = q * r + np.float32(1.0)
            p[i] = q
            bits[i] = (np.int32(n) + np.int32(127)) << np.int32(23)

    def fused_poly(a, b, c, d):  # type: ignore[no-untyped-def]
        for t in prange(a.shape[0] // 4096):
            p = np.empty(4096, np.float32)
            bits = np.empty(4096, np.int32)
            poly_exp_block(a[t * 4096:(t + 1) * 4096], p, bits)
            scale = bits.view(np.float32)
            for i in range(4096):
                d[t * 4096 + i] = p[i] * scale[i] * b[t * 4096 + i] + c[t * 4096 + i]

    V["fused"] = {"prange_fast": njf(fused), "prange": njp(fused), "prange_polyexp": njf(fused_poly)}

    def rowsum(a, b):  # type: ignore[no-untyped-def]
        for i in prange(a.shape[0]):
            s = np.float32(0)
            for j in range(a.shape[1]):
                s += a[i, j]
            b[i] = s

    def rowsum_lanes(a, b):  # type: ignore[no-untyped-def]
        for i in prange(a.shape[0]):
            acc = np.zeros(16, np.float32)
            for jo in range(0, a.shape[1], 16):
                for v in range(16):
                    acc[v] += a[i, jo + v]
            b[i] = acc.sum()

    V["rowsum"] = {"prange_fast": njf(rowsum), "prange_lanes16": njf(rowsum_lanes),
                   "prange_strict": njp(rowsum)}

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
            r = np.float32(1) / s
            for j in range(a.shape[1]):
                b[i, j] = b[i, j] * r

    def softmax_poly(a, b):  # type: ignore[no-untyped-def]
        w = a.shape[1]
        for i in prange(a.shape[0]):
            m = a[i, 0]
            for j in range(w):
                m = max(m, a[i, j])
            x = np.empty(w, np.float32)
            for j in range(w):
                x[j] = a[i, j] - m
            p = np.empty(w, np.float32)
            bits = np.empty(w, np.int32)
            poly_exp_block(x, p, bits)
            scale = bits.view(np.float32)
            s = np.float32(0)
            for j in range(w):
                e = p[j] * scale[j]
                b[i, j] = e
                s += e
            r = np.float32(1) / s
            for j in range(w):
                b[i, j] = b[i, j] * r

    V["softmax"] = {"prange_fast": njf(softmax), "prange": njp(softmax), "prange_polyexp": njf(softmax_poly)}

    def transpose_tiles(t: int) -> Any:
        def transpose(a, b):  # type: ignore[no-untyped-def]
            n = a.shape[0]
            for jo in prange(n // t):
                for io in range(n // t):
                    for j in range(jo * t, jo * t + t):
                        for i in range(io * t, io * t + t):
                            b[j, i] = a[i, j]
        return njf(transpose)

    def transpose_copy(a, b):  # type: ignore[no-untyped-def]
        n = a.shape[0]
        for j in prange(n):
            b[j, :] = a[:, j]

    V["transpose"] = {"prange_t16": transpose_tiles(16), "prange_t32": transpose_tiles(32),
                      "prange_t64": transpose_tiles(64), "row_copy": njf(transpose_copy)}

    def matmul_naive(a, b, c):  # type: ignore[no-untyped-def]
        n = a.shape[0]
        for i in range(n):
            for j in range(n):
                s = np.float32(0)
                for k in range(n):
                    s += a[i, k] * b[k, j]
                c[i, j] = s

    V["matmul_naive"] = {"local_acc": nj(matmul_naive), "local_acc_fast": njs(matmul_naive)}

    def mm_in_place(a, b, c):  # type: ignore[no-untyped-def]
        n = a.shape[0]
        for io in prange(n // 32):
            acc = np.empty((4, 64), np.float32)
            for jo in range(n // 64):
                for im in range(8):
                    acc[:] = 0
                    for k in range(n):
                        for ii in range(4):
                            av = a[io * 32 + im * 4 + ii, k]
                            for ji in range(64):
                                acc[ii, ji] += av * b[k, jo * 64 + ji]
                    for ii in range(4):
                        for ji in range(64):
                            c[io * 32 + im * 4 + ii, jo * 64 + ji] = acc[ii, ji]

    def mm_ikj(a, b, c):  # type: ignore[no-untyped-def]
        # rows in parallel; i-k-j order: the inner loop streams a row of B into a row of C
        n = a.shape[0]
        for i in prange(n):
            for j in range(n):
                c[i, j] = 0
            for k in range(n):
                av = a[i, k]
                for j in range(n):
                    c[i, j] += av * b[k, j]

    mr, nr, nc, kc = MATMUL_PACKED_TILE

    def mm_goto(a, b, c):  # type: ignore[no-untyped-def]
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

    V["matmul_tiled"] = {"in_place_4x64": njf(mm_in_place), "ikj_rows": njf(mm_ikj),
                         "goto_packed": njf(mm_goto)}

    def conv_direct(x, w, y):  # type: ignore[no-untyped-def]
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

    def conv_rows(x, w, y):  # type: ignore[no-untyped-def]
        # one output row of one channel at a time, accumulated in a local row
        kk, cc = w.shape[0], w.shape[1]
        h, wd = y.shape[2], y.shape[3]
        for k in prange(kk):
            acc = np.empty(wd, np.float32)
            for i in range(h):
                acc[:] = 0
                for c in range(cc):
                    for di in range(3):
                        for dj in range(3):
                            wv = w[k, c, di, dj]
                            for j in range(wd):
                                acc[j] += wv * x[0, c, i + di, j + dj]
                for j in range(wd):
                    y[0, k, i, j] = acc[j]

    V["conv2d"] = {"direct": njf(conv_direct), "rows": njf(conv_rows), "direct_strict": njp(conv_direct)}

    def stencil(a, b):  # type: ignore[no-untyped-def]
        n, m = a.shape
        for i in prange(1, n - 1):
            for j in range(1, m - 1):
                b[i, j] = np.float32(0.2) * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    def stencil_slices(a, b):  # type: ignore[no-untyped-def]
        n, m = a.shape
        for i in prange(1, n - 1):
            b[i, 1:m - 1] = np.float32(0.2) * (a[i, 1:m - 1] + a[i - 1, 1:m - 1] + a[i + 1, 1:m - 1]
                                               + a[i, 0:m - 2] + a[i, 2:m])

    V["stencil"] = {"prange": njf(stencil), "prange_slices": njf(stencil_slices)}

    def gather(table, idx, out):  # type: ignore[no-untyped-def]
        for i in prange(idx.shape[0]):
            out[i] = table[idx[i]]

    V["gather"] = {"prange": njf(gather), "serial": nj(gather)}

    def histogram_private(data, hist):  # type: ignore[no-untyped-def]
        tasks = 16
        chunk = data.shape[0] // tasks
        part = np.zeros((tasks, hist.shape[0]), np.int32)
        for t in prange(tasks):
            for i in range(t * chunk, (t + 1) * chunk):
                part[t, data[i]] += 1
        for b in range(hist.shape[0]):
            s = 0
            for t in range(tasks):
                s += part[t, b]
            hist[b] = s

    def histogram_serial(data, hist):  # type: ignore[no-untyped-def]
        for b in range(hist.shape[0]):
            hist[b] = 0
        for i in range(data.shape[0]):
            hist[data[i]] += 1

    V["histogram"] = {"private": njf(histogram_private), "serial": nj(histogram_serial)}
    return V


def build_numba_strong(
    inputs: dict[str, dict[str, np.ndarray]], names: Any = None,
    variants: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Runners of the strong twins (the :data:`CHOICE` variant, or ``variants[name]``)."""
    table = numba_strong_variants()
    chosen = {**CHOICE, **(variants or {})}
    runners = {}
    for name, fns in table.items():
        if names is not None and name not in names:
            continue
        fn = fns[chosen[name]]
        args = tuple(inputs[name].values())
        fn(*args)  # compile outside the timing
        runners[name] = lambda fn=fn, args=args: fn(*args)
    return runners
