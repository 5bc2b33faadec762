"""Variable table: frames, shadowing, redefinition rules and isolation."""

from __future__ import annotations

import pytest

from tvmscript.parser.core import FrameKind, VarTable, VarTableError


def test_nested_frame_shadows_and_restores() -> None:
    table = VarTable()
    with table.frame(FrameKind.FUNCTION):
        table.add("x", 1)
        with table.frame(FrameKind.LOOP):
            table.add("x", 2)
            table.add("i", "loop var")
            assert table.get() == {"x": 2, "i": "loop var"}
        assert table.get() == {"x": 1}
    assert table.get() == {}


def test_redefinition_in_the_same_frame_is_an_error() -> None:
    table = VarTable()
    with table.frame(FrameKind.LOOP):
        table.add("i", "v0")
        with pytest.raises(VarTableError, match="'i' is already defined in this loop scope"):
            table.add("i", "v1")
        assert table.lookup("i") == "v0"


def test_redefinition_allowed_per_binding_or_per_frame() -> None:
    table = VarTable()
    with table.frame(FrameKind.FUNCTION):
        table.add("x", 1)
        table.add("x", 2, allow_shadowing=True)
        assert table.lookup("x") == 2
        with table.frame(FrameKind.MACRO, allow_shadowing=True):
            table.add("y", 1)
            table.add("y", 2)
            assert table.lookup("y") == 2
        # Replacing in place keeps one binding per frame: exiting removes it entirely.
        assert "y" not in table
        assert table.lookup("x") == 2


def test_frame_is_popped_when_the_body_raises() -> None:
    table = VarTable()
    with table.frame(), pytest.raises(RuntimeError):
        with table.frame():
            table.add("leak", 1)
            raise RuntimeError
    assert "leak" not in table and table.depth == 0


def test_isolated_frame_hides_outer_bindings() -> None:
    table = VarTable()
    with table.frame(FrameKind.FUNCTION):
        table.add("outer", 1)
        with table.frame(FrameKind.MACRO, isolated=True):
            table.add("inner", 2)
            assert table.get() == {"inner": 2}
            with pytest.raises(KeyError):
                table.lookup("outer")
            with table.frame():
                assert table.get() == {"inner": 2}
        assert table.get() == {"outer": 1}


def test_get_returns_a_snapshot() -> None:
    table = VarTable()
    with table.frame():
        table.add("a", 1)
        snapshot = table.get()
        snapshot["a"] = 99
        assert table.lookup("a") == 1


def test_add_without_a_frame_is_an_error() -> None:
    with pytest.raises(VarTableError, match="no scope is open"):
        VarTable().add("x", 1)


def test_exist_and_frame_queries() -> None:
    table = VarTable()
    marker = object()
    with table.frame(FrameKind.BLOCK):
        table.add("m", marker)
        assert table.exist(marker) and not table.exist(object())
        assert table.current_kind is FrameKind.BLOCK
        with table.frame(FrameKind.WITH):
            assert not table.defined_in_current_frame("m")
        assert table.defined_in_current_frame("m")
    assert table.current_kind is None
