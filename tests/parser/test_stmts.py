"""Each TVMScript statement builds the IR it describes."""

from __future__ import annotations

import pytest

from irbuilder.ir import (
    Allocate,
    And,
    AssertStmt,
    AttrStmt,
    BlockRealize,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    Or,
    Ramp,
    Select,
    SeqStmt,
    While,
)
from tvmscript import tir as T

from . import kernels


def _seq(stmt: object) -> list[object]:
    return list(stmt.seq) if isinstance(stmt, SeqStmt) else [stmt]


def test_loop_kinds() -> None:
    stmts = _seq(kernels.loops.body)
    kinds = [s.kind for s in stmts if isinstance(s, For)]
    assert kinds == [
        ForKind.SERIAL,
        ForKind.PARALLEL,
        ForKind.VECTORIZED,
        ForKind.UNROLLED,
        ForKind.SERIAL,
        ForKind.THREAD_BINDING,
    ]
    unrolled = stmts[3]
    assert isinstance(unrolled, For)
    assert unrolled.min.value == 2 and unrolled.extent.value == 6
    assert stmts[5].thread_binding.thread_tag == "threadIdx.x"


def test_if_elif_else_while_assert_evaluate() -> None:
    stmts = _seq(kernels.control.body)
    loop = stmts[0]
    assert isinstance(loop, For) and isinstance(loop.body, IfThenElse)
    elif_ = loop.body.else_case
    assert isinstance(elif_, IfThenElse) and isinstance(elif_.condition, And)
    assert isinstance(stmts[1], While)
    store = stmts[1].body
    assert isinstance(store, BufferStore)  # A[0] += 1 is a load-add-store
    assert isinstance(stmts[2], AssertStmt)
    assert stmts[2].message.value == "ValueError: n must be positive"
    assert isinstance(stmts[3], Evaluate)
    chained = stmts[4].value
    assert isinstance(chained, Select) and isinstance(chained.condition, And)
    assert isinstance(stmts[5].value, Select)  # `n if n > 1 else 1` on a symbolic test


def test_scalar_bindings_become_let_stmts_and_python_values_stay() -> None:
    body = kernels.bindings.body
    assert isinstance(body, LetStmt) and body.var.name == "x"
    assert str(body.var.dtype) == "float32"
    inner = body.body
    assert isinstance(inner, LetStmt) and str(inner.var.dtype) == "int32"
    stores = _seq(inner.body)
    assert len(stores) == 3  # `k = 3` made no statement
    assert stores[2].indices[0].value == 3


def test_memory_statements() -> None:
    body = kernels.memory.body
    assert isinstance(body, Allocate) and body.extent.value == 16
    decl = body.body
    assert isinstance(decl, DeclBuffer) and decl.buffer.data is body.buffer_var
    alias = decl.body
    assert isinstance(alias, DeclBuffer)
    params = kernels.memory.params
    assert alias.buffer.data is kernels.memory.buffer_map[params[0]].data
    implicit = alias.body
    assert isinstance(implicit, Allocate) and isinstance(implicit.body, DeclBuffer)


def test_blocks_regions_and_init() -> None:
    root = kernels.blocks.body
    assert isinstance(root, BlockRealize) and root.block.name_hint == "root"
    body = root.block.body
    loop = _seq(body)[0]
    while isinstance(loop, For):
        loop = loop.body
    assert isinstance(loop, BlockRealize)
    block = loop.block
    assert block.name_hint == "C" and len(block.iter_vars) == 3
    assert block.init is not None and len(block.reads) == 2
    second = _seq(body)[1].body.block
    (read,) = second.reads
    # TVM simplifies a slice's stop - start: A[vi * 4 : vi * 4 + 4] has extent 4
    assert read.region[0].extent.value == 4
    assert read.region[1].extent.value == 16


def test_vector_access() -> None:
    store = kernels.vectors.body.body
    assert isinstance(store.indices[0], Ramp) and str(store.value.dtype) == "float32x4"


def test_old_buffer_subscript_form() -> None:
    f = kernels.old_buffer_syntax
    shapes = [tuple(d.value for d in b.shape) for b in f.buffer_map.values()]
    assert shapes == [(16,), (4, 4)]


def test_match_buffer_and_symbolic_shape() -> None:
    f = kernels.handles
    (buffer,) = f.buffer_map.values()
    assert buffer.shape[0] is f.params[1]
    g = kernels.symbolic
    (sym,) = g.buffer_map.values()
    loop = g.body
    assert isinstance(loop, For) and loop.extent is sym.shape[0]


def test_scoped_let_and_attr() -> None:
    stmts = _seq(kernels.let_scoped.body)
    assert isinstance(stmts[0], LetStmt) and isinstance(stmts[1], AttrStmt)


def test_return_type_and_attrs() -> None:
    f = kernels.returns_int
    assert str(f.ret_type) == "int32" and f.attrs["tir.noalias"] is True


def test_ir_module_class() -> None:
    mod = kernels.Module
    assert sorted(mod.functions) == ["add", "helper"]
    assert mod.attrs == {"target": "llvm"}
    assert "global_symbol" not in mod["helper"].attrs  # private=True
    assert mod["add"].name == "add"


def test_logical_operators_build_nodes() -> None:
    @T.prim_func
    def f(a: T.int32, B: T.Buffer((3,), "bool")):
        B[0] = a > 0 or a < -5
        B[1] = not a == 1
        B[2] = 0 < a <= 4

    stores = _seq(f.body)
    assert isinstance(stores[0].value, Or)
    assert type(stores[1].value).__name__ == "Not"
    assert isinstance(stores[2].value, And)


def test_parse_time_if_on_constants() -> None:
    flag = True

    @T.prim_func
    def f(A: T.Buffer((2,), "int32")):
        if flag:
            A[0] = 1
        else:
            A[0] = 2
        if T.bool(False):
            A[1] = 3

    store = f.body
    assert isinstance(store, BufferStore) and store.value.value == 1


def test_python_range_is_a_loop_and_lists_unroll() -> None:
    @T.prim_func
    def f(A: T.Buffer((4,), "int32")):
        for i in range(4):
            A[i] = i
        for k in [0, 2]:
            A[k] = k

    stmts = _seq(f.body)
    assert isinstance(stmts[0], For)
    assert [s.indices[0].value for s in stmts[1:]] == [0, 2]


def test_python_numbers_adapt_to_buffer_type() -> None:
    @T.prim_func
    def f(A: T.Buffer((2,), "float64"), B: T.Buffer((1,), "int8")):
        A[0] = 1
        A[1] = 0.5
        B[0] = 3

    stores = _seq(f.body)
    assert [str(s.value.dtype) for s in stores] == ["float64", "float64", "int8"]
    assert isinstance(stores[2].value, IntImm)


@pytest.mark.parametrize("private", [False, True])
def test_private_option(private: bool) -> None:
    def body(A: T.Buffer((1,), "float32")) -> None:
        A[0] = T.float32(0)

    f = T.prim_func(body, private=private)
    assert ("global_symbol" in f.attrs) is not private
