"""``pack_transposed_operands``: an operand read across its rows (``B[j, k]`` of ``A @ B^T``)
is copied transposed before the nest, which then reads the copy along its rows. The copy is
taken only where the nest reads every copied element, never writes the operand, and reuses
each element; behind a no-overlap test when the nest writes a parameter array. Numbers are
the interpreter's bit for bit (``fp_contract=False``) on both pinned targets, with and
without overlapping arguments."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import IfThenElse, PrimFunc
from irbuilder.ir.functor import post_order_visit
from lowering.pipeline import LATE_STAGE
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent / "late"))
from late_kit import (
    agrees_with_interpreter,
    one_storage,
    packed_copies,
    pinned_targets,
    standard_normal,
)


@T.prim_func
def dense_block(X: T.Buffer((24, 40), "float32"), W: T.Buffer((48, 40), "float32"),
                Y: T.Buffer((24, 48), "float32")):
    for i, j, k in T.grid(24, 48, 40):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]


@T.prim_func
def matmul_nt_local(A: T.Buffer((20, 37), "float32"), B: T.Buffer((70, 37), "float32"),
                    C: T.Buffer((20, 70), "float32")):
    for i in T.parallel(20):
        for j in range(70):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(37):
                acc[0] = acc[0] + A[i, k] * B[j, k]
            C[i, j] = acc[0]


@T.prim_func
def matmul_nt_grid(A: T.Buffer((64, 40), "float32"), B: T.Buffer((64, 40), "float32"),
                   C: T.Buffer((64, 64), "float32")):
    # plain serial loops accumulating into the output (parallel on a no-overlap test)
    for i, j in T.grid(64, 64):
        C[i, j] = T.float32(0)
        for k in range(40):
            C[i, j] = C[i, j] + A[i, k] * B[j, k]


@T.prim_func
def scores(Q: T.Buffer((3, 32, 16), "float32"), K: T.Buffer((3, 40, 16), "float32"),
           S: T.Buffer((3, 32, 40), "float32")):
    for h, i, j, k in T.grid(3, 32, 40, 16):
        with T.block("S"):
            vh, vi, vj, vk = T.axis.remap("SSSR", [h, i, j, k])
            with T.init():
                S[vh, vi, vj] = T.float32(0)
            S[vh, vi, vj] = S[vh, vi, vj] + Q[vh, vi, vk] * K[vh, vj, vk] * T.float32(0.25)


@T.prim_func
def window(A: T.Buffer((20, 40), "float32"), B: T.Buffer((40, 40), "float32"),
           C: T.Buffer((20, 32), "float32")):
    # both loops start past 0, and B is read at an offset: a window of B is copied
    for i in T.parallel(20):
        for j in range(1, 33):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(3, 31):
                acc[0] = acc[0] + A[i, k] * B[j + 2, k + 1]
            C[i, j - 1] = acc[0]


@T.prim_func
def int8_dense(X: T.Buffer((20, 64), "int8"), W: T.Buffer((32, 64), "int8"),
               Y: T.Buffer((20, 32), "int32")):
    for i, j, k in T.grid(20, 32, 64):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = 0
            Y[vi, vj] = Y[vi, vj] + T.Cast("int32", X[vi, vk]) * T.Cast("int32", W[vj, vk])


@T.prim_func
def matmul_nn_local(A: T.Buffer((20, 37), "float32"), B: T.Buffer((37, 70), "float32"),
                    C: T.Buffer((20, 70), "float32")):
    for i in T.parallel(20):
        for j in range(70):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(37):
                acc[0] = acc[0] + A[i, k] * B[k, j]
            C[i, j] = acc[0]


@T.prim_func
def guarded(A: T.Buffer((20, 37), "float32"), B: T.Buffer((70, 37), "float32"),
            C: T.Buffer((20, 70), "float32")):
    for i in T.parallel(20):
        for j in range(70):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(37):
                acc[0] = acc[0] + T.if_then_else(k < 30, A[i, k] * B[j, k], T.float32(1))
            C[i, j] = acc[0]


@T.prim_func
def guarded_at_offset(A: T.Buffer((20, 37), "float32"), B: T.Buffer((70, 60), "float32"),
                      C: T.Buffer((20, 70), "float32"), o: T.int32):
    # guarded, and where the copy would read depends on an argument: no proof it stays
    # inside B, so no copy
    for i in T.parallel(20):
        for j in range(70):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(37):
                acc[0] = acc[0] + T.if_then_else(k + o < 60, A[i, k] * B[j, k + o], T.float32(1))
            C[i, j] = acc[0]


@T.prim_func
def dense_rows(x: T.handle, W: T.Buffer((48, 40), "float32"), y: T.handle):
    n = T.int32()
    X = T.match_buffer(x, (n, 40), "float32")
    Y = T.match_buffer(y, (n, 48), "float32")
    for i, j, k in T.grid(n, 48, 40):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]


@T.prim_func
def few_rows(A: T.Buffer((4, 37), "float32"), B: T.Buffer((70, 37), "float32"),
             C: T.Buffer((4, 70), "float32")):
    for i in T.parallel(4):
        for j in range(70):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(37):
                acc[0] = acc[0] + A[i, k] * B[j, k]
            C[i, j] = acc[0]


@T.prim_func
def outer_rows(A: T.Buffer((20, 37), "float32"), B: T.Buffer((70, 37), "float32"),
               C: T.Buffer((20, 70, 37), "float32")):
    # k walks B's rows without accumulating: the nest already reads B along its rows
    for i in T.parallel(20):
        for j, k in T.grid(70, 37):
            C[i, j, k] = A[i, k] * B[j, k]


@T.prim_func
def writes_operand(A: T.Buffer((20, 37), "float32"), B: T.Buffer((70, 37), "float32"),
                   C: T.Buffer((20, 70), "float32")):
    for i in range(20):
        for j in range(70):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(37):
                acc[0] = acc[0] + A[i, k] * B[j, k]
            C[i, j] = acc[0]
            B[j, 0] = acc[0]


@T.prim_func
def local_operand(A: T.Buffer((20, 37), "float32"), B: T.Buffer((70, 37), "float32"),
                  C: T.Buffer((20, 70), "float32")):
    # an operand the function computes: no overlap test needed for it
    Bs = T.alloc_buffer((70, 37), "float32")
    for j, k in T.grid(70, 37):
        Bs[j, k] = B[j, k] * T.float32(2)
    for i in T.parallel(20):
        for j in range(70):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(37):
                acc[0] = acc[0] + A[i, k] * Bs[j, k]
            C[i, j] = acc[0]


@T.prim_func
def offset_bound_inside(A: T.Buffer((20, 37), "float32"), B: T.Buffer((70, 40), "float32"),
                        Off: T.Buffer((20,), "int32"), C: T.Buffer((20, 70), "float32")):
    # the offset into B is bound inside the row loop: a copy before it could not use it
    for i in range(20):
        o = Off[i]
        for j in range(70):
            acc = T.alloc_buffer((1,), "float32")
            acc[0] = T.float32(0)
            for k in range(37):
                acc[0] = acc[0] + A[i, k] * B[j, k + o]
            C[i, j] = acc[0]


@pytest.mark.parametrize("func, operand", [
    (dense_block, "W_packed"), (matmul_nt_local, "B_packed"), (matmul_nt_grid, "B_packed"),
    (scores, "K_packed"), (window, "B_packed"), (int8_dense, "W_packed"),
    (local_operand, "Bs_packed"), (guarded, "B_packed"), (dense_rows, "W_packed"),
])
def test_rows_read_across_are_packed(func: PrimFunc, operand: str) -> None:
    assert packed_copies(func) == [operand]


@pytest.mark.parametrize("func", [matmul_nn_local, guarded_at_offset, few_rows, outer_rows,
                                  writes_operand, offset_bound_inside])
def test_left_alone(func: PrimFunc) -> None:
    """Already along rows; read under a condition at an offset known only at run time (the
    copy might read past the end of B where the nest does not); too little reuse; no
    accumulation along the rows; the nest writes the operand; the offset is bound inside
    the nest."""
    assert packed_copies(func) == []


def test_disabled_by_config() -> None:
    with lowering.PassContext(disabled_passes=frozenset({"pack_transposed_operands"})):
        assert packed_copies(matmul_nt_local) == []


def test_copy_is_transposed_window() -> None:
    """The copy holds B[j + 2, k + 1] for the loops' ranges only, rows along ``j``."""
    text = lowering.lower(window, target="llvm -mcpu=znver3").script()
    assert 'B_packed = T.decl_buffer((896,), "float32")' in text  # 28 rows of 32
    early = _early(window)
    assert "B_packed[kk * 32 + jj] = B_flat[jj * 40 + kk + 124]" in early
    assert "B_packed[k * 32 + j - 97]" in early


def test_versioned_on_overlap_with_written_arrays() -> None:
    lowered = lowering.lower(matmul_nt_local, target="llvm -mcpu=znver3")
    ifs = []
    post_order_visit(lowered.body, lambda n: ifs.append(n) if isinstance(n, IfThenElse) else None)
    assert any("B" in str(s.condition) and "C" in str(s.condition) for s in ifs)


@T.prim_func
def dense_large(X: T.Buffer((64, 512), "float32"), W: T.Buffer((256, 512), "float32"),
                Y: T.Buffer((64, 256), "float32")):
    for i, j, k in T.grid(64, 256, 512):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]


def _early(func: PrimFunc) -> str:
    """``func`` lowered up to the late stage."""
    with lowering.PassContext(disabled_passes=frozenset(LATE_STAGE)):
        return lowering.lower(func, target="llvm -mcpu=znver3").script()


def test_large_copy_outside_parallel_loops_is_parallel() -> None:
    assert "for kk in T.parallel(512):" in _early(dense_large)
    # a head's copy, made inside the parallel head loop, is serial
    assert "for kk, jj in T.grid(16, 40):" in _early(scores)


_NUMBER_CASES = [dense_block, matmul_nt_local, matmul_nt_grid, scores, window, int8_dense,
                 local_operand, offset_bound_inside, guarded]


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("func", _NUMBER_CASES, ids=lambda f: f.name)
def test_numbers_are_the_interpreters(func: PrimFunc, target: Any) -> None:
    def args() -> list[np.ndarray[Any, Any]]:
        if func is int8_dense:
            rng = np.random.default_rng(4)
            return [rng.integers(-128, 128, (20, 64)).astype("int8"),
                    rng.integers(-128, 128, (32, 64)).astype("int8"),
                    np.zeros((20, 32), "int32")]
        if func is offset_bound_inside:
            a, b, _, c = standard_normal(func, 4)
            return [a, b, np.arange(20, dtype="int32") % 4, c]
        return standard_normal(func, 4)

    agrees_with_interpreter(func, args, target)


def test_symbolic_rows_test_the_reuse_at_run_time() -> None:
    text = _early(dense_rows)
    assert "W_packed" in text
    assert "16 <= n" in text or "n >= 16" in text


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("rows", [3, 40])
def test_symbolic_rows_numbers(rows: int, target: Any) -> None:
    """3 rows: too few for a copy (the nest as written); 40: the copy."""

    def args() -> list[np.ndarray[Any, Any]]:
        rng = np.random.default_rng(rows)
        return [rng.standard_normal((rows, 40)).astype("float32"),
                rng.standard_normal((48, 40)).astype("float32"),
                np.zeros((rows, 48), "float32")]

    agrees_with_interpreter(dense_rows, args, target)


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("offsets", [(0, 0, 10), (0, 800, 0), (0, 900, 50), (900, 0, 1000)])
def test_overlapping_output_runs_the_loop_as_written(offsets: tuple[int, int, int],
                                                     target: Any) -> None:
    """The output a view into the packed operand: the nest's writes reach later reads."""
    agrees_with_interpreter(
        matmul_nt_grid, lambda: one_storage(matmul_nt_grid, offsets, np.random.default_rng(9)),
        target)


@pytest.mark.parametrize("target", pinned_targets())
def test_checked_build_raises_at_the_access(target: Any) -> None:
    """``bounds_check=True``: no copy (it would read past the end before the check
    raised); the access out of range raises as written."""

    @T.prim_func
    def past_the_end(A: T.Buffer((20, 37), "float32"), B: T.Buffer((70, 37), "float32"),
                     C: T.Buffer((20, 70), "float32")):
        for i in T.parallel(20):
            for j in range(70):
                acc = T.alloc_buffer((1,), "float32")
                acc[0] = T.float32(0)
                for k in range(38):
                    acc[0] = acc[0] + A[i, k % 37] * B[j, k]
                C[i, j] = acc[0]

    kernel = tvmscript.build(past_the_end, bounds_check=True, cache=False, target=target)
    assert "B_packed" not in kernel.get_source("tir")
    a, b, c = standard_normal(past_the_end, 1)
    with pytest.raises(IndexError, match="B"):
        kernel(a, b, c)


_FORMS = {
    "block": '''
@T.prim_func
def nt(A: T.Buffer(({I}, {KA}), "{dt}"), B: T.Buffer(({JB}, {KB}), "{dt}"),
       C: T.Buffer(({I}, {J}), "{dt}")):
    for i, j, k in T.grid({I}, {J}, {K}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.{dt}(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk + {ka}] * B[vj + {jb}, vk + {kb}]
''',
    "local": '''
@T.prim_func
def nt(A: T.Buffer(({I}, {KA}), "{dt}"), B: T.Buffer(({JB}, {KB}), "{dt}"),
       C: T.Buffer(({I}, {J}), "{dt}")):
    for i in T.parallel({I}):
        for j in range({J}):
            acc = T.alloc_buffer((1,), "{dt}")
            acc[0] = T.{dt}(0)
            for k in range({K}):
                acc[0] = acc[0] + A[i, k + {ka}] * B[j + {jb}, k + {kb}]
            C[i, j] = acc[0]
''',
    "grid": '''
@T.prim_func
def nt(A: T.Buffer(({I}, {KA}), "{dt}"), B: T.Buffer(({JB}, {KB}), "{dt}"),
       C: T.Buffer(({I}, {J}), "{dt}")):
    for i, j in T.grid({I}, {J}):
        C[i, j] = T.{dt}(0)
        for k in range({K}):
            C[i, j] = C[i, j] + A[i, k + {ka}] * B[j + {jb}, k + {kb}]
''',
}


@pytest.mark.parametrize("target", pinned_targets())
@pytest.mark.parametrize("case", range(12))
def test_random_shapes_and_offsets(case: int, target: Any) -> None:
    """Nests of the three forms at random sizes and offsets into larger operands: each is
    packed (all are large enough) and gives the interpreter's numbers bit for bit."""
    rng = np.random.default_rng(1000 + case)
    form = ("block", "local", "grid")[case % 3]
    dt = ("float32", "int32", "float64")[case // 3 % 3]
    i, j, k = int(rng.integers(16, 40)), int(rng.integers(16, 70)), int(rng.integers(1, 50))
    ka, jb, kb = (int(x) for x in rng.integers(0, 5, 3))
    spare = [int(x) for x in rng.integers(0, 3, 3)]  # operands larger than the nest reads
    text = _FORMS[form].format(I=i, J=j, K=k, KA=k + ka + spare[0], JB=j + jb + spare[1],
                               KB=k + kb + spare[2], ka=ka, jb=jb, kb=kb, dt=dt)
    func = tvmscript.from_source(text)
    assert packed_copies(func, target) == ["B_packed"], text

    def args() -> list[np.ndarray[Any, Any]]:
        out = []
        for buffer in func.buffer_map.values():
            shape = tuple(int(d) for d in buffer.shape)
            out.append(np.random.default_rng(case).integers(-9, 9, shape).astype(dt)
                       if dt == "int32" else
                       np.random.default_rng(case).standard_normal(shape).astype(dt))
        return out

    agrees_with_interpreter(func, args, target)
