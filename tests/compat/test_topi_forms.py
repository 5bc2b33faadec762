"""Forms of the PrimFuncs TVM's TOPI operators produce (``te.create_prim_func``) that
``tests/fuzz/topi_peer.py`` found we refused or computed wrong; small kernels of our own in
the same shapes, checked against numpy and the interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tvmscript

sys.path.insert(0, str(Path(__file__).parent.parent / "perf_codegen"))
from pinned import runnable_targets
from tvmscript import tir as T

_TARGETS = runnable_targets("interp", "llvm -mcpu=znver3", "llvm -mcpu=skylake-avx512")


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_truncmod_of_floats_is_c_fmod(target: str, dtype: str) -> None:
    # TOPI's float mod prints as T.truncmod: TVM's truncmod (unlike truncdiv) accepts
    # floats and computes C's fmod (the dividend's sign)
    @T.prim_func
    def rem(A: T.Buffer((9,), dtype), B: T.Buffer((9,), dtype), C: T.Buffer((9,), dtype)):
        for i in range(9):
            C[i] = T.truncmod(A[i], B[i])

    a = np.array([-7.5, 7.5, 3.25, -0.5, 5, 0.125, -6, 6.5, 0], dtype)
    b = np.array([2, -2, 1.5, 0.25, 5, 3, 4, -2.5, 1], dtype)
    c = np.zeros(9, dtype)
    tvmscript.build(rem, target=target)(a, b, c)
    np.testing.assert_array_equal(c, np.fmod(a, b))
    assert tvmscript.ir.structural_equal(rem, tvmscript.from_source(rem.script()))


def test_truncdiv_and_truncmod_refuse_bool_and_truncdiv_floats() -> None:
    with pytest.raises(TypeError, match=r"T\.truncdiv needs integer operands"):
        T.truncdiv(T.float32(1), T.float32(2))
    with pytest.raises(TypeError, match=r"T\.truncmod needs integer or float operands"):
        T.truncmod(T.bool(True), T.bool(True))


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize(("dtype", "cols"), [("int32", 2), ("int64", 3), ("int32", 5)])
def test_parallel_column_scan_over_symbolic_rows(target: str, dtype: str, cols: int) -> None:
    # TOPI's scans (cumsum, cumprod along the rows) run the columns in parallel and the
    # rows serially, indexing through the flat offset: (c + cols*(r + 1)) % cols is column
    # c only as mathematical integers (the sum could wrap for a symbolic row count), which
    # the race check assumes of indices but did not apply to divisions
    @T.prim_func
    def scan(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, cols), dtype)
        B = T.match_buffer(b, (n, cols), dtype)
        for c in T.parallel(cols):
            B[c // cols, c % cols] = A[c // cols, c % cols]
            for r in range(n - 1):
                B[(c + (r + 1) * cols) // cols, (c + (r + 1) * cols) % cols] = (
                    B[(c + r * cols) // cols, (c + r * cols) % cols]
                    + A[(c + (r + 1) * cols) // cols, (c + (r + 1) * cols) % cols])

    a = np.arange(7 * cols, dtype=dtype).reshape(7, cols) - 5
    b = np.zeros_like(a)
    tvmscript.build(scan, target=target)(a, b)
    np.testing.assert_array_equal(b, np.cumsum(a, axis=0))


@pytest.mark.parametrize("target", _TARGETS)
def test_parallel_row_scan_over_int64_rows(target: str) -> None:
    # the same scan along the columns, rows in parallel over an int64 extent: the row is
    # (v*4 + k) // 4 with k < 4 for the stores and v*4 // 4 for the first one
    @T.prim_func
    def scan(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for v in T.parallel(n):
            B[v * T.int64(4) // T.int64(4), v * T.int64(4) % T.int64(4)] = A[
                v * T.int64(4) // T.int64(4), v * T.int64(4) % T.int64(4)]
            for k in range(3):
                B[(v * T.int64(4) + T.Cast("int64", k + 1)) // T.int64(4),
                  (v * T.int64(4) + T.Cast("int64", k + 1)) % T.int64(4)] = B[
                    (v * T.int64(4) + T.Cast("int64", k)) // T.int64(4),
                    (v * T.int64(4) + T.Cast("int64", k)) % T.int64(4)] * A[
                    (v * T.int64(4) + T.Cast("int64", k + 1)) // T.int64(4),
                    (v * T.int64(4) + T.Cast("int64", k + 1)) % T.int64(4)]

    a = np.linspace(0.5, 2.0, 20, dtype="float32").reshape(5, 4)
    b = np.zeros_like(a)
    tvmscript.build(scan, target=target)(a, b)
    np.testing.assert_allclose(b, np.cumprod(a, axis=1), rtol=1e-6)


def test_a_division_spanning_blocks_still_refused() -> None:
    # (c + r) % 2 with r over two values is not column c: iteration 0 at r = 1 and
    # iteration 1 at r = 0 both write A[0, 1]
    @T.prim_func
    def mixed(A: T.Buffer((8, 2), "int32")):
        for c in T.parallel(2):
            for r in range(2):
                A[0, (c + r) % 2] = c

    with pytest.raises(tvmscript.DiagnosticError, match="parallel loop over 'c'"):
        tvmscript.build(mixed, target="llvm -mcpu=znver3")


@T.prim_func
def _scan_last_axis(a: T.handle, b: T.handle):
    # rows in parallel, the flat offset v*n + k split by a symbolic row length n
    n = T.int64()
    A = T.match_buffer(a, (3, n), "int32")
    B = T.match_buffer(b, (3, n), "int32")
    for v in T.parallel(3):
        B[T.Cast("int64", v) * n // n, T.Cast("int64", v) * n % n] = A[
            T.Cast("int64", v) * n // n, T.Cast("int64", v) * n % n]
        for k in range(n - T.int64(1)):
            B[(T.Cast("int64", v) * n + (k + T.int64(1))) // n,
              (T.Cast("int64", v) * n + (k + T.int64(1))) % n] = B[
                (T.Cast("int64", v) * n + k) // n, (T.Cast("int64", v) * n + k) % n] + A[
                (T.Cast("int64", v) * n + (k + T.int64(1))) // n,
                (T.Cast("int64", v) * n + (k + T.int64(1))) % n]


@pytest.mark.parametrize("target", _TARGETS)
def test_parallel_scan_along_a_symbolic_last_axis(target: str) -> None:
    a = (np.arange(18, dtype="int32").reshape(3, 6) * 7) % 11 - 5
    b = np.zeros_like(a)
    tvmscript.build(_scan_last_axis, target=target)(a, b)
    np.testing.assert_array_equal(b, np.cumsum(a, axis=1))


def test_a_symbolic_division_whose_remainder_may_reach_the_divisor_is_refused() -> None:
    # k runs to n inclusive: (v*n + n) // n is row v + 1, which iteration v + 1 writes too
    @T.prim_func
    def spill(a: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (4, n), "int32")
        for v in T.parallel(3):
            for k in range(n + T.int64(1)):
                A[(T.Cast("int64", v) * n + k) // n, (T.Cast("int64", v) * n + k) % n] = v

    with pytest.raises(tvmscript.DiagnosticError, match="parallel loop over 'v'"):
        tvmscript.build(spill, target="llvm -mcpu=znver3")
