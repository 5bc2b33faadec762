"""hoist_allocations and reuse_memory on lowered IR: structure and unchanged results."""

from __future__ import annotations

import numpy as np

from backend.interp import interpret
from irbuilder.ir import (
    Allocate,
    Buffer,
    BufferStore,
    DeclBuffer,
    For,
    ForKind,
    PrimFunc,
    Stmt,
    Var,
    as_dtype,
    const,
    make_data_var,
    seq,
)
from lowering.transforms.hoist_alloc import hoist_allocations
from lowering.transforms.memory_reuse import reuse_memory

F32 = as_dtype("float32")


def _param(name: str, n: int) -> tuple[Var, Buffer]:
    buf = Buffer(name, make_data_var(f"{name}_data", as_dtype("float32")), (const(n),), F32)
    return Var(name, as_dtype("handle")), buf


def _alloc(name: str, n: int, body_of: object) -> tuple[Buffer, Stmt]:
    buf = Buffer(name, make_data_var(f"{name}_data", as_dtype("float32")), (const(n),), F32)
    body = body_of(buf)  # type: ignore[operator]
    return buf, Allocate(buf.data, buf.dtype, const(n), const(True), DeclBuffer(buf, body))


def _func(body: Stmt, *params: tuple[Var, Buffer]) -> PrimFunc:
    return PrimFunc(tuple(p for p, _ in params), body, None, dict(params), {"global_symbol": "f"})


def test_hoist_moves_invariant_allocation_out_of_serial_loop_only() -> None:
    a = _param("A", 8)
    for kind, hoisted in ((ForKind.SERIAL, True), (ForKind.PARALLEL, False)):
        i = Var("i", as_dtype("int32"))

        def use(x: Buffer, i: Var = i) -> Stmt:
            return seq([
                BufferStore(x, i.astype("float32") * 2.0, (const(0),)),
                BufferStore(a[1], x[0] + 1.0, (i,)),
            ])

        _, alloc = _alloc("X", 4, use)
        f = _func(For(i, const(0), const(8), kind, alloc), a)
        g = hoist_allocations(f)
        assert isinstance(g.body, Allocate) is hoisted
        arr = np.zeros(8, dtype="float32")
        interpret(g, [arr])
        np.testing.assert_array_equal(arr, np.arange(8) * 2 + 1)


def test_hoist_keeps_allocation_depending_on_loop_var() -> None:
    a = _param("A", 8)
    i = Var("i", as_dtype("int32"))
    x = Buffer("X", make_data_var("X_data", as_dtype("float32")), (i + 1,), F32)
    body = DeclBuffer(x, BufferStore(a[1], const(1.0, "float32"), (i,)))
    alloc = Allocate(x.data, x.dtype, i + 1, const(True), body)
    f = _func(For(i, const(0), const(8), ForKind.SERIAL, alloc), a)
    assert hoist_allocations(f) is f


def test_memory_reuse_shares_disjoint_sibling_allocations() -> None:
    a = _param("A", 8)

    def fill(scale: float) -> object:
        def body(x: Buffer) -> Stmt:
            i, j = Var("i", as_dtype("int32")), Var("j", as_dtype("int32"))
            return seq([
                For(i, const(0), x.shape[0], ForKind.SERIAL,
                    BufferStore(x, i.astype("float32") * scale, (i,))),
                For(j, const(0), const(8), ForKind.SERIAL,
                    BufferStore(a[1], a[1][j] + x[j % x.shape[0]], (j,))),
            ])
        return body

    _, first = _alloc("X", 8, fill(1.0))
    _, second = _alloc("Y", 4, fill(10.0))
    _, third = _alloc("Z", 16, fill(100.0))  # too big: keeps its own allocation
    f = _func(seq([first, second, third]), a)
    g = reuse_memory(f)
    allocs: list[Allocate] = []
    from irbuilder.ir import post_order_visit

    post_order_visit(g.body, lambda n: allocs.append(n) if isinstance(n, Allocate) else None)
    assert [str(x.buffer_var.name) for x in allocs] == ["X_data", "Z_data"]
    want, got = np.zeros(8, dtype="float32"), np.zeros(8, dtype="float32")
    interpret(f, [want])
    interpret(g, [got])
    np.testing.assert_array_equal(got, want)
