"""make_interp_kernel: a callable with compiled-kernel argument checks."""

from __future__ import annotations

import numpy as np
import pytest
from interp_helpers import buf, func, loop, store

import tvmscript
from backend.interp import make_interp_kernel
from irbuilder.ir import PrimFunc, SizeVar, Var, as_dtype


def _copy_kernel() -> PrimFunc:
    n = SizeVar("n")
    a, b = buf("A", (n, 4)), buf("B", (n, 4))
    scale = Var("scale", as_dtype("float32"))
    body = loop("i", n, lambda i: loop("j", 4, lambda j: store(b, [i, j], a[i, j] * scale)))
    return func([a, b, scale], body, name="scale_copy")


def test_kernel_runs_and_returns_none() -> None:
    kernel = make_interp_kernel(_copy_kernel())
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.zeros_like(x)
    result: object = kernel(x, y, 2.0)  # type: ignore[func-returns-value]
    assert result is None
    np.testing.assert_array_equal(y, x * 2)


def test_argument_count_is_checked() -> None:
    kernel = make_interp_kernel(_copy_kernel())
    with pytest.raises(TypeError, match=r"scale_copy\(\) takes 3 arguments \(2 given\)"):
        kernel(np.zeros((1, 4), np.float32), np.zeros((1, 4), np.float32))


def test_dtype_is_checked_naming_the_parameter() -> None:
    kernel = make_interp_kernel(_copy_kernel())
    with pytest.raises(TypeError, match="^A: expected dtype float32, got int32$"):
        kernel(np.zeros((1, 4), np.int32), np.zeros((1, 4), np.float32), 1.0)


def test_rank_is_checked() -> None:
    kernel = make_interp_kernel(_copy_kernel())
    with pytest.raises(TypeError, match="^B: expected ndim == 2, got 1$"):
        kernel(np.zeros((1, 4), np.float32), np.zeros(4, np.float32), 1.0)


def test_symbolic_dim_bound_from_first_array() -> None:
    kernel = make_interp_kernel(_copy_kernel())
    message = r"^B: expected shape\[0\] == n = 2, got 3$"
    with pytest.raises(ValueError, match=message):
        kernel(np.zeros((2, 4), np.float32), np.zeros((3, 4), np.float32), 1.0)
    with pytest.raises(ValueError, match=r"^A: expected shape\[1\] == 4, got 5$"):
        kernel(np.zeros((2, 5), np.float32), np.zeros((2, 4), np.float32), 1.0)


def test_contiguity_and_writability_are_checked() -> None:
    kernel = make_interp_kernel(_copy_kernel())
    x = np.zeros((2, 8), np.float32)
    with pytest.raises(
        ValueError,
        match=r"^B: expected a C-contiguous array \(strides\[1\] == 4 bytes\), got strides\[1\] == 8$",
    ):
        kernel(np.zeros((2, 4), np.float32), x[:, ::2], 1.0)
    # an input the kernel never writes is copied, as the compiled entry does by default
    strided = np.arange(16, dtype=np.float32).reshape(2, 8)[:, ::2]
    out = np.zeros((2, 4), np.float32)
    kernel(strided, out, 1.0)
    reference = np.zeros((2, 4), np.float32)
    tvmscript.build(_copy_kernel(), target="llvm")(strided, reference, 1.0)
    np.testing.assert_array_equal(out, reference)
    y = np.zeros((2, 4), np.float32)
    y.flags.writeable = False
    with pytest.raises(ValueError, match="^B: expected a writable array, got a read-only one$"):
        kernel(np.zeros((2, 4), np.float32), y, 1.0)
    frozen_input = np.ones((2, 4), np.float32)
    frozen_input.flags.writeable = False
    out = np.zeros((2, 4), np.float32)
    kernel(frozen_input, out, 3.0)  # reading a read-only array is fine
    np.testing.assert_array_equal(out, 3)


def test_scalar_arguments_are_checked() -> None:
    n, out = Var("n", as_dtype("int8")), buf("out", (1,), "int8")
    kernel = make_interp_kernel(func([n, out], store(out, [0], n)))
    result = np.zeros(1, np.int8)
    kernel(-128, result)
    assert result[0] == -128
    with pytest.raises(ValueError, match="argument 'n': 128 does not fit in int8"):
        kernel(128, result)
    with pytest.raises(TypeError, match="argument 'n': expected an integer"):
        kernel(1.5, result)


def test_arguments_are_converted_as_the_compiled_entry_converts_them() -> None:
    a, b = buf("A", (3,), "int64"), buf("B", (3,), "int64")
    kernel = make_interp_kernel(func([a, b], loop("i", 3, lambda i: store(b, [i], a[i] + 1))))
    out = np.zeros(3, np.int64)
    kernel(np.array([1, 2, 3]), out)
    assert list(out) == [2, 3, 4]
    # a sequence becomes a read-only array of the buffer's dtype ...
    kernel([4.0, 5.0, 6.0], out)
    assert list(out) == [5, 6, 7]
    # ... an array keeps its own dtype, which is checked
    with pytest.raises(TypeError, match="^A: expected dtype int64, got float64$"):
        kernel(np.array([1.0, 2.0, 3.0]), out)
    # a number is no array (it was a 0-d one here, an error only of rank)
    with pytest.raises(TypeError, match=r"argument 'A' must be an array \(numpy.ndarray or "
                                        r"buffer\), not float64"):
        kernel(np.float64(1.0), out)
    # a sequence for a written buffer could not receive the results
    with pytest.raises(ValueError, match="B: expected a writable array"):
        kernel(np.array([1, 2, 3]), [0, 0, 0])


def test_make_interp_kernel_rejects_non_functions() -> None:
    with pytest.raises(TypeError, match="needs a PrimFunc"):
        make_interp_kernel("not a function")  # type: ignore[arg-type]


def test_a_zero_dim_output_is_written_in_place() -> None:
    # ``array[()]`` of a 0-d array is a copy: the interpreter wrote its result there and the
    # caller's array kept 0 (compiled code wrote 4)
    f = tvmscript.from_source(
        "from tvm.script import tir as T\n"
        "@T.prim_func\n"
        "def f(A: T.Buffer((), 'int32'), C: T.Buffer((), 'int32')):\n"
        "    C[()] = A[()] + 1\n"
    )
    a, c = np.array(3, "int32"), np.array(0, "int32")
    tvmscript.build(f, target="interp")(a, c)
    assert int(c) == 4
    view = np.zeros(3, "int32")[1:2].reshape(())  # a 0-d view into a larger array
    tvmscript.build(f, target="interp")(a, view)
    assert int(view) == 4
