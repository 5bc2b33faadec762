"""Kernels called with keyword arguments: binding, mixed calls and the messages of bad calls.

Compiled kernels (generated entry) and interpreter kernels bind names the same way; no message
shows an internal class name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T


@T.prim_func
def axpy(
    X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32"), Out: T.Buffer((8,), "float32"),
    alpha: T.float32,
):
    for i in range(8):
        Out[i] = X[i] * alpha + Y[i]


@T.prim_func
def scaled(A: T.Buffer((16,), "float32"), s: T.float32):
    D = T.compute((16,), lambda i: A[i] * s)
    return D


INTERNAL = re.compile(r"KernelOwner|InterpKernel|slow_path|builtin|\bKernel\b")


@pytest.fixture(scope="module", params=["llvm", "interp"])
def kernel(request: pytest.FixtureRequest) -> Any:
    return tvmscript.build(axpy, target=request.param)


def _inputs() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    x = np.arange(8, dtype="float32")
    return x, x * 10, np.zeros(8, "float32")


def _expected() -> np.ndarray[Any, Any]:
    x, y, out = _inputs()
    ref = tvmscript.build(axpy, target="interp")
    ref(x, y, out, 0.5)
    return out


@pytest.mark.parametrize(
    "call",
    [
        lambda k, x, y, o: k(X=x, Y=y, Out=o, alpha=0.5),
        lambda k, x, y, o: k(alpha=0.5, Out=o, Y=y, X=x),
        lambda k, x, y, o: k(x, y, alpha=0.5, Out=o),
        lambda k, x, y, o: k(x, Y=y, Out=o, alpha=0.5),
        lambda k, x, y, o: k(memoryview(x), Y=y, Out=o, alpha=0.5),  # slow-path conversion
    ],
    ids=["all_keywords", "reordered", "mixed", "one_positional", "buffer_by_position"],
)
def test_keyword_calls_compute_like_positional(kernel: Any, call: Callable[..., Any]) -> None:
    x, y, out = _inputs()
    assert call(kernel, x, y, out) is None
    np.testing.assert_array_equal(out, _expected())


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda k, x, y, o: k(x, y, o), r"axpy\(\) takes 4 arguments \(3 given\): missing 'alpha'"),
        (lambda k, x, y, o: k(x), r"missing 'Y', 'Out' and 'alpha'"),
        (lambda k, x, y, o: k(X=x, Y=y, alpha=1.0), r"axpy\(\) missing 1 required argument: 'Out'"),
        (lambda k, x, y, o: k(Y=y, alpha=1.0), r"missing 2 required arguments: 'X' and 'Out'"),
        (lambda k, x, y, o: k(x, y, o, 1.0, beta=2.0), r"unexpected keyword argument 'beta'"),
        (lambda k, x, y, o: k(x, y, o, alpha=1.0, Z=o), r"unexpected keyword argument 'Z'"),
        (lambda k, x, y, o: k(x, y, o, 1.0, X=x), r"multiple values for argument 'X'"),
        (lambda k, x, y, o: k(x, y, o, 1.0, 2.0), r"axpy\(\) takes 4 arguments \(5 given\)"),
    ],
    ids=["missing_last", "missing_three", "missing_kw", "missing_two_kw", "unknown",
         "unknown_with_valid", "duplicate", "too_many"],
)
def test_bad_calls_name_the_parameter(kernel: Any, call: Callable[..., Any], pattern: str) -> None:
    x, y, out = _inputs()
    with pytest.raises(TypeError, match=pattern) as info:
        call(kernel, x, y, out)
    assert not INTERNAL.search(str(info.value)), str(info.value)
    np.testing.assert_array_equal(out, 0)  # nothing ran


def test_bad_keyword_value_names_the_parameter(kernel: Any) -> None:
    x, y, out = _inputs()
    with pytest.raises(TypeError, match="alpha") as info:
        kernel(X=x, Y=y, Out=out, alpha="fast")
    assert not INTERNAL.search(str(info.value))
    with pytest.raises((TypeError, ValueError), match="Y") as info2:
        kernel(X=x, Y=np.zeros(3, "float32"), Out=out, alpha=1.0)
    assert not INTERNAL.search(str(info2.value))


def test_builtin_repr_and_signature_hide_the_owner() -> None:
    kernel = tvmscript.build(axpy)
    assert repr(kernel.entry) == "<built-in function axpy>"
    assert "KernelOwner" not in repr(kernel.entry)
    import inspect

    assert str(inspect.signature(kernel.entry)) == "(X, Y, Out, alpha)"


def test_returned_tensors_bind_keywords() -> None:
    kernel = tvmscript.build(scaled)
    a = np.arange(16, dtype="float32")
    np.testing.assert_array_equal(kernel(A=a, s=2.0), a * 2)
    np.testing.assert_array_equal(kernel(a, s=3.0), a * 3)
    with pytest.raises(TypeError, match="missing 1 required argument: 's'"):
        kernel(A=a)
    with pytest.raises(TypeError, match="unexpected keyword argument 'D'"):
        kernel(a, 1.0, D=a)


def test_keyword_calls_from_many_threads_are_independent() -> None:
    from concurrent.futures import ThreadPoolExecutor

    kernel = tvmscript.build(axpy)

    def run(seed: int) -> bool:
        x = np.full(8, seed, "float32")
        out = np.zeros(8, "float32")
        kernel(Out=out, X=x, Y=x, alpha=1.0)
        return bool(np.all(out == 2 * seed))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(run, range(64)))
