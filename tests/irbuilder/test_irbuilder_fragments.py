"""Statement fragments: an IRBuilder with no enclosing T.prim_func returns the statement its
outermost frame (or single statement) built, as TVM's IRBuilder does."""

from __future__ import annotations

import pytest

from irbuilder import IRBuilder, IRBuilderError
from irbuilder import tir as T
from irbuilder.ir import (
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    BufferStore,
    DeclBuffer,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    IterVar,
    LetStmt,
    SeqStmt,
    StringImm,
    Var,
    While,
)


def _const(node: object) -> object:
    assert isinstance(node, (IntImm, FloatImm)), node
    return node.value


def test_a_single_statement_is_the_result() -> None:
    with IRBuilder() as ib:
        T.evaluate(7)
    stmt = ib.get()
    assert isinstance(stmt, Evaluate)
    assert _const(stmt.value) == 7


def test_nested_loop_frames_give_the_outer_for() -> None:
    with IRBuilder() as ib:
        with T.serial(16) as i:
            with T.parallel(8) as j:
                with T.vectorized(4):
                    with T.unroll(2):
                        T.evaluate(i + j)
    loop = ib.get()
    seen = []
    while isinstance(loop, For):
        seen.append((loop.kind, _const(loop.extent)))
        loop = loop.body
    assert seen == [
        (ForKind.SERIAL, 16),
        (ForKind.PARALLEL, 8),
        (ForKind.VECTORIZED, 4),
        (ForKind.UNROLLED, 2),
    ]
    assert isinstance(loop, Evaluate)


def test_grid_fragment_and_unsigned_extent() -> None:
    with IRBuilder() as ib:
        with T.grid(3, 5):
            T.evaluate(0)
    outer = ib.get()
    assert isinstance(outer, For) and isinstance(outer.body, For)
    assert (_const(outer.extent), _const(outer.body.extent)) == (3, 5)

    with IRBuilder() as ib:
        with T.serial(T.uint32(9)) as k:
            T.evaluate(0)
    loop = ib.get()
    assert isinstance(loop, For)
    assert loop.loop_var is k
    assert [str(e.dtype) for e in (k, loop.min, loop.extent)] == ["uint32"] * 3


def test_thread_binding_loop_fragment() -> None:
    with IRBuilder() as ib:
        with T.thread_binding(32, thread="threadIdx.x"):
            T.evaluate(0)
    loop = ib.get()
    assert isinstance(loop, For) and loop.kind == ForKind.THREAD_BINDING
    assert isinstance(loop.thread_binding, IterVar)
    assert loop.thread_binding.thread_tag == "threadIdx.x"


def test_block_fragment_is_a_block_realize() -> None:
    with IRBuilder() as ib:
        with T.block("only"):
            T.evaluate(0)
    realize = ib.get()
    assert isinstance(realize, BlockRealize)
    assert realize.iter_values == ()
    assert _const(realize.predicate) == 1
    block = realize.block
    assert block.name_hint == "only"
    assert (block.iter_vars, block.reads, block.writes) == ((), (), ())
    assert isinstance(block.body, Evaluate)


def test_block_fragment_with_axes_regions_and_buffers() -> None:
    a, b = T.int32(), T.int32()
    src = T.Buffer((64, 64), "float32")
    dst = T.Buffer((64, 64), "float32")
    with IRBuilder() as ib:
        with T.block("full"):
            vi = T.axis.spatial(64, a)
            T.axis.reduce(8, b)
            T.where(b > 1)
            T.reads(src[0:8, 0:8])
            T.block_attr({"note": "kept"})
            scratch = T.alloc_buffer((4,), "float32")
            view = T.match_buffer(src[0:16, 0:16], (16, 16), "float32")
            T.buffer_store(dst, view[0, 0] + scratch[0], [vi, 0])
    realize = ib.get()
    assert isinstance(realize, BlockRealize)
    assert realize.iter_values[0] is a and realize.iter_values[1] is b
    block = realize.block
    assert [iv.kind for iv in block.iter_vars] == [IterKind.SPATIAL, IterKind.REDUCE]
    assert [_const(iv.dom.extent) for iv in block.iter_vars] == [64, 8]
    assert block.reads[0].buffer is src
    # T.writes was left out: it is inferred from the body, as for a block in a function.
    assert [w.buffer for w in block.writes] == [dst]
    assert dict(block.annotations) == {"note": "kept"}
    assert block.alloc_buffers == (scratch,)
    assert block.match_buffers[0].buffer is view and block.match_buffers[0].source.buffer is src


def test_block_fragment_without_realize_is_a_block() -> None:
    with IRBuilder() as ib:
        with T.block("bare", no_realize=True):
            T.evaluate(0)
    block = ib.get()
    assert isinstance(block, Block) and block.name_hint == "bare"


def test_assert_fragment_is_the_assertion_then_its_body() -> None:
    # Our AssertStmt has no body (ARCHITECTURE.md): TVM's AssertStmt(c, msg, body) is the
    # sequence of the assertion and the body.
    n = T.int32()
    with IRBuilder() as ib:
        with T.Assert(n == 0, "n is 0"):
            T.evaluate(1)
            T.evaluate(2)
    seq = ib.get()
    assert isinstance(seq, SeqStmt) and len(seq.seq) == 3
    check = seq.seq[0]
    assert isinstance(check, AssertStmt)
    assert isinstance(check.message, StringImm) and check.message.value == "n is 0"
    assert [_const(s.value) for s in seq.seq[1:] if isinstance(s, Evaluate)] == [1, 2]

    with IRBuilder() as ib:
        T.Assert(n > 0, "positive")
    assert isinstance(ib.get(), AssertStmt)


def test_let_while_and_if_fragments() -> None:
    with IRBuilder() as ib:
        with T.LetStmt(T.int32(2)) as v:
            T.evaluate(v)
    let = ib.get()
    assert isinstance(let, LetStmt) and let.var is v and str(v.dtype) == "int32"
    assert _const(let.value) == 2

    x = T.int32()
    with IRBuilder() as ib:
        with T.While(x > 0):
            T.evaluate(0)
    loop = ib.get()
    assert isinstance(loop, While) and loop.condition.a is x  # type: ignore[attr-defined]

    with IRBuilder() as ib:
        with T.If(x < 12):
            with T.Then():
                T.evaluate(0)
            with T.Else():
                T.evaluate(1)
    branch = ib.get()
    assert isinstance(branch, IfThenElse)
    assert isinstance(branch.then_case, Evaluate) and _const(branch.then_case.value) == 0
    assert isinstance(branch.else_case, Evaluate) and _const(branch.else_case.value) == 1


def test_a_bind_without_with_closes_when_the_builder_does() -> None:
    with IRBuilder() as ib:
        x = T.bind(T.int32(5))
        T.evaluate(x * 2)
    let = ib.get()
    assert isinstance(let, LetStmt) and let.var is x
    assert isinstance(let.body, Evaluate)


def test_memory_fragments() -> None:
    with IRBuilder() as ib:
        with T.allocate([10], "float32", scope="local") as data:
            T.evaluate(0)
    alloc = ib.get()
    assert isinstance(alloc, Allocate) and alloc.buffer_var is data
    assert data.type_annotation is not None and data.type_annotation.scope == "local"
    assert _const(alloc.extent) == 10 and _const(alloc.condition) == 1

    with IRBuilder() as ib:
        with T.allocate_const([1, 2, 3, 4], "int32", [4]):
            T.evaluate(0)
    consts = ib.get()
    assert isinstance(consts, Allocate) and str(consts.dtype) == "int32"
    assert _const(consts.extent) == 4

    # T.decl_buffer without data= allocates: Allocate over DeclBuffer, as in TVM
    # (our Allocate has one flat extent).
    with IRBuilder() as ib:
        with T.decl_buffer([8, 16], "float32") as buf:
            T.evaluate(0)
    outer = ib.get()
    assert isinstance(outer, Allocate) and isinstance(outer.body, DeclBuffer)
    assert outer.body.buffer is buf and outer.buffer_var is buf.data
    assert _const(outer.extent) == 128


def test_buffer_store_fragment_converts_the_value() -> None:
    buf = T.Buffer((10, 10), "float32")
    i = T.int32()
    with IRBuilder() as ib:
        T.buffer_store(buf, 0.5, [0, i])
    store = ib.get()
    assert isinstance(store, BufferStore) and store.buffer is buf
    assert isinstance(store.value, FloatImm) and str(store.value.dtype) == "float32"
    assert store.indices[1] is i


def test_attr_realize_and_launch_thread_fragments() -> None:
    buf = T.Buffer((8,), "float32")
    with IRBuilder() as ib:
        with T.realize(buf[0:8], "global"):
            T.evaluate(0)
    realize = ib.get()
    assert isinstance(realize, AttrStmt) and realize.attr_key == "buffer_realize"

    with IRBuilder() as ib:
        bx = T.env_thread("blockIdx.x")
        with T.launch_thread(bx, 4):
            T.evaluate(bx)
    launch = ib.get()
    assert isinstance(launch, AttrStmt) and launch.attr_key == "thread_extent"
    assert isinstance(launch.node, IterVar) and launch.node.var is bx
    assert launch.node.thread_tag == "blockIdx.x" and _const(launch.value) == 4


def test_a_second_top_level_statement_is_an_error() -> None:
    with IRBuilder():
        T.evaluate(0)
        with pytest.raises(IRBuilderError, match=r"T\.evaluate: .*already holds its result"):
            T.evaluate(1)
    with IRBuilder():
        with T.serial(2):
            T.evaluate(0)
        with pytest.raises(IRBuilderError, match=r"T\.serial: .*a fragment is one statement"):
            with T.serial(2):
                T.evaluate(0)


def test_get_with_an_open_fragment_frame_or_nothing_built() -> None:
    with IRBuilder() as ib:
        loop = T.serial(4)
        loop.__enter__()
        with pytest.raises(IRBuilderError, match=r"frames are still open: T\.serial"):
            ib.get()
        loop.__exit__(None, None, None)
    assert isinstance(ib.get(), For)
    with IRBuilder() as empty:
        pass
    with pytest.raises(IRBuilderError, match="nothing was built"):
        empty.get()


def test_fragment_vars_stay_the_callers_objects() -> None:
    # Free variables of a fragment are the objects the caller made: nothing is renamed.
    n = Var("n")
    with IRBuilder() as ib:
        with T.serial(n) as i:
            T.evaluate(i)
    loop = ib.get()
    assert isinstance(loop, For) and loop.extent is n
    assert isinstance(loop.body, Evaluate) and loop.body.value is loop.loop_var
