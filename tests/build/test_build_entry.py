"""The generated entry point through build(): every wrong-argument case names the parameter."""

from __future__ import annotations

import array
from typing import Any

import numpy as np
import pytest
from kits import add, buf, make

import tvmscript
from irbuilder import tir as T


@pytest.fixture(scope="module")
def add16() -> Any:
    return tvmscript.build(add(16))


@pytest.fixture(scope="module")
def addn() -> Any:
    return tvmscript.build(add())


def _arrays(n: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.arange(n, dtype="float32")
    return a, a * 2, np.zeros(n, "float32")


def test_argument_count(add16: tvmscript.Kernel) -> None:
    a, b, c = _arrays()
    with pytest.raises(TypeError, match=r"add\(\) takes 3 arguments \(2 given\)"):
        add16(a, b)
    with pytest.raises(TypeError, match=r"add\(\) takes 3 arguments \(4 given\)"):
        add16(a, b, c, c)


@pytest.mark.parametrize("bad", [1, 2.5, "abc", None, object()])
def test_non_array_buffer_argument(add16: tvmscript.Kernel, bad: object) -> None:
    a, _, c = _arrays()
    with pytest.raises(TypeError, match="argument 'B'"):
        add16(a, bad, c)


def test_dtype_and_ndim(add16: tvmscript.Kernel) -> None:
    a, b, c = _arrays()
    with pytest.raises(TypeError, match="A: expected dtype float32"):
        add16(a.astype("float64"), b, c)
    with pytest.raises(TypeError, match="C: expected dtype float32"):
        add16(a, b, c.astype("int32"))
    with pytest.raises(TypeError, match="B: expected ndim == 1"):
        add16(a, b.reshape(4, 4), c)
    with pytest.raises(TypeError, match="A: expected ndim == 1"):
        add16(np.float32(1.0).reshape(()), b, c)


def test_constant_shape(add16: tvmscript.Kernel) -> None:
    a, b, c = _arrays(17)
    with pytest.raises(ValueError, match=r"A: expected shape\[0\] == 16"):
        add16(a, b, c)


def test_symbolic_shape_binding(addn: tvmscript.Kernel) -> None:
    for n in (0, 1, 5, 1000):
        a, b, c = _arrays(n)
        addn(a, b, c)
        np.testing.assert_array_equal(c, a + b)
    a, b, c = _arrays(5)
    with pytest.raises(ValueError, match=r"B: expected shape\[0\] == "):
        addn(a, np.zeros(6, "float32"), c)
    with pytest.raises(ValueError, match=r"C: expected shape\[0\] == "):
        addn(a, b, np.zeros(4, "float32"))


def test_noncontiguous_inputs_are_copied_outputs_rejected(addn: tvmscript.Kernel) -> None:
    base = np.arange(20, dtype="float32")
    a, b = base[::2], base[1::2]
    c = np.zeros(10, "float32")
    addn(a, b, c)  # inputs are strided views: copied for the call
    np.testing.assert_array_equal(c, a + b)
    out = np.zeros(20, "float32")
    with pytest.raises(ValueError, match="C: expected a C-contiguous array"):
        addn(a, b, out[::2])
    assert not out.any()
    # Opting out of the copy: a strided input is rejected like an output.
    strict = tvmscript.build(add(), copy_noncontiguous_inputs=False)
    with pytest.raises(ValueError, match="A: expected a C-contiguous array"):
        strict(a, b, c)


def test_two_d_fortran_and_transposed_inputs() -> None:
    def body() -> None:
        A, B = buf("A", (3, 4)), buf("B", (3, 4))
        with T.grid(3, 4) as (i, j):
            T.buffer_store(B, A[i, j] * T.float32(2), [i, j])

    k = tvmscript.build(make("twice2d", body))
    src = np.arange(12, dtype="float32").reshape(4, 3)
    out = np.zeros((3, 4), "float32")
    k(src.T, out)
    np.testing.assert_array_equal(out, src.T * 2)
    k(np.asfortranarray(src.T), out)
    np.testing.assert_array_equal(out, src.T * 2)
    with pytest.raises(ValueError, match="B: expected a C-contiguous array"):
        k(src.T, np.zeros((4, 3), "float32").T)


def test_writability() -> None:
    k = tvmscript.build(add(4))
    a = np.ones(4, "float32")
    a.flags.writeable = False  # read-only inputs are fine
    c = np.zeros(4, "float32")
    k(a, a, c)
    assert c.tolist() == [2.0] * 4
    ro = np.zeros(4, "float32")
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="C: expected a writable array"):
        k(a, a, ro)
    with pytest.raises(ValueError, match="C: expected a writable array, got a list: the kernel "
                       "writes this buffer"):
        k(a, a, [0.0, 0.0, 0.0, 0.0])  # a list cannot receive the result
    with pytest.raises(ValueError, match="C: expected a writable array, got a tuple"):
        k(a, a, (0.0, 0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="C: expected shape"):
        k([1.0] * 4, a, np.zeros(5, "float32"))  # a read list is fine; other errors unchanged
    with pytest.raises(ValueError, match="C: expected a writable array"):
        k(a, a, memoryview(bytes(16)).cast("f"))
    with pytest.raises(TypeError, match="C: expected dtype float32"):
        k(a, a, bytearray(16))  # bytes are uint8


def test_buffer_protocol_and_subclasses() -> None:
    k = tvmscript.build(add(4))
    a = array.array("f", [1, 2, 3, 4])
    c = bytearray(16)
    k(a, [1.0, 1.0, 1.0, 1.0], memoryview(c).cast("f"))
    assert np.frombuffer(c, "float32").tolist() == [2, 3, 4, 5]

    class Sub(np.ndarray):
        pass

    out = np.zeros(4, "float32").view(Sub)
    k(np.ones(4, "float32"), np.ones(4, "float32"), out)
    assert out.tolist() == [2.0] * 4


def test_unaligned_arrays_are_accepted() -> None:
    k = tvmscript.build(add())
    raw = bytearray(4 * 1001 + 1)
    a = np.frombuffer(raw, "float32", count=1000, offset=1)
    assert not a.flags.aligned
    b = np.arange(1000, dtype="float32")
    c_raw = bytearray(4 * 1000 + 3)
    c = np.frombuffer(c_raw, "float32", count=1000, offset=3)
    k(a, b, c)
    np.testing.assert_array_equal(c, b)
    for offset in (4, 8, 12):  # element-aligned but not 16/32/64-aligned
        big = np.zeros(1040, "float32")
        c2 = big[offset:offset + 1000]
        k(b, b, c2)
        np.testing.assert_array_equal(c2, 2 * b)


def test_overlapping_arguments_have_sequential_semantics() -> None:
    k = tvmscript.build(add())
    for n in (8, 100, 1001):
        x = np.zeros(n + 1, "float32")
        x[0] = 1
        ones = np.ones(n, "float32")
        k(x[:-1], ones, x[1:])  # C[i] = A[i] + 1 where C[i] is A[i + 1]
        np.testing.assert_array_equal(x, np.arange(1, n + 2, dtype="float32"))
        y = np.arange(n, dtype="float32")
        k(y, y, y)  # fully in place
        np.testing.assert_array_equal(y, 2 * np.arange(n, dtype="float32"))


def test_scalar_parameters() -> None:
    def body() -> None:
        A = buf("A", (4,), "int8")
        s = T.arg("s", T.int8())
        f = T.arg("f", T.float32())
        with T.serial(4) as i:
            T.buffer_store(A, s + T.Cast("int8", f), [i])

    k = tvmscript.build(make("scal", body))
    a = np.zeros(4, "int8")
    k(a, 3, 2.0)
    assert a.tolist() == [5] * 4
    with pytest.raises(TypeError, match="argument 's'"):
        k(a, "3", 2.0)
    with pytest.raises(TypeError, match="argument 'f'"):
        k(a, 3, "x")
    with pytest.raises((OverflowError, ValueError), match="argument 's'"):
        k(a, 300, 2.0)
    k(a, np.int8(-2), np.float32(1.0))
    assert a.tolist() == [-1] * 4


def _empty_kernels() -> list[Any]:
    @T.prim_func
    def copy_rows(a: T.handle, b: T.handle) -> None:
        n = T.int32()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for i, j in T.grid(n, 4):
            B[i, j] = A[i, j] + T.float32(1)

    return [tvmscript.build(copy_rows), tvmscript.build(copy_rows, target="interp")]


@pytest.mark.parametrize("which", ["compiled", "interp"])
def test_empty_arrays_are_accepted_whatever_their_strides(which: str) -> None:
    kernel = _empty_kernels()[0 if which == "compiled" else 1]
    # numpy 2 gives zero-size arrays zero strides; no element is addressed, so any stride is fine
    a = np.zeros((0, 4), "float32")
    b = np.zeros((0, 4), "float32")
    kernel(a, b)
    kernel(np.broadcast_to(np.float32(1), (0, 4)), b)
    kernel(a, np.zeros((2, 4), "float32")[:0, ::2].copy().reshape(0, 4))
    # a non-empty written array still needs its contiguous strides; a read one is copied by
    # the compiled entry
    with pytest.raises(ValueError, match=r"B: expected a C-contiguous array \(strides\[1\]"):
        kernel(np.ones((2, 4), "float32"), np.zeros((2, 8), "float32")[:, ::2])
    out = np.zeros((2, 4), "float32")
    if which == "compiled":  # copy_noncontiguous_inputs is an option of compiled builds
        kernel(np.broadcast_to(np.float32(1), (2, 4)), out)
    else:
        kernel(np.ones((2, 4), "float32"), out)
    np.testing.assert_array_equal(out, np.full((2, 4), 2, "float32"))
