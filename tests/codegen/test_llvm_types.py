"""The one dtype -> LLVM type map (backend.llvm_types)."""

import pytest

from backend.abi.pyentry import SCALAR_DTYPES
from backend.llvm_types import CodegenError, llvm_type, mask_type, mem_type, scalar_type
from irbuilder.ir import as_dtype


@pytest.mark.parametrize(
    "name,register,memory",
    [
        ("bool", "i1", "i8"),
        ("int8", "i8", "i8"),
        ("int16", "i16", "i16"),
        ("int32", "i32", "i32"),
        ("int64", "i64", "i64"),
        ("uint8", "i8", "i8"),
        ("uint16", "i16", "i16"),
        ("uint32", "i32", "i32"),
        ("uint64", "i64", "i64"),
        ("float16", "half", "half"),
        ("float32", "float", "float"),
        ("float64", "double", "double"),
        ("handle", "ptr", "ptr"),
        ("float32x8", "<8 x float>", "<8 x float>"),
        ("int64x4", "<4 x i64>", "<4 x i64>"),
        ("boolx16", "<16 x i1>", "<16 x i8>"),
        ("float16x2", "<2 x half>", "<2 x half>"),
        ("bfloat16", "bfloat", "bfloat"),
        ("bfloat16x4", "<4 x bfloat>", "<4 x bfloat>"),
    ],
)
def test_llvm_type_of_every_dtype(name: str, register: str, memory: str) -> None:
    dtype = as_dtype(name)
    assert llvm_type(dtype) == register
    assert mem_type(dtype) == memory
    assert scalar_type(dtype.element_of()) == register.split(" x ")[-1].rstrip(">")


def test_mask_type_has_the_lanes_of_its_dtype() -> None:
    assert mask_type(as_dtype("float64")) == "i1"
    assert mask_type(as_dtype("int32x8")) == "<8 x i1>"


def test_scalar_parameters_of_the_entry_wrapper_use_the_same_map() -> None:
    for name, text in SCALAR_DTYPES.items():
        assert text == llvm_type(as_dtype(name))


def test_float8_has_no_llvm_type() -> None:
    with pytest.raises(CodegenError, match="no LLVM type for e4m3_float8"):
        llvm_type(as_dtype("e4m3_float8"))
