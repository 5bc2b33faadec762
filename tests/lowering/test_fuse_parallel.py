"""``fuse_parallel_loops``: consecutive loops over the same rows, one of them parallel,
become one parallel loop when the race check proves the fused iterations independent;
the result is the unfused program's."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import For, ForKind, IfThenElse, PrimFunc, post_order_visit
from lowering.target import Target
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent.parent / "perf_codegen"))
from pinned import AVX2, AVX512, lower_for, needs_host_features

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import run_reference


@T.prim_func
def layernorm_blocks(A: T.Buffer((1024, 128), "float32"), O: T.Buffer((1024, 128), "float32")):
    S = T.alloc_buffer((1024,), "float32")
    M = T.alloc_buffer((1024,), "float32")
    Q = T.alloc_buffer((1024,), "float32")
    for i, j in T.grid(1024, 128):
        with T.block("sum"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vj]
    for i in range(1024):
        with T.block("mean"):
            vi = T.axis.remap("S", [i])
            M[vi] = S[vi] / T.float32(128)
    for i, j in T.grid(1024, 128):
        with T.block("var"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                Q[vi] = T.float32(0)
            Q[vi] = Q[vi] + (A[vi, vj] - M[vi]) * (A[vi, vj] - M[vi])
    for i, j in T.grid(1024, 128):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            O[vi, vj] = (A[vi, vj] - M[vi]) * T.rsqrt(Q[vi] / T.float32(128) + T.float32(1e-5))


@T.prim_func
def shifted(A: T.Buffer((1024, 128), "float32"), O: T.Buffer((256,), "float32")):
    S = T.alloc_buffer((256,), "float32")
    R = T.alloc_buffer((256,), "float32")
    for i in T.parallel(256):
        S[i] = T.float32(0)
        for j in range(128):
            S[i] = S[i] + A[i, j]
    for i in T.parallel(256):  # reads the next row's sum: iteration i needs i + 1 done
        R[i] = S[T.min(i + 1, 255)] - S[i]
    for i in T.parallel(256):
        O[i] = R[i] * T.float32(2)


@T.prim_func
def reversed_rows(A: T.Buffer((1024, 128), "float32"), O: T.Buffer((256,), "float32")):
    S = T.alloc_buffer((256,), "float32")
    R = T.alloc_buffer((256,), "float32")
    for i in T.parallel(256):
        S[i] = T.float32(0)
        for j in range(128):
            S[i] = S[i] + A[i, j]
    for i in T.parallel(256):
        R[i] = S[255 - i] * T.float32(2)
    for i in T.parallel(256):
        O[i] = R[i] + T.float32(1)


@T.prim_func
def two_outputs(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32"),
                C: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        B[i] = A[i] + T.float32(1)
    for i in T.parallel(4096):
        C[i] = B[i] * T.float32(2)


def _parallel_loops(func: PrimFunc) -> list[For]:
    found: list[For] = []
    post_order_visit(func.body, lambda n: found.append(n)
                     if isinstance(n, For) and n.kind is ForKind.PARALLEL else None)
    return found


def _unfused(func: PrimFunc) -> PrimFunc:
    with lowering.PassContext(disabled_passes=frozenset({"fuse_parallel_loops"})):
        return lower_for(func, AVX2)


def _versions(func: PrimFunc) -> list[IfThenElse]:
    found: list[IfThenElse] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, IfThenElse)
                     and any(isinstance(m, For) for m in _children(n)) else None)
    return found


def _children(node: IfThenElse) -> list[object]:
    out: list[object] = []
    post_order_visit(node.then_case, out.append)
    return out


def test_a_block_layernorms_statistics_run_in_one_parallel_loop() -> None:
    fused = lower_for(layernorm_blocks, AVX2)
    assert len(_parallel_loops(_unfused(layernorm_blocks))) == 3
    # sum + mean + var in one loop (locals only); the normalising loop writes O beside A,
    # which may overlap it: fused too, behind the test that they do not
    (version,) = [v for v in _versions(fused) if "O" in str(v.condition)]
    fast = _parallel_loops(fused.with_body(version.then_case))
    slow = _parallel_loops(fused.with_body(version.else_case))
    assert (len(fast), len(slow)) == (1, 2)
    text = fused.with_body(version.then_case).script()
    # the row statistics, used by both branches, get one allocation per branch: in the
    # fused loop each iteration has its own (one element each), the loops as written
    # keep the whole vectors
    assert "S[0]" in text and "Q[0]" in text and "O_flat[" in text
    assert 'S = T.decl_buffer((1,), "float32")' in text
    other = fused.with_body(version.else_case).script()
    assert "S[i" in other and "Q[i" in other


def test_fused_loops_compute_the_unfused_numbers() -> None:
    rng = np.random.default_rng(5)
    A = rng.standard_normal((1024, 128)).astype("float32")
    want = np.zeros_like(A)
    tvmscript.build(layernorm_blocks, target="interp")(A, want)
    got = np.zeros_like(A)
    tvmscript.build(layernorm_blocks, target=AVX2, cache=False)(A, got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_loops_reading_another_rows_result_stay_apart() -> None:
    rng = np.random.default_rng(6)
    A = rng.standard_normal((1024, 128)).astype("float32")
    for func in (shifted, reversed_rows):
        lowered = lower_for(func, AVX2)
        # the sums stay apart; the last two loops (row i reads row i) fuse
        assert len(_parallel_loops(lowered)) == 2, func
        assert len(_parallel_loops(_unfused(func))) == 3, func
        want = np.zeros(256, "float32")
        tvmscript.build(func, target="interp")(A, want)
        got = np.zeros(256, "float32")
        tvmscript.build(func, target=AVX2, cache=False)(A, got)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_loops_writing_parameter_arrays_that_may_overlap_fuse_behind_a_test() -> None:
    # B could be A shifted by a few elements: fused, row i of the second loop would read B
    # before the first loop of a later row wrote it; so the fused loop runs when the arrays
    # do not overlap, the loops as written otherwise
    lowered = lower_for(two_outputs, AVX2)
    (version,) = _versions(lowered)
    assert "A" in str(version.condition) and "B" in str(version.condition)
    assert len(_parallel_loops(lowered.with_body(version.then_case))) == 1
    assert len(_parallel_loops(lowered.with_body(version.else_case))) == 2


@pytest.mark.parametrize("target", [
    pytest.param(t, id=t.mcpu, marks=needs_host_features(t)) for t in (AVX2, AVX512)])
def test_an_output_overlapping_the_input_runs_the_loops_as_written(target: Target) -> None:
    """The layernorm's output a view one row into its input: every row's statistics are
    computed before any output row is written, as the blocks say (three runs on all
    cores; the output apart from the input, the fused loop, too)."""
    storage = np.random.default_rng(8).standard_normal(2049 * 128).astype("float32")
    kernel = tvmscript.build(layernorm_blocks, target=target, cache=False)
    for offset in (128, 1024 * 128):  # one row in: overlapping; past the input: apart
        want = storage.copy()
        run_reference(layernorm_blocks, [  # once per offset: the two targets share it
            want[: 1024 * 128].reshape(1024, 128),
            want[offset : offset + 1024 * 128].reshape(1024, 128)])
        for _ in range(3):
            got = storage.copy()
            kernel(got[: 1024 * 128].reshape(1024, 128),
                   got[offset : offset + 1024 * 128].reshape(1024, 128))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_loops_over_other_rows_or_both_serial_stay_apart() -> None:
    @T.prim_func
    def other_bounds(A: T.Buffer((300,), "float32"), B: T.Buffer((300,), "float32")):
        S = T.alloc_buffer((300,), "float32")
        for i in T.parallel(300):
            S[i] = A[i] * T.float32(3)
        for i in T.parallel(299):
            B[i] = S[i]

    @T.prim_func
    def both_serial(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        S = T.alloc_buffer((8,), "float32")
        for i in range(8):
            S[i] = A[i] * T.float32(3)
        for i in range(8):
            B[i] = S[i]

    assert len(_parallel_loops(lower_for(other_bounds, AVX2))) == 2
    lowered = lower_for(both_serial, AVX2).script()
    assert "T.parallel" not in lowered
    assert lowered.count("for i") == 2


@T.prim_func
def gradient_chain(dy: T.Buffer((2048, 256), "float32"), x: T.Buffer((2048, 256), "float32"),
                   dx: T.Buffer((2048, 256), "float32")):
    # a layer-norm backward's shape: the output holds an intermediate stage (written beside
    # the inputs, so every fusion needs the no-overlap test), then two row sums read it
    # and the last loop rewrites it
    xhat = T.alloc_buffer((2048, 256), "float32")
    s = T.alloc_buffer((2048,), "float32")
    q = T.alloc_buffer((2048,), "float32")
    for i, j in T.grid(2048, 256):
        with T.block("xhat"):
            vi, vj = T.axis.remap("SS", [i, j])
            xhat[vi, vj] = x[vi, vj] * T.float32(0.5)
    for i, j in T.grid(2048, 256):
        with T.block("g"):
            vi, vj = T.axis.remap("SS", [i, j])
            dx[vi, vj] = dy[vi, vj] * T.float32(2)
    for i, j in T.grid(2048, 256):
        with T.block("s"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + dx[vi, vj]
    for i, j in T.grid(2048, 256):
        with T.block("q"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                q[vi] = T.float32(0)
            q[vi] = q[vi] + dx[vi, vj] * xhat[vi, vj]
    for i, j in T.grid(2048, 256):
        with T.block("dx"):
            vi, vj = T.axis.remap("SS", [i, j])
            dx[vi, vj] = dx[vi, vj] - s[vi] * T.float32(0.01) - xhat[vi, vj] * q[vi]


def test_a_guarded_fusion_goes_on_with_the_next_loops() -> None:
    """Every stage joins one loop behind one test (the loops as written in its else
    branch), so each row is read from memory once."""
    lowered = lower_for(gradient_chain, AVX2)
    (version,) = _versions(lowered)
    assert len(_parallel_loops(lowered.with_body(version.then_case))) == 1
    assert len(_parallel_loops(lowered.with_body(version.else_case))) >= 3


@pytest.mark.parametrize("target", [
    pytest.param(t, id=t.mcpu, marks=needs_host_features(t)) for t in (AVX2, AVX512)])
def test_the_chained_fusion_computes_the_unfused_numbers(target: Target) -> None:
    """Apart and overlapping (``dx`` a view into ``x``: the loops as written), three runs
    each on all cores, against the interpreter."""
    n = 2048 * 256
    storage = np.random.default_rng(3).standard_normal(3 * n).astype("float32")
    kernel = tvmscript.build(gradient_chain, target=target, cache=False)
    for offset in (256, 2 * n):
        want = storage.copy()
        run_reference(gradient_chain, [want[n:2 * n].reshape(2048, 256),
                                       want[:n].reshape(2048, 256),
                                       want[offset:offset + n].reshape(2048, 256)])
        for _ in range(3):
            got = storage.copy()
            kernel(got[n:2 * n].reshape(2048, 256), got[:n].reshape(2048, 256),
                   got[offset:offset + n].reshape(2048, 256))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)  # lane-wise sums


def _allocations_in_loops(stmt: object) -> list[tuple[str, tuple[int, ...]]]:
    """(name, shape) of every buffer declared over an allocation inside a parallel loop."""
    from irbuilder.ir import Allocate, DeclBuffer
    found: list[tuple[str, tuple[int, ...]]] = []

    def visit(node: object) -> None:
        if isinstance(node, For) and node.kind is ForKind.PARALLEL:
            nodes: list[object] = []
            post_order_visit(node.body, nodes.append)
            allocated = {n.buffer_var for n in nodes if isinstance(n, Allocate)}
            found.extend((n.buffer.name, tuple(int(d) for d in n.buffer.shape))
                         for n in nodes
                         if isinstance(n, DeclBuffer) and n.buffer.data in allocated)

    post_order_visit(stmt, visit)
    return found


def test_an_intermediate_of_a_guarded_fusion_becomes_a_row_per_iteration() -> None:
    """``xhat`` and the row sums, used by both branches of the no-overlap test, get one
    allocation per branch: the fused loop's is one row private to each iteration (in the L1
    cache; the whole intermediate no longer goes through memory), the loops as written keep
    the whole buffers (outside their loops)."""
    lowered = lower_for(gradient_chain, AVX2)
    (version,) = _versions(lowered)
    fast = _allocations_in_loops(version.then_case)
    assert ("xhat", (1, 256)) in fast and ("s", (1,)) in fast and ("q", (1,)) in fast
    # the loops as written: only the vectorizer's partial sums are inside loops
    assert all(name.endswith("_lanes") for name, _ in _allocations_in_loops(version.else_case))
    text = lowered.with_body(version.else_case).script()
    assert "xhat_flat[i * 256 + j]" in text


@T.prim_func
def wide_chain(x: T.Buffer((64, 16384), "float32"), dx: T.Buffer((64, 16384), "float32")):
    xhat = T.alloc_buffer((64, 16384))
    for i, j in T.grid(64, 16384):
        with T.block("xhat"):
            vi, vj = T.axis.remap("SS", [i, j])
            xhat[vi, vj] = x[vi, vj] * T.float32(0.5)
    for i, j in T.grid(64, 16384):
        with T.block("dx"):
            vi, vj = T.axis.remap("SS", [i, j])
            dx[vi, vj] = xhat[vi, vj] * xhat[vi, vj] + x[vi, vj]


def test_an_intermediate_whose_row_is_too_large_stays_one_allocation() -> None:
    """A 64 KB row would be a heap block per iteration bigger than the L1 cache: the
    intermediate stays one allocation around the test (numbers as the interpreter's)."""
    lowered = lower_for(wide_chain, AVX2)
    (version,) = _versions(lowered)
    assert len(_parallel_loops(lowered.with_body(version.then_case))) == 1
    assert not [a for a in _allocations_in_loops(lowered.body) if a[0].startswith("xhat")]


@pytest.mark.parametrize("target", [
    pytest.param(t, id=t.mcpu, marks=needs_host_features(t)) for t in (AVX2, AVX512)])
def test_the_wide_chain_computes_the_interpreters_numbers(target: Target) -> None:
    x = np.random.default_rng(4).standard_normal((64, 16384)).astype("float32")
    want = np.zeros_like(x)
    run_reference(wide_chain, [x, want])
    kernel = tvmscript.build(wide_chain, target=target, cache=False)
    for _ in range(3):  # all cores, three runs
        got = np.zeros_like(x)
        kernel(x, got)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)  # a contracted multiply-add


@T.prim_func
def gradient_magnitude(A: T.Buffer((130, 258), "float32"), mag: T.Buffer((128, 256), "float32")):
    # a Sobel magnitude's stages per row: two gradients in row buffers, then the magnitude
    for i in T.parallel(128):
        Gx = T.alloc_buffer((256,))
        Gy = T.alloc_buffer((256,))
        for j in range(256):
            Gx[j] = A[i, j + 2] - A[i, j] + T.float32(2) * (A[i + 1, j + 2] - A[i + 1, j])
        for j in range(256):
            Gy[j] = A[i + 2, j] - A[i, j] + T.float32(2) * (A[i + 2, j + 1] - A[i, j + 1])
        for j in range(256):
            mag[i, j] = T.sqrt(Gx[j] * Gx[j] + Gy[j] * Gy[j])


@T.prim_func
def row_sum_then_scale(A: T.Buffer((64, 100), "float32"), B: T.Buffer((64, 100), "float32")):
    for i in T.parallel(64):
        s = T.alloc_buffer((1,), "float32")
        s[0] = T.float32(0)
        for j in range(100):
            s[0] = s[0] + A[i, j]
        for j in range(100):
            B[i, j] = A[i, j] / s[0]


@T.prim_func
def shifted_reads(A: T.Buffer((64, 100), "float32"), B: T.Buffer((64, 100), "float32")):
    for i in T.parallel(64):
        t = T.alloc_buffer((101,), "float32")
        t[0] = T.float32(0)
        for j in range(100):
            t[j + 1] = A[i, j] * T.float32(2)
        for j in range(100):
            B[i, j] = t[j + 1] + t[j]  # reads the element the previous iteration wrote


def _inner_loops(stmt: object) -> list[For]:
    found: list[For] = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, For)
                     and n.kind is ForKind.SERIAL else None)
    return found


def test_a_rows_elementwise_stages_run_in_one_inner_loop() -> None:
    """Inside the fused parallel loop, the three stages' column loops become one: each
    element's gradients stay in registers (set 12's Sobel magnitude, 2 threads on the Zen 2
    host: 2.1 -> 1.75 ms)."""
    lowered = lower_for(gradient_magnitude, AVX2)
    (version,) = _versions(lowered)  # the output written beside the input: a row's test
    assert len(_inner_loops(version.then_case)) == 1
    assert len(_inner_loops(version.else_case)) == 3
    with lowering.PassContext(config={"fuse_parallel_loops": {"inner": False}}):
        assert len(_inner_loops(lower_for(gradient_magnitude, AVX2).body)) == 3


def test_inner_loops_with_a_reduction_or_a_neighbours_element_stay_apart() -> None:
    assert len(_inner_loops(lower_for(row_sum_then_scale, AVX2).body)) >= 2
    assert len(_inner_loops(lower_for(shifted_reads, AVX2).body)) >= 2


@pytest.mark.parametrize("target", [
    pytest.param(t, id=t.mcpu, marks=needs_host_features(t)) for t in (AVX2, AVX512)])
@pytest.mark.parametrize("func", [gradient_magnitude, row_sum_then_scale, shifted_reads],
                         ids=lambda f: f.name)
def test_fused_inner_loops_compute_the_interpreters_numbers(func: PrimFunc,
                                                            target: Target) -> None:
    kernel = tvmscript.build(func, target=target, cache=False, fp_contract=False)
    shapes = [tuple(int(d) for d in b.shape) for b in func.buffer_map.values()]
    rng = np.random.default_rng(11)
    for _ in range(3):
        want = [rng.standard_normal(s).astype("float32") for s in shapes]
        got = [w.copy() for w in want]
        run_reference(func, want)
        kernel(*got)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("target", [
    pytest.param(t, id=t.mcpu, marks=needs_host_features(t)) for t in (AVX2, AVX512)])
@pytest.mark.parametrize("offset", [130 * 258, 130 * 258 + 40])
def test_an_output_beside_the_input_gets_the_interpreters_numbers(offset: int,
                                                                      target: Target) -> None:
    # (an output overlapping the input breaks the user's T.parallel promise: rows would
    # read what other rows write, a race whatever the compiler does)
    storage = np.random.default_rng(2).standard_normal(2 * 130 * 258).astype("float32")
    kernel = tvmscript.build(gradient_magnitude, target=target, cache=False, fp_contract=False)

    def views(buf: np.ndarray) -> list[np.ndarray]:
        return [buf[:130 * 258].reshape(130, 258),
                buf[offset:offset + 128 * 256].reshape(128, 256)]

    want = storage.copy()
    run_reference(gradient_magnitude, views(want))
    got = storage.copy()
    kernel(*views(got))
    np.testing.assert_array_equal(got, want)
