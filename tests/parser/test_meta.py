"""Metaprogramming (seed: tvmscript-metaprogramming): F1-F4, parse-time Python, macros."""

from __future__ import annotations

import sys

import pytest

import tvmscript
from irbuilder import IRBuilder, def_, def_many
from irbuilder.ir import BufferStore, For, LetStmt, Min, SeqStmt
from tvmscript import ir as I
from tvmscript import tir as T

from . import meta_kernels


def _seq(stmt: object) -> list[object]:
    return list(stmt.seq) if isinstance(stmt, SeqStmt) else [stmt]


# -- F1: templates ------------------------------------------------------------------


@T.prim_func
def matmul_literal(A: T.Buffer((128, 64), "float32")):
    for i, j in T.grid(128, 64):
        A[i, j] = T.float32(0)


def gen_matmul(n: int, m: int) -> object:
    @T.prim_func
    def f(A: T.Buffer((n, m), "float32")):
        for i, j in T.grid(n, m):
            A[i, j] = T.float32(0)

    return f


def test_f1_template_equals_literal() -> None:
    I.assert_structural_equal(gen_matmul(128, 64), matmul_literal)
    assert not I.structural_equal(gen_matmul(128, 32), matmul_literal)


def test_f1_seed_form_with_ellipsis_body() -> None:
    @T.prim_func
    def matmul(A: T.Buffer[(128, 128)]) -> None: ...

    def gen(n: int, m: int) -> object:
        @T.prim_func
        def f(A: T.Buffer[(n, m)]): ...

        return f

    I.assert_structural_equal(gen(n=128, m=128), matmul)


# -- F2: rank polymorphism ------------------------------------------------------------


def broadcast_add(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> object:
    """One generic source for every rank: the output shape broadcasts a and b."""
    c_shape = tuple(max(x, y) for x, y in zip(a_shape, b_shape))

    @T.prim_func
    def f(
        A: T.Buffer(a_shape, "float32"),
        B: T.Buffer(b_shape, "float32"),
        C: T.Buffer(c_shape, "float32"),
    ):
        for (*i,) in T.grid(*c_shape):
            ia = T.meta_var(tuple(0 if e == 1 else x for x, e in zip(i, a_shape)))
            ib = T.meta_var(tuple(0 if e == 1 else x for x, e in zip(i, b_shape)))
            C[tuple(i)] = A[ia] + B[ib]

    return f


@pytest.mark.parametrize(
    "a_shape,b_shape",
    [((8,), (1,)), ((4, 1), (1, 6)), ((2, 3, 1), (2, 1, 5)), ((2, 1, 3, 4), (1, 5, 3, 1))],
)
def test_f2_broadcast_add_all_ranks(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    f = broadcast_add(a_shape, b_shape)
    loop = f.body
    depth = 0
    while isinstance(loop, For):
        depth, loop = depth + 1, loop.body
    assert depth == len(a_shape)
    assert isinstance(loop, BufferStore) and len(loop.indices) == len(a_shape)
    # Broadcast dims index with constant 0.
    a_load = loop.value.a
    for index, extent in zip(a_load.indices, a_shape):
        assert (getattr(index, "value", None) == 0) == (extent == 1)


_F2_TEXT = """
@T.prim_func
def f(A: T.Buffer(shape, "float32"), C: T.Buffer(shape, "float32")):
    for *i in T.grid(*A.shape):
        C[*i] = A[*i] + T.float32(1)
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="A[*i] needs Python 3.11 syntax")
@pytest.mark.parametrize("shape", [(8,), (4, 4), (2, 3, 4), (2, 2, 2, 2)])
def test_f2_seed_star_loop_in_source_text(shape: tuple[int, ...]) -> None:
    f = tvmscript.from_source(_F2_TEXT, capture={"shape": shape})
    assert isinstance(f, I.PrimFunc)
    loop = f.body
    depth = 0
    while isinstance(loop, For):
        depth, loop = depth + 1, loop.body
    assert depth == len(shape) and len(loop.indices) == len(shape)


def test_f2_star_comma_form_in_a_file() -> None:
    f = meta_kernels.captured_shape
    assert isinstance(f.body, For) and isinstance(f.body.body, For)


# -- F3: T.compute in a kernel -------------------------------------------------------


def test_f3_compute_in_kernel() -> None:
    @T.prim_func
    def f(
        A: T.Buffer((16, 16), "float32"),
        B: T.Buffer((16, 16), "float32"),
        C: T.Buffer((16, 16), "float32"),
    ):
        T.compute((16, 16), lambda i, j: A[i, j] + B[i, j], out=C)

    @T.prim_func
    def expanded(
        A: T.Buffer((16, 16), "float32"),
        B: T.Buffer((16, 16), "float32"),
        C: T.Buffer((16, 16), "float32"),
    ):
        for i, j in T.grid(16, 16):
            with T.block("compute"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    I.assert_structural_equal(f, expanded)


# -- F4: host functions building expressions ---------------------------------------


def get_box_coordinates(output, batch_idx, box_idx, box_start_idx):  # type: ignore[no-untyped-def]
    """Executed by Python while parsing (seed NMS example)."""
    box_l = T.min(
        output[batch_idx, box_idx, box_start_idx], output[batch_idx, box_idx, box_start_idx + 2]
    )
    box_t = T.min(
        output[batch_idx, box_idx, box_start_idx + 1], output[batch_idx, box_idx, box_start_idx + 3]
    )
    box_r = T.max(
        output[batch_idx, box_idx, box_start_idx], output[batch_idx, box_idx, box_start_idx + 2]
    )
    box_b = T.max(
        output[batch_idx, box_idx, box_start_idx + 1], output[batch_idx, box_idx, box_start_idx + 3]
    )
    return box_l, box_t, box_r, box_b


@T.prim_func(capture=[get_box_coordinates])
def nms_like(output: T.Buffer((2, 8, 4), "float32"), area: T.Buffer((2, 8), "float32")):
    for b, k in T.grid(2, 8):
        a_l, a_t, a_r, a_b = get_box_coordinates(output, b, k, 0)
        area[b, k] = (a_r - a_l) * (a_b - a_t)


def test_f4_host_function_returning_expressions() -> None:
    body = nms_like.body.body.body  # inside the two loops of T.grid
    names = []
    while isinstance(body, LetStmt):
        names.append(body.var.name)
        body = body.body
    assert names == ["a_l", "a_t", "a_r", "a_b"]
    outer = nms_like.body.body.body
    assert isinstance(outer.value, Min)
    assert isinstance(body, BufferStore)


# -- parse-time Python ---------------------------------------------------------------


def make_kernel(unrolled: bool) -> object:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        if unrolled:
            for k in [0, 1, 2, 3]:
                A[k] = T.float32(k)
        else:
            for k in range(4):
                A[k] = T.Cast("float32", k)

    return f


def test_parse_time_if_picks_a_branch() -> None:
    assert len(_seq(make_kernel(True).body)) == 4
    assert isinstance(make_kernel(False).body, For)


def test_meta_var_keeps_python_value() -> None:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        scale = T.meta_var(A[0] * T.float32(2))  # no LetStmt: substituted where used
        A[1] = scale
        A[2] = scale

    stores = _seq(f.body)
    assert len(stores) == 2 and all(isinstance(s, BufferStore) for s in stores)


# -- macros --------------------------------------------------------------------------


def test_macro_expansion_is_hygienic() -> None:
    f = meta_kernels.uses_macros
    first, second = _seq(f.body)
    store_one, let = _seq(first.body)
    assert isinstance(store_one, BufferStore)
    assert isinstance(let, LetStmt) and let.var.name == "tmp"
    assert isinstance(second.body, BufferStore)  # twice(tmp) returned an expression
    assert second.body.value.a is second.loop_var


def test_macro_cannot_see_caller_names() -> None:
    @T.macro
    def peek(buf):
        buf[0] = secret  # noqa: F821  (not visible: hygiene)

    with pytest.raises(tvmscript.DiagnosticError, match="name 'secret' is not defined"):

        @T.prim_func
        def f(A: T.Buffer((1,), "int32")):
            secret = A[0] + 1  # noqa: F841
            peek(A)


def test_unhygienic_macro_sees_caller_names() -> None:
    @T.macro(hygienic=False)
    def peek(buf):
        buf[0] = secret  # noqa: F821

    @T.prim_func
    def f(A: T.Buffer((1,), "int32")):
        secret = A[0] + 1  # noqa: F841
        peek(A)

    assert isinstance(f.body, LetStmt) and isinstance(f.body.body, BufferStore)


@T.macro
def countdown(buf, n):
    if n > 0:
        buf[n] = n
        countdown(buf, n - 1)


@T.macro
def forever(buf):
    forever(buf)


def test_macro_recursion_with_parse_time_stop() -> None:
    @T.prim_func
    def f(A: T.Buffer((4,), "int32")):
        countdown(A, 3)

    assert [s.indices[0].value for s in _seq(f.body)] == [3, 2, 1]


def test_macro_recursion_limit() -> None:
    with pytest.raises(tvmscript.DiagnosticError, match="nested more than 16 levels"):

        @T.prim_func
        def f(A: T.Buffer((4,), "int32")):
            forever(A)


# -- the seed's IRBuilder example equals its TVMScript -----------------------------


def test_irbuilder_example_equals_tvmscript() -> None:
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("main")
            buffer_a = T.Buffer((128, 128, 128), "float32")
            buffer_b = T.Buffer((128, 128, 128), "float32")
            T.arg("A", buffer_a)
            T.arg("B", buffer_b)
            with T.grid(128, 128, 128) as (i, j, k):
                def_many(["i", "j", "k"], [i, j, k])
                with T.block(name="block"):
                    def_("vi", T.axis.spatial(128, i))
                    def_("vj", T.axis.spatial(128, j))
                    def_("vk", T.axis.reduce(128, k))
    built = b.get()

    @T.prim_func
    def main(
        A: T.Buffer(shape=(128, 128, 128), dtype="float32"),
        B: T.Buffer(shape=(128, 128, 128), dtype="float32"),
    ) -> None:
        for i, j, k in T.grid(128, 128, 128):
            with T.block("block"):
                vi = T.axis.S(128, i)  # noqa: F841
                vj = T.axis.S(128, j)  # noqa: F841
                vk = T.axis.R(128, k)  # noqa: F841

    I.assert_structural_equal(built, main)
