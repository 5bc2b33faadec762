"""Returned tensors through the whole stack: TVMScript source -> build -> numpy outputs."""

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T


@T.prim_func
def mm_bias_relu(
    A: T.Buffer((64, 32), "float32"),
    B: T.Buffer((32, 16), "float32"),
    bias: T.Buffer((16,), "float32"),
):
    k = T.reduce_axis(0, 32)
    MM = T.compute((64, 16), lambda i, j: T.sum(A[i, k] * B[k, j], axis=k))
    BA = T.compute((64, 16), lambda i, j: MM[i, j] + bias[j])
    R = T.compute((64, 16), lambda i, j: T.max(BA[i, j], T.float32(0)))
    return R


@T.prim_func
def two_outputs(A: T.Buffer((128,), "float32")):
    D = T.compute((128,), lambda i: A[i] * T.float32(2))
    E = T.compute((128,), lambda i: D[i] + T.float32(1))
    return D, E


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_matmul_bias_relu_returned_matches_numpy(opt_level: int) -> None:
    kernel = tvmscript.build(mm_bias_relu, opt_level=opt_level)
    rng = np.random.default_rng(0)
    a = rng.random((64, 32), dtype=np.float32) - 0.5
    b = rng.random((32, 16), dtype=np.float32) - 0.5
    c = rng.random(16, dtype=np.float32)
    result = kernel(a, b, c)
    assert isinstance(result, np.ndarray) and result.shape == (64, 16)
    np.testing.assert_allclose(result, np.maximum(a @ b + c, 0), rtol=1e-5, atol=1e-5)


def test_two_returned_tensors_come_back_as_a_tuple() -> None:
    kernel = tvmscript.build(two_outputs)
    a = np.arange(128, dtype=np.float32)
    d, e = kernel(a)
    np.testing.assert_array_equal(d, a * 2)
    np.testing.assert_array_equal(e, a * 2 + 1)


def test_explain_names_the_source_lines(capsys: pytest.CaptureFixture[str]) -> None:
    report = tvmscript.explain_bufferization(mm_bias_relu)
    assert "BA inlined into R" in report
    assert "MM = T.compute((64, 16)" in report  # the definition's source line
    assert "allocations: 0" in report
    assert capsys.readouterr().out.strip() == report.strip()
