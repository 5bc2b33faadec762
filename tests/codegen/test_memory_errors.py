"""Allocations (stack vs heap, freed on every exit), assertions and error propagation."""

from __future__ import annotations

import re

import numpy as np
import pytest
from cgkit import AllocCounters, Kernel, build, loop

from irbuilder.ir import (
    GT,
    LT,
    Add,
    Allocate,
    AssertStmt,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    DeclBuffer,
    FloorDiv,
    SeqStmt,
    StringImm,
    as_dtype,
    const,
    make_data_var,
)

F32 = as_dtype("float32")


def _sum_with_scratch(size: int, *, fail: bool) -> tuple[Kernel, object]:
    """out[0] = sum(A) through a scratch buffer of ``size`` floats; optionally assert n > 0."""
    k = Kernel("scratch")
    a, out = k.buffer("A", "float32", size), k.buffer("Out", "float32", 1)
    flag = k.scalar("flag", "int32")
    data = make_data_var("tmp", F32)
    tmp = Buffer("tmp", data, (const(size, "int64"),), F32)
    copy = loop(size, lambda i: BufferStore(tmp, BufferLoad(a, (i,)), (i,)))
    check = AssertStmt(GT(flag, const(0, "int32")), StringImm("ValueError: flag must be positive"))
    zero = BufferStore(out, const(0.0, "float32"), (const(0, "int64"),))
    acc = loop(
        size,
        lambda j: BufferStore(
            out,
            Add(BufferLoad(out, (const(0, "int64"),)), BufferLoad(tmp, (j,))),
            (const(0, "int64"),),
        ),
        name="j",
    )
    body = Allocate(
        data,
        F32,
        const(size, "int64"),
        const(True),
        DeclBuffer(tmp, SeqStmt((copy, check, zero, acc) if fail else (copy, zero, acc))),
    )
    return k, body


def test_small_allocation_is_an_entry_block_alloca() -> None:
    k, body = _sum_with_scratch(16, fail=False)
    lib = build(k.func(body), opt_level=0)  # type: ignore[arg-type]
    entry = lib.ir.split('define i32 @"scratch"')[1].split("body:")[0]
    assert re.search(r"alloca float, i64 16, align 64", entry)
    assert "aligned_alloc" not in lib.ir
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(1, np.float32)
    lib["scratch"](x, out, 1)
    assert out[0] == x.sum()


def test_large_allocation_goes_to_the_heap_and_is_freed() -> None:
    counters = AllocCounters()
    k, body = _sum_with_scratch(2048, fail=False)
    lib = build(k.func(body), symbols=counters.symbols, count_allocations=True)  # type: ignore[arg-type]
    assert "aligned_alloc" in lib.ir
    x = np.ones(2048, np.float32)
    out = np.zeros(1, np.float32)
    lib["scratch"](x, out, 1)
    assert out[0] == 2048
    assert (counters.total.value, counters.live.value) == (1, 0)


def test_heap_allocation_freed_when_an_assertion_fails() -> None:
    counters = AllocCounters()
    k, body = _sum_with_scratch(4096, fail=True)
    lib = build(k.func(body), symbols=counters.symbols, count_allocations=True)  # type: ignore[arg-type]
    x = np.ones(4096, np.float32)
    out = np.zeros(1, np.float32)
    with pytest.raises(ValueError, match=r"^flag must be positive$"):
        lib["scratch"](x, out, 0)
    assert counters.total.value == 1 and counters.live.value == 0
    lib["scratch"](x, out, 3)
    assert out[0] == 4096 and counters.total.value == 2 and counters.live.value == 0


def test_heap_allocation_freed_on_division_by_zero() -> None:
    counters = AllocCounters()
    k = Kernel("dz")
    n = k.scalar("n", "int64")
    d = k.scalar("d", "int32")
    out = k.buffer("Out", "int32", 1)
    data = make_data_var("tmp", as_dtype("int32"))
    tmp = Buffer("tmp", data, (n,), as_dtype("int32"))
    body = Allocate(
        data,
        as_dtype("int32"),
        n,
        const(True),
        DeclBuffer(
            tmp,
            SeqStmt(
                (
                    BufferStore(tmp, const(7, "int32"), (const(0, "int64"),)),
                    BufferStore(
                        out,
                        FloorDiv(BufferLoad(tmp, (const(0, "int64"),)), d),
                        (const(0, "int64"),),
                    ),
                )
            ),
        ),
    )
    lib = build(k.func(body), symbols=counters.symbols, count_allocations=True)
    res = np.zeros(1, np.int32)
    with pytest.raises(ZeroDivisionError):
        lib["dz"](10, 0, res)
    assert counters.live.value == 0 and counters.total.value == 1
    lib["dz"](10, -2, res)
    assert res[0] == -4 and counters.live.value == 0


@pytest.mark.parametrize(
    ("message", "exc", "text"),
    [
        ("ValueError: bad value", ValueError, "bad value"),
        ("TypeError: bad type", TypeError, "bad type"),
        ("IndexError: out of range", IndexError, "out of range"),
        ("shapes differ", AssertionError, "shapes differ"),
    ],
)
def test_assert_raises_by_prefix(message: str, exc: type[Exception], text: str) -> None:
    k = Kernel("a")
    x = k.scalar("x", "int64")
    lib = build(k.func(AssertStmt(LT(x, const(10, "int64")), StringImm(message))))
    assert lib["a"](3) == 0
    with pytest.raises(exc) as info:
        lib["a"](11)
    assert str(info.value) == text


def test_if_then_else_evaluates_one_side_only() -> None:
    k = Kernel("ite")
    a, b, c = k.buffer("A", "int32", 4), k.buffer("B", "int32", 4), k.buffer("C", "int32", 4)

    def body(i: object) -> BufferStore:
        x, y = BufferLoad(a, (i,)), BufferLoad(b, (i,))  # type: ignore[arg-type]
        guarded = Call(
            as_dtype("int32"),
            "if_then_else",
            (y != 0, FloorDiv(x, y), const(-1, "int32")),
            CallKind.BUILTIN,
        )
        return BufferStore(c, guarded, (i,))  # type: ignore[arg-type]

    lib = build(k.func(loop(4, body)))
    out = np.zeros(4, np.int32)
    lib["ite"](np.array([7, 8, 9, -9], np.int32), np.array([2, 0, 3, 2], np.int32), out)
    np.testing.assert_array_equal(out, [3, -1, 3, -5])
