"""TVM's statement forms and implicit conversions: `with T.Assert`, range(annotations=),
buffer_type="auto", T.grid with one extent, integer conditions, stores of another scalar type,
T.axis.remap over int64 loops, T.LetStmt forms."""

from __future__ import annotations

import numpy as np
import pytest
from surface_kit import round_trip, run_both

from irbuilder.ir import NE, AssertStmt, Cast, For, IfThenElse, PrimFunc
from irbuilder.ir.functor import post_order_visit
from tvmscript import build


def walk_stmts(body: object) -> list[object]:
    found: list[object] = []
    post_order_visit(body, found.append)  # type: ignore[arg-type]
    return found


def _nodes(func: PrimFunc, cls: type) -> list[object]:
    return [s for s in walk_stmts(func.body) if isinstance(s, cls)]


def test_assert_frame_form_checks_then_runs_its_body() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            with T.Assert(A[0] > T.float32(0), "ValueError: A[0] must be positive"):
                A[1] = A[0] * T.float32(2)
            T.Assert(A[2] >= T.float32(0), "A[2] must not be negative")
            A[3] = T.float32(7)
        """)
    assert len(_nodes(func, AssertStmt)) == 2
    (a,) = run_both(func, np.array([1, 0, 0, 0], "float32"))[:1]
    assert a.tolist() == [1, 2, 0, 7]
    kernel = build(func)
    with pytest.raises(ValueError, match="A\\[0\\] must be positive"):
        kernel(np.array([-1, 0, 0, 0], "float32"))


def test_range_with_annotations_is_a_serial_loop_carrying_them() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in range(2, 8, annotations={"pragma_unroll_explicit": 1}):
                A[i] = T.float32(1)
        """)
    (loop,) = _nodes(func, For)
    assert loop.annotations == {"pragma_unroll_explicit": 1}  # type: ignore[attr-defined]
    a = run_both(func, np.zeros(8, "float32"))[0]
    assert a.tolist() == [0, 0] + [1] * 6


def test_match_buffer_auto_and_single_extent_grid() -> None:
    func = round_trip("""
        @T.prim_func
        def f(a: T.handle):
            A = T.match_buffer(a, (8,), "float32", buffer_type="auto")
            for i in T.grid(8):
                A[i] = T.Cast("float32", i)
        """)
    a = run_both(func, np.zeros(8, "float32"))[0]
    assert a.tolist() == list(range(8))


def test_integer_conditions_compare_with_zero() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
            for i in range(8):
                if A[i] % 3:
                    B[i] = T.if_then_else(A[i] % 2, 10, 20)
                else:
                    B[i] = T.Select(A[i], 1, 2)
        """)
    conditions = [s.condition for s in _nodes(func, IfThenElse)]  # type: ignore[attr-defined]
    assert all(isinstance(c, NE) for c in conditions)
    a = np.arange(8, dtype="int32")
    b = run_both(func, a, np.zeros(8, "int32"))[1]
    assert b.tolist() == [(10 if x % 2 else 20) if x % 3 else (1 if x else 2) for x in a]


def test_stores_of_another_scalar_type_are_cast_like_tvm() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "int32"), C: T.Buffer((6,), "float64")):
            for i in range(6):
                C[i] = A[i]
                A[i] = B[i]
                B[i] = C[i] * T.float64(2.5)
                if i == 5:
                    B[i] = 7.9
        """)
    assert any(isinstance(getattr(s, "value", None), Cast) for s in walk_stmts(func.body))
    a = np.array([0.5, -1.25, 2, 3, 4, 5], "float32")
    b = np.array([1, -2, 3, -4, 5, 6], "int32")
    out_a, out_b, out_c, _ = run_both(func, a, b, np.zeros(6, "float64"))
    assert out_c.tolist() == a.astype("float64").tolist()
    assert out_a.tolist() == b.astype("float32").tolist()
    want_b = (a.astype("float64") * 2.5).astype("int32")  # truncation toward zero, as numpy
    want_b[5] = 7
    assert out_b.tolist() == want_b.tolist()


def test_remap_over_int64_loops_and_let_forms() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(T.int64(4), T.int64(4)):
                with T.block("b"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = T.Cast("float32", vi * T.int64(4) + vj)
            x = T.int32()
            with T.LetStmt(1, var=x):
                A[x, 0] = T.float32(-1)
            with T.LetStmt(2) as y:
                A[y, 0] = T.float32(-2)
            z: T.int32 = 3
            A[z, 0] = T.float32(-3)
        """)
    a = run_both(func, np.zeros((4, 4), "float32"))[0]
    want = np.arange(16, dtype="float32").reshape(4, 4)
    want[1:, 0] = [-1, -2, -3]
    assert (a == want).all()
