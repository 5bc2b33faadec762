"""A ``T.if_then_else`` whose choice differs from lane to lane inside a ``T.vectorized`` loop
(lowering/transforms/vectorize.py): a ``Select`` when both values may be evaluated in every
iteration (loads proven in bounds of known memory, no trapping division), a scalar loop
otherwise, which keeps the lazy evaluation the scalar semantics promise."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T

sys.path.insert(0, str(Path(__file__).parent.parent / "perf_codegen"))
from pinned import AVX2, AVX512, lower_for, needs_host_features  # noqa: E402


@T.prim_func
def clip_where(A: T.Buffer((64, 200), "float32"), B: T.Buffer((64, 200), "float32"),
               O: T.Buffer((64, 200), "float32")):
    for i in T.parallel(64):
        for j in T.vectorized(200):
            O[i, j] = T.if_then_else(A[i, j] > T.float32(0), T.min(A[i, j], T.float32(1)),
                                     B[i, j] * T.float32(0.1))


@T.prim_func
def shift_right(A: T.Buffer((256,), "float32"), O: T.Buffer((256,), "float32")):
    for j in T.vectorized(256):
        O[j] = T.if_then_else(j >= 2, A[j - 2], T.float32(0))  # A[-2], A[-1] never read


@T.prim_func
def shift_in_scratch(A: T.Buffer((256,), "float32"), O: T.Buffer((256,), "float32")):
    P = T.alloc_buffer((260,), "float32")
    for j in range(260):
        P[j] = T.float32(j)
    for j in T.vectorized(256):
        O[j] = T.if_then_else(A[j] > T.float32(0), P[j + 4], A[j])  # in bounds: P has 260


@T.prim_func
def safe_divide(A: T.Buffer((256,), "int32"), B: T.Buffer((256,), "int32"),
                O: T.Buffer((256,), "int32")):
    for j in T.vectorized(256):
        O[j] = T.if_then_else(B[j] != 0, T.floordiv(A[j], B[j]), 0)


@T.prim_func
def guarded_gather(Tb: T.Buffer((64,), "float32"), I: T.Buffer((256,), "int32"),
                   O: T.Buffer((256,), "float32")):
    for j in T.vectorized(256):
        O[j] = T.if_then_else(I[j] >= 0, Tb[I[j]], T.float32(0))


def _interp_and_native(func: object, *arrays: np.ndarray) -> tuple[list[np.ndarray], ...]:
    want = [a.copy() for a in arrays]
    tvmscript.build(func, target="interp")(*want)
    got = [a.copy() for a in arrays]
    tvmscript.build(func)(*got)
    return want, got


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_in_bounds_values_become_a_select(target: object) -> None:
    text = lower_for(clip_where, target).script()
    assert "T.Select(A_flat[T.Ramp(" in text
    assert "if_then_else" not in text
    assert "T.Select(" in lower_for(shift_in_scratch, target).script()


def test_selects_compute_the_interpreter_result() -> None:
    rng = np.random.default_rng(0)
    A, B = (rng.standard_normal((64, 200)).astype("float32") for _ in range(2))
    want, got = _interp_and_native(clip_where, A, B, np.zeros((64, 200), "float32"))
    np.testing.assert_array_equal(got[2], want[2])
    a = rng.standard_normal(256).astype("float32")
    want, got = _interp_and_native(shift_in_scratch, a, np.zeros(256, "float32"))
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize(
    "func", [safe_divide, guarded_gather],
    ids=["division-by-zero", "gather-of-unknown-index"],
)
def test_values_that_may_fault_keep_the_loop_scalar(func: object) -> None:
    text = lower_for(func, AVX512).script()
    assert "T.if_then_else(" in text
    assert "T.Select(" not in text


def test_a_load_before_the_start_is_peeled_not_selected() -> None:
    # the scalar loop keeps the condition; partition_loops then runs its first two
    # iterations apart, the 254 others without it
    text = lower_for(shift_right, AVX512).script()
    assert "T.Select(" not in text and "if_then_else" not in text
    assert "O_flat[j] = T.float32(0)" in text
    assert "O_flat[j + 2] = A_flat[j]" in text


def test_values_that_may_fault_are_never_evaluated() -> None:
    a = np.arange(256, dtype="float32")
    want, got = _interp_and_native(shift_right, a, np.zeros(256, "float32"))
    np.testing.assert_array_equal(got[1], want[1])
    ints = np.arange(-128, 128, dtype="int32")
    divisors = np.where(ints % 3 == 0, 0, ints).astype("int32")
    want, got = _interp_and_native(safe_divide, ints, divisors, np.zeros(256, "int32"))
    np.testing.assert_array_equal(got[2], want[2])
    index = np.where(np.arange(256) % 2 == 0, -(10**8), np.arange(256) % 64).astype("int32")
    table = np.arange(64, dtype="float32")
    want, got = _interp_and_native(guarded_gather, table, index, np.zeros(256, "float32"))
    np.testing.assert_array_equal(got[2], want[2])


def test_the_parallel_select_kernel_gives_the_interpreter_bits_on_every_run() -> None:
    rng = np.random.default_rng(6)
    A, B = (rng.standard_normal((64, 200)).astype("float32") for _ in range(2))
    want = np.zeros((64, 200), "float32")
    tvmscript.build(clip_where, target="interp")(A, B, want)
    kernel = tvmscript.build(clip_where, target=AVX2, cache=False)
    assert "T.Select(" in kernel.get_source("tir")
    for _ in range(5):  # a T.parallel loop: every core, several runs
        O = np.zeros((64, 200), "float32")
        kernel(A, B, O)
        np.testing.assert_array_equal(O, want)


# An ``if``/``else`` whose two branches store to one place is the same choice written as
# statements: merged into a Select only when neither value can fault.

@T.prim_func
def guarded_ratio(N: T.Buffer((128,), "int32"), M: T.Buffer((128,), "int32"),
                  Q: T.Buffer((128,), "int32")):
    for k in T.vectorized(128):
        if M[k] != 0:
            Q[k] = T.truncdiv(N[k], M[k])
        else:
            Q[k] = -1


@T.prim_func
def left_neighbour(X: T.Buffer((96,), "float32"), Y: T.Buffer((96,), "float32"), w: T.int32):
    for k in T.vectorized(96):
        if 0 <= k - w:
            Y[k] = X[k - w] * T.float32(2)  # X[-w .. -1] never read
        else:
            Y[k] = T.float32(-1)


@T.prim_func
def halve_negatives(x: T.handle, y: T.handle, n: T.int32):
    X = T.match_buffer(x, (n,))
    Y = T.match_buffer(y, (n,))
    for k in T.vectorized(n):
        if X[k] < T.float32(0):
            Y[k] = X[k] * T.float32(0.5)  # X[k] is read by the condition on every lane
        else:
            Y[k] = Y[k] + T.float32(1)  # and Y[k] is the stored element


@T.prim_func
def pick_rows(X: T.Buffer((64,), "float32"), Z: T.Buffer((64,), "float32"),
              Y: T.Buffer((64,), "float32")):
    for k in T.vectorized(64):
        if X[k] > T.float32(0):
            Y[k] = Z[63 - k]  # in bounds of Z for every k: provable from k's range
        else:
            Y[k] = Z[k] - X[k]


def _loop_text(func: object, target: object) -> str:
    return lower_for(func, target).script().split("T.LetStmt")[-1]


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_if_else_whose_values_may_fault_keeps_the_loop_scalar(target: object) -> None:
    for func in (guarded_ratio, left_neighbour):
        text = _loop_text(func, target)
        assert "T.Select(" not in text and "T.Ramp(" not in text


def test_if_else_guarding_a_division_by_zero_runs() -> None:
    # the merged form divided on every lane: ZeroDivisionError from the kernel's checks
    numerators = np.arange(-64, 64, dtype="int32") * 5
    divisors = np.where(np.arange(128) % 4 == 1, 0, np.arange(128) % 7 - 3).astype("int32")
    want, got = _interp_and_native(guarded_ratio, numerators, divisors, np.zeros(128, "int32"))
    np.testing.assert_array_equal(got[2], want[2])
    assert (got[2][np.arange(128) % 4 == 1] == -1).all()


@needs_host_features(AVX2)
def test_if_else_guarding_a_border_load_never_reads_before_the_array() -> None:
    # X sits right after an inaccessible page: reading X[-1] would kill the process (the
    # AVX2 code did: a vector load of X[k - 3] from k = 0, then a select)
    import ctypes
    import mmap

    libc = ctypes.CDLL(None)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    page = mmap.PAGESIZE
    area = mmap.mmap(-1, 2 * page)
    start = ctypes.addressof(ctypes.c_char.from_buffer(area))
    assert libc.mprotect(start, page, 0) == 0
    try:
        x = np.frombuffer(area, dtype="float32", count=96, offset=page)
        x[:] = np.arange(96, dtype="float32")
        y = np.zeros(96, "float32")
        tvmscript.build(left_neighbour, target=AVX2)(x, y, 3)
        np.testing.assert_array_equal(y, np.concatenate([[-1] * 3, np.arange(93) * 2]))
        del x
    finally:
        libc.mprotect(start, page, 3)


@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_if_else_of_safe_values_is_still_a_select(target: object) -> None:
    for func in (halve_negatives, pick_rows):
        text = _loop_text(func, target)
        assert "T.Select(" in text and "T.Ramp(" in text
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal(64).astype("float32") for _ in range(2))
    want_y, got_y = y.copy(), y.copy()
    tvmscript.build(halve_negatives, target="interp")(x, want_y, 64)
    tvmscript.build(halve_negatives)(x, got_y, 64)
    np.testing.assert_array_equal(got_y, want_y)
    want, got = _interp_and_native(pick_rows, x, y, np.zeros(64, "float32"))
    np.testing.assert_array_equal(got[2], want[2])
