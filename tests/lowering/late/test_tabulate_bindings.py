"""``tabulate_bindings``: costly bindings of an inner loop's variable alone are computed once
into a table the nest reads, bit-identically; cheap, memory-reading, outer-dependent
bindings and nests outside the limits are left alone."""

from __future__ import annotations

from late_kit import AVX2, assert_same_numbers, before_late, run_pass, runs_avx2

from irbuilder.ir import PrimFunc, structural_equal
from lowering.late.tabulate import MAX_TABLE
from tvmscript import tir as T


@T.prim_func
def resize(A: T.Buffer((3, 16, 16), "float32"), O: T.Buffer((3, 32, 32), "float32")):
    for c, h, w in T.grid(3, 32, 32):
        sy = T.max((T.Cast("float32", h) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5),
                   T.float32(0))
        sx = T.max((T.Cast("float32", w) + T.float32(0.5)) * T.float32(0.5) - T.float32(0.5),
                   T.float32(0))
        y0 = T.Cast("int32", T.floor(sy))
        x0 = T.Cast("int32", T.floor(sx))
        y1 = T.min(y0 + 1, 15)
        x1 = T.min(x0 + 1, 15)
        dy = sy - T.floor(sy)
        dx = sx - T.floor(sx)
        O[c, h, w] = ((A[c, y0, x0] * (T.float32(1) - dx) + A[c, y0, x1] * dx)
                      * (T.float32(1) - dy)
                      + (A[c, y1, x0] * (T.float32(1) - dx) + A[c, y1, x1] * dx) * dy)


@T.prim_func
def shifted_columns(A: T.Buffer((8, 40), "int32"), O: T.Buffer((8, 24), "int32")):
    for h in range(8):
        for w in range(4, 28):  # starting at 4: the table is indexed w - 4
            q = T.floordiv(w * 7 + 3, 5)
            O[h, w - 4] = A[h, q] + q


@T.prim_func
def parallel_rows(A: T.Buffer((64, 300), "float32"), O: T.Buffer((64, 600), "float32")):
    for h in T.parallel(64):  # the threads share the tables, filled before the loop
        for w in range(600):
            x = T.Cast("int32", T.floor(T.Cast("float32", w) * T.float32(0.5)))
            f = T.Cast("float32", w) * T.float32(0.5) - T.floor(T.Cast("float32", w)
                                                                * T.float32(0.5))
            O[h, w] = A[h, x] * (T.float32(1) - f) + A[h, T.min(x + 1, 299)] * f


def _serial(func: PrimFunc) -> PrimFunc:
    return before_late(func, AVX2, config={"parallelize_loops": {"enabled": False}})


def test_a_resizes_column_indices_and_weights_become_tables() -> None:
    after = run_pass("tabulate_bindings", _serial(resize))
    text = after.script()
    for table in ("x0_table", "x1_table", "dx_table"):
        assert f"{table} = T.decl_buffer((32,)" in text
    assert "sx_table" not in text  # used only by the tabulated bindings
    assert "y0_table" not in text  # a function of the row: LLVM hoists it
    assert "x0: T.int32 = x0_table[w]" in text  # the names of the sibling nest again
    shifted = run_pass("tabulate_bindings", _serial(shifted_columns)).script()
    assert "q: T.int32 = q_table[w - 4]" in shifted


@runs_avx2
def test_tables_give_the_same_bits() -> None:
    for func in (resize, shifted_columns, parallel_rows):
        before = before_late(func, AVX2) if func is parallel_rows else _serial(func)
        after = run_pass("tabulate_bindings", before)
        assert after is not before
        assert_same_numbers(func, before, after)


def test_cheap_memory_reading_and_oversized_bindings_stay() -> None:
    @T.prim_func
    def cheap(A: T.Buffer((8, 64), "int32"), O: T.Buffer((8, 64), "int32")):
        for h, w in T.grid(8, 64):
            k = w * 2 + 1  # an add and a multiply: cheaper than a load
            O[h, w] = A[h, k // 2] + k

    @T.prim_func
    def reads_memory(A: T.Buffer((8, 64), "int32"), I: T.Buffer((64,), "int32"),
                     O: T.Buffer((8, 64), "int32")):
        for h, w in T.grid(8, 64):
            k = T.floordiv(I[w], 3)  # a load: the nest could change I
            O[h, w] = A[h, T.floormod(k, 64)]

    @T.prim_func
    def one_row(A: T.Buffer((1, 64), "int32"), O: T.Buffer((1, 64), "int32")):
        for h, w in T.grid(1, 64):
            k = T.floordiv(w * 5, 3)
            O[h, w] = A[h, T.floormod(k, 64)]

    @T.prim_func
    def wide(A: T.Buffer((4, 4096), "int32"), O: T.Buffer((4, 4096), "int32")):
        for h, w in T.grid(4, 4096):
            k = T.floordiv(w * 5, 3)
            O[h, w] = A[h, T.floormod(k, 4096)]

    assert MAX_TABLE < 4096
    for func in (cheap, reads_memory, one_row, wide):
        before = _serial(func)
        after = run_pass("tabulate_bindings", before)
        assert structural_equal(after, before), func


def test_a_parallel_loops_threads_share_tables_filled_before_it() -> None:
    after = run_pass("tabulate_bindings", before_late(parallel_rows, AVX2))
    text = after.script()
    assert text.index("x_table[w] = x") < text.index("for h in T.parallel(64")
    assert "f: T.float32 = f_table[w]" in text


@T.prim_func
def nearest_columns(A: T.Buffer((4, 14, 14), "float32"), O: T.Buffer((4, 20, 20), "float32")):
    # TOPI's nearest resize: the source column computed inside the load's index
    for c, h, w in T.grid(4, 20, 20):
        O[c, h, w] = A[c, T.max(T.min(T.Cast("int32", T.floor(
            T.float32(0.7) * T.Cast("float32", h) + T.float32(1e-05))), 13), 0),
            T.max(T.min(T.Cast("int32", T.floor(
                T.float32(0.7) * T.Cast("float32", w) + T.float32(1e-05))), 13), 0)] \
            + A[c, 0, w // 2]


def test_costly_column_values_inside_indices_become_tables() -> None:
    """The largest expression of the inner variable alone with a call or a conversion is
    bound and tabulated (once however often it appears); the row's (LLVM hoists it) and a
    division by a constant (cheap, and readable in an index) stay."""
    after = run_pass("tabulate_bindings", _serial(nearest_columns))
    text = after.script()
    assert "w_col0_table = T.decl_buffer((20,)" in text
    assert "w_col0: T.int32 = w_col0_table[w]" in text
    assert text.count("T.floor(") == 2  # the table loop's column, the row's in the nest
    assert "w_col1" not in text and "w // 2" in text  # no call, no conversion


@runs_avx2
def test_column_value_tables_give_the_same_bits() -> None:
    before = _serial(nearest_columns)
    after = run_pass("tabulate_bindings", before)
    assert after is not before
    assert_same_numbers(nearest_columns, before, after)


def test_a_guarded_division_and_a_builtin_stay_in_place() -> None:
    """An expression that may trap (a division by the column) would run for every column
    in the table, also those the body's condition skips; a builtin call has an effect."""

    @T.prim_func
    def guarded(A: T.Buffer((8, 64), "int32"), O: T.Buffer((8, 64), "float32")):
        for h, w in T.grid(8, 64):
            if w > 0:
                O[h, w] = T.Cast("float32", T.floordiv(A[h, 0], w) + T.Cast("int32", T.floor(
                    T.Cast("float32", 100 // w))))

    before = _serial(guarded)
    after = run_pass("tabulate_bindings", before)
    assert structural_equal(after, before)
