"""Runtime argument safety of built kernels: bad arguments raise naming the parameter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from relkit import kernel, lower_bounds_checked

import tvmscript
from irbuilder import tir as T
from irbuilder.ir import PrimFunc


def _add_scalar() -> PrimFunc:
    def body() -> None:
        a = T.arg("A", T.Buffer((8,), "float32"))
        b = T.arg("B", T.Buffer((8,), "float32"))
        s = T.arg("s", T.int8())
        u = T.arg("u", T.uint16())
        f = T.arg("f", T.float32())
        with T.serial(8) as i:
            T.buffer_store(b, a[i] + T.cast(s, "float32") + T.cast(u, "float32") + f, [i])

    return kernel("add_scalar", body)


def _matrix() -> PrimFunc:
    def body() -> None:
        a = T.arg("A", T.Buffer((4, 6), "int32"))
        b = T.arg("B", T.Buffer((4, 6), "int32"))
        with T.grid(4, 6) as (i, j):
            T.buffer_store(b, a[i, j] * 2, [i, j])

    return kernel("matrix", body)


@pytest.fixture(scope="module")
def add_scalar() -> Any:
    return tvmscript.build(_add_scalar())


@pytest.fixture(scope="module")
def matrix() -> Any:
    return tvmscript.build(_matrix())


def _args() -> list[Any]:
    return [np.arange(8, dtype="float32"), np.zeros(8, "float32"), 1, 2, 0.5]


def test_good_call_computes(add_scalar: Any) -> None:
    args = _args()
    add_scalar(*args)
    np.testing.assert_array_equal(args[1], np.arange(8, dtype="float32") + 3.5)


@pytest.mark.parametrize("count", [0, 1, 4, 6, 9])
def test_wrong_argument_count(add_scalar: Any, count: int) -> None:
    args = (_args() * 2)[:count]
    with pytest.raises(TypeError, match=r"add_scalar.*(5|argument)"):
        add_scalar(*args)


def test_keyword_arguments_are_bound(add_scalar: Any) -> None:
    args = _args()
    add_scalar(*args[:4], f=0.5)
    np.testing.assert_array_equal(args[1], np.arange(8, dtype="float32") + 3.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'g'"):
        add_scalar(*args[:4], g=0.5)


@pytest.mark.parametrize(
    ("index", "value", "exc", "fragment"),
    [
        (0, np.arange(8, dtype="float64"), TypeError, "A"),
        (0, np.arange(8, dtype="int32"), TypeError, "A"),
        (0, np.arange(16, dtype="float32").reshape(2, 8), TypeError, "A"),
        (0, np.arange(9, dtype="float32"), ValueError, "A"),
        (0, np.float32(1.0), TypeError, "A"),
        (1, None, TypeError, "B"),
        (0, "abc", TypeError, "A"),
        (1, np.zeros(8, "float32")[::-1], ValueError, "B"),
        (2, 300, (OverflowError, ValueError, TypeError), "s"),
        (2, -129, (OverflowError, ValueError, TypeError), "s"),
        (3, -1, (OverflowError, ValueError, TypeError), "u"),
        (3, 65536, (OverflowError, ValueError, TypeError), "u"),
        (4, 1e300, (OverflowError, ValueError, TypeError), "f"),
        (2, 1.5, TypeError, "s"),
        (2, "3", TypeError, "s"),
        (2, None, TypeError, "s"),
        (4, None, TypeError, "f"),
        (4, "x", TypeError, "f"),
        (2, 2**70, (OverflowError, ValueError, TypeError), "s"),
    ],
)
def test_bad_argument_names_the_parameter(
    add_scalar: Any, index: int, value: Any, exc: Any, fragment: str
) -> None:
    args = _args()
    args[index] = value
    with pytest.raises(exc) as info:
        add_scalar(*args)
    assert fragment in str(info.value), str(info.value)
    # A ValueError subclass such as OverflowError is fine; a crash is not.
    assert not isinstance(info.value, SystemError)


def test_non_contiguous_input_gives_right_answer_or_error(matrix: Any) -> None:
    base = np.arange(48, dtype="int32").reshape(8, 6)
    views = [base[::2], base.T[:4, :6].copy().T.T, np.asfortranarray(base[:4])]
    for view in views:
        out = np.zeros((4, 6), "int32")
        try:
            matrix(view, out)
        except ValueError as err:
            assert "A" in str(err)
            continue
        np.testing.assert_array_equal(out, np.asarray(view) * 2)


def test_transposed_view_is_rejected_or_computed(matrix: Any) -> None:
    src = np.arange(24, dtype="int32").reshape(6, 4)
    out = np.zeros((4, 6), "int32")
    try:
        matrix(src.T, out)
    except ValueError as err:
        assert "A" in str(err) and "contiguous" in str(err)
    else:
        np.testing.assert_array_equal(out, src.T * 2)


def test_non_contiguous_output_is_rejected(matrix: Any) -> None:
    out = np.zeros((8, 6), "int32")[::2]
    with pytest.raises(ValueError, match="B"):
        matrix(np.ones((4, 6), "int32"), out)
    assert not out.any()


def test_read_only_output_is_rejected(matrix: Any) -> None:
    out = np.zeros((4, 6), "int32")
    out.setflags(write=False)
    with pytest.raises(ValueError, match=r"B.*writable"):
        matrix(np.ones((4, 6), "int32"), out)
    assert not out.any()


def test_read_only_input_is_accepted(matrix: Any) -> None:
    a = np.ones((4, 6), "int32")
    a.setflags(write=False)
    out = np.zeros((4, 6), "int32")
    matrix(a, out)
    np.testing.assert_array_equal(out, 2)


def test_array_like_inputs_use_the_slow_path(matrix: Any) -> None:
    out = np.zeros((4, 6), "int32")
    matrix([[1] * 6] * 4, out)
    np.testing.assert_array_equal(out, 2)


def test_list_as_output_is_rejected_or_useless(matrix: Any) -> None:
    # A list converted to a temporary array would lose the result silently.
    out = [[0] * 6 for _ in range(4)]
    try:
        matrix(np.ones((4, 6), "int32"), out)
    except (TypeError, ValueError) as err:
        assert "B" in str(err)
    else:
        pytest.fail("a list passed as an output buffer was accepted: results are lost silently")


# -- aliasing ---------------------------------------------------------------------------


def _shift(vector: bool) -> PrimFunc:
    def body() -> None:
        a = T.arg("A", T.Buffer((64,), "int32"))
        b = T.arg("B", T.Buffer((64,), "int32"))
        with T.serial(16) as i:
            loop = T.vectorized(4) if vector else T.serial(4)
            with loop as j:
                T.buffer_store(b, a[i * 4 + j] + 1, [i * 4 + j])

    return kernel("shift_v" if vector else "shift_s", body)


@pytest.mark.parametrize("vector", [False, True])
@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_overlapping_arrays_follow_sequential_semantics_or_raise(
    vector: bool, direction: str
) -> None:
    func = _shift(vector)
    native = tvmscript.build(func)
    interp = tvmscript.build(func, target="interp")
    results = []
    for k in (native, interp):
        x = np.arange(65, dtype="int32")
        a, b = (x[1:], x[:-1]) if direction == "forward" else (x[:-1], x[1:])
        try:
            k(a, b)
        except ValueError as err:
            assert "A" in str(err) or "B" in str(err)
            results.append(None)
            continue
        results.append(x)
    got, want = results
    if got is not None and want is not None:
        np.testing.assert_array_equal(got, want)


def test_same_array_twice_elementwise_is_in_place() -> None:
    func = _shift(True)
    x = np.arange(64, dtype="int32")
    tvmscript.build(func)(x, x)
    np.testing.assert_array_equal(x, np.arange(64) + 1)


# -- bounds_check ------------------------------------------------------------------------


def _gather() -> PrimFunc:
    def body() -> None:
        a = T.arg("A", T.Buffer((16,), "float32"))
        idx = T.arg("I", T.Buffer((4,), "int32"))
        b = T.arg("B", T.Buffer((4,), "float32"))
        with T.serial(4) as i:
            T.buffer_store(b, a[idx[i]], [i])

    return kernel("gather", body)


def test_bounds_check_raises_index_error_naming_buffer_index_and_shape() -> None:
    entry = tvmscript.build(_gather(), bounds_check=True)
    a = np.arange(16, dtype="float32")
    out = np.zeros(4, "float32")
    entry(a, np.array([3, 0, 15, 2], "int32"), out)
    np.testing.assert_array_equal(out, [3, 0, 15, 2])
    for bad in (17, -1, 16):
        with pytest.raises(IndexError) as info:
            entry(a, np.array([0, bad, 0, 0], "int32"), out)
        assert str(info.value) == f"A: index I[i] = {bad} out of bounds for shape (16,)"
    interp = tvmscript.build(lower_bounds_checked(_gather()), target="interp")
    with pytest.raises(IndexError) as interp_info:
        interp(a, np.array([0, 0, 0, 99], "int32"), out)
    assert str(interp_info.value) == "A: index I[i] = 99 out of bounds for shape (16,)"
    assert "IndexError" not in tvmscript.build(_gather()).get_source("tir")


@pytest.mark.parametrize("vector", [False, True])
def test_bounds_check_on_vector_and_parallel_stores(vector: bool) -> None:
    def body() -> None:
        a = T.arg("A", T.Buffer((4, 8), "int32"))
        off = T.arg("off", T.int32())
        with T.parallel(4) as i:
            with (T.vectorized(8) if vector else T.serial(8)) as j:
                T.buffer_store(a, j + off, [i, j + off])

    k = tvmscript.build(kernel("store_off", body), bounds_check=True)
    a = np.zeros((4, 8), "int32")
    k(a, 0)
    np.testing.assert_array_equal(a, np.tile(np.arange(8), (4, 1)))
    with pytest.raises(IndexError, match=r"^A: flat index .*off.* out of bounds for shape "
                                         r"\(4, 8\) \(32 elements\)$"):
        k(a, 1)
    interp = tvmscript.build(lower_bounds_checked(kernel("store_off", body)), target="interp")
    with pytest.raises(IndexError, match="A: flat index"):
        interp(np.zeros((4, 8), "int32"), 1)


def test_bounds_check_respects_if_then_else_guards() -> None:
    def body() -> None:
        a = T.arg("A", T.Buffer((8,), "float32"))
        b = T.arg("B", T.Buffer((16,), "float32"))
        with T.serial(16) as i:
            T.buffer_store(b, T.if_then_else(i < 8, a[i], T.float32(-1)), [i])

    k = tvmscript.build(kernel("pad", body), bounds_check=True)
    out = np.zeros(16, "float32")
    k(np.arange(8, dtype="float32"), out)
    np.testing.assert_array_equal(out, [*range(8), *[-1] * 8])


def test_without_bounds_check_the_lowered_code_has_no_index_asserts() -> None:
    import lowering

    text = lowering.lower(_gather()).script()
    assert "IndexError" not in text
    checked = lower_bounds_checked(_gather()).script()
    assert 'T.format_message("IndexError: A: index I[i] = {} out of bounds' in checked
