"""pad_einsum (TVM v0.16: padding by factor, padded copies filled and copied back by
blocks of their own) on a ragged matmul, a symbolic batch of row norms feeding a
consumer, and a constant index; the refusals TVM makes and the ones added where TVM
builds an out-of-bounds program."""

from __future__ import annotations

import numpy as np
import pytest
from extra_checks import NATIVE, assert_native_same
from sched_checks import assert_schedule, assert_structure, scheduled
from test_trace_kinds import _replays

import tvmscript
from tvmscript import tir as T


@T.prim_func
def ragged_matmul(A: T.Buffer((10, 7), "float32"), B: T.Buffer((7, 13), "float32"),
                  C: T.Buffer((10, 13), "float32")):
    for i, j, k in T.grid(10, 13, 7):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def ragged_matmul_padded(A: T.Buffer((10, 7), "float32"), B: T.Buffer((7, 13), "float32"),
                         C: T.Buffer((10, 13), "float32")):
    A_pad = T.alloc_buffer((12, 8))
    B_pad = T.alloc_buffer((8, 16))
    C_pad = T.alloc_buffer((12, 16))
    for i0, i1 in T.grid(12, 8):
        with T.block("A_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            A_pad[v0, v1] = T.if_then_else(v0 < 10 and v1 < 7, A[v0, v1], T.float32(0))
    for i0, i1 in T.grid(8, 16):
        with T.block("B_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            B_pad[v0, v1] = T.if_then_else(v0 < 7 and v1 < 13, B[v0, v1], T.float32(0))
    for i, j, k in T.grid(12, 16, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C_pad[vi, vj] = T.float32(0)
            C_pad[vi, vj] = C_pad[vi, vj] + A_pad[vi, vk] * B_pad[vk, vj]
    for i0, i1 in T.grid(10, 13):
        with T.block("C_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            C[v0, v1] = C_pad[v0, v1]


def test_a_ragged_matmul_padded_to_tiles():
    sch = T.Schedule(ragged_matmul, debug_mask="all")  # checked by running
    block = sch.get_block("C")
    sch.pad_einsum(block, [4, 8, 4])
    assert_schedule(ragged_matmul, sch, ragged_matmul_padded)
    assert_native_same(ragged_matmul, sch)
    # the handle still names the padded block, whose loops now split evenly
    assert [sch.get(lp).extent.value for lp in sch.get_loops(block)] == [12, 16, 8]
    assert sch.trace.as_python()[1] == "sch.pad_einsum(block=b0, padding=[4, 8, 4])"
    _replays(ragged_matmul, sch)


@T.prim_func
def row_norms(a: T.handle, w: T.handle, r: T.handle):
    n = T.int32()
    X = T.match_buffer(a, (2, n, 24))
    W = T.match_buffer(w, (24,))
    R = T.match_buffer(r, (2, n, 24))
    S = T.alloc_buffer((2, n))
    for b, i, k in T.grid(2, n, 24):
        with T.block("S"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            with T.init():
                S[vb, vi] = T.float32(0)
            S[vb, vi] = S[vb, vi] + X[vb, vi, vk] * X[vb, vi, vk]
    for b, i, k in T.grid(2, n, 24):
        with T.block("R"):
            vb, vi, vk = T.axis.remap("SSS", [b, i, k])
            R[vb, vi, vk] = W[vk] * X[vb, vi, vk] / T.sqrt(S[vb, vi] + T.float32(1))


@T.prim_func
def row_norms_padded(a: T.handle, w: T.handle, r: T.handle):
    n = T.int32()
    X = T.match_buffer(a, (2, n, 24))
    W = T.match_buffer(w, (24,))
    R = T.match_buffer(r, (2, n, 24))
    S = T.alloc_buffer((2, n))
    X_pad = T.alloc_buffer((2, (n + 7) // 8 * 8, 24))
    S_pad = T.alloc_buffer((2, (n + 7) // 8 * 8))
    for i0, i1, i2 in T.grid(2, (n + 7) // 8 * 8, 24):
        with T.block("X_pad"):
            v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
            X_pad[v0, v1, v2] = T.if_then_else(v1 < n, X[v0, v1, v2], T.float32(0))
    for b, i, k in T.grid(2, (n + 7) // 8 * 8, 24):
        with T.block("S"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            with T.init():
                S_pad[vb, vi] = T.float32(0)
            S_pad[vb, vi] = S_pad[vb, vi] + X_pad[vb, vi, vk] * X_pad[vb, vi, vk]
    for i0, i1 in T.grid(2, n):
        with T.block("S_pad"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            S[v0, v1] = S_pad[v0, v1]
    for b, i, k in T.grid(2, n, 24):
        with T.block("R"):
            vb, vi, vk = T.axis.remap("SSS", [b, i, k])
            R[vb, vi, vk] = W[vk] * X[vb, vi, vk] / T.sqrt(S[vb, vi] + T.float32(1))


def test_a_symbolic_extent_padded_and_its_consumer_reading_the_copy_back():
    sch = T.Schedule(row_norms, debug_mask="all")
    sch.pad_einsum("S", [1, 8, 1])  # only the rows grow: X and S get copies, W does not
    assert_structure(sch, row_norms_padded)
    text = scheduled(sch).script()
    assert "T.alloc_buffer((2, (n + 7) // 8 * 8, 24)" in text
    kernel = tvmscript.build(scheduled(sch), target=NATIVE)
    rng = np.random.default_rng(4)
    for n in (5, 8, 11):  # ragged, exact, ragged
        x = rng.standard_normal((2, n, 24)).astype("float32")
        w = rng.standard_normal(24).astype("float32")
        r = np.zeros((2, n, 24), "float32")
        kernel(x, w, r)
        want = w * x / np.sqrt((x * x).sum(axis=2, keepdims=True) + 1)
        np.testing.assert_allclose(r, want, rtol=1e-5, atol=1e-5)
    _replays(row_norms, sch)


@T.prim_func
def first_channel(A: T.Buffer((3, 10), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[0, vi] * T.float32(2)


def test_a_constant_index_gets_one_element_and_interpreted_numbers_match():
    sch = T.Schedule(first_channel, debug_mask="all")
    sch.pad_einsum("B", [4])
    root = sch.get(sch.get_block("root"))
    assert {b.name: [d.value for d in b.shape] for b in root.alloc_buffers} == {
        "A_pad": [1, 12], "B_pad": [12],
    }
    a = np.random.default_rng(5).standard_normal((3, 10)).astype("float32")
    b = np.zeros(10, "float32")
    tvmscript.build(scheduled(sch), target="interp")(a, b)
    np.testing.assert_allclose(b, a[0] * 2, rtol=1e-6)
    assert_native_same(first_channel, sch)


@T.prim_func
def two_rows(A: T.Buffer((8, 10), "float32"), B: T.Buffer((8, 10), "float32"),
             C: T.Buffer((8, 10), "float32")):
    for i in range(8):
        for j in range(10):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for j in range(10):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * T.float32(2)


def test_a_loop_of_its_own_grows_under_a_loop_shared_with_another_block():
    sch = T.Schedule(two_rows, debug_mask="all")
    sch.pad_einsum("C", [1, 4])
    assert [sch.get(lp).extent.value for lp in sch.get_loops("C")] == [8, 12]
    assert [sch.get(lp).extent.value for lp in sch.get_loops("B")] == [8, 10]
    # the whole statement reads the input's copy, as TVM rewrites it
    assert sch.get(sch.get_block("B")).reads[0].buffer.name == "A_pad"
    assert_native_same(two_rows, sch)
    with pytest.raises(T.ScheduleError, match="loop i holds other blocks than 'C'"):
        T.Schedule(two_rows).pad_einsum("C", [3, 4])


# -- refusals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "padding, shown",
    [([4, 4], "[4, 4]"), ([4, 0, 4], "[4, 0, 4]"), ([4, 4, -2], "[4, 4, -2]")],
)
def test_a_padding_that_is_not_one_positive_factor_per_iter_var(padding, shown):
    sch = T.Schedule(ragged_matmul, debug_mask="all")
    with pytest.raises(
        T.ScheduleError,
        match=r"pad_einsum: The padding for the block 'C' are invalid. It should be a list of 3 "
        rf"positive integers. Got {shown.replace('[', '.').replace(']', '.')}",
    ):
        sch.pad_einsum(sch.get_block("C"), padding)
    assert_structure(sch, ragged_matmul)


@T.prim_func
def shifted_sum(A: T.Buffer((11,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] + A[vi + 1]


@T.prim_func
def late_channel(A: T.Buffer((3, 10), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[2, vi]


@T.prim_func
def part_written(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(6):
        with T.block("B"):
            vi = T.axis.spatial(6, i)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def shared_loop(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32"),
                C: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] + T.float32(1)
        with T.block("C"):
            vi = T.axis.spatial(10, i)
            C[vi] = A[vi] * T.float32(2)


@pytest.mark.parametrize(
    "func, factor, message",
    [
        (shifted_sum, 4, "The block 'B' is not a computation of Einsum pattern"),
        (late_channel, 4, "A is accessed at the constant 2 on axis 0; its padded copy would "
         "have one element there"),
        (part_written, 4, "block 'B' writes 8 of the 10 elements of B on axis 0"),
        (shared_loop, 4, "loop i holds other blocks than 'B', whose iterations would grow"),
    ],
    ids=["not_einsum", "constant_index", "part_written", "shared_loop"],
)
def test_refusals(func, factor, message):
    sch = T.Schedule(func, debug_mask="all")
    with pytest.raises(T.ScheduleError, match=message):
        sch.pad_einsum(sch.get_block("B"), [factor])
    assert_structure(sch, func)


@T.prim_func
def half_produced(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    B = T.alloc_buffer((10,))
    for i in range(5):
        with T.block("B"):
            vi = T.axis.spatial(5, i)
            B[vi] = A[vi]
    for i in range(10):
        with T.block("C"):
            vi = T.axis.spatial(10, i)
            C[vi] = B[vi] * T.float32(2)


def test_a_scope_that_is_not_a_stage_pipeline():
    sch = T.Schedule(half_produced)
    with pytest.raises(T.ScheduleError, match="The scope root is not a stage pipeline: block 'C' "
                       "reads elements of 'B' that no earlier block is shown to write"):
        sch.pad_einsum(sch.get_block("C"), [4])
    assert_structure(sch, half_produced)


@T.prim_func
def init_in_a_block(A: T.Buffer((8, 12), "int32"), OUT: T.Buffer((8,), "int32")):
    for i in range(8):
        with T.block("outer"):
            vi = T.axis.spatial(8, i)
            vr = T.axis.reduce(1, 0)
            with T.init():
                with T.block("zero"):
                    OUT[vi] = 0
            for r in range(12):
                with T.block("acc"):
                    vk = T.axis.reduce(12, r)
                    OUT[vi] = OUT[vi] + A[vi, vk]


def test_a_block_in_an_init_is_refused():
    # the block holding it is no statement of its scope's body (an internal assertion)
    sch = T.Schedule(init_in_a_block)
    with pytest.raises(T.ScheduleError, match="block 'zero' is in the init of block 'outer'"):
        sch.pad_einsum("zero", [])


@T.prim_func
def constant_operand(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    W = T.allocate_const([0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0], "float32", [8])
    W_buf = T.decl_buffer((8,), data=W)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] * W_buf[vi]


def test_an_operand_declared_inside_the_scope_is_refused():
    # the copy of W_buf went before the T.allocate_const declaring it (a variable used out
    # of its scope), and the declaration itself was rewritten into the copy's
    sch = T.Schedule(constant_operand)
    with pytest.raises(T.ScheduleError, match="'W_buf' is declared inside the scope of block"):
        sch.pad_einsum("C", [3])


@T.prim_func
def row_max(A: T.Buffer((6, 10), "float32"), M: T.Buffer((6,), "float32")):
    for i, j in T.grid(6, 10):
        with T.block("max"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                M[vi] = T.float32(-3.0e38)
            M[vi] = T.max(M[vi], A[vi, vj])


@T.prim_func
def row_exp_sum(A: T.Buffer((6, 10), "float32"), S: T.Buffer((6,), "float32")):
    for i, j in T.grid(6, 10):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + T.exp(A[vi, vj])


@T.prim_func
def int_quotients(A: T.Buffer((6, 10), "int32"), D: T.Buffer((6, 10), "int32"),
                  Q: T.Buffer((6, 10), "int32")):
    for i, j in T.grid(6, 10):
        with T.block("q"):
            vi, vj = T.axis.remap("SS", [i, j])
            Q[vi, vj] = A[vi, vj] // D[vi, vj]


@pytest.mark.parametrize(("func", "block", "pads", "message"), [
    (row_max, "max", [1, 4], r"M becomes T.max\(M\[vi\], 0.0\)"),
    (row_exp_sum, "sum", [1, 4], r"S becomes S\[vi\] \+ T.exp\(0.0\)|S becomes S\[vi\] \+ 1"),
    (int_quotients, "q", [4, 4], "divides by a value the padding may make zero"),
], ids=["max", "sum_of_exp", "int_division"])
def test_padding_that_would_change_the_result_is_refused(func, block, pads, message):
    """The padding's zeros are no identity of max, exp(0) adds 1 to a sum (the row maxima of
    negative rows became 0, the sums grew by the padded count: TVM pads them all the same),
    and an integer quotient by a padded zero traps."""
    sch = T.Schedule(func)
    with pytest.raises(T.ScheduleError, match=message):
        sch.pad_einsum(block, pads)
    # padding only the spatial axis leaves every row's reduction as it was
    if func is not int_quotients:
        sch.pad_einsum(block, [4, 1])
        assert_native_same(func, sch)


@T.prim_func
def rows_in_outer_blocks(C: T.Buffer((4, 10), "float32"), D: T.Buffer((4, 10), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            for j in range(10):
                with T.block("D"):
                    vj = T.axis.spatial(10, j)
                    D[vi, vj] = T.max(C[vi, vj], T.float32(0))


def test_an_index_an_enclosing_block_fixes_is_refused():
    # the copies are whole buffers made in the row block: each row copied back all of D_pad,
    # whose other rows that iteration never wrote (NaN in D)
    sch = T.Schedule(rows_in_outer_blocks)
    with pytest.raises(T.ScheduleError, match="accesses C at vi, which is not one of its iter"):
        sch.pad_einsum("D", [4])
