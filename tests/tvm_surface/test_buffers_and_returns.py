"""Buffer methods TVM scripts call (vload, vstore, access_ptr, offset_of) and scalar returns
(T.ret and `return <scalar>`), whose value reaches the Python caller."""

from __future__ import annotations

import numpy as np
import pytest
from surface_kit import round_trip

from irbuilder import IRBuilder
from irbuilder.ir import Ramp
from lowering.cpu.support import UnsupportedConstructError
from tvmscript import DiagnosticError, build
from tvmscript import tir as T


def test_vload_vstore_access_ptr_and_offset_of() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((2, 8), "float32"), B: T.Buffer((8,), "float32")):
            T.evaluate(T.call_extern("handle", "memcpy", B.access_ptr("w", offset=2),
                                     A.access_ptr("r", offset=A.offset_of([1, 4])[0]), 16))
            for i in range(2):
                B.vstore([i * 4], B.vload([i * 4], "float32x4") + T.Broadcast(T.float32(1), 4))
        """)
    a = np.arange(16, dtype="float32").reshape(2, 8)
    for target in ("llvm", "interp"):
        b = np.zeros(8, "float32")
        build(func, target=target)(a, b)
        assert b.tolist() == [1, 1, 13, 14, 15, 16, 1, 1]


def test_buffer_methods_build_the_nodes_tvm_builds() -> None:
    buf = T.Buffer((4, 8), "float32")
    i = T.int32()
    load = buf.vload([i, 4], "float32x4")
    assert isinstance(load.indices[1], Ramp) and load.dtype == T.float32x4.dtype  # type: ignore[attr-defined]
    (offset,) = buf.offset_of([i, 3])
    assert str(offset) != "" and offset.dtype == i.dtype
    with pytest.raises(TypeError, match="vload"):
        buf.vload([0, 0], "int32x4")
    flat = buf.get_flattened_buffer()
    assert flat.ndim == 1 and flat.data is buf.data and flat.shape[0].value == 32  # type: ignore[attr-defined]


def test_return_scalar_reaches_the_caller() -> None:
    func = round_trip("""
        @T.prim_func
        def total(A: T.Buffer((8,), "float32")) -> T.float32:
            s = T.alloc_buffer((1,), "float32")
            s[0] = T.float32(0)
            for i in range(8):
                s[0] = s[0] + A[i]
            return s[0]
        """)
    a = np.arange(8, dtype="float32")
    assert build(func)(a) == build(func, target="interp")(a) == 28.0
    assert isinstance(build(func)(a), float)


def test_t_ret_in_branches_and_its_type() -> None:
    func = round_trip("""
        @T.prim_func
        def g(n: T.int32) -> T.int32:
            if n > 3:
                T.ret(n * 2)
            else:
                return n - 1
        """)
    for n in (-5, 2, 4, 100):
        assert build(func)(n) == build(func, target="interp")(n) == (n * 2 if n > 3 else n - 1)


def test_early_return_skips_the_rest_natively_and_in_the_interpreter() -> None:
    func = round_trip("""
        @T.prim_func
        def has_zero(A: T.Buffer((4,), "int32")) -> T.bool:
            for i in range(4):
                if A[i] == 0:
                    T.ret(True)
            return False
        """)
    for target in ("llvm", "interp"):
        kernel = build(func, target=target)
        assert kernel(np.array([1, 0, 2, 3], "int32")) is True
        assert kernel(np.array([1, 5, 2, 3], "int32")) is False
    first_zero = round_trip("""
        @T.prim_func
        def first_zero(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")) -> T.int32:
            for i in range(8):
                if A[i] == 0:
                    T.ret(i)
                B[i] = A[i] * 2
            return -1
        """)
    for a, want, stored in (([3, 1, 0, 5, 0, 2, 2, 2], 2, 2), ([1, 2, 3, 4, 5, 6, 7, 8], -1, 8)):
        for target in ("llvm", "interp"):
            b = np.zeros(8, "int32")
            assert build(first_zero, target=target)(np.array(a, "int32"), b) == want
            assert b[:stored].tolist() == [2 * x for x in a[:stored]] and not b[stored:].any()


def test_return_inside_a_parallel_loop_is_refused() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "int32")) -> T.int32:
            for i in T.parallel(8):
                if A[i] == 0:
                    T.ret(i)
            return -1
        """)
    with pytest.raises(UnsupportedConstructError, match=r"T\.ret inside a parallel loop"):
        build(func)


@pytest.mark.parametrize("use", ['A[i] = T.Cast("int32", T.ret(i))', "A[T.ret(i)] = 1",
                                 "if T.ret(i) > 0:\n                    A[i] = 1"])
def test_ret_inside_an_expression_is_refused_at_its_statement(use: str) -> None:
    # It reached code generation as an unknown intrinsic once.
    func = round_trip(f"""
        @T.prim_func
        def f(A: T.Buffer((8,), "int32")) -> T.int32:
            for i in range(8):
                {use}
            return -1
        """)
    with pytest.raises(UnsupportedConstructError, match=r"T\.ret inside an expression") as info:
        build(func)
    assert ":7:9:" in str(info.value)  # the statement (round_trip adds two header lines)


def test_allocate_const_holds_numpy_data() -> None:
    data = np.arange(6, dtype="float32").reshape(2, 3) * 1.5
    values = ", ".join(repr(float(v)) for v in data.ravel())
    func = round_trip(f"""
        @T.prim_func
        def f(A: T.Buffer((2, 3), "float32")):
            K = T.allocate_const([{values}], "float32", [2, 3])
            Kb = T.decl_buffer((2, 3), "float32", data=K)
            for i, j in T.grid(2, 3):
                A[i, j] = A[i, j] + Kb[i, j]
        """)
    for target in ("llvm", "interp"):
        a = np.ones((2, 3), "float32")
        build(func, target=target)(a)
        assert (a == 1 + data).all()
    with IRBuilder(), T.prim_func(), pytest.raises(ValueError, match="at most 65536"):
        T.allocate_const(np.zeros(1 << 17), "float32", [1 << 17])
    with IRBuilder(), T.prim_func():
        with pytest.raises(TypeError, match="int8 constant from 1.5"):
            T.allocate_const([1.5, 2, 3], "int8", [3])
        with pytest.raises(ValueError, match="300 does not fit in int8"):
            T.allocate_const([300, 2, 3], "int8", [3])
    with pytest.raises(DiagnosticError, match=r"5 values for extents of 6 elements\n --> .*:6:"):
        round_trip("""
            @T.prim_func
            def g(A: T.Buffer((6,), "int32")):
                K = T.allocate_const([1, 2, 3, 4, 5], "int32", [6])
                A[0] = 0
            """)


def test_slice_with_a_step_is_a_strided_vector_load() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 8), "float32")):
            for i in range(4):
                B[i, 0:8] = A[i, 1:16:2]
        """)
    a = np.arange(64, dtype="float32").reshape(4, 16)
    for target in ("llvm", "interp"):
        b = np.zeros((4, 8), "float32")
        build(func, target=target)(a, b)
        assert (b == a[:, 1:16:2]).all()


def test_store_to_a_slice_with_a_step_is_a_strided_vector_store() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
            B[0:16:2] = A[1:16:2]
        """)
    a = np.arange(16, dtype="float32")
    for target in ("llvm", "interp"):
        b = np.zeros(16, "float32")
        build(func, target=target)(a, b)
        want = np.zeros(16, "float32")
        want[0:16:2] = a[1:16:2]
        assert (b == want).all()
