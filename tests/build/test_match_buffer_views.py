"""Block-level T.match_buffer views: offsets and strides as TVM's LowerMatchBuffer binds them.

Native code (pinned target) and the interpreter must agree with the values worked out by
hand here.
"""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T

TARGETS = [tvmscript.Target("llvm -mcpu=znver3"), "interp"]


@T.prim_func
def tile_offsets(A: T.Buffer((6, 8), "float32"), Out: T.Buffer((3, 2, 4), "int32")):
    for i, j in T.grid(3, 2):
        with T.block("tile"):
            vi, vj = T.axis.remap("SS", [i, j])
            t0 = T.int32()
            t1 = T.int32()
            S = T.match_buffer(
                A[vi * 2 : vi * 2 + 2, vj * 4 : vj * 4 + 4], (2, 4),
                strides=[t0, t1], offset_factor=1,
            )
            S[1, 3] = T.float32(1)
            Out[vi, vj, 0] = S.elem_offset
            Out[vi, vj, 1] = S.strides[0]
            Out[vi, vj, 2] = S.strides[1]
            Out[vi, vj, 3] = S.shape[1]


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_offset_factor_gives_the_view_its_region_offset(target: object) -> None:
    a = np.zeros((6, 8), "float32")
    o = np.zeros((3, 2, 4), "int32")
    tvmscript.build(tile_offsets, target=target)(a, o)
    want = np.array([[[i * 16 + j * 4, 8, 1, 4] for j in range(2)] for i in range(3)])
    np.testing.assert_array_equal(o, want)
    assert a.sum() == 6 and a[1, 3] == 1 and a[5, 7] == 1


@T.prim_func
def point_offsets(Out: T.Buffer((4, 4), "int32"), B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("pt"):
            vi, vj = T.axis.remap("SS", [i, j])
            P = T.match_buffer(B[vi, vj], (), offset_factor=1)
            P[()] = T.float32(2)
            Out[vi, vj] = P.elem_offset


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_rank0_view_offset(target: object) -> None:
    o = np.full((4, 4), -1, "int32")
    b = np.zeros((4, 4), "float32")
    tvmscript.build(point_offsets, target=target)(o, b)
    np.testing.assert_array_equal(o.ravel(), np.arange(16))
    assert (b == 2).all()


@T.prim_func
def compact_view_of_strided_region(
    A: T.Buffer((8, 4, 8), "float32"), C: T.Buffer((8, 8), "float32")
):
    for i, j, k in T.grid(2, 4, 4):
        with T.block("acc"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            sub_A = T.match_buffer(
                A[vi * 4 : vi * 4 + 4, vj, vk * 2 : vk * 2 + 2], (4, 1, 2), offset_factor=1
            )
            sub_C = T.match_buffer(C[vi * 4 : vi * 4 + 4, vk * 2 : vk * 2 + 2], (4, 2))
            for ii, kk in T.grid(4, 2):
                sub_A[ii, 0, kk] = sub_A[ii, 0, kk] + sub_C[ii, kk]


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_view_without_strides_indexes_its_source_region(target: object) -> None:
    # No strides declared: the view's indices are added to the region's start in the
    # source (TVM), so it walks the source's own strides; nothing to refuse.
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 4, 8)).astype("float32")
    c = rng.standard_normal((8, 8)).astype("float32")
    want = a + c[:, None, :]
    tvmscript.build(compact_view_of_strided_region, target=target)(a, c)
    np.testing.assert_allclose(a, want, rtol=1e-6)
