"""The late rewrites added for TVM-style kernels, at random sizes past their thresholds
(which the random program generator's small arrays never reach): integer histograms
privatized per task, parallel column loops interchanged in chunks, nested reduction loops
interchanged. Values are small integers, so float sums are exact in any order and the
checks are about which elements meet, against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from late_kit import AVX2, runs_avx2

import tvmscript
from tvmscript import tir as T


@T.prim_func
def histogram_i8(d: T.handle, w: T.handle, h: T.handle):
    n = T.int32()
    D = T.match_buffer(d, (n,), "int32")
    W = T.match_buffer(w, (n,), "int8")
    H = T.match_buffer(h, (200,), "int8")
    for i in range(n):
        H[D[i]] = H[D[i]] + W[i]


@T.prim_func
def histogram_u32(d: T.handle, h: T.handle):
    n = T.int32()
    D = T.match_buffer(d, (n,), "int32")
    H = T.match_buffer(h, (37,), "uint32")
    for i in range(n):
        H[D[i]] = T.uint32(3) + H[D[i]]


@runs_avx2
@pytest.mark.parametrize("seed", range(4))
def test_histograms_at_random_lengths(seed: int) -> None:
    rng = np.random.default_rng(seed)
    i8 = tvmscript.build(histogram_i8, target=AVX2, cache=False)
    u32 = tvmscript.build(histogram_u32, target=AVX2, cache=False)
    assert "_private" in i8.get_source("tir") and "_private" in u32.get_source("tir")
    for n in rng.integers(0, 300_000, 3):
        d = rng.integers(0, 200, n).astype("int32")
        w = rng.integers(-128, 128, n).astype("int8")
        h0 = rng.integers(-128, 128, 200).astype("int8")
        want = h0.astype("int64")
        np.add.at(want, d, w.astype("int64"))
        for _ in range(3):  # parallel tasks on every core, several runs
            h = h0.copy()
            i8(d, w, h)
            np.testing.assert_array_equal(h, want.astype("int8"))  # wrapped, as the loop does
        d37 = rng.integers(0, 37, n).astype("int32")
        hu = np.full(37, 2**32 - 5, "uint32")
        u32(d37, hu)
        expect = (np.uint64(2**32 - 5) + 3 * np.bincount(d37, minlength=37).astype("uint64"))
        np.testing.assert_array_equal(hu, (expect % 2**32).astype("uint32"))


def _column_sums(rows: int, cols: int):
    @T.prim_func
    def column_sums(A: T.Buffer((rows, cols), "float32"), S: T.Buffer((cols,), "float32")):
        for j in T.parallel(cols):
            for i in range(rows):
                with T.block("S"):
                    vj, vi = T.axis.remap("SR", [j, i])
                    with T.init():
                        S[vj] = T.float32(0)
                    S[vj] = S[vj] + A[vi, vj]

    return column_sums


@runs_avx2
# (reductions of fewer than 16 steps are not interchanged: version_accumulator_nests)
@pytest.mark.parametrize(("rows", "cols"), [(18, 128), (19, 384), (17, 1024), (40, 16 * 8 * 3)])
def test_column_chunks_at_several_shapes(rows: int, cols: int) -> None:
    func = _column_sums(rows, cols)
    kernel = tvmscript.build(func, target=AVX2, cache=False)
    assert "_chunk" in kernel.get_source("tir")
    a = np.random.default_rng(rows).integers(-50, 50, (rows, cols)).astype("float32")
    want = np.full(cols, 7, "float32")
    tvmscript.build(func, target="interp")(a, want)
    np.testing.assert_array_equal(want, a.sum(axis=0))
    for _ in range(3):  # parallel chunks on every core, several runs
        s = np.full(cols, 7, "float32")
        kernel(a, s)
        np.testing.assert_array_equal(s, want)


def _windows(channels: int, size: int, k: int):
    out = size - k + 1

    @T.prim_func
    def windows(P: T.Buffer((channels, size, size), "float32"),
                W: T.Buffer((channels, k, k), "float32"),
                Y: T.Buffer((out, out), "float32")):
        for h, w, c, kh, kw in T.grid(out, out, channels, k, k):
            with T.block("Y"):
                vh, vw, vc, vkh, vkw = T.axis.remap("SSRRR", [h, w, c, kh, kw])
                with T.init():
                    Y[vh, vw] = T.float32(0)
                Y[vh, vw] = Y[vh, vw] + P[vc, vh + vkh, vw + vkw] * W[vc, vkh, vkw]

    return windows


@runs_avx2
@pytest.mark.parametrize(("channels", "size", "k"), [(1, 18, 3), (5, 40, 1), (3, 33, 5)])
def test_nested_windows_at_several_shapes(channels: int, size: int, k: int) -> None:
    func = _windows(channels, size, k)
    kernel = tvmscript.build(func, target=AVX2, cache=False)
    assert "tvms.noalias_region" in kernel.get_source("tir")
    rng = np.random.default_rng(size)
    p = rng.integers(-9, 9, (channels, size, size)).astype("float32")
    w = rng.integers(-9, 9, (channels, k, k)).astype("float32")
    out = size - k + 1
    want = np.zeros((out, out), "float32")
    for c in range(channels):
        for kh in range(k):
            for kw in range(k):
                want += p[c, kh:kh + out, kw:kw + out] * w[c, kh, kw]
    interp = np.full((out, out), 3, "float32")
    tvmscript.build(func, target="interp")(p, w, interp)
    np.testing.assert_array_equal(interp, want)
    for _ in range(3):
        y = np.full((out, out), 3, "float32")
        kernel(p, w, y)
        np.testing.assert_array_equal(y, want)


def _packed_conv(chunks: int, size: int, block: int):
    # an NCHW[x]c convolution as TE prints it: a padding stage, the input channel split by
    # the layout into ic // block and ic % block, the output row (ow, oc_block)
    channels, out = chunks * block, size

    @T.prim_func
    def packed(data: T.Buffer((1, chunks, size, size, block), "float32"),
               kernel: T.Buffer((chunks, chunks, 3, 3, block, block), "float32"),
               conv: T.Buffer((1, chunks, size, size, block), "float32")):
        pad = T.alloc_buffer((1, chunks, size + 2, size + 2, block))
        for i0, i1, i2, i3, i4 in T.grid(1, chunks, size + 2, size + 2, block):
            with T.block("pad"):
                v0, v1, v2, v3, v4 = T.axis.remap("SSSSS", [i0, i1, i2, i3, i4])
                pad[v0, v1, v2, v3, v4] = T.if_then_else(
                    1 <= v2 and v2 < size + 1 and 1 <= v3 and v3 < size + 1,
                    data[v0, v1, v2 - 1, v3 - 1, v4], T.float32(0))
        for n, oc, oh, ow, ob, ic, kh, kw in T.grid(1, chunks, out, out, block, channels, 3, 3):
            with T.block("conv"):
                vn, voc, voh, vow, vob, vic, vkh, vkw = T.axis.remap(
                    "SSSSSRRR", [n, oc, oh, ow, ob, ic, kh, kw])
                with T.init():
                    conv[vn, voc, voh, vow, vob] = T.float32(0)
                conv[vn, voc, voh, vow, vob] = conv[vn, voc, voh, vow, vob] + pad[
                    vn, vic // block, voh + vkh, vow + vkw, vic % block] * kernel[
                    voc, vic // block, vkh, vkw, vic % block, vob]

    return packed


@runs_avx2
@pytest.mark.parametrize(("chunks", "size", "block"), [(2, 9, 8), (3, 20, 4), (1, 33, 8)])
def test_packed_convolutions_at_several_shapes(chunks: int, size: int, block: int) -> None:
    func = _packed_conv(chunks, size, block)
    kernel = tvmscript.build(func, target=AVX2, cache=False)
    lowered = kernel.get_source("tir")
    assert "tvms.noalias_region" in lowered
    rng = np.random.default_rng(size)
    data = rng.integers(-9, 9, (1, chunks, size, size, block)).astype("float32")
    weights = rng.integers(-9, 9, (chunks, chunks, 3, 3, block, block)).astype("float32")
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1), (0, 0)))
    want = np.zeros((1, chunks, size, size, block), "float32")
    for kh in range(3):
        for kw in range(3):
            window = padded[:, :, kh:kh + size, kw:kw + size, :]
            want += np.einsum("nchwi,qcio->nqhwo", window, weights[:, :, kh, kw])
    for _ in range(3):
        got = np.full(want.shape, 3, "float32")
        kernel(data, weights, got)
        np.testing.assert_array_equal(got, want)
