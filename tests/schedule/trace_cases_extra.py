"""Trace cases for the primitives of ``lowering/schedule/schedule_extra.py``, on small
kernels of this project's own: ``test_trace_kinds.py`` applies each, records it, replays
the trace (as Python text, as instructions and as JSON) and checks that every instruction
kind is exercised by some case."""

from __future__ import annotations

from collections.abc import Callable

from irbuilder.ir import PrimFunc
from tvmscript import tir as T


@T.prim_func
def weighted_rows(W: T.Buffer((5, 7), "float32"), x: T.Buffer((7,), "float32"),
                  s: T.Buffer((5, 7), "float32"), out: T.Buffer((5,), "float32")):
    for r, k in T.grid(5, 7):
        with T.block("rowdot"):
            vr, vk = T.axis.remap("SR", [r, k])
            with T.init():
                out[vr] = T.float32(0)
            out[vr] = out[vr] + W[vr, vk] * x[vk] * s[vr, vk]


def _iter_order(sch: T.Schedule) -> None:
    sch.reorder_block_iter_var(sch.get_block("rowdot"), [1, 0])


def _staged_reads(sch: T.Schedule) -> None:
    block = sch.get_block("rowdot")
    r, k = sch.get_loops(block)
    sch.read_at(k, block, 1, "local")
    sch.write_at(r, block, "out", "global")


@T.prim_func
def offset_then_halve(A: T.Buffer((6, 9), "int32"), C: T.Buffer((6, 9), "int32")):
    B = T.alloc_buffer((6, 9), "int32")
    for i, j in T.grid(6, 9):
        with T.block("offset"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + vj
    for i, j in T.grid(6, 9):
        with T.block("halve"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] // 2


def _storage_type(sch: T.Schedule) -> None:
    sch.unsafe_set_dtype(sch.get_block("offset"), "B", "int64")


def _merged_rows(sch: T.Schedule) -> None:
    sch.merge(sch.get_loops("offset")[0], sch.get_loops("halve")[0])


def _sampled_parts(sch: T.Schedule) -> None:
    _, j = sch.get_loops(sch.get_block("halve"))
    cut = sch.sample_categorical([2, 5, 7], [0.2, 0.3, 0.5])
    sch.loop_partition(j, [None, cut])


def _declared_less(sch: T.Schedule) -> None:
    sch.unsafe_hide_buffer_access(sch.get_block("halve"), "read", [0])


@T.prim_func
def frame(x: T.Buffer((4, 5), "int8"), y: T.Buffer((6, 8), "int8")):
    for i, j in T.grid(6, 8):
        with T.block("frame"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = T.if_then_else(
                1 <= vi and vi < 5 and 2 <= vj and vj < 7, x[vi - 1, vj - 2], T.int8(-1)
            )


def _framed(sch: T.Schedule) -> None:
    block = sch.get_block("frame")
    sch.decompose_padding(block, sch.get_loops(block)[1])


@T.prim_func
def mirror(A: T.Buffer((12,), "float32"), B: T.Buffer((12,), "float32")):
    for i in range(12):
        with T.block("mirror"):
            vi = T.axis.spatial(12, i)
            B[vi] = A[11 - vi] + A[(vi * 5) % 12]


def _indices(sch: T.Schedule) -> None:
    sch.cache_index(sch.get_block("mirror"), "global", 1)


@T.prim_func
def running_max(A: T.Buffer((11,), "int32"), C: T.Buffer((8,), "int32")):
    M = T.alloc_buffer((9,), "int32")
    for i in range(9):
        with T.block("pairmax"):
            vi = T.axis.spatial(9, i)
            M[vi] = T.max(A[vi], A[vi + 2])
    for i in range(8):
        with T.block("pairsum"):
            vi = T.axis.spatial(8, i)
            C[vi] = M[vi] + M[vi + 1]


def _rolled(sch: T.Schedule) -> None:
    (i,) = sch.get_loops(sch.get_block("pairsum"))
    tile, _ = sch.split(i, [None, 2])
    sch.compute_at(sch.get_block("pairmax"), tile)
    sch.rolling_buffer(sch.get_block("pairmax"), 0)


EXTRA_CASES: list[tuple[str, PrimFunc, Callable[[T.Schedule], None]]] = [
    ("iter_order", weighted_rows, _iter_order),
    ("staged_reads", weighted_rows, _staged_reads),
    ("storage_type", offset_then_halve, _storage_type),
    ("merged_rows", offset_then_halve, _merged_rows),
    ("sampled_parts", offset_then_halve, _sampled_parts),
    ("declared_less", offset_then_halve, _declared_less),
    ("framed", frame, _framed),
    ("indices", mirror, _indices),
    ("rolled", running_max, _rolled),
]
