"""compact_buffer_allocation: an allocation shrinks to the box its accesses use.

Each case checks the IR right after the pass (the compact shape and the shifted indices,
cleaned by ``simplify``) and runs the compiled kernel against the reference interpreter on
the unscheduled program.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import Allocate, DeclBuffer, PrimFunc, Stmt
from lowering import simplify
from lowering.pipeline import PIPELINE_ORDER
from lowering.transforms.compact_buffer import compact_buffer_allocation
from lowering.transforms.lower_blocks import lower_blocks
from lowering.transforms.plan_alloc import plan_allocation_location
from tvmscript import tir as T


def compacted(func: PrimFunc) -> PrimFunc:
    """The function right after compaction (and the simplify that follows it)."""
    return simplify(compact_buffer_allocation(plan_allocation_location(lower_blocks(func))))


def allocations(func: PrimFunc) -> dict[str, tuple[tuple[Any, ...], Any]]:
    """Buffer name -> (declared shape, Allocate extent) of every allocation."""
    found: dict[str, tuple[tuple[Any, ...], Any]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, Allocate) and isinstance(node.body, DeclBuffer):
            buf = node.body.buffer
            found[buf.name] = (tuple(_value(d) for d in buf.shape), _value(node.extent))
        if isinstance(node, Stmt):
            for name in ("body", "then_case", "else_case"):
                child = getattr(node, name, None)
                if isinstance(child, Stmt):
                    walk(child)
            for child in getattr(node, "seq", ()):
                walk(child)

    walk(func.body)
    return found


def _value(expr: Any) -> Any:
    return getattr(expr, "value", str(expr))


def same_as_interpreter(func: PrimFunc, *args: Any, **kwargs: Any) -> None:
    """The compiled kernel writes what the interpreter writes, on copies of the arrays."""
    ours = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tvmscript.build(func, **kwargs)(*ours)
    tvmscript.build(func, target="interp")(*expected)
    for got, want in zip(ours, expected, strict=True):
        if isinstance(got, np.ndarray):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def rand(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype("float32")


def test_pass_runs_after_placement() -> None:
    order = list(PIPELINE_ORDER)
    assert order.index("plan_allocation_location") < order.index("compact_buffer_allocation")
    assert order.index("compact_buffer_allocation") < order.index("flatten_buffer")


@T.prim_func
def block_rows(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i in range(16):
        with T.block("row"):
            vi = T.axis.spatial(16, i)
            B = T.alloc_buffer((16, 16), "float32")
            for j in range(16):
                B[vi, j] = A[vi, j] + T.float32(1)
            for j in range(16):
                C[vi, j] = B[vi, j] * T.float32(2)


def test_block_buffer_shrinks_to_the_row_it_uses() -> None:
    # TVM's rule: the loop above the allocation stays symbolic, the inner ones relax.
    out = compacted(block_rows)
    assert allocations(out) == {"B": ((1, 16), 16)}
    text = out.script()
    assert "B[0, j] = A[i, j] + T.float32(1)" in text
    assert "C[i, j] = B[0, j] * T.float32(2)" in text
    same_as_interpreter(block_rows, rand(16, 16), np.zeros((16, 16), "float32"))


@T.prim_func
def root_rows(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i in range(16):
        for j in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * T.float32(2)


def test_serial_loop_between_allocation_and_uses_is_folded() -> None:
    # The root buffer is allocated around the serial i loop (plan_allocation_location);
    # each iteration's box is row i, disjoint from the other rows: one row is reused.
    out = compacted(root_rows)
    assert allocations(out) == {"B": ((1, 16), 16)}
    assert "B[0, j] = A[i, j] + T.float32(1)" in out.script()
    same_as_interpreter(root_rows, rand(16, 16), np.zeros((16, 16), "float32"))


@T.prim_func
def running_sum(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((32,), "float32")
    for i in range(16):
        B[i + 1] = A[i] + T.if_then_else(i > 0, B[i], T.float32(0))
        C[i] = B[i + 1]


def test_iterations_sharing_elements_are_not_folded() -> None:
    # Iteration i reads B[i], which iteration i - 1 wrote: folding the i loop onto a
    # 2-element box would overwrite it. The box at the allocation point is used instead.
    out = compacted(running_sum)
    assert allocations(out) == {"B": ((17,), 17)}
    assert "B[i + 1] = A[i] + T.if_then_else(i > 0, B[i], T.float32(0))" in out.script()
    a = rand(16)
    c = np.zeros(16, "float32")
    same_as_interpreter(running_sum, a, c)
    tvmscript.build(running_sum)(a, c)
    np.testing.assert_allclose(c, np.cumsum(a), rtol=1e-5)


@T.prim_func
def two_passes(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for t in range(2):
        for v in range(8):
            if t == 0:
                B[v] = A[v] * T.float32(3)
            else:
                C[v] = B[v] + T.float32(1)


def test_box_revisited_by_an_outer_loop_is_not_folded() -> None:
    # Boxes [v, v] are disjoint for different v, but t runs v twice: (1, 0) reads what
    # (0, 0) wrote, which one shared element would have lost to (0, 7). Only t folds (it
    # places nothing), v is relaxed: the 8 elements used.
    out = compacted(two_passes)
    assert allocations(out) == {"B": ((8,), 8)}
    a = rand(8)
    c = np.zeros(8, "float32")
    same_as_interpreter(two_passes, a, c)
    tvmscript.build(two_passes)(a, c)
    np.testing.assert_allclose(c, a * 3 + 1, rtol=1e-6)


def _small_gemm() -> PrimFunc:
    @T.prim_func
    def matmul(
        A: T.Buffer((16, 16), "float32"),
        B: T.Buffer((16, 16), "float32"),
        C: T.Buffer((16, 16), "float32"),
    ) -> None:
        for i, j, k in T.grid(16, 16, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    sch = T.Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i_0, i_1, i_2 = sch.split(i, [None, 2, 2])
    j_0, j_1 = sch.split(j, [None, 8])
    sch.reorder(i_0, j_0, i_1, k, i_2, j_1)
    local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(local, i_1)
    sch.parallel(i_0)
    sch.decompose_reduction(block, k)
    func = sch.mod["main"]
    assert isinstance(func, PrimFunc)
    return func


def test_cache_write_tile_becomes_the_tile() -> None:
    func = _small_gemm()
    out = compacted(func)
    # 2 x 8 accumulators instead of the whole 16 x 16 output, allocated per parallel task
    assert allocations(out) == {"C_local": ((2, 8), 16)}
    text = out.script()
    assert "C_local[i_2, j_1] = C_local[i_2, j_1] + A[" in text
    a, b = rand(16, 16), rand(16, 16) + 1
    same_as_interpreter(func, a, b, np.zeros((16, 16), "float32"))
    # the tile is a stack buffer: no heap allocation in the kernel
    kernel = tvmscript.build(func)
    assert "alloca" in kernel.get_source("ll")
    assert "aligned_alloc" not in kernel.get_source("ll")


@T.prim_func
def symbolic_rows(a: T.handle, c: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 8), "float32")
    C = T.match_buffer(c, (n, 8), "float32")
    B = T.alloc_buffer((n, 8), "float32")
    for i in range(n):
        for j in range(8):
            B[i, j] = A[i, j] * T.float32(3)
        for j in range(8):
            C[i, j] = B[i, j] - T.float32(1)


def test_symbolic_extent_folded_to_one_row() -> None:
    out = compacted(symbolic_rows)
    assert allocations(out) == {"B": ((1, 8), 8)}
    for n in (1, 5):
        same_as_interpreter(symbolic_rows, rand(n, 8), np.zeros((n, 8), "float32"), n)


@T.prim_func
def symbolic_partial(a: T.handle, c: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    B = T.alloc_buffer((2 * n + 8,), "float32")
    for i in range(n):
        B[i + 2] = A[i] * T.float32(2)
    for i in range(n):
        C[i] = B[i + 2]


def test_symbolic_box_shrinks_with_a_symbolic_extent() -> None:
    # the box [2, n + 1] of a (2n + 8)-element buffer: n elements from offset 2
    out = compacted(symbolic_partial)
    text = out.script()
    assert 'B = T.decl_buffer((T.max(n, 0),), "float32", data=B_data)' in text
    assert "B[i] = A[i] * T.float32(2)" in text
    assert "C[i] = B[i]" in text
    for n in (1, 3, 9):
        same_as_interpreter(symbolic_partial, rand(n), np.zeros(n, "float32"), n)


@T.prim_func
def unordered_ends(a: T.handle, c: T.handle, n: T.int32, m: T.int32):
    A = T.match_buffer(a, (64,), "float32")
    C = T.match_buffer(c, (64,), "float32")
    B = T.alloc_buffer((64,), "float32")
    for i in range(T.min(n, 64)):
        B[i] = A[i]
    for i in range(T.min(m, 64)):
        C[i] = B[i]


def test_symbolic_ends_that_cannot_be_ordered_keep_the_shape() -> None:
    out = compacted(unordered_ends)
    assert allocations(out) == {"B": ((64,), 64)}
    same_as_interpreter(unordered_ends, rand(64), np.zeros(64, "float32"), 10, 10)


@T.prim_func
def off_the_end(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        B[i + 1] = A[i]
    for i in range(16):
        C[i] = B[i]


def test_out_of_bounds_box_keeps_the_shape_for_the_bounds_check() -> None:
    out = compacted(off_the_end)
    assert allocations(out) == {"B": ((16,), 16)}
    kernel = tvmscript.build(off_the_end, bounds_check=True)
    with pytest.raises(IndexError, match="B"):
        kernel(rand(16), np.zeros(16, "float32"))


@T.prim_func
def gathered(A: T.Buffer((16,), "float32"), idx: T.Buffer((8,), "int32"),
             C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((32,), "float32")
    for i in range(16):
        B[i] = A[i]
    for i in range(8):
        C[i] = B[idx[i]]


def test_index_that_cannot_be_bounded_keeps_the_shape() -> None:
    out = compacted(gathered)
    assert allocations(out) == {"B": ((32,), 32)}
    idx = np.array([3, 0, 15, 7, 7, 1, 2, 9], "int32")
    same_as_interpreter(gathered, rand(16), idx, np.zeros(8, "float32"))


@T.prim_func
def escaping(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((64,), "float32")
    for i in range(16):
        B[i] = A[i]
    T.evaluate(T.address_of(B[0]))
    for i in range(16):
        C[i] = B[i]


def test_buffer_whose_pointer_escapes_keeps_the_shape() -> None:
    assert allocations(compacted(escaping)) == {"B": ((64,), 64)}


@T.prim_func
def lanes(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in T.vectorized(8):
        B[i] = A[i] * T.float32(2)
        C[i] = B[i] + T.float32(1)


def test_vectorized_lanes_are_never_folded() -> None:
    # Lanes run each statement together: one element per lane, never one shared.
    out = compacted(lanes)
    assert allocations(out) == {"B": ((8,), 8)}
    same_as_interpreter(lanes, rand(8), np.zeros(8, "float32"))


@T.prim_func
def parallel_rows(A: T.Buffer((8, 32), "float32"), C: T.Buffer((8, 32), "float32")):
    B = T.alloc_buffer((8, 32), "float32")
    for i in T.parallel(8):
        for j in range(32):
            B[i, j] = A[i, j] * A[i, j]
        for j in range(32):
            C[i, j] = B[i, 31 - j]


def test_private_buffer_of_a_parallel_body_is_one_row() -> None:
    out = compacted(parallel_rows)
    assert allocations(out) == {"B": ((1, 32), 32)}
    assert "C[i, j] = B[0, 31 - j]" in out.script()
    same_as_interpreter(parallel_rows, rand(8, 32), np.zeros((8, 32), "float32"))


@T.prim_func
def strided_tiles(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    B = T.alloc_buffer((64,), "float32")
    for t in range(8):
        for r in range(4):
            B[t * 8 + r * 2] = A[t * 8 + r * 2] + T.float32(1)
        for r in range(4):
            C[t * 8 + r * 2] = B[t * 8 + r * 2]
            C[t * 8 + r * 2 + 1] = T.float32(0)


def test_strided_box_covers_the_gaps() -> None:
    # each tile uses elements 0, 2, 4, 6 of its 8: the box [0, 6] (7 elements), folded
    out = compacted(strided_tiles)
    assert allocations(out) == {"B": ((7,), 7)}
    same_as_interpreter(strided_tiles, rand(64), np.zeros(64, "float32"))
