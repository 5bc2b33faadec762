"""compact_buffer_allocation on TVM users' shapes: an allocation shrinks to the region its scope accesses (TVM's
CompactBufferAllocation), so a per-row slice of a function-level buffer used inside a
``T.parallel`` body is a small private buffer, not a full copy per iteration.

Each test looks at the allocation sizes after the pass (``Allocate.extent`` and the
declared buffer's shape) and runs the compiled kernel against the reference interpreter.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lowering
import tvmscript
from irbuilder.ir import Allocate, DeclBuffer, IntImm, PrimFunc, post_order_visit
from lowering.transforms.compact_buffer import compact_buffer_allocation
from lowering.transforms.lower_blocks import lower_blocks
from lowering.transforms.plan_alloc import plan_allocation_location
from tests.perf_codegen.pinned import AVX2, lower_for
from tvmscript import tir as T


def _compacted(func: PrimFunc) -> PrimFunc:
    with lowering.PassContext():
        return compact_buffer_allocation(plan_allocation_location(lower_blocks(func)))


def shapes(func: PrimFunc) -> dict[str, tuple[int, ...]]:
    """Declared shape of each allocated buffer (by name), checked against its extent."""
    allocs: dict[Any, int] = {}
    found: dict[str, tuple[int, ...]] = {}

    def visit(node: Any) -> None:
        if isinstance(node, Allocate) and isinstance(node.extent, IntImm):
            allocs[node.buffer_var] = node.extent.value

    post_order_visit(func.body, visit)

    def visit_decl(node: Any) -> None:
        if isinstance(node, DeclBuffer) and node.buffer.data in allocs:
            dims = tuple(d.value for d in node.buffer.shape if isinstance(d, IntImm))
            if int(np.prod(dims)) == allocs[node.buffer.data]:
                found.setdefault(node.buffer.name, dims)

    post_order_visit(func.body, visit_decl)
    return found


def _same_as_interpreter(func: PrimFunc, *arrays: np.ndarray, rtol: float = 0.0) -> None:
    fast = [a.copy() for a in arrays]
    slow = [a.copy() for a in arrays]
    tvmscript.build(func, target=AVX2 if not AVX2.missing_on_host() else None)(*fast)
    tvmscript.build(func, target="interp")(*slow)
    for got, want in zip(fast, slow):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


@T.prim_func
def row_softmax(A: T.Buffer((64, 48), "float32"), B: T.Buffer((64, 48), "float32")):
    M = T.alloc_buffer((64,), "float32")
    S = T.alloc_buffer((64,), "float32")
    for i in T.parallel(64):
        for j in range(48):
            with T.block("max"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    M[vi] = T.float32(-3.4e38)
                M[vi] = T.max(M[vi], A[vi, vj])
        for j in range(48):
            with T.block("sum"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + T.exp(A[vi, vj] - M[vi])
        for j in range(48):
            with T.block("norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj] - M[vi]) / S[vi]


def test_per_row_scalars_of_a_parallel_body_become_one_element() -> None:
    assert shapes(_compacted(row_softmax)) == {"M": (1,), "S": (1,)}
    assert shapes(lower_for(row_softmax))["M"] == (1,)
    a = np.random.default_rng(0).standard_normal((64, 48)).astype("float32")
    # the sum is a declared reduction (summed in lanes) and exp is the vector library's
    _same_as_interpreter(row_softmax, a, np.zeros_like(a), rtol=2e-6)


@T.prim_func
def row_tiles(A: T.Buffer((32, 40), "float32"), B: T.Buffer((32, 36), "float32")):
    # each row: a 3-wide window sum through a (32, 40) scratch used at row i only,
    # columns 2..39 of it (offset 2)
    X = T.alloc_buffer((32, 40), "float32")
    for i in T.parallel(32):
        for j in range(38):
            X[i, j + 2] = A[i, j] * T.float32(2)
        for j in range(36):
            B[i, j] = X[i, j + 2] + X[i, j + 3] + X[i, j + 4]


def test_a_row_window_keeps_only_the_columns_used() -> None:
    assert shapes(_compacted(row_tiles)) == {"X": (1, 38)}
    a = np.random.default_rng(1).standard_normal((32, 40)).astype("float32")
    _same_as_interpreter(row_tiles, a, np.zeros((32, 36), "float32"))


@T.prim_func
def shifted_row(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    # row i + 1 of a 16-row scratch: out of its bounds at i = 15, so left as declared
    # (bounds_check=True must still see the overflow)
    X = T.alloc_buffer((16,), "float32")
    for i in T.parallel(16):
        X[i + 1] = A[i]
        B[i] = X[i + 1]


@T.prim_func
def two_rows(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    # rows i and 15 - i: no common outer part, so the row dimension stays
    X = T.alloc_buffer((16, 8), "float32")
    for i in T.parallel(8):
        for j in range(8):
            X[i, j] = A[i, j]
            X[15 - i, j] = A[15 - i, j]
        for j in range(8):
            B[i, j] = X[i, j] + X[15 - i, j]
            B[15 - i, j] = X[15 - i, j]


def test_regions_that_do_not_qualify_are_left_alone() -> None:
    assert shapes(_compacted(shifted_row)) == {"X": (16,)}
    assert shapes(_compacted(two_rows)) == {"X": (16, 8)}
    a = np.random.default_rng(2).standard_normal((16, 8)).astype("float32")
    _same_as_interpreter(two_rows, a, np.zeros_like(a))


@T.prim_func
def pointer_use(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    X = T.alloc_buffer((8, 4), "float32")
    for i in T.parallel(8):
        for j in range(4):
            X[i, j] = A[i, j]
        T.evaluate(T.address_of(X[i, 0]))
        for j in range(4):
            B[i, j] = X[i, j]


def test_a_buffer_whose_address_is_taken_keeps_its_shape() -> None:
    assert shapes(_compacted(pointer_use)) == {"X": (8, 4)}


def test_a_compacted_stack_buffer_replaces_a_heap_buffer() -> None:
    # 4096 floats (16 KiB) per iteration would be a heap allocation; one element is a
    # stack slot in the outlined parallel body
    @T.prim_func
    def big(A: T.Buffer((256, 64), "float32"), B: T.Buffer((256,), "float32")):
        S = T.alloc_buffer((4096,), "float32")
        for i in T.parallel(256):
            S[i] = T.float32(0)
            for j in range(64):
                S[i] = S[i] + A[i, j]
            B[i] = S[i]

    # (vectorize_row_reductions, which would replace S by one lane buffer of 8 rows, off)
    with lowering.PassContext(disabled_passes={"vectorize_row_reductions"}):
        assert shapes(lower_for(big))["S"] == (1,)
    kernel = tvmscript.build(big)
    a = np.random.default_rng(3).standard_normal((256, 64)).astype("float32")
    out = np.zeros(256, "float32")
    kernel(a, out)
    want = np.zeros(256, "float32")
    tvmscript.build(big, target="interp")(a, want)
    np.testing.assert_array_equal(out, want)
