"""Evaluator: Python semantics bottom-up, IR hooks for logic, and precise error spans."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tvmscript.diagnostics import DEBUG_ENV_VAR, DiagnosticError
from tvmscript.parser.core import (
    CapturedEnv,
    DispatchTable,
    EvalHooks,
    doc,
    eval_assign,
    eval_namespace,
)

from .helpers import SYM_HOOKS, Sym, evaluate, first_expr, parser_for

needs_positions = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="column positions in code objects need Python 3.11"
)


def error_of(text: str, env: dict[str, Any] | None = None, **kwargs: Any) -> DiagnosticError:
    with pytest.raises(DiagnosticError) as info:
        evaluate(text, env, **kwargs)
    return info.value


def columns(err: DiagnosticError) -> tuple[int, int]:
    """``(col, end_col)`` of a one-line error span."""
    assert err.span is not None and err.span.line == err.span.end_line
    return err.span.col, err.span.end_col


def compute(shape: Sequence[int], fn: Callable[..., Any]) -> list[Any]:
    """A stand-in for ``T.compute``: calls ``fn`` on every index of a 1-d shape."""
    return [fn(i) for i in range(shape[0])]


# ----------------------------------------------------------- plain Python semantics


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a * 3 + b // 2 - -a", 2 * 3 + 7 // 2 + 2),
        ("a ** 2 % 3, ~a, +a, a @ M", (1, -3, 2, "matmul")),
        ("(a << 2) | (b & 3) ^ 1", (2 << 2) | (7 & 3) ^ 1),
        ("[a, *xs, b], {a, a}, (), (a,)", ([2, 1, 2, 7], {2}, (), (2,))),
        ("{'k': a, **d}", {"k": 2, "z": 0}),
        ("xs[1:], xs[::-1], xs[-1]", ([2], [2, 1], 2)),
        ("f(a, *xs, k=b, **d)", ((2, 1, 2), {"k": 7, "z": 0})),
        ("f'{a}-{b!r:>4}-{s:{w}}|'", "2-   7-hi   |"),
        ("len(xs) + max(xs) + sum(i for i in xs)", 2 + 2 + 3),
        ("a in xs and b not in xs and xs is not None", True),
    ],
)
def test_python_values(text: str, expected: Any) -> None:
    class Matrix:
        def __rmatmul__(self, other: Any) -> str:
            return "matmul"

    env = {
        "a": 2,
        "b": 7,
        "xs": [1, 2],
        "d": {"z": 0},
        "s": "hi",
        "w": 5,
        "M": Matrix(),
        "f": lambda *args, **kwargs: (args, kwargs),
    }
    assert evaluate(text, env) == expected


def test_comprehensions_see_the_current_bindings() -> None:
    env = {"n": 4, "k": 10}
    assert evaluate("[i * k for i in range(n) if i != 1]", env) == [0, 20, 30]
    assert evaluate("{i: i * i for i in range(n)}", env) == {0: 0, 1: 1, 2: 4, 3: 9}
    assert evaluate("{i % 2 for i in range(n)}", env) == {0, 1}
    assert evaluate("[(i, j) for i in range(2) for j in range(i)]", env) == [(1, 0)]


def test_lambda_is_evaluated_whole_with_bindings_captured() -> None:
    env = {"A": [10, 20, 30, 40], "compute": compute}
    assert evaluate("compute((4,), lambda i: A[i] + 1)", env) == [11, 21, 31, 41]
    assert evaluate("(lambda i, j=2: i * j)(5)", env) == 10


class Echo:
    """Returns the key it is subscripted with."""

    def __getitem__(self, key: Any) -> Any:
        return key


def test_starred_subscripts() -> None:
    env = {"A": Echo(), "i": [1, 2]}
    assert evaluate("A[(*i,)]", env) == (1, 2)
    assert evaluate("A[(*i, 0)]", env) == (1, 2, 0)
    assert evaluate("A[1:, 3]", env) == (slice(1, None), 3)
    assert evaluate("A[::2]", env) == slice(None, None, 2)
    assert evaluate("A[()]", env) == ()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="A[*i] is Python 3.11+ syntax")
def test_starred_subscripts_311_syntax() -> None:
    env = {"A": Echo(), "i": [1, 2]}
    assert evaluate("A[*i]", env) == (1, 2)
    assert evaluate("A[*i, 0:1]", env) == (1, 2, slice(0, 1))


def test_conditional_expression_with_a_python_condition_picks_a_branch() -> None:
    # The branch not taken is never evaluated (``missing`` would be an error).
    assert evaluate("x if n > 0 else missing", {"n": 1, "x": "yes"}) == "yes"
    assert evaluate("missing if n > 0 else y", {"n": 0, "y": "no"}) == "no"


def test_short_circuit_on_python_values() -> None:
    assert evaluate("0 and missing") == 0
    assert evaluate("1 or missing") == 1
    assert evaluate("1 and 2 and 3") == 3
    assert evaluate("0 or '' or 'last'") == "last"
    assert evaluate("1 < 0 < missing") is False
    assert evaluate("1 < 2 < 3 <= 3") is True
    assert evaluate("not 0") is True


# --------------------------------------------------------------- symbolic values


SYMS = {"x": Sym("x"), "y": Sym("y"), "z": Sym("z")}


def test_chained_comparison_of_symbols_calls_the_and_hook() -> None:
    result = evaluate("x < y < z", SYMS, hooks=SYM_HOOKS)
    assert repr(result) == "And((x < y), (y < z))"
    result = evaluate("0 < x <= 5", SYMS, hooks=SYM_HOOKS)
    assert repr(result) == "And((x > 0), (x <= 5))"


def test_chain_mixing_static_and_symbolic_links() -> None:
    # A static True link disappears (``True and link``); a static False one stops.
    assert repr(evaluate("1 < 2 < x", SYMS, hooks=SYM_HOOKS)) == "(x > 2)"
    assert evaluate("2 < 1 < x", SYMS, hooks=SYM_HOOKS) is False


def test_boolean_operators_on_symbols_call_hooks() -> None:
    assert repr(evaluate("x and y", SYMS, hooks=SYM_HOOKS)) == "And(x, y)"
    assert repr(evaluate("x or y or z", SYMS, hooks=SYM_HOOKS)) == "Or(Or(x, y), z)"
    assert repr(evaluate("not x", SYMS, hooks=SYM_HOOKS)) == "Not(x)"
    # Python prefixes keep Python's rules: ``True and x`` is ``x``, ``False and x`` False.
    assert repr(evaluate("True and x", SYMS, hooks=SYM_HOOKS)) == "x"
    assert evaluate("False and x", SYMS, hooks=SYM_HOOKS) is False
    assert repr(evaluate("x and True", SYMS, hooks=SYM_HOOKS)) == "And(x, True)"


def test_conditional_expression_on_a_symbol_calls_select() -> None:
    result = evaluate("y if x < 1 else z", SYMS, hooks=SYM_HOOKS)
    assert repr(result) == "Select((x < 1), y, z)"


def test_without_hooks_symbols_fail_where_python_would_call_bool() -> None:
    err = error_of("a < x < b", {"a": 0, "b": 9, **SYMS})
    assert "cannot decide the truth of symbolic" in err.message
    err = error_of("x and y", SYMS)
    assert columns(err) == (1, 8)


def test_operator_table_overrides_python_operators() -> None:
    table = DispatchTable()
    table.register_op(Sym, "Sub", 0)(lambda lhs, rhs: Sym(f"Sub({lhs!r}, {rhs!r})"))
    table.register_op(Sym, "Sub", 1)(lambda lhs, rhs: Sym(f"RSub({lhs!r}, {rhs!r})"))
    table.register_op(Sym, "USub", 0)(lambda value: Sym(f"Neg({value!r})"))
    assert repr(evaluate("x - 1", SYMS, table=table)) == "Sub(x, 1)"
    assert repr(evaluate("1 - x", SYMS, table=table)) == "RSub(1, x)"
    assert repr(evaluate("-x", SYMS, table=table)) == "Neg(x)"
    assert repr(evaluate("x + 1", SYMS, table=table)) == "(x + 1)"  # no entry: Python's


# ------------------------------------------------------------------ error spans


class Box:
    def __init__(self) -> None:
        self.value = 1

    def fail(self, _arg: int) -> None:
        raise ValueError("fail() always fails")


def test_error_points_at_the_innermost_failing_subexpression() -> None:
    err = error_of("a + b.c(1)", {"a": 1, "b": Box()})
    assert err.message == "'Box' object has no attribute 'c'"
    assert columns(err) == (5, 8)  # ``b.c``
    assert isinstance(err.original, AttributeError)
    assert err.__cause__ is err.original


def test_error_raised_by_a_call_points_at_the_call() -> None:
    err = error_of("a + b.fail(1) * 2", {"a": 1, "b": Box()})
    assert err.message == "fail() always fails" and columns(err) == (5, 14)


def test_error_in_an_operator_points_at_the_operation() -> None:
    err = error_of("1 + (a / zero)", {"a": 1, "zero": 0})
    assert err.message == "division by zero" and columns(err) == (6, 14)


def test_error_in_one_link_of_a_chain_points_at_that_link() -> None:
    err = error_of("1 < 2 < s", {"s": "text"})
    assert "not supported between" in err.message and columns(err) == (5, 10)


def test_undefined_name_with_suggestion() -> None:
    err = error_of("valeu + 1", {"value": 1})
    assert err.message == "name 'valeu' is not defined" and columns(err) == (1, 6)
    assert err.notes == [("did you mean 'value'?", None)]


@needs_positions
def test_error_inside_a_lambda_points_into_the_lambda() -> None:
    err = error_of("compute((4,), lambda i: A[i] + missing)", {"A": [1] * 4, "compute": compute})
    assert err.message == "name 'missing' is not defined"
    assert columns(err) == (32, 39)


@needs_positions
def test_lambda_failing_when_called_later_points_at_its_body_with_a_note() -> None:
    parser = parser_for("f = lambda i: i + missing\ny = compute((2,), f)\n")
    define, use = parser.source.tree.body
    assert isinstance(define, doc.Assign) and isinstance(use, doc.Assign)
    with parser.var_table.frame():
        parser.var_table.add("compute", compute)
        parser.eval_assign(define.targets[0], parser.eval_expr(define.value))
        with pytest.raises(DiagnosticError) as info:
            parser.eval_expr(use.value)
    err = info.value
    assert err.span is not None and (err.span.line, *columns(err)) == (1, 19, 26)
    ((note, note_span),) = err.notes
    assert note == "raised while evaluating this expression"
    assert note_span is not None and (note_span.line, note_span.col) == (2, 5)


@needs_positions
def test_error_inside_a_comprehension_points_at_the_failing_part() -> None:
    err = error_of("[xs[i] for i in range(3)]", {"xs": [0, 1]})
    assert err.message == "list index out of range" and columns(err) == (2, 7)


def test_existing_diagnostics_pass_through() -> None:
    def raise_diag() -> None:
        raise DiagnosticError("from a nested parse")

    err = error_of("f() + 1", {"f": raise_diag})
    assert err.message == "from a nested parse" and err.span is None


def test_rejected_expressions() -> None:
    assert "assignment expressions" in error_of("(y := 1)").message
    parser = parser_for("(*xs,)\n")
    display = first_expr(parser)
    assert isinstance(display, doc.Tuple)
    with pytest.raises(DiagnosticError, match="starred expression is only allowed"):
        parser.eval_expr(display.elts[0])


def test_debug_switch_reraises_the_original(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DEBUG_ENV_VAR, "1")
    with pytest.raises(AttributeError):
        evaluate("b.c", {"b": Box()})


# ------------------------------------------------------------ what eval can see

MODULE_SECRET = "not captured"


def test_module_globals_are_not_reachable_unless_captured() -> None:
    assert "MODULE_SECRET" in globals()
    err = error_of("MODULE_SECRET")
    assert err.message == "name 'MODULE_SECRET' is not defined"
    err = error_of("(lambda: MODULE_SECRET)()")
    assert err.message == "name 'MODULE_SECRET' is not defined"


@pytest.mark.parametrize(
    "name", ["__import__", "open", "eval", "exec", "compile", "globals", "vars", "input"]
)
def test_dangerous_builtins_are_not_visible(name: str) -> None:
    assert error_of(name).message == f"name '{name}' is not defined"
    assert error_of(f"(lambda: {name})()").message == f"name '{name}' is not defined"


def test_namespace_layers_and_their_precedence() -> None:
    parser = parser_for(
        "x\n",
        captured=CapturedEnv({"x": "captured", "c": 1}),
        extra_names={"x": "extra", "T": "tir"},
    )
    with parser.var_table.frame():
        assert parser.eval_expr(first_expr(parser)) == "extra"
        parser.var_table.add("x", "local")
        assert parser.eval_expr(first_expr(parser)) == "local"
        assert parser.eval_expr(first_expr(parser), {"x": "call"}) == "call"
        namespace = eval_namespace(parser, {"tmp": 0})
    visible = {k for k in namespace if not k.startswith("__")}
    assert visible == {"x", "c", "T", "tmp"}
    assert set(namespace["__builtins__"]) == set(parser.builtins)


def test_refused_names_shadow_builtins_and_explain_capture() -> None:
    captured = CapturedEnv(refused={"max": "a function", "np": "a module"})
    message = "name 'max' is a function from the enclosing scope; add it to capture=[...] to use it"
    assert error_of("max(1, 2)", captured=captured).message == message
    assert error_of("(lambda: max(1, 2))()", captured=captured).message == message
    assert error_of("np.zeros", captured=captured).message.startswith("name 'np' is a module")


# -------------------------------------------------------------------- assignment


def assign(target_text: str, value: Any) -> dict[str, Any]:
    parser = parser_for(f"{target_text} = rhs\n")
    stmt = parser.source.tree.body[0]
    assert isinstance(stmt, doc.Assign)
    with parser.var_table.frame():
        return eval_assign(parser, stmt.targets[0], value)


def test_assign_follows_python_unpacking() -> None:
    assert assign("x", 5) == {"x": 5}
    assert assign("a, b", (1, 2)) == {"a": 1, "b": 2}
    assert assign("first, *rest", range(4)) == {"first": 0, "rest": [1, 2, 3]}
    assert assign("a, (b, *c), [d]", (1, (2, 3, 4), [5])) == {"a": 1, "b": 2, "c": [3, 4], "d": 5}
    assert assign("*i,", ("v0", "v1")) == {"i": ["v0", "v1"]}


def test_assign_to_attributes_and_subscripts_binds_no_name() -> None:
    class Obj:
        pass

    obj, store = Obj(), dict[str, int]()
    parser = parser_for("o.attr, s['k'] = rhs\n", extra_names={"o": obj, "s": store})
    stmt = parser.source.tree.body[0]
    assert isinstance(stmt, doc.Assign)
    assert eval_assign(parser, stmt.targets[0], (1, 2)) == {}
    assert obj.attr == 1 and store == {"k": 2}  # type: ignore[attr-defined]


def test_assign_errors_point_at_the_target() -> None:
    with pytest.raises(DiagnosticError) as info:
        assign("a, b", (1, 2, 3))
    assert info.value.message == "too many values to unpack (expected 2)"
    assert columns(info.value) == (1, 5)


@needs_positions
def test_nested_unpack_error_points_at_the_nested_target() -> None:
    with pytest.raises(DiagnosticError) as info:
        assign("a, (b, c)", (1, (2,)))
    assert "not enough values to unpack" in info.value.message
    assert columns(info.value) == (4, 10)


def test_hooks_default_to_python_semantics() -> None:
    hooks = EvalHooks()
    assert hooks.is_static(Sym("x"))
    assert hooks.logical_and(0, 1) == 0 and hooks.logical_or(0, 1) == 1
    assert hooks.logical_not(0) is True and hooks.select(0, "t", "f") == "f"
