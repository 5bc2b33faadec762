"""unsafe_hide_buffer_access on a table lookup: the chosen declared regions of a block go,
the others and the body stay; the library's own analyses, which read bodies, still see the
hidden accesses; a bad region type or position is refused."""

from __future__ import annotations

import pytest
from extra_checks import assert_native_same
from sched_checks import assert_same_results, assert_structure
from test_trace_kinds import _replays

from tvmscript import tir as T


@T.prim_func
def lookup_blend(codes: T.Buffer((6, 10), "int32"), lut: T.Buffer((5,), "float64"),
                 w: T.Buffer((10,), "float64"), bias: T.Buffer((6,), "float64"),
                 out: T.Buffer((6, 10), "float64")):
    slot = T.alloc_buffer((6, 10), "int32")
    for r, c in T.grid(6, 10):
        with T.block("clip"):
            vr, vc = T.axis.remap("SS", [r, c])
            slot[vr, vc] = T.min(T.max(codes[vr, vc] + 2, 0), 4)
    for r, c in T.grid(6, 10):
        with T.block("blend"):
            vr, vc = T.axis.remap("SS", [r, c])
            out[vr, vc] = lut[slot[vr, vc]] * w[vc] + bias[vr]


def _names(regions) -> list[str]:
    return [region.buffer.name for region in regions]


@pytest.mark.parametrize(
    "positions", [[0, 3], [3, 0], [3, 0, 3]], ids=["sorted", "reversed", "repeated"]
)
def test_hidden_reads_leave_the_others_and_the_body(positions):
    sch = T.Schedule(lookup_blend, debug_mask="all")
    blend = sch.get_block("blend")
    before = sch.get(blend)
    assert _names(before.reads) == ["lut", "slot", "w", "bias"]
    sch.unsafe_hide_buffer_access(blend, "read", positions)
    after = sch.get(blend)
    assert _names(after.reads) == ["slot", "w"]
    assert after.reads[0] is before.reads[1] and after.reads[1] is before.reads[2]
    assert after.writes == before.writes and after.body is before.body
    assert_same_results(lookup_blend, sch)
    assert sch.trace.as_python()[1] == (
        f'sch.unsafe_hide_buffer_access(block=b0, buf_type="read", buf_index_array={positions})'
    )
    _replays(lookup_blend, sch)


def test_the_dependence_on_a_hidden_producer_is_still_seen():
    sch = T.Schedule(lookup_blend, debug_mask="all")
    clip, blend = sch.get_block("clip"), sch.get_block("blend")
    sch.unsafe_hide_buffer_access(clip, "write", [0])
    sch.unsafe_hide_buffer_access(blend, "read", [1])
    assert sch.get(clip).writes == ()
    assert "slot" not in _names(sch.get(blend).reads)
    # TVM's analyses would lose the edge; the body still writes and reads 'slot' here
    assert [sch.get(b).name_hint for b in sch.get_producers(blend)] == ["clip"]
    assert [sch.get(b).name_hint for b in sch.get_consumers(clip)] == ["blend"]
    # so a primitive relying on it still does the right thing
    sch.compute_inline(clip)
    assert_same_results(lookup_blend, sch)
    assert_native_same(lookup_blend, sch)


def test_an_empty_list_changes_nothing():
    sch = T.Schedule(lookup_blend, debug_mask="all")
    sch.unsafe_hide_buffer_access("blend", "write", [])
    sch.unsafe_hide_buffer_access("clip", "read", [])
    assert_structure(sch, lookup_blend)


@pytest.mark.parametrize(
    "block, buf_type, positions, message",
    [
        ("blend", "writes", [0], "the buffer type must be 'read' or 'write', got 'writes'"),
        ("blend", "READ", [0], "got 'READ'"),
        ("blend", "read", [4], r"buffer index 4 is not between 0 and 3 \(block 'blend' has 4 read"),
        ("blend", "read", [1, -2], "buffer index -2 is not between 0 and 3"),
        ("clip", "write", [1], r"buffer index 1 is not between 0 and 0 \(block 'clip' has 1 write"),
    ],
)
def test_refusals(block, buf_type, positions, message):
    sch = T.Schedule(lookup_blend, debug_mask="all")
    with pytest.raises(T.ScheduleError, match=message):
        sch.unsafe_hide_buffer_access(sch.get_block(block), buf_type, positions)
    assert_structure(sch, lookup_blend)  # a refused call leaves nothing half done
