"""Trace cases for ``tensorize`` and ``pad_einsum`` (``test_trace_kinds.py`` applies each,
records it and replays the trace as Python text, as instructions and as JSON)."""

from __future__ import annotations

from collections.abc import Callable

from tensorize_kernels import packed_matmul, row_dots

from irbuilder.ir import PrimFunc
from tvmscript import tir as T


def _tensorized_loop(sch: T.Schedule) -> None:
    _, _, k = sch.get_loops("R")
    _, k_1 = sch.split(k, [None, 4])
    sch.tensorize(k_1, "test_dot4", preserve_unit_iters=False)


def _tensorized_block(sch: T.Schedule) -> None:
    m, n, k = sch.get_loops("Y")
    n_0, n_1 = sch.split(n, [None, 16])
    k_0, k_1 = sch.split(k, [None, 4])
    sch.reorder(m, n_0, k_0, n_1, k_1)
    sch.tensorize(sch.blockize(n_1), "test_mac16x4")


def _padded(sch: T.Schedule) -> None:
    sch.pad_einsum(sch.get_block("R"), [1, 2, 8])


TENSORIZE_CASES: list[tuple[str, PrimFunc, Callable[[T.Schedule], None]]] = [
    ("tensorize_loop", row_dots, _tensorized_loop),
    ("tensorize_block", packed_matmul, _tensorized_block),
    ("pad_einsum", row_dots, _padded),
]
