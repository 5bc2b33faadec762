"""``inline_padding``: a padding stage whose array is read back without reuse (a depthwise
convolution's or a pool's window) is computed at its loads; one read again by a loop that
does not move the index (a dense or grouped convolution's output channels) stays. The
outputs are the interpreter's, bit for bit, also when an output overlaps the padded input
(the stages as written run then)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import PrimFunc
from lowering.target import Target
from tvmscript import tir as T

AVX2 = Target("llvm -mcpu=znver3")
runs_avx2 = pytest.mark.skipif(
    bool(AVX2.missing_on_host()),
    reason=f"the host lacks {', '.join(AVX2.missing_on_host())} (target znver3)",
)


@T.prim_func
def depthwise_s2(data: T.Buffer((1, 4, 14, 14), "float32"), kernel: T.Buffer((4, 1, 3, 3), "float32"),
                 out: T.Buffer((1, 4, 7, 7), "float32")):
    pad_temp = T.alloc_buffer((1, 4, 16, 16))
    for i0, i1, i2, i3 in T.grid(1, 4, 16, 16):
        with T.block("pad_temp"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v0, v1, v2, v3] = T.if_then_else(
                1 <= v2 and v2 < 15 and 1 <= v3 and v3 < 15, data[v0, v1, v2 - 1, v3 - 1], T.float32(0))
    for b, c, i, j, di, dj in T.grid(1, 4, 7, 7, 3, 3):
        with T.block("depthwise"):
            vb, vc, vi, vj, vdi, vdj = T.axis.remap("SSSSRR", [b, c, i, j, di, dj])
            with T.init():
                out[vb, vc, vi, vj] = T.float32(0)
            out[vb, vc, vi, vj] = out[vb, vc, vi, vj] + pad_temp[vb, vc, vi * 2 + vdi, vj * 2 + vdj] * kernel[vc, 0, vdi, vdj]


@T.prim_func
def maxpool_pad(data: T.Buffer((2, 3, 9, 9), "float32"), out: T.Buffer((2, 3, 5, 5), "float32")):
    pad_temp = T.alloc_buffer((2, 3, 11, 11))
    for i0, i1, i2, i3 in T.grid(2, 3, 11, 11):
        with T.block("pad_temp"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v0, v1, v2, v3] = T.if_then_else(
                1 <= v2 and v2 < 10 and 1 <= v3 and v3 < 10, data[v0, v1, v2 - 1, v3 - 1],
                T.float32(-3.4028234663852886e38))
    for n, c, y, x, ry, rx in T.grid(2, 3, 5, 5, 3, 3):
        with T.block("pool_max"):
            vn, vc, vy, vx, vry, vrx = T.axis.remap("SSSSRR", [n, c, y, x, ry, rx])
            with T.init():
                out[vn, vc, vy, vx] = T.float32(-3.4028234663852886e38)
            out[vn, vc, vy, vx] = T.max(out[vn, vc, vy, vx], pad_temp[vn, vc, vy * 2 + vry, vx * 2 + vrx])


@T.prim_func
def dense_conv(data: T.Buffer((1, 3, 8, 8), "float32"), kernel: T.Buffer((5, 3, 3, 3), "float32"),
               out: T.Buffer((1, 5, 8, 8), "float32")):
    pad_temp = T.alloc_buffer((1, 3, 10, 10))
    for i0, i1, i2, i3 in T.grid(1, 3, 10, 10):
        with T.block("pad_temp"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v0, v1, v2, v3] = T.if_then_else(
                1 <= v2 and v2 < 9 and 1 <= v3 and v3 < 9, data[v0, v1, v2 - 1, v3 - 1], T.float32(0))
    for n, f, y, x, rc, ry, rx in T.grid(1, 5, 8, 8, 3, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                out[vn, vf, vy, vx] = T.float32(0)
            out[vn, vf, vy, vx] = out[vn, vf, vy, vx] + pad_temp[vn, vrc, vy + vry, vx + vrx] * kernel[vf, vrc, vry, vrx]


@T.prim_func
def grouped_conv(data: T.Buffer((1, 4, 8, 8), "float32"), kernel: T.Buffer((4, 2, 3, 3), "float32"),
                 out: T.Buffer((1, 4, 8, 8), "float32")):
    pad_temp = T.alloc_buffer((1, 4, 10, 10))
    for i0, i1, i2, i3 in T.grid(1, 4, 10, 10):
        with T.block("pad_temp"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            pad_temp[v0, v1, v2, v3] = T.if_then_else(
                1 <= v2 and v2 < 9 and 1 <= v3 and v3 < 9, data[v0, v1, v2 - 1, v3 - 1], T.float32(0))
    for n, f, y, x, rc, ry, rx in T.grid(1, 4, 8, 8, 2, 3, 3):
        with T.block("conv"):
            vn, vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSSRRR", [n, f, y, x, rc, ry, rx])
            with T.init():
                out[vn, vf, vy, vx] = T.float32(0)
            out[vn, vf, vy, vx] = out[vn, vf, vy, vx] + pad_temp[vn, vf // 2 * 2 + vrc, vy + vry, vx + vrx] * kernel[vf, vrc, vry, vrx]


@T.prim_func
def costly_stage(A: T.Buffer((64,), "float32"), B: T.Buffer((62,), "float32")):
    E = T.alloc_buffer((64,))
    for i in range(64):
        E[i] = T.exp(A[i])
    for i in range(62):
        B[i] = E[i] + E[i + 1] + E[i + 2]


@T.prim_func
def partial_stage(A: T.Buffer((64,), "float32"), B: T.Buffer((62,), "float32")):
    P = T.alloc_buffer((64,))
    for i in range(62):
        P[i] = T.if_then_else(i < 60, A[i], T.float32(0))
    for i in range(62):
        B[i] = P[i]


def _after_inline(func: PrimFunc) -> str:
    """The function's text right after ``inline_padding``."""
    seen: list[str] = []

    class Capture:
        def before_pass(self, name: str, ir: Any) -> None:
            pass

        def after_pass(self, name: str, ir: Any, seconds: float) -> None:
            if name == "inline_padding" and not seen:
                seen.append(ir.script())

    lowering.lower(func, target=AVX2, instruments=[Capture()])
    return seen[0]


@pytest.mark.parametrize(("func", "inlined"), [
    (depthwise_s2, "data[b, c, i * 2 + di - 1, j * 2 + dj - 1]"),
    (maxpool_pad, "data[n, c, y * 2 + ry - 1, x * 2 + rx - 1]"),
], ids=["depthwise", "maxpool"])
def test_a_window_reading_the_padded_array_computes_the_padding(
    func: PrimFunc, inlined: str
) -> None:
    text = _after_inline(func)
    # the padded array only in the branch run when an output overlaps the input
    fast, slow = text.split("else:", 1)
    assert "pad_temp[" not in fast and inlined in fast and "T.if_then_else(" in fast
    assert "pad_temp[" in slow


@pytest.mark.parametrize(("func", "stage"), [
    (dense_conv, "pad_temp"), (grouped_conv, "pad_temp"), (costly_stage, "E"),
    (partial_stage, "P"),
], ids=["dense", "grouped", "costly_value", "partial_cover"])
def test_other_stages_stay(func: PrimFunc, stage: str) -> None:
    text = _after_inline(func)
    assert f"{stage} = T.decl_buffer(" in text
    assert text.count(f"{stage}[") >= 2  # stored and loaded
    assert "else:" not in text


def _random(func: PrimFunc, seed: int) -> list[np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(int(d) for d in b.shape)).astype("float32")
            for b in func.buffer_map.values()]


@runs_avx2
@pytest.mark.parametrize("func", [depthwise_s2, maxpool_pad], ids=["depthwise", "maxpool"])
def test_same_numbers_as_the_interpreter(func: PrimFunc) -> None:
    kernel = tvmscript.build(func, target=AVX2, cache=False, fp_contract=False)
    reference = tvmscript.build(func, target="interp")
    for seed in range(3):
        want, got = _random(func, seed), _random(func, seed)
        reference(*want)
        kernel(*got)
        np.testing.assert_array_equal(got[-1], want[-1])


@runs_avx2
def test_an_output_over_the_input_runs_the_stages_as_written() -> None:
    # out's 196 elements overlap the start of data: the padded copy is taken before any
    # output is written, so the interpreter's answer reads data as it was
    def views() -> list[np.ndarray[Any, Any]]:
        storage = np.random.default_rng(5).standard_normal(784 + 36).astype("float32")
        data = storage[:784].reshape(1, 4, 14, 14)
        kernel = storage[784:].reshape(4, 1, 3, 3)
        out = storage[:196].reshape(1, 4, 7, 7)
        return [data, kernel, out]

    want = views()
    tvmscript.build(depthwise_s2, target="interp")(*want)
    got = views()
    tvmscript.build(depthwise_s2, target=AVX2, cache=False, fp_contract=False)(*got)
    np.testing.assert_array_equal(got[-1], want[-1])
