"""Declared reductions accumulate in fixed lanes (lowering/transforms/reduce_vectorize.py): the IR under
a pinned target, results vs the interpreter, accuracy vs float64, the same bits with 1 and 2
threads, source order for plain loops and with ``strict_reductions=True``."""

from __future__ import annotations

import numpy as np
import pytest
from pinned import AVX2, AVX512, lower_for
from thread_runs import printed_with_threads

import tvmscript
from irbuilder.ir import as_dtype
from lowering.transforms.reduce_vectorize import reduction_lanes
from tvmscript import tir as T
from tvmscript.ir import assert_structural_equal


@T.prim_func
def dot(a: T.Buffer((1000,), "float32"), b: T.Buffer((1000,), "float32"), c: T.Buffer((1,), "float32")):  # noqa: E501
    for k in range(1000):
        with T.block("dot"):
            vk = T.axis.reduce(1000, k)
            with T.init():
                c[0] = T.float32(0)
            c[0] = c[0] + a[vk] * b[vk]


@T.prim_func
def rowsum(A: T.Buffer((64, 300), "float64"), B: T.Buffer((64,), "float64")):
    for i, k in T.grid(64, 300):
        with T.block("rs"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float64(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum_parallel(A: T.Buffer((256, 4099), "float32"), B: T.Buffer((256,), "float32")):
    for i in T.parallel(256):
        for k in range(4099):
            with T.block("rs"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def int_max(A: T.Buffer((16, 1000), "int32"), B: T.Buffer((16,), "int32")):
    for i, k in T.grid(16, 1000):
        with T.block("mx"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.int32(-2147483648)
            B[vi] = T.max(B[vi], A[vi, vk])


@T.prim_func
def float_max(A: T.Buffer((8, 1000), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 1000):
        with T.block("mx"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(-3.0e38)
            B[vi] = T.max(B[vi], A[vi, vk])


@T.prim_func
def prod(A: T.Buffer((4, 500), "float64"), B: T.Buffer((4,), "float64")):
    for i, k in T.grid(4, 500):
        with T.block("p"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float64(1)
            B[vi] = B[vi] * A[vi, vk]


@T.prim_func
def compute_sum(A: T.Buffer((32, 777), "float32"), B: T.Buffer((32,), "float32")):
    k = T.reduce_axis(0, 777)
    T.compute((32,), lambda i: T.sum(A[i, k], axis=[k]), out=B)


@T.prim_func
def symbolic_dot(a: T.handle, b: T.handle, c: T.Buffer((1,), "float32")):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for k in range(n):
        with T.block("dot"):
            vk = T.axis.reduce(n, k)
            with T.init():
                c[0] = T.float32(0)
            c[0] = c[0] + A[vk] * B[vk]


@T.prim_func
def plain_sum(A: T.Buffer((1000,), "float32"), B: T.Buffer((1,), "float32")):
    B[0] = T.float32(0)
    for k in range(1000):
        B[0] = B[0] + A[k]


@T.prim_func
def strided_matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):  # noqa: E501
    for i, j, k in T.grid(64, 64, 64):
        with T.block("mm"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _rng_args(*shapes_dtypes: tuple[tuple[int, ...], str]) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.standard_normal(shape).astype(dtype) for shape, dtype in shapes_dtypes]


def test_lanes_are_fixed_by_the_dtype_not_the_target() -> None:
    assert reduction_lanes(as_dtype("float32")) == 64
    assert reduction_lanes(as_dtype("float64")) == 32
    for target in (AVX2, AVX512):
        text = lower_for(dot, target).script()
        assert 'c_flat_lanes = T.decl_buffer((64,), "float32", scope="local")' in text
        # the pairwise combine, widest step first, then the remainder in source order
        assert "c_flat_lanes[0] = c_flat_lanes[0] + c_flat_lanes[1]" in text
        assert "for r in range(40):" in text


def test_plain_loops_keep_source_order() -> None:
    text = lower_for(plain_sum, AVX2).script()
    assert "_lanes" not in text


def test_strided_reductions_keep_source_order() -> None:
    assert "_lanes" not in lower_for(strided_matmul, AVX2).script()


@T.prim_func
def plain_max(A: T.Buffer((8, 1000), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = A[i, 0]
        for k in range(1000):
            B[i] = T.max(B[i], A[i, k])


@T.prim_func
def plain_int_sum(A: T.Buffer((8, 1000), "int32"), B: T.Buffer((8,), "int32")):
    for i in range(8):
        B[i] = 0
        for k in range(1000):
            B[i] = B[i] + A[i, k]


def test_float_max_lanes_are_guarded_and_plain_exact_reductions_vectorize() -> None:
    lowered = lower_for(float_max, AVX2)
    text = lowered.script()
    # the source-order fallback is its own loop (one definition per loop var): it parses back
    assert_structural_equal(lowered, tvmscript.from_source(text), map_free_vars=True)
    assert 'B_flat_lanes_1 = T.decl_buffer((64,), "float32", data=B_flat_lanes' in text
    # the lane result is used only when every element was finite and it is not zero
    assert "if B_flat_finite_1[0] == B_flat_finite_1[0] and T.max(B_flat[i], B_flat_lanes_1[0]) != T.float32(0):" in text  # noqa: E501
    # a plain float max is left to jam_parallel_reductions (serial rows: source order)
    assert "_lanes" not in lower_for(plain_max, AVX2).script()
    text = lower_for(plain_int_sum, AVX2).script()
    assert "B_flat_lanes" in text and "B_flat_finite" not in text
    assert "_lanes" not in lower_for(plain_sum, AVX2).script()  # a float sum keeps its order


@pytest.mark.parametrize("func", [float_max, plain_max], ids=["block", "plain"])
def test_float_max_lanes_give_the_source_order_bits(func: object) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((8, 1000)).astype("float32")
    a[1, 500] = np.nan  # a NaN in the middle: the source order drops it
    a[2, 999] = np.nan  # at the end: kept
    a[3] = -np.abs(a[3])
    a[3, 10], a[3, 700] = 0.0, -0.0  # the maximum is a zero: its sign depends on order
    a[4, 3] = np.inf
    a[5] = -np.abs(a[5]) - 1
    a[5, 999] = -0.0
    kernel, reference = tvmscript.build(func), tvmscript.build(func, target="interp")
    got, want = np.zeros(8, "float32"), np.zeros(8, "float32")
    kernel(a, got)
    reference(a, want)
    assert got.tobytes() == want.tobytes()
    b = np.random.default_rng(4).standard_normal((8, 1000)).astype("float32")
    kernel(b, got)
    np.testing.assert_array_equal(got, b.max(axis=1))


def test_plain_integer_sums_give_the_source_order_bits() -> None:
    a = np.random.default_rng(5).integers(-(2**31), 2**31 - 1, (8, 1000)).astype("int32")
    got, want = np.zeros(8, "int32"), np.zeros(8, "int32")
    tvmscript.build(plain_int_sum)(a, got)
    tvmscript.build(plain_int_sum, target="interp")(a, want)
    np.testing.assert_array_equal(got, want)


def test_strict_reductions_keeps_source_order() -> None:
    strict = tvmscript.build(dot, strict_reductions=True)
    assert "_lanes" not in strict.get_source("tir")
    assert "_lanes" in tvmscript.build(dot).get_source("tir")
    with pytest.raises(TypeError, match="strict_reductions must be a bool"):
        tvmscript.build(dot, strict_reductions=1)


@pytest.mark.parametrize(
    ("func", "args"),
    [
        (dot, [((1000,), "float32"), ((1000,), "float32"), ((1,), "float32")]),
        (rowsum, [((64, 300), "float64"), ((64,), "float64")]),
        (prod, [((4, 500), "float64"), ((4,), "float64")]),
        (compute_sum, [((32, 777), "float32"), ((32,), "float32")]),
        (float_max, [((8, 1000), "float32"), ((8,), "float32")]),
    ],
    ids=["dot", "rowsum", "prod", "compute_sum", "float_max"],
)
def test_matches_interpreter_within_the_lane_split_bound(func: object, args: list) -> None:
    arrays = _rng_args(*args)
    if func is prod:
        arrays[0] = (1 + arrays[0] * 1e-3).astype("float64")
    expected = [a.copy() for a in arrays]
    tvmscript.build(func, target="interp")(*expected)
    got = [a.copy() for a in arrays]
    tvmscript.build(func)(*got)
    eps = np.finfo(arrays[-1].dtype).eps
    n = arrays[0].shape[-1]
    scale = np.abs(arrays[0]).reshape(-1, n).sum(axis=1) if func is not dot else np.abs(
        arrays[0] * arrays[1]).sum()
    bound = 2 * (n / 64 + 6 + n) * eps * scale  # lane split + the interpreter's sequential sum
    if func is prod:
        bound = 4 * n * eps * np.abs(expected[-1])
    assert np.all(np.abs(got[-1] - expected[-1]) <= bound + 1e-30)


def test_accuracy_vs_float64_reference() -> None:
    rng = np.random.default_rng(3)
    a = rng.random(1 << 20).astype("float32")
    b = rng.random(1 << 20).astype("float32")

    @T.prim_func
    def big_dot(x: T.Buffer((1 << 20,), "float32"), y: T.Buffer((1 << 20,), "float32"), c: T.Buffer((1,), "float32")):  # noqa: E501
        for k in range(1 << 20):
            with T.block("dot"):
                vk = T.axis.reduce(1 << 20, k)
                with T.init():
                    c[0] = T.float32(0)
                c[0] = c[0] + x[vk] * y[vk]

    exact = float(np.dot(a.astype("float64"), b.astype("float64")))
    c = np.zeros(1, "float32")
    tvmscript.build(big_dot)(a, b, c)
    strict = np.zeros(1, "float32")
    tvmscript.build(big_dot, strict_reductions=True)(a, b, strict)
    eps = float(np.finfo("float32").eps)
    scale = float(np.abs(a.astype("float64") * b).sum())
    # documented bound: (n / L + log2 L + 1) * eps * sum|x| (L = 64 lanes)
    assert abs(float(c[0]) - exact) <= ((1 << 20) / 64 + 7) * eps * scale
    assert abs(float(c[0]) - exact) < abs(float(strict[0]) - exact)


def test_integer_max_is_exact() -> None:
    rng = np.random.default_rng(1)
    A = rng.integers(-(10**9), 10**9, (16, 1000)).astype("int32")
    B = np.zeros(16, "int32")
    tvmscript.build(int_max)(A, B)
    assert "_lanes" in lower_for(int_max, AVX2).script()
    np.testing.assert_array_equal(B, A.max(axis=1))


@pytest.mark.parametrize("n", [0, 1, 63, 64, 127, 128, 1000])
def test_symbolic_extent_matches_interpreter(n: int) -> None:
    rng = np.random.default_rng(n)
    a, b = rng.random(n).astype("float32"), rng.random(n).astype("float32")
    got, want = np.full(1, 5, "float32"), np.full(1, 5, "float32")
    tvmscript.build(symbolic_dot)(a, b, got)
    tvmscript.build(symbolic_dot, target="interp")(a, b, want)
    if n == 0:
        np.testing.assert_array_equal(got, want)  # no iteration: init never runs
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_overlapping_arrays_take_the_source_order_path() -> None:
    base = np.arange(1, 1001, dtype="float32") / 1000
    a = base.copy()
    b = np.ones(1000, "float32")
    want = a.copy()
    tvmscript.build(dot, target="interp")(want, b, want[:1])
    tvmscript.build(dot)(a, b, a[:1])
    np.testing.assert_array_equal(a, want)


def test_same_bits_with_one_and_two_threads() -> None:
    outs = printed_with_threads("""
        import numpy as np
        import test_reduce_vectorize as t, tvmscript
        A = np.random.default_rng(5).standard_normal((256, 4099)).astype('float32')
        B = np.zeros(256, 'float32')
        tvmscript.build(t.rowsum_parallel)(A, B)
        print(B.tobytes().hex())
    """)
    assert outs[0] == outs[1] and outs[0]


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64"])
def test_integer_sums_are_exact_in_any_order(dtype: str) -> None:
    @T.prim_func
    def int_sum(A: T.Buffer((4, 1000), dtype), B: T.Buffer((4,), dtype)):
        for i, k in T.grid(4, 1000):
            with T.block("rs"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.cast(0, dtype)
                B[vi] = B[vi] + A[vi, vk]

    A = (np.random.default_rng(0).random((4, 1000)) * 100).astype(dtype)
    got, want = np.zeros(4, dtype), np.zeros(4, dtype)
    kernel = tvmscript.build(int_sum)
    kernel(A, got)
    tvmscript.build(int_sum, target="interp")(A, want)
    assert "_lanes" in kernel.get_source("tir")
    np.testing.assert_array_equal(got, want)  # wrapping integer sums do not depend on order


@pytest.mark.parametrize("extent,lanes", [(16, 0), (40, 0), (63, 0), (64, 32), (127, 32),
                                          (128, 64), (1000, 64)])
def test_a_short_constant_extent_takes_fewer_lanes(extent: int, lanes: int) -> None:
    @T.prim_func
    def short_dot(a: T.Buffer((8, extent), "float32"), b: T.Buffer((extent,), "float32"),
                  c: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, extent):
            with T.block("dot"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    c[vi] = T.float32(0)
                c[vi] = c[vi] + a[vi, vk] * b[vk]

    for target in (AVX2, AVX512):
        text = lower_for(short_dot, target).script()
        if lanes == 0:
            assert "_lanes" not in text  # below 64 steps: source order, as TVM
        else:
            # one lane buffer per output (jammed outputs allocate theirs)
            assert (f'T.decl_buffer(({lanes},), "float32", scope="local")' in text
                    or f'T.allocate([{lanes}], "float32", "local")' in text)
            assert f"_lanes[T.Ramp({lanes}," not in text  # no wider lanes
    # the same bits on both targets and from run to run; the interpreter's source order
    # differs only in rounding
    a, b = _rng_args(((8, extent), "float32"), ((extent,), "float32"))
    outs = []
    for target in (AVX2, AVX512):
        if target.missing_on_host():
            continue
        for _ in range(2):
            c = np.zeros(8, "float32")
            tvmscript.build(short_dot, target=target, fp_contract=False)(a, b, c)
            outs.append(c)
    want = np.zeros(8, "float32")
    tvmscript.build(short_dot, target="interp")(a, b, want)
    for c in outs:
        np.testing.assert_array_equal(c, outs[0])
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
    exact = a.astype("float64") @ b.astype("float64")
    np.testing.assert_allclose(outs[0], exact, rtol=1e-5, atol=1e-5)
