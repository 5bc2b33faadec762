"""What parse-time eval/exec can see (docs/eval-scope.md): names and attributes."""

from __future__ import annotations

import os
from typing import Any

import pytest

import tvmscript
from tvmscript.parser.core.evaluator import EVAL_BUILTINS

from_source: Any = getattr(tvmscript, "from_source", None)
pytestmark = pytest.mark.skipif(from_source is None, reason="the parser does not exist yet")

_TEMPLATE = (
    '@T.prim_func\ndef f(A: T.Buffer((4,), "int32")):\n    x = T.meta_var({})\n    A[0] = 1\n'
)
SECRET_GLOBAL = 1234


def _helper() -> int:
    return 1


@pytest.mark.parametrize(
    "expr",
    ["__import__('os')", "open('/etc/hostname')", "eval('1')", "exec('1')",
     "compile('1', 'a', 'eval')", "globals()", "locals()", "vars()", "input()",
     "breakpoint()", "__builtins__", "__builtins__['__import__']", "SECRET_GLOBAL", "os",
     "sys", "np", "tvmscript", "irbuilder", "setattr", "delattr", "memoryview",
     "__loader__", "__spec__", "__name__", "_helper"],
)
def test_names_outside_the_scope_are_not_reachable(expr: str) -> None:
    with pytest.raises(tvmscript.DiagnosticError, match="not defined"):
        from_source(_TEMPLATE.format(expr))


def test_builtins_whitelist_is_exactly_documented() -> None:
    assert not {"__import__", "open", "eval", "exec", "compile", "globals", "vars", "input",
                "breakpoint", "setattr", "delattr", "locals", "memoryview"} & set(EVAL_BUILTINS)
    for name in ("len", "range", "min", "max", "isinstance", "print", "object", "type",
                 "getattr"):
        assert name in EVAL_BUILTINS


def test_captured_values_and_T_are_visible() -> None:
    f = from_source(_TEMPLATE.replace("A[0] = 1", "A[0] = K + len((1, 2))").format("0"),
                    capture={"K": 40})
    assert "42" in f.script()


def test_module_globals_a_decorated_kernel_names_resolve_as_in_tvm() -> None:
    # TVM v0.16 evaluates a kernel's names in its function's globals: a module the file
    # imports, or a helper it defines, is what the name means (name isolation, not a
    # sandbox: the kernel's author wrote the call)
    from tvmscript import tir as T

    @T.prim_func
    def k(A: T.Buffer((4,), "int32")) -> None:
        A[0] = os.getpid()

    assert str(os.getpid()) in k.script()

    @T.prim_func
    def k2(A: T.Buffer((4,), "int32")) -> None:
        A[0] = _helper()

    assert f"A[0] = {_helper()}" in k2.script()


def test_primitive_module_globals_are_captured_for_decorated_kernels() -> None:
    from tvmscript import tir as T

    @T.prim_func
    def k(A: T.Buffer((4,), "int32")) -> None:
        A[0] = SECRET_GLOBAL

    assert "1234" in k.script()


@pytest.mark.parametrize(
    ("expr", "attribute"),
    [("T.__builtins__", "__builtins__"),
     ("T.__dict__['__builtins__']['__import__']('os').getpid()", "__dict__"),
     ("().__class__.__base__.__subclasses__()", "__class__"),
     ("T.exp.__globals__['__builtins__']", "__globals__"),
     ("getattr(T, '__builtins__')", "__builtins__"),
     ("hasattr(T, '__dict__')", "__dict__"),
     ("getattr(getattr((), '__class__'), '__base__')", "__class__"),
     ("(lambda: ().__class__)()", "__class__"),
     ("[x.__class__ for x in (1,)]", "__class__"),
     ("(x for x in ()).gi_frame.f_globals", "gi_frame"),
     ("T.exp.__code__", "__code__")],
)
def test_dunder_and_introspection_attributes_are_refused(expr: str, attribute: str) -> None:
    with pytest.raises(tvmscript.DiagnosticError, match=f"attribute '{attribute}' is not "
                       "accessible") as info:
        from_source(_TEMPLATE.format(expr))
    span = info.value.span
    assert span is not None and span.line == 3  # at the attribute, inside the script


@pytest.mark.parametrize(
    "expr",
    ["T.builtins", "T.builtins.open('/etc/hostname')", "getattr(T, 'builtins')",
     "(lambda: T.builtins.eval('1'))()", "[T.builtins for _ in range(1)]", "T._ir",
     "getattr(T, '_builtin')", "(lambda: getattr(T, 'builtins'))()"],
)
def test_modules_and_private_names_of_T_are_refused(expr: str) -> None:
    with pytest.raises(tvmscript.DiagnosticError, match="not part of the TVMScript namespace"):
        from_source(_TEMPLATE.format(expr))


def test_assigning_attributes_of_a_module_is_refused() -> None:
    text = '@T.prim_func\ndef f(A: T.Buffer((4,), "int32")):\n    T.exp = 1\n'
    with pytest.raises(tvmscript.DiagnosticError, match="cannot assign attribute 'exp'"):
        from_source(text)
    import tvmscript.tir as tir

    assert callable(tir.exp)


def test_text_macro_definitions_run_with_the_restricted_builtins() -> None:
    head = "@T.macro\ndef m(x={}):\n    pass\n\n" + _TEMPLATE.format("0")
    with pytest.raises(tvmscript.DiagnosticError, match="__import__"):
        from_source(head.format("__import__('os')"))
    with pytest.raises(tvmscript.DiagnosticError, match="__class__"):
        from_source(head.format("().__class__"))
    with pytest.raises(tvmscript.DiagnosticError, match="not part of the TVMScript namespace"):
        from_source(head.format("T.builtins"))
    assert "A[0] = 1" in from_source(head.format("len((1, 2))")).script()


@pytest.mark.parametrize(
    "expr",
    ["T.exp", "getattr(T, 'float32')", "hasattr(T, 'exp')", "T.float32",
     "(lambda: T.exp)()", "[T.int32 for _ in range(2)]", "'{0:x}'.format(255)",
     "getattr(A, 'shape')", "A.dtype"],
)
def test_ordinary_attributes_still_work(expr: str) -> None:
    text = _TEMPLATE.replace("x = T.meta_var({})", "x = T.meta_var({})\n    y = A.shape")
    from_source(text.format(expr), capture={})
