"""cache_index on a strided gather (integer index arithmetic over one and two iter vars) and
a linear stretch (float index arithmetic): the block's pure index computations, those seen
at least ``cse_thresh`` times, are computed once per index value into ``index_var_<k>`` by
``index_<k>`` blocks placed before the block, which then loads them; refusals."""

from __future__ import annotations

import pytest
from extra_checks import assert_native_same, bindings, block_names, func_of
from sched_checks import assert_same_results, assert_structure
from test_trace_kinds import _replays

from irbuilder.ir import BufferLoad, expr_text, post_order_visit, strip_parens
from tvmscript import tir as T


@T.prim_func
def strided_gather(img: T.Buffer((2, 6, 9), "int32"), out: T.Buffer((2, 12, 10), "int32")):
    for n, r, c in T.grid(2, 12, 10):
        with T.block("pick"):
            vn, vr, vc = T.axis.remap("SSS", [n, r, c])
            out[vn, vr, vc] = img[vn, vr // 2, (vc * 4) // 5] + img[vn, vr // 2, (vr + vc) % 9]


def _caches(sch: T.Schedule) -> list[tuple[str, tuple[int, ...], str, str]]:
    root = sch.get(sch.get_block("root"))
    return [
        (b.name, tuple(int(d.value) for d in b.shape), str(b.dtype), b.scope)
        for b in root.alloc_buffers
    ]


def _loaded(sch: T.Schedule, block: str) -> set[str]:
    names: set[str] = set()
    post_order_visit(
        sch.get(sch.get_block(block)).body,
        lambda n: names.add(n.buffer.name) if isinstance(n, BufferLoad) else None,
    )
    return names


def test_every_index_computation_at_threshold_zero():
    sch = T.Schedule(strided_gather, debug_mask="all")
    stages = sch.cache_index(sch.get_block("pick"), "global")
    assert [sch.get(b).name_hint for b in stages] == ["index_0", "index_1", "index_2"]
    # one entry per value of the iter vars an index uses: c alone, (r, c), r alone
    assert _caches(sch) == [
        ("index_var_0", (10,), "int32", "global"),
        ("index_var_1", (12, 10), "int32", "global"),
        ("index_var_2", (12,), "int32", "global"),
    ]
    assert bindings(sch, stages[1]) == ["v0=ax0", "v1=ax1"]
    assert block_names(func_of(sch)) == ["index_0", "index_1", "index_2", "pick"]
    assert _loaded(sch, "pick") == {"img", "index_var_0", "index_var_1", "index_var_2"}
    assert_native_same(strided_gather, sch)
    assert sch.trace.as_python()[1] == (
        'b1, b2, b3 = sch.cache_index(block=b0, storage_scope="global", cse_thresh=0)'
    )
    _replays(strided_gather, sch)


def test_a_threshold_keeps_only_the_repeated_index():
    sch = T.Schedule(strided_gather, debug_mask="all")
    (stage,) = sch.cache_index("pick", "local", 2)
    # r // 2 indexes both loads; the others once each
    assert _caches(sch) == [("index_var_0", (12,), "int32", "local")]
    assert _loaded(sch, "index_0") == set()
    assert _loaded(sch, "pick") == {"img", "index_var_0"}
    assert sch.get(stage).name_hint == "index_0"
    assert_same_results(strided_gather, sch)


@pytest.mark.parametrize("thresh", [3, 40])
def test_a_threshold_above_every_count_changes_nothing(thresh):
    sch = T.Schedule(strided_gather, debug_mask="all")
    assert sch.cache_index(sch.get_block("pick"), "global", thresh) == []
    assert_structure(sch, strided_gather)


@T.prim_func
def stretch(x: T.Buffer((8,), "float32"), y: T.Buffer((13,), "float32")):
    for i in range(13):
        with T.block("lerp"):
            vi = T.axis.spatial(13, i)
            y[vi] = x[T.min(T.Cast("int32", T.floor(T.Cast("float32", vi) * T.float32(0.55))), 7)] * (  # noqa: E501
                T.Cast("float32", vi) * T.float32(0.55)
                - T.floor(T.Cast("float32", vi) * T.float32(0.55))
            ) + x[T.min(T.Cast("int32", T.floor(T.Cast("float32", vi) * T.float32(0.55))) + 1, 7)] * (  # noqa: E501
                T.float32(1)
                - (T.Cast("float32", vi) * T.float32(0.55)
                   - T.floor(T.Cast("float32", vi) * T.float32(0.55)))
            )


@pytest.mark.parametrize(
    "thresh, caches",
    [
        # everything pure in vi: both clamped positions, the fraction and its complement
        (0, [("float32",), ("float32",), ("int32",), ("int32",)]),
        # the fraction and the integer position, each used twice
        (2, [("float32",), ("int32",)]),
        # only the floor, used four times
        (3, [("float32",)]),
    ],
)
def test_float_index_arithmetic(thresh, caches):
    sch = T.Schedule(stretch, debug_mask="all")
    stages = sch.cache_index(sch.get_block("lerp"), "global", thresh)
    assert len(stages) == len(caches)
    assert [(dtype,) for _, shape, dtype, _ in _caches(sch)] == caches
    assert all(shape == (13,) for _, shape, _, _ in _caches(sch))
    assert _loaded(sch, "lerp") == {"x"} | {f"index_var_{k}" for k in range(len(caches))}
    assert_native_same(stretch, sch)
    _replays(stretch, sch)


def test_refusals():
    sch = T.Schedule(strided_gather, debug_mask="all")
    with pytest.raises(T.ScheduleError, match="'elsewhere' is not a storage scope"):
        sch.cache_index(sch.get_block("pick"), "elsewhere")
    with pytest.raises(T.ScheduleError, match="cse_thresh must not be negative, got -2"):
        sch.cache_index(sch.get_block("pick"), "global", -2)
    assert_structure(sch, strided_gather)


@T.prim_func
def tail_rows(src: T.Buffer((20,), "int32"), dst: T.Buffer((9,), "int32")):
    for r in T.serial(3, 9):
        with T.block("odd"):
            vr = T.axis.spatial(9, r)
            dst[vr] = src[vr * 2 + 1]


def test_a_loop_not_starting_at_zero():
    # the stage runs over the loop's own range (it ran 0..5, leaving rows 6..8 of the cache
    # unset for the block to read)
    sch = T.Schedule(tail_rows, debug_mask="all")
    sch.cache_index("odd", "global")
    loop = sch.get(sch.get_loops("index_0")[0])
    assert (int(loop.min.value), int(loop.extent.value)) == (3, 6)
    assert_same_results(tail_rows, sch)
    assert_native_same(tail_rows, sch)
    _replays(tail_rows, sch)


@T.prim_func
def shifted_window(x: T.Buffer((12,), "float32"), y: T.Buffer((8,), "float32")):
    for t0, t1, k in T.grid(3, 3, 3):
        with T.block("win"):
            vt = T.axis.spatial(8, 6 - t0 * 3 + t1)
            vk = T.axis.reduce(3, k)
            T.where(t0 * 3 + t1 < 8)
            with T.init():
                y[vt] = T.float32(0)
            y[vt] = y[vt] + x[vt + vk]


def test_the_stage_keeps_the_block_predicate():
    # without the guard the stage ran t0 * 3 + t1 = 8 too and stored index_var_0 at vt = -2
    sch = T.Schedule(shifted_window, debug_mask="all")
    sch.cache_index("win", "global")
    assert_same_results(shifted_window, sch)
    assert_native_same(shifted_window, sch)
    _replays(shifted_window, sch)
    stage = next(n for n in _realizes(sch) if n.block.name_hint == "index_0")
    assert strip_parens(expr_text(stage.predicate)) == "((ax0 * 3) + ax1) < 8"


def _realizes(sch: T.Schedule) -> list:
    out: list = []
    post_order_visit(
        func_of(sch).body, lambda n: out.append(n) if type(n).__name__ == "BlockRealize" else None
    )
    return out


@T.prim_func
def guarded_by_an_outer_loop(x: T.Buffer((10,), "float32"), y: T.Buffer((4, 3), "float32")):
    for a, b in T.grid(4, 3):
        with T.block("g"):
            vb = T.axis.spatial(3, b)
            va = T.axis.spatial(4, a)
            T.where(a < 3)
            y[va, vb] = x[vb * 3 + 1]


def test_a_predicate_on_a_loop_the_stage_does_not_run_over_is_refused():
    sch = T.Schedule(guarded_by_an_outer_loop, debug_mask="all")
    with pytest.raises(
        T.ScheduleError,
        match=r"block 'g' has the predicate a < 3, which involves loops the index computation "
        r"\(vb \* 3\) \+ 1 does not run over",
    ):
        sch.cache_index("g", "global")
    assert_structure(sch, guarded_by_an_outer_loop)


@T.prim_func
def mirrored_rows(x: T.Buffer((8, 6), "int32"), y: T.Buffer((8, 6), "int32")):
    P = T.alloc_buffer((8, 6), "int32")
    for i, j in T.grid(8, 6):
        with T.block("P"):
            vi, vj = T.axis.remap("SS", [i, j])
            P[vi, vj] = x[(vi * 5) % 8, vj] + 1
    for i, j in T.grid(8, 6):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = P[vi, vj] + P[7 - vi, vj]


def test_a_loop_sized_by_an_outer_loop_is_refused():
    # after compute_at, P's loop over its rows runs max(i, 7 - i) - min(i, 7 - i) + 1 times:
    # a stage placed outside loop i would use i undefined (it was built so)
    sch = T.Schedule(mirrored_rows, debug_mask="all")
    sch.compute_at(sch.get_block("P"), sch.get_loops("Y")[0])
    before = func_of(sch)
    with pytest.raises(
        T.ScheduleError, match=r"the range of loop 'ax0', which the index computation .* runs "
        r"over, depends on loop 'i'"
    ):
        sch.cache_index("P", "global")
    assert func_of(sch) is before
