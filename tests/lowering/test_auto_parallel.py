"""parallelize_loops: an outermost serial loop runs in parallel when that cannot change a
result (race-free by the race check's rule, no side effects, enough work), under a
run-time test that the arrays it writes overlap no other array it uses.

Each test looks at the loop kinds after lowering for a pinned target and runs the compiled
kernel against the reference interpreter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lowering
import tvmscript
from irbuilder.ir import For, ForKind, PrimFunc, post_order_visit
from lowering.transforms.auto_parallel import MIN_WORK, PARALLEL_IF
from tests.perf_codegen.pinned import AVX2, lower_for
from tvmscript import tir as T

N = MIN_WORK * 4


def loops(func: PrimFunc) -> list[tuple[str, ForKind, bool]]:
    """(loop var name, kind, has a run-time parallel test) of every loop, outer first."""
    found: list[tuple[str, ForKind, bool]] = []

    def visit(node: Any) -> None:
        if isinstance(node, For):
            found.append((node.loop_var.name, node.kind, PARALLEL_IF in node.annotations))

    post_order_visit(func.body, visit)
    return list(reversed(found))


def outer_kind(func: PrimFunc) -> ForKind:
    return loops(lower_for(func))[0][1]


def run_both(
    func: PrimFunc, *arrays: np.ndarray, **options: Any
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    fast = [a.copy() for a in arrays]
    slow = [a.copy() for a in arrays]
    tvmscript.build(func, **options)(*fast)
    tvmscript.build(func, target="interp")(*slow)
    return fast, slow


@T.prim_func
def gather(table: T.Buffer((1024,), "float32"), idx: T.Buffer((N,), "int32"),
           out: T.Buffer((N,), "float32")):
    for i in range(N):
        out[i] = table[idx[i]]


def test_a_gather_loop_becomes_parallel_chunks_of_a_serial_loop() -> None:
    found = loops(lower_for(gather))
    assert found[0][1] is ForKind.PARALLEL and found[0][2]
    assert found[0][0] == "i_outer"
    rng = np.random.default_rng(0)
    table = rng.standard_normal(1024).astype("float32")
    idx = rng.integers(0, 1024, N).astype("int32")
    fast, slow = run_both(gather, table, idx, np.zeros(N, "float32"))
    np.testing.assert_array_equal(fast[2], slow[2])


@T.prim_func
def row_sums(A: T.Buffer((512, 256), "float32"), B: T.Buffer((512,), "float32")):
    k = T.reduce_axis(0, 256)
    T.compute((512,), lambda i: T.sum(A[i, k], axis=k), out=B)


def test_a_compute_reduction_runs_its_rows_in_parallel() -> None:
    found = loops(lower_for(row_sums))
    assert found[0][:2] == ("i", ForKind.PARALLEL)
    a = np.random.default_rng(1).standard_normal((512, 256)).astype("float32")
    # in source order (no lanes), the parallel rows give the interpreter's bits
    fast, slow = run_both(row_sums, a, np.zeros(512, "float32"), strict_reductions=True)
    np.testing.assert_array_equal(fast[1], slow[1])


@T.prim_func
def histogram(D: T.Buffer((N,), "int32"), H: T.Buffer((256,), "int32")):
    for i in range(N):
        H[D[i]] = H[D[i]] + 1


@T.prim_func
def prefix(A: T.Buffer((N,), "float32")):
    for i in range(N - 1):
        A[i + 1] = A[i + 1] + A[i]


@T.prim_func
def small(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for i in range(1024):
        B[i] = A[i] * T.float32(2)


@T.prim_func
def checked(A: T.Buffer((N,), "int32"), B: T.Buffer((N,), "int32")):
    for i in range(N):
        assert A[i] >= 0, "negative"
        B[i] = A[i]


def test_loops_that_may_race_or_are_too_small_stay_serial() -> None:
    assert outer_kind(histogram) is ForKind.SERIAL  # iterations may hit one bin
    assert outer_kind(prefix) is ForKind.SERIAL  # iteration i reads what i - 1 wrote
    assert outer_kind(small) is ForKind.SERIAL  # not worth a fork/join
    assert outer_kind(checked) is ForKind.SERIAL  # which assertion fails first is ordered
    a = np.random.default_rng(2).standard_normal(N).astype("float32")
    fast, slow = run_both(prefix, a)
    np.testing.assert_array_equal(fast[0], slow[0])


def test_the_config_keeps_loops_serial() -> None:
    with lowering.PassContext(config={"parallelize_loops": {"enabled": False}}):
        assert loops(lowering.lower(gather, target=AVX2))[0][1] is ForKind.SERIAL


@T.prim_func
def shift(A: T.Buffer((N + 1,), "float32"), B: T.Buffer((N,), "float32")):
    for i in range(N):
        B[i] = A[i + 1] * T.float32(2)


def test_overlapping_arrays_run_the_loop_in_order() -> None:
    assert loops(lower_for(shift))[0][1:] == (ForKind.PARALLEL, True)
    base = np.arange(N + 1, dtype="float32")
    kernel = tvmscript.build(shift)
    reference = tvmscript.build(shift, target="interp")
    # B is A shifted by one element: each iteration must read A[i + 1] before iteration
    # i + 1 overwrites it, which only the serial order guarantees
    fast = base.copy()
    kernel(fast, fast[:N])
    slow = base.copy()
    reference(slow, slow[:N])
    np.testing.assert_array_equal(fast, slow)
    # disjoint arrays take the parallel path and agree too
    a = base.copy()
    out, want = np.zeros(N, "float32"), np.zeros(N, "float32")
    kernel(a, out)
    reference(a, want)
    np.testing.assert_array_equal(out, want)


@T.prim_func
def symbolic_matmul(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, n), "float32")
    B = T.match_buffer(b, (n, n), "float32")
    C = T.match_buffer(c, (n, n), "float32")
    for i, j in T.grid(n, n):
        C[i, j] = T.float32(0)
        for k in range(n):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


def test_symbolic_inner_extents_are_weighed_at_run_time() -> None:
    """Inner loops of symbolic extent: the nest's work (n * (n + n * n) iterations) is
    tested against MIN_WORK at run time, with the overlap test; small sizes run serially
    on the calling thread, large ones in parallel, both as the interpreter computes."""
    import re

    from lowering.pipeline import LATE_STAGE

    with lowering.PassContext(disabled_passes=frozenset(LATE_STAGE)):
        lowered = lower_for(symbolic_matmul)
    outer = next(lp for lp in _fors(lowered) if lp.kind is ForKind.PARALLEL)
    test = str(outer.annotations[PARALLEL_IF])
    assert re.search(rf"\b{MIN_WORK}\b", test) and "n >= 4" in lowered.script()
    kernel = tvmscript.build(symbolic_matmul, target=AVX2, cache=False)
    reference = tvmscript.build(symbolic_matmul, target="interp")
    rng = np.random.default_rng(3)
    for n in (3, 40, 64):  # 64: 64 * (64 + 64 * 64) iterations, above MIN_WORK
        a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
        got, want = np.empty((n, n), "float32"), np.empty((n, n), "float32")
        for _ in range(3):
            kernel(a, b, got)
            reference(a, b, want)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _fors(func: PrimFunc) -> list[For]:
    found: list[For] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, For) else None)
    return list(reversed(found))


@T.prim_func
def symbolic_triangle(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, n), "float32")
    for i in range(n):
        for j in range(i + 1):
            A[i, j] = A[i, j] + T.float32(1)


def test_work_depending_on_the_loop_itself_is_not_tested_before_it() -> None:
    """A triangular nest's inner extent (i + 1) is the loop's own variable: no run-time work
    test can be made before the loop, so it stays serial (its test once read i out of
    scope); the verifier checks annotation expressions like any other use."""
    lowered = lower_for(symbolic_triangle)
    lowering.verify_well_formed(lowered, lowered=True)
    assert all(kind is ForKind.SERIAL for _, kind, _ in loops(lowered))
    a = np.random.default_rng(1).standard_normal((70, 70)).astype("float32")
    fast, slow = run_both(symbolic_triangle, a, target=AVX2)
    np.testing.assert_array_equal(fast[0], slow[0])


@T.prim_func
def batch_of_two(X: T.Buffer((2, 64, 1024), "float32"), Y: T.Buffer((2, 64, 1024), "float32")):
    for n, c, w in T.grid(2, 64, 1024):
        with T.block("Y"):
            vn, vc, vw = T.axis.remap("SSS", [n, c, w])
            Y[vn, vc, vw] = X[vn, vc, vw] * T.float32(2) + T.float32(1)


@T.prim_func
def batch_of_two_racing(X: T.Buffer((2, 64, 1024), "float32"), S: T.Buffer((1024,), "float32")):
    for n, c, w in T.grid(2, 64, 1024):
        S[w] = S[w] + X[n, c, w]  # every c adds to the same S[w]: c may not be parallel


def test_a_loop_under_a_small_batch_loop_runs_in_parallel() -> None:
    found = loops(lower_for(batch_of_two))
    assert found[0][:2] == ("n", ForKind.SERIAL)
    assert found[1][0] == "c" and found[1][1] is ForKind.PARALLEL and found[1][2]
    x = np.random.default_rng(4).standard_normal((2, 64, 1024)).astype("float32")
    for _ in range(3):  # the parallel loop on every core, several runs
        fast, slow = run_both(batch_of_two, x, np.zeros((2, 64, 1024), "float32"))
        np.testing.assert_array_equal(fast[1], slow[1])
    # under a small loop the race check still decides
    assert all(kind is ForKind.SERIAL for _, kind, _ in loops(lower_for(batch_of_two_racing)))


@T.prim_func
def add_three(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"),
              C: T.Buffer((N,), "float32"), D: T.Buffer((N,), "float32")):
    for i in range(N):
        D[i] = A[i] + B[i] * C[i]


def test_the_run_time_test_names_the_arrays_in_parameter_order() -> None:
    # The object cache is keyed by the generated text: the same kernel must give the same
    # test in every process (the order once followed the hashes of a set of vars).
    conds: list[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, For) and PARALLEL_IF in node.annotations:
            conds.append(node.annotations[PARALLEL_IF])

    post_order_visit(lower_for(add_three).body, visit)
    assert len(conds) == 1
    text = str(conds[0])
    names = [text.index(f"'{name}_data'") for name in "ABC"]
    assert names == sorted(names), text


@T.prim_func
def colsum_by_rows(A: T.Buffer((256, 512), "float32"), B: T.Buffer((512,), "float32")):
    for j in T.parallel(512):
        B[j] = T.float32(0)
    for i in range(256):
        for j in T.parallel(512):
            B[j] = B[j] + A[i, j]


@T.prim_func
def colsum_flat(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (256 * 512,), "float32")
    B = T.match_buffer(b, (512,), "float32")
    for i in range(256):
        for j in T.parallel(512):
            B[j] = B[j] * T.float32(0.5) + A[i * 512 + j]


@T.prim_func
def rows_under_serial(A: T.Buffer((256, 512), "float32"), C: T.Buffer((256, 512), "float32")):
    for i in range(256):
        for j in T.parallel(512):
            C[i, j] = A[i, j] * T.float32(2)


def forks_inside(func: PrimFunc, name: str) -> list[bool]:
    """For each loop over ``name`` in ``func``: whether a parallel loop is inside it."""
    found: list[bool] = []

    def visit(node: Any) -> None:
        if isinstance(node, For) and node.loop_var.name == name:
            inner: list[bool] = []
            post_order_visit(node.body, lambda n: inner.append(
                isinstance(n, For) and n.kind is ForKind.PARALLEL))
            found.append(any(inner))

    post_order_visit(func.body, visit)
    return found


def test_a_serial_loop_around_a_parallel_update_goes_inside_it() -> None:
    # `for i: for j in T.parallel: B[j] += A[i, j]` forks once per row; its stores do
    # not depend on i, so the parallel loop goes outside and each B[j] accumulates
    # over i in one thread, in the same order (one fork, a register accumulator).
    # the hoisted nest under the run-time no-overlap test, the loops as written after it
    assert sorted(forks_inside(lower_for(colsum_by_rows, opt_level=1), "i")) == [False, True]
    rng = np.random.default_rng(5)
    a = rng.standard_normal((256, 512)).astype("float32")
    for _ in range(3):
        fast, slow = run_both(colsum_by_rows, a, np.zeros(512, "float32"), target=AVX2)
        np.testing.assert_array_equal(fast[1], slow[1])


def test_a_hoisted_loop_keeps_the_written_order_when_the_arrays_overlap() -> None:
    # B a view of A's first row: the run-time test fails and the loops run as written
    # (row 0's updates of B change what later rows read... from A's first row only, so
    # any reordering would show in the result).
    rng = np.random.default_rng(6)
    for _ in range(3):
        base = rng.standard_normal(256 * 512).astype("float32")
        fast_a, slow_a = base.copy(), base.copy()
        tvmscript.build(colsum_flat, target=AVX2)(fast_a, fast_a[:512])
        tvmscript.build(colsum_flat, target="interp")(slow_a, slow_a[:512])
        np.testing.assert_array_equal(fast_a, slow_a)
        # and apart, the hoisted loop gives the interpreter's bits too
        out = np.zeros(512, "float32")
        fast, slow = run_both(colsum_flat, base, out, target=AVX2)
        np.testing.assert_array_equal(fast[1], slow[1])
    assert sorted(forks_inside(lower_for(colsum_flat, opt_level=1), "i")) == [False, True]


def test_stores_that_move_with_the_serial_loop_keep_it_outside() -> None:
    # C[i, j]: each row is its own elements; swapping would walk C by columns
    assert forks_inside(lower_for(rows_under_serial, opt_level=1), "i") == [True]
    a = np.random.default_rng(7).standard_normal((256, 512)).astype("float32")
    fast, slow = run_both(rows_under_serial, a, np.zeros((256, 512), "float32"), target=AVX2)
    np.testing.assert_array_equal(fast[1], slow[1])
    # parallelize_loops switched off keeps the loops as written
    config = {"parallelize_loops": {"enabled": False}}
    with lowering.PassContext(opt_level=1, config=config):
        off = lowering.lower(colsum_by_rows, target=AVX2)
    assert forks_inside(off, "i") == [True]


@T.prim_func
def scratch_under_serial(A: T.Buffer((64,), "float32"), B: T.Buffer((512,), "float32")):
    t = T.alloc_buffer((1,), "float32")
    for i in range(64):
        for j in T.parallel(512):
            t[0] = A[i] * T.float32(2)
            B[j] = B[j] + t[0]


def test_a_loop_using_a_buffer_of_the_function_stays_as_written() -> None:
    # Two copies of the nest would share `t`: its uses would meet above both copies and
    # it would stop being private to an iteration (found by the parallel fuzzer: a
    # race-free program refused). Such nests are left as written.
    assert forks_inside(lower_for(scratch_under_serial, opt_level=1), "i") == [True]
    a = np.random.default_rng(8).standard_normal(64).astype("float32")
    for _ in range(3):
        fast, slow = run_both(scratch_under_serial, a, np.zeros(512, "float32"), target=AVX2)
        np.testing.assert_array_equal(fast[1], slow[1])
