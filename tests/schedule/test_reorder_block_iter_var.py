"""reorder_block_iter_var on a column sum and a split-loop transpose: the block lists its
iter vars (kinds, domains and bindings travelling with them) in the requested order and
nothing else moves; orders that are not permutations are refused."""

from __future__ import annotations

import pytest
from extra_checks import assert_native_same, bindings, func_of
from sched_checks import assert_same_results, assert_schedule, assert_structure
from test_trace_kinds import _replays

from irbuilder.ir import IterKind
from tvmscript import tir as T


@T.prim_func
def column_sums(W: T.Buffer((6, 4, 5), "float32"), S: T.Buffer((4, 5), "float32")):
    for b, j, k in T.grid(4, 5, 6):
        with T.block("colsum"):
            vb, vj, vk = T.axis.remap("SSR", [b, j, k])
            with T.init():
                S[vb, vj] = T.float32(1)
            S[vb, vj] = S[vb, vj] + W[vk, vb, vj] * T.float32(0.5)


@T.prim_func
def tiled_transpose(X: T.Buffer((12, 8), "int16"), Y: T.Buffer((8, 12), "int16")):
    for r0, c, r1 in T.grid(3, 8, 4):
        with T.block("flip"):
            vr = T.axis.spatial(12, r0 * 4 + r1)
            vc = T.axis.spatial(8, c)
            Y[vc, vr] = X[vr, vc] - T.int16(3)


def _kinds(sch: T.Schedule, block: T.BlockRV) -> list[IterKind]:
    return [iv.kind for iv in sch.get(block).iter_vars]


def test_rotation_moves_kinds_domains_and_bindings():
    sch = T.Schedule(column_sums, debug_mask="all")
    block = sch.get_block("colsum")
    before = sch.get(block)
    sch.reorder_block_iter_var(block, [2, 0, 1])
    after = sch.get(block)  # the handle follows the rewritten block
    assert [iv.var.name for iv in after.iter_vars] == ["vk", "vb", "vj"]
    assert _kinds(sch, block) == [IterKind.REDUCE, IterKind.SPATIAL, IterKind.SPATIAL]
    assert [int(iv.dom.extent.value) for iv in after.iter_vars] == [6, 4, 5]
    assert bindings(sch, block) == ["vk=k", "vb=b", "vj=j"]
    # the very same variables: the body, init and regions are not rewritten
    assert {id(iv.var) for iv in after.iter_vars} == {id(iv.var) for iv in before.iter_vars}
    assert after.body is before.body and after.init is before.init
    assert_same_results(column_sums, sch)
    assert_native_same(column_sums, sch)
    assert sch.trace.as_python()[1] == "sch.reorder_block_iter_var(block=b0, new_order=[2, 0, 1])"
    _replays(column_sums, sch)


@T.prim_func
def tiled_transpose_swapped(X: T.Buffer((12, 8), "int16"), Y: T.Buffer((8, 12), "int16")):
    for r0, c, r1 in T.grid(3, 8, 4):
        with T.block("flip"):
            vc = T.axis.spatial(8, c)
            vr = T.axis.spatial(12, r0 * 4 + r1)
            T.reads(X[vr, vc])
            T.writes(Y[vc, vr])
            Y[vc, vr] = X[vr, vc] - T.int16(3)


def test_compound_bindings_swap_with_their_vars():
    sch = T.Schedule(tiled_transpose, debug_mask="all")
    sch.reorder_block_iter_var("flip", [1, 0])
    assert bindings(sch, "flip") == ["vc=c", "vr=((r0 * 4) + r1)"]
    assert_schedule(tiled_transpose, sch, tiled_transpose_swapped)
    assert_native_same(tiled_transpose, sch)
    # later loop primitives see the new order and still work
    r0, c, r1 = sch.get_loops("flip")
    sch.reorder(c, r0, r1)
    assert_same_results(tiled_transpose, sch)
    _replays(tiled_transpose, sch)


def test_two_reorders_compose_to_the_identity():
    sch = T.Schedule(column_sums, debug_mask="all")
    sch.reorder_block_iter_var("colsum", [1, 2, 0])  # vj, vk, vb
    sch.reorder_block_iter_var("colsum", [2, 0, 1])  # vb, vj, vk
    assert bindings(sch, "colsum") == ["vb=b", "vj=j", "vk=k"]
    plain = T.Schedule(column_sums)
    plain.reorder_block_iter_var("colsum", [0, 1, 2])
    assert_structure(sch, func_of(plain))
    assert_schedule(column_sums, plain, func_of(plain))


@pytest.mark.parametrize(
    "order",
    [[1, 0], [0, 1, 2, 3], [1, 1, 0], [0, 2, 3], [-3, 1, 2], []],
    ids=["short", "long", "repeated", "out_of_range", "negative", "empty"],
)
def test_orders_that_are_not_permutations(order):
    sch = T.Schedule(column_sums, debug_mask="all")
    with pytest.raises(T.ScheduleError, match=r"is not a permutation of \[0, 1, \.\.\., 2\]"):
        sch.reorder_block_iter_var(sch.get_block("colsum"), order)
    # nothing applied, nothing recorded
    assert_structure(sch, column_sums)
    assert sch.trace.as_python()[-1] == 'b0 = sch.get_block(name="colsum", func_name="main")'
