"""Round trip of the forms TVM v0.16 programs use (issue #16 item 4).

Each kernel prints to TVMScript that parses back to a structurally equal function, and
printing that again gives the same text; the implicit buffers (``T.Buffer(..., data=...)``
inside a body) also build and compute what the reference interpreter computes.
"""

from __future__ import annotations

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder import IRBuilder
from irbuilder import tir as B
from irbuilder.ir import (
    Buffer,
    BufferStore,
    DeclBuffer,
    For,
    ForKind,
    IRModule,
    LetStmt,
    PrimFunc,
    Var,
    as_dtype,
    const,
    make_data_var,
    post_order_visit,
)
from tvmscript import tir as T
from tvmscript.ir import assert_structural_equal


def roundtrip(node: PrimFunc | IRModule) -> str:
    text = node.script()
    parsed = tvmscript.from_source(text)
    assert_structural_equal(node, parsed, map_free_vars=True)
    assert parsed.script() == text
    return text


def same_as_interp(func: PrimFunc, *args: np.ndarray | int) -> list[np.ndarray]:
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    reference = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    tvmscript.build(func)(*compiled)
    tvmscript.build(func, target="interp")(*reference)
    for got, want in zip(compiled, reference):
        if isinstance(got, np.ndarray):
            np.testing.assert_array_equal(got, want)
    return [a for a in compiled if isinstance(a, np.ndarray)]


# -- implicit buffers: the pre-DeclBuffer form ----------------------------------------------


@T.prim_func
def view_of_param(A: T.Buffer((16,), "float32")):
    V = T.Buffer((4, 4), "float32", data=A.data)
    for i in range(4):
        V[i, 1] = V[i, 0] + 10.0


@T.prim_func
def views_of_allocation(A: T.Buffer((16,), "float32")):
    d = T.allocate([16], "float32", "global")
    W = T.Buffer((16,), "float32", data=d)
    V = T.Buffer((4, 4), "float32", data=d)
    for i in range(16):
        W[i] = A[i] * 2.0
    for i, j in T.grid(4, 4):
        A[i * 4 + j] = V[j, i]


@T.prim_func
def view_under_a_let(A: T.Buffer((16,), "float32"), n: T.int32):
    for i in range(4):
        m: T.int32 = n + i
        V = T.Buffer((m,), "float32", data=A.data)
        V[m - 1] = T.Cast("float32", m)


def test_implicit_view_prints_its_declaration_at_the_top() -> None:
    text = roundtrip(view_of_param)
    assert '    V = T.Buffer((4, 4), "float32", data=A.data)\n' in text
    assert not any(isinstance(s, DeclBuffer) for s in [view_of_param.body])


def test_implicit_views_of_an_allocation_follow_it() -> None:
    text = roundtrip(views_of_allocation)
    lines = [line.strip() for line in text.splitlines()]
    at = lines.index('d = T.allocate([16], "float32", "global")')
    assert lines[at + 1 : at + 3] == [
        'W = T.Buffer((16,), "float32", data=d)',
        'V = T.Buffer((4, 4), "float32", data=d)',
    ]


def test_implicit_view_waits_for_its_shape_var() -> None:
    text = roundtrip(view_under_a_let)
    lines = [line.strip() for line in text.splitlines()]
    assert lines.index('V = T.Buffer((m,), "float32", data=A.data)') == (
        lines.index("m: T.int32 = n + i") + 1
    )


@pytest.mark.parametrize(
    ("func", "extra"),
    [(view_of_param, ()), (views_of_allocation, ()), (view_under_a_let, (2,))],
    ids=["param", "allocation", "let"],
)
def test_implicit_buffers_build_like_the_interpreter(func: PrimFunc, extra: tuple[int]) -> None:
    (out,) = same_as_interp(func, np.arange(16, dtype="float32"), *extra)
    assert not np.array_equal(out, np.arange(16, dtype="float32"))


def test_declare_buffers_gives_each_view_a_decl_buffer() -> None:
    out = lowering.declare_buffers(views_of_allocation)
    decls: list[str] = []

    def collect(node: object) -> None:
        if isinstance(node, DeclBuffer):
            decls.append(node.buffer.name)

    post_order_visit(out.body, collect)
    assert sorted(decls) == ["V", "W"]
    lowering.verify_well_formed(out)


# -- match_buffer, shared buffers, clashing names ----------------------------------------------


@T.prim_func
def nested_match_buffers(A: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("outer"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi * 4 : vi * 4 + 4, vj * 4 : vj * 4 + 4])
            T.writes(A[vi * 4 : vi * 4 + 4, vj * 4 : vj * 4 + 4])
            tile = T.match_buffer(
                A[vi * 4 : vi * 4 + 4, vj * 4 : vj * 4 + 4], (4, 4), "float32",
                strides=[16, 1], elem_offset=vi * 64 + vj * 4,
            )  # fmt: skip
            for k in range(2):
                with T.block("inner"):
                    vk = T.axis.spatial(2, k)
                    T.reads(tile[vk * 2 : vk * 2 + 2, 0:4])
                    T.writes(tile[vk * 2 : vk * 2 + 2, 0:4])
                    half = T.match_buffer(
                        tile[vk * 2 : vk * 2 + 2, 0:4], (2, 4), "float32",
                        strides=[16, 1], elem_offset=T.int32(),
                    )  # fmt: skip
                    for c in range(4):
                        half[0, c] = half[0, c] + 1.0


def test_nested_match_buffers_roundtrip() -> None:
    text = roundtrip(nested_match_buffers)
    assert text.count("T.match_buffer(") == 2


@T.prim_func
def clashing_names(A: T.Buffer((8,), "float32"), A_1: T.Buffer((8,), "float32")):
    for i in range(8):
        for i_1 in range(1):
            A_data = T.Buffer((8,), "float32", data=A.data)
            A_data[i] = A_1[i + i_1]


def test_names_that_clash_after_renaming_roundtrip() -> None:
    roundtrip(clashing_names)


@T.prim_func
def params_sharing_storage(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16,), "float32")
    B = T.match_buffer(b, (4, 4), "float32", data=A.data)
    C = T.match_buffer(c, (16,), "float32")
    for i in range(4):
        C[i] = A[i] + B[1, i]


def test_parameters_sharing_a_data_var_keep_the_match_buffer_form() -> None:
    # As `T.Buffer` parameters, A and B would each get storage of their own when parsed back.
    text = roundtrip(params_sharing_storage)
    assert '    A = T.match_buffer(a, (16,), "float32")\n' in text
    assert '    B = T.match_buffer(b, (4, 4), "float32", data=A.data)\n' in text
    assert 'C: T.Buffer((16,), "float32")' in text  # a buffer of its own keeps the sugar
    parsed = tvmscript.from_source(text)
    a, b = (parsed.buffer_map[p] for p in parsed.params[:2])
    assert a.data is b.data


def _hand_built_clashes() -> PrimFunc:
    # Every var and buffer is named "x" (and one "T", one "for"): the printer renames them.
    with IRBuilder() as builder:
        with B.prim_func():
            B.func_name("clash")
            a = B.arg("x", B.Buffer((4,), "float32"))
            b = B.arg("T", B.Buffer((4,), "float32"))
            n = B.arg("x", Var("x", "int32"))
            with B.serial(4) as i:
                i.set_name_hint("x")
                with B.LetStmt(n + 1, var=Var("for", "int32")) as j:
                    B.buffer_store(a, b[i] + B.Cast("float32", j), [i])
    result = builder.get()
    assert isinstance(result, PrimFunc)
    return result


def test_every_name_x_roundtrips() -> None:
    text = roundtrip(_hand_built_clashes())
    assert "def clash(x: T.Buffer" in text and "T_1: T.Buffer" in text and "for_1" in text


@pytest.mark.parametrize("typed_data", [True, False], ids=["pointer-data", "bare-handle-data"])
def test_a_buffer_reused_by_several_functions_of_a_module_roundtrips(typed_data: bool) -> None:
    data = make_data_var("S_data", as_dtype("float32")) if typed_data else Var("S_data", "handle")
    shared = Buffer("S", data, (const(8),), "float32")
    funcs = {}
    for name in ("first", "second"):
        handle = Var("s", "handle")
        i = Var("i", "int32")
        store = BufferStore(shared, shared[i] + 1.0, (i,))
        body = For(i, const(0), const(8), ForKind.SERIAL, store)
        funcs[name] = PrimFunc(
            (handle,), body, buffer_map={handle: shared}, attrs={"global_symbol": name}
        )
    text = roundtrip(IRModule(funcs))
    if typed_data:
        assert text.count('def first(S: T.Buffer((8,), "float32"))') == 1
        assert text.count('(S: T.Buffer((8,), "float32"))') == 2
    else:  # a data var match_buffer would not make is declared and passed
        assert text.count('= T.match_buffer(s, (8,), "float32", data=S_data)') == 2


# -- lowered code --------------------------------------------------------------------------


@T.prim_func
def symbolic(a: T.handle, b: T.handle, n: T.int32):
    m = T.int32()
    A = T.match_buffer(a, (n, m), "float32")
    Bb = T.match_buffer(b, (n, m), "float32", strides=[T.int32(), 1])
    for i, j in T.grid(n, m):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            Bb[vi, vj] = A[vi, vj] * 2.0


def test_lowered_entry_code_roundtrips() -> None:
    low = lowering.lower(symbolic)
    text = roundtrip(low)
    assert "T.array_data(a)" in text and "T.array_shape(a, 1)" in text
    lets = []

    def collect(node: object) -> None:
        if isinstance(node, LetStmt):
            lets.append(node.var.name)

    post_order_visit(low.body, collect)
    assert lets  # the entry checks bind data and shape vars that match_buffer declared


def test_lowered_implicit_views_roundtrip() -> None:
    roundtrip(lowering.lower(views_of_allocation))
    roundtrip(lowering.lower(view_under_a_let))


def test_an_empty_module_prints_a_class_that_parses_back() -> None:
    from irbuilder.ir import IRModule

    empty = IRModule({})
    text = empty.script()
    assert "class Module:\n    pass" in text
    parsed = tvmscript.from_source(text)
    assert isinstance(parsed, IRModule) and not parsed.functions


# -- names of sibling scopes ------------------------------------------------------------------


@T.prim_func
def sibling_loops(A: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("first"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = T.float32(0)
    for i, j in T.grid(16, 16):
        with T.block("second"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = A[vi, vj] + T.float32(1)
    for i in range(16):
        if i < 8:
            n: T.int32 = i * 2
            A[i, n] = T.float32(2)
        else:
            n: T.int32 = i + 1
            A[i, n - 1] = T.float32(3)


def test_sibling_scopes_reuse_names_as_tvm_prints_them() -> None:
    text = roundtrip(sibling_loops)
    assert text.count("for i, j in T.grid(16, 16):") == 2
    assert text.count("vi, vj = T.axis.remap") == 2
    assert text.count("n: T.int32 = ") == 2
    assert "_1" not in text


def _nested_same_hints() -> PrimFunc:
    # Every loop var is named "i": the nested ones are visible together and must differ,
    # the later sibling may take "i" again.
    with IRBuilder() as builder:
        with B.prim_func():
            B.func_name("nested")
            a = B.arg("A", B.Buffer((4, 4), "float32"))
            with B.serial(4) as i:
                with B.serial(4) as j:
                    j.set_name_hint("i")
                    B.buffer_store(a, a[i, j] + 1.0, [i, j])
            with B.serial(4) as k:
                k.set_name_hint("i")
                B.buffer_store(a, a[k, 0] * 2.0, [k, 0])
    result = builder.get()
    assert isinstance(result, PrimFunc)
    return result


def test_names_visible_together_still_differ() -> None:
    text = roundtrip(_nested_same_hints())
    lines = [line.strip() for line in text.splitlines()]
    assert "for i, i_1 in T.grid(4, 4):" in lines
    assert "A[i, i_1] = A[i, i_1] + T.float32(1)" in lines
    assert "for i in range(4):" in lines  # the sibling after the nest
