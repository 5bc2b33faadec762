"""tensorize and the TensorIntrin registry on this project's own kernels: a packed
matmul tensorized with a 16x4 multiply-accumulate intrinsic written with vectorized loops,
a row-dot kernel with a 4-wide dot product written with an LLVM vector reduction, a batch
dimension in front of the intrinsic's buffers, the block form, the trace, and the
refusals (a different extent, dtype, body or name)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from extra_checks import NATIVE, assert_native_same
from sched_checks import assert_same_results, assert_structure, scheduled
from tensorize_kernels import dot4_desc, dot4_extern_impl, dot4_impl, packed_matmul, row_dots
from test_trace_kinds import _replays

import tvmscript
from irbuilder.ir import assert_structural_equal, expr_text
from tvmscript import tir as T


@T.prim_func
def packed_matmul_tensorized(X: T.Buffer((6, 32), "float32"),
                             W: T.Buffer((32, 48), "float32"),
                             Y: T.Buffer((6, 48), "float32")):
    for m, n_0, k_0 in T.grid(6, 3, 8):
        with T.block("Y_o"):
            vm_o, vn_o, vk_o = T.axis.remap("SSR", [m, n_0, k_0])
            A = T.match_buffer(X[vm_o, vk_o * 4:vk_o * 4 + 4], (4,), offset_factor=1)
            B = T.match_buffer(W[vk_o * 4:vk_o * 4 + 4, vn_o * 16:vn_o * 16 + 16], (4, 16),
                               offset_factor=1)
            C = T.match_buffer(Y[vm_o, vn_o * 16:vn_o * 16 + 16], (16,), offset_factor=1)
            with T.init():
                for n_1 in range(16):
                    with T.block("Y_init"):
                        vn_i_init = T.axis.spatial(16, n_1)
                        Y[vm_o, vn_o * 16 + vn_i_init] = T.float32(0)
            for k in range(4):
                for i in T.vectorized(16):
                    C[i] = C[i] + A[k] * B[k, i]


def _tile_for_mac(sch: T.Schedule) -> T.LoopRV:
    m, n, k = sch.get_loops("Y")
    n_0, n_1 = sch.split(n, [None, 16])
    k_0, k_1 = sch.split(k, [None, 4])
    sch.reorder(m, n_0, k_0, n_1, k_1)
    return n_1


def test_a_packed_matmul_with_a_vectorized_16x4_intrinsic():
    sch = T.Schedule(packed_matmul, debug_mask="all")  # each step checked by running
    sch.tensorize(_tile_for_mac(sch), "test_mac16x4")
    assert_structure(sch, packed_matmul_tensorized)
    assert_same_results(packed_matmul, sch)
    # printed, parsed back: the same function
    text = scheduled(sch).script()
    assert_structural_equal(tvmscript.from_source(text), scheduled(sch))
    # compiled for a pinned target against numpy
    x = np.random.default_rng(1).standard_normal((6, 32)).astype("float32")
    w = np.random.default_rng(2).standard_normal((32, 48)).astype("float32")
    y = np.full((6, 48), 7.0, "float32")
    tvmscript.build(scheduled(sch), target=NATIVE)(x, w, y)
    np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)
    assert sch.trace.as_python()[-1] == (
        'sch.tensorize(block_or_loop=l5, tensor_intrin="test_mac16x4", preserve_unit_iters=True)'
    )
    _replays(packed_matmul, sch)


def test_the_intrinsic_object_and_a_decomposed_reduction():
    sch = T.Schedule(packed_matmul, debug_mask="all")
    n_1 = _tile_for_mac(sch)
    k_0 = sch.get_loops("Y")[2]
    sch.decompose_reduction(sch.get_block("Y"), k_0)
    sch.tensorize(n_1, T.TensorIntrin.get("test_mac16x4"))
    # recorded by name, so the trace replays
    assert 'tensor_intrin="test_mac16x4"' in sch.trace.as_python()[-1]
    # decompose_reduction renamed the update block (TVM's names)
    block = sch.get(sch.get_block("Y_update_o"))
    assert block.init is None and [m.buffer.name for m in block.match_buffers] == ["A", "B", "C"]
    assert_native_same(packed_matmul, sch)
    _replays(packed_matmul, sch)


def test_a_dot_product_under_leading_axes_from_the_block_form():
    sch = T.Schedule(row_dots, debug_mask="all")
    _, _, k = sch.get_loops("R")
    _, k_1 = sch.split(k, [None, 4])
    outer = sch.blockize(k_1)
    sch.tensorize(outer, "test_dot4")
    block = sch.get(outer)
    assert block.name_hint == "R_o" and block.annotations["intrin"] == "dot4"
    # each view: one element on the axes the intrinsic's buffer does not have
    views = {m.buffer.name: m.source for m in block.match_buffers}
    shown = {
        n: [(expr_text(r.min), expr_text(r.extent)) for r in s.region] for n, s in views.items()
    }
    assert shown["A"] == [("vb_o", "1"), ("vr_o", "1"), ("(vk_o * 4)", "4")]
    assert shown["C"] == [("vb_o", "1"), ("vr_o", "1")]
    assert_native_same(row_dots, sch)
    text = scheduled(sch).script()
    assert_structural_equal(tvmscript.from_source(text), scheduled(sch))
    _replays(row_dots, sch)


def test_an_extern_implementation_is_applied_and_fails_to_build_clearly():
    sch = T.Schedule(row_dots, debug_mask="all")  # the interpreter cannot run it: unchecked
    _, _, k = sch.get_loops("R")
    _, k_1 = sch.split(k, [None, 4])
    sch.tensorize(k_1, "test_dot4_extern")
    with pytest.raises(Exception, match=r"unresolved external symbol.*tvms_test_dot4"):
        tvmscript.build(scheduled(sch), target=NATIVE)


@T.prim_func
def wide_row_dots(P: T.Buffer((T.int64(4), T.int64(8)), "float32"),
                  Q: T.Buffer((T.int64(4), T.int64(8)), "float32"),
                  R: T.Buffer((T.int64(4),), "float32")):
    for r, k in T.grid(T.int64(4), T.int64(8)):
        with T.block("R"):
            vr, vk = T.axis.remap("SR", [r, k])
            with T.init():
                R[vr] = T.float32(0)
            R[vr] = R[vr] + P[vr, vk] * Q[vr, vk]


def test_int64_indices_match_an_int32_intrinsic():
    sch = T.Schedule(wide_row_dots, debug_mask="all")
    _, k = sch.get_loops("R")
    _, k_1 = sch.split(k, [None, 4])
    sch.tensorize(k_1, "test_dot4")
    block = sch.get(sch.get_block("R_o"))
    # the views are placed in the block's index type
    assert {str(r.min.dtype) for m in block.match_buffers for r in m.source.region} == {"int64"}
    assert {str(m.buffer.elem_offset.dtype) for m in block.match_buffers} == {"int64"}
    assert_native_same(wide_row_dots, sch)
    text = scheduled(sch).script()
    assert_structural_equal(tvmscript.from_source(text), scheduled(sch))


@T.prim_func
def copy4_desc(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    with T.block("root"):
        for i in range(4):
            with T.block("copy"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi]


@T.prim_func
def copy4_memcpy(a: T.handle, b: T.handle):
    # pointers passed on: the offsets are variables, bound to where each view starts
    a_off = T.int32()
    b_off = T.int32()
    A = T.match_buffer(a, (4,), "float32", elem_offset=a_off)
    B = T.match_buffer(b, (4,), "float32", elem_offset=b_off)
    with T.block("root"):
        T.evaluate(T.call_extern("handle", "memcpy", B.access_ptr("w"), A.access_ptr("r"), 16))


@T.prim_func
def tile_copy(A: T.Buffer((6, 8), "float32"), B: T.Buffer((6, 8), "float32")):
    for i, j in T.grid(6, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]


def test_an_extern_implementation_given_pointers_at_the_views_offsets():
    T.TensorIntrin.register("test_copy4_memcpy", copy4_desc, copy4_memcpy, override=True)
    sch = T.Schedule(tile_copy, debug_mask="all")
    _, j = sch.get_loops("B")
    _, j_1 = sch.split(j, [None, 4])
    sch.tensorize(j_1, "test_copy4_memcpy")
    block = sch.get(sch.get_block("B_o"))
    offsets = [m.buffer.elem_offset for m in block.match_buffers]
    assert [o.name for o in offsets] == ["a_off", "b_off"]
    assert "tvm_access_ptr(T.type_annotation(\"float32\"), A_1.data, a_off, 4, 1)" in (
        scheduled(sch).script()
    )
    a = np.random.default_rng(3).standard_normal((6, 8)).astype("float32")
    b = np.zeros((6, 8), "float32")
    tvmscript.build(scheduled(sch), target=NATIVE)(a, b)
    np.testing.assert_array_equal(b, a)


@T.prim_func
def copy4_memcpy_constant_offsets(a: T.handle, b: T.handle):
    # offset_factor alone: the parser gives these buffers the constant offset 0, so the
    # pointers access_ptr computes would ignore where each tile starts
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    with T.block("root"):
        T.evaluate(T.call_extern("handle", "memcpy", B.access_ptr("w"), A.access_ptr("r"), 16))


def test_pointers_computed_with_a_constant_offset_are_refused_not_silently_wrong():
    T.TensorIntrin.register(
        "test_copy4_memcpy_const", copy4_desc, copy4_memcpy_constant_offsets, override=True
    )
    sch = T.Schedule(tile_copy, debug_mask="all")
    _, j = sch.get_loops("B")
    _, j_1 = sch.split(j, [None, 4])
    with pytest.raises(
        T.ScheduleError,
        match=r"passes the pointer of its buffer 'A' on, computed with the constant elem_offset "
        r"0, but the region of 'A' it stands for starts at a position known only at run time",
    ):
        sch.tensorize(j_1, "test_copy4_memcpy_const")


# -- refusals ---------------------------------------------------------------------------


def test_an_extent_other_than_the_intrinsic_s():
    sch = T.Schedule(row_dots, debug_mask="all")
    _, _, k = sch.get_loops("R")
    _, k_1 = sch.split(k, [None, 6])
    with pytest.raises(
        T.ScheduleError,
        match=r"tensorize: the subtree of loop k_1 does not match the description of tensor "
        r"intrinsic 'test_dot4': loop k_1 has extent 6 where the description's loop k has 4",
    ):
        sch.tensorize(k_1, "test_dot4")
    # refused as a whole: the split stands, no block was made
    assert [sch.get(lp).extent.value for lp in sch.get_loops("R")] == [3, 5, 2, 6]
    with pytest.raises(T.ScheduleError, match="no block named 'R_o'"):
        sch.get_block("R_o")


@T.prim_func
def dot4_doubled_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    C = T.match_buffer(c, (), "float32", offset_factor=1)
    with T.block("root"):
        for k in range(4):
            C[()] = C[()] + A[k] * B[k] * T.float32(2)


def test_an_implementation_computing_something_else_is_refused_under_debug_mask():
    T.TensorIntrin.register("test_dot4_doubled", dot4_desc, dot4_doubled_impl, override=True)
    sch = T.Schedule(row_dots, debug_mask="all")
    _, _, k = sch.get_loops("R")
    _, k_1 = sch.split(k, [None, 4])
    with pytest.raises(
        T.ScheduleError,
        match=re.escape(
            "the result changes: the implementation of the tensor intrinsic does not compute "
            "what its description does, and was not applied (buffer R differs"
        ),
    ):
        sch.tensorize(k_1, "test_dot4_doubled")
    assert [sch.get(lp).extent.value for lp in sch.get_loops("R")] == [3, 5, 3, 4]
    # without the check it is applied, as in TVM (the intrinsic is the user's promise)
    unchecked = T.Schedule(row_dots)
    _, _, k = unchecked.get_loops("R")
    _, k_1 = unchecked.split(k, [None, 4])
    unchecked.tensorize(k_1, "test_dot4_doubled")
    assert unchecked.get(unchecked.get_block("R_o")).match_buffers


@T.prim_func
def int_row_dots(P: T.Buffer((5, 8), "int32"), Q: T.Buffer((5, 8), "int32"),
                 R: T.Buffer((5,), "int32")):
    for r, k in T.grid(5, 8):
        with T.block("R"):
            vr, vk = T.axis.remap("SR", [r, k])
            with T.init():
                R[vr] = 0
            R[vr] = R[vr] + P[vr, vk] * Q[vr, vk]


@T.prim_func
def shifted_row_dots(P: T.Buffer((5, 8), "float32"), Q: T.Buffer((5, 8), "float32"),
                     R: T.Buffer((5,), "float32")):
    for r, k in T.grid(5, 8):
        with T.block("R"):
            vr, vk = T.axis.remap("SR", [r, k])
            with T.init():
                R[vr] = T.float32(0)
            R[vr] = R[vr] + P[vr, vk] - Q[vr, vk]


@T.prim_func
def reversed_row_dots(P: T.Buffer((5, 8), "float32"), Q: T.Buffer((5, 8), "float32"),
                      R: T.Buffer((5,), "float32")):
    for r, k in T.grid(5, 8):
        with T.block("R"):
            vr, vk = T.axis.remap("SR", [r, k])
            with T.init():
                R[vr] = T.float32(0)
            R[vr] = R[vr] + P[vr, vk] * Q[vr, 7 - vk]


@pytest.mark.parametrize(
    "func, message",
    [
        (int_row_dots, "buffer R holds int32 where the description's C holds float32"),
        (shifted_row_dots, re.escape(
            "expression ((R[vr_o] + P[vr_o, ((vk_o * 4) + vk_i)]) - Q[vr_o, ((vk_o * 4) + "
            "vk_i)]) does not match the description's (C[] + (A[vk] * B[vk]))")),
        (reversed_row_dots, re.escape(
            "the access Q[vr_o, (7 - ((vk_o * 4) + vk_i))] does not match the description's "
            "index vk on axis 1 (relative to the region's start (4 - (vk_o * 4)))")),
    ],
    ids=["dtype", "body", "index"],
)
def test_a_body_other_than_the_description(func, message):
    sch = T.Schedule(func, debug_mask="all")
    _, k = sch.get_loops("R")
    _, k_1 = sch.split(k, [None, 4])
    with pytest.raises(T.ScheduleError, match=message) as info:
        sch.tensorize(k_1, "test_dot4")
    assert "does not match the description of tensor intrinsic 'test_dot4'" in str(info.value)
    assert 'with T.block("R_o")' in str(info.value)  # the block tried, shown
    assert sch.get(sch.get_loops("R")[-1]).extent.value == 4  # nothing applied


def test_a_name_not_registered():
    sch = T.Schedule(row_dots)
    with pytest.raises(T.ScheduleError, match="TensorIntrin 'no_such_intrin' is not registered"):
        sch.tensorize(sch.get_loops("R")[-1], "no_such_intrin")
    assert len(sch.trace.insts) == 2  # get_block and get_loops only
    unregistered = T.TensorIntrin(dot4_desc, dot4_impl)
    with pytest.raises(T.ScheduleError, match="the TensorIntrin is not registered"):
        sch.tensorize(sch.get_loops("R")[-1], unregistered)


def test_a_loop_whose_subtree_cannot_be_blockized():
    sch = T.Schedule(row_dots)
    _, _, k = sch.get_loops("R")
    _, k_1 = sch.split(k, [None, 5])  # 12 = 3 * 5 - 3: a predicate
    with pytest.raises(T.ScheduleError, match="tensorize: the loop's subtree cannot be blockized"):
        sch.tensorize(k_1, "test_dot4")


# -- the registry -----------------------------------------------------------------------


def test_register_and_get():
    T.TensorIntrin.register("test_registry_once", dot4_desc, dot4_impl)
    with pytest.raises(ValueError, match="TensorIntrin 'test_registry_once' has already been"):
        T.TensorIntrin.register("test_registry_once", dot4_desc, dot4_impl)
    T.TensorIntrin.register("test_registry_once", dot4_desc, dot4_extern_impl, override=True)
    assert T.TensorIntrin.get("test_registry_once").impl is dot4_extern_impl
    assert T.TensorIntrin.get("test_registry_missing", allow_missing=True) is None
    with pytest.raises(ValueError, match="TensorIntrin 'test_registry_missing' is not registered"):
        T.TensorIntrin.get("test_registry_missing")
    # the TVM spelling of the import
    from tvmscript.tir import TensorIntrin

    assert TensorIntrin is T.TensorIntrin


@T.prim_func
def two_params(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), "float32")
    B = T.match_buffer(b, (4,), "float32")
    for i in range(4):
        with T.block("copy"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]


@T.prim_func
def dot8_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (8,), "float32")
    B = T.match_buffer(b, (8,), "float32")
    C = T.match_buffer(c, (), "float32")
    for k in range(8):
        C[()] = C[()] + A[k] * B[k]


@T.prim_func
def dot4_half_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float16")
    B = T.match_buffer(b, (4,), "float32")
    C = T.match_buffer(c, (), "float32")
    for k in range(4):
        C[()] = C[()] + T.Cast("float32", A[k]) * B[k]


@T.prim_func
def scalar_param(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (4,), "float32")
    B = T.match_buffer(b, (4,), "float32")
    B[0] = A[0] + T.Cast("float32", n)


@pytest.mark.parametrize(
    "desc, impl, message",
    [
        (dot4_desc, two_params, "The number of parameters of the description and the "
         "implementation of the tensor intrinsic doesn't match: 3 vs 2"),
        (dot4_desc, dot8_impl, r"parameter 0 has shape \(4,\) \(A\) in the description but "
         r"\(8,\) \(A\) in the implementation"),
        (dot4_desc, dot4_half_impl, "parameter 0 is a float32 buffer .A. in the description "
         "but a float16 buffer .A. in the implementation"),
        (dot4_desc, scalar_param, "Parameters of the implementation of the tensor intrinsic "
         "should be handle only: parameter 'n' is not a handle"),
    ],
    ids=["count", "shape", "dtype", "scalar"],
)
def test_a_description_and_implementation_that_do_not_pair(desc, impl, message):
    with pytest.raises(ValueError, match=message):
        T.TensorIntrin.register("test_registry_bad", desc, impl)
    assert T.TensorIntrin.get("test_registry_bad", allow_missing=True) is None
