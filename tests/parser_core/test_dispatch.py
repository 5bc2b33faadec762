"""Dispatch registry: registration, duplicates, the default token and catch-alls."""

from __future__ import annotations

from typing import Any

import pytest

from tvmscript.parser.core import DispatchTable, dispatch, doc


def test_register_returns_the_function_unchanged() -> None:
    table = DispatchTable()

    def visit_for(parser: Any, node: doc.For) -> str:
        return "for"

    assert table.register(token="tir", type_name="For")(visit_for) is visit_for
    assert table.get("tir", "For") is visit_for


def test_duplicate_registration_is_rejected() -> None:
    table = DispatchTable()
    table.register("tir", "For")(lambda p, n: None)
    with pytest.raises(ValueError, match=r"already registered"):
        table.register("tir", "For")(lambda p, n: None)
    # Another token, or the same token for another node, is fine.
    table.register("relax", "For")(lambda p, n: None)
    table.register("tir", "While")(lambda p, n: None)


def test_unknown_node_names_are_rejected_at_registration() -> None:
    table = DispatchTable()
    with pytest.raises(ValueError, match="not a doc node class name"):
        table.register("tir", "for")


def test_default_token_fallback() -> None:
    table = DispatchTable()

    def shared(parser: Any, node: Any) -> str:
        return "shared"

    def own(parser: Any, node: Any) -> str:
        return "own"

    table.register(dispatch.DEFAULT_TOKEN, "Expr")(shared)
    table.register("tir", "Pass")(own)
    assert table.get("tir", "Expr") is shared
    assert table.get("tir", "Pass") is own
    assert table.get("tir", "While") is None
    assert table.get("tir", "Expr", fallback=False) is None


def test_catch_all_is_separate_from_exact_lookups() -> None:
    table = DispatchTable()

    def catch_all(parser: Any, node: Any) -> None:
        return None

    table.register("tir", dispatch.ANY_NODE)(catch_all)
    assert table.get("tir", "While") is None
    assert table.get_fallback("tir") is catch_all
    assert table.get_fallback("relax") is None


def test_unregister() -> None:
    table = DispatchTable()
    table.register("tir", "Pass")(lambda p, n: None)
    table.unregister("tir", "Pass")
    assert table.get("tir", "Pass") is None


def test_module_level_functions_use_the_global_table() -> None:
    token = "test-parser-core-global"

    @dispatch.register(token=token, type_name="Pass")
    def visit_pass(parser: Any, node: doc.Pass) -> str:
        return "pass"

    try:
        assert dispatch.get(token, "Pass") is visit_pass
        assert dispatch.TABLE.get(token, "Pass") is visit_pass
    finally:
        dispatch.unregister(token, "Pass")


class Meters:
    def __init__(self, value: float) -> None:
        self.value = value


def test_operator_table_searches_the_mro_and_operand_index() -> None:
    table = DispatchTable()

    class Feet(Meters):
        pass

    @table.register_op(Meters, "Add", 0)
    def add_left(lhs: Meters, rhs: Any) -> str:
        return "left"

    @table.register_op(Meters, "Add", 1)
    def add_right(lhs: Any, rhs: Meters) -> str:
        return "right"

    assert table.get_op(Feet, "Add", 0) is add_left
    assert table.get_op(Meters, "Add", 1) is add_right
    assert table.get_op(int, "Add", 0) is None
    with pytest.raises(ValueError, match="already registered"):
        table.register_op(Meters, "Add", 0)(add_left)
    with pytest.raises(ValueError, match="unknown operator"):
        table.register_op(Meters, "Plus", 0)
