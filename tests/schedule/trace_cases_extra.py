"""Trace cases for the primitives of ``lowering/schedule/schedule_extra.py``: each is
applied, recorded and replayed by ``test_trace_kinds.py`` (which also checks that every
instruction kind is exercised by some case)."""

from __future__ import annotations

from collections.abc import Callable

from irbuilder.ir import PrimFunc
from tvmscript import tir as T


@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _block_iters(sch: T.Schedule) -> None:
    sch.reorder_block_iter_var(sch.get_block("C"), [2, 0, 1])


@T.prim_func
def two_stage(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * 2.0
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + 1.0


def _dtypes(sch: T.Schedule) -> None:
    sch.unsafe_set_dtype(sch.get_block("B"), "B", "float64")


def _merges(sch: T.Schedule) -> None:
    sch.merge(sch.get_loops("B")[0], sch.get_loops("C")[0])


def _staging(sch: T.Schedule) -> None:
    c = sch.get_block("C")
    i, _, k = sch.get_loops(c)
    sch.read_at(k, c, 0, "local")
    sch.write_at(i, c, 0, "global")


@T.prim_func
def pad(x: T.Buffer((12,), "int32"), y: T.Buffer((16,), "int32")):
    for i in range(16):
        with T.block("pad"):
            vi = T.axis.spatial(16, i)
            y[vi] = T.if_then_else(2 <= vi and vi < 14, x[vi - 2], 0)


def _padding(sch: T.Schedule) -> None:
    block = sch.get_block("pad")
    sch.decompose_padding(block, sch.get_loops(block)[0])


def _partitions(sch: T.Schedule) -> None:
    i, _ = sch.get_loops(sch.get_block("C"))
    size = sch.sample_categorical([4, 6], [0.5, 0.5])
    sch.loop_partition(i, [size, None])


@T.prim_func
def gather(A: T.Buffer((8, 8), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi // 2, vj // 2]


def _index_caches(sch: T.Schedule) -> None:
    sch.cache_index(sch.get_block("B"), "global")


@T.prim_func
def conv_1d(A: T.Buffer((12,), "int32"), C: T.Buffer((8,), "int32")):
    B = T.alloc_buffer((10,), "int32")
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] + A[vi + 2]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + B[vi + 2]


def _rolling(sch: T.Schedule) -> None:
    (i,) = sch.get_loops(sch.get_block("C"))
    io, _ = sch.split(i, [2, 4])
    sch.compute_at(sch.get_block("B"), io)
    sch.rolling_buffer(sch.get_block("B"), 0)


def _hidden(sch: T.Schedule) -> None:
    sch.unsafe_hide_buffer_access(sch.get_block("C"), "read", [0])


EXTRA_CASES: list[tuple[str, PrimFunc, Callable[[T.Schedule], None]]] = [
    ("block_iters", matmul, _block_iters),
    ("dtypes", two_stage, _dtypes),
    ("merges", two_stage, _merges),
    ("staging", matmul, _staging),
    ("padding", pad, _padding),
    ("partitions", two_stage, _partitions),
    ("index_caches", gather, _index_caches),
    ("rolling", conv_1d, _rolling),
    ("hidden", two_stage, _hidden),
]
