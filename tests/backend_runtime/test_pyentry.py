"""The METH_FASTCALL entry wrapper: results, argument checking, slow path, exceptions."""

from __future__ import annotations

import array
import gc
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from rt_kernels import saxpy_ir

from backend.abi.pyabi import ndarray_layout
from backend.abi.pyentry import (
    BufferParam,
    EntrySpec,
    ScalarParam,
    entry_wrapper_ir,
    make_builtin,
)
from backend.runtime import compile_ir

Fn = Callable[..., Any]


def _arrays(n: int = 16) -> tuple[np.ndarray[Any, Any], ...]:
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 0.5, dtype=np.float32)
    out = np.zeros(n, dtype=np.float32)
    return x, y, out


def test_result_matches_numpy(saxpy: Fn) -> None:
    x, y, out = _arrays(1003)
    assert saxpy(x, y, out, 2.5, 1003) is None
    np.testing.assert_array_equal(out, np.float32(2.5) * x + y)


def test_partial_length_and_zero(saxpy: Fn) -> None:
    x, y, out = _arrays(10)
    saxpy(x, y, out, 1.0, 4)
    np.testing.assert_array_equal(out[:4], x[:4] + y[:4])
    assert not out[4:].any()
    saxpy(x, y, out, 1.0, 0)


def test_builtin_metadata(saxpy: Fn) -> None:
    assert type(saxpy).__name__ == "builtin_function_or_method"
    assert saxpy.__name__ == "saxpy"
    assert str(inspect.signature(saxpy)) == "(x, y, out, alpha, n)"


def test_layout_self_test_passes() -> None:
    lay = ndarray_layout()
    assert (lay.data, lay.nd, lay.dims, lay.strides, lay.descr, lay.flags) == (
        16, 24, 32, 40, 56, 64)


@pytest.mark.parametrize("nargs", [0, 2, 4, 6])
def test_wrong_argument_count(saxpy: Fn, nargs: int) -> None:
    x, y, out = _arrays()
    args = [x, y, out, 1.0, 16, 0][:nargs]
    with pytest.raises(TypeError, match=rf"saxpy\(\) takes 5 arguments \({nargs} given\)"):
        saxpy(*args)


@pytest.mark.parametrize("pos,name", [(0, "x"), (1, "y"), (2, "out")])
@pytest.mark.parametrize("bad", [None, "abc", 3, object(), {"a": 1}])
def test_non_array_buffer_names_parameter(saxpy: Fn, pos: int, name: str, bad: object) -> None:
    args: list[object] = [*_arrays(), 1.0, 16]
    args[pos] = bad
    with pytest.raises(TypeError, match=rf"argument '{name}'"):
        saxpy(*args)


def test_ragged_list_is_type_error(saxpy: Fn) -> None:
    _, y, out = _arrays(2)
    with pytest.raises(TypeError, match="argument 'x'"):
        saxpy([[1.0], [1.0, 2.0]], y, out, 1.0, 2)


@pytest.mark.parametrize("bad", ["2", None, 1.5, b"1", [1], np.float64(2.0)])
def test_int_scalar_wrong_type(saxpy: Fn, bad: object) -> None:
    x, y, out = _arrays()
    with pytest.raises(TypeError, match=r"argument 'n' must be an integer \(int64\), not "):
        saxpy(x, y, out, 1.0, bad)


@pytest.mark.parametrize("bad", ["2.0", None, [1.0], 1j])
def test_float_scalar_wrong_type(saxpy: Fn, bad: object) -> None:
    x, y, out = _arrays()
    with pytest.raises(TypeError, match=r"argument 'alpha' must be a real number \(float32\)"):
        saxpy(x, y, out, bad, 4)


@pytest.mark.parametrize("bad", [2**63, -(2**63) - 1, 10**30])
def test_int64_out_of_range(saxpy: Fn, bad: int) -> None:
    x, y, out = _arrays()
    with pytest.raises(ValueError, match=r"argument 'n' is out of range for int64: "):
        saxpy(x, y, out, 1.0, bad)


@pytest.mark.parametrize("bad", [1e39, -3.5e38, 10**400])
def test_float32_out_of_range(saxpy: Fn, bad: object) -> None:
    x, y, out = _arrays()
    with pytest.raises(ValueError, match=r"argument 'alpha' is out of range for float32"):
        saxpy(x, y, out, bad, 4)


def test_float32_accepts_inf_nan_ints_and_numpy(saxpy: Fn) -> None:
    x, y, out = _arrays(4)
    saxpy(x, y, out, float("inf"), 4)
    assert np.isinf(out[1])
    saxpy(x, y, out, float("nan"), 4)
    assert np.isnan(out).all()
    saxpy(x, y, out, 3, np.int64(4))
    np.testing.assert_array_equal(out, 3 * x + y)
    saxpy(x, y, out, np.float32(2.0), True)  # bool is an int: n = 1
    assert out[0] == y[0]


INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1), "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1),
}


@pytest.mark.parametrize("dt", sorted(INT_RANGES))
def test_integer_scalars_range_checked(echo: dict[str, Fn], dt: str) -> None:
    lo, hi = INT_RANGES[dt]
    out = np.zeros(1, np.int64)
    for v in (lo, hi, 0, 1):
        echo[dt](out, v)
        assert int(out.view(np.uint64 if dt == "uint64" else np.int64)[0]) == v
    echo[dt](out, np.dtype(dt).type(hi))  # numpy integers via __index__
    assert int(out.view(np.uint64 if dt == "uint64" else np.int64)[0]) == hi
    for bad in (lo - 1, hi + 1):
        with pytest.raises(ValueError, match=rf"argument 'v' is out of range for {dt}: {bad}"):
            echo[dt](out, bad)
    for wrong in ("1", None, 1.0):
        with pytest.raises(TypeError, match=rf"argument 'v' must be an integer \({dt}\)"):
            echo[dt](out, wrong)


@pytest.mark.parametrize("dt,limit", [("float16", 65504.0), ("float32", 3.4028234663852886e38)])
def test_narrow_float_scalars(echo: dict[str, Fn], dt: str, limit: float) -> None:
    out = np.zeros(1, np.float64)
    for v in (0.1, -limit, limit, float("inf"), 1e-30):
        echo[dt](out, v)
        assert out[0] == float(np.array(v).astype(dt)), v
    with pytest.raises(ValueError, match=rf"argument 'v' is out of range for {dt}"):
        echo[dt](out, limit * 1.01)


def test_float16_conversion_rounding_matches_numpy(echo: dict[str, Fn]) -> None:
    rng = np.random.default_rng(0)
    vals = np.concatenate([
        rng.standard_normal(300) * 10.0 ** rng.integers(-9, 5, 300),
        [65504.0, 65500.5, -65503.9, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 2.0**-14, 1 + 2.0**-11,
         1 + 3 * 2.0**-11, 0.0, -0.0, float("nan")],
    ])
    out = np.zeros(1, np.float64)
    for v in vals:
        echo["float16"](out, float(v))
        want = np.float64(np.float16(v))
        assert (np.isnan(want) and np.isnan(out[0])) or (
            out[0] == want and np.signbit(out[0]) == np.signbit(want)), v


def test_bool_scalar(echo: dict[str, Fn]) -> None:
    out = np.zeros(1, np.int64)
    for v, want in [(True, 1), (False, 0), (2, 1), (0, 0), (np.bool_(True), 1), ([], 0)]:
        echo["bool"](out, v)
        assert out[0] == want, v
    for bad in (None, "yes", b""):
        with pytest.raises(TypeError, match="argument 'v' must be bool"):
            echo["bool"](out, bad)


def test_float64_scalar(echo: dict[str, Fn]) -> None:
    out = np.zeros(1, np.float64)
    echo["float64"](out, 1e308)
    assert out[0] == 1e308
    with pytest.raises(ValueError, match="argument 'v' is out of range for float64"):
        echo["float64"](out, 10**400)
    with pytest.raises(TypeError, match="argument 'v' must be a real number"):
        echo["float64"](out, None)


# ---- kernel-side checks and exceptions -------------------------------------------------------


def test_kernel_checks_raise_with_messages(saxpy: Fn) -> None:
    x, y, out = _arrays(8)
    with pytest.raises(TypeError, match=r"saxpy\(\): y must be a float32 array"):
        saxpy(x, y.astype(np.float64), out, 1.0, 8)
    with pytest.raises(IndexError, match=r"n=9 exceeds the length 8 of x"):
        saxpy(x, y, out, 1.0, 9)
    with pytest.raises(ValueError, match=r"out must be 1-d, got 2 dims"):
        saxpy(x, y, out.reshape(2, 4), 1.0, 4)
    with pytest.raises(ValueError, match=r"x must be C-contiguous"):
        saxpy(np.zeros(16, np.float32)[::2], y, out, 1.0, 8)
    with pytest.raises(ValueError, match=r"n must be >= 0, got -3"):
        saxpy(x, y, out, 1.0, -3)
    ro = out.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"out must be C-contiguous and writeable"):
        saxpy(x, y, ro, 1.0, 8)


def test_dtype_fallback_accepts_equal_noncanonical_descr(saxpy: Fn) -> None:
    x, y, out = _arrays(4)
    meta = np.dtype(np.float32, metadata={"unit": "m"})
    saxpy(x.view(meta), y, out, 1.0, 4)
    np.testing.assert_array_equal(out, x + y)
    with pytest.raises(TypeError, match="x must be a float32 array"):
        saxpy(x.astype(">f4"), y, out, 1.0, 4)


@pytest.mark.parametrize("code,exc,msg", [
    (1, ZeroDivisionError, "division by zero in kernel"),
    (2, IndexError, r"index 12 out of range \[0, 10\)"),
    (3, AssertionError, "assertion failed: x > 0"),
])
def test_kernel_exception_propagates(failing: dict[str, Fn], code: int,
                                     exc: type[BaseException], msg: str) -> None:
    # fail_exc releases the GIL around the kernel: tvms_raise must re-acquire it.
    with pytest.raises(exc, match=msg):
        failing["fail_exc"](code)
    assert failing["fail_exc"](0) is None


def test_kernel_error_without_exception(failing: dict[str, Fn]) -> None:
    with pytest.raises(RuntimeError, match=r"error code 7\) without setting an exception"):
        failing["fail_silent"]()


def test_gil_released_kernel_runs_from_threads(failing: dict[str, Fn]) -> None:
    errors: list[BaseException] = []

    def work() -> None:
        for i in range(200):
            try:
                failing["fail_exc"](1 + i % 3)
            except (ZeroDivisionError, IndexError, AssertionError):
                pass
            except BaseException as e:  # pragma: no cover
                errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# ---- slow path -------------------------------------------------------------------------------


def test_slow_path_list_input(saxpy: Fn) -> None:
    _, _, out = _arrays(3)
    saxpy([1.0, 2.0, 3.0], (1.0, 1.0, 1.0), out, 2.0, 3)
    np.testing.assert_array_equal(out, [3.0, 5.0, 7.0])


def test_slow_path_list_output_is_read_only(saxpy: Fn) -> None:
    x, y, _ = _arrays(3)
    with pytest.raises(ValueError, match="out must be C-contiguous and writeable"):
        saxpy(x, y, [0.0, 0.0, 0.0], 1.0, 3)


def test_slow_path_memoryview_and_buffer(saxpy: Fn) -> None:
    x, y, _ = _arrays(4)
    buf = array.array("f", [0.0] * 4)
    saxpy(memoryview(x.tobytes()).cast("f"), y, buf, 1.0, 4)  # writes land in the array.array
    assert list(buf) == list(x + y)
    ro = memoryview(bytes(16)).cast("f")
    with pytest.raises(ValueError, match="writeable"):
        saxpy(x, y, ro, 1.0, 4)


def test_slow_path_subclass_shares_memory(saxpy: Fn) -> None:
    class Sub(np.ndarray[Any, Any]):
        pass

    x, y, out = _arrays(5)
    sub_out = out.view(Sub)
    saxpy(x.view(Sub), y, sub_out, 1.0, 5)
    np.testing.assert_array_equal(out, x + y)
    mat = np.zeros((1, 5), np.float32).view(Sub)
    with pytest.raises(ValueError, match="out must be 1-d"):
        saxpy(x, y, mat, 1.0, 5)


def test_slow_path_still_checks_scalars(saxpy: Fn) -> None:
    with pytest.raises(TypeError, match="argument 'n'"):
        saxpy([1.0], [1.0], np.zeros(1, np.float32), 1.0, "1")


# ---- ownership -------------------------------------------------------------------------------


def test_library_freed_with_builtin() -> None:
    ir, spec = saxpy_ir()
    lib = compile_ir(ir, name="saxpy_gc", cache=False)
    fn = make_builtin(lib, spec, "saxpy_kernel")
    ref = weakref.ref(lib)
    del lib
    gc.collect()
    assert ref() is not None  # the builtin keeps the machine code alive
    x, y, out = _arrays(4)
    fn(x, y, out, 1.0, 4)
    fn([1.0], [1.0], out, 1.0, 1)  # exercise the slow path before dropping
    del fn
    gc.collect()
    assert ref() is None


def test_spec_validation() -> None:
    with pytest.raises(ValueError, match="identifier"):
        EntrySpec("not valid", [])
    with pytest.raises(ValueError, match="unsupported scalar dtype"):
        ScalarParam("n", "int128")
    with pytest.raises(ValueError, match="duplicate"):
        EntrySpec("f", [BufferParam("a"), ScalarParam("a", "int32")])
    spec = EntrySpec("f", [BufferParam("a"), ScalarParam("n", "float16"), ScalarParam("b", "bool")])
    assert spec.kernel_signature("k") == "i32 @k(ptr, half, i1)"
    assert "define ptr @f__py(ptr %self, ptr %args, i64 %nargs, ptr %kwnames)" in entry_wrapper_ir(spec, "k")


def test_make_builtin_without_wrapper_is_clear_error() -> None:
    lib = compile_ir("define i32 @k() {\n  ret i32 0\n}\n", cache=False)
    with pytest.raises(ValueError, match="no entry wrapper"):
        make_builtin(lib, EntrySpec("k", []), "k")
