"""T.compute: elementwise, broadcast, reductions with their init, matmul, out=."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from irbuilder import IRBuilder, IRBuilderError
from irbuilder import tir as T
from irbuilder.ir import (
    And,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    FloatImm,
    For,
    IfThenElse,
    IntImm,
    IterKind,
    Max,
    Min,
    Or,
    PrimFunc,
    Stmt,
    Var,
    as_dtype,
    assert_structural_equal,
)


def _func(build: Callable[[], Any]) -> PrimFunc:
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("k")
            build()
    f = b.get()
    assert isinstance(f, PrimFunc)
    return f


def _root(f: PrimFunc) -> Block:
    realize = f.body
    assert isinstance(realize, BlockRealize) and realize.block.name_hint == "root"
    return realize.block


def _innermost_block(stmt: Stmt) -> tuple[list[For], BlockRealize]:
    loops: list[For] = []
    while isinstance(stmt, For):
        loops.append(stmt)
        stmt = stmt.body
    assert isinstance(stmt, BlockRealize)
    return loops, stmt


def test_elementwise_matches_hand_written_blocks() -> None:
    def by_compute() -> None:
        a = T.arg("A", T.Buffer((4, 8), "float32"))
        b = T.arg("B", T.Buffer((4, 8), "float32"))
        T.compute((4, 8), lambda i, j: a[i, j] + b[i, j], name="C")

    def by_hand() -> None:
        a = T.arg("A", T.Buffer((4, 8), "float32"))
        b = T.arg("B", T.Buffer((4, 8), "float32"))
        c = T.alloc_buffer((4, 8), "float32")
        with T.grid(4, 8) as (i, j):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.buffer_store(c, a[vi, vj] + b[vi, vj], [vi, vj])

    got, expected = _func(by_compute), _func(by_hand)
    assert_structural_equal(got, expected)
    root = _root(got)
    assert root.alloc_buffers[0].name == "C"
    loops, realize = _innermost_block(root.body)
    assert [lp.loop_var.name for lp in loops] == ["i", "j"]
    assert [iv.var.name for iv in realize.block.iter_vars] == ["vi", "vj"]
    assert [r.buffer.name for r in realize.block.reads] == ["A", "B"]
    assert [r.buffer.name for r in realize.block.writes] == ["C"]


def test_broadcast_add() -> None:
    def build() -> None:
        a = T.arg("A", T.Buffer((4, 8), "float32"))
        bias = T.arg("bias", T.Buffer((8,), "float32"))
        T.compute((4, 8), lambda i, j: a[i, j] + bias[j])

    f = _func(build)
    _, realize = _innermost_block(_root(f).body)
    store = realize.block.body
    assert isinstance(store, BufferStore)
    bias_load = store.value.b  # type: ignore[attr-defined]
    assert isinstance(bias_load, BufferLoad) and bias_load.buffer.name == "bias"
    assert bias_load.indices[0] is realize.block.iter_vars[1].var
    assert realize.block.reads[1].buffer.name == "bias"
    assert len(realize.block.reads[1].region) == 1


def test_matmul_structure() -> None:
    out: list[Buffer] = []

    def build() -> None:
        a = T.arg("A", T.Buffer((16, 32), "float32"))
        b = T.arg("B", T.Buffer((32, 8), "float32"))
        k = T.reduce_axis(0, 32)
        out.append(T.compute((16, 8), lambda i, j: T.sum(a[i, k] * b[k, j], axis=k), name="C"))

    def by_hand() -> None:
        a = T.arg("A", T.Buffer((16, 32), "float32"))
        b = T.arg("B", T.Buffer((32, 8), "float32"))
        c = T.alloc_buffer((16, 8), "float32")
        with T.grid(16, 8, 32) as (i, j, k):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    T.buffer_store(c, 0.0, [vi, vj])
                T.buffer_store(c, c[vi, vj] + a[vi, vk] * b[vk, vj], [vi, vj])

    f = _func(build)
    assert_structural_equal(f, _func(by_hand))
    loops, realize = _innermost_block(_root(f).body)
    assert [lp.extent.value for lp in loops] == [16, 8, 32]  # type: ignore[attr-defined]
    assert [lp.loop_var.name for lp in loops] == ["i", "j", "k"]
    block = realize.block
    assert [iv.kind for iv in block.iter_vars] == [IterKind.SPATIAL] * 2 + [IterKind.REDUCE]
    assert all(v is lp.loop_var for v, lp in zip(realize.iter_values, loops))
    init = block.init
    assert isinstance(init, BufferStore) and isinstance(init.value, FloatImm)
    assert init.value.value == 0.0
    assert [r.buffer.name for r in block.reads] == ["A", "B"]  # a reduction reads no C (TVM)
    assert [r.buffer.name for r in block.writes] == ["C"]
    assert out[0].name == "C" and out[0].shape[1].value == 8  # type: ignore[attr-defined]


REDUCTIONS = [
    ("sum", "float32", 0.0),
    ("sum", "int32", 0),
    ("prod", "float32", 1.0),
    ("prod", "int32", 1),
    ("reduce_max", "float32", -math.inf),
    ("reduce_max", "int32", -(2**31)),
    ("reduce_min", "float32", math.inf),
    ("reduce_min", "int32", 2**31 - 1),
]


@pytest.mark.parametrize(("kind", "dtype", "identity"), REDUCTIONS)
def test_reduction_init_follows_kind_and_dtype(kind: str, dtype: str, identity: float) -> None:
    def build() -> None:
        a = T.arg("A", T.Buffer((4, 8), dtype))
        k = T.reduce_axis(8)
        reducer = getattr(T, kind)
        T.compute((4,), lambda i: reducer(a[i, k], axis=k), name="R")

    _, realize = _innermost_block(_root(_func(build)).body)
    init = realize.block.init
    assert isinstance(init, BufferStore)
    assert init.value.dtype == as_dtype(dtype)
    assert init.value.value == identity  # type: ignore[attr-defined]
    update = realize.block.body
    assert isinstance(update, BufferStore)
    expected_node = {"reduce_max": Max, "reduce_min": Min}.get(kind)
    if expected_node is not None:
        assert isinstance(update.value, expected_node)
    else:
        assert type(update.value).__name__ == ("Add" if kind == "sum" else "Mul")


@pytest.mark.parametrize(("kind", "identity", "node"), [("all", 1, And), ("any", 0, Or)])
def test_boolean_reductions(kind: str, identity: int, node: type) -> None:
    def build() -> None:
        a = T.arg("A", T.Buffer((4, 8), "float32"))
        k = T.reduce_axis(0, 8)
        reducer = getattr(T, kind)
        T.compute((4,), lambda i: reducer(a[i, k] > 0.0, axis=k))

    _, realize = _innermost_block(_root(_func(build)).body)
    init = realize.block.init
    assert isinstance(init, BufferStore) and isinstance(init.value, IntImm)
    assert init.value.dtype.is_bool and init.value.value == identity
    assert isinstance(realize.block.body.value, node)  # type: ignore[attr-defined]


def test_two_reduce_axes_and_where() -> None:
    def build() -> None:
        a = T.arg("A", T.Buffer((4, 5, 6), "float32"))
        k1, k2 = T.reduce_axis(5, name="k1"), T.reduce_axis(1, 6, name="k2")
        T.compute((4,), lambda i: T.sum(a[i, k1, k2], axis=[k1, k2], where=k1 < k2))

    loops, realize = _innermost_block(_root(_func(build)).body)
    assert [lp.loop_var.name for lp in loops] == ["i", "k1", "k2"]
    assert loops[2].min.value == 1 and loops[2].extent.value == 5  # type: ignore[attr-defined]
    assert [iv.kind for iv in realize.block.iter_vars][1:] == [IterKind.REDUCE] * 2
    assert isinstance(realize.block.body, IfThenElse)
    # The lambda's reduce axes are replaced by plain block iter vars.
    assert all(type(iv.var) is Var for iv in realize.block.iter_vars)


def test_out_writes_into_existing_buffer() -> None:
    def build() -> None:
        a = T.arg("A", T.Buffer((8,), "float32"))
        c = T.arg("C", T.Buffer((8,), "float32"))
        assert T.compute((8,), lambda i: a[i] * 2.0, out=c) is c

    f = _func(build)
    root = f.body
    # Nothing was allocated: the root block is the implicit bare one every blocked body gets.
    assert isinstance(root, BlockRealize) and root.block.name_hint == "root"
    assert root.block.alloc_buffers == () and root.block.writes == ()
    loop = root.block.body
    assert isinstance(loop, For)
    store = loop.body.block.body  # type: ignore[attr-defined]
    assert isinstance(store, BufferStore) and store.buffer.name == "C"


def test_dtype_cast_and_mismatch() -> None:
    def build() -> None:
        a = T.arg("A", T.Buffer((8,), "int32"))
        c = T.compute((8,), lambda i: a[i], dtype="float32")
        assert c.dtype == as_dtype("float32")
        out = T.arg("O", T.Buffer((8,), "float32"))
        with pytest.raises(TypeError, match="computed value is int32 but the output is float32"):
            T.compute((8,), lambda i: a[i], out=out)

    f = _func(build)
    _, realize = _innermost_block(_root(f).body)
    assert type(realize.block.body.value).__name__ == "Cast"  # type: ignore[attr-defined]


def test_compute_errors() -> None:
    with IRBuilder():
        with pytest.raises(IRBuilderError, match=r"T\.compute must be called inside T\.prim_func"):
            T.compute((4,), lambda i: i)
        with T.prim_func():
            a = T.arg("A", T.Buffer((4, 4), "float32"))
            k = T.reduce_axis(4)
            with pytest.raises(TypeError, match="takes 1 arguments but the shape has 2"):
                T.compute((4, 4), lambda i: a[i, i])
            with pytest.raises(TypeError, match="must be the outermost call"):
                T.compute((4,), lambda i: T.sum(a[i, k], axis=k) * 2.0)
            with pytest.raises(TypeError, match="reduce axis is used outside"):
                T.compute((4,), lambda i: a[i, k])
