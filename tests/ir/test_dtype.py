import numpy as np
import pytest

from irbuilder.ir import DataType, TypeCode, as_dtype


@pytest.mark.parametrize(
    "text,code,bits,lanes",
    [
        ("bool", TypeCode.BOOL, 1, 1),
        ("int8", TypeCode.INT, 8, 1),
        ("int16", TypeCode.INT, 16, 1),
        ("int32", TypeCode.INT, 32, 1),
        ("int64", TypeCode.INT, 64, 1),
        ("uint8", TypeCode.UINT, 8, 1),
        ("uint16", TypeCode.UINT, 16, 1),
        ("uint32", TypeCode.UINT, 32, 1),
        ("uint64", TypeCode.UINT, 64, 1),
        ("float16", TypeCode.FLOAT, 16, 1),
        ("float32", TypeCode.FLOAT, 32, 1),
        ("float64", TypeCode.FLOAT, 64, 1),
        ("handle", TypeCode.HANDLE, 64, 1),
        ("float32x8", TypeCode.FLOAT, 32, 8),
        ("int64x4", TypeCode.INT, 64, 4),
        ("boolx16", TypeCode.BOOL, 1, 16),
    ],
)
def test_parse_and_print_round_trip(text: str, code: TypeCode, bits: int, lanes: int) -> None:
    dtype = as_dtype(text)
    assert (dtype.code, dtype.bits, dtype.lanes) == (code, bits, lanes)
    assert str(dtype) == text
    assert as_dtype(str(dtype)) == dtype


def test_properties() -> None:
    f = as_dtype("float32x8")
    assert f.is_float and f.is_vector and not f.is_scalar
    assert f.element_of() == as_dtype("float32")
    assert f.itemsize == 32
    assert as_dtype("bool").itemsize == 1
    assert as_dtype("int8").min_value == -128 and as_dtype("uint8").max_value == 255
    assert as_dtype("float32").numpy_dtype == np.float32
    assert as_dtype(np.dtype("int16")) == as_dtype("int16")
    assert as_dtype(np.bool_) == as_dtype("bool")


@pytest.mark.parametrize("bad", ["float8", "int7", "int", "floaty", "bool2", "float32x0", ""])
def test_rejects_unknown(bad: str) -> None:
    if bad == "int":  # TVM accepts "int" as int32
        assert as_dtype(bad) == as_dtype("int32")
        return
    with pytest.raises(ValueError):
        as_dtype(bad)


def test_value_semantics() -> None:
    assert as_dtype("int32") == DataType(TypeCode.INT, 32)
    assert len({as_dtype("int32"), DataType(TypeCode.INT, 32)}) == 1
