"""Every primitive of the schedule is recorded under its TVM instruction kind and replays:
from the printed Python, from ``apply_to_schedule`` and from the JSON form, each replay
gives the function the schedule produced directly."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from sched_checks import scheduled
from trace_cases_extra import EXTRA_CASES
from trace_cases_tensorize import TENSORIZE_CASES

from irbuilder.ir import PrimFunc, structural_equal
from lowering.schedule.record import KIND_OF
from tvmscript import tir as T


@T.prim_func
def pipeline(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    C = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + 1.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + 3.0


@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _replays(func: PrimFunc, sch: T.Schedule) -> None:
    want = scheduled(sch)
    namespace: dict[str, object] = {"tir": T}
    exec(str(sch.trace), namespace)
    from_text = T.Schedule(func, debug_mask="all")
    namespace["apply_trace"](from_text)  # type: ignore[operator]
    assert structural_equal(scheduled(from_text), want)
    replayed = T.Schedule(func, debug_mask="all")
    sch.trace.apply_to_schedule(replayed)
    assert structural_equal(scheduled(replayed), want)
    from_json = T.Schedule(func, debug_mask="all")
    T.Trace.apply_json_to_schedule(json.loads(json.dumps(sch.trace.as_json())), from_json)
    assert structural_equal(scheduled(from_json), want)
    # a replay records the same instructions, so its trace prints the same text
    assert replayed.trace.as_python() == sch.trace.as_python()


def _loops_pipeline(sch: T.Schedule) -> None:
    c = sch.get_block("C")
    sch.get_producers(c)
    sch.get_consumers(c)
    sch.get_output_blocks("root")
    i, j = sch.get_loops(c)
    sch.get_child_blocks(i)
    i0, i1 = sch.split(i, [None, 4])
    sch.reorder(j, i0, i1)
    fused = sch.fuse(j, i0)
    sch.add_unit_loop(c)
    sch.parallel(fused)
    sch.vectorize(sch.get_loops("D")[1])
    sch.unroll(i1)
    sch.compute_inline(sch.get_block("B"))
    sch.annotate(c, "key", sch.sample_categorical([1, 2], [0.5, 0.5]))
    sch.annotate(sch.get_loops("D")[0], "text", "a \"quoted\" value")
    sch.unannotate(c, "key")
    sch.enter_postproc()
    sch.reverse_compute_inline(sch.get_block("D"))


def _locations(sch: T.Schedule) -> None:
    b, d = sch.get_block("B"), sch.get_block("D")
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(b, i, preserve_unit_loops=True)
    sch.reverse_compute_at(d, i, index=-1)


def _caches(sch: T.Schedule) -> None:
    c = sch.get_block("C")
    sch.cache_read(c, "B", "local", consumer_blocks=[c])
    sch.cache_write(c, 0, "local")
    sch.set_scope(sch.get_block("B"), 0, "shared")
    sch.storage_align(sch.get_block("B"), 0, 0, 16, 4)


def _layouts(sch: T.Schedule) -> None:
    b = sch.get_block("B")
    sch.transform_layout(b, ("write", 0), lambda i, j: (j, i))
    sch.set_axis_separator(b, ("write", 0), [1])
    sch.transform_block_layout(b, lambda i, j: (j, i))
    sch.reindex(sch.get_block("C"), "B")


def _reindex_caches(sch: T.Schedule) -> None:
    c = sch.get_block("C")
    sch.reindex_cache_read(c, 0, "local", lambda i, j: (j, i))
    sch.reindex_cache_write(c, 0, "local", lambda i, j: (i, j))


def _reductions(sch: T.Schedule) -> None:
    c = sch.get_block("C")
    _, _, k = sch.get_loops(c)
    k0, _ = sch.split(k, sch.sample_perfect_tile(k, n=2, max_innermost_factor=4))
    sch.rfactor(k0, 0)
    i, _, _ = sch.get_loops(c)
    sch.decompose_reduction(c, i)


def _blocks(sch: T.Schedule) -> None:
    c = sch.get_block("C")
    i, j, _ = sch.get_loops(c)
    sch.bind(i, "blockIdx.x")
    sch.blockize(j)


@T.prim_func
def scale_rows(A: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("scale"):
            vi = T.axis.spatial(4, i)
            for j in range(8):
                A[vi, j] = A[vi, j] * 2.0 + A[vi, 0]


def _in_place(sch: T.Schedule) -> None:
    sch.cache_inplace(sch.get_block("scale"), 0, "local")


def _sampled_locations(sch: T.Schedule) -> None:
    b = sch.get_block("B")
    sch.compute_at(b, sch.sample_compute_location(b))  # a seeded draw, replayed as decided
    sch.blockize([sch.get_block("C"), sch.get_block("D")])


CASES: list[tuple[str, PrimFunc, Callable[[T.Schedule], None]]] = [
    ("in_place", scale_rows, _in_place),
    ("sampled_locations", pipeline, _sampled_locations),
    ("loops", pipeline, _loops_pipeline),
    ("locations", pipeline, _locations),
    ("caches", pipeline, _caches),
    ("layouts", pipeline, _layouts),
    ("reindex_caches", pipeline, _reindex_caches),
    ("reductions", matmul, _reductions),
    ("blocks", matmul, _blocks),
    *EXTRA_CASES,  # the primitives of schedule_extra.py
    *TENSORIZE_CASES,  # tensorize and pad_einsum
]


@pytest.mark.parametrize("func, steps", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_primitives_record_and_replay(func: PrimFunc, steps: Callable[[T.Schedule], None]):
    sch = T.Schedule(func, seed=3, debug_mask="all")
    steps(sch)
    kinds = [inst.kind.name for inst in sch.trace.insts]
    assert set(kinds) <= set(KIND_OF.values())
    _replays(func, sch)


def test_every_kind_was_exercised():
    seen: set[str] = set()
    for _, func, steps in CASES:
        sch = T.Schedule(func, seed=3)
        steps(sch)
        seen.update(inst.kind.name for inst in sch.trace.insts)
    assert set(KIND_OF.values()) - seen == set()
    # and each method's kind is registered under TVM's name
    for name in KIND_OF.values():
        assert T.InstructionKind.get(name).name == name


def test_buffers_are_recorded_by_position():
    """A buffer given by name or object is recorded as TVM's trace keeps it: an index
    (cache_read), or an index with read/write (reindex, transform_layout)."""
    sch = T.Schedule(pipeline)
    c = sch.get_block("C")
    buffer_b = sch.get(c).reads[0].buffer
    sch.cache_read(c, buffer_b, "local")
    sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (j, i))
    lines = sch.trace.as_python()
    assert lines[1] == 'b1 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope="local")'
    assert lines[3] == (
        'sch.transform_layout(block=b2, buffer=("write", 0), index_map=lambda i, j: (j, i), '
        "pad_value=None)"
    )


def test_split_disable_predication():
    sch = T.Schedule(pipeline)
    i, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(T.ScheduleError, match=r"disable_predication=True.*needs its predicate"):
        sch.split(i, [None, 5], disable_predication=True)
    sch.split(i, [None, 4], disable_predication=True)  # exact: nothing to guard
    assert sch.trace.as_python()[-1].endswith("disable_predication=True)")
    _replays(pipeline, sch)


def test_annotation_constant_survives_replay():
    sch = T.Schedule(pipeline)
    sch.annotate(sch.get_block("B"), "k", T.int32(4))
    replayed = T.Schedule(pipeline)
    sch.trace.apply_to_schedule(replayed)
    assert structural_equal(scheduled(replayed), scheduled(sch))
    assert sch.trace.as_python()[-1] == 'sch.annotate(block_or_loop=b0, ann_key="k", ann_val=4)'
