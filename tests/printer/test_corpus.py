"""Every corpus function prints as valid, deterministic Python; every node kind is covered."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from irbuilder import ir
from irbuilder.ir import post_order_visit
from tvmscript.printer import script

from .corpus import CORPUS, MODULES


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_prints_valid_deterministic_python(name: str) -> None:
    func = CORPUS[name]()
    text = script(func)
    tree = ast.parse(text)
    defs = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert [d.name for d in defs] == [name]
    decorator = defs[0].decorator_list[0]
    assert ast.unparse(decorator) == "T.prim_func"
    # Deterministic: printing again, or printing a fresh copy, gives the same text.
    assert script(func) == text
    assert script(CORPUS[name]()) == text


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_print_valid_python(name: str) -> None:
    text = script(MODULES[name]())
    tree = ast.parse(text)
    (cls,) = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    assert ast.unparse(cls.decorator_list[0]) == "I.ir_module"
    assert cls.name == "Module"


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 50


def _node_classes(base: type) -> set[type]:
    found: set[type] = set()
    stack: list[type] = [base]
    while stack:
        cls = stack.pop()
        subclasses: list[type] = cls.__subclasses__()
        for sub in subclasses:
            if sub.__module__.startswith("irbuilder.ir"):
                found.add(sub)
                stack.append(sub)
    return found


_ABSTRACT = {ir.BinaryOp, ir.CmpOp}


def test_corpus_covers_every_node_kind() -> None:
    seen: set[type] = set()

    def visit(node: Any) -> None:
        seen.add(type(node))

    for build in CORPUS.values():
        func = build()
        post_order_visit(func.body, visit)
        for buffer in func.buffer_map.values():
            for dim in buffer.shape:
                post_order_visit(dim, visit)
    # Compare by name: dataclass(slots=True) leaves the pre-slots class among __subclasses__.
    wanted = {c.__name__ for c in _node_classes(ir.PrimExpr) | _node_classes(ir.Stmt)}
    wanted -= {c.__name__ for c in _ABSTRACT}
    missing = sorted(wanted - {c.__name__ for c in seen})
    assert missing == []


def test_corpus_covers_every_loop_kind_and_scalar_dtype() -> None:
    kinds: set[ir.ForKind] = set()
    dtypes: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, ir.For):
            kinds.add(node.kind)
        if isinstance(node, (ir.IntImm, ir.FloatImm)):
            dtypes.add(str(node.dtype))

    for build in CORPUS.values():
        post_order_visit(build().body, visit)
    assert kinds == set(ir.ForKind)
    for dtype in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                  "float16", "float32", "float64", "bool"]:  # fmt: skip
        assert dtype in dtypes
