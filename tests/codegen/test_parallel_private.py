"""Buffers allocated inside a T.parallel body are private to each iteration, on 2 threads.

The kernels are written the way TVM users write them: ``T.alloc_buffer`` inside the
parallel loop (the parser puts it in the root block; plan_allocation_location moves it
into the loop body). Each runs 1,000 times on the thread pool with 2 threads and must
give the reference interpreter's numbers every time: a buffer shared between the
threads would mix their rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pytest
from cgkit import code_for

import lowering
import tvmscript
from backend.codegen import CodegenOptions, generate
from backend.runtime import get_num_threads, set_num_threads
from lowering.target import Target
from tvmscript import tir as T

CALLS = 1000


@pytest.fixture(autouse=True)
def two_threads() -> Iterator[None]:
    before = get_num_threads()
    set_num_threads(2)
    try:
        yield
    finally:
        set_num_threads(before)


@T.prim_func
def row_sums(A: T.Buffer((1024, 64), "float32"), B: T.Buffer((1024,), "float32")):
    for i in T.parallel(1024):
        t = T.alloc_buffer((1,), "float32")
        t[0] = T.float32(0)
        for j in range(64):
            t[0] = t[0] + A[i, j]
        B[i] = t[0]


@T.prim_func
def panel_matmul(
    A: T.Buffer((48, 32), "float32"), B: T.Buffer((32, 64), "float32"),
    C: T.Buffer((48, 64), "float32"),
):
    for jo in T.parallel(4):
        acc = T.alloc_buffer((6, 16), "float32")
        for io in range(8):
            for ii, jj in T.grid(6, 16):
                acc[ii, jj] = T.float32(0)
            for k in range(32):
                for ii, jj in T.grid(6, 16):
                    acc[ii, jj] = acc[ii, jj] + A[io * 6 + ii, k] * B[k, jo * 16 + jj]
            for ii, jj in T.grid(6, 16):
                C[io * 6 + ii, jo * 16 + jj] = acc[ii, jj]


@T.prim_func
def scratch_rows(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    # Softmax's shape (row max, shifted values, row sum) without exp, so exact.
    for i in T.parallel(64):
        mx = T.alloc_buffer((1,), "float32")
        e = T.alloc_buffer((32,), "float32")
        s = T.alloc_buffer((1,), "float32")
        mx[0] = A[i, 0]
        for j in range(1, 32):
            mx[0] = T.max(mx[0], A[i, j])
        s[0] = T.float32(0)
        for j in range(32):
            e[j] = (A[i, j] - mx[0]) * (A[i, j] - mx[0])
            s[0] = s[0] + e[j]
        for j in range(32):
            B[i, j] = e[j] / s[0]


@T.prim_func
def softmax(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    for i in T.parallel(64):
        mx = T.alloc_buffer((1,), "float32")
        e = T.alloc_buffer((32,), "float32")
        s = T.alloc_buffer((1,), "float32")
        mx[0] = A[i, 0]
        for j in range(1, 32):
            mx[0] = T.max(mx[0], A[i, j])
        s[0] = T.float32(0)
        for j in range(32):
            e[j] = T.exp(A[i, j] - mx[0])
            s[0] = s[0] + e[j]
        for j in range(32):
            B[i, j] = e[j] / s[0]


@T.prim_func
def heap_rows(A: T.Buffer((16, 2048), "float32"), B: T.Buffer((16, 2048), "float32")):
    # 8 KiB per iteration: above the stack limit, so one heap block per iteration.
    for i in T.parallel(16):
        rev = T.alloc_buffer((2048,), "float32")
        for j in range(2048):
            rev[j] = A[i, 2047 - j]
        T.Assert(rev[0] >= T.float32(0), "ValueError: negative last element")
        for j in range(2048):
            B[i, j] = rev[j] + A[i, j]


def _inputs(shapes: list[tuple[int, ...]], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype("float32") for s in shapes]


CASES = [
    (row_sums, [(1024, 64)], [(1024,)]),
    (panel_matmul, [(48, 32), (32, 64)], [(48, 64)]),
    (scratch_rows, [(64, 32)], [(64, 32)]),
]


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("func, ins, outs", CASES, ids=[c[0].name for c in CASES])
def test_private_buffers_exact_over_1000_calls_on_2_threads(
    func: object, ins: list[tuple[int, ...]], outs: list[tuple[int, ...]], opt_level: int
) -> None:
    assert get_num_threads() == 2
    # fp_contract=False: the interpreter rounds after every multiply and add.
    kernel = tvmscript.build(func, opt_level=opt_level, fp_contract=False)
    reference = tvmscript.build(func, target="interp")
    args = _inputs(ins, seed=opt_level)
    expected = [np.zeros(s, "float32") for s in outs]
    reference(*args, *expected)
    got = [np.zeros(s, "float32") for s in outs]
    for call in range(CALLS):
        for g in got:
            g.fill(np.nan)
        kernel(*args, *got)
        for g, e in zip(got, expected):
            if not np.array_equal(g, e):
                bad = int(np.sum(g != e))
                pytest.fail(f"call {call}: {bad} elements differ from the interpreter")


def test_softmax_scratch_rows_deterministic_on_2_threads() -> None:
    kernel = tvmscript.build(softmax)
    (a,) = _inputs([(64, 32)], seed=1)
    expected = np.zeros((64, 32), "float32")
    tvmscript.build(softmax, target="interp")(a, expected)
    first = np.zeros_like(a)
    kernel(a, first)
    # exp may differ from numpy's in the last bit; the threads must not.
    np.testing.assert_allclose(first, expected, rtol=1e-6, atol=0)
    out = np.empty_like(a)
    for _ in range(CALLS):
        kernel(a, out)
        assert np.array_equal(out, first)


@pytest.mark.parametrize("mcpu", ["znver3", "znver4"])
def test_small_private_buffer_is_an_entry_alloca_of_the_outlined_body(mcpu: str) -> None:
    target = Target(f"llvm -mcpu={mcpu}")
    # The generated module, before LLVM's passes: the entry block is the first one.
    text = generate([lowering.lower(panel_matmul, target=target)],
                    CodegenOptions(target=target)).text
    outlined = re.search(r'define internal void @"?[\w.]*__par_\d+"?\(.*?\n}\n', text, re.S)
    assert outlined is not None, "no outlined parallel body"
    entry = outlined.group(0).split("\nbody:", 1)[0]
    # 6 x 16 float32 = 384 bytes: on the stack, in the entry block (mem2reg/SROA see it).
    assert re.search(r"alloca (\[96 x float\]|float, i64 96)", entry), entry
    # After LLVM's passes the tile is in registers or still on the stack, never the heap.
    ll, _ = code_for(panel_matmul, target)  # made, not run: AVX-512 code on any host
    body = re.search(r'define internal void @"?[\w.]*__par_\d+"?\(.*?\n}\n', ll, re.S)
    assert body is not None and "__tvms_heap_alloc" not in body.group(0)


def test_large_private_buffer_is_heap_and_freed_on_every_exit() -> None:
    kernel = tvmscript.build(heap_rows, count_allocations=True)
    reference = tvmscript.build(heap_rows, target="interp")
    a = np.abs(_inputs([(16, 2048)], seed=2)[0])
    expected = np.zeros_like(a)
    reference(a, expected)
    out = np.zeros_like(a)
    for _ in range(100):
        kernel(a, out)
        assert np.array_equal(out, expected)
    stats = kernel.allocation_stats()
    assert stats["live"] == 0 and stats["total"] == 100 * 16, stats
    a[5, -1] = -1.0
    with pytest.raises(ValueError, match="negative last element"):
        kernel(a, out)
    assert kernel.allocation_stats()["live"] == 0


@T.prim_func
def carried(A: T.Buffer((4, 2048), "float32"), B: T.Buffer((2048,), "float32")):
    # big's uses all sit in the serial i loop, and carry values across its iterations.
    big = T.alloc_buffer((2048,), "float32")
    for i in range(4):
        if i == 0:
            for j in range(2048):
                big[j] = T.float32(0)
        for j in range(2048):
            big[j] = big[j] + A[i, j]
        if i == 3:
            for j in range(2048):
                B[j] = big[j]


@pytest.mark.parametrize("opt_level", [0, 3])
def test_value_carried_across_serial_iterations_of_a_heap_buffer(opt_level: int) -> None:
    kernel = tvmscript.build(carried, opt_level=opt_level, count_allocations=True)
    (a,) = _inputs([(4, 2048)], seed=3)
    expected = np.zeros(2048, "float32")
    tvmscript.build(carried, target="interp")(a, expected)
    out = np.zeros(2048, "float32")
    kernel(a, out)
    assert np.array_equal(out, expected)
    assert kernel.allocation_stats()["total"] == 1  # once, around the serial loop
