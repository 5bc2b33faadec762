"""``distribute_reductions`` alone: a serial loop computing element-wise stores and a scalar
reduction of them splits in two loops, so the element-wise one can vectorize while the
(strict, in-order) sum keeps its order."""

from __future__ import annotations

from late_kit import assert_same_numbers, before_late, loops, run_pass, runs_avx2, stmts

from irbuilder.ir import BufferStore, For, SeqStmt
from tvmscript import tir as T


@T.prim_func
def exp_and_sum(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
                S: T.Buffer((1,), "float32")):
    s = T.decl_buffer((1,), "float32")
    s[0] = T.float32(0)
    for j in range(64):
        B[j] = T.exp(A[j])
        s[0] = s[0] + B[j]
    S[0] = s[0]


def _stored(loop: For) -> str:
    assert isinstance(loop.body, BufferStore)
    return loop.body.buffer.name


def test_the_loop_splits_into_the_stores_then_the_reduction() -> None:
    before = before_late(exp_and_sum)
    assert len(loops(before)) == 1
    after = run_pass("distribute_reductions", before)
    (parent,) = [s for s in stmts(after) if isinstance(s, SeqStmt) and
                 sum(isinstance(item, For) for item in s.seq) == 2]
    first, second = [item for item in parent.seq if isinstance(item, For)]
    assert [int(first.extent), int(second.extent)] == [64, 64]
    assert (_stored(first), _stored(second)) == ("B_flat", "s")


def test_a_reduction_alone_stays_one_loop() -> None:
    @T.prim_func
    def total(A: T.Buffer((64,), "float32"), S: T.Buffer((1,), "float32")):
        for j in range(64):
            S[0] = S[0] + A[j]

    before = before_late(total)
    assert run_pass("distribute_reductions", before) is before


@T.prim_func
def square_and_sum(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"),
                   S: T.Buffer((1,), "float32")):
    s = T.decl_buffer((1,), "float32")
    s[0] = T.float32(0)
    for j in range(64):
        B[j] = A[j] * A[j] + T.float32(1)
        s[0] = s[0] + B[j]
    S[0] = s[0]


@runs_avx2
def test_same_numbers_before_and_after() -> None:
    before = before_late(square_and_sum)
    after = run_pass("distribute_reductions", before)
    assert len(loops(after)) == 2
    assert_same_numbers(square_and_sum, before, after)


@runs_avx2
def test_vectorized_exp_is_within_an_ulp_of_the_scalar_one() -> None:
    # The split-off loop vectorizes, and the vector exp (libmvec or the polynomial of
    # backend/runtime/vecmath.py) may round differently from the scalar libm call in the
    # last bit: the pass keeps every operation and its order, the math library differs.
    before = before_late(exp_and_sum)
    after = run_pass("distribute_reductions", before)
    assert_same_numbers(exp_and_sum, before, after, bit_exact=False)
