"""The root block of a function, by TVM's rules: an implicit ``root`` block around a body
holding blocks, and root-block regions that are never inferred."""

from __future__ import annotations

import numpy as np

import tvmscript
from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import (
    BlockRealize,
    For,
    PrimFunc,
    SeqStmt,
    Stmt,
    structural_equal,
    structural_hash,
)

TARGET = "llvm -mcpu=znver3"


def _root(func: PrimFunc) -> BlockRealize:
    body = func.body
    assert isinstance(body, BlockRealize), type(body).__name__
    return body


@T.prim_func
def _implicit(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("copy"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def _explicit(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    with T.block("root"):
        for i in range(16):
            with T.block("copy"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + T.float32(1)


def test_a_body_holding_blocks_gets_a_bare_root_block() -> None:
    root = _root(_implicit)
    assert root.block.name_hint == "root" and root.iter_values == ()
    assert (root.block.reads, root.block.writes, root.block.alloc_buffers) == ((), (), ())
    loop = root.block.body
    assert isinstance(loop, For) and isinstance(loop.body, BlockRealize)
    # The blocks below the root still get their regions inferred.
    copy = loop.body.block
    assert [r.buffer.name for r in copy.reads] == ["A"]
    assert [r.buffer.name for r in copy.writes] == ["B"]


def test_an_explicit_root_gets_no_inferred_regions_and_equals_the_implicit_one() -> None:
    root = _root(_explicit)
    assert (root.block.reads, root.block.writes) == ((), ())
    assert structural_equal(_explicit, _implicit)
    assert structural_hash(_explicit) == structural_hash(_implicit)
    # Both print alike: the bare root block is left out, and the text parses back equal.
    text = _implicit.script()
    assert 'T.block("root")' not in text
    assert _explicit.script().replace("_explicit", "_implicit") == text
    assert structural_equal(tvmscript.from_source(text), _implicit)


def test_explicit_root_keeps_what_it_declares() -> None:
    @T.prim_func
    def declared(A: T.Buffer((8,), "float32")):
        with T.block("root"):
            T.reads(A[0:4])
            for i in range(8):
                with T.block("zero"):
                    vi = T.axis.remap("S", [i])
                    A[vi] = T.float32(0)

    root = _root(declared).block
    assert [r.buffer.name for r in root.reads] == ["A"]
    assert root.reads[0].region[0].extent.value == 4  # type: ignore[attr-defined]
    assert root.writes == ()  # left out and not inferred
    again = tvmscript.from_source(declared.script())
    assert structural_equal(again, declared)


def test_a_single_block_without_iter_vars_is_itself_the_root() -> None:
    # No root is added around it, and (being the root) it gets no inferred regions.
    @T.prim_func
    def opaque(A: T.Buffer((4,), "float32")):
        with T.block("compute"):
            for i in range(4):
                A[i] = T.float32(2)

    body = _root(opaque)
    assert body.block.name_hint == "compute"
    assert (body.block.reads, body.block.writes) == ((), ())
    a = np.zeros(4, "float32")
    tvmscript.build(opaque, target=TARGET)(a)
    assert (a == 2).all()


def test_a_top_block_with_iter_vars_or_a_second_statement_gets_a_root() -> None:
    with IRBuilder() as ib:
        with T.prim_func():
            a = T.arg("A", T.Buffer((4,), "float32"))
            with T.block("one"):
                v = T.axis.spatial(4, 2)
                T.buffer_store(a, 1.0, [v])
    root = _root(ib.get())  # type: ignore[arg-type]
    assert root.block.name_hint == "root"
    inner = root.block.body
    assert isinstance(inner, BlockRealize) and inner.block.name_hint == "one"
    assert [r.buffer for r in inner.block.writes] == [a]

    with IRBuilder() as ib:
        with T.prim_func():
            a = T.arg("A", T.Buffer((4,), "float32"))
            T.buffer_store(a, 0.0, [0])
            with T.block("rest"):
                T.buffer_store(a, 1.0, [1])
    root = _root(ib.get())  # type: ignore[arg-type]
    assert root.block.name_hint == "root" and isinstance(root.block.body, SeqStmt)
    rest = root.block.body.seq[1]
    assert isinstance(rest, BlockRealize) and [r.buffer for r in rest.block.writes] == [a]


def test_a_body_without_blocks_gets_no_root() -> None:
    @T.prim_func
    def plain(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(3)

    assert isinstance(plain.body, For)


def test_root_allocations_print_inside_the_root_block() -> None:
    @T.prim_func
    def staged(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        tmp = T.alloc_buffer((4,), "float32")
        for i in range(4):
            with T.block("s1"):
                vi = T.axis.remap("S", [i])
                tmp[vi] = A[vi] * T.float32(2)
        for i in range(4):
            with T.block("s2"):
                vi = T.axis.remap("S", [i])
                B[vi] = tmp[vi] + T.float32(1)

    root = _root(staged).block
    assert root.name_hint == "root" and [b.name for b in root.alloc_buffers] == ["tmp"]
    assert (root.reads, root.writes) == ((), ())
    text = staged.script()
    assert 'with T.block("root"):' in text
    assert structural_equal(tvmscript.from_source(text), staged)
    a = np.arange(4, dtype="float32")
    b = np.zeros(4, "float32")
    tvmscript.build(staged, target=TARGET)(a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)


def test_explicit_and_implicit_root_build_to_the_same_results() -> None:
    a = np.arange(16, dtype="float32")
    outs = []
    for func in (_explicit, _implicit):
        b = np.zeros(16, "float32")
        tvmscript.build(func, target=TARGET)(a, b)
        outs.append(b)
    np.testing.assert_array_equal(outs[0], a + 1)
    np.testing.assert_array_equal(outs[1], a + 1)


def test_a_root_block_around_a_bare_root_stays_printed() -> None:
    # A root whose body is one block without iter vars would not be made again when parsed,
    # so the printer keeps it.
    @T.prim_func
    def nested(A: T.Buffer((4,), "float32")):
        with T.block("root"):
            with T.block("inner"):
                for i in range(4):
                    A[i] = T.float32(5)

    inner = _root(nested).block.body
    assert isinstance(inner, BlockRealize)
    assert [r.buffer.name for r in inner.block.writes] == ["A"]
    text = nested.script()
    assert 'with T.block("root"):' in text
    again = tvmscript.from_source(text)
    assert structural_equal(again, nested)
    body: Stmt = _root(again).block.body
    assert isinstance(body, BlockRealize) and body.block.name_hint == "inner"
