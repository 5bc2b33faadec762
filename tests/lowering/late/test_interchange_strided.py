"""``interchange_reductions`` on a strided convolution: the output row goes below the
reduction loops though the input is read every second (third, fourth) element along it
(LLVM loads such a row as an interleaved group), and the function's own arrays the nest
reads (the padding stage's output) are listed in the no-alias region (they never overlap a
parameter) so LLVM vectorizes the row without run-time checks of its own."""

from __future__ import annotations

import pytest
from late_kit import assert_same_numbers, before_late, loops, run_pass, runs_avx2, versioning_ifs

from irbuilder.ir import PrimFunc
from irbuilder.ir.functor import post_order_visit
from lowering.late.alias_version import NOALIAS_ATTR
from tvmscript import tir as T


@T.prim_func
def conv_s2(data: T.Buffer((4, 18, 18), "float32"), kernel: T.Buffer((6, 4, 3, 3), "float32"),
            out: T.Buffer((6, 9, 9), "float32")):
    pad = T.alloc_buffer((4, 20, 20))
    for c, h, w in T.grid(4, 20, 20):
        with T.block("pad"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            pad[vc, vh, vw] = T.if_then_else(1 <= vh and vh < 19 and 1 <= vw and vw < 19,
                                             data[vc, vh - 1, vw - 1], T.float32(0))
    for f, y, x, rc, ry, rx in T.grid(6, 9, 9, 4, 3, 3):
        with T.block("conv"):
            vf, vy, vx, vrc, vry, vrx = T.axis.remap("SSSRRR", [f, y, x, rc, ry, rx])
            with T.init():
                out[vf, vy, vx] = T.float32(0)
            out[vf, vy, vx] = out[vf, vy, vx] + pad[vrc, vy * 2 + vry, vx * 2 + vrx] * kernel[vf, vrc, vry, vrx]


@T.prim_func
def stride5(A: T.Buffer((32, 100), "float32"), W: T.Buffer((32,), "float32"),
            Y: T.Buffer((20,), "float32")):
    for x, c in T.grid(20, 32):
        with T.block("Y"):
            vx, vc = T.axis.remap("SR", [x, c])
            with T.init():
                Y[vx] = T.float32(0)
            Y[vx] = Y[vx] + A[vc, vx * 5] * W[vc]


@T.prim_func
def stride2(A: T.Buffer((32, 100), "float32"), W: T.Buffer((32,), "float32"),
            Y: T.Buffer((20,), "float32")):
    for x, c in T.grid(20, 32):
        with T.block("Y"):
            vx, vc = T.axis.remap("SR", [x, c])
            with T.init():
                Y[vx] = T.float32(0)
            Y[vx] = Y[vx] + A[vc, vx * 2] * W[vc]


def _names(stmt: object) -> list[str]:
    found: list[str] = []
    post_order_visit(stmt, lambda n: found.append(n.name)  # type: ignore[arg-type]
                     if type(n).__name__ == "Var" else None)
    return found


def test_a_stride_2_row_goes_inside_with_the_pad_buffer_in_the_region() -> None:
    before = before_late(conv_s2)
    after = run_pass("interchange_reductions", before)
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    region = branch.then_case
    listed = [v.name for v in region.node]  # type: ignore[attr-defined]
    assert listed[0].startswith("out") and any(n.startswith("pad") for n in listed)
    # the no-overlap test is about the parameters only: the pad buffer is the function's own
    assert not any(n.startswith("pad") for n in _names(branch.condition))
    inner = [lp for lp in loops(after) if lp.body.__class__.__name__ == "BufferStore"]
    assert any(lp.loop_var.name.startswith("x") and "rx" in _names(lp.body) for lp in inner)


@runs_avx2
def test_same_numbers_before_and_after() -> None:
    before = before_late(conv_s2)
    after = run_pass("interchange_reductions", before)
    assert after is not before
    assert_same_numbers(conv_s2, before, after)


@pytest.mark.parametrize(("func", "moved"), [(stride2, True), (stride5, False)],
                         ids=["stride2", "stride5"])
def test_strides_up_to_4_are_taken(func: PrimFunc, moved: bool) -> None:
    before = before_late(func)
    assert (run_pass("interchange_reductions", before) is not before) is moved
