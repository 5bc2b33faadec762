"""Source: exact file positions for live objects and text, and the ``for *i in`` form."""

from __future__ import annotations

import inspect
import linecache
import re
import sys
import textwrap
from typing import Any

import pytest

from tvmscript.diagnostics import DiagnosticError
from tvmscript.parser.core import Parser, Source, doc, eval_assign

from .helpers import unique_filename


def _decorator(*_args: Any, **_kwargs: Any) -> Any:
    return lambda fn: fn


def _make_nested() -> Any:
    class Holder:
        @_decorator(
            "first",
            capture=[1,
                     2],
        )
        def kernel(a, b):  # type: ignore[no-untyped-def]
            total = "héllo wörld" and a + b  # non-ASCII text before the expression
            return (total
                    * 2)

    return Holder.kernel


def _file_line(pattern: str) -> tuple[int, str]:
    """Line number and text of the single line of this file matching ``pattern``."""
    lines = inspect.getsourcelines(sys.modules[__name__])[0]
    found = [(n + 1, t) for n, t in enumerate(lines) if re.search(pattern, t)]
    assert len(found) == 1, found
    return found[0]


def test_nested_function_positions_are_absolute_in_the_file() -> None:
    source = Source.from_object(_make_nested())
    assert source.filename == __file__
    decorator_line, _ = _file_line(r"^        @_decorator\($")
    assert source.first_line == decorator_line

    func = source.tree.body[0]
    assert isinstance(func, doc.FunctionDef) and func.name == "kernel"
    assert (func.line, func.col) == (decorator_line + 5, 9)  # ``def`` after the decorator

    line, text = _file_line(r"total = .* and a \+ b")
    binop = next(n for n in doc.walk(func) if isinstance(n, doc.BinOp) and n.line == line)
    # Columns are characters: the two non-ASCII letters before it do not shift it.
    assert (binop.col, binop.end_col) == (text.index("a + b") + 1, text.index("a + b") + 6)
    assert source.segment(binop) == "a + b"


def test_every_node_maps_to_its_own_text_in_the_real_file() -> None:
    source = Source.from_object(_make_nested())
    checked = 0
    for node in doc.walk(source.tree):
        if node.line != node.end_line:
            continue
        file_text = linecache.getline(__file__, node.line)[node.col - 1 : node.end_col - 1]
        if isinstance(node, doc.Name):
            assert file_text == node.id
        elif isinstance(node, doc.Constant) and isinstance(node.value, (int, str)):
            assert file_text in (repr(node.value), f'"{node.value}"')
        elif isinstance(node, (doc.operator, doc.cmpop, doc.unaryop, doc.boolop)):
            assert file_text == doc.SYMBOLS[type(node).__name__]
        else:
            continue
        checked += 1
    assert checked >= 12


def test_multi_line_decorator_arguments_keep_their_lines() -> None:
    source = Source.from_object(_make_nested())
    func = source.tree.body[0]
    assert isinstance(func, doc.FunctionDef)
    (call,) = func.decorator_list
    assert isinstance(call, doc.Call)
    (keyword,) = call.keywords
    assert isinstance(keyword.value, doc.List)
    first, second = keyword.value.elts
    line_of_2, text_of_2 = _file_line(r"^                     2\],$")
    assert (second.line, second.col) == (line_of_2, text_of_2.index("2") + 1)
    assert first.line == line_of_2 - 1


def test_multi_line_expression_span() -> None:
    source = Source.from_object(_make_nested())
    ret = next(n for n in doc.walk(source.tree) if isinstance(n, doc.Return))
    assert ret.value is not None
    # Parentheses are not part of the expression, as in ``ast``.
    assert source.segment(ret.value) == "total\n                    * 2"
    assert ret.value.end_line == ret.value.line + 1


def test_lambdas_and_non_definitions_are_rejected() -> None:
    with pytest.raises(TypeError, match="lambda"):
        Source.from_object(lambda: 0)
    with pytest.raises(TypeError, match="function or a class"):
        Source.from_object(42)


def test_classes_and_methods() -> None:
    class Module:
        def method(self) -> int:
            return 1

    source = Source.from_object(Module)
    assert isinstance(source.tree.body[0], doc.ClassDef)
    assert Source.from_object(Module().method).tree.body[0].line == source.first_line + 1


def test_from_text_registers_with_linecache() -> None:
    name = unique_filename("text")
    source = Source.from_text("x = 1\ny = x + 2\n", name)
    assert linecache.getline(name, 2) == "y = x + 2\n"
    assert source.first_line == 1 and len(source.tree.body) == 2


def test_indented_text_keeps_its_columns() -> None:
    text = "\n    def f(a):\n        return a + 1  # indented as in a test string\n"
    source = Source.from_text(text, unique_filename())
    ret = next(n for n in doc.walk(source.tree) if isinstance(n, doc.Return))
    assert (ret.line, ret.col) == (3, 9)
    assert source.segment(ret) == "return a + 1"


def test_syntax_error_is_a_located_diagnostic() -> None:
    name = unique_filename("bad")
    with pytest.raises(DiagnosticError) as info:
        Source.from_text("def f(:\n    pass\n", name)
    assert info.value.span is not None
    assert (info.value.span.line, info.value.span.col) == (1, 7)
    assert str(info.value).startswith("error: invalid syntax\n --> ")


def test_syntax_error_in_indented_text_reports_the_real_line() -> None:
    with pytest.raises(DiagnosticError) as info:
        Source.from_text("    def f():\n        return )\n", unique_filename())
    assert info.value.span is not None and info.value.span.line == 2


# ------------------------------------------------------------------ ``for *i in``

STAR_LOOP = textwrap.dedent(
    """\
    def f(A):
        for *i in grid(A): B[(*i,)] = 1
        x = [j for *j in pairs]
    """
)


def test_python_itself_refuses_to_compile_the_star_loop() -> None:
    # The premise of the normalisation: ``ast.parse`` accepts this, ``compile`` does not.
    with pytest.raises(SyntaxError, match="starred assignment target"):
        compile(STAR_LOOP, "<star>", "exec")


def test_star_loop_target_becomes_a_one_tuple_with_unchanged_offsets() -> None:
    source = Source.from_text(STAR_LOOP, unique_filename("star"))
    loop = next(n for n in doc.walk(source.tree) if isinstance(n, doc.For))
    line = STAR_LOOP.splitlines()[1]
    assert isinstance(loop.target, doc.Tuple)
    (starred,) = loop.target.elts
    assert isinstance(starred, doc.Starred)
    # The tuple spans exactly the user's ``*i``: nothing was inserted into the text.
    assert source.segment(loop.target) == source.segment(starred) == "*i"
    assert loop.target.col == line.index("*i") + 1
    # Everything after the target on the same line keeps its column.
    call = loop.iter
    assert source.segment(call) == "grid(A)" and call.col == line.index("grid") + 1
    store = loop.body[0]
    assert source.segment(store) == "B[(*i,)] = 1" and store.col == line.index("B[") + 1


def test_star_loop_target_assigns_like_python() -> None:
    source = Source.from_text(STAR_LOOP, unique_filename("star"))
    loop = next(n for n in doc.walk(source.tree) if isinstance(n, doc.For))
    parser = Parser(source)
    assert eval_assign(parser, loop.target, ("v0", "v1")) == {"i": ["v0", "v1"]}


def test_star_target_in_comprehension_is_normalised_too() -> None:
    source = Source.from_text(STAR_LOOP, unique_filename("star"))
    comp = next(n for n in doc.walk(source.tree) if isinstance(n, doc.comprehension))
    assert isinstance(comp.target, doc.Tuple)
    parser = Parser(source, extra_names={"pairs": [(1, 2), (3, 4)]})
    assign = source.tree.body[0]
    assert isinstance(assign, doc.FunctionDef)
    value = assign.body[1]
    assert isinstance(value, doc.Assign)
    assert parser.eval_expr(value.value) == [[1, 2], [3, 4]]


def test_byte_and_char_columns_are_inverse() -> None:
    source = Source.from_text('s = "äöü" + t\n', unique_filename())
    assert source.byte_col(1, 12) == 14  # ``t`` after three 2-byte letters
    assert source.char_col(1, 14) == 12


def _exec_cell(text: str) -> dict[str, Any]:
    """Run ``text`` as a notebook cell or doctest runs it: its lines are in linecache under a
    pseudo file name and its module (``__cell__``) has no file, so inspect cannot find a class."""
    name = unique_filename("cell")
    lines = text.splitlines(keepends=True)
    linecache.cache[name] = (len(text), None, lines, name)
    namespace: dict[str, Any] = {"__name__": "__cell__"}
    exec(compile(text, name, "exec"), namespace)
    return namespace


def test_class_of_a_cell_is_found_through_its_methods() -> None:
    namespace = _exec_cell(
        "def _decorator(c):\n    return c\n\nx = 1\n\n@_decorator\nclass Module:\n"
        "    def method(self):\n        return 1\n\n"
        "    def other(self):\n        return 2\n\ny = 2\n"
    )
    cls = namespace["Module"]
    with pytest.raises(TypeError):
        inspect.getsourcelines(cls)
    source = Source.from_object(cls)
    assert source.first_line == 6 and source.lines[0] == "@_decorator"
    assert source.lines[-1] == "        return 2"
    klass = source.tree.body[0]
    assert isinstance(klass, doc.ClassDef) and [f.name for f in klass.body] == ["method", "other"]


def test_ir_module_class_in_a_cell_parses_and_builds() -> None:
    import numpy as np

    import tvmscript

    namespace = _exec_cell(textwrap.dedent("""\
        from tvmscript import ir as I
        from tvmscript import tir as T

        @I.ir_module
        class Module:
            @T.prim_func
            def inc(A: T.Buffer((2,), "int32")):
                for i in range(2):
                    A[i] = A[i] + 1
        """))
    a = np.array([1, 2], dtype="int32")
    tvmscript.build(namespace["Module"])["inc"](a)
    assert a.tolist() == [2, 3]
