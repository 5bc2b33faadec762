"""Unique, valid, readable names."""

from __future__ import annotations

import pytest

from irbuilder.ir import Buffer, BufferStore, Cast, LetStmt, Var, as_dtype, const, seq
from tvmscript.printer import NameTable, script
from tvmscript.printer.names import sanitize

from .corpus import CORPUS, buf, func, loop


def test_clashing_loop_vars_get_suffixes() -> None:
    text = script(CORPUS["name_clash"]())
    assert "for i, i_1 in T.grid(4, 4):" in text
    assert "A[i, i_1] = T.float32(0)" in text


def test_keywords_invalid_identifiers_and_T_are_renamed() -> None:
    text = script(CORPUS["name_keywords"]())
    assert 'def name_keywords(T_1: T.int32, lambda_1: T.Buffer((4,), "float32")):' in text
    assert "for for_1 in range(4):" in text
    assert "x_y: T.int32 = for_1 + T_1" in text


def test_buffer_and_var_share_one_namespace() -> None:
    text = script(CORPUS["name_buffer_var_clash"]())
    assert 'def name_buffer_var_clash(A: T.int32, A_1: T.Buffer((4,), "float32")):' in text
    assert 'A_1[0] = T.Cast("float32", A)' in text


def test_suffix_skips_names_already_taken_literally() -> None:
    A = buf("A", (3,), "int32")
    i, i_1, i2 = Var("i_1"), Var("i"), Var("i")
    body = seq(
        [
            LetStmt(
                i,
                const(1),
                LetStmt(
                    i_1, const(2), LetStmt(i2, const(3), BufferStore(A, i + i_1 + i2, (const(0),)))
                ),
            )
        ]
    )
    text = script(func("f", [A], body))
    assert "i_1: T.int32 = 1\n    i: T.int32 = 2\n    i_2: T.int32 = 3\n" in text


def test_names_reserved_for_range_and_I() -> None:
    A = buf("A", (4,))
    r, m = Var("range"), Var("I")
    body = loop(r, 4, loop(m, 4, BufferStore(A, Cast(as_dtype("float32"), r + m), (r,))))
    text = script(func("f", [A], body))
    assert "for range_1, I_1 in T.grid(4, 4):" in text


def test_data_var_of_param_prints_as_attribute() -> None:
    text = script(CORPUS["attr_stmt"]())
    assert 'with T.attr(A.data, "storage_alignment", 128):' in text


def test_name_table_is_per_object() -> None:
    table = NameTable()
    first, second = object(), object()
    assert table.name(first, "x") == "x"
    assert table.name(second, "x") == "x_1"
    assert table.name(first, "ignored") == "x"
    assert table.get(second) == "x_1"
    assert table.get(object()) is None
    assert table.name(object(), "class") == "class_1"
    assert table.name(object(), "T") == "T_1"


@pytest.mark.parametrize(
    ("hint", "name"),
    [
        ("A.shared", "A_shared"),
        ("1x", "v_1x"),
        ("", "v"),
        ("ok_name", "ok_name"),
        ("a-b c", "a_b_c"),
    ],
)
def test_sanitize(hint: str, name: str) -> None:
    assert sanitize(hint) == name


def test_buffer_name_with_dots_is_sanitized_everywhere() -> None:
    A = Buffer("A.local", buf("x", (1,)).data, (const(4),), as_dtype("float32"))
    text = script(func("f", [A], BufferStore(A, A[1], (const(0),))))
    assert 'A_local: T.Buffer((4,), "float32")' in text
    assert "A_local[0] = A_local[1]" in text
