"""``transpose_tiles`` alone: a nest ``B[j, i] = A[i, j]`` becomes L x L tiles loaded as rows
of A, transposed by two-vector shuffles and stored as rows of B (L: the Target's lanes), under
run-time tests that the arrays do not overlap and, for symbolic shapes, that the trip counts
are multiples of L and no element of B is written twice."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from late_kit import (
    AVX2,
    AVX512,
    assert_same_numbers,
    before_late,
    loops,
    one_storage,
    run_pass,
    runs_avx2,
    stmts,
    versioning_ifs,
)

import tvmscript
from irbuilder.ir import AttrStmt, BufferLoad, BufferStore, LetStmt, Ramp, Shuffle, Var
from irbuilder.ir.functor import post_order_visit
from lowering.arith import simplify_expr
from lowering.late.alias_version import NOALIAS_ATTR
from lowering.late.transpose_tiles import (
    BLOCK_ELEMS,
    HALF_LOADS_MAX_BYTES,
    MIN_PARALLEL_BLOCKS,
    transpose_from_halves,
    transpose_shuffles,
)
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def transpose_static(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 64), "float32")):
    for i in T.parallel(64):
        for j in range(48):
            B[j, i] = A[i, j]


@T.prim_func
def transpose_symbolic(a: T.handle, b: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (m, n), "float32")
    for i in T.parallel(n):
        for j in range(m):
            B[j, i] = A[i, j]


@T.prim_func
def transpose_tiled_f64(A: T.Buffer((64, 64), "float64"), B: T.Buffer((64, 64), "float64")):
    for io in T.parallel(4):
        for jo in range(4):
            for i in range(16):
                for j in range(16):
                    B[jo * 16 + j, io * 16 + i] = A[io * 16 + i, jo * 16 + j]


def _counts(func: Any) -> dict[str, int]:
    found = {"shuffle": 0, "vector_load": 0, "vector_store": 0}

    def visit(node: object) -> None:
        if isinstance(node, Shuffle):
            found["shuffle"] += 1
        elif isinstance(node, BufferLoad) and isinstance(node.indices[-1], Ramp):
            found["vector_load"] += 1
        elif isinstance(node, BufferStore) and isinstance(node.indices[-1], Ramp):
            found["vector_store"] += 1

    post_order_visit(func.body, visit)
    return found


def _vector_loads(func: Any) -> list[BufferLoad]:
    found: list[BufferLoad] = []

    def visit(node: object) -> None:
        if isinstance(node, BufferLoad) and isinstance(node.indices[-1], Ramp):
            found.append(node)

    post_order_visit(func.body, visit)
    return found


@pytest.mark.parametrize(("target", "lanes"), [(AVX2, 8), (AVX512, 16)], ids=["avx2", "avx512"])
def test_tiles_follow_the_targets_lanes(target: Target, lanes: int) -> None:
    before = before_late(transpose_static, target)
    after = run_pass("transpose_tiles", before, target)
    counts = _counts(after)
    rounds = lanes.bit_length() - 1
    # tile rows narrower than a cache line (AVX2's 8 floats) go two tiles side by side
    tiles = 2 if lanes * 4 < 64 else 1
    # rows loaded as halves (two per row), the halves of rows k and k + L/2 side by side
    # (one shuffle each: x86's insert from memory), then the rounds within the halves
    assert counts == {"shuffle": tiles * lanes * rounds, "vector_load": tiles * 2 * lanes,
                      "vector_store": tiles * lanes}
    half_loads = [ld for ld in _vector_loads(after) if ld.dtype.lanes == lanes // 2]
    assert len(half_loads) == tiles * 2 * lanes
    # constant shapes: only the no-overlap test remains
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    assert "%" not in str(branch.condition) and "n >=" not in after.script()
    # 64 x 48 is one block (BLOCK_ELEMS): the tile loops alone, pairs along B's rows (i)
    tile_loops = [lp for lp in loops(after) if lp.loop_var.name.endswith("_tile")]
    assert [int(lp.extent) for lp in tile_loops] == [64 // lanes // tiles, 48 // lanes]  # type: ignore[call-overload]
    lets = [s for s in stmts(after) if isinstance(s, LetStmt) and s.var.dtype.lanes > 1]
    assert len(lets) == tiles * lanes * rounds
    assert all(s.var.dtype.lanes == lanes for s in lets)


def test_paired_tiles_fill_cache_lines_one_after_the_other() -> None:
    """AVX2 tiles (32-byte rows) go in pairs along B's rows: each B row's two halves of a
    64-byte line are stored one after the other."""
    after = run_pass("transpose_tiles", before_late(transpose_static, AVX2), AVX2)
    stores = [s for s in stmts(after) if isinstance(s, BufferStore)
              and isinstance(s.indices[-1], Ramp)]
    assert len(stores) == 16
    for first, second in zip(stores[::2], stores[1::2], strict=True):
        (a,), (b,) = first.indices, second.indices
        assert isinstance(a, Ramp) and isinstance(b, Ramp)
        assert tvmscript.ir.structural_equal(simplify_expr(b.base - a.base), T.int32(8))


def test_symbolic_shapes_are_tested_at_run_time() -> None:
    before = before_late(transpose_symbolic, AVX512)
    after = run_pass("transpose_tiles", before, AVX512)
    (branch,) = versioning_ifs(after, NOALIAS_ATTR)
    text = after.script()
    assert "n % 16 == 0" in text and "m % 16 == 0" in text
    assert "n <=" in text or ">= n" in text or "n >=" in text  # the stride (n) covers i's extent
    assert isinstance(branch.then_case, AttrStmt)
    assert branch.else_case is not None  # the original nest


def test_shuffle_rounds_transpose_a_matrix() -> None:
    """The rounds on symbolic rows, evaluated lane by lane: column k holds element k of
    every row."""
    for lanes in (2, 4, 8, 16):
        rows = [Var(f"r{k}", f"float32x{lanes}") for k in range(lanes)]
        columns = transpose_shuffles(list(rows))

        def lane(expr: Any, index: int) -> tuple[int, int]:
            if isinstance(expr, Var):
                return next(k for k, r in enumerate(rows) if r is expr), index
            source = expr.indices[index]
            first, second = expr.vectors
            width = first.dtype.lanes
            return lane(first, source) if source < width else lane(second, source - width)

        for k, column in enumerate(columns):
            assert [lane(column, c) for c in range(lanes)] == [(c, k) for c in range(lanes)]


@T.prim_func
def transpose_large(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
    for i in T.parallel(4096):
        for j in range(4096):
            B[j, i] = A[i, j]


@pytest.mark.parametrize(("target", "lanes"), [(AVX2, 8), (AVX512, 16)], ids=["avx2", "avx512"])
def test_a_source_beyond_the_cache_bound_is_read_in_whole_rows(target: Target,
                                                                 lanes: int) -> None:
    """64 MiB streams from DRAM, where the half loads did not pay: L whole-row loads and
    log2(L) rounds of shuffles per tile."""
    assert 4096 * 4096 * 4 > HALF_LOADS_MAX_BYTES
    after = run_pass("transpose_tiles", before_late(transpose_large, target), target)
    rounds = lanes.bit_length() - 1
    tiles = 2 if lanes * 4 < 64 else 1  # AVX2 tiles in pairs
    assert _counts(after) == {"shuffle": tiles * lanes * rounds, "vector_load": tiles * lanes,
                              "vector_store": tiles * lanes}
    assert all(ld.dtype.lanes == lanes for ld in _vector_loads(after))


@pytest.mark.parametrize(("target", "tile_span"), [(AVX2, (16, 8)), (AVX512, (16, 16))],
                         ids=["avx2", "avx512"])
def test_large_nests_go_in_blocks(target: Target, tile_span: tuple[int, int]) -> None:
    """A 4096-square transpose goes in blocks of BLOCK_ELEMS a side (the parallel loop over
    row blocks keeps MIN_PARALLEL_BLOCKS of them): its lines of A are read whole while they
    are cached, and a block touches few pages."""
    after = run_pass("transpose_tiles", before_late(transpose_large, target), target)
    by_name = {lp.loop_var.name: lp for lp in loops(after)}
    rows, cols = tile_span  # a tile (pair) spans rows along i (B's rows) and columns along j
    outer, inner = by_name["i_tile_block"], by_name["j_tile_block"]
    assert outer.kind.name == "PARALLEL"
    assert int(outer.extent) * int(by_name["i_tile_in"].extent) * rows == 4096  # type: ignore[call-overload]
    assert int(inner.extent) * int(by_name["j_tile_in"].extent) * cols == 4096  # type: ignore[call-overload]
    assert int(by_name["i_tile_in"].extent) * rows == BLOCK_ELEMS  # type: ignore[call-overload]
    assert int(by_name["j_tile_in"].extent) * cols == BLOCK_ELEMS  # type: ignore[call-overload]
    assert int(outer.extent) >= MIN_PARALLEL_BLOCKS  # type: ignore[call-overload]


@pytest.mark.parametrize("lanes", [4, 8, 16])
def test_half_loaded_rounds_transpose_a_matrix(lanes: int) -> None:
    """transpose_from_halves on symbolic half rows, evaluated lane by lane through its
    bindings: column k holds element k of every row."""
    h = lanes // 2
    halves = {(k, p): Var(f"r{k}_{p}", f"float32x{h}") for k in range(lanes) for p in range(2)}
    bindings, columns = transpose_from_halves(lambda k, p: halves[(k, p)], lanes, "t")
    bound = {id(var): value for var, value in bindings}

    def lane(expr: Any, index: int) -> tuple[int, int]:
        if id(expr) in bound:
            return lane(bound[id(expr)], index)
        if isinstance(expr, Var):
            (k, p), = [key for key, v in halves.items() if v is expr]
            return k, p * h + index
        source = expr.indices[index]
        first, second = expr.vectors
        width = first.dtype.lanes
        return lane(first, source) if source < width else lane(second, source - width)

    assert len(columns) == lanes
    for k, column in enumerate(columns):
        assert [lane(column, c) for c in range(lanes)] == [(c, k) for c in range(lanes)]
    # the half-swapping round is the loads' concatenation: log2(L) - 1 rounds of L
    # shuffles after the L concatenations
    assert len(bindings) == lanes * (lanes.bit_length() - 1)


@T.prim_func
def transpose_ragged_blocks(A: T.Buffer((304, 432), "float32"), B: T.Buffer((432, 304), "float32"),
                            C: T.Buffer((432, 304), "float32")):
    for i in T.parallel(304):
        for j in range(432):
            B[j, i] = A[i, j] * T.float32(2) + C[j, i]


@pytest.mark.parametrize(
    "func", [transpose_static, transpose_tiled_f64, transpose_ragged_blocks],
    ids=["float32", "float64", "ragged-blocks"]
)
@runs_avx2
def test_same_numbers_before_and_after(func: Any) -> None:
    for target in (AVX2, AVX512):
        before = before_late(func, target)
        after = run_pass("transpose_tiles", before, target)
        assert after is not before
        assert_same_numbers(func, before, after)


@runs_avx2
def test_overlapping_arrays_take_the_original_nest() -> None:
    """B over A (a caller's in-place transpose) must see the sequential semantics."""
    @T.prim_func
    def square(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
        for i in range(32):
            for j in range(32):
                B[j, i] = A[i, j]

    before = before_late(square, AVX2)
    after = run_pass("transpose_tiles", before, AVX2)
    assert after is not before
    for offset in (0, 5, 40):
        assert_same_numbers(
            square, before, after, lambda rng, o=offset: one_storage(square, [0, o], rng)
        )


@runs_avx2
def test_symbolic_transpose_computes_the_transpose_at_any_size() -> None:
    kernel = tvmscript.build(transpose_symbolic, target=AVX2, cache=False)
    assert "T.Shuffle" in kernel.get_source("tir")
    rng = np.random.default_rng(0)
    for n, m in [(64, 32), (16, 48), (37, 64), (64, 5), (1, 1), (0, 8)]:
        a = rng.standard_normal((n, m)).astype("float32")
        b = np.full((m, n), np.nan, "float32")
        kernel(a, b)
        np.testing.assert_array_equal(b, a.T)


def test_nests_it_must_not_tile_are_left_alone() -> None:
    @T.prim_func
    def colliding(A: T.Buffer((16, 16), "float32"), B: T.Buffer((80,), "float32")):
        # B[4 * j + i]: (i, j) and (i + 4, j - 1) write the same element; order matters
        for i in range(16):
            for j in range(16):
                B[4 * j + i] = A[i, j]

    @T.prim_func
    def not_a_copy(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        # a call is not one of the elementwise operations the tiles compute
        for i in range(16):
            for j in range(16):
                B[j, i] = T.exp(A[i, j])

    @T.prim_func
    def odd_extent(A: T.Buffer((12, 16), "float32"), B: T.Buffer((16, 12), "float32")):
        for i in range(12):
            for j in range(16):
                B[j, i] = A[i, j]

    for func in (colliding, not_a_copy, odd_extent):
        before = before_late(func, AVX2)
        assert run_pass("transpose_tiles", before, AVX2) is before, func.name


@T.prim_func
def gather_rows(A: T.Buffer((48, 64), "float32"), B: T.Buffer((64, 48), "float32")):
    # the other orientation: B's rows run along the inner loop, A is read down its columns
    for i in T.parallel(64):
        for j in range(48):
            B[i, j] = A[j, i]


@T.prim_func
def gather_rows_symbolic(a: T.handle, b: T.handle):
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (n, m), "float32")
    for i in T.parallel(n):
        for j in range(m):
            B[i, j] = A[j, i]


@T.prim_func
def block_transpose(A: T.Buffer((256, 512), "float32"), B: T.Buffer((512, 256), "float32")):
    # as a TVM user writes it: parallelize_loops makes the outer loop parallel under a
    # run-time test (enough work for threads), which the tiled loop keeps
    for i, j in T.grid(512, 256):
        with T.block("T"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]


@pytest.mark.parametrize(("target", "lanes"), [(AVX2, 8), (AVX512, 16)], ids=["avx2", "avx512"])
def test_a_nest_writing_rows_along_the_inner_loop_is_tiled_too(target: Target,
                                                                lanes: int) -> None:
    before = before_late(gather_rows, target)
    after = run_pass("transpose_tiles", before, target)
    rounds = lanes.bit_length() - 1
    tiles = 2 if lanes * 4 < 64 else 1  # AVX2 tiles in pairs along B's rows (j)
    assert _counts(after) == {"shuffle": tiles * lanes * rounds,
                              "vector_load": tiles * 2 * lanes, "vector_store": tiles * lanes}
    text = after.script()
    # tile rows are rows of A (contiguous along i), tile columns rows of B (along j)
    span = tiles * lanes
    assert f"A_flat[T.Ramp(j_tile * {span * 64} + i_tile * {lanes}, 1, {lanes // 2})]" in text
    assert f"B_flat[T.Ramp(i_tile * {lanes * 48} + j_tile * {span}, 1, {lanes})]" in text
    block = before_late(block_transpose, target)
    (outer,) = [lp for lp in loops(block) if lp.loop_var.name == "i"]
    assert "tvmscript.parallel_if" in outer.annotations
    tiled = run_pass("transpose_tiles", block, target)
    (tile,) = [lp for lp in loops(tiled) if lp.loop_var.name in ("i_tile", "i_tile_block")]
    assert tile.annotations == outer.annotations


@runs_avx2
@pytest.mark.parametrize("func", [gather_rows, block_transpose], ids=["parallel", "block"])
def test_rows_along_the_inner_loop_give_the_same_numbers(func: Any) -> None:
    for target in (AVX2, AVX512):
        before = before_late(func, target)
        after = run_pass("transpose_tiles", before, target)
        assert after is not before
        assert_same_numbers(func, before, after)
        if func is gather_rows:
            continue  # its T.parallel over overlapping arguments would race in any form
        for offset in (0, 3, 70, 4096):  # overlapping arguments: the original nest runs
            assert_same_numbers(
                func, before, after, lambda rng, o=offset: one_storage(func, [0, o], rng)
            )


@runs_avx2
def test_rows_along_the_inner_loop_at_symbolic_sizes() -> None:
    kernel = tvmscript.build(gather_rows_symbolic, target=AVX2, cache=False)
    assert "T.Shuffle" in kernel.get_source("tir")
    rng = np.random.default_rng(1)
    for n, m in [(64, 32), (16, 48), (37, 64), (64, 5), (1, 1), (0, 8), (8, 0)]:
        a = rng.standard_normal((m, n)).astype("float32")
        for _ in range(3):
            b = np.full((n, m), np.nan, "float32")
            kernel(a, b)
            np.testing.assert_array_equal(b, a.T)


# -- elementwise values around the transposed load ---------------------------------------


@T.prim_func
def transpose_add(A: T.Buffer((64, 32), "float32"), C: T.Buffer((32, 64), "float32"),
                  B: T.Buffer((32, 64), "float32")):
    for j in T.parallel(32):
        for i in range(64):
            B[j, i] = A[i, j] + C[j, i]


@T.prim_func
def transpose_scaled(A: T.Buffer((32, 48), "float32"), s: T.Buffer((2,), "float32"),
                     H: T.Buffer((48, 32), "float16"), B: T.Buffer((48, 32), "float32")):
    for i in range(32):
        for j in range(48):
            B[j, i] = T.max(A[i, j] * A[i, j] * s[1] - T.Cast("float32", H[j, i]),
                            T.float32(0.5)) / s[0]


@T.prim_func
def transpose_add_rows_inner(A: T.Buffer((32, 64), "float64"), C: T.Buffer((64, 32), "float64"),
                             B: T.Buffer((64, 32), "float64")):
    for i in T.parallel(64):
        for j in range(32):
            B[i, j] = C[i, j] - A[j, i]


@pytest.mark.parametrize("func", [transpose_add, transpose_scaled, transpose_add_rows_inner],
                         ids=["add", "scaled", "rows_inner"])
@runs_avx2
def test_elementwise_values_around_the_transpose_are_tiled(func: Any) -> None:
    for target in (AVX2, AVX512):
        before = before_late(func, target)
        after = run_pass("transpose_tiles", before, target)
        assert after is not before
        assert any(isinstance(s, LetStmt) and isinstance(s.value, Shuffle) for s in stmts(after))
        assert_same_numbers(func, before, after)


@runs_avx2
def test_a_row_operand_over_the_output_takes_the_original_nest() -> None:
    """C over B: the tiled nest would read C's rows after writing other rows of B."""
    @T.prim_func
    def square_add(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32"),
                   B: T.Buffer((32, 32), "float32")):
        for i in range(32):
            for j in range(32):
                B[j, i] = A[i, j] + C[j, i]

    before = before_late(square_add, AVX2)
    after = run_pass("transpose_tiles", before, AVX2)
    assert after is not before
    for offset in (0, 3, 40):
        assert_same_numbers(
            square_add, before, after,
            lambda rng, o=offset: one_storage(square_add, [40, o, 0], rng), reference=False,
        )


def test_values_it_cannot_tile_are_left_alone() -> None:
    @T.prim_func
    def two_transposed(A: T.Buffer((32, 32), "float32"), D: T.Buffer((32, 32), "float32"),
                       B: T.Buffer((32, 32), "float32")):
        for i in range(32):
            for j in range(32):
                B[j, i] = A[i, j] + D[i, j]

    @T.prim_func
    def index_in_value(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
        for i in range(32):
            for j in range(32):
                B[j, i] = A[i, j] + T.Cast("float32", i)

    @T.prim_func
    def reads_output(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
        for i in range(32):
            for j in range(32):
                B[j, i] = A[i, j] + B[0, 0]

    for func in (two_transposed, index_in_value, reads_output):
        before = before_late(func, AVX2)
        assert run_pass("transpose_tiles", before, AVX2) is before, func.script()


@runs_avx2
def test_symbolic_ragged_blocks_same_numbers() -> None:
    """Symbolic extents whose tile counts leave a partial last block in both directions."""
    def make_args(rng: np.random.Generator) -> list[np.ndarray[Any, Any]]:
        return [rng.standard_normal((16 * 19, 16 * 27)).astype("float32"),
                np.zeros((16 * 27, 16 * 19), "float32")]

    for target in (AVX2, AVX512):
        before = before_late(transpose_symbolic, target)
        after = run_pass("transpose_tiles", before, target)
        assert "i_tile_block" in after.script() and "T.min(" in after.script()
        assert_same_numbers(transpose_symbolic, before, after, make_args=make_args)
