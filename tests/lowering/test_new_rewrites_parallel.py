"""The rewrites added for strided, padded and transposed convolutions inside ``T.parallel``
loops: each kernel built for both pinned targets gives the interpreter's arrays bit for bit
(``fp_contract=False``), several runs in a row on all cores (races are nondeterministic),
and its lowered IR shows the rewrite applied inside the parallel loop."""

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
AVX512 = Target("llvm -mcpu=znver4")


def _pinned() -> list[Any]:
    return [
        pytest.param(t, id=t.mcpu, marks=pytest.mark.skipif(
            bool(t.missing_on_host()), reason=f"the host lacks {t.missing_on_host()}"))
        for t in (AVX2, AVX512)
    ]


@T.prim_func
def convt1d_parallel(X: T.Buffer((6, 16), "float32"), W: T.Buffer((6, 8, 4), "float32"),
                     Y: T.Buffer((8, 34), "float32")):
    for o in T.parallel(8):
        for t, c, k in T.grid(34, 6, 4):
            with T.block("convt"):
                vo, vt, vc, vk = T.axis.remap("SSRR", [o, t, c, k])
                with T.init():
                    Y[vo, vt] = T.float32(0)
                Y[vo, vt] = Y[vo, vt] + T.if_then_else(
                    T.floormod(vt - vk, 2) == 0 and 0 <= vt - vk and T.floordiv(vt - vk, 2) < 16,
                    X[vc, T.floordiv(vt - vk, 2)], T.float32(0)) * W[vc, vo, vk]


@T.prim_func
def conv_s2_parallel(data: T.Buffer((4, 18, 18), "float32"),
                     kernel: T.Buffer((8, 4, 3, 3), "float32"),
                     out: T.Buffer((8, 9, 9), "float32")):
    pad = T.alloc_buffer((4, 20, 20))
    for c, h, w in T.grid(4, 20, 20):
        with T.block("pad"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            pad[vc, vh, vw] = T.if_then_else(1 <= vh and vh < 19 and 1 <= vw and vw < 19,
                                             data[vc, vh - 1, vw - 1], T.float32(0))
    for f in T.parallel(8):
        for y, x, rc, ry, rx in T.grid(9, 9, 4, 3, 3):
            with T.block("conv"):
                vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSRRR", [f, y, x, rc, ry, rx])
                with T.init():
                    out[vf, vy, vx] = T.float32(0)
                out[vf, vy, vx] = out[vf, vy, vx] + pad[vrc, vy * 2 + vry, vx * 2 + vrx] * kernel[vf, vrc, vry, vrx]


@T.prim_func
def depthwise_parallel(data: T.Buffer((8, 14, 14), "float32"), kernel: T.Buffer((8, 3, 3), "float32"),
                       out: T.Buffer((8, 7, 7), "float32")):
    pad = T.alloc_buffer((8, 16, 16))
    for c, h, w in T.grid(8, 16, 16):
        with T.block("pad"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            pad[vc, vh, vw] = T.if_then_else(1 <= vh and vh < 15 and 1 <= vw and vw < 15,
                                             data[vc, vh - 1, vw - 1], T.float32(0))
    for c in T.parallel(8):
        for i, j, di, dj in T.grid(7, 7, 3, 3):
            with T.block("dw"):
                vc, vi, vj, vdi, vdj = T.axis.remap("SSSRR", [c, i, j, di, dj])
                with T.init():
                    out[vc, vi, vj] = T.float32(0)
                out[vc, vi, vj] = out[vc, vi, vj] + pad[vc, vi * 2 + vdi, vj * 2 + vdj] * kernel[vc, vdi, vdj]


CASES = [
    (convt1d_parallel, "t_q"),        # interchange_divided_reductions
    # interchange_reductions over a stride-2 row, the pad buffer in the no-alias region
    (conv_s2_parallel, 'pad.data), "tvms.noalias_region"'),
    (depthwise_parallel, "data_flat[c * 196"),  # inline_padding: data read at the window
]


@pytest.mark.parametrize("target", _pinned())
@pytest.mark.parametrize(("func", "sign"), CASES, ids=["convt1d", "conv_s2", "depthwise"])
def test_parallel_kernels_match_the_interpreter_every_run(
    func: PrimFunc, sign: str, target: Target
) -> None:
    text = lowering.lower(func, target=target).script()
    assert "T.parallel(" in text and sign in text
    kernel = tvmscript.build(func, target=target, cache=False, fp_contract=False)
    interp = tvmscript.build(func, target="interp")
    rng = np.random.default_rng(11)
    want = [rng.standard_normal(tuple(int(d) for d in b.shape)).astype("float32")
            for b in func.buffer_map.values()]
    inputs = [a.copy() for a in want]
    interp(*want)
    for _ in range(5):
        got = [a.copy() for a in inputs]
        kernel(*got)
        np.testing.assert_array_equal(got[-1], want[-1])
