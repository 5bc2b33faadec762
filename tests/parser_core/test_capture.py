"""Capture policy: primitives, IR objects and closure cells automatic, everything else by
``capture=``."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

import pytest

from tvmscript.diagnostics import DiagnosticError
from tvmscript.parser.core import Parser, capture_env, describe_kind, doc, is_auto_captured

SIZE = 128
SHAPE = (SIZE, [2, 3], {"k": 1.5})
DTYPE = "float32"


def helper(x: Any) -> Any:
    """A host function a kernel may call (F4) once captured."""
    return x + 1


class Widget:
    """An arbitrary object type."""


WIDGET = Widget()


class IRThing:
    """Stands in for an IR node: the predicate below accepts it."""


F = TypeVar("F", bound=Callable[..., Any])
IR_VALUE = IRThing()
MIXED = (1, IR_VALUE)


def is_ir(value: Any) -> bool:
    return isinstance(value, IRThing)


PARSERS: dict[Callable[..., Any], Parser] = {}


def prim_func(*, capture: Any = ()) -> Callable[[F], F]:
    """A miniature entry point: records the environment the way ``T.prim_func`` will."""
    caller = sys._getframe(1)

    def decorate(fn: F) -> F:
        PARSERS[fn] = Parser.for_object(
            fn, capture=capture, caller_frame=caller, is_ir_object=is_ir
        )
        return fn

    return decorate


def kernel_body(parser: Parser) -> list[doc.stmt]:
    func = parser.source.tree.body[0]
    assert isinstance(func, doc.FunctionDef)
    return list(func.body)


def evaluate_return(parser: Parser) -> Any:
    ret = kernel_body(parser)[-1]
    assert isinstance(ret, doc.Return) and ret.value is not None
    with parser.var_table.frame():
        return parser.eval_expr(ret.value)


# ------------------------------------------------------------------------ policy


@pytest.mark.parametrize(
    "value",
    [None, True, 3, 2.5, 1j, "s", b"b", ..., (1, "a"), [1, [2.0]], {"a": (1,)}, frozenset({1})],
)
def test_primitives_are_captured_automatically(value: Any) -> None:
    assert is_auto_captured(value)


@pytest.mark.parametrize("value", [helper, math, Widget, WIDGET, [helper], {"f": helper}])
def test_other_values_are_not(value: Any) -> None:
    assert not is_auto_captured(value)


def test_numpy_scalars_are_primitives() -> None:
    np = pytest.importorskip("numpy")
    assert is_auto_captured(np.float32(1.5)) and not is_auto_captured(np.zeros(2))


def test_ir_objects_through_the_predicate_and_inside_containers() -> None:
    assert not is_auto_captured(IR_VALUE)
    assert is_auto_captured(IR_VALUE, is_ir) and is_auto_captured(MIXED, is_ir)


def test_self_containing_container_is_not_a_plain_value() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert not is_auto_captured(loop)


def test_kinds() -> None:
    assert describe_kind(helper) == "a function"
    assert describe_kind(len) == "a function"
    assert describe_kind(math) == "a module"
    assert describe_kind(Widget) == "a class"
    assert describe_kind(WIDGET) == "a 'Widget' object"


# ------------------------------------------------------------------ environments


def test_module_globals_are_captured_whatever_their_kind() -> None:
    # TVM v0.16 evaluates a kernel's names from its function's globals and closure
    def kernel() -> Any:
        return SIZE, SHAPE, DTYPE, helper, math, Widget, WIDGET, IR_VALUE

    env = capture_env(kernel, is_ir_object=is_ir, names={"SIZE", "SHAPE", "DTYPE",
                      "helper", "math", "Widget", "WIDGET", "IR_VALUE"})
    assert env.values == {"SIZE": SIZE, "SHAPE": SHAPE, "DTYPE": DTYPE, "IR_VALUE": IR_VALUE,
                          "helper": helper, "math": math, "Widget": Widget, "WIDGET": WIDGET}
    assert not env.refused


def test_listed_objects_are_captured_by_identity() -> None:
    def kernel() -> Any:
        return helper, math

    env = capture_env(kernel, [helper, math], names={"helper", "math"})
    assert env.values == {"helper": helper, "math": math} and not env.refused


def test_mapping_form_names_values_explicitly() -> None:
    env = capture_env(lambda: None, {"h": helper}, names={"h"})
    assert env.values == {"h": helper}


def test_names_limit_the_environment() -> None:
    env = capture_env(helper, names={"SIZE"})
    assert set(env.values) == {"SIZE"} and not env.refused


def test_closure_wins_over_caller_locals_and_globals() -> None:
    SIZE = "closure"  # deliberately shadows the module constant

    def kernel() -> Any:
        return SIZE

    frame = sys._getframe()
    env = capture_env(kernel, caller_frame=frame, names={"SIZE"})
    assert env.values["SIZE"] == "closure"


def test_closure_cells_are_captured_whatever_their_kind() -> None:
    # A helper class or function defined next to the kernel and used in its body: Python
    # resolves the name from the closure, and so does TVM.
    class Local:
        pass

    def local_helper(x: Any) -> Any:
        return x

    def kernel() -> Any:
        return Local, local_helper, math

    frame = sys._getframe()
    env = capture_env(kernel, caller_frame=frame, names={"Local", "local_helper", "math"})
    assert env.values == {"Local": Local, "local_helper": local_helper, "math": math}
    assert not env.refused


def test_caller_locals_outside_the_closure_keep_the_policy() -> None:
    def unused_by_body(x: Any) -> Any:
        return x

    def kernel() -> Any:
        return None

    frame = sys._getframe()
    env = capture_env(kernel, caller_frame=frame, names={"unused_by_body", "helper"})
    assert env.values == {"helper": helper}  # a module global
    assert env.refused == {"unused_by_body": "a function"}


def test_unassigned_closure_cells_are_skipped() -> None:
    def kernel() -> Any:
        return later

    env = capture_env(kernel, names={"later"})
    assert "later" not in env.values
    later = 1  # only exists to make ``later`` a free variable of kernel


# ---------------------------------------------------- templates (F1) end to end


def buffer(*shape_and_dtype: Any) -> Any:
    """A stand-in for ``T.Buffer(...)`` in annotations."""
    return shape_and_dtype


def gen(n: int, m: int) -> Any:
    """``gen_matmul``-style template: ``n`` only in an annotation, ``m`` in the body."""

    @prim_func(capture=[buffer])
    def kernel(A: buffer(n, DTYPE)) -> Any:  # type: ignore[valid-type]
        return m * 2, SIZE

    return kernel


def test_generator_locals_are_captured_from_the_callers_frame() -> None:
    parser = PARSERS[gen(4, 8)]
    assert parser.captured.values["n"] == 4  # from gen's frame (annotation only)
    assert parser.captured.values["m"] == 8  # from the closure
    func = parser.source.tree.body[0]
    assert isinstance(func, doc.FunctionDef)
    annotation = func.args.args[0].annotation
    assert annotation is not None
    assert parser.eval_expr(annotation) == (4, "float32")
    assert evaluate_return(parser) == (16, SIZE)
    # Two instantiations are independent.
    assert evaluate_return(PARSERS[gen(1, 2)]) == (4, SIZE)


def test_uncaptured_function_yields_the_capture_diagnostic() -> None:
    # a function of the caller that is neither a closure cell nor a global (used only in
    # an annotation, which makes no closure cell) still needs capture=[...]
    def local_size(x: Any) -> Any:
        return x

    @prim_func()
    def kernel(A: local_size(4)) -> Any:  # type: ignore[valid-type]
        return None

    parser = PARSERS[kernel]
    func = parser.source.tree.body[0]
    assert isinstance(func, doc.FunctionDef)
    annotation = func.args.args[0].annotation
    assert annotation is not None
    with pytest.raises(DiagnosticError) as info:
        parser.eval_expr(annotation)
    err = info.value
    assert err.message == (
        "name 'local_size' is a function from the enclosing scope; "
        "add it to capture=[...] to use it"
    )
    # Located at the name in this very file.
    assert err.span is not None and err.span.file == __file__
    source_line = parser.source.line_text(err.span.line)
    assert source_line[err.span.col - 1 : err.span.end_col - 1] == "local_size"


def test_module_level_function_is_callable_without_capture() -> None:
    @prim_func()
    def kernel() -> Any:
        return helper(SIZE)

    assert evaluate_return(PARSERS[kernel]) == SIZE + 1


def test_captured_function_is_callable_from_the_kernel() -> None:
    @prim_func(capture=[helper])
    def kernel() -> Any:
        return helper(SIZE)

    assert evaluate_return(PARSERS[kernel]) == SIZE + 1


def test_ir_objects_and_primitives_need_no_capture() -> None:
    @prim_func()
    def kernel() -> Any:
        return IR_VALUE, MIXED, DTYPE

    assert evaluate_return(PARSERS[kernel]) == (IR_VALUE, MIXED, DTYPE)


def test_frame_type_is_what_entry_points_pass() -> None:
    assert isinstance(sys._getframe(), FrameType)
