"""unsafe_hide_buffer_access: a block's declared read/write regions dropped (its body
unchanged); bad types and positions refused."""

from __future__ import annotations

import pytest
from sched_checks import assert_schedule, assert_structure
from test_trace_kinds import _replays

from tvmscript import tir as T


@T.prim_func
def gather(A: T.Buffer((16,), "float32"), idx: T.Buffer((8,), "int32"),
           B: T.Buffer((8,), "float32")):
    Ix = T.alloc_buffer((8,), "int32")
    for i in range(8):
        with T.block("Ix"):
            vi = T.axis.spatial(8, i)
            Ix[vi] = T.max(T.min(idx[vi], 15), 0)
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[Ix[vi]] * 2.0


@T.prim_func
def gather_hidden(A: T.Buffer((16,), "float32"), idx: T.Buffer((8,), "int32"),
                  B: T.Buffer((8,), "float32")):
    Ix = T.alloc_buffer((8,), "int32")
    for i in range(8):
        with T.block("Ix"):
            vi = T.axis.spatial(8, i)
            Ix[vi] = T.max(T.min(idx[vi], 15), 0)
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(A[Ix[vi]])
            T.writes(B[vi])
            B[vi] = A[Ix[vi]] * T.float32(2)


def test_hide_a_read():
    sch = T.Schedule(gather, debug_mask="all")
    b = sch.get_block("B")
    reads = [r.buffer.name for r in sch.get(b).reads]
    assert reads == ["A", "Ix"]
    assert [sch.get(p).name_hint for p in sch.get_producers(b)] == ["Ix"]
    sch.unsafe_hide_buffer_access(b, "read", [1])
    assert_schedule(gather, sch, gather_hidden)
    # this library's analyses infer accesses from the body, not from the declared regions
    # (TVM's would now miss the producer): the relation stays
    assert [sch.get(p).name_hint for p in sch.get_producers(b)] == ["Ix"]
    assert str(sch.trace).splitlines()[-2] == (
        '  sch.unsafe_hide_buffer_access(block=b0, buf_type="read", buf_index_array=[1])'
    )
    _replays(gather, sch)


def test_hide_a_write_and_nothing():
    sch = T.Schedule(gather)
    sch.unsafe_hide_buffer_access("Ix", "read", [])
    assert_structure(sch, gather)
    sch.unsafe_hide_buffer_access("Ix", "write", [0])
    assert sch.get(sch.get_block("Ix")).writes == ()


@pytest.mark.parametrize(
    "buf_type, positions, match",
    [
        ("reads", [0], "must be 'read' or 'write'"),
        ("read", [2], "buffer index 2 is not between 0 and 1"),
        ("write", [-1], "buffer index -1 is not between 0 and 0"),
    ],
)
def test_refusals(buf_type, positions, match):
    sch = T.Schedule(gather, debug_mask="all")
    with pytest.raises(T.ScheduleError, match=match):
        sch.unsafe_hide_buffer_access(sch.get_block("B"), buf_type, positions)
    assert_schedule(gather, sch, gather)
