"""``pack_transposed_operands`` on records: an operand read as ``B[j, c]`` for a few constant
fields ``c`` (boxes, points) by the innermost loop ``j`` of a nest that reuses it is copied
field by field (``B_packed[f * n + j]``) before the nest, so the loop reads each field
contiguously instead of at the record's stride. Numbers are the interpreter's bit for bit
(``fp_contract=False``) on both pinned targets, with and without overlapping arguments."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lowering
from irbuilder.ir import PrimFunc
from lowering.pipeline import LATE_STAGE
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import (
    agrees_with_interpreter,
    one_storage,
    packed_copies,
    pinned_targets,
    standard_normal,
)


@T.prim_func
def iou(A: T.Buffer((40, 4), "float32"), B: T.Buffer((37, 4), "float32"),
        Out: T.Buffer((40, 37), "float32")):
    for i, j in T.grid(40, 37):
        with T.block("iou"):
            vi, vj = T.axis.remap("SS", [i, j])
            w = T.max(T.min(A[vi, 2], B[vj, 2]) - T.max(A[vi, 0], B[vj, 0]), T.float32(0))
            h = T.max(T.min(A[vi, 3], B[vj, 3]) - T.max(A[vi, 1], B[vj, 1]), T.float32(0))
            area = (B[vj, 2] - B[vj, 0]) * (B[vj, 3] - B[vj, 1])
            Out[vi, vj] = w * h / (area + T.float32(1))


@T.prim_func
def point_distances(P: T.Buffer((24, 3), "float32"), Q: T.Buffer((50, 3), "float32"),
                    D: T.Buffer((24, 50), "float32")):
    for i in T.parallel(24):
        for j in range(50):
            dx = P[i, 0] - Q[j, 0]
            dz = P[i, 2] - Q[j, 2]
            D[i, j] = dx * dx + dz * dz  # two of the three fields


@T.prim_func
def guarded_fields(P: T.Buffer((24, 3), "float32"), Q: T.Buffer((50, 3), "float32"),
                   D: T.Buffer((24, 50), "float32")):
    # read under a condition: the copy stays inside Q (constant shape), so it may read
    # records the nest skips
    for i, j in T.grid(24, 50):
        D[i, j] = T.if_then_else(j % 3 == 0, Q[j, 1] - P[i, 1], P[i, 0] * Q[j, 0])


@T.prim_func
def transposed_output(P: T.Buffer((24, 3), "float32"), Q: T.Buffer((50, 3), "float32"),
                      D: T.Buffer((50, 24), "float32")):
    # the record loop stores across rows: nothing to vectorize along it
    for i, j in T.grid(24, 50):
        D[j, i] = P[i, 0] - Q[j, 0] + Q[j, 1]


@T.prim_func
def wide_records(P: T.Buffer((24, 20), "float32"), Q: T.Buffer((50, 20), "float32"),
                 D: T.Buffer((24, 50), "float32")):
    # 20 fields apart: a column of a matrix, left as it is
    for i, j in T.grid(24, 50):
        D[i, j] = P[i, 0] - Q[j, 0] + Q[j, 19]


@T.prim_func
def few_rows(P: T.Buffer((4, 3), "float32"), Q: T.Buffer((50, 3), "float32"),
             D: T.Buffer((4, 50), "float32")):
    # each record read 4 times: not worth a copy
    for i, j in T.grid(4, 50):
        D[i, j] = P[i, 0] - Q[j, 0] + Q[j, 1]


@T.prim_func
def writes_records(P: T.Buffer((24, 3), "float32"), Q: T.Buffer((50, 3), "float32"),
                   D: T.Buffer((24, 50), "float32")):
    # the nest writes the operand: a copy would go stale
    for i in range(24):
        for j in range(50):
            D[i, j] = P[i, 0] - Q[j, 0] + Q[j, 1]
            Q[j, 2] = D[i, j]


def _early(func: PrimFunc) -> str:
    with lowering.PassContext(disabled_passes=frozenset(LATE_STAGE)):
        return lowering.lower(func, target="llvm -mcpu=znver3").script()


@pytest.mark.parametrize("func, operand", [
    (iou, "B_packed"), (point_distances, "Q_packed"), (guarded_fields, "Q_packed"),
])
def test_records_read_field_by_field_arepacked_copies(func: PrimFunc, operand: str) -> None:
    assert packed_copies(func) == [operand]


@pytest.mark.parametrize("func", [transposed_output, wide_records, few_rows, writes_records])
def test_left_alone(func: PrimFunc) -> None:
    assert packed_copies(func) == []


def test_only_the_fields_read_are_copied_in_one_pass_over_the_records() -> None:
    text = _early(point_distances)
    assert 'Q_packed = T.decl_buffer((100,), "float32")' in text  # fields 0 and 2 of 50
    assert "Q_packed[jj] = Q_flat[jj * 3]" in text
    assert "Q_packed[jj + 50] = Q_flat[jj * 3 + 2]" in text
    packed_nest = text.split("for i in T.parallel(24):")[1].split("else:")[0]
    assert "Q_packed[j + 50]" in packed_nest and "Q_flat" not in packed_nest


def test_the_copy_runs_behind_a_no_overlap_test_with_the_output() -> None:
    text = lowering.lower(iou, target="llvm -mcpu=znver3").script()
    assert "B_packed" in text.split("else:")[0]
    assert "B_flat[j * 4 + 2]" in text.split("else:")[1]  # the nest as written


_NUMBER_CASES = [iou, point_distances, guarded_fields, transposed_output, wide_records]


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", _NUMBER_CASES, ids=lambda f: f.name)
def test_numbers_are_the_interpreters(func: PrimFunc, target: Any) -> None:
    agrees_with_interpreter(func, lambda: standard_normal(func, 7), target)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("offsets", [(0, 160, 300), (0, 200, 160), (600, 0, 100)])
def test_overlapping_arrays_run_the_nest_as_written(offsets: tuple[int, int, int],
                                                    target: Any) -> None:
    """The output a view over the records: the nest's writes reach later reads."""
    agrees_with_interpreter(iou, lambda: one_storage(iou, offsets, np.random.default_rng(3)),
                            target)
