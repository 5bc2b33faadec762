"""rolling_buffer on a 1-d difference chain, a doubled 3x3 blur tiled along one or both
axes, and a three-stage 1-d chain with a down- and an up-sampling: the intermediate,
computed tile by tile at the consumer's tile loop, keeps one tile (with its halo) along
the outermost dimension where consecutive tiles overlap, addressed modulo that size, and
each later tile skips the halo the previous one computed; the refusals."""

from __future__ import annotations

import pytest
from extra_checks import assert_native_same, realize_of, region_text
from sched_checks import assert_same_results, assert_schedule, assert_structure
from test_trace_kinds import _replays

from irbuilder.ir import IterKind, expr_text
from tvmscript import tir as T


def _alloc_shapes(sch: T.Schedule) -> dict[str, tuple[int, ...]]:
    root = sch.get(sch.get_block("root"))
    return {b.name: tuple(int(d.value) for d in b.shape) for b in root.alloc_buffers}


def _kinds(sch: T.Schedule, name: str) -> list[IterKind]:
    return [iv.kind for iv in sch.get(sch.get_block(name)).iter_vars]


@T.prim_func
def diff_chain(X: T.Buffer((15,), "int32"), Y: T.Buffer((12,), "int32")):
    S = T.alloc_buffer((14,), "int32")
    for t in range(14):
        with T.block("pair"):
            vt = T.axis.spatial(14, t)
            S[vt] = X[vt] * 2 + X[vt + 1]
    for t in range(12):
        with T.block("gap"):
            vt = T.axis.spatial(12, t)
            Y[vt] = S[vt] - S[vt + 2]


@T.prim_func
def diff_chain_rolled(X: T.Buffer((15,), "int32"), Y: T.Buffer((12,), "int32")):
    S = T.alloc_buffer((6,), "int32")
    for t_0 in range(3):
        for ax0 in range(6):
            with T.block("pair"):
                vt = T.axis.opaque(14, t_0 * 4 + ax0)
                T.where(t_0 < 1 or 2 <= ax0)
                S[vt % 6] = X[vt] * 2 + X[vt + 1]
        for t_1 in range(4):
            with T.block("gap"):
                vt = T.axis.opaque(12, t_0 * 4 + t_1)
                Y[vt] = S[vt % 6] - S[(vt + 2) % 6]


def test_a_difference_chain_in_tiles_of_four():
    sch = T.Schedule(diff_chain, debug_mask="all")  # every step compared by running
    (t,) = sch.get_loops("gap")
    tile, _ = sch.split(t, [None, 4])
    sch.compute_at(sch.get_block("pair"), tile)
    sch.rolling_buffer(sch.get_block("pair"), "S")
    # a tile of 4 differences needs 4 + 2 pairs; the 2 shared with the previous tile stay
    assert_schedule(diff_chain, sch, diff_chain_rolled)
    assert_native_same(diff_chain, sch)
    assert sch.trace.as_python()[-1] == "sch.rolling_buffer(block=b5, write_buffer_index=0)"
    _replays(diff_chain, sch)


@T.prim_func
def blur_twice(img: T.Buffer((10, 11), "float32"), out: T.Buffer((6, 7), "float32")):
    once = T.alloc_buffer((8, 9))
    for h, w, dh, dw in T.grid(8, 9, 3, 3):
        with T.block("blur1"):
            vh, vw, vdh, vdw = T.axis.remap("SSRR", [h, w, dh, dw])
            with T.init():
                once[vh, vw] = T.float32(0)
            once[vh, vw] = once[vh, vw] + img[vh + vdh, vw + vdw] * T.float32(0.125)
    for h, w, dh, dw in T.grid(6, 7, 3, 3):
        with T.block("blur2"):
            vh, vw, vdh, vdw = T.axis.remap("SSRR", [h, w, dh, dw])
            with T.init():
                out[vh, vw] = T.float32(0)
            out[vh, vw] = out[vh, vw] + once[vh + vdh, vw + vdw] * T.float32(0.125)


def _blur_tiles(sch: T.Schedule, th: int, tw: int) -> None:
    h, w, _, _ = sch.get_loops("blur2")
    ho, hi = sch.split(h, [None, th])
    wo, wi = sch.split(w, [None, tw])
    sch.reorder(ho, wo, hi, wi)
    sch.compute_at(sch.get_block("blur1"), wo)


@pytest.mark.parametrize(
    "th, tw, shape, rolled, guard",
    [
        # one tile of rows: the columns roll (4 + 2 of them)
        (6, 4, (8, 6), 1, ["(w_0 < 1)", "(2 <= ax1)", "(((w_0 * 4) + ax1) < 9)"]),
        # one tile of columns: the rows roll
        (2, 7, (4, 9), 0, ["(h_0 < 1)", "(2 <= ax0)"]),
        # both tiled, ragged: the rows (the outer tile loop) roll, both halos skipped
        (4, 3, (6, 9), 0, ["(h_0 < 1)", "(2 <= ax0)", "(w_0 < 1)", "(2 <= ax1)"]),
    ],
    ids=["columns", "rows", "both_ragged"],
)
def test_a_doubled_blur(th, tw, shape, rolled, guard):
    sch = T.Schedule(blur_twice, debug_mask="all")
    _blur_tiles(sch, th, tw)
    sch.rolling_buffer(sch.get_block("blur1"), 0)
    assert _alloc_shapes(sch) == {"once": shape}
    # the rolled dimension's iter var becomes opaque in the producer and the consumer
    for name in ("blur1", "blur2"):
        kinds = _kinds(sch, name)
        assert kinds[rolled] == IterKind.OPAQUE
        assert kinds[1 - rolled] == IterKind.SPATIAL
    producer = sch.get(sch.get_block("blur1"))
    index = expr_text(producer.writes[0].region[rolled].min)
    assert index.endswith(f" % {shape[rolled]})")
    text = expr_text(realize_of(sch, "blur1").predicate)
    for part in guard:
        assert part in text, (part, text)
    assert_native_same(blur_twice, sch)


@T.prim_func
def resample_chain(X: T.Buffer((22,), "int32"), Y: T.Buffer((18,), "int32")):
    P = T.alloc_buffer((21,), "int32")
    Q = T.alloc_buffer((10,), "int32")
    for i in range(21):
        with T.block("sum2"):
            vi = T.axis.spatial(21, i)
            P[vi] = X[vi] + X[vi + 1]
    for j in range(10):
        with T.block("down"):
            vj = T.axis.spatial(10, j)
            Q[vj] = P[vj * 2] - P[vj * 2 + 2]
    for k in range(18):
        with T.block("up"):
            vk = T.axis.spatial(18, k)
            Y[vk] = Q[vk // 2] * 3 + Q[vk // 2 + 1]


def test_a_chain_with_a_stride_and_a_fractional_step():
    sch = T.Schedule(resample_chain, debug_mask="all")
    (k,) = sch.get_loops("up")
    tile, _ = sch.split(k, [None, 6])
    sch.compute_at(sch.get_block("down"), tile)
    sch.compute_at(sch.get_block("sum2"), tile)
    sch.rolling_buffer(sch.get_block("down"), 0)
    sch.rolling_buffer(sch.get_block("sum2"), 0)
    # 6 outputs read 3 + 1 values of Q (one shared), which read 2 * 3 + 3 of P (3 shared)
    assert _alloc_shapes(sch) == {"P": (9,), "Q": (4,)}
    assert expr_text(realize_of(sch, "down").predicate) == "((k_0 < 1) or (1 <= ax0))"
    assert expr_text(realize_of(sch, "sum2").predicate) == "((k_0 < 1) or (3 <= ax0))"
    assert [region_text(r) for r in sch.get(sch.get_block("down")).writes] == ["Q[(vj % 4)]"]
    assert [region_text(r) for r in sch.get(sch.get_block("sum2")).writes] == ["P[(vi % 9)]"]
    # the consumers read through the same modulo
    down_reads = region_text(sch.get(sch.get_block("down")).reads[0])
    assert "((vj * 2) % 9)" in down_reads and "(((vj * 2) + 2) % 9)" in down_reads
    up_reads = region_text(sch.get(sch.get_block("up")).reads[0])
    assert "((vk // 2) % 4)" in up_reads and "(((vk // 2) + 1) % 4)" in up_reads
    assert_native_same(resample_chain, sch)
    _replays(resample_chain, sch)


@T.prim_func
def tiles_apart(A: T.Buffer((12,), "float32"), C: T.Buffer((12,), "float32")):
    B = T.alloc_buffer((12,))
    for t0 in range(3):
        for t1 in range(4):
            with T.block("square"):
                vt = T.axis.spatial(12, t0 * 4 + t1)
                B[vt] = A[vt] * A[vt]
        for t1 in range(4):
            with T.block("shift"):
                vt = T.axis.spatial(12, t0 * 4 + t1)
                C[vt] = B[vt] + T.float32(1)


def test_refusals():
    sch = T.Schedule(diff_chain, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="block 'gap' is an output block"):
        sch.rolling_buffer(sch.get_block("gap"), 0)
    # not computed at the consumer: the common ancestor is the root block, not a loop
    with pytest.raises(T.ScheduleError,
                       match="the lowest common ancestor of block 'pair' and its consumers is"):
        sch.rolling_buffer(sch.get_block("pair"), 0)
    with pytest.raises(T.ScheduleError, match="index 1 is out of range"):
        sch.rolling_buffer(sch.get_block("pair"), 1)
    assert_structure(sch, diff_chain)
    # consecutive tiles touching disjoint elements: nothing to roll
    sch = T.Schedule(tiles_apart, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="no dimension matching the rolling pattern"):
        sch.rolling_buffer(sch.get_block("square"), 0)
    assert_structure(sch, tiles_apart)
    assert_same_results(tiles_apart, sch)


@T.prim_func
def two_writers(X: T.Buffer((14,), "int32"), Y: T.Buffer((12,), "int32")):
    S = T.alloc_buffer((14,), "int32")
    for t0 in range(3):
        for ax0 in range(6):
            with T.block("pair"):
                vt = T.axis.spatial(14, t0 * 4 + ax0)
                S[vt] = X[vt] * 2
        for ax0 in range(6):
            with T.block("bump"):
                vt = T.axis.spatial(14, t0 * 4 + ax0)
                S[vt] = S[vt] + X[vt]
        for t1 in range(4):
            with T.block("gap"):
                vt = T.axis.spatial(12, t0 * 4 + t1)
                Y[vt] = S[vt] - S[vt + 2]


def test_refuses_a_buffer_with_a_second_writer():
    # Rolling "pair" alone would predicate it by its own halo while "bump" keeps its rows:
    # the rewrite is only sound for a buffer with one writer (TVM refuses it as well).
    for name, other in (("pair", "bump"), ("bump", "pair")):
        sch = T.Schedule(two_writers, debug_mask="all")
        with pytest.raises(
            T.ScheduleError,
            match=f"buffer 'S' is also written by block\\(s\\) '{other}': rolling_buffer "
            f"needs '{name}' to be its only writer",
        ):
            sch.rolling_buffer(sch.get_block(name), 0)
        assert_structure(sch, two_writers)
