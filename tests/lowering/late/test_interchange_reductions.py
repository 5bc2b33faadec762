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

from irbuilder.ir import BufferStore, For, PrimFunc, SeqStmt, Stmt
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


@T.prim_func
def packed_windows(P: T.Buffer((2, 4, 18, 8), "float32"), W: T.Buffer((1, 2, 3, 3, 8, 8), "float32"),
                   Y: T.Buffer((1, 2, 16, 8), "float32")):
    # an NCHW[x]c convolution: the output row is (w, o), 16 x 8 elements in a row, and the
    # input channel ``ic`` is split by the layout into ``ic // 8`` and ``ic % 8``
    for q, h, w, o, ic, kh, kw in T.grid(1, 2, 16, 8, 16, 3, 3):
        with T.block("Y"):
            vq, vh, vw, vo, vic, vkh, vkw = T.axis.remap("SSSSRRR", [q, h, w, o, ic, kh, kw])
            with T.init():
                Y[vq, vh, vw, vo] = T.float32(0)
            Y[vq, vh, vw, vo] = Y[vq, vh, vw, vo] + P[vic // 8, vh + vkh, vw + vkw, vic % 8] * W[vq, vic // 8, vkh, vkw, vic % 8, vo]


def _loop_names(stmt: Stmt) -> list[str]:
    names = []
    while isinstance(stmt, For):
        names.append(stmt.loop_var.name.split("_")[0])
        stmt = stmt.body
    return names


def test_a_row_of_short_column_loops_moves_inside_the_reduction() -> None:
    # the innermost output loop (o: 8) is too short alone; with w it sweeps a contiguous row
    # of 128 elements, which goes below the reduction loops as a whole, o as one vector
    before = before_late(packed_windows)
    after = run_pass("interchange_reductions", before)
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    init, nest = branch.then_case.body.seq
    assert _loop_names(init) == ["w"]
    assert _loop_names(nest) == ["ic", "kh", "kw", "w"]
    for stmt in (init, nest):
        while isinstance(stmt, For):
            stmt = stmt.body
        assert isinstance(stmt, BufferStore) and stmt.value.dtype.lanes == 8
    assert branch.else_case is not None
    assert _loop_names(branch.else_case) == ["w", "o", "ic", "kh", "kw"]


@runs_avx2
def test_a_row_of_short_column_loops_gives_the_same_numbers() -> None:
    before = before_late(packed_windows)
    after = run_pass("interchange_reductions", before)
    assert after is not before
    assert_same_numbers(packed_windows, before, after)
    # Y inside W: the original nest runs
    overlapping = lambda rng: one_storage(packed_windows, [0, 0, 128], rng)  # noqa: E731
    assert_same_numbers(packed_windows, before, after, overlapping, reference=False)


def test_a_column_loop_long_enough_alone_is_not_grouped() -> None:
    # f (32) makes a vector row of its own, whose accumulators stay in registers: the group
    # (w, f) is not formed, the f loop is interchanged alone
    @T.prim_func
    def nhwc(X: T.Buffer((10, 34, 16), "float32"), W: T.Buffer((3, 3, 16, 32), "float32"),
             Y: T.Buffer((8, 32, 32), "float32")):
        for h, w, f, kh, kw, c in T.grid(8, 32, 32, 3, 3, 16):
            with T.block("Y"):
                vh, vw, vf, vkh, vkw, vc = T.axis.remap("SSSRRR", [h, w, f, kh, kw, c])
                with T.init():
                    Y[vh, vw, vf] = T.float32(0)
                Y[vh, vw, vf] = Y[vh, vw, vf] + X[vh + vkh, vw + vkw, vc] * W[vkh, vkw, vc, vf]

    after = run_pass("interchange_reductions", before_late(nhwc))
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    names = _loop_names(branch.then_case.body.seq[1])
    assert names[:2] == ["kh", "kw"] and names[-1] == "f" and "w" not in names


def test_a_group_wider_than_the_caches_is_left_alone() -> None:
    # rows of 64 x 8 x 8 = 4096 elements are the widest group: h, w, o of 8 x 128 x 8 is
    # not formed, w, o (1024) is
    @T.prim_func
    def wide(P: T.Buffer((10, 130, 8), "float32"), W: T.Buffer((3, 8, 8), "float32"),
             Y: T.Buffer((8, 128, 8), "float32")):
        for h, w, o, kh, i in T.grid(8, 128, 8, 3, 8):
            with T.block("Y"):
                vh, vw, vo, vkh, vi = T.axis.remap("SSSRR", [h, w, o, kh, i])
                with T.init():
                    Y[vh, vw, vo] = T.float32(0)
                Y[vh, vw, vo] = Y[vh, vw, vo] + P[vh + vkh, vw + vkh, vi] * W[vkh, vi, vo]

    after = run_pass("interchange_reductions", before_late(wide))
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    assert _loop_names(branch.then_case.body.seq[1]) == ["kh", "i", "w"]  # o: one vector
