"""Dot-product reductions of neighbouring outputs share one lane-split loop on AVX-512
targets (lowering/transforms/reduce_jam.py): the IR per target, the same bits as the
unjammed split, the config override."""

from __future__ import annotations

import numpy as np
import pytest
from pinned import AVX2, AVX512

import lowering
import tvmscript
from tvmscript import tir as T


@T.prim_func
def matmul_nt(A: T.Buffer((8, 256), "float32"), B: T.Buffer((30, 256), "float32"),
              C: T.Buffer((8, 30), "float32")):
    for i, j, k in T.grid(8, 30, 256):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


@T.prim_func
def own_rows(B: T.Buffer((8, 30, 256), "float32"), C: T.Buffer((8, 60), "float32")):
    for i in T.parallel(8):
        for j, k in T.grid(30, 256):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj * 2] = T.float32(0)
                C[vi, vj * 2] = C[vi, vj * 2] + B[vi, vj, vk]  # every load moves with j


@T.prim_func
def batched_matvec(A: T.Buffer((4, 64, 128), "float32"), x: T.Buffer((4, 128), "float32"),
                   y: T.Buffer((4, 64), "float32")):
    for b, i, k in T.grid(4, 64, 128):
        with T.block("y"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            with T.init():
                y[vb, vi] = T.float32(0)
            y[vb, vi] = y[vb, vi] + A[vb, vi, vk] * x[vb, vk]


def _lowered(func: object, target: object, **config: object) -> str:
    with lowering.PassContext(config={"vectorize_reductions": config} if config else {}):
        return lowering.lower(func, target=target).script()


def test_four_outputs_share_the_loop_on_avx512_and_two_on_avx2() -> None:
    text = _lowered(matmul_nt, AVX512)
    assert "for j_jam in range(7):" in text and "for j_rest in range(2):" in text
    lanes = [line for line in text.splitlines()
             if '= T.decl_buffer((64,), "float32"' in line and "_fold" not in line]
    assert len(lanes) == 4 + 1  # the jammed outputs' lanes, then the leftover column's
    assert 'C_flat_lanes_fold1 = T.allocate([4], "float32", "local")' in text  # one tree
    avx2 = _lowered(matmul_nt, AVX2)
    assert "for i, j_jam in T.grid(8, 15):" in avx2 and "j_rest" not in avx2
    assert "for j_jam in range(7):" in _lowered(matmul_nt, AVX2, jam=4)  # config wins
    assert "j_jam" not in _lowered(matmul_nt, AVX512, jam=1)


def test_outputs_without_a_shared_operand_are_not_jammed() -> None:
    text = _lowered(own_rows, AVX512)
    assert "C_flat_lanes" in text and "for j in range(30)" in text  # split, not jammed
    assert "j_jam" not in text


def test_same_bits_as_the_unjammed_split() -> None:
    rng = np.random.default_rng(9)
    A = rng.standard_normal((8, 256)).astype("float32")
    B = rng.standard_normal((30, 256)).astype("float32")
    outs = []
    for jam in (1, 4):
        with lowering.PassContext(config={"vectorize_reductions": {"jam": jam}}):
            kernel = tvmscript.build(matmul_nt, target=AVX2, cache=False, fp_contract=False)
        C = np.zeros((8, 30), "float32")
        kernel(A, B, C)
        outs.append(C)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_allclose(outs[1], A.astype("float64") @ B.T.astype("float64"),
                               rtol=1e-4, atol=1e-4)


def test_a_bad_jam_option_is_refused() -> None:
    with pytest.raises(TypeError, match="jam must be an int >= 1"):
        _lowered(matmul_nt, AVX512, jam=0)


@T.prim_func
def dense_parallel(A: T.Buffer((16, 256), "float32"), B: T.Buffer((30, 256), "float32"),
                   C: T.Buffer((16, 30), "float32")):
    for i in T.parallel(16):
        for j, k in T.grid(30, 256):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def test_parallel_jammed_rows_agree_with_the_interpreter_on_every_run() -> None:
    rng = np.random.default_rng(11)
    A = rng.standard_normal((16, 256)).astype("float32")
    B = rng.standard_normal((30, 256)).astype("float32")
    want = np.zeros((16, 30), "float32")
    tvmscript.build(dense_parallel, target="interp")(A, B, want)
    with lowering.PassContext(config={"vectorize_reductions": {"jam": 4}}):
        kernel = tvmscript.build(dense_parallel, target=AVX2, cache=False)
    assert "j_jam" in kernel.get_source("tir")
    first = None
    for _ in range(5):  # every core, several runs: within the lane split's rounding, same bits
        C = np.zeros((16, 30), "float32")
        kernel(A, B, C)
        np.testing.assert_allclose(C, want, rtol=1e-4, atol=1e-4)
        first = C if first is None else first
        np.testing.assert_array_equal(C, first)


def test_rows_read_once_are_not_jammed() -> None:
    # every A row is read by one output only (a batched matrix-vector product): nothing to
    # share but x, and on AVX2 two outputs' 64 lanes spill (1.6 -> 1.3 ms for 64 x 512^2)
    for target in (AVX2, AVX512):
        text = _lowered(batched_matvec, target)
        assert "i_jam" not in text and "y_flat_lanes" in text
    rng = np.random.default_rng(5)
    A = rng.standard_normal((4, 64, 128)).astype("float32")
    x = rng.standard_normal((4, 128)).astype("float32")
    y = np.zeros((4, 64), "float32")
    tvmscript.build(batched_matvec, target=AVX2, cache=False)(A, x, y)
    np.testing.assert_allclose(y, np.einsum("bik,bk->bi", A.astype("float64"), x),
                               rtol=1e-4, atol=1e-4)
