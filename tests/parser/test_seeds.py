# ruff: noqa: UP037, F821  (T.Buffer[shape, "dtype"] annotations are TVMScript, not type hints)
"""The TVMScript examples of the DeclBuffer RFC parse into the IR they describe."""

from __future__ import annotations

import lowering
from irbuilder.ir import Allocate, BufferLoad, DeclBuffer, Evaluate, For
from tvmscript import ir as I
from tvmscript import tir as T

from .registry import roundtrip


@roundtrip
@T.prim_func
def buffer_alias(A: T.Buffer[(16,), "float"]):
    A_vector = T.decl_buffer([4], "float32x4", data=A.data)
    T.evaluate(A_vector[0])  # read from buffer alias


def test_buffer_alias_is_an_explicit_decl_buffer() -> None:
    decl = buffer_alias.body
    assert isinstance(decl, DeclBuffer)
    (param_buffer,) = buffer_alias.buffer_map.values()
    assert decl.buffer.data is param_buffer.data
    assert str(decl.buffer.dtype) == "float32x4"
    assert isinstance(decl.body, Evaluate) and isinstance(decl.body.value, BufferLoad)
    assert decl.body.value.buffer is decl.buffer


def test_old_buffer_decl_name_is_the_same_statement() -> None:
    @T.prim_func
    def old(A: T.Buffer[(16,), "float"]):
        A_vector = T.buffer_decl([4], "float32x4", data=A.data)
        T.evaluate(A_vector[0])

    I.assert_structural_equal(old, buffer_alias)


def test_allocate_then_decl_buffer_equals_the_sugar() -> None:
    @T.prim_func
    def explicit(B: T.Buffer((16,), "float32")):
        A_data = T.allocate(shape=[16], dtype="float32")
        A = T.decl_buffer(shape=[16], dtype="float32", data=A_data)
        A[0] = B[0]

    @T.prim_func
    def sugar(B: T.Buffer((16,), "float32")):
        A = T.decl_buffer(shape=[16], dtype="float32")
        A[0] = B[0]

    I.assert_structural_equal(explicit, sugar)
    assert isinstance(sugar.body, Allocate) and isinstance(sugar.body.body, DeclBuffer)


@roundtrip
@T.prim_func
def elemwise_before(A: T.Buffer[(16, 16), "float32"], C: T.Buffer[(16, 16), "float32"]):
    for i, j in T.grid(16, 16):
        C[i, j] = A[i, j]


@roundtrip
@T.prim_func
def elemwise_after(A: T.Buffer[(16, 16), "float32"], C: T.Buffer[(16, 16), "float32"]):
    A_flat = T.decl_buffer((256,), "float32", data=A.data)
    C_flat = T.decl_buffer((256,), "float32", data=C.data)
    for i, j in T.grid(16, 16):
        C_flat[i * 16 + j] = A_flat[i * 16 + j]


def test_elemwise_after_flattening_shape() -> None:
    outer = elemwise_after.body
    assert isinstance(outer, DeclBuffer) and isinstance(outer.body, DeclBuffer)
    loop = outer.body.body
    assert isinstance(loop, For) and loop.body.body.buffer is outer.body.buffer
    # buffer_map keeps the logical shapes.
    shapes = [tuple(d.value for d in b.shape) for b in elemwise_after.buffer_map.values()]
    assert shapes == [(16, 16), (16, 16)]


def test_rfc_data_first_spelling() -> None:
    # The RFC writes T.decl_buffer(A.data, (256,), "float32").
    @T.prim_func
    def rfc(A: T.Buffer[(16, 16), "float32"], C: T.Buffer[(16, 16), "float32"]):
        A_flattened = T.decl_buffer(A.data, (256,), "float32")
        C_flattened = T.decl_buffer(C.data, (256,), "float32")
        for i, j in T.grid(16, 16):
            C_flattened[i * 16 + j] = A_flattened[i * 16 + j]

    I.assert_structural_equal(rfc, elemwise_after)


def test_flattening_pass_output_matches_the_rfc() -> None:
    # DESIGN 3: flatten_buffer turns "before" into exactly the parsed "after".
    I.assert_structural_equal(lowering.flatten_buffer(elemwise_before), elemwise_after)
