"""Entry-check and assert messages carry the actual value (format_message), natively and
in the interpreter running the lowered IR."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lowering
import tvmscript
from backend.interp import interpret
from irbuilder.ir import MessageFormatError, StringImm, const, format_message
from lowering import WellFormedError, verify_well_formed
from tvmscript import tir as T

TARGETS = ["llvm", "interp"]


@T.prim_func
def copy_fixed(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        B[i, j] = A[i, j]


@T.prim_func
def copy_sym(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 4), "float32")
    B = T.match_buffer(b, (n * 2,), "float32")
    for i in range(n):
        B[i * 2] = A[i, 0]
        B[i * 2 + 1] = A[i, 1]


@T.prim_func
def checked(A: T.Buffer((4,), "int32"), k: T.int32):
    assert k < 10, T.format_message("ValueError: k is {} (100% too big: limit {{10}})", k)
    for i in range(4):
        A[i] = k


@T.prim_func
def checked_parallel(A: T.Buffer((4,), "int32"), k: T.int32):
    for i in T.parallel(4):
        assert A[i] < k, T.format_message("A[{}] == {} is not below k", i, A[i])
        A[i] = A[i] + 1


def _build(func: Any, target: str) -> Any:
    return tvmscript.build(func, target=target)


def _raises(kernel: Any, exc: type[Exception], message: str, *args: Any) -> None:
    with pytest.raises(exc) as info:
        kernel(*args)
    assert str(info.value) == message


ok = np.zeros((8, 4), "float32")


@pytest.mark.parametrize("target", TARGETS)
def test_constant_shape_dtype_ndim_report_actual(target: str) -> None:
    k = _build(copy_fixed, target)
    _raises(k, ValueError, "A: expected shape[0] == 8, got 7", np.zeros((7, 4), "float32"), ok)
    _raises(k, ValueError, "B: expected shape[1] == 4, got 5", ok, np.zeros((8, 5), "float32"))
    _raises(k, TypeError, "A: expected dtype float32, got float64", ok.astype("float64"), ok)
    _raises(k, TypeError, "A: expected dtype float32, got >f4", ok.astype(">f4"), ok)
    _raises(k, TypeError, "B: expected ndim == 2, got 1", ok, np.zeros(32, "float32"))


@pytest.mark.parametrize("target", TARGETS)
def test_symbolic_dims_report_bound_and_actual_value(target: str) -> None:
    k = _build(copy_sym, target)
    a = np.arange(12, dtype="float32").reshape(3, 4)
    _raises(k, ValueError, "B: expected shape[0] == (n * 2) = 6, got 5", a, np.zeros(5, "f4"))
    b = np.zeros(6, "float32")
    k(a, b)
    np.testing.assert_array_equal(b, a[:, :2].reshape(-1))


@pytest.mark.parametrize("target", TARGETS)
def test_non_contiguous_written_buffer_reports_stride(target: str) -> None:
    k = _build(copy_fixed, target)
    wide = np.zeros((8, 8), "float32")
    with pytest.raises(ValueError, match=r"B: .*C-contiguous"):
        k(ok, wide[:, ::2])


def test_native_contiguity_message_has_actual_stride() -> None:
    k = tvmscript.build(copy_fixed)
    wide = np.zeros((8, 8), "float32")
    _raises(
        k,
        ValueError,
        "B: expected a C-contiguous array (strides[1] == 4 bytes), got strides[1] == 8",
        ok,
        wide[:, ::2],
    )


@pytest.mark.parametrize("target", TARGETS)
def test_read_only_output(target: str) -> None:
    k = _build(copy_fixed, target)
    frozen = ok.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="B: expected a writable array"):
        k(ok, frozen)


@pytest.mark.parametrize("target", TARGETS)
def test_user_assert_with_values_and_literal_percent_and_braces(target: str) -> None:
    k = _build(checked, target)
    _raises(k, ValueError, "k is 12 (100% too big: limit {10})", np.zeros(4, "int32"), 12)
    out = np.zeros(4, "int32")
    k(out, 3)
    np.testing.assert_array_equal(out, [3, 3, 3, 3])


def test_negative_and_unsigned_values_are_formatted_with_their_sign() -> None:
    @T.prim_func
    def f(x: T.int64, y: T.uint64):
        assert x > 0, T.format_message("x={} y={}", x, y)

    for target in TARGETS:
        k = tvmscript.build(f, target=target)
        with pytest.raises(AssertionError) as info:
            k(-5, 2**64 - 1)
        assert str(info.value) == f"x=-5 y={2**64 - 1}", target


def test_parallel_region_message_keeps_text_without_values() -> None:
    k = tvmscript.build(checked_parallel)
    data = np.array([0, 1, 9, 2], "int32")
    with pytest.raises(AssertionError, match=r"A\[\?\] == \? is not below k"):
        k(data, 5)


def test_lowered_interpreter_gives_the_same_messages() -> None:
    # The interpreter on the fully lowered IR executes the entry-check asserts themselves.
    lowered = lowering.lower(copy_sym)
    a = np.zeros((3, 4), "float32")
    with pytest.raises(ValueError) as info:
        interpret(lowered, [a, np.zeros(5, "f4")], check_args=False)
    assert str(info.value) == "B: expected shape[0] == (n * 2) = 6, got 5"
    with pytest.raises(TypeError) as type_info:
        interpret(lowered, [a.astype(">f4"), np.zeros(6, "f4")], check_args=False)
    assert str(type_info.value) == "A: expected dtype float32, got >f4"


def test_format_message_round_trips_through_the_printer() -> None:
    text = checked.script()
    assert 'T.format_message("ValueError: k is {} (100% too big: limit {{10}})", k)' in text
    again = tvmscript.from_source(text)
    tvmscript.ir.assert_structural_equal(again, checked)


def test_lowered_source_shows_the_formatted_checks() -> None:
    tir = tvmscript.build(copy_fixed).get_source("tir")
    assert 'T.format_message("ValueError: A: expected shape[0] == 8, got {}"' in tir
    assert "T.array_descr(" in tir


def test_format_message_validation() -> None:
    with pytest.raises(MessageFormatError, match="1 placeholder"):
        format_message("a {}")
    with pytest.raises(MessageFormatError, match="stray '}'"):
        format_message("a }", const(1))
    with pytest.raises(MessageFormatError, match="at most 4"):
        format_message("{}{}{}{}{}", *(const(i) for i in range(5)))
    with pytest.raises(MessageFormatError, match="scalar integer or bool"):
        format_message("{}", const(1.5, "float32"))
    with pytest.raises(MessageFormatError, match="only array_descr"):
        format_message("{}", StringImm("x"))


def test_verifier_rejects_format_message_outside_an_assert() -> None:
    from irbuilder.ir import Evaluate, PrimFunc

    func = PrimFunc((), Evaluate(format_message("x")))
    with pytest.raises(WellFormedError, match="format_message is only valid"):
        verify_well_formed(func)


def test_parser_reports_bad_format_message() -> None:
    source = """
@T.prim_func
def f(k: T.int32):
    assert k < 3, T.format_message("k is {} and {}", k)
"""
    with pytest.raises(tvmscript.DiagnosticError, match="2 placeholder"):
        tvmscript.from_source(source)
