"""Long declared reductions no parallel loop encloses are cut into chunks reduced in parallel
(lowering/transforms/reduce_vectorize.py, ``_chunked``): the IR under a pinned target, the
documented order bit for bit, the same bits with 1 and 2 threads, exact integer sums, and
the source order when the accumulator overlaps an input."""

from __future__ import annotations

import numpy as np
from pinned import AVX2, AVX512, lower_for
from thread_runs import printed_with_threads

import tvmscript
from lowering.transforms.reduce_vectorize import PARALLEL_CHUNKS, PARALLEL_SPLIT_EXTENT
from tvmscript import tir as T
from tvmscript.ir import structural_equal

N = PARALLEL_SPLIT_EXTENT + 77  # 77 elements after the last chunk


@T.prim_func
def big_sum(a: T.Buffer((N,), "float32"), c: T.Buffer((1,), "float32")):
    for k in range(N):
        with T.block("s"):
            vk = T.axis.reduce(N, k)
            with T.init():
                c[0] = T.float32(0)
            c[0] = c[0] + a[vk]


@T.prim_func
def big_int_sum(a: T.Buffer((N,), "int32"), c: T.Buffer((1,), "int32")):
    for k in range(N):
        with T.block("s"):
            vk = T.axis.reduce(N, k)
            with T.init():
                c[0] = 0
            c[0] = c[0] + a[vk]


@T.prim_func
def big_prod(a: T.Buffer((N,), "float64"), c: T.Buffer((1,), "float64")):
    for k in range(N):
        with T.block("p"):
            vk = T.axis.reduce(N, k)
            with T.init():
                c[0] = T.float64(1)
            c[0] = c[0] * a[vk]


@T.prim_func
def rows_under_parallel(A: T.Buffer((2, N), "float32"), B: T.Buffer((2,), "float32")):
    for i in T.parallel(2):
        for k in range(N):
            with T.block("s"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def _documented_order_sum(a: np.ndarray) -> np.float32:
    """The order of the module doc, in float32: 64 lanes per chunk folded as a tree, the
    partials in chunk order, then the elements after the last chunk."""
    lanes_n = 64
    size = len(a) // PARALLEL_CHUNKS // lanes_n * lanes_n
    total = np.float32(0)
    for chunk in range(PARALLEL_CHUNKS):
        rows = a[chunk * size : (chunk + 1) * size].reshape(-1, lanes_n)
        lanes = rows[0].copy()
        for row in rows[1:]:
            lanes = lanes + row
        half = lanes_n // 2
        while half >= 1:
            lanes[:half] = lanes[:half] + lanes[half : 2 * half]
            half //= 2
        total = np.float32(total + lanes[0])
    for value in a[PARALLEL_CHUNKS * size :]:
        total = np.float32(total + value)
    return total


def test_a_long_reduction_is_reduced_in_parallel_chunks() -> None:
    for target in (AVX2, AVX512):
        lowered = lower_for(big_sum, target)
        text = lowered.script()
        assert structural_equal(tvmscript.from_source(text), lowered)  # it re-parses
        assert f"for chunk in T.parallel({PARALLEL_CHUNKS}):" in text
        assert "c_flat_chunks_lanes" in text  # each chunk in lanes
        assert "for k in range(1048653):" in text  # the source order behind the overlap test


def test_no_chunks_under_a_parallel_loop_or_below_the_threshold() -> None:
    text = lower_for(rows_under_parallel, AVX2).script()
    assert "chunk" not in text and "_lanes" in text

    @T.prim_func
    def shorter(a: T.Buffer((PARALLEL_SPLIT_EXTENT - 1,), "float32"), c: T.Buffer((1,), "float32")):
        for k in range(PARALLEL_SPLIT_EXTENT - 1):
            with T.block("s"):
                vk = T.axis.reduce(PARALLEL_SPLIT_EXTENT - 1, k)
                with T.init():
                    c[0] = T.float32(0)
                c[0] = c[0] + a[vk]

    text = lower_for(shorter, AVX2).script()
    assert "chunk" not in text and "_lanes" in text


def test_the_documented_order_bit_for_bit() -> None:
    a = np.random.default_rng(11).standard_normal(N).astype("float32")
    c = np.zeros(1, "float32")
    tvmscript.build(big_sum)(a, c)
    assert c[0].tobytes() == _documented_order_sum(a).tobytes()
    exact = float(a.astype("float64").sum())
    eps = float(np.finfo("float32").eps)
    bound = (N / PARALLEL_CHUNKS / 64 + 6 + PARALLEL_CHUNKS + 77) * eps * float(np.abs(a).sum())
    assert abs(float(c[0]) - exact) <= bound


def test_same_bits_with_one_and_two_threads() -> None:
    outs = printed_with_threads("""
        import numpy as np
        import test_reduce_parallel_split as t, tvmscript
        a = np.random.default_rng(5).standard_normal(t.N).astype('float32')
        c = np.zeros(1, 'float32')
        tvmscript.build(t.big_sum)(a, c)
        print(c.tobytes().hex())
    """)
    assert outs[0] == outs[1] and outs[0]


def test_integer_sums_wrap_exactly() -> None:
    a = np.random.default_rng(2).integers(-(2**31), 2**31 - 1, N, dtype="int64").astype("int32")
    c = np.zeros(1, "int32")
    tvmscript.build(big_int_sum)(a, c)
    assert f"T.parallel({PARALLEL_CHUNKS})" in lower_for(big_int_sum, AVX2).script()
    assert int(c[0]) == int(np.sum(a, dtype="int32"))


def test_products_are_chunked_too() -> None:
    a = 1 + np.random.default_rng(4).standard_normal(N) * 1e-4
    c = np.zeros(1, "float64")
    tvmscript.build(big_prod)(a, c)
    assert f"T.parallel({PARALLEL_CHUNKS})" in lower_for(big_prod, AVX2).script()
    want = float(np.exp(np.log(a).sum()))
    assert abs(float(c[0]) - want) <= 1e-9 * abs(want)


def test_an_accumulator_overlapping_the_input_takes_the_source_order() -> None:
    a = np.random.default_rng(8).standard_normal(N).astype("float32")
    # Source order with c = a[0:1]: the init zeroes a[0], then a[0] += a[k] for every k.
    values = a.copy()
    values[0] = 0
    want = np.add.accumulate(np.concatenate([[np.float32(0)], values[1:]]).astype("float32"))
    tvmscript.build(big_sum)(a, a[:1])
    assert a[0].tobytes() == want[-1].tobytes()
