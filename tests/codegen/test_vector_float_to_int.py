"""Vector float -> integer casts saturate like the scalar ones (out-of-range lanes clamp to the
integer range, NaN gives 0; backend/codegen/expr.py ``saturating_vector_cast``), and compile
to packed conversions rather than one lane at a time."""

from __future__ import annotations

import numpy as np
import pytest
from cgkit import code_for

import tvmscript
from lowering.target import Target
from tvmscript import tir as T

AVX2 = Target("llvm -mcpu=znver3")
AVX512 = Target("llvm -mcpu=znver4")
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
N = 64


def _cast_kernel(src: str, dst: str, vectorized: bool):  # type: ignore[no-untyped-def]
    if vectorized:
        @T.prim_func
        def cast_lanes(A: T.Buffer((N,), src), B: T.Buffer((N,), dst)):
            for i in T.vectorized(N):
                B[i] = T.Cast(dst, A[i])

        return cast_lanes

    @T.prim_func
    def cast_serial(A: T.Buffer((N,), src), B: T.Buffer((N,), dst)):
        for i in T.serial(N):
            B[i] = T.Cast(dst, A[i])

    return cast_serial


def _edges(src: str, dst: str) -> np.ndarray:
    """NaN, infinities, the integer range's ends and the floats around them, fractions."""
    info = np.iinfo(dst)
    ftype = np.dtype(src).type
    values: list[float] = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0.999,
                           -0.999, 1.5, -1.5, 1e30, -1e30]
    for end in (info.min, info.max, info.max + 1, info.min - 1):
        near = ftype(end)
        values += [float(near), float(np.nextafter(near, ftype(np.inf))),
                   float(np.nextafter(near, ftype(-np.inf)))]
    rng = np.random.default_rng(3)
    spread = float(info.max) * 1.5
    values += list(rng.uniform(-spread, spread, N))
    with np.errstate(over="ignore"):
        return np.array(values[:N], dtype=src)


def _saturated(a: np.ndarray, dst: str) -> np.ndarray:
    """The saturating semantics, computed exactly (Python integers)."""
    info = np.iinfo(dst)
    out = []
    for x in a.tolist():
        if x != x:
            out.append(0)
        elif x == float("inf") or x >= info.max:
            out.append(info.max)
        elif x == float("-inf") or x <= info.min:
            out.append(info.min)
        else:
            out.append(int(x))  # truncates toward zero
    return np.array(out, dtype=dst)


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize("dst", INTS)
def test_vector_casts_saturate_like_scalar_ones(target: Target, src: str, dst: str) -> None:
    missing = target.missing_on_host()
    if missing:
        pytest.skip(f"the host lacks {', '.join(missing)} (target {target.mcpu})")
    a = _edges(src, dst)
    got = {}
    for vectorized in (True, False):
        out = np.full(N, 7, dst)
        tvmscript.build(_cast_kernel(src, dst, vectorized), target=target, cache=False)(a, out)
        got[vectorized] = out
    want = _saturated(a, dst)
    np.testing.assert_array_equal(got[False], want)
    np.testing.assert_array_equal(got[True], want)


@pytest.mark.parametrize("dst", ["int8", "uint8", "int16", "int32"])
def test_vector_casts_are_packed_conversions(dst: str) -> None:
    _, asm = code_for(_cast_kernel("float32", dst, True), AVX512)
    assert "vcvttps2dq" in asm or "vcvttps2udq" in asm
    assert "vcvttss2si" not in asm  # no lane converted on its own


@T.prim_func
def quantize(A: T.Buffer((64,), "float32"), Q: T.Buffer((64,), "int8"), R: T.Buffer((64,), "int8")):
    for i in T.vectorized(64):
        Q[i] = T.Cast("int8", T.min(T.max(T.round(A[i]), T.float32(-128)), T.float32(127)))
        R[i] = T.Cast("int8", T.min(T.float32(127.9), T.max(T.float32(-128), A[i])))


def test_a_clamped_value_converts_without_saturation_code() -> None:
    ir, _ = code_for(quantize, AVX512)
    casts = [line.split("=", 1)[1].split() for line in ir.splitlines() if "fptosi" in line]
    # the first clamp ends in range and never NaN: a plain conversion of the clamp; the
    # second keeps a NaN (T.min(c, a) and T.max(c, a) pick a NaN a), so its cast saturates
    assert any(words[4].startswith("%min") for words in casts)
    assert any(words[4].startswith("%sat") for words in casts) and "fcmp uno" in ir


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
def test_clamped_casts_agree_with_the_interpreter(target: Target) -> None:
    missing = target.missing_on_host()
    if missing:
        pytest.skip(f"the host lacks {', '.join(missing)} (target {target.mcpu})")
    a = _edges("float32", "int8")
    outs = {}
    for name, tgt in (("native", target), ("interp", "interp")):
        q = np.full(N, 7, "int8")
        r = np.full(N, 7, "int8")
        tvmscript.build(quantize, target=tgt, cache=False)(a, q, r)
        outs[name] = (q, r)
    np.testing.assert_array_equal(outs["native"][0], outs["interp"][0])
    np.testing.assert_array_equal(outs["native"][1], outs["interp"][1])
    assert outs["native"][1][0] == 0  # NaN kept by the clamps, then saturated to 0
