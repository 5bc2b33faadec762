"""declare_buffers: implicit ``T.Buffer(..., data=...)`` views get their DeclBuffer."""

from __future__ import annotations

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import Allocate, DeclBuffer, For, LetStmt, PrimFunc, Stmt
from tvmscript import tir as T


def first(stmt: Stmt, kind: type) -> Stmt:
    """The outermost statement of ``kind`` (following bodies and sequences)."""
    todo = [stmt]
    while todo:
        node = todo.pop(0)
        if isinstance(node, kind):
            return node
        todo.extend(getattr(node, "seq", ()))
        for field in ("body", "then_case", "else_case"):
            child = getattr(node, field, None)
            if isinstance(child, Stmt):
                todo.append(child)
    raise AssertionError(f"no {kind.__name__}")


@T.prim_func
def param_view(A: T.Buffer((16,), "float32")):
    for i in range(4):
        V = T.Buffer((4, 4), "float32", data=A.data)
        V[i, 0] = 1.0


@T.prim_func
def allocation_view(A: T.Buffer((4,), "float32")):
    for i in range(4):
        d = T.allocate([4], "float32", "global")
        V = T.Buffer((4,), "float32", data=d)
        V[i] = A[i]
        A[i] = V[i] + 1.0


@T.prim_func
def let_view(A: T.Buffer((8,), "float32"), n: T.int32):
    for i in range(2):
        m: T.int32 = n + i
        V = T.Buffer((m,), "float32", data=A.data)
        V[m - 1] = 5.0


def test_a_view_of_a_parameter_is_declared_at_the_top() -> None:
    out = lowering.declare_buffers(param_view)
    assert isinstance(out.body, DeclBuffer) and out.body.buffer.name == "V"
    assert out.body.buffer.data is param_view.buffer_map[param_view.params[0]].data


def test_a_view_of_an_allocation_is_declared_inside_it() -> None:
    out = lowering.declare_buffers(allocation_view)
    alloc = first(out.body, Allocate)
    assert isinstance(alloc, Allocate) and isinstance(alloc.body, DeclBuffer)
    assert alloc.body.buffer.data is alloc.buffer_var


def test_a_view_whose_shape_uses_a_let_var_is_declared_inside_the_let() -> None:
    out = lowering.declare_buffers(let_view)
    let = first(out.body, LetStmt)
    assert isinstance(let, LetStmt) and isinstance(let.body, DeclBuffer)
    assert isinstance(first(out.body, For).body, LetStmt)  # not above the let
    lowering.verify_well_formed(out)


def test_nothing_changes_without_implicit_buffers() -> None:
    @T.prim_func
    def plain(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = 1.0

    assert lowering.declare_buffers(plain) is plain


@pytest.mark.parametrize(
    ("func", "args"),
    [(param_view, ()), (allocation_view, ()), (let_view, (3,))],
    ids=["param", "allocation", "let"],
)
def test_views_build_and_match_the_interpreter(func: PrimFunc, args: tuple[int]) -> None:
    n = func.buffer_map[func.params[0]].shape[0].value  # type: ignore[attr-defined]
    got, want = np.arange(n, dtype="float32"), np.arange(n, dtype="float32")
    tvmscript.build(func)(got, *args)
    tvmscript.build(func, target="interp")(want, *args)
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, np.arange(n, dtype="float32"))


@T.prim_func
def ghost(A: T.Buffer((4,), "float32")):
    G = T.Buffer((4,), "float32")
    A[0] = G[0]


def test_a_view_over_memory_defined_nowhere_is_located() -> None:
    with pytest.raises(ValueError) as info:
        tvmscript.build(ghost)
    message = str(info.value)
    assert "buffer 'G' is accessed but not declared" in message
    assert "its data pointer 'G_data' is defined nowhere" in message
    line = ghost.body.span.line  # type: ignore[union-attr]
    assert f"first used at {__file__}:{line}:" in message
