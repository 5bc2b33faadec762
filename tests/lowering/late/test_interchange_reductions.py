"""``interchange_reductions`` alone: a reduction nest walking an array with a stride in its
reduction loop (the naive matmul's ``B[k, j]``) becomes i-k-j under a run-time no-overlap
test, so the inner loop is unit-stride; overlapping arguments run the original nest."""

from __future__ import annotations

from late_kit import (
    assert_same_numbers,
    before_late,
    loops,
    one_storage,
    run_pass,
    runs_avx2,
    versioning_ifs,
)

from irbuilder.ir import For, PrimFunc, SeqStmt, Stmt
from irbuilder.ir.functor import post_order_visit
from lowering.late.alias_version import NOALIAS_ATTR
from tvmscript import tir as T


@T.prim_func
def matmul(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
           C: T.Buffer((32, 32), "float32")):
    for i, j in T.grid(32, 32):
        C[i, j] = T.float32(0)
        for k in range(32):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


def _inner_loop(loop: For) -> For | None:
    body = loop.body.seq if isinstance(loop.body, SeqStmt) else [loop.body]
    inner = [s for s in body if isinstance(s, For)]
    return inner[0] if inner else None


def _nests(func: PrimFunc, within: Stmt) -> list[list[str]]:
    """Loop-variable names of each two-deep nest inside ``within``."""
    found = []
    for loop in loops(func):
        inner = _inner_loop(loop)
        if inner is not None and _is_inside(loop, within):
            found.append([loop.loop_var.name, inner.loop_var.name])
    return found


def test_the_nest_becomes_i_k_j_behind_a_no_overlap_test() -> None:
    before = before_late(matmul)
    assert [f.loop_var.name for f in loops(before)][:3] == ["i", "j", "k"]
    after = run_pass("interchange_reductions", before)
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    region = branch.then_case
    assert [v.name[0] for v in region.node] == ["C", "A", "B"]  # type: ignore[attr-defined]
    assert _nests(after, region) == [["k", "j"]]  # the interchanged nest, inner unit-stride
    assert branch.else_case is not None
    assert _nests(after, branch.else_case) == [["j", "k"]]  # the original order


def _is_inside(loop: For, stmt: object) -> bool:
    found: list[object] = []
    post_order_visit(stmt, found.append)  # type: ignore[arg-type]
    return any(node is loop for node in found)


def test_a_unit_stride_reduction_is_left_alone() -> None:
    @T.prim_func
    def rowdot(A: T.Buffer((32, 32), "float32"), X: T.Buffer((32,), "float32"),
               Y: T.Buffer((32,), "float32")):
        for i in range(32):
            Y[i] = T.float32(0)
            for k in range(32):
                Y[i] = Y[i] + A[i, k] * X[k]

    before = before_late(rowdot)
    assert run_pass("interchange_reductions", before) is before


@runs_avx2
def test_same_numbers_before_and_after() -> None:
    before = before_late(matmul)
    after = run_pass("interchange_reductions", before)
    assert_same_numbers(matmul, before, after)
    # C over A: the original loop order runs
    overlapping = lambda rng: one_storage(matmul, [0, 2048, 0], rng)  # noqa: E731
    assert_same_numbers(matmul, before, after, overlapping, reference=False)


@T.prim_func
def column_sums(A: T.Buffer((64, 256), "float32"), S: T.Buffer((256,), "float32")):
    for j in T.parallel(256):
        for i in range(64):
            with T.block("S"):
                vj, vi = T.axis.remap("SR", [j, i])
                with T.init():
                    S[vj] = T.float32(0)
                S[vj] = S[vj] + A[vi, vj]


def test_a_parallel_column_loop_runs_interchanged_chunks() -> None:
    # the block reduction down the columns: parallel over chunks of 32 columns (8 chunks),
    # each chunk row-by-row with a unit-stride inner loop
    before = before_late(column_sums)
    after = run_pass("interchange_reductions", before)
    (outer,) = [lp for lp in loops(after) if lp.loop_var.name == "j_chunk"]
    assert outer.kind.name == "PARALLEL" and int(outer.extent) == 8
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    assert _nests(after, branch.then_case) == [["i", "j_in"]]
    assert branch.else_case is not None


@runs_avx2
def test_interchanged_chunks_give_the_same_numbers() -> None:
    before = before_late(column_sums)
    after = run_pass("interchange_reductions", before)
    assert_same_numbers(column_sums, before, after)
    # S inside A: every chunk runs the original order
    overlapping = lambda rng: one_storage(column_sums, [0, 4096], rng)  # noqa: E731
    assert_same_numbers(column_sums, before, after, overlapping, reference=False)


@T.prim_func
def window_sums(P: T.Buffer((4, 10, 40), "float32"), W: T.Buffer((4, 3, 3), "float32"),
                Y: T.Buffer((8, 32), "float32")):
    for h, w, c, kh, kw in T.grid(8, 32, 4, 3, 3):
        with T.block("Y"):
            vh, vw, vc, vkh, vkw = T.axis.remap("SSRRR", [h, w, c, kh, kw])
            with T.init():
                Y[vh, vw] = T.float32(0)
            Y[vh, vw] = Y[vh, vw] + P[vc, vh + vkh, vw + vkw] * W[vc, vkh, vkw]


def test_nested_reduction_loops_move_outside_the_output_row() -> None:
    # a convolution's three reduction loops, the init guarded by all three at their start:
    # the output row (w) goes innermost, below c, kh, kw
    before = before_late(window_sums)
    after = run_pass("interchange_reductions", before)
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    nest = branch.then_case.body.seq[1]  # after the init loop
    names = []
    while isinstance(nest, For):
        names.append(nest.loop_var.name)
        nest = nest.body
    assert [name.split("_")[0] for name in names] == ["c", "kh", "kw", "w"]
    assert branch.else_case is not None


@runs_avx2
def test_nested_reduction_loops_give_the_same_numbers() -> None:
    before = before_late(window_sums)
    after = run_pass("interchange_reductions", before)
    assert_same_numbers(window_sums, before, after)
