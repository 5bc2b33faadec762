"""Tests of the unroll_loop pass."""

from __future__ import annotations

from typing import Any

import pytest

from irbuilder.ir import (
    Allocate,
    Buffer,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    FloatImm,
    For,
    ForKind,
    IntImm,
    LetStmt,
    Mul,
    PrimFunc,
    SeqStmt,
    Stmt,
    Var,
    as_dtype,
    make_data_var,
    post_order_visit,
    structural_equal,
)
from lowering.pass_infra import FunctionPass, PassContext
from lowering.transforms.simplify import is_no_op, simplify_stmt
from lowering.transforms.unroll import copy_with_fresh_vars, unroll_loop

I32 = as_dtype("int32")
F32 = as_dtype("float32")


def i32(v: int) -> IntImm:
    return IntImm(I32, v)


def flat(name: str, n: int = 64) -> Buffer:
    return Buffer(name, make_data_var(name, F32), (i32(n),), F32)


def definitions(stmt: Stmt) -> list[Any]:
    """Every Var/Buffer object defined in ``stmt`` (loop/let/allocate vars, declared buffers)."""
    found: list[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, For):
            found.append(node.loop_var)
        elif isinstance(node, LetStmt):
            found.append(node.var)
        elif isinstance(node, Allocate):
            found.append(node.buffer_var)
        elif isinstance(node, DeclBuffer):
            found.append(node.buffer)

    post_order_visit(stmt, visit)
    return found


def _nodes(stmt: Stmt) -> list[Any]:
    out: list[Any] = []
    post_order_visit(stmt, out.append)
    return out


def assert_defined_once(stmt: Stmt) -> None:
    defs = definitions(stmt)
    assert len({id(d) for d in defs}) == len(defs), "a Var or Buffer is defined twice"


def run(body: Stmt, params: tuple[Var, ...] = ()) -> Stmt:
    return unroll_loop(PrimFunc(params, body)).body


def test_pass_object() -> None:
    assert isinstance(unroll_loop, FunctionPass) and unroll_loop.name == "unroll_loop"


def test_constant_extent_becomes_copies() -> None:
    A = flat("A")
    i = Var("i")
    loop = For(i, i32(2), i32(3), ForKind.UNROLLED, BufferStore(A, FloatImm(F32, 1.0), (i * 2,)))
    out = run(loop, (A.data,))
    # the substituted copies are left for `simplify` to fold
    expected = SeqStmt(
        tuple(BufferStore(A, FloatImm(F32, 1.0), (Mul(i32(k), i32(2)),)) for k in (2, 3, 4))
    )
    assert structural_equal(out, expected)
    folded = SeqStmt(tuple(BufferStore(A, FloatImm(F32, 1.0), (i32(k),)) for k in (4, 6, 8)))
    assert structural_equal(simplify_stmt(out), folded)


def test_copies_get_fresh_definitions() -> None:
    A = flat("A")
    B_data = make_data_var("B", F32)
    B = Buffer("B", B_data, (i32(4),), F32)
    i, j, x = Var("i"), Var("j"), Var("x")
    inner = For(j, i32(0), i32(4), ForKind.SERIAL, BufferStore(B, BufferLoad(A, (x + j,)), (j,)))
    body = LetStmt(
        x,
        i * 4,
        Allocate(
            B_data,
            F32,
            i32(4),
            IntImm(as_dtype("bool"), 1),
            DeclBuffer(B, SeqStmt((inner, BufferStore(A, BufferLoad(B, (i32(0),)), (x,))))),
        ),
    )
    out = run(For(i, i32(0), i32(4), ForKind.UNROLLED, body), (A.data,))
    assert isinstance(out, SeqStmt) and len(out.seq) == 4
    assert_defined_once(out)
    defs = definitions(out)
    assert len(defs) == 4 * 4  # let, allocate, decl_buffer, inner loop per copy
    for original in (j, x, B_data, B):
        assert all(d is not original for d in defs)
    # each copy's loads/stores use that copy's own declared buffer
    for copy in out.seq:
        declared = [d for d in definitions(copy) if isinstance(d, Buffer)]
        used = [
            n.buffer
            for n in _nodes(copy)
            if isinstance(n, (BufferStore, BufferLoad)) and n.buffer.name == "B"
        ]
        assert used and all(u is declared[0] for u in used)
        assert declared[0].data is not B_data


def test_zero_extent_is_a_no_op() -> None:
    A = flat("A")
    i = Var("i")
    out = run(For(i, i32(0), i32(0), ForKind.UNROLLED, BufferStore(A, FloatImm(F32, 1.0), (i,))))
    assert is_no_op(out)


def test_symbolic_or_large_extent_stays_a_loop_with_pragma() -> None:
    A = flat("A")
    i, n = Var("i"), Var("n")
    store = BufferStore(A, FloatImm(F32, 1.0), (i,))
    out = run(For(i, i32(0), n, ForKind.UNROLLED, store))
    assert isinstance(out, For) and out.kind is ForKind.SERIAL
    assert out.annotations["pragma_unroll"] is True
    big = run(For(i, i32(0), i32(65), ForKind.UNROLLED, store))
    assert isinstance(big, For) and big.annotations["pragma_unroll"] is True


def test_max_extent_option() -> None:
    A = flat("A")
    i = Var("i")
    loop = For(i, i32(0), i32(8), ForKind.UNROLLED, BufferStore(A, FloatImm(F32, 1.0), (i,)))
    with PassContext(config={"unroll_loop": {"max_extent": 4}}):
        assert isinstance(run(loop), For)
    with PassContext(config={"unroll_loop": {"max_extent": "x"}}):
        with pytest.raises(TypeError, match="max_extent"):
            run(loop)


def test_nested_unroll_loops() -> None:
    A = flat("A")
    i, j = Var("i"), Var("j")
    inner = For(
        j, i32(0), i32(2), ForKind.UNROLLED, BufferStore(A, FloatImm(F32, 1.0), (i * 2 + j,))
    )
    out = run(For(i, i32(0), i32(2), ForKind.UNROLLED, inner))
    assert isinstance(out, SeqStmt) and len(out.seq) == 4
    folded = simplify_stmt(out)
    assert isinstance(folded, SeqStmt)
    indices = [s.indices[0] for s in folded.seq if isinstance(s, BufferStore)]
    assert [getattr(idx, "value", None) for idx in indices] == [0, 1, 2, 3]


def test_serial_loops_untouched() -> None:
    A = flat("A")
    i = Var("i")
    loop = For(i, i32(0), i32(4), ForKind.SERIAL, BufferStore(A, FloatImm(F32, 1.0), (i,)))
    func = PrimFunc((A.data,), loop)
    assert unroll_loop(func) is func


def test_copy_with_fresh_vars_substitutes() -> None:
    A = flat("A")
    i, k = Var("i"), Var("k")
    store = BufferStore(A, FloatImm(F32, 1.0), (i + 1,))
    out = copy_with_fresh_vars(store, {i: k})
    assert isinstance(out, BufferStore) and structural_equal(out.indices[0], k + 1)
