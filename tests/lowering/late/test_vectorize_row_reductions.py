"""``vectorize_row_reductions``: a parallel loop whose rows each run one scalar reduction
chain computes as many rows at once as the Target's vectors have lanes, one row per lane,
each row in source order (bit-identical to the interpreter), the columns taken from
contiguous row loads transposed in registers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from late_kit import AVX2, AVX512, before_late, loops, runs_avx2, stmts

import lowering
import tvmscript
from irbuilder.ir import (
    Allocate,
    BufferLoad,
    BufferStore,
    DeclBuffer,
    ForKind,
    IntImm,
    LetStmt,
    PrimFunc,
    Ramp,
    Shuffle,
    structural_equal,
)
from irbuilder.ir.functor import post_order_visit
from lowering.late.row_vectorize import (
    CACHED_ROWS_BYTES,
    row_bits,
    row_blocks,
    row_lanes,
    vectorize_row_reductions,
)
from lowering.target import Target
from tvmscript import tir as T


@T.prim_func
def row_sums(A: T.Buffer((37, 45), "float32"), S: T.Buffer((37,), "float32")):
    for i in T.parallel(37):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(45):
            acc[0] = acc[0] + A[i, k]
        S[i] = acc[0]


@T.prim_func
def row_dots(A: T.Buffer((37, 45), "float32"), W: T.Buffer((45,), "float32"),
             S: T.Buffer((37,), "float32")):
    for i in T.parallel(37):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(45):
            acc[0] = acc[0] + A[i, k] * W[k]
        S[i] = acc[0]


@T.prim_func
def sym_sums(a: T.handle, b: T.handle):
    m, n = T.int32(), T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for i in T.parallel(m):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(n):
            acc[0] = acc[0] + A[i, j]
        B[i] = acc[0]


@T.prim_func
def mixed(A: T.Buffer((40, 50), "float32"), W: T.Buffer((50,), "float32"),
          D: T.Buffer((40,), "float32"), C: T.Buffer((40,), "float32"),
          S: T.Buffer((40,), "float32")):
    # a row-invariant load (broadcast), a column-invariant one (strided), a row-dependent init,
    # an epilogue computing on the result
    for i in T.parallel(40):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = C[i]
        for k in range(50):
            acc[0] = acc[0] + (A[i, k] - W[k]) / D[i]
        S[i] = acc[0] * T.float32(0.5)


@T.prim_func
def row_max(A: T.Buffer((20, 33), "float32"), S: T.Buffer((20,), "float32")):
    for i in T.parallel(20):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.min_value("float32")
        for k in range(33):
            acc[0] = T.max(acc[0], A[i, k])
        S[i] = acc[0]


@T.prim_func
def alternating(A: T.Buffer((24, 40), "float64"), S: T.Buffer((24,), "float64")):
    # the accumulator second: A - (A - (A - ...)), float64 lanes
    for i in T.parallel(24):
        acc = T.decl_buffer((1,), "float64")
        acc[0] = T.float64(1)
        for k in range(40):
            acc[0] = A[i, k] - acc[0]
        S[i] = acc[0]


@T.prim_func
def every_other_row(A: T.Buffer((64, 33), "float32"), N: T.Buffer((32, 32), "int32"),
                    S: T.Buffer((32,), "float32")):
    # rows two apart, a column offset, a cast of an integer load
    for i in T.parallel(32):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(1)
        for k in range(32):
            acc[0] = acc[0] * (A[2 * i, k + 1] + T.Cast("float32", N[i, k]))
        S[i] = acc[0]


def _vectorized(func: PrimFunc, target: Target, bits: int | None = None) -> PrimFunc:
    before = before_late(func, target)
    config = {} if bits is None else {"vectorize_row_reductions": {"vector_bits": bits}}
    with lowering.PassContext(opt_level=3, target=target, config=config):
        return vectorize_row_reductions(before)


def _shuffles(func: PrimFunc) -> int:
    count = 0

    def visit(node: object) -> None:
        nonlocal count
        count += isinstance(node, Shuffle)

    post_order_visit(func.body, visit)
    return count


def _lane_buffers(func: PrimFunc) -> list[Allocate]:
    return [s for s in stmts(func)
            if isinstance(s, Allocate) and s.buffer_var.name.endswith("_rows")]


SSE = Target("llvm -mcpu=x86-64")
"""SSE2 only: 128-bit vectors."""


@pytest.mark.parametrize(("target", "bits", "lanes", "blocks"), [
    (SSE, None, 4, 1), (AVX2, None, 8, 1), (AVX512, None, 8, 2), (AVX2, 512, 8, 1),
    (AVX512, 512, 16, 1),
], ids=["sse", "avx2", "avx512", "avx2-512", "avx512-512"])
@pytest.mark.parametrize("func", [row_sums, row_dots], ids=["sum", "dot"])
def test_rows_in_lanes_with_a_transposed_tile(target: Target, bits: int | None,
                                              lanes: int, blocks: int, func: PrimFunc) -> None:
    # 256-bit transposes by default (measured faster than 512-bit ones on a Zen 5); the
    # config lets AVX-512 targets use 16 lanes, never more than the target has. With 32
    # vector registers and 256-bit tiles, two vectors of rows run interleaved when the chain
    # is a multiply-add (a plain sum keeps one).
    f32 = T.float32(0).dtype
    assert row_lanes(target, f32, bits or 256) == lanes
    if func is row_sums:
        blocks = 1
    assert row_blocks(target, lanes, f32, 37 * 45 * 4, multiplies=func is row_dots) == blocks
    after = _vectorized(func, target, bits)
    group = lanes * blocks
    named = {f.loop_var.name: f for f in loops(after)}
    rows, tile, rest, leftover = (named[n] for n in ("i_rows", "k_tile", "k_rest", "i_rest"))
    assert (rows.kind, int(rows.extent)) == (ForKind.PARALLEL, 37 // group)
    assert (tile.kind, int(tile.extent)) == (ForKind.SERIAL, 45 // lanes)
    assert (rest.kind, int(rest.extent)) == (ForKind.SERIAL, 45 % lanes)
    assert (leftover.kind, int(leftover.extent)) == (ForKind.SERIAL, 37 % group)
    (buf,) = _lane_buffers(after)
    assert int(buf.extent) == group
    # log2(L) stages of L two-vector shuffles transpose each L x L tile, one tile a block;
    # from 256 bits the first stage is the concatenation of half-row loads (x86: an insert
    # from memory), so the rows are 2L half loads rather than L bindings of whole rows
    stages = lanes.bit_length() - 1
    assert _shuffles(after) == blocks * lanes * stages
    lets = [s for s in stmts(after) if isinstance(s, LetStmt)]
    halves = lanes * 32 >= 256
    row_lets = 0 if halves else lanes
    assert sum(s.var.dtype.lanes == lanes for s in lets) == blocks * (row_lets + lanes * stages)
    if halves:
        assert _half_loads(after, lanes // 2) == blocks * 2 * lanes
    updates = [s for s in stmts(after) if isinstance(s, BufferStore)
               and s.buffer.data is buf.buffer_var and s.value.dtype.lanes == lanes]
    # one per column of the tile and one in the remainder loop, for each block
    assert len(updates) == blocks * (lanes + 1)
    starts = sorted({int(u.indices[0].base) for u in updates})
    assert starts == [lanes * b for b in range(blocks)]  # block b: lanes [b*L, b*L + L)


def _half_loads(func: PrimFunc, width: int) -> int:
    found = 0

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, BufferLoad) and node.dtype.lanes == width \
                and isinstance(node.indices[-1], Ramp):
            found += 1

    post_order_visit(func.body, visit)
    return found


@T.prim_func
def big_row_sums(A: T.Buffer((4096, 4096), "float32"), S: T.Buffer((4096,), "float32")):
    for i in T.parallel(4096):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(4096):
            acc[0] = acc[0] + A[i, k]
        S[i] = acc[0]


def test_rows_streamed_from_memory_are_loaded_whole() -> None:
    """64 MiB of rows come from DRAM, where half-row loads did not pay (transpose_tiles'
    HALF_LOADS_MAX_BYTES): the tiles are L whole-row loads; 37 x 45 rows are halves."""
    big = _vectorized(big_row_sums, AVX2)
    assert _half_loads(big, 4) == 0 and _shuffles(big) == 8 * 3
    small = _vectorized(row_sums, AVX2)
    assert _half_loads(small, 4) == 16


ZEN5 = Target("llvm -mcpu=znver5")
"""AVX-512 with full-rate 512-bit shuffles."""


def test_cached_rows_take_wide_tiles_where_wide_shuffles_run_at_full_rate() -> None:
    assert ZEN5.full_rate_wide_shuffles
    assert not AVX512.full_rate_wide_shuffles and not AVX2.full_rate_wide_shuffles
    rows = IntImm(T.int32(0).dtype, 37)
    assert row_bits(ZEN5, 37 * 45 * 4, rows) == 512
    assert row_bits(ZEN5, CACHED_ROWS_BYTES + 4, rows) == 256  # sixteen DRAM streams: slower
    assert row_bits(ZEN5, None, rows) == 256  # size unknown when compiling
    assert row_bits(ZEN5, 12 * 45 * 4, IntImm(rows.dtype, 12)) == 256  # not one wide group
    assert row_bits(AVX512, 37 * 45 * 4, rows) == 256
    # rows written out after the chains: sixteen rows of 45 floats fit in L1, of 1024 not
    assert row_bits(ZEN5, 37 * 45 * 4, rows, writes_rows=True) == 512
    assert row_bits(ZEN5, 37 * 1024 * 4, rows, writes_rows=True) == 256
    assert row_bits(ZEN5, 37 * 1024 * 4, rows) == 512
    after = _vectorized(row_sums, ZEN5)
    (buf,) = _lane_buffers(after)
    assert int(buf.extent) == 16
    assert _shuffles(after) == 16 * 4
    # the config still decides when given
    (buf,) = _lane_buffers(_vectorized(row_sums, ZEN5, 256))
    assert int(buf.extent) == 8


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_printed_form_parses_back(target: Target) -> None:
    for func in (row_sums, sym_sums, mixed, every_other_row):
        after = _vectorized(func, target)
        parsed = tvmscript.from_source(after.script())
        assert structural_equal(parsed, after), func


def test_symbolic_extents_divide_at_run_time() -> None:
    text = _vectorized(sym_sums, AVX512, 512).script()
    assert "for i_rows in T.parallel(m // 16):" in text
    assert "for j_tile in range(n // 16):" in text
    assert "for j_rest in range(n % 16):" in text
    assert "for i_rest in range(m % 16):" in text


def test_left_alone() -> None:
    @T.prim_func
    def serial_rows(A: T.Buffer((32, 64), "float32"), S: T.Buffer((32,), "float32")):
        for i in range(32):
            acc = T.decl_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(64):
                acc[0] = acc[0] + A[i, k]
            S[i] = acc[0]

    @T.prim_func
    def column_sums(A: T.Buffer((64, 32), "float32"), S: T.Buffer((32,), "float32")):
        for i in T.parallel(32):
            acc = T.decl_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(64):
                acc[0] = acc[0] + A[k, i]  # the column walks rows: not a contiguous row
            S[i] = acc[0]

    @T.prim_func
    def few_rows(A: T.Buffer((4, 64), "float32"), S: T.Buffer((4,), "float32")):
        for i in T.parallel(4):
            acc = T.decl_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(64):
                acc[0] = acc[0] + A[i, k]
            S[i] = acc[0]

    for func in (serial_rows, column_sums, few_rows):
        before = before_late(func, AVX512)
        with lowering.PassContext(opt_level=3, target=AVX512):
            assert vectorize_row_reductions(before) is before, func


@T.prim_func
def matvec(A: T.Buffer((37, 45), "float32"), x: T.Buffer((45,), "float32"),
           y: T.Buffer((37,), "float32")):
    for i in T.parallel(37):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for k in range(45):
            acc[0] = acc[0] + A[i, k] * x[k]
        y[i] = acc[0]


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_a_multiply_add_chain_runs_in_lanes(target: Target) -> None:
    # matvec: each row's chain acc + A[i, k] * x[k], x broadcast per column
    before = before_late(matvec, target)
    with lowering.PassContext(opt_level=3, target=target):
        after = vectorize_row_reductions(before)
    assert after is not before
    assert any(lp.loop_var.name == "i_rows" for lp in loops(after))


def test_a_multiply_add_chain_without_contraction_is_bit_identical() -> None:
    # With fp_contract=False every product is rounded, in the lanes as in the scalar
    # chain: the interpreter's bits. (With contraction LLVM may fuse each multiply-add,
    # docs/performance.md "fp_contract".)
    rng = np.random.default_rng(7)
    args = [rng.standard_normal((37, 45)).astype("float32"),
            rng.standard_normal(45).astype("float32"), np.zeros(37, "float32")]
    want = [a.copy() for a in args]
    tvmscript.build(matvec, target="interp")(*want)
    targets = [t for t in (AVX2, AVX512) if not t.missing_on_host()]
    if not targets:
        pytest.skip("the host runs neither AVX2 nor AVX-512 code")
    for target in targets:
        kernel = tvmscript.build(matvec, target=target, cache=False, fp_contract=False)
        assert "i_rows" in kernel.get_source("tir")
        for _ in range(3):  # parallel rows on every core: the same bits each run
            got = [a.copy() for a in args]
            kernel(*got)
            np.testing.assert_array_equal(got[2], want[2])
        contracted = [a.copy() for a in args]
        tvmscript.build(matvec, target=target, cache=False)(*contracted)
        np.testing.assert_allclose(contracted[2], want[2], rtol=1e-5, atol=1e-5)


@T.prim_func
def layer_norm(A: T.Buffer((21, 40), "float32"), O: T.Buffer((21, 40), "float32")):
    for i in T.parallel(21):
        s = T.alloc_buffer((2,), "float32")
        s[0] = T.float32(0)
        s[1] = T.float32(0)
        for j in range(40):
            s[0] = s[0] + A[i, j]
            s[1] = s[1] + A[i, j] * A[i, j]
        for j in range(40):
            O[i, j] = (A[i, j] - s[0] / T.float32(40)) * T.rsqrt(
                s[1] / T.float32(40) - s[0] / T.float32(40) * (s[0] / T.float32(40)) + T.float32(1e-5)
            )


@T.prim_func
def sum_and_max(A: T.Buffer((19, 33), "float64"), S: T.Buffer((19,), "float64"),
                M: T.Buffer((19,), "float64")):
    for i in T.parallel(19):
        total = T.alloc_buffer((1,), "float64")
        top = T.alloc_buffer((1,), "float64")
        total[0] = T.float64(0)
        top[0] = A[i, 0]
        for j in range(33):
            total[0] = total[0] + A[i, j]
            top[0] = T.max(top[0], A[i, j])
        S[i] = total[0]
        M[i] = top[0]


@pytest.mark.parametrize("func", [layer_norm, sum_and_max], ids=["two_elements", "two_buffers"])
def test_several_chains_in_one_loop_run_in_lanes(func: PrimFunc) -> None:
    # every chain of the loop in its own lanes; the per-row loop after it stays per row
    before = before_late(func, AVX2)
    with lowering.PassContext(opt_level=3, target=AVX2):
        after = vectorize_row_reductions(before)
    assert after is not before
    lanes = 8 if func is layer_norm else 4
    rows = [s for s in stmts(after) if isinstance(s, Allocate) and "_rows" in s.buffer_var.name]
    sizes = sorted(int(a.extent) for a in rows)
    assert sizes == ([2 * lanes] if func is layer_norm else [lanes, lanes])
    # the normalising loop after the chains runs in a loop over the lanes, not in 8 copies
    lane_loops = [lp for lp in loops(after) if lp.loop_var.name.endswith("_lane")]
    assert len(lane_loops) == (1 if func is layer_norm else 0)
    targets = [t for t in (AVX2, AVX512) if not t.missing_on_host()]
    if not targets:
        pytest.skip("the host runs neither AVX2 nor AVX-512 code")
    rng = np.random.default_rng(11)
    args = _random(func, rng)
    want = [a.copy() for a in args]
    tvmscript.build(func, target="interp")(*want)
    for target in targets:
        kernel = tvmscript.build(func, target=target, cache=False, fp_contract=False)
        assert "_rows" in kernel.get_source("tir")
        with lowering.PassContext(disabled_passes=["vectorize_row_reductions"]):
            scalar = tvmscript.build(func, target=target, cache=False, fp_contract=False)
        for _ in range(3):  # parallel rows on every core: the same bits each run
            got, same = [a.copy() for a in args], [a.copy() for a in args]
            kernel(*got)
            scalar(*same)
            for g, s, w in zip(got, same, want):
                np.testing.assert_array_equal(g, s)  # the rewrite changes no bit
                # (T.rsqrt compiled may differ from the interpreter's in the last place)
                np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_chain_read_at_a_computed_element_is_left_alone() -> None:
    @T.prim_func
    def picked(A: T.Buffer((16, 32), "float32"), K: T.Buffer((16,), "int32"),
               S: T.Buffer((16,), "float32")):
        for i in T.parallel(16):
            s = T.alloc_buffer((2,), "float32")
            s[0] = T.float32(0)
            s[1] = T.float32(0)
            for j in range(32):
                s[0] = s[0] + A[i, j]
            S[i] = s[K[i]]  # the lanes keep no element at a computed index

    before = before_late(picked, AVX512)
    with lowering.PassContext(opt_level=3, target=AVX512):
        assert vectorize_row_reductions(before) is before


def _interp_and_built(func: PrimFunc, args: list[np.ndarray[Any, Any]], target: Target,
                      runs: int = 3) -> None:
    want = [a.copy() for a in args]
    tvmscript.build(func, target="interp")(*want)
    for bits in (256, 512):  # 512: 16 float32 lanes on AVX-512 targets
        config = {"vectorize_row_reductions": {"vector_bits": bits}}
        with lowering.PassContext(config=config):
            # no contraction: a multiply-add rounds twice, as in the interpreter
            kernel = tvmscript.build(func, target=target, cache=False, fp_contract=False)
        assert "_rows" in kernel.get_source("tir")
        for _ in range(runs):  # parallel code: several runs, same bits each time
            got = [a.copy() for a in args]
            kernel(*got)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)


def _random(func: PrimFunc, rng: np.random.Generator) -> list[np.ndarray[Any, Any]]:
    out = []
    for buffer in func.buffer_map.values():
        shape = tuple(int(d) for d in buffer.shape)
        if buffer.dtype.is_float:
            out.append(rng.standard_normal(shape).astype(str(buffer.dtype)))
        else:
            out.append(rng.integers(-5, 5, shape).astype(str(buffer.dtype)))
    return out


def _targets() -> list[Any]:
    avx512 = pytest.param(AVX512, id="avx512", marks=pytest.mark.skipif(
        bool(AVX512.missing_on_host()), reason="the host lacks AVX-512"))
    avx2 = pytest.param(AVX2, id="avx2", marks=runs_avx2)
    return [avx2, avx512]


@pytest.mark.parametrize("target", _targets())
@pytest.mark.parametrize("func", [row_sums, row_dots, mixed, row_max, alternating,
                                  every_other_row],
                         ids=["sums", "dots", "mixed", "max", "alternating", "every_other_row"])
def test_bit_identical_to_the_interpreter(func: PrimFunc, target: Target) -> None:
    for seed in range(2):
        _interp_and_built(func, _random(func, np.random.default_rng(seed)), target)


@pytest.mark.parametrize("target", _targets())
def test_max_keeps_nan_infinity_and_signed_zero_bits(target: Target) -> None:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((20, 33)).astype("float32")
    A[1, 5] = np.nan
    A[2, 0] = np.nan
    A[3, 32] = np.inf
    A[4, :] = -0.0
    A[5, :] = 0.0
    A[5, 7] = -0.0
    A[6, 3] = -np.inf
    _interp_and_built(row_max, [A, np.zeros(20, "float32")], target)
    sums = rng.standard_normal((37, 45)).astype("float32")
    sums[0, 3] = np.nan
    sums[9, 44] = np.inf
    sums[17, 0] = -np.inf
    _interp_and_built(row_sums, [sums, np.zeros(37, "float32")], target)


@pytest.mark.parametrize("target", _targets())
@pytest.mark.parametrize(("m", "n"), [(0, 5), (1, 40), (7, 3), (8, 16), (15, 17), (16, 0),
                                      (17, 1), (33, 47), (40, 64)])
def test_symbolic_rows_and_columns(m: int, n: int, target: Target) -> None:
    A = np.random.default_rng(m * 100 + n).standard_normal((m, n)).astype("float32")
    _interp_and_built(sym_sums, [A, np.zeros(m, "float32")], target)


def _prefetched(func: PrimFunc) -> list[str]:
    return [line.strip() for line in func.script().splitlines() if "T.prefetch" in line]


def _hint_address(hint: str, **values: int) -> int:
    """The element a printed hint names (``T.prefetch(A, [T.Range(begin, end)])``)."""
    inner = hint.split("T.Range(", 1)[1].removesuffix(")]))")
    begin = inner[: (len(inner) - len(",  + 1")) // 2]  # the range is (begin, begin + 1)
    assert inner == f"{begin}, {begin} + 1"
    return int(eval(begin.replace("T.min", "min"), {}, values))


@pytest.mark.parametrize(("target", "func", "rows"), [
    (AVX2, row_sums, 8), (AVX512, row_sums, 8), (AVX512, row_dots, 16),
], ids=["avx2", "avx512", "avx512-two-blocks"])
def test_the_tile_loop_prefetches_the_next_groups_rows_in_address_order(
    target: Target, func: PrimFunc, rows: int
) -> None:
    # 8 rows of 45 floats (360 elements, 23 lines of 16) over 5 tiles: 5 hints a tile; two
    # blocks of 8 rows (720 elements, 45 lines): 9 hints a tile. The row is clamped to the
    # last one (36) so that no hint names an address past the buffer.
    after = _vectorized(func, target)
    hints = _prefetched(after)
    per_tile = -(-(-(-rows * 45 // 16)) // 5)
    assert len(hints) == per_tile
    assert all(h.startswith("T.evaluate(T.prefetch(A_flat, [T.Range(T.min(") for h in hints)
    assert all(", 36) * 45" in h for h in hints)
    for group in range(37 // rows):
        named = [_hint_address(h, i_rows=group, k_tile=t) for t in range(5) for h in hints]
        next_rows = [min(group * rows + rows + e // 45, 36) * 45 + e % 45
                     for e in range(0, 5 * per_tile * 16, 16)]
        assert named == next_rows  # every line of the next group's rows, in address order
    assert structural_equal(tvmscript.from_source(after.script()), after)
    with lowering.PassContext(opt_level=3, target=target,
                              config={"vectorize_row_reductions": {"prefetch": False}}):
        assert _prefetched(vectorize_row_reductions(before_late(row_sums, target))) == []


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_symbolic_columns_prefetch_the_next_groups_contiguous_rows(target: Target) -> None:
    # A row follows the previous one (stride n = the column count): the next group is one
    # run of lanes * n elements, walked lanes * lanes elements a tile (lines of 16 floats),
    # clamped to the last element; every line of it but the last tile's few is named.
    after = _vectorized(sym_sums, target)
    hints = _prefetched(after)
    lanes = 8  # rows a group on both targets (256-bit row vectors)
    assert len(hints) == lanes * lanes // 16
    m, n = 53, 45
    tiles, end = n // lanes, m * n - 1
    for group in range(m // lanes):
        named = [_hint_address(h, i_rows=group, j_tile=t, m=m, n=n)
                 for t in range(tiles) for h in hints]
        start = (group + 1) * lanes * n
        assert named == sorted(named) and named[0] == min(start, end) and max(named) <= end
        if start < end:
            wanted = range(start // 16, min(start + lanes * n - lanes * lanes, end) // 16)
            assert set(wanted) <= {e // 16 for e in named}
    assert structural_equal(tvmscript.from_source(after.script()), after)


@pytest.mark.parametrize("target", _targets())
def test_prefetching_changes_no_bit(target: Target) -> None:
    A = np.random.default_rng(11).standard_normal((37, 45)).astype("float32")
    results = []
    for prefetch in (True, False):
        config = {"vectorize_row_reductions": {"prefetch": prefetch}}
        with lowering.PassContext(config=config):
            kernel = tvmscript.build(row_sums, target=target)
        out = np.zeros(37, "float32")
        kernel(A, out)
        results.append(out)
    assert np.array_equal(results[0], results[1])
    expected = np.zeros(37, "float32")
    for i in range(37):  # each row in source order, in float32
        for k in range(45):
            expected[i] = np.float32(expected[i] + A[i, k])
    assert np.array_equal(results[0], expected)


@pytest.mark.parametrize("target", _targets())
def test_fastmath_leaves_rows_to_llvm(target: Target) -> None:
    """With reassociation allowed (``fastmath=True``) each row's loop is LLVM's to vectorize
    with partial sums: no rows in lanes; the default build keeps them."""
    strict = tvmscript.build(row_sums, target=target, cache=False)
    fast = tvmscript.build(row_sums, target=target, cache=False, fastmath=True)
    assert strict.lowered is not None and fast.lowered is not None
    assert _lane_buffers(strict.lowered) and not _lane_buffers(fast.lowered)
    A = np.random.default_rng(5).standard_normal((37, 45)).astype("float32")
    out = np.zeros(37, "float32")
    fast(A, out)
    np.testing.assert_allclose(out, A.astype("float64").sum(axis=1), rtol=1e-5, atol=1e-5)
    with lowering.PassContext(config={"vectorize_row_reductions": {"enabled": False}}):
        off = tvmscript.build(row_sums, target=target, cache=False)
    assert off.lowered is not None and not _lane_buffers(off.lowered)


@T.prim_func
def row_variance(A: T.Buffer((27, 40), "float32"), V: T.Buffer((27,), "float32")):
    for i in T.parallel(27):
        m = T.alloc_buffer((1,), "float32")
        v = T.alloc_buffer((1,), "float32")
        m[0] = T.float32(0)
        for j in range(40):
            m[0] = m[0] + A[i, j]
        m[0] = m[0] / T.float32(40)
        v[0] = T.float32(0)
        for j in range(40):
            v[0] = v[0] + (A[i, j] - m[0]) * (A[i, j] - m[0])
        V[i] = v[0] / T.float32(40)


@pytest.mark.parametrize("target", _targets())
def test_an_accumulator_rescaled_after_its_loop_runs_in_lanes(target: Target) -> None:
    # the mean's chain runs in lanes; its rescale is one store per lane; the deviations'
    # loop (a second chain, reading the mean's lanes as one vector) runs in lanes too
    before = before_late(row_variance, target)
    with lowering.PassContext(opt_level=3, target=target):
        after = vectorize_row_reductions(before)
    assert after is not before
    text = after.script()
    assert "m_rows[T.Ramp(0, 1, 8)] = m_rows[T.Ramp(0, 1, 8)] + " in text
    assert "m_rows[7] = m_rows[7] / T.float32(40)" in text
    assert "v_rows[T.Ramp(0, 1, 8)] = v_rows[T.Ramp(0, 1, 8)] + (A_flat_" in text
    assert " - m_rows[T.Ramp(0, 1, 8)]) * (A_flat_" in text
    for seed in range(2):
        _interp_and_built(row_variance, _random(row_variance, np.random.default_rng(seed)),
                          target)


@T.prim_func
def row_variance_groups(A: T.Buffer((67, 40), "float32"), V: T.Buffer((67,), "float32")):
    for i in T.parallel(67):
        m = T.alloc_buffer((1,), "float32")
        v = T.alloc_buffer((1,), "float32")
        m[0] = T.float32(0)
        for j in range(40):
            m[0] = m[0] + A[i, j]
        m[0] = m[0] / T.float32(40)
        v[0] = T.float32(0)
        for j in range(40):
            v[0] = v[0] + (A[i, j] - m[0]) * (A[i, j] - m[0])
        V[i] = v[0] / T.float32(40)


def test_a_multiply_chain_rereading_cached_rows_takes_two_vectors_with_avx2() -> None:
    # the squared deviations re-read the rows the mean's loop brought into cache: latency
    # bounds that loop, so even with 16 registers two vectors of rows run interleaved; a
    # first-pass multiply-add (row_dots) keeps one vector with AVX2, two with AVX-512
    f32 = T.float32(0).dtype
    assert row_blocks(AVX2, 8, f32, 67 * 40 * 4, multiplies=True, rereads=True) == 2
    assert row_blocks(AVX2, 8, f32, 67 * 40 * 4, multiplies=True) == 1
    assert row_blocks(AVX2, 8, f32, 67 * 40 * 4, multiplies=False, rereads=True) == 1
    assert row_blocks(AVX2, 8, f32, 64 << 20, multiplies=True, rereads=True) == 1
    for func, blocks in ((row_variance_groups, 2), (row_dots, 1)):
        after = _vectorized(func, AVX2)
        named = {f.loop_var.name: f for f in loops(after)}
        rows = named["i_rows"]
        (extent,) = {int(b.shape[0]) for b in _lane_buffers_of(after)}
        assert extent == 8 * blocks, func
        assert int(rows.extent) == int(func.buffer_map[func.params[0]].shape[0]) // (8 * blocks)
    for seed in range(3):
        args = _random(row_variance_groups, np.random.default_rng(seed))
        for target in [t for t in (AVX2, AVX512) if not t.missing_on_host()]:
            _interp_and_built(row_variance_groups, args, target)


def _lane_buffers_of(func: PrimFunc) -> list[Any]:
    return [s.buffer for s in stmts(func)
            if isinstance(s, DeclBuffer) and s.buffer.name.endswith("_rows")]


def test_a_second_loop_into_the_same_accumulator_is_left_alone() -> None:
    @T.prim_func
    def twice(A: T.Buffer((32, 40), "float32"), S: T.Buffer((32,), "float32")):
        for i in T.parallel(32):
            s = T.alloc_buffer((1,), "float32")
            s[0] = T.float32(0)
            for j in range(40):
                s[0] = s[0] + A[i, j]
            s[0] = s[0] * T.float32(0.5)
            for j in range(40):
                s[0] = s[0] + A[i, j] * A[i, j]
            S[i] = s[0]

    before = before_late(twice, AVX2)
    with lowering.PassContext(opt_level=3, target=AVX2):
        assert vectorize_row_reductions(before) is before


@T.prim_func
def lower_triangle(L: T.Buffer((45, 45), "float32"), x: T.Buffer((45,), "float32"),
                   y: T.Buffer((45,), "float32")):
    for i in T.parallel(45):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(i + 1):
            acc[0] = acc[0] + L[i, j] * x[j]
        y[i] = acc[0]


@T.prim_func
def upper_triangle(U: T.Buffer((45, 45), "float32"), x: T.Buffer((45,), "float32"),
                   y: T.Buffer((45,), "float32")):
    for i in T.parallel(45):
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(i, 45):
            acc[0] = acc[0] + U[i, j] * x[j]
        y[i] = acc[0]


@T.prim_func
def band(A: T.Buffer((40, 90), "float32"), y: T.Buffer((40,), "float32")):
    for i in T.parallel(40):  # a sliding window: each row starts one column later
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(i, i + 37):
            acc[0] = acc[0] + A[i, j]
        y[i] = acc[0]


@T.prim_func
def steep(A: T.Buffer((40, 120), "float32"), y: T.Buffer((40,), "float32")):
    for i in T.parallel(40):  # counts below zero from row 31; groups from row 16 share none
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(-1)
        for j in range(3 * i - 20, 2 * i + 10):
            acc[0] = T.max(acc[0], A[i, j + 20])
        y[i] = acc[0]


@T.prim_func
def clamped(A: T.Buffer((40, 120), "float32"), y: T.Buffer((40,), "float32")):
    for i in T.parallel(40):  # min/max bounds: chunks cut short, a floor, rows with none
        acc = T.alloc_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(T.max(i - 30, 0), T.min(T.max(500 - i * 13, 3), 100)):
            acc[0] = acc[0] + A[i, j + 10] * T.float32(3)
        y[i] = acc[0]


@pytest.mark.parametrize("target", _targets())
@pytest.mark.parametrize("func", [lower_triangle, upper_triangle, band, steep, clamped],
                         ids=["lower", "upper", "band", "steep", "clamped"])
def test_rows_whose_columns_depend_on_the_row_are_bit_identical(func: PrimFunc,
                                                                target: Target) -> None:
    for seed in range(2):
        _interp_and_built(func, _random(func, np.random.default_rng(seed)), target)


def test_a_triangle_runs_the_shared_columns_in_lanes_and_the_rest_per_row() -> None:
    lower = vectorize_row_reductions_for(lower_triangle).script()
    # the shared columns end where the group's first row's end
    assert "j_count: T.int32 = T.max(i_rows * 8 + 1 - j_from, 0)" in lower
    assert "for j_tile in range(j_count // 8):" in lower
    assert "for j_tail in range(" in lower and "j_head" not in lower
    upper = vectorize_row_reductions_for(upper_triangle).script()
    # ... and start where the group's last row's start
    assert "j_from: T.int32 = i_rows * 8 + 7" in upper
    assert "for j_head in range(" in upper and "j_tail" not in upper


def vectorize_row_reductions_for(func: PrimFunc) -> PrimFunc:
    before = before_late(func, AVX2)
    with lowering.PassContext(opt_level=3, target=AVX2):
        after = vectorize_row_reductions(before)
    assert after is not before
    return after


def test_row_dependent_bounds_that_are_not_affine_are_left_alone() -> None:
    @T.prim_func
    def squares(A: T.Buffer((32, 1024), "float32"), y: T.Buffer((32,), "float32")):
        for i in T.parallel(32):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for j in range(i * i):
                acc[0] = acc[0] + A[i, j]
            y[i] = acc[0]

    before = before_late(squares, AVX2)
    with lowering.PassContext(opt_level=3, target=AVX2):
        assert vectorize_row_reductions(before) is before


@T.prim_func
def standardized_max(A: T.Buffer((21, 35), "float32"), O: T.Buffer((21,), "float32")):
    for i in T.parallel(21):  # three chain loops, the later ones reading the earlier sums
        s = T.alloc_buffer((2,), "float32")
        d = T.alloc_buffer((1,), "float32")
        top = T.alloc_buffer((1,), "float32")
        s[0] = T.float32(0)
        s[1] = T.float32(0)
        for j in range(35):
            s[0] = s[0] + A[i, j]
            s[1] = s[1] + A[i, j] * A[i, j]
        s[0] = s[0] / T.float32(35)
        d[0] = T.float32(0)
        for j in range(35):
            d[0] = d[0] + T.max(A[i, j] - s[0], T.float32(0)) * s[1]
        top[0] = T.float32(-1e30)
        for j in range(35):
            top[0] = T.max(top[0], (A[i, j] - s[0]) / (d[0] + T.float32(1)))
        O[i] = top[0] + s[1]


@pytest.mark.parametrize("target", _targets())
def test_three_chain_loops_each_run_in_lanes(target: Target) -> None:
    before = before_late(standardized_max, target)
    with lowering.PassContext(opt_level=3, target=target):
        after = vectorize_row_reductions(before)
    text = after.script()
    for rows in ("s_rows", "d_rows", "top_rows"):
        assert f"{rows}[T.Ramp(0, 1, 8)] = " in text, rows
    assert "s_rows[T.Ramp(8, 1, 8)]" in text  # s[1]'s lanes read by the second loop
    for seed in range(2):
        _interp_and_built(standardized_max,
                          _random(standardized_max, np.random.default_rng(seed)), target)


@T.prim_func
def global_pool_7x7(data: T.Buffer((1, 2051, 7, 7), "float32"),
                    avg: T.Buffer((1, 2051, 1, 1), "float32")):
    # TOPI's global average pool: a 49-step block sum per channel, too short for
    # vectorize_reductions, so its init stays at the first step until the rows take it
    pool_sum = T.alloc_buffer((1, 2051, 1, 1))
    for ax0, ax1, ax2, ax3, rv0, rv1 in T.grid(1, 2051, 1, 1, 7, 7):
        with T.block("adaptive_pool_sum"):
            v0, v1, v2, v3, r0, r1 = T.axis.remap("SSSSRR", [ax0, ax1, ax2, ax3, rv0, rv1])
            with T.init():
                pool_sum[v0, v1, v2, v3] = T.float32(0)
            pool_sum[v0, v1, v2, v3] = pool_sum[v0, v1, v2, v3] + data[v0, v1, v2 * 7 + r0, v3 * 7 + r1]
    for ax0, ax1, ax2, ax3 in T.grid(1, 2051, 1, 1):
        with T.block("adaptive_pool_avg"):
            v0, v1, v2, v3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            avg[v0, v1, v2, v3] = pool_sum[v0, v1, v2, v3] * T.float32(0.020408163265306121)


@pytest.mark.parametrize("target", _targets())
def test_a_short_block_sums_init_moves_before_it_and_the_rows_take_the_lanes(
        target: Target) -> None:
    text = tvmscript.build(global_pool_7x7, target=target, cache=False).get_source("tir")
    assert "_row_acc_rows = T.decl_buffer" in text, text
    for seed in range(2):
        _interp_and_built(global_pool_7x7,
                          _random(global_pool_7x7, np.random.default_rng(seed)), target)


def test_an_empty_loop_body_is_no_first_iteration() -> None:
    from irbuilder.ir import For as ForNode
    from irbuilder.ir import IntImm, SeqStmt, Var
    from lowering.late.first_iteration import hoist_first_iteration

    k = Var("k", "int32")
    empty = ForNode(k, IntImm("int32", 0), IntImm("int32", 8), ForKind.SERIAL, SeqStmt(()))
    assert hoist_first_iteration(empty) is None
