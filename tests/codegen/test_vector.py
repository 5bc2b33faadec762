"""Vector code: Ramp/Broadcast, contiguous vector loads/stores, gathers, scatters, Shuffle."""

from __future__ import annotations

import numpy as np
import pytest
from cgkit import Kernel, build, loop

from irbuilder.ir import (
    LT,
    Add,
    Broadcast,
    BufferLoad,
    BufferStore,
    Cast,
    FloatImm,
    IntImm,
    Mul,
    Ramp,
    Select,
    Shuffle,
    as_dtype,
    const,
)

I64 = as_dtype("int64")


def _ramp(base: object, stride: int, lanes: int) -> Ramp:
    return Ramp(base, IntImm(I64, stride), lanes)  # type: ignore[arg-type]


@pytest.mark.parametrize("lanes", [4, 8, 16])
def test_contiguous_vector_load_store(lanes: int) -> None:
    n = lanes * 8
    k = Kernel("vadd")
    a, b, c = k.buffer("A", "float32", n), k.buffer("B", "float32", n), k.buffer("C", "float32", n)

    def body(i: object) -> BufferStore:
        idx = _ramp(Mul(i, IntImm(I64, lanes)), 1, lanes)  # type: ignore[arg-type]
        two = Broadcast(FloatImm(as_dtype("float32"), 2.0), lanes)
        return BufferStore(c, Add(BufferLoad(a, (idx,)), Mul(BufferLoad(b, (idx,)), two)), (idx,))

    lib = build(k.func(loop(n // lanes, body)), opt_level=0)
    assert f"load <{lanes} x float>" in lib.ir and f"store <{lanes} x float>" in lib.ir
    assert "align 4" in lib.ir and "align 32" not in lib.ir  # element alignment only
    x = np.arange(n, dtype=np.float32)
    y = np.arange(n, dtype=np.float32)[::-1].copy()
    out = np.zeros(n, np.float32)
    lib["vadd"](x, y, out)
    np.testing.assert_array_equal(out, x + 2 * y)


@pytest.mark.parametrize("lanes", [4, 8])
def test_gather_and_scatter(lanes: int) -> None:
    n = lanes * 4
    k = Kernel("g")
    a, c = k.buffer("A", "int32", 2 * n), k.buffer("C", "int32", 2 * n)

    def body(i: object) -> BufferStore:
        base = Mul(i, IntImm(I64, lanes))  # type: ignore[arg-type]
        src = _ramp(Mul(base, IntImm(I64, 2)), 2, lanes)  # stride-2 gather
        dst = _ramp(Add(base, IntImm(I64, lanes - 1)), -1, lanes)  # reversed scatter
        return BufferStore(c, BufferLoad(a, (src,)), (dst,))

    lib = build(k.func(loop(n // lanes, body)))
    x = np.arange(2 * n, dtype=np.int32) * 3
    out = np.zeros(2 * n, np.int32)
    lib["g"](x, out)
    expected = np.zeros(2 * n, np.int32)
    evens = x[0 : 2 * n : 2]
    expected[:n] = evens.reshape(-1, lanes)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(out, expected)


def test_shuffle_reverse_and_interleave() -> None:
    k = Kernel("s")
    a, b, c = k.buffer("A", "float64", 8), k.buffer("B", "float64", 8), k.buffer("C", "float64", 16)
    va = BufferLoad(a, (_ramp(IntImm(I64, 0), 1, 8),))
    vb = BufferLoad(b, (_ramp(IntImm(I64, 0), 1, 8),))
    rev = Shuffle((va,), tuple(range(7, -1, -1)))
    inter = Shuffle((va, vb), tuple(j for p in zip(range(8), range(8, 16)) for j in p))
    body_rev = BufferStore(c, rev, (_ramp(IntImm(I64, 0), 1, 8),))
    lib_rev = build(k.func(body_rev))
    x, y = np.arange(8.0), np.arange(8.0) + 100
    out = np.zeros(16)
    lib_rev["s"](x, y, out)
    np.testing.assert_array_equal(out[:8], x[::-1])
    assert "shufflevector" in lib_rev.ir
    k2 = Kernel("t")
    a2, b2, c2 = (
        k2.buffer("A", "float64", 8),
        k2.buffer("B", "float64", 8),
        k2.buffer("C", "float64", 16),
    )
    va2 = BufferLoad(a2, (_ramp(IntImm(I64, 0), 1, 8),))
    vb2 = BufferLoad(b2, (_ramp(IntImm(I64, 0), 1, 8),))
    inter = Shuffle((va2, vb2), tuple(j for p in zip(range(8), range(8, 16)) for j in p))
    lib = build(k2.func(BufferStore(c2, inter, (_ramp(IntImm(I64, 0), 1, 16),))))
    lib["t"](x, y, out)
    np.testing.assert_array_equal(out, np.stack([x, y], axis=1).reshape(-1))


def test_vector_select_compare_cast() -> None:
    lanes, n = 8, 32
    k = Kernel("v")
    a, c = k.buffer("A", "int32", n), k.buffer("C", "float32", n)

    def body(i: object) -> BufferStore:
        idx = _ramp(Mul(i, IntImm(I64, lanes)), 1, lanes)  # type: ignore[arg-type]
        v = BufferLoad(a, (idx,))
        zero = Broadcast(IntImm(as_dtype("int32"), 0), lanes)
        as_float = Cast(as_dtype("float32x8"), v)
        neg = Mul(as_float, Broadcast(FloatImm(as_dtype("float32"), -1.0), lanes))
        return BufferStore(c, Select(LT(v, zero), neg, as_float), (idx,))

    lib = build(k.func(loop(n // lanes, body)))
    x = np.arange(-16, 16, dtype=np.int32)
    out = np.zeros(n, np.float32)
    lib["v"](x, out)
    np.testing.assert_array_equal(out, np.abs(x).astype(np.float32))


def test_ramp_value_and_bool_vectors() -> None:
    k = Kernel("r")
    c, m = k.buffer("C", "int64", 8), k.buffer("M", "bool", 8)
    idx = _ramp(IntImm(I64, 0), 1, 8)
    ramp_value = Ramp(const(5, "int64"), const(3, "int64"), 8)
    body = BufferStore(c, ramp_value, (idx,))
    from irbuilder.ir import SeqStmt

    mask = LT(ramp_value, Broadcast(const(15, "int64"), 8))
    lib = build(k.func(SeqStmt((body, BufferStore(m, mask, (idx,))))))
    out, flags = np.zeros(8, np.int64), np.zeros(8, bool)
    lib["r"](out, flags)
    np.testing.assert_array_equal(out, 5 + 3 * np.arange(8))
    np.testing.assert_array_equal(flags, (5 + 3 * np.arange(8)) < 15)


def test_scalar_loop_is_vectorized_at_o3() -> None:
    n = 4096
    k = Kernel("axpy")
    a, c = k.buffer("A", "float32", n), k.buffer("C", "float32", n)
    body = loop(
        n,
        lambda i: BufferStore(
            c, Add(BufferLoad(c, (i,)), Mul(BufferLoad(a, (i,)), const(3.0, "float32"))), (i,)
        ),
    )
    lib = build(k.func(body), opt_level=3)
    optimized = lib.lib.llvm_ir
    assert "vector.body" in optimized
    x = np.arange(n, dtype=np.float32)
    out = np.ones(n, np.float32)
    lib["axpy"](x, out)
    np.testing.assert_array_equal(out, 1 + 3 * x)
