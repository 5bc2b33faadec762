"""``promote_accumulators`` alone: an accumulator in memory (``S[i]`` updated every iteration
of the inner loop) lives in a local buffer LLVM keeps in a register, under a run-time test
that the accumulated element does not overlap the arrays the loop reads."""

from __future__ import annotations

from late_kit import (
    assert_same_numbers,
    before_late,
    loops,
    one_storage,
    run_pass,
    runs_avx2,
    stmts,
)

from irbuilder.ir import Allocate, BufferStore, DeclBuffer, For, IfThenElse, SeqStmt
from tvmscript import tir as T


@T.prim_func
def row_sums(A: T.Buffer((32, 64), "float32"), S: T.Buffer((32,), "float32")):
    for i in range(32):
        S[i] = T.float32(0)
        for k in range(64):
            S[i] = S[i] + A[i, k]


def test_the_accumulator_moves_to_a_local_behind_a_no_overlap_test() -> None:
    before = before_late(row_sums)
    assert not [s for s in stmts(before) if isinstance(s, IfThenElse)]
    after = run_pass("promote_accumulators", before)
    (branch,) = [s for s in stmts(after) if isinstance(s, IfThenElse)]
    allocation = branch.then_case
    assert isinstance(allocation, Allocate) and int(allocation.extent) == 1
    fast = allocation.body
    assert isinstance(fast, DeclBuffer) and fast.buffer.name == "S_flat_acc"
    assert isinstance(fast.body, SeqStmt)
    load, loop, store_back = fast.body.seq
    assert isinstance(load, BufferStore) and load.buffer is fast.buffer  # acc = S[i]
    assert isinstance(loop, For) and isinstance(loop.body, BufferStore)
    assert loop.body.buffer is fast.buffer  # the loop updates the local only
    assert isinstance(store_back, BufferStore) and store_back.buffer.name == "S_flat"
    assert isinstance(branch.else_case, For)  # the original loop over memory
    assert len(loops(after)) == 3


def test_a_loop_without_a_memory_accumulator_is_left_alone() -> None:
    @T.prim_func
    def copy(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32, 64), "float32")):
        for i, k in T.grid(32, 64):
            B[i, k] = A[i, k]

    before = before_late(copy)
    assert run_pass("promote_accumulators", before) is before


def test_a_short_reduction_loop_is_left_to_llvm() -> None:
    # a 3x3 window: LLVM unrolls the window and vectorizes over w, which a versioned
    # window loop prevented (the depthwise convolution ran 12x slower)
    @T.prim_func
    def depthwise(
        A: T.Buffer((4, 10, 10), "float32"),
        W: T.Buffer((4, 3, 3), "float32"),
        O: T.Buffer((4, 8, 8), "float32"),
    ):
        for c in T.parallel(4):
            for h, w in T.grid(8, 8):
                O[c, h, w] = T.float32(0)
                for kh, kw in T.grid(3, 3):
                    O[c, h, w] = O[c, h, w] + A[c, h + kh, w + kw] * W[c, kh, kw]

    before = before_late(depthwise)
    assert run_pass("promote_accumulators", before) is before


@runs_avx2
def test_same_numbers_before_and_after() -> None:
    before = before_late(row_sums)
    after = run_pass("promote_accumulators", before)
    assert_same_numbers(row_sums, before, after)
    # S inside A's rows: each update of S[i] may change what the loop reads next
    overlapping = lambda rng: one_storage(row_sums, [0, 40], rng)  # noqa: E731
    assert_same_numbers(row_sums, before, after, overlapping, reference=False)


@T.prim_func
def block_row_sums(A: T.Buffer((32, 256), "float32"), S: T.Buffer((32,), "float32")):
    for i in T.parallel(32):
        for k in range(256):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]


def test_the_fallback_of_a_lane_split_on_the_same_test_is_not_versioned_again() -> None:
    # vectorize_reductions already split the block reduction into lanes behind the test
    # this pass would make (S[i] outside A); its fallback runs only when the test fails, so
    # a promoted copy there would be dead code LLVM still has to compile
    before = before_late(block_row_sums)
    (split,) = [s for s in stmts(before) if isinstance(s, IfThenElse) and s.else_case]
    assert isinstance(split.else_case, For)
    after = run_pass("promote_accumulators", before)
    assert after is before
    assert not [s for s in stmts(after) if isinstance(s, DeclBuffer)
                and s.buffer.name.endswith("_acc")]
    # a different test (here: none before it) still gets its version
    assert [s for s in stmts(run_pass("promote_accumulators", before_late(row_sums)))
            if isinstance(s, DeclBuffer) and s.buffer.name.endswith("_acc")]
