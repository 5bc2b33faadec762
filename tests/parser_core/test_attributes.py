"""The attribute rules of parse-time evaluation (attributes.py, docs/eval-scope.md), and
the iterative handling of deep expressions in the core (source, doc conversion, eval)."""

from __future__ import annotations

import ast
import sys
import types
from typing import Any

import pytest

from tvmscript.diagnostics import DiagnosticError
from tvmscript.parser.core import EVAL_BUILTINS, Source, attributes, doc, eval_assign

from .helpers import evaluate, first_expr, parser_for, unique_filename

NS = types.ModuleType("fake_ns")
NS.public = 1  # type: ignore[attr-defined]
NS._private = 2  # type: ignore[attr-defined]
NS.mod = sys  # type: ignore[attr-defined]


def error_of(text: str, env: dict[str, Any] | None = None) -> DiagnosticError:
    with pytest.raises(DiagnosticError) as info:
        evaluate(text, env)
    return info.value


# ------------------------------------------------------------------- the rules


@pytest.mark.parametrize("name", ["__class__", "__dict__", "__globals__", "__init__"])
def test_dunder_names_are_refused(name: str) -> None:
    assert attributes.is_dunder(name)
    why = attributes.refusal(name)
    assert why is not None and "dunder" in why


@pytest.mark.parametrize("name", ["_x", "__x", "x__", "____", "shape", "dtype"])
def test_other_names_are_not_dunders(name: str) -> None:
    assert not attributes.is_dunder(name)
    assert attributes.refusal(name) is None


@pytest.mark.parametrize("name", sorted(attributes.INTROSPECTION_ATTRIBUTES))
def test_introspection_names_are_refused(name: str) -> None:
    why = attributes.refusal(name)
    assert why is not None and "introspection" in why


def test_namespace_rule_private_and_module_values() -> None:
    assert attributes.checked_getattr(NS, "public", namespaces=(NS,)) == 1
    with pytest.raises(attributes.ForbiddenAttributeError, match="private name"):
        attributes.checked_getattr(NS, "_private", namespaces=(NS,))
    with pytest.raises(attributes.ForbiddenAttributeError, match="the module 'sys'"):
        attributes.checked_getattr(NS, "mod", namespaces=(NS,))
    # Not a namespace of the parser: a captured module keeps its public attributes.
    assert attributes.checked_getattr(NS, "mod") is sys
    assert attributes.checked_getattr(NS, "missing", 7, namespaces=(NS,)) == 7
    with pytest.raises(AttributeError):
        attributes.checked_getattr(NS, "missing", namespaces=(NS,))


def test_checked_hasattr() -> None:
    assert attributes.checked_hasattr(NS, "public", namespaces=(NS,))
    assert not attributes.checked_hasattr(NS, "missing", namespaces=(NS,))
    with pytest.raises(attributes.ForbiddenAttributeError):
        attributes.checked_hasattr((), "__class__")


def test_the_builtins_getattr_and_hasattr_are_the_checked_ones() -> None:
    assert EVAL_BUILTINS["getattr"]((1, 2), "count")(1) == 1
    with pytest.raises(attributes.ForbiddenAttributeError):
        EVAL_BUILTINS["getattr"]((), "__class__")
    with pytest.raises(attributes.ForbiddenAttributeError):
        EVAL_BUILTINS["hasattr"]((), "__class__")


def test_route_attribute_loads_rewrites_reads_only() -> None:
    tree = attributes.route_attribute_loads(ast.parse("a.b.c = x.y"))
    text = ast.unparse(tree)
    assert text == "__tvms_getattr__(a, 'b').c = __tvms_getattr__(x, 'y')"


def test_first_refused_finds_the_attribute() -> None:
    found = attributes.first_refused(ast.parse("f(x=().__class__)"))
    assert found is not None and found[0].attr == "__class__"
    assert attributes.first_refused(ast.parse("a.b.c")) is None


@pytest.mark.parametrize(
    ("text", "may"),
    [
        ("A[i] = B[i] + T.float32(1)", False),
        ("x.shape[0] + y.dtype.bits", False),
        ("f().__class__", True),
        ("g.gi_frame", True),
        ("x = 1  # a __dunder__ only in a comment", True),  # a superset test: still walks
    ],
)
def test_text_may_refuse_is_a_superset_of_the_refused_attributes(text: str, may: bool) -> None:
    assert attributes.text_may_refuse(text) is may
    assert Source.from_text(text, unique_filename()).may_refuse_attributes is may
    refused = attributes.first_refused_node(Source.from_text(text, unique_filename()).tree)
    assert refused is None or may  # no refused attribute where the text test says none


def test_introspection_names_are_still_refused_before_anything_runs() -> None:
    calls: list[int] = []
    err = error_of("(f(), g.f_globals)", {"f": lambda: calls.append(1), "g": 1})
    assert "'f_globals'" in err.message and calls == []


# -------------------------------------------------------------- in the evaluator


def test_a_dunder_is_refused_before_anything_runs() -> None:
    calls: list[int] = []
    err = error_of("f().__class__", {"f": lambda: calls.append(1)})
    assert "'__class__'" in err.message
    assert calls == []  # checked on the tree, before evaluation
    assert err.span is not None and (err.span.col, err.span.end_col) == (1, 14)


def test_the_first_refused_attribute_in_the_source_is_reported() -> None:
    err = error_of("x.__class__.__base__", {"x": 1})
    assert "'__class__'" in err.message


def test_refusals_inside_lambdas_and_comprehensions() -> None:
    assert "__class__" in error_of("(lambda: x.__class__)()", {"x": 1}).message
    assert "__class__" in error_of("[v.__class__ for v in (1,)]").message


def test_the_namespace_rule_applies_to_extra_names_modules() -> None:
    parser = parser_for("NS.mod\n", extra_names={"NS": NS})
    with parser.var_table.frame(), pytest.raises(DiagnosticError, match="the module 'sys'"):
        parser.eval_expr(first_expr(parser))
    parser = parser_for("(lambda: getattr(NS, '_private'))()\n", extra_names={"NS": NS})
    with parser.var_table.frame(), pytest.raises(DiagnosticError, match="private name"):
        parser.eval_expr(first_expr(parser))
    parser = parser_for("NS.public + 1\n", extra_names={"NS": NS})
    with parser.var_table.frame():
        assert parser.eval_expr(first_expr(parser)) == 2


def test_ordinary_attribute_reads_still_work() -> None:
    assert evaluate("x.real + (lambda: x.imag)()", {"x": 3 + 4j}) == 7
    assert evaluate("getattr(x, 'real')", {"x": 2.5}) == 2.5


def test_assigning_an_attribute_of_a_module_is_refused() -> None:
    parser = parser_for("NS.public = rhs\n", extra_names={"NS": NS})
    stmt = parser.source.tree.body[0]
    assert isinstance(stmt, doc.Assign)
    with parser.var_table.frame(), pytest.raises(DiagnosticError, match="cannot assign"):
        eval_assign(parser, stmt.targets[0], 5)
    assert NS.public == 1


def test_assigning_a_dunder_attribute_is_refused() -> None:
    class Box:
        pass

    parser = parser_for("b.__class__ = rhs\n")
    stmt = parser.source.tree.body[0]
    assert isinstance(stmt, doc.Assign)
    with parser.var_table.frame(), pytest.raises(DiagnosticError, match="__class__"):
        parser.var_table.add("b", Box())
        eval_assign(parser, stmt.targets[0], int)


# ------------------------------------------------------------- deep expressions


def test_a_deep_left_chain_is_converted_and_evaluated() -> None:
    assert evaluate(" + ".join(["1"] * 20000)) == 20000
    assert evaluate("-" * 4000 + "5") == 5
    assert evaluate("not " * 3001 + "x", {"x": True}) is False


def test_doc_conversion_of_a_deep_chain_keeps_positions() -> None:
    source = Source.from_text("x = " + " - ".join(["a"] * 9000) + "\n", unique_filename())
    stmt = source.tree.body[0]
    assert isinstance(stmt, doc.Assign)
    node = stmt.value
    assert isinstance(node, doc.BinOp) and isinstance(node.op, doc.Sub)
    assert (node.right.col, node.op.col) == (5 + 4 * 8999, 5 + 4 * 8999 - 2)


def test_a_too_deep_expression_is_located_at_its_line() -> None:
    text = "ok = 1\nx = " + " + ".join(["a"] * 40000) + "\n"
    with pytest.raises(DiagnosticError, match="nested too deeply") as info:
        Source.from_text(text, unique_filename())
    assert info.value.span is not None and info.value.span.line == 2


def test_null_bytes_are_located() -> None:
    with pytest.raises(DiagnosticError, match="null") as info:
        Source.from_text("x = 1\ny = 2\x00\n", unique_filename())
    span = info.value.span
    assert span is not None and (span.line, span.col) == (2, 6)
