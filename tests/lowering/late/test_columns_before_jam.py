"""A parallel loop over columns that ``vectorize_parallel_columns`` runs in vector lanes is
left to it by the late passes before it: ``jam_parallel_reductions`` no longer interleaves
its scalar chains and ``branch_select_updates`` no longer turns its selects into branches
(a column argmax, as TVM prints a tuple reduction down the columns, parallel over them: 13 -> 0.8 ms on an
Intel AVX-512 host). A row argmax keeps its predicted branches."""

from __future__ import annotations

import numpy as np
import pytest
from late_kit import AVX2, pinned_targets

import lowering
import tvmscript
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def argmax_columns(A: T.Buffer((64, 256), "float32"), idx: T.Buffer((256,), "int32")):
    best = T.alloc_buffer((256,))
    for j in T.parallel(256):
        for i in range(64):
            with T.block("argmax"):
                vj, vi = T.axis.remap("SR", [j, i])
                with T.init():
                    idx[vj] = -1
                    best[vj] = T.float32(-3.4028234663852886e38)
                v_idx: T.int32 = T.Select(best[vj] > A[vi, vj] or (best[vj] == A[vi, vj] and idx[vj] < vi), idx[vj], vi)
                v_val: T.float32 = T.Select(best[vj] > A[vi, vj] or (best[vj] == A[vi, vj] and idx[vj] < vi), best[vj], A[vi, vj])
                idx[vj] = v_idx
                best[vj] = v_val


@T.prim_func
def argmax_rows(A: T.Buffer((256, 64), "float32"), idx: T.Buffer((256,), "int32")):
    best = T.alloc_buffer((256,))
    for i in T.parallel(256):
        for k in range(64):
            with T.block("argmax"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    idx[vi] = -1
                    best[vi] = T.float32(-3.4028234663852886e38)
                v_idx: T.int32 = T.Select(best[vi] > A[vi, vk] or (best[vi] == A[vi, vk] and idx[vi] < vk), idx[vi], vk)
                v_val: T.float32 = T.Select(best[vi] > A[vi, vk] or (best[vi] == A[vi, vk] and idx[vi] < vk), best[vi], A[vi, vk])
                idx[vi] = v_idx
                best[vi] = v_val


def test_the_column_loop_runs_in_lanes_not_jammed() -> None:
    text = lowering.lower(argmax_columns, target=AVX2).script()
    assert "j_lanes" in text and "_jam" not in text
    fast = text.split("else:")[0]
    assert "T.Select(" in fast and "if not (" not in fast


def test_a_row_argmax_keeps_its_branches() -> None:
    text = lowering.lower(argmax_rows, target=AVX2).script()
    assert "if not (" in text and "_lanes" not in text


@pytest.mark.parametrize("target", pinned_targets())
def test_same_indices_as_the_interpreter(target: Target) -> None:
    kernel = tvmscript.build(argmax_columns, target=target, cache=False)
    interp = tvmscript.build(argmax_columns, target="interp")
    rng = np.random.default_rng(3)
    for _ in range(3):
        a = rng.integers(-4, 4, (64, 256)).astype("float32")  # ties: the first index wins
        got, want = np.zeros(256, "int32"), np.zeros(256, "int32")
        kernel(a, got)
        interp(a, want)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, a.argmax(0))
