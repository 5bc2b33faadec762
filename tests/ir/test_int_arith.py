"""The shared integer semantics (irbuilder.ir.int_binary) vs numpy, and its three readers."""

import itertools

import numpy as np
import pytest

from backend.interp import values as V
from irbuilder.ir import (
    BINARY_OP_NAMES,
    Add,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    Sub,
    as_dtype,
    int_binary,
    wrap_int,
)
from lowering.arith.fold import fold_binary

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _samples(name: str) -> list[int]:
    info = np.iinfo(name)
    values = {info.min, info.min + 1, -7, -2, -1, 0, 1, 2, 3, 7, info.max - 1, info.max}
    return sorted(v for v in values if info.min <= v <= info.max)


def _numpy(op: str, x: int, y: int, name: str) -> int:
    a, b = np.array([x], dtype=name), np.array([y], dtype=name)
    with np.errstate(all="ignore"):
        if op == "add":
            r = a + b
        elif op == "sub":
            r = a - b
        elif op == "mul":
            r = a * b
        elif op == "floordiv":
            r = np.floor_divide(a, b)
        elif op == "floormod":
            r = np.remainder(a, b)
        elif op == "mod":
            r = np.fmod(a, b)
        elif op == "div":
            r = (a - np.fmod(a, b)) // b  # exact: the dividend is a multiple of b
        elif op == "min":
            r = np.minimum(a, b)
        elif op == "max":
            r = np.maximum(a, b)
        elif op == "bitwise_and":
            r = a & b
        elif op == "bitwise_or":
            r = a | b
        elif op == "bitwise_xor":
            r = a ^ b
        elif op == "shift_left":
            r = np.left_shift(a, b)
        else:
            r = np.right_shift(a, b)
    return int(r[0])


OPS = ["add", "sub", "mul", "div", "mod", "floordiv", "floormod", "min", "max",
       "bitwise_and", "bitwise_or", "bitwise_xor"]


@pytest.mark.parametrize("name", INT_DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_int_binary_matches_numpy(op: str, name: str) -> None:
    dtype = as_dtype(name)
    signed = dtype.is_int
    for x, y in itertools.product(_samples(name), repeat=2):
        result = int_binary(op, x, y, dtype)
        if op in ("div", "mod", "floordiv", "floormod") and y == 0:
            assert result is None, (x, y)
        elif op in ("div", "floordiv") and signed and y == -1 and x == np.iinfo(name).min:
            assert result is None, (x, y)  # INT_MIN / -1: left to run time (OverflowError)
        else:
            assert result == _numpy(op, x, y, name), (op, name, x, y)


@pytest.mark.parametrize("name", INT_DTYPES)
def test_shifts_in_and_out_of_range(name: str) -> None:
    dtype = as_dtype(name)
    bits = dtype.bits
    for x in _samples(name):
        for amount in range(bits):
            for op in ("shift_left", "shift_right"):
                assert int_binary(op, x, amount, dtype) == _numpy(op, x, amount, name)
        for amount in (bits, bits + 5, -1) if dtype.is_int else (bits, bits + 5):
            assert int_binary("shift_left", x, amount, dtype) == 0
            fill = -1 if dtype.is_int and x < 0 else 0
            assert int_binary("shift_right", x, amount, dtype) == fill


def test_bool_arithmetic_is_one_bit_and_logic_is_truth() -> None:
    b = as_dtype("bool")
    assert int_binary("add", 1, 1, b) == 0
    assert int_binary("and", 1, 0, b) == 0 and int_binary("or", 1, 0, b) == 1
    assert wrap_int(2, b) == 1  # a conversion to bool is "non-zero"


_NODES = {"add": Add, "sub": Sub, "mul": Mul, "div": Div, "mod": Mod,
          "floordiv": FloorDiv, "floormod": FloorMod, "min": Min, "max": Max}


@pytest.mark.parametrize("name", ["int8", "int32", "uint8", "uint64"])
def test_folders_and_interpreter_read_the_same_semantics(name: str) -> None:
    dtype = as_dtype(name)
    for op, cls in _NODES.items():
        assert BINARY_OP_NAMES[cls] == op
        for x, y in itertools.product(_samples(name), repeat=2):
            a, b = IntImm(dtype, x), IntImm(dtype, y)
            expected = int_binary(op, x, y, dtype)
            folded = fold_binary(cls(a, b), a, b)
            if expected is None:
                assert folded is None
                with pytest.raises((ZeroDivisionError, OverflowError)):
                    V.binary(op, x, y, dtype)
                continue
            assert isinstance(folded, IntImm) and folded.value == expected
            assert V.binary(op, x, y, dtype) == expected
    built = IntImm(dtype, 5) // IntImm(dtype, 2)
    assert isinstance(built, IntImm) and built.value == int_binary("floordiv", 5, 2, dtype)


def test_tir_builders_fold_with_the_same_semantics() -> None:
    from irbuilder import tir as T
    from irbuilder.ir import Div

    i32 = as_dtype("int32")
    lowest = IntImm(i32, -(1 << 31))
    assert T.truncdiv(-7, 2).value == -3 and T.truncmod(-7, 2).value == -1  # type: ignore[attr-defined]
    assert T.min(IntImm(i32, 3), IntImm(i32, -4)).value == -4  # type: ignore[attr-defined]
    # INT_MIN / -1 is left for run time (OverflowError), not folded to a wrapped value.
    assert isinstance(T.truncdiv(lowest, IntImm(i32, -1)), Div)
    assert T.truncmod(lowest, IntImm(i32, -1)).value == 0  # type: ignore[attr-defined]
