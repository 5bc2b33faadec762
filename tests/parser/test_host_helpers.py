"""Host Python helpers called by kernels (issue #16 items 5 and 8).

In a ``from_source`` text only ``@T.prim_func`` functions (and ``@I.ir_module`` classes)
are kernels; an undecorated ``def`` is a host helper, used by a kernel only when its
``capture=[...]`` lists it (the metaprogramming RFC's policy). A helper that fails while a
kernel is built is reported at the call in the kernel, with a note at the helper's own
line naming its exception type.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import PrimFunc
from tvmscript import DiagnosticError
from tvmscript import tir as T

HELPERS = """
def twice(x):
    return x * 2

def pick(x):
    if x > 2:
        return x
    return x + 1

def bad(x):
    raise KeyError("no entry for " + str(x))
"""


def kernel(call: str, capture: str = "") -> str:
    decorator = f"@T.prim_func(capture=[{capture}])" if capture else "@T.prim_func"
    return (
        HELPERS
        + f"""
{decorator}
def k(A: T.Buffer((4,), "int32")):
    for i in range(4):
        A[i] = {call}
"""
    )


CALL_LINE = 16  # the line of `A[i] = ...` in kernel()
CALL_COL = 16


def error(text: str) -> DiagnosticError:
    with pytest.raises(DiagnosticError) as info:
        tvmscript.from_source(text)
    return info.value


def test_only_decorated_functions_are_kernels() -> None:
    func = tvmscript.from_source(kernel("twice(A[i])", capture="twice"))
    assert isinstance(func, PrimFunc) and func.name == "k"
    a = np.arange(4, dtype="int32")
    tvmscript.build(func)(a)
    np.testing.assert_array_equal(a, [0, 2, 4, 6])


def test_a_helper_without_capture_is_a_diagnostic_at_the_call() -> None:
    err = error(kernel("twice(A[i])"))
    assert "'twice'" in err.message and "add it to capture=[...]" in err.message
    assert err.span is not None and (err.span.line, err.span.col) == (CALL_LINE, CALL_COL)


def test_capturing_one_helper_does_not_capture_the_others() -> None:
    err = error(kernel("twice(A[i]) + pick(1)", capture="twice"))
    assert "'pick'" in err.message and "add it to capture=[...]" in err.message


def test_a_helper_needing_a_concrete_bool_reports_its_line_and_the_call() -> None:
    err = error(kernel("pick(i)", capture="pick"))
    assert "Python bool" in err.message
    assert err.span is not None and (err.span.line, err.span.col) == (CALL_LINE, CALL_COL)
    ((note, span),) = [(n, s) for n, s in err.notes if s is not None]
    assert note == "TypeError raised here, in host function 'pick'"
    # `x > 2` of `if x > 2:`; Python 3.10's code objects have no columns (co_positions is
    # 3.11's), so there the note points at the line.
    assert (span.line, span.col) == ((6, 8) if sys.version_info >= (3, 11) else (6, 1))
    shown = str(err)
    assert "if x > 2:" in shown and "A[i] = pick(i)" in shown


def test_a_helper_called_with_python_values_is_just_run() -> None:
    func = tvmscript.from_source(kernel("pick(5) + pick(1)", capture="pick"))
    a = np.zeros(4, dtype="int32")
    tvmscript.build(func)(a)
    np.testing.assert_array_equal(a, [7, 7, 7, 7])


def test_a_raising_helper_reports_its_exception_type_and_line() -> None:
    err = error(kernel("bad(i)", capture="bad"))
    assert "no entry for" in err.message
    assert err.span is not None and (err.span.line, err.span.col) == (CALL_LINE, CALL_COL)
    ((note, span),) = [(n, s) for n, s in err.notes if s is not None]
    assert note == "KeyError raised here, in host function 'bad'"
    assert (span.line, span.col) == ((11, 5) if sys.version_info >= (3, 11) else (11, 1))
    assert 'raise KeyError("no entry for " + str(x))' in str(err)


def test_a_helper_in_a_python_file_reports_the_same() -> None:
    def scale(x: object) -> object:
        raise ValueError("scale is not ready")

    with pytest.raises(DiagnosticError) as info:

        @T.prim_func(capture=[scale])
        def k(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = scale(A[i])

    err = info.value
    assert err.message == "scale is not ready"
    assert err.span is not None and err.span.file == __file__
    ((note, span),) = [(n, s) for n, s in err.notes if s is not None]
    assert note == "ValueError raised here, in host function 'scale'"
    assert span.file == __file__ and span.line == err.span.line - 7


def test_a_helper_failing_in_a_builtin_operation_points_at_the_helper() -> None:
    text = (
        HELPERS
        + """
def table(i):
    return [10, 20][i]

@T.prim_func(capture=[table])
def k(A: T.Buffer((4,), "int32")):
    A[0] = table(5)
"""
    )
    err = error(text)
    ((note, span),) = [(n, s) for n, s in err.notes if s is not None]
    assert note == "IndexError raised here, in host function 'table'"
    assert span.line == 14


def test_a_helper_failing_inside_numpy_points_at_the_helper_line() -> None:
    def tiles(x: object) -> object:
        return np.reshape(np.arange(6), (4, 4))

    with pytest.raises(DiagnosticError) as info:

        @T.prim_func(capture=[tiles])
        def k(A: T.Buffer((4,), "int32")):
            A[0] = tiles(1)

    ((note, span),) = [(n, s) for n, s in info.value.notes if s is not None]
    assert note == "ValueError raised here, in host function 'tiles'"
    assert span.file == __file__ and "np.reshape" in str(info.value)
