"""T.compute kernels compiled with build() (and the interpreter) against numpy."""

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tvmscript
from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import PrimFunc


def _kernel(
    name: str, inputs: list[tuple[str, tuple[int, ...], str]], body: Callable[..., Any]
) -> PrimFunc:
    with IRBuilder() as ib:
        with T.prim_func():
            T.func_name(name)
            buffers = [T.arg(n, T.Buffer(shape, dtype)) for n, shape, dtype in inputs]
            body(*buffers)
    func = ib.get()
    assert isinstance(func, PrimFunc)
    return func


@pytest.fixture(params=["llvm", "interp"])
def target(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_elementwise(target: str) -> None:
    def body(A: Any, B: Any, C: Any) -> None:
        T.compute((8, 16), lambda i, j: A[i, j] * B[i, j] + T.float32(1), out=C)

    f = _kernel("ew", [("A", (8, 16), "float32"), ("B", (8, 16), "float32"),
                       ("C", (8, 16), "float32")], body)
    a, b = np.random.rand(8, 16).astype("float32"), np.random.rand(8, 16).astype("float32")
    c = np.empty((8, 16), "float32")
    tvmscript.build(f, target=target)(a, b, c)
    np.testing.assert_allclose(c, a * b + 1, rtol=1e-6)


def test_broadcast(target: str) -> None:
    def body(A: Any, b: Any, C: Any) -> None:
        T.compute((8, 16), lambda i, j: A[i, j] + b[j], out=C)

    f = _kernel("bc", [("A", (8, 16), "float32"), ("b", (16,), "float32"),
                       ("C", (8, 16), "float32")], body)
    a, b = np.random.rand(8, 16).astype("float32"), np.random.rand(16).astype("float32")
    c = np.empty((8, 16), "float32")
    tvmscript.build(f, target=target)(a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


REDUCTIONS = {
    "sum": (T.sum, np.sum),
    "prod": (T.prod, np.prod),
    "max": (T.reduce_max, np.max),
    "min": (T.reduce_min, np.min),
}


@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_row_reductions(kind: str, dtype: str, target: str) -> None:
    reducer, reference = REDUCTIONS[kind]

    def body(A: Any, R: Any) -> None:
        k = T.reduce_axis(0, 6)
        T.compute((5,), lambda i: reducer(A[i, k], axis=k), out=R)

    f = _kernel(f"r_{kind}", [("A", (5, 6), dtype), ("R", (5,), dtype)], body)
    rng = np.random.default_rng(1)
    a = (rng.integers(-3, 4, (5, 6)) if dtype == "int32" else rng.random((5, 6)) + 0.5)
    a = a.astype(dtype)
    r = np.empty(5, dtype)
    tvmscript.build(f, target=target)(a, r)
    np.testing.assert_allclose(r, reference(a, axis=1), rtol=1e-5)


def test_all_any(target: str) -> None:
    def body(A: Any, All: Any, Any_: Any) -> None:
        k = T.reduce_axis(0, 4)
        T.compute((3,), lambda i: T.all(A[i, k], axis=k), out=All)
        k2 = T.reduce_axis(0, 4)
        T.compute((3,), lambda i: T.any(A[i, k2], axis=k2), out=Any_)

    f = _kernel("aa", [("A", (3, 4), "bool"), ("All", (3,), "bool"), ("Any_", (3,), "bool")],
                body)
    a = np.array([[1, 1, 1, 1], [0, 1, 0, 0], [0, 0, 0, 0]], dtype=bool)
    r_all, r_any = np.empty(3, bool), np.empty(3, bool)
    tvmscript.build(f, target=target)(a, r_all, r_any)
    np.testing.assert_array_equal(r_all, a.all(axis=1))
    np.testing.assert_array_equal(r_any, a.any(axis=1))


def test_matmul_as_one_compute(target: str) -> None:
    def body(A: Any, B: Any, C: Any) -> None:
        k = T.reduce_axis(0, 24)
        T.compute((16, 20), lambda i, j: T.sum(A[i, k] * B[k, j], axis=k), out=C)

    f = _kernel("mm", [("A", (16, 24), "float32"), ("B", (24, 20), "float32"),
                       ("C", (16, 20), "float32")], body)
    a, b = np.random.rand(16, 24).astype("float32"), np.random.rand(24, 20).astype("float32")
    c = np.empty((16, 20), "float32")
    tvmscript.build(f, target=target)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
