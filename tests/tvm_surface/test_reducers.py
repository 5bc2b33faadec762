"""T.comm_reducer: a value that prints back as TVM writes it, compares structurally, feeds
T.reduce (single-value reducers with a Reduce kind) and the reduce_scope attribute of
T.tvm_thread_allreduce."""

from __future__ import annotations

import numpy as np
import pytest
from surface_kit import round_trip

from irbuilder.ir import CommReducer, ReduceKind, structural_equal
from lowering.cpu.support import UnsupportedConstructError
from tvmscript import build
from tvmscript import tir as T


def test_comm_reducer_builds_vars_from_the_lambda_and_knows_its_kind() -> None:
    add = T.comm_reducer(lambda x, y: x + y, [T.float32(0)])
    assert isinstance(add, CommReducer) and add.reduce_kind() is ReduceKind.SUM
    assert [v.name for v in (*add.lhs, *add.rhs)] == ["x", "y"]
    assert T.comm_reducer(lambda a, b: T.max(a, b), [T.min_value("int32")]).reduce_kind() is (
        ReduceKind.MAX
    )
    assert T.comm_reducer(lambda x, y: x + y, [T.float32(1)]).reduce_kind() is None
    argmax = T.comm_reducer(
        lambda i0, v0, i1, v1: (T.Select(v0 >= v1, i0, i1), T.max(v0, v1)),
        [-1, T.min_value("float32")],
    )
    assert len(argmax.result) == 2 and argmax.reduce_kind() is None
    with pytest.raises(TypeError, match="two per value"):
        T.comm_reducer(lambda x: x, [T.float32(0)])


def test_allreduce_with_a_reducer_builds_as_a_serial_reduction() -> None:
    func = round_trip("""
        @T.prim_func
        def allreduce(A: T.Buffer((128,), "float32"), B: T.Buffer((1,), "float32")):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("reduce"):
                    T.reads(A[0:128])
                    T.writes(B[0])
                    red_buf = T.alloc_buffer((1,), scope="local")
                    T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                           T.reinterpret("handle", T.uint64(0)))
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), red_buf[0], tx))
                    B[0] = red_buf[0]
        """)
    assert "T.comm_reducer(lambda x, y: x + y, [T.float32(0)])" in func.script()
    a = np.random.default_rng(0).random(128).astype("float32")
    for target in ("llvm", "interp"):
        b = np.zeros(1, "float32")
        build(func, target=target)(a, b)
        np.testing.assert_allclose(b[0], a.sum(), rtol=1e-5)


def test_argmax_with_a_two_value_reducer() -> None:
    func = round_trip("""
        @T.prim_func
        def argmax(A: T.Buffer((64,), "float32"), Idx: T.Buffer((1,), "int32"), Val: T.Buffer((1,), "float32")):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("argmax"):
                    T.reads(A[0:64])
                    T.writes(Idx[0], Val[0])
                    red_idx = T.alloc_buffer((1,), "int32", scope="local")
                    red_val = T.alloc_buffer((1,), "float32", scope="local")
                    T.attr(T.comm_reducer(lambda i0, v0, i1, v1: (T.Select(v0 >= v1, i0, i1),
                                                                  T.Select(v0 >= v1, v0, v1)),
                                          [-1, T.min_value("float32")]),
                           "reduce_scope", T.reinterpret("handle", T.uint64(0)))
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(2), tx, A[tx], T.bool(True),
                                                      red_idx[0], red_val[0], tx))
                    Idx[0] = red_idx[0]
                    Val[0] = red_val[0]
        """)
    a = np.random.default_rng(1).random(64).astype("float32")
    for target in ("llvm", "interp"):
        idx, val = np.zeros(1, "int32"), np.zeros(1, "float32")
        build(func, target=target)(a, idx, val)
        assert idx[0] == int(np.argmax(a)) and val[0] == a.max()


def test_allreduce_of_thread_local_values_is_refused() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("reduce"):
                    local = T.alloc_buffer((1,), scope="local")
                    red_buf = T.alloc_buffer((1,), scope="local")
                    local[0] = A[tx] * T.float32(2)
                    T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                           T.reinterpret("handle", T.uint64(0)))
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), local[0], T.bool(True), red_buf[0], tx))
                    B[0] = red_buf[0]
        """)
    with pytest.raises(UnsupportedConstructError, match=r":13:\d+: T\.tvm_thread_allreduce of values"):
        build(func)


def test_reduce_takes_tvm_comm_reducer_form() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
            k = T.int32()
            for i in range(4):
                B[i] = T.reduce(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), source=[A[i, k]],
                                init=[], axis=[T.iter_var(k, T.Range(0, 8), "CommReduce", "")],
                                condition=T.bool(True), value_index=0)
        """)
    plain = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
            k = T.int32()
            for i in range(4):
                B[i] = T.reduce("sum", A[i, k], axis=[T.iter_var(k, T.Range(0, 8), "CommReduce", "")])
        """)
    assert structural_equal(func, plain)
    a = np.arange(32, dtype="float32").reshape(4, 8)
    b = np.zeros(4, "float32")
    build(func, target="interp")(a, b)
    assert (b == a.sum(axis=1)).all()


def test_allreduce_values_read_through_block_iterators_and_lets_follow_the_thread() -> None:
    # TVM's LowerCrossThreadReduction writes this form: the value reads A[vi, vk] with vk a
    # block iterator bound to the thread var k (each serial "thread" summed A[vi, 0] before)
    func = round_trip("""
        @T.prim_func
        def rows(A: T.Buffer((4, 128), "float32"), B: T.Buffer((4,), "float32"),
                 C: T.Buffer((4,), "float32")):
            reduce_temp0 = T.alloc_buffer((1,), scope="local")
            reduce_temp1 = T.alloc_buffer((1,), scope="local")
            for i in range(4):
                for k in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("B_cross_thread"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(A[vi, vk])
                        T.writes(reduce_temp0[0])
                        T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                               T.reinterpret("handle", T.uint64(0)))
                        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[vi, vk], T.bool(True),
                                                          reduce_temp0[0], k))
                    with T.block("B_write_back"):
                        vi = T.axis.spatial(4, i)
                        T.where(k == 0)
                        B[vi] = reduce_temp0[0]
                    half: T.int32 = k // 2
                    T.attr(T.comm_reducer(lambda x, y: T.max(x, y), [T.float32(-1e30)]),
                           "reduce_scope", T.reinterpret("handle", T.uint64(0)))
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[i, half + 64], T.bool(True),
                                                      reduce_temp1[0], k))
                    C[i] = reduce_temp1[0]
        """)
    a = np.random.default_rng(1).random((4, 128)).astype("float32")
    for target in ("llvm -mcpu=znver3", "interp"):
        b, c = np.zeros(4, "float32"), np.zeros(4, "float32")
        build(func, target=target)(a, b, c)
        np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)
        np.testing.assert_array_equal(c, a[:, 64:].max(axis=1))
