"""``tile_reduction_panels`` alone: a row-by-row reduction nest (the naive matmul, as loops
or as a block with ``T.init``) is computed in register tiles under a run-time no-overlap
test, bit-identically; overlapping arguments and shapes the tile does not divide keep the
original nest."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from late_kit import (
    AVX2,
    AVX512,
    agrees_with_interpreter,
    assert_same_numbers,
    before_late,
    one_storage,
    pinned_targets,
    run_pass,
    runs_avx2,
    standard_normal,
    stmts,
    versioning_ifs,
)

import lowering
import tvmscript
from irbuilder.ir import AttrStmt, DeclBuffer, For, ForKind, IfThenElse, PrimFunc
from lowering.late.alias_version import NOALIAS_ATTR
from lowering.late.panel_tile import tile_reduction_panels, tile_shape
from tvmscript import tir as T
from tvmscript.ir import structural_equal


@T.prim_func
def matmul(A: T.Buffer((16, 24), "float32"), B: T.Buffer((24, 32), "float32"),
           C: T.Buffer((16, 32), "float32")):
    for i, j in T.grid(16, 32):
        C[i, j] = T.float32(0)
        for k in range(24):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def block_matmul(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 64), "float32"),
                 C: T.Buffer((8, 64), "float32")):
    for i in T.parallel(8):
        for j, k in T.grid(64, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def biased(A: T.Buffer((12, 8), "float64"), B: T.Buffer((8, 16), "float64"),
           bias: T.Buffer((16,), "float64"), C: T.Buffer((12, 16), "float64")):
    for i, j in T.grid(12, 16):
        C[i, j] = bias[j] * T.float64(0.5)
        for k in range(8):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def accumulate_int(A: T.Buffer((8, 8), "int32"), B: T.Buffer((8, 32), "int32"),
                   C: T.Buffer((8, 32), "int32")):
    for i, j in T.grid(8, 32):
        for k in range(8):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]  # no init: C's own values are the start


def _tiled(before: PrimFunc, target: lowering.Target = AVX2, **options: Any) -> PrimFunc:
    """``before`` after the pass as built for ``target`` (the tile follows the target);
    ``options``: the pass's config."""
    config = {"tile_reduction_panels": options} if options else {}
    with lowering.PassContext(opt_level=3, target=target, config=config):
        return tile_reduction_panels(before)


def _tiles(func: PrimFunc) -> list[DeclBuffer]:
    return [s for s in stmts(func) if isinstance(s, DeclBuffer) and s.buffer.name.endswith("_tile")]


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_the_nest_is_tiled_behind_a_no_overlap_test(target: lowering.Target) -> None:
    before = before_late(block_matmul, target)
    after = _tiled(before, target)
    # the tiled nest's test, and inside its else branch the interchange's own (stmts are
    # listed in post order: the outer one last)
    inner, branch = versioning_ifs(after, NOALIAS_ATTR)
    assert branch.else_case is not None
    assert any(node is inner for node in stmts_of(branch.else_case))
    (tile,) = _tiles(after)
    shape = tile_shape(target)
    width = shape.vectors * shape.vector_bytes // 4
    assert int(tile.buffer.shape[0]) == shape.rows * width  # type: ignore[call-overload]
    tiled = [s for s in stmts(branch.then_case) if isinstance(s, For)]
    outer = tiled[-1]  # the tiled i loop keeps its kind
    assert outer.kind is ForKind.PARALLEL and int(outer.extent) == 8 // shape.rows  # type: ignore[call-overload]
    assert branch.else_case is not None and not _tiles_in(branch.else_case)


def stmts_of(stmt: Any) -> list[Any]:
    from irbuilder.ir.functor import post_order_visit

    found: list[Any] = []
    post_order_visit(stmt, found.append)
    return found


def _tiles_in(stmt: Any) -> bool:
    from irbuilder.ir.functor import post_order_visit

    found: list[bool] = []
    post_order_visit(
        stmt, lambda n: found.append(True) if isinstance(n, DeclBuffer) else None
    )
    return bool(found)


def test_the_avx512_tile_is_four_rows_of_four_registers() -> None:
    assert tile_shape(AVX512).rows * tile_shape(AVX512).vectors == 16
    assert tile_shape(AVX2).rows * tile_shape(AVX2).vectors == 8  # 16 ymm registers in all


@pytest.mark.parametrize("func", [matmul, block_matmul, biased, accumulate_int],
                         ids=lambda f: f.name)
@runs_avx2
def test_same_numbers_before_and_after(func: PrimFunc) -> None:
    before = before_late(func)
    after = _tiled(before)
    assert _tiles(after), after.script()
    assert_same_numbers(func, before, after)


@runs_avx2
def test_overlapping_arguments_run_the_original_nest() -> None:
    before = before_late(matmul)
    after = _tiled(before)
    assert _tiles(after)
    overlapping = lambda rng: one_storage(matmul, [0, 384, 100], rng)  # noqa: E731
    assert_same_numbers(matmul, before, after, overlapping, reference=False)


@T.prim_func
def ragged(A: T.Buffer((6, 8), "float32"), B: T.Buffer((8, 40), "float32"),
           C: T.Buffer((6, 40), "float32")):
    for i, j in T.grid(6, 40):
        C[i, j] = T.float32(0)
        for k in range(8):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.prim_func
def shared_row(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 64), "float32"),
               C: T.Buffer((64,), "float32")):
    for i, j in T.grid(8, 64):
        for k in range(8):
            C[j] = C[j] + A[i, k] * B[k, j]  # every row i accumulates into the same C[j]


@T.prim_func
def sum_outer_axis(A: T.Buffer((8, 16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
    for j in T.parallel(16):
        for k, i in T.grid(64, 8):
            with T.block("B"):
                vj, vk, vi = T.axis.remap("SSR", [j, k, i])
                with T.init():
                    B[vj, vk] = T.float32(0)
                B[vj, vk] = B[vj, vk] + A[vi, vj, vk]  # every operand moves with the row vj


@T.prim_func
def taps(X: T.Buffer((8, 70), "float32"), W: T.Buffer((7,), "float32"),
         Y: T.Buffer((8, 64), "float32")):
    for b, i, k in T.grid(8, 64, 7):
        with T.block("conv"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            with T.init():
                Y[vb, vi] = T.float32(0)
            Y[vb, vi] = Y[vb, vi] + X[vb, vi + vk] * W[vk]  # W[k]: shared, but one lane


@T.prim_func
def odd_rows(A: T.Buffer((10, 24), "float32"), B: T.Buffer((24, 32), "float32"),
             C: T.Buffer((10, 32), "float32")):
    for i in T.parallel(10):
        for j in range(32):
            C[i, j] = T.float32(0)
            for k in range(24):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]


@pytest.mark.parametrize("target", pinned_targets())
def test_rows_the_tile_does_not_divide_are_peeled(target: lowering.Target) -> None:
    """10 rows, tiles of 4: the tiles take the first 8 rows and the last 2 run after them
    as written (the interior of a convolution whose padding partition_loops cut off is
    such a count: 4090 of 4096 rows)."""
    before = before_late(odd_rows, target)
    after = _tiled(before, target)
    assert _tiles(after)
    text = after.script()
    assert "for i_rest, j in T.grid(2, 32):" in text and "(8 + i_rest) * 32 + j" in text
    assert_same_numbers(odd_rows, before, after)


@T.prim_func
def ragged_wide(A: T.Buffer((6, 8), "float32"), B: T.Buffer((8, 70), "float32"),
                C: T.Buffer((6, 70), "float32")):
    for i, j in T.grid(6, 70):
        C[i, j] = T.float32(0)
        for k in range(8):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@pytest.mark.parametrize("target", pinned_targets())
def test_columns_the_tile_does_not_divide_are_peeled(target: lowering.Target) -> None:
    """6 rows of 70 columns (no narrower vector divides 70 either): the tiles take 4 rows
    of 64 columns, the last rows and then every row's last 6 columns run after them, all
    behind the no-overlap test (the nest as written otherwise). A 1000 x 1000 matmul had
    no tiles as AVX-512 code (72 ms; 1024: 11 ms)."""
    before = before_late(ragged_wide, target)
    after = _tiled(before, target)
    assert _tiles(after)
    text = after.script()
    assert "for i, j_rest in T.grid(6, 6):" in text and "i_rest" in text
    assert structural_equal(tvmscript.from_source(text), after)
    assert_same_numbers(ragged_wide, before, after)
    overlapping = lambda rng: one_storage(ragged_wide, [0, 48, 100], rng)  # noqa: E731
    assert_same_numbers(ragged_wide, before, after, overlapping, reference=False)


@pytest.mark.parametrize("func", [shared_row, sum_outer_axis, taps],
                         ids=lambda f: f.name)
def test_nests_the_tile_does_not_fit_are_left_alone(func: PrimFunc) -> None:
    before = before_late(func, AVX2)
    assert run_pass("tile_reduction_panels", before) is before  # the registered pass
    assert not _tiles(_tiled(before))


@T.prim_func
def symbolic_depth(a: T.handle, b: T.handle, c: T.handle):
    K = T.int32()
    A = T.match_buffer(a, (8, K), "float32")
    B = T.match_buffer(b, (K, 64), "float32")
    C = T.match_buffer(c, (8, 64), "float32")
    for i, j, k in T.grid(8, 64, K):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@pytest.mark.parametrize("depth", [0, 1, 5])
@runs_avx2
def test_an_empty_reduction_leaves_the_output_as_the_block_form_does(depth: int) -> None:
    # the block's init runs with the first update: no update, no init (C keeps its values)
    kernel = tvmscript.build(symbolic_depth, target=AVX2)
    reference = tvmscript.build(symbolic_depth, target="interp")
    rng = np.random.default_rng(depth)
    a = rng.standard_normal((8, depth)).astype("float32")
    b = rng.standard_normal((depth, 64)).astype("float32")
    c = rng.standard_normal((8, 64)).astype("float32")
    want = c.copy()
    kernel(a, b, c)
    reference(a, b, want)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)  # FMA vs separate rounding
    assert "_tile" in kernel.get_source("tir")


@T.prim_func
def square(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, n), "float32")
    B = T.match_buffer(b, (n, n), "float32")
    C = T.match_buffer(c, (n, n), "float32")
    for i, j in T.grid(n, n):
        C[i, j] = T.float32(0)
        for k in range(n):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@pytest.mark.parametrize("n", [0, 4, 20, 32, 48, 50])
@runs_avx2
def test_symbolic_extents_are_tested_at_run_time(n: int) -> None:
    # AVX2 tiles are 4 x 16: the rows past a multiple of 4 and the columns past a multiple
    # of 16 run after the tiles (n = 20 and 50 have both; 0, 4, 32, 48 neither)
    kernel = tvmscript.build(square, target=AVX2)
    source = kernel.get_source("tir")
    assert "_tile" in source and "i_rest" in source and "j_rest" in source
    with lowering.PassContext(disabled_passes=frozenset({"tile_reduction_panels"})):
        plain = tvmscript.build(square, target=AVX2, cache=False)
    reference = tvmscript.build(square, target="interp")
    rng = np.random.default_rng(n)
    a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
    c, c_plain, want = (np.full((n, n), np.nan, "float32") for _ in range(3))
    kernel(a, b, c)
    plain(a, b, c_plain)
    reference(a, b, want)
    np.testing.assert_array_equal(c, c_plain)  # bit-identical to the untiled nest
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)


@T.prim_func
def packed_dense(A: T.Buffer((8, 32), "float32"), Wp: T.Buffer((8, 32, 16), "float32"),
                 D: T.Buffer((8, 128), "float32")):
    # TVM's x86 dense schedule: 16-column weight panels, k outside the vectorized j_1
    # (its fused i, j_0 loop as split_divided_loops unfuses it; serial rows, so that the
    # nest as written has one order when the arguments overlap)
    for i in range(8):
        for j_0, k in T.grid(8, 32):
            for j_1 in T.vectorized(16):
                with T.block("dense"):
                    vi = T.axis.spatial(8, i)
                    vj = T.axis.spatial(128, j_0 * 16 + j_1)
                    vk = T.axis.reduce(32, k)
                    with T.init():
                        D[vi, vj] = T.float32(0)
                    D[vi, vj] = D[vi, vj] + A[vi, vk] * Wp[vj // 16, vk, vj % 16]


@T.prim_func
def narrow_panel(A: T.Buffer((16, 24), "float32"), B: T.Buffer((24, 32), "float32"),
                 C: T.Buffer((16, 32), "float32")):
    for i, j in T.grid(16, 32):  # 32 columns: two AVX-512 registers a row
        C[i, j] = T.float32(0)
        for k in range(24):
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


def _panel_tile(func: PrimFunc) -> tuple[Any, ...]:
    """The tile's size and its rows' update statements as vectors (lanes of each store)."""
    (tile,) = _tiles(func)
    from irbuilder.ir import BufferStore

    lanes = {s.value.dtype.lanes for s in stmts(func) if isinstance(s, BufferStore)
             and s.buffer.name.endswith("_tile")}
    return int(tile.buffer.shape[0]), lanes  # type: ignore[call-overload]


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_vector_panels_are_tiled_whole(target: lowering.Target) -> None:
    before = before_late(packed_dense, target)
    after = _tiled(before, target)
    size, lanes = _panel_tile(after)
    # four rows; four 16-lane panels a row with 32 registers, one with 16
    assert size == 4 * (4 if target is AVX512 else 1) * 16 and lanes == {16}


@runs_avx2
def test_vector_panels_give_the_same_numbers() -> None:
    before = before_late(packed_dense)
    after = _tiled(before)
    assert _tiles(after)
    assert_same_numbers(packed_dense, before, after)
    overlapping = lambda rng: one_storage(packed_dense, [0, 100, 200], rng)  # noqa: E731
    assert_same_numbers(packed_dense, before, after, overlapping, reference=False)


def test_a_row_narrower_than_the_tile_gets_more_rows() -> None:
    after = _tiled(before_late(narrow_panel, AVX512), AVX512)
    size, lanes = _panel_tile(after)
    assert size == 8 * 32 and lanes == {32}  # 8 rows of 2 registers, 16 accumulators


@T.prim_func
def wide_rows(A: T.Buffer((128, 8), "float32"), B: T.Buffer((8, 256), "float32"),
              C: T.Buffer((128, 256), "float32")):
    # B's rows 1 KiB apart: each row block copies its column panels of B first
    for i in T.parallel(128):
        for j, k in T.grid(256, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def batched_rows(A: T.Buffer((2, 16, 8), "float32"), B: T.Buffer((2, 8, 256), "float32"),
                 C: T.Buffer((2, 16, 256), "float32")):
    # serial rows under the batch loop: one copy of a panel serves all 16 rows
    for b in T.parallel(2):
        for i, j in T.grid(16, 256):
            C[b, i, j] = T.float32(0)
            for k in range(8):
                C[b, i, j] = C[b, i, j] + A[b, i, k] * B[b, k, j]


def _panel_allocation(func: PrimFunc) -> tuple[Any, list[For]]:
    """The panel's ``DeclBuffer`` and the loops around it, outermost first."""
    from irbuilder.ir import Stmt

    found: list[tuple[Any, list[For]]] = []

    def walk(node: Stmt, loops: list[For]) -> None:
        if isinstance(node, DeclBuffer) and node.buffer.name.endswith("_panel"):
            found.append((node, loops))
        if isinstance(node, For):
            loops = [*loops, node]
        for child in _children(node):
            walk(child, loops)

    walk(func.body, [])
    assert len(found) == 1, func.script()
    return found[0]


def _children(node: Any) -> list[Any]:
    from irbuilder.ir import Allocate, AttrStmt, IfThenElse, LetStmt, SeqStmt

    if isinstance(node, SeqStmt):
        return list(node.seq)
    if isinstance(node, IfThenElse):
        return [node.then_case] + ([node.else_case] if node.else_case is not None else [])
    if isinstance(node, (For, Allocate, AttrStmt, LetStmt, DeclBuffer)):
        return [node.body]
    return []


_SMALL_WALK = {"pack_min_walk_bytes": 4096}  # these small operands fit any cache


def test_operands_a_cache_holds_are_not_copied() -> None:
    assert "_panel" not in _tiled(before_late(wide_rows)).script()


def test_far_apart_operand_rows_are_copied_per_row_block() -> None:
    after = _tiled(before_late(wide_rows), **_SMALL_WALK)
    _, loops = _panel_allocation(after)
    # inside the parallel row blocks: a panel per thread, never shared
    assert [lp.kind for lp in loops][-1:] == [ForKind.PARALLEL]


def test_serial_rows_share_each_panel() -> None:
    after = _tiled(before_late(batched_rows), **_SMALL_WALK)
    _, loops = _panel_allocation(after)
    assert [lp.kind for lp in loops] == [ForKind.PARALLEL]  # the batch loop only
    text = after.script()
    # the panel loop outside the row blocks
    assert text.index("for j_o in") < text.index("for i_o in")


@pytest.mark.parametrize("func", [wide_rows, batched_rows], ids=lambda f: f.name)
@runs_avx2
def test_packed_panels_give_the_same_numbers(func: PrimFunc) -> None:
    before = before_late(func)
    after = _tiled(before, **_SMALL_WALK)
    assert "_panel" in after.script()
    assert_same_numbers(func, before, after, rounds=2)


@T.prim_func
def parallel_packed_dense(A: T.Buffer((16, 32), "float32"), Wp: T.Buffer((8, 32, 16), "float32"),
                          D: T.Buffer((16, 128), "float32")):
    for i_j_0_fused in T.parallel(128):  # as TVM prints it: the fused loop, unfused late
        for k in range(32):
            for j_1 in T.vectorized(16):
                with T.block("dense"):
                    vi = T.axis.spatial(16, i_j_0_fused // 8)
                    vj = T.axis.spatial(128, i_j_0_fused % 8 * 16 + j_1)
                    vk = T.axis.reduce(32, k)
                    with T.init():
                        D[vi, vj] = T.float32(0)
                    D[vi, vj] = D[vi, vj] + A[vi, vk] * Wp[vj // 16, vk, vj % 16]


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [parallel_packed_dense, wide_rows, batched_rows],
                         ids=lambda f: f.name)
def test_whole_builds_give_the_interpreters_numbers(func: PrimFunc,
                                                    target: lowering.Target) -> None:
    """The full pipeline on each pinned target, parallel loops on all cores, several runs:
    vector panels, and operand panels copied (threshold lowered for these small arrays)."""
    config = {"tile_reduction_panels": {"pack_min_walk_bytes": 4096}}
    with lowering.PassContext(config=config):
        text = tvmscript.build(func, target=target, cache=False).get_source("tir")
        assert "_tile" in text and (func is parallel_packed_dense or "_panel" in text)
        for seed in range(2):
            agrees_with_interpreter(func, lambda s=seed: standard_normal(func, s), target,
                                    runs=3)


def test_symbolic_shapes_copy_panels_under_run_time_tests() -> None:
    after = _tiled(before_late(square), **_SMALL_WALK)
    text = after.script()
    assert structural_equal(tvmscript.from_source(text), after)  # it re-parses
    _, loops = _panel_allocation(after)
    # rows in blocks of 8 tiles of 4, each block its own panel; the stride, walk and panel
    # size tested at run time (64-bit products)
    assert loops[-1].kind is ForKind.PARALLEL and "for i_m in range(8):" in text
    assert "if (n - n % 4) % 32 == 0 and (n - n % 16) % 16 == 0 and" in text
    assert 'T.Cast("int64", n) * T.int64(4) >= T.int64(1024)' in text
    assert 'T.Cast("int64", n) * T.int64(64) <= T.int64(262144)' in text  # 16 columns
    # when they fail: the tiles without a panel, then the interchanged nest; the rows past
    # a multiple of 4 after them
    assert len(re.findall(r"_tile(_\d+)? = T.decl_buffer", text)) == 2
    assert "for i_rest, j in T.grid(n % 4, n - n % 16):" in text  # the tiles' columns
    assert "for j_rest in range(n % 16):" in text  # then every row's last columns


@pytest.mark.parametrize("n", [256, 288, 272, 260])
@runs_avx2
def test_symbolic_panels_give_the_same_numbers(n: int) -> None:
    # AVX2 tiles are 4 x 16: 256 and 288 copy panels (rows a multiple of 32, 1 KiB apart
    # and more), 272 runs the tiles without a panel, 260 the interchanged nest
    config = {"tile_reduction_panels": _SMALL_WALK}
    with lowering.PassContext(config=config):
        kernel = tvmscript.build(square, target=AVX2, cache=False)
    with lowering.PassContext(disabled_passes=frozenset({"tile_reduction_panels"})):
        plain = tvmscript.build(square, target=AVX2, cache=False)
    assert "_panel" in kernel.get_source("tir")
    rng = np.random.default_rng(n)
    a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
    c, c_plain = (np.full((n, n), np.nan, "float32") for _ in range(2))
    kernel(a, b, c)
    plain(a, b, c_plain)
    np.testing.assert_array_equal(c, c_plain)  # bit-identical to the untiled nest
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


@T.prim_func
def dwconv1d_padded(data: T.Buffer((2, 64, 16), "float32"), w: T.Buffer((7, 1, 16), "float32"),
                    out: T.Buffer((2, 64, 16), "float32")):
    # TOPI's group_conv1d_nwc (one channel a group): its padding stage is inlined and the
    # rows partitioned around the padding tests, leaving an interior of 58 of 64 rows
    pad_temp = T.alloc_buffer((2, 70, 16))
    for i0, i1, i2 in T.grid(2, 70, 16):
        with T.block("pad_temp"):
            v0, v1, v2 = T.axis.remap("SSS", [i0, i1, i2])
            pad_temp[v0, v1, v2] = T.if_then_else(3 <= v1 and v1 < 67, data[v0, v1 - 3, v2],
                                                  T.float32(0))
    for nn, yy, ff, ry, rc in T.grid(2, 64, 16, 7, 1):
        with T.block("conv"):
            v_nn, v_yy, v_ff, v_ry, v_rc = T.axis.remap("SSSRR", [nn, yy, ff, ry, rc])
            with T.init():
                out[v_nn, v_yy, v_ff] = T.float32(0)
            out[v_nn, v_yy, v_ff] = out[v_nn, v_yy, v_ff] \
                + pad_temp[v_nn, v_yy + v_ry, v_ff + v_rc] * w[v_ry, v_rc, v_ff]


@runs_avx2
def test_an_inlined_padding_interior_is_tiled() -> None:
    """The interior part gets the register tiles (its decided ``T.if_then_else`` is the
    load, and its 58 rows are peeled to 56 + 2): it was a scalar 7-tap loop per element
    (set 11's 8 x 4096 x 64 convolution: 3.2 -> 0.7 ms)."""
    kernel = tvmscript.build(dwconv1d_padded, target=AVX2, cache=False)
    text = kernel.get_source("tir")
    assert "yy_rest" in text and "out_flat_tile" in text
    rng = np.random.default_rng(3)
    data = rng.standard_normal((2, 64, 16)).astype("float32")
    w = rng.standard_normal((7, 1, 16)).astype("float32")
    out = np.full((2, 64, 16), np.nan, "float32")
    kernel(data, w, out)
    padded = np.pad(data, ((0, 0), (3, 3), (0, 0)))
    want = sum(padded[:, r:r + 64, :] * w[r, 0] for r in range(7))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    for target in (AVX2, AVX512):  # bit for bit with the interpreter, on all cores, 3 runs
        if target is AVX512 and AVX512.missing_on_host():
            continue
        agrees_with_interpreter(dwconv1d_padded,
                                lambda: standard_normal(dwconv1d_padded, 5), target, runs=3)


@T.prim_func
def scores_then_max(Q: T.Buffer((3, 16, 12), "float32"), K: T.Buffer((3, 32, 12), "float32"),
                    M: T.Buffer((3, 16), "float32")):
    # attention scores in a root buffer (an intermediate TE stage), read by a row maximum
    S = T.alloc_buffer((3, 16, 32))
    for b, i, j, k in T.grid(3, 16, 32, 12):
        with T.block("S"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                S[vb, vi, vj] = T.float32(0)
            S[vb, vi, vj] = S[vb, vi, vj] + Q[vb, vi, vk] * K[vb, vj, vk]
    for b, i, j in T.grid(3, 16, 32):
        with T.block("M"):
            vb, vi, vj = T.axis.remap("SSR", [b, i, j])
            with T.init():
                M[vb, vi] = T.float32(-3.4e38)
            M[vb, vi] = T.max(M[vb, vi], S[vb, vi, vj])


@T.prim_func
def hidden_layer(X: T.Buffer((20, 16), "float32"), W1: T.Buffer((16, 64), "float32"),
                 W2: T.Buffer((64, 8), "float32"), Y: T.Buffer((20, 8), "float32")):
    # a two-layer MLP: the hidden activations live in the function's own buffer
    H = T.alloc_buffer((20, 64))
    for i, j, k in T.grid(20, 64, 16):
        with T.block("H"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                H[vi, vj] = T.float32(0)
            H[vi, vj] = H[vi, vj] + X[vi, vk] * W1[vk, vj]
    for i, j, k in T.grid(20, 8, 64):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + T.max(H[vi, vk], T.float32(0)) * W2[vk, vj]


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", [scores_then_max, hidden_layer], ids=lambda f: f.name)
def test_a_reduction_into_the_functions_own_buffer_is_tiled_without_a_test(
        func: PrimFunc, target: lowering.Target) -> None:
    """An intermediate stage (a root ``T.alloc_buffer``) overlaps no parameter: its nest is
    tiled with no run-time overlap test (the 16 x 12 x 32 score nest: 40 ms -> 1.3 ms at 16
    x 256 x 256 x 64 as host code), and gives the interpreter's numbers."""
    after = _tiled(before_late(func, target), target)
    local = [d for d in _tiles(after) if d.buffer.name.startswith(("S_", "H_"))]
    assert local, after.script()
    for tile in local:
        assert any(isinstance(s, AttrStmt) and s.attr_key == NOALIAS_ATTR
                   and any(n is tile for n in stmts_of(s.body)) for s in stmts(after))
        assert not any(isinstance(s, IfThenElse) and any(n is tile for n in stmts_of(s))
                       for s in stmts(after)), "no run-time test guards the local tiles"
    for seed in range(2):
        agrees_with_interpreter(func, lambda s=seed: standard_normal(func, s), target, runs=2)
