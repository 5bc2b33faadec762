"""Math intrinsics against numpy (float32 rtol 1e-5), scalar and vector, plus bit operations."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from cgkit import Kernel, build, elementwise, loop

from backend.runtime import host_target
from backend.runtime.vecmath import libmvec_available
from irbuilder.ir import (
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    IntImm,
    Mul,
    PrimExpr,
    Ramp,
    Var,
    as_dtype,
)

N = 64

_erf = np.vectorize(math.erf)

_UNARY: dict[str, tuple[Callable[[Any], Any], tuple[float, float]]] = {
    "exp": (np.exp, (-5, 5)),
    "exp2": (np.exp2, (-5, 5)),
    "log": (np.log, (0.1, 50)),
    "log2": (np.log2, (0.1, 50)),
    "log10": (np.log10, (0.1, 50)),
    "sqrt": (np.sqrt, (0, 50)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 50)),
    "sin": (np.sin, (-6, 6)),
    "cos": (np.cos, (-6, 6)),
    "tan": (np.tan, (-1.4, 1.4)),
    "tanh": (np.tanh, (-4, 4)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-8, 8)),
    "erf": (_erf, (-3, 3)),
    "fabs": (np.abs, (-5, 5)),
    "abs": (np.abs, (-5, 5)),
    "floor": (np.floor, (-5, 5)),
    "ceil": (np.ceil, (-5, 5)),
    "round": (np.round, (-5, 5)),
    "trunc": (np.trunc, (-5, 5)),
    "atan": (np.arctan, (-5, 5)),
    "log1p": (np.log1p, (0, 5)),
}


def _call(op: str, dtype: str) -> Callable[..., PrimExpr]:
    def make(*args: PrimExpr) -> PrimExpr:
        return Call(as_dtype(dtype), op, tuple(args), CallKind.INTRINSIC)

    return make


@pytest.mark.parametrize("libmvec", [True, False], ids=["libmvec", "portable"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(_UNARY))
def test_unary_math(op: str, dtype: str, libmvec: bool) -> None:
    ref, (lo, hi) = _UNARY[op]
    f = elementwise("k", dtype, [dtype], N, _call(op, dtype))
    lib = build(f, libmvec=libmvec)
    x = np.linspace(lo, hi, N).astype(dtype)
    if op == "round":
        x[:4] = [0.5, 1.5, 2.5, -0.5]  # ties go to even, as numpy does
    out = np.zeros(N, dtype)
    lib["k"](x, out)
    expected = ref(x.astype(np.float64)).astype(dtype)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=1e-6 if dtype == "float32" else 1e-14)


@pytest.mark.parametrize("op", ["exp", "sqrt", "erf", "sigmoid", "floor"])
def test_vector_math(op: str) -> None:
    lanes, n = 8, 32
    ref, (lo, hi) = _UNARY[op]
    k = Kernel("v")
    a, c = k.buffer("A", "float32", n), k.buffer("C", "float32", n)
    i64 = as_dtype("int64")

    def body(i: Var) -> BufferStore:
        idx = Ramp(Mul(i, IntImm(i64, lanes)), IntImm(i64, 1), lanes)
        value = Call(as_dtype("float32x8"), op, (BufferLoad(a, (idx,)),), CallKind.INTRINSIC)
        return BufferStore(c, value, (idx,))

    lib = build(k.func(loop(n // lanes, body)))
    x = np.linspace(lo, hi, n).astype(np.float32)
    out = np.zeros(n, np.float32)
    lib["v"](x, out)
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_pow_fma_and_half_math() -> None:
    f = elementwise("p", "float32", ["float32", "float32"], N, _call("pow", "float32"))
    g = elementwise("f", "float64", ["float64"] * 3, N, _call("fma", "float64"))
    h = elementwise("h", "float16", ["float16"], N, _call("exp", "float16"))
    lib = build([f, g, h])
    x = np.linspace(0.5, 3, N).astype(np.float32)
    y = np.linspace(-2, 2, N).astype(np.float32)
    out = np.zeros(N, np.float32)
    lib["p"](x, y, out)
    np.testing.assert_allclose(out, np.power(x, y), rtol=1e-5)
    a, b, c = (np.linspace(-1, 1, N) * k for k in (1.0, 2.0, 3.0))
    out64 = np.zeros(N)
    lib["f"](a, b, c, out64)
    np.testing.assert_allclose(out64, a * b + c, rtol=1e-12)
    xh = np.linspace(-2, 2, N).astype(np.float16)
    outh = np.zeros(N, np.float16)
    lib["h"](xh, outh)
    np.testing.assert_allclose(outh, np.exp(xh), rtol=1e-3)


def test_isnan_isinf_isfinite() -> None:
    x = np.array([0.0, np.nan, np.inf, -np.inf, 1.5, -0.0, np.nan, 3.0], np.float32)
    for op, ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        f = elementwise(
            "k",
            "bool",
            ["float32"],
            8,
            lambda a, op=op: Call(as_dtype("bool"), op, (a,), CallKind.INTRINSIC),
        )
        out = np.zeros(8, bool)
        build(f)["k"](x, out)
        np.testing.assert_array_equal(out, ref(x), err_msg=op)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32"])
def test_bit_operations(dtype: str) -> None:
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    s = rng.integers(0, info.bits, N).astype(dtype)
    ops = {
        "bitwise_and": (np.bitwise_and, [a, a[::-1].copy()]),
        "bitwise_or": (np.bitwise_or, [a, a[::-1].copy()]),
        "bitwise_xor": (np.bitwise_xor, [a, a[::-1].copy()]),
        "shift_left": (np.left_shift, [a, s]),
        "shift_right": (np.right_shift, [a, s]),  # arithmetic for signed, logical for unsigned
        "bitwise_not": (np.invert, [a]),
    }
    for op, (ref, args) in ops.items():
        f = elementwise("k", dtype, [dtype] * len(args), N, _call(op, dtype))
        out = np.zeros(N, dtype)
        build(f)["k"](*args, out)
        np.testing.assert_array_equal(out, ref(*args), err_msg=op)


def test_integer_abs_and_popcount() -> None:
    f = elementwise("a", "int32", ["int32"], 4, _call("abs", "int32"))
    g = elementwise("p", "uint32", ["uint32"], 4, _call("popcount", "uint32"))
    lib = build([f, g])
    out = np.zeros(4, np.int32)
    lib["a"](np.array([-3, 3, 0, -(2**31) + 1], np.int32), out)
    np.testing.assert_array_equal(out, [3, 3, 0, 2**31 - 1])
    uout = np.zeros(4, np.uint32)
    lib["p"](np.array([0, 1, 255, 2**32 - 1], np.uint32), uout)
    np.testing.assert_array_equal(uout, [0, 1, 8, 32])


@pytest.mark.skipif(
    not libmvec_available() or not host_target().has_avx2, reason="needs glibc libmvec and AVX2"
)
def test_exp_loop_vectorizes_to_libmvec() -> None:
    f = elementwise("k", "float32", ["float32"], 1024, _call("exp", "float32"))
    lib = build(f)
    optimized = lib.lib.llvm_ir
    assert "_ZGVdN8v_expf" in optimized and "<8 x float>" in optimized
    x = np.linspace(-3, 3, 1024).astype(np.float32)
    out = np.zeros(1024, np.float32)
    lib["k"](x, out)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-5)


def test_portable_exp_is_an_inline_polynomial() -> None:
    f = elementwise("k", "float32", ["float32"], 256, _call("exp", "float32"))
    lib = build(f, libmvec=False)
    assert "_ZGV" not in lib.ir and "llvm.exp" not in lib.ir
    x = np.linspace(-20, 20, 256).astype(np.float32)
    out = np.zeros(256, np.float32)
    lib["k"](x, out)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-5)
