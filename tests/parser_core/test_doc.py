"""The doc mirror: stable fields across versions, positions, and the round trip to ast."""

from __future__ import annotations

import ast
import copy
import dataclasses
import pickle
import sys
import textwrap

import pytest

from tvmscript.parser.core import Source, doc, from_ast, to_ast

from .helpers import unique_filename

SAMPLE = textwrap.dedent(
    """\
    @decorate(level=2)
    def f(a, /, b: int = 1, *rest, c, d=2, **kw) -> None:
        x: int = a if b else -c
        y, *z = [i for i in range(3) if i] or {k: v for k, v in kw.items()}
        with open_(a) as (p, q), other_():
            del x
        try:
            pass
        except (E1, E2) as err:
            raise Error() from err
        else:
            x += 1
        finally:
            assert a, "msg"
        while a < b <= c:
            break
        s = f"{a!r:>{b}}" + 'plain' + str(b"bytes") + str(...) + str(1j)
        return lambda u, *, v=1: u @ v
    """
)


def parse(text: str) -> Source:
    return Source.from_text(text, unique_filename("doc"))


def test_every_node_is_located() -> None:
    for node in doc.walk(parse(SAMPLE).tree):
        assert node.line > 0 and node.col > 0, node
        assert (node.end_line, node.end_col) >= (node.line, node.col), node


def test_fields_do_not_depend_on_the_python_version() -> None:
    func = parse(SAMPLE).tree.body[0]
    assert isinstance(func, doc.FunctionDef)
    assert func.type_params == ()  # exists even where ast has no such field (3.10, 3.11)
    assert not hasattr(func, "type_comment")
    name = next(n for n in doc.walk(func) if isinstance(n, doc.Name))
    assert not hasattr(name, "ctx")
    constant = next(n for n in doc.walk(func) if isinstance(n, doc.Constant))
    assert not hasattr(constant, "kind")


def test_nodes_are_immutable_and_compared_by_identity() -> None:
    a, b = doc.Name(id="x"), doc.Name(id="x")
    assert a != b and len({a, b}) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.id = "y"  # type: ignore[misc]


def test_nodes_take_keywords_only_with_their_defaults_and_copy_whole() -> None:
    call = doc.Call(func=doc.Name(id="f", line=2, col=5))
    assert (call.args, call.keywords, call.line) == ((), (), 0)
    assert doc.node_fields(doc.Call) == ("func", "args", "keywords")
    assert repr(doc.Name(id="x")) == "Name(line=0, col=0, end_line=0, end_col=0, id='x')"
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'id'"):
        doc.Name()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'ident'"):
        doc.Name(id="x", ident="y")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional"):
        doc.Name("x")  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del call.func
    for copied in (copy.copy(call), copy.deepcopy(call), pickle.loads(pickle.dumps(call))):
        assert copied is not call and type(copied) is doc.Call
        assert repr(copied) == repr(call)


def test_class_names_cover_dispatch_keys() -> None:
    for name in ("For", "With", "Assign", "AugAssign", "If", "Expr", "Return", "Match"):
        assert name in doc.NODE_CLASSES
    assert doc.SYMBOLS["FloorDiv"] == "//" and doc.SYMBOLS["NotIn"] == "not in"


def test_operators_are_located_at_their_token() -> None:
    source = parse("r = (a) + b * -c < (d) not in e and f\nr //= 2\n")
    found = {
        type(n).__name__: source.segment(n)
        for n in doc.walk(source.tree)
        if isinstance(n, (doc.operator, doc.unaryop, doc.cmpop, doc.boolop))
    }
    assert found == {
        "Add": "+", "Mult": "*", "USub": "-", "Lt": "<", "NotIn": "not in", "And": "and",
        "FloorDiv": "//=",
    }  # fmt: skip


def test_unlocated_ast_nodes_cover_their_children() -> None:
    source = parse("x = [i for i in range(3) if i]\nwith a as b: pass\n")
    comp = next(n for n in doc.walk(source.tree) if isinstance(n, doc.comprehension))
    assert source.segment(comp) == "i in range(3) if i"
    item = next(n for n in doc.walk(source.tree) if isinstance(n, doc.withitem))
    assert source.segment(item) == "a as b"


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 695 syntax")
def test_type_params_are_mirrored_for_rejection() -> None:
    func = parse("def f[T](x: T) -> T: return x\n").tree.body[0]
    assert isinstance(func, doc.FunctionDef)
    (param,) = func.type_params
    assert isinstance(param, doc.TypeVar) and param.name == "T"


def test_match_is_mirrored_with_its_subject_only() -> None:
    match = parse("match x:\n    case 1:\n        pass\n").tree.body[0]
    assert isinstance(match, doc.Match) and isinstance(match.subject, doc.Name)
    assert (match.end_line, match.end_col) == (3, 13)


def test_round_trip_to_ast_is_exact() -> None:
    source = parse(SAMPLE)
    original = ast.parse(SAMPLE)
    back = to_ast(source.tree, byte_col=source.byte_col)
    assert ast.dump(back, include_attributes=True) == ast.dump(
        original, include_attributes=True
    )
    compile(back, "<round-trip>", "exec")


def test_to_ast_store_context() -> None:
    target = parse("(a, [b, *c], d.e, f[0]) = v\n").tree.body[0]
    assert isinstance(target, doc.Assign)
    tree = to_ast(target.targets[0], store=True)
    contexts = {
        ast.unparse(n): type(n.ctx).__name__
        for n in ast.walk(tree)
        if hasattr(n, "ctx")
    }
    assert contexts["a"] == contexts["*c"] == contexts["d.e"] == contexts["f[0]"] == "Store"
    assert contexts["d"] == contexts["f"] == "Load"


def test_unknown_ast_nodes_are_reported() -> None:
    from tvmscript.parser.core.doc_ast import UnknownNodeError

    class FutureSyntax(ast.expr):
        _fields = ()

    node = ast.Expr(value=FutureSyntax(lineno=1, col_offset=0, end_lineno=1, end_col_offset=3))
    ast.copy_location(node, node.value)
    with pytest.raises(UnknownNodeError, match="unsupported syntax: FutureSyntax") as info:
        from_ast(node, ["abc"], first_line=1)
    assert info.value.position == (1, 1, 1, 4)


def test_referenced_and_target_names() -> None:
    source = parse("a, (b, *c), d.e, f[g] = h(i)\n")
    stmt = source.tree.body[0]
    assert isinstance(stmt, doc.Assign)
    assert doc.referenced_names(stmt) == {"a", "b", "c", "d", "f", "g", "h", "i"}
    assert [n.id for n in doc.target_names(stmt.targets[0])] == ["a", "b", "c"]


def test_source_names_are_the_referenced_names() -> None:
    source = parse(SAMPLE)
    assert source.names == doc.referenced_names(source.tree)
    assert {"decorate", "open_", "other_", "E1", "E2", "Error", "str", "u", "v"} <= source.names


def test_deep_trees_convert_like_shallow_ones() -> None:
    # The converter keeps its own stack, so depth costs no recursion; positions stay exact.
    depth = 300  # a left-leaning BinOp chain, and a chain of unary minus signs
    text = "x = -a" + " + b" * depth + "\ny = " + "-" * depth + "a\n"
    source = parse(text)
    back = to_ast(source.tree, byte_col=source.byte_col)
    assert ast.dump(back, include_attributes=True) == ast.dump(
        ast.parse(text), include_attributes=True
    )
    assert source.names == {"x", "y", "a", "b"}
