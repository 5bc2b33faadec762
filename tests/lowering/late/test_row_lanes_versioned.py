"""``vectorize_row_reductions`` on the row reductions TVM users write without a local
accumulator or a parallel loop of rows: rows summed straight into the output
(``row_promote.py``), a ``range`` loop ``parallelize_loops`` made parallel on a no-overlap
test, a batch of rows in a serial loop under a parallel one (its hoisted scratch allocated
per row again), and a chain loop reading its elements through ``let`` bindings. Each runs
in lanes behind a test that the arrays do not overlap, gives the interpreter's numbers bit
for bit (``fp_contract=False``), and the original loop's when the arrays overlap."""

from __future__ import annotations

import numpy as np
import pytest
from late_kit import (
    AVX2,
    AVX512,
    agrees_with_interpreter,
    before_late,
    one_storage,
    pinned_targets,
    run_pass,
    standard_normal,
    stmts,
)

from irbuilder.ir import Allocate, BufferStore, For, ForKind, IfThenElse, PrimFunc, Shuffle, Stmt
from irbuilder.ir.functor import post_order_visit
from lowering.analysis.vars import free_vars
from lowering.late.row_promote import nest_levels
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def into_output(A: T.Buffer((37, 45), "float32"), O: T.Buffer((37,), "float32")):
    for i in T.parallel(37):
        O[i] = T.float32(0)
        for j in range(45):
            O[i] = O[i] + A[i, j] * A[i, j]


@T.prim_func
def into_output_serial(A: T.Buffer((37, 1800), "float32"), O: T.Buffer((37,), "float32")):
    # large enough for parallelize_loops (MIN_WORK)
    for i in range(37):
        O[i] = T.float32(0)
        for j in range(1800):
            O[i] = O[i] + A[i, j] * A[i, j]


@T.prim_func
def two_columns(A: T.Buffer((29, 40), "float32"), O: T.Buffer((29, 2), "float32")):
    for i in T.parallel(29):
        O[i, 0] = T.float32(0)
        O[i, 1] = T.float32(-3.0e38)
        for j in range(40):
            O[i, 0] = O[i, 0] + A[i, j]
            O[i, 1] = T.max(O[i, 1], A[i, j])


@T.prim_func
def local_serial(A: T.Buffer((37, 1800), "float32"), O: T.Buffer((37,), "float32")):
    for i in range(37):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(1800):
            acc[0] = acc[0] + A[i, j]
        O[i] = acc[0] * T.float32(0.5)


@T.prim_func
def batch_of_rows(A: T.Buffer((6, 21, 40), "float32"), O: T.Buffer((6, 21), "float32")):
    for b in T.parallel(6):
        for i in range(21):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for j in range(40):
                acc[0] = acc[0] + A[b, i, j] * A[b, i, j]
            O[b, i] = acc[0]


@T.prim_func
def batch_grid(A: T.Buffer((6, 21, 600), "float32"), O: T.Buffer((6, 21), "float32")):
    for b, i in T.grid(6, 21):
        O[b, i] = T.float32(0)
        for j in range(600):
            O[b, i] = O[b, i] + A[b, i, j]


@T.prim_func
def carried(A: T.Buffer((6, 21, 40), "float32"), O: T.Buffer((6, 21), "float32")):
    # one running sum per batch, carried from row to row: the rows are not independent
    for b in T.parallel(6):
        acc = T.alloc_buffer((1,), "float32")
        for i in range(21):
            if i == 0:
                acc[0] = T.float32(0)
            for j in range(40):
                acc[0] = acc[0] + A[b, i, j]
            O[b, i] = acc[0]


@T.prim_func
def let_operands(A: T.Buffer((37, 45), "float32"), B: T.Buffer((37, 45), "float32"),
                 O: T.Buffer((37,), "float32")):
    for i in T.parallel(37):
        acc = T.alloc_buffer((3,), "float32")
        acc[0] = T.float32(0)
        acc[1] = T.float32(0)
        acc[2] = T.float32(0)
        for j in range(45):
            a = A[i, j]
            b = B[i, j]
            acc[0] = acc[0] + a * b
            acc[1] = acc[1] + a * a
            acc[2] = acc[2] + b * b
        O[i] = acc[0] / T.sqrt(T.max(acc[1] * acc[2], T.float32(1e-16)))


@T.prim_func
def two_elements(A: T.Buffer((37, 45), "float32"), O: T.Buffer((74,), "float32")):
    # two accumulators in one array, a constant apart
    for i in T.parallel(37):
        O[i] = T.float32(0)
        O[i + 37] = T.float32(1)
        for j in range(45):
            O[i] = O[i] + A[i, j]
            O[i + 37] = O[i + 37] * A[i, j]


LANES = [into_output, into_output_serial, two_columns, two_elements, local_serial,
         batch_of_rows, batch_grid, let_operands]


def _shuffles(node: object) -> int:
    count = 0

    def visit(n: object) -> None:
        nonlocal count
        count += isinstance(n, Shuffle)

    post_order_visit(node, visit)
    return count


def _stmts(node: object) -> list[Stmt]:
    found: list[Stmt] = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, Stmt) else None)
    return found


def _stored(node: object) -> set[str]:
    names: set[str] = set()
    post_order_visit(node, lambda n: names.add(n.buffer.name)
                     if isinstance(n, BufferStore) else None)
    return names


def _lanes_versioned(func: PrimFunc, target: Target) -> IfThenElse:
    after = run_pass("vectorize_row_reductions", before_late(func, target), target)
    (version,) = [s for s in stmts(after) if isinstance(s, IfThenElse) and _shuffles(s.then_case)]
    assert not _shuffles(version.else_case)  # the original loop, as written
    return version


@pytest.mark.parametrize("func", LANES, ids=[f.name for f in LANES])
@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["znver3", "znver4"])
def test_rows_run_in_lanes_behind_a_no_overlap_test(func: PrimFunc, target: Target) -> None:
    if func is let_operands:  # only local accumulators and parameters read: nothing to test
        after = run_pass("vectorize_row_reductions", before_late(func, target), target)
        assert _shuffles(after.body)
        return
    version = _lanes_versioned(func, target)
    tested = {v.name for v in free_vars(version.condition)}
    assert {"O_data", "A_data"} <= tested  # the output against the input


def test_rows_into_the_output_accumulate_in_a_local_buffer() -> None:
    version = _lanes_versioned(into_output, AVX2)
    (tile,) = [s for s in _stmts(version.then_case)
               if isinstance(s, For) and s.loop_var.name == "j_tile"]
    # the chain loop updates the promoted accumulator, one lane per row, and stores no
    # output element: only the rows' results after it do
    assert _stored(tile) == {"O_flat_row_acc_rows"}
    assert "O_flat" in _stored(version.then_case)


def test_a_batch_of_rows_runs_its_row_groups_serially_under_the_parallel_loop() -> None:
    version = _lanes_versioned(batch_of_rows, AVX2)
    outer = version.then_case
    assert isinstance(outer, For) and outer.kind is ForKind.PARALLEL
    groups = [s for s in _stmts(outer) if isinstance(s, For) and s.loop_var.name == "i_rows"]
    assert groups and all(g.kind is ForKind.SERIAL for g in groups)


def test_rows_that_are_not_independent_are_left_alone() -> None:
    after = run_pass("vectorize_row_reductions", before_late(carried, AVX2), AVX2)
    assert not _shuffles(after.body)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [*LANES, carried], ids=[f.name for f in [*LANES, carried]])
def test_bit_identical_to_the_interpreter(func: PrimFunc, target: Target) -> None:
    for seed in range(2):
        agrees_with_interpreter(func, lambda seed=seed: standard_normal(func, seed), target)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [into_output_serial, local_serial, batch_grid],
                         ids=["into_output_serial", "local_serial", "batch_grid"])
@pytest.mark.parametrize("offset", [0, 40, 1000, None])
def test_overlapping_arrays_run_the_original_loop(func: PrimFunc, target: Target,
                                                  offset: int | None) -> None:
    # O inside A: a row's result lands where later rows read; None: O just past A (the
    # lanes run). Only loops the source leaves serial: a T.parallel loop over overlapping
    # arrays is a race whatever is compiled.
    if offset is None:
        offset = int(np.prod([int(d) for d in func.buffer_map[func.params[0]].shape]))
    agrees_with_interpreter(
        func, lambda: one_storage(func, [0, offset], np.random.default_rng(offset)), target)


@T.prim_func
def decaying(A: T.Buffer((6, 21, 40), "float32"), O: T.Buffer((6, 21), "float32")):
    # each row starts from half the last row's sum: a value passes from row to row (the
    # first row reads the buffer unwritten, so this is only ever lowered, never run)
    for b in T.parallel(6):
        acc = T.alloc_buffer((1,), "float32")
        for i in range(21):
            acc[0] = acc[0] * T.float32(0.5)
            for j in range(40):
                acc[0] = acc[0] + A[b, i, j]
            O[b, i] = acc[0]


def _parallel_body(func: PrimFunc) -> Stmt:
    (outer,) = [s for s in stmts(before_late(func, AVX2))
                if isinstance(s, For) and s.kind is ForKind.PARALLEL]
    return outer.body


def test_scratch_a_row_reads_before_writing_stays_outside_the_rows() -> None:
    ((nest, sunk),) = nest_levels(_parallel_body(batch_of_rows))
    assert nest is sunk and sunk.loop_var.name == "i"
    assert isinstance(sunk.body, Allocate)  # one accumulator per row again
    assert nest_levels(_parallel_body(decaying)) == []
    after = run_pass("vectorize_row_reductions", before_late(decaying, AVX2), AVX2)
    assert not _shuffles(after.body)


@T.prim_func
def heads_of_rows(A: T.Buffer((3, 4, 19, 40), "float32"), O: T.Buffer((3, 4, 19), "float32")):
    # a batch of heads of rows: the rows are the innermost serial loop of the nest
    for b in T.parallel(3):
        for h in range(4):
            for i in range(19):
                acc = T.alloc_buffer((1,), "float32")
                acc[0] = T.float32(0)
                for j in range(40):
                    acc[0] = acc[0] + A[b, h, i, j] * A[b, h, i, j]
                O[b, h, i] = acc[0]


@pytest.mark.parametrize("target", pinned_targets())
def test_rows_of_a_deeper_nest_run_in_lanes(target: Target) -> None:
    after = run_pass("vectorize_row_reductions", before_late(heads_of_rows, target), target)
    assert _shuffles(after.body)
    for seed in range(2):
        agrees_with_interpreter(
            heads_of_rows, lambda seed=seed: standard_normal(heads_of_rows, seed), target)


@T.prim_func
def bound_index(A: T.Buffer((37, 45), "float32"), O: T.Buffer((74,), "float32")):
    # the element is named through a binding inside the chain loop (simplify inlines it
    # before the late stage; promote_row_outputs also keeps any loop it cannot fully
    # redirect to the local accumulator as written)
    for i in T.parallel(37):
        O[2 * i] = T.float32(0)
        for j in range(45):
            at = 2 * i
            O[at] = O[at] + A[i, j]


@pytest.mark.parametrize("target", pinned_targets())
def test_an_element_named_through_a_binding_gives_the_interpreters_numbers(
    target: Target,
) -> None:
    for seed in range(2):
        agrees_with_interpreter(
            bound_index, lambda seed=seed: standard_normal(bound_index, seed), target)
