"""Structural equality/hash: alpha-renaming is equal, every real change is not."""

from collections.abc import Callable
from typing import Any

import pytest

import irbuilder.ir as ir
from irbuilder.ir import (
    Buffer,
    For,
    ForKind,
    PrimFunc,
    Var,
    as_dtype,
    assert_structural_equal,
    const,
    make_data_var,
    structural_equal,
    structural_hash,
)


def elemwise(
    n: int = 16,
    kind: ForKind = ForKind.SERIAL,
    dtype: str = "float32",
    scale: float = 2.0,
    names: tuple[str, str] = ("i", "A"),
    extent: int | None = None,
) -> PrimFunc:
    """C[i] = A[i] * scale, built from scratch (fresh vars every call)."""
    i = Var(names[0], "int32")
    a, c = Var("a", "handle"), Var("c", "handle")
    A = Buffer(names[1], make_data_var(names[1] + "_data", as_dtype(dtype)), (n,), as_dtype(dtype))
    C = Buffer("C", make_data_var("C_data", as_dtype(dtype)), (n,), as_dtype(dtype))
    body = For(i, const(0), const(extent or n), kind, ir.BufferStore(C, A[i] * scale, (i,)))
    return PrimFunc((a, c), body, None, {a: A, c: C}, {"global_symbol": "f"})


def test_alpha_renamed_functions_are_equal() -> None:
    f, g = elemwise(), elemwise(names=("k", "X"))
    assert f.params[0] is not g.params[0]
    assert structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)
    assert_structural_equal(f, g)


@pytest.mark.parametrize(
    "change,path_part",
    [
        (lambda: elemwise(scale=3.0), "body.body.value.b.value"),
        (lambda: elemwise(kind=ForKind.PARALLEL), "body.kind"),
        (lambda: elemwise(n=32), "shape"),
        (lambda: elemwise(dtype="float64"), "dtype"),
        (lambda: elemwise(extent=8), "body.extent"),
    ],
    ids=["constant", "loop-kind", "buffer-shape", "dtype", "extent"],
)
def test_changes_are_detected_with_path(change: Callable[[], PrimFunc], path_part: str) -> None:
    f, g = elemwise(), change()
    assert not structural_equal(f, g)
    with pytest.raises(ir.StructuralMismatch) as info:
        assert_structural_equal(f, g)
    assert path_part in info.value.path
    message = str(info.value)
    assert "structural mismatch at <root>" in message
    assert "lhs:" in message and "rhs:" in message


def test_free_vars_compare_by_identity_unless_mapped() -> None:
    n, m = Var("n"), Var("n")
    assert structural_equal(n + 1, n + 1)
    assert not structural_equal(n + 1, m + 1)
    assert structural_equal(n + 1, m + 1, map_free_vars=True)


def test_inconsistent_binding_is_detected() -> None:
    # for i: for j: A[i] = ...   vs   for i: for j: A[j] = ...
    def make(swap: bool) -> ir.Stmt:
        i, j = Var("i"), Var("j")
        A = Buffer("A", make_data_var("A_data", as_dtype("int32")), (4,), as_dtype("int32"))
        idx = j if swap else i
        store = ir.BufferStore(A, const(1), (idx,))
        inner = For(j, const(0), const(4), ForKind.SERIAL, store)
        return ir.DeclBuffer(A, For(i, const(0), const(4), ForKind.SERIAL, inner))

    assert structural_equal(make(False), make(False))
    assert not structural_equal(make(False), make(True))


def test_function_name_is_a_hint() -> None:
    f = elemwise()
    g = elemwise().with_attr("global_symbol", "other")
    assert structural_equal(f, g)
    h = elemwise().with_attr("some_attr", 1)
    assert not structural_equal(f, h)


def _corpus() -> list[Callable[[], Any]]:
    makers: list[Callable[[], Any]] = []
    for n in (4, 8, 16, 32, 64):
        for kind in (ForKind.SERIAL, ForKind.PARALLEL, ForKind.VECTORIZED, ForKind.UNROLLED):
            for dtype in ("float32", "float64", "int32"):
                makers.append(
                    lambda n=n, kind=kind, dtype=dtype: elemwise(
                        n=n, kind=kind, dtype=dtype, scale=2 if dtype == "int32" else 2.0
                    )
                )
    return makers


def test_hash_corpus_equal_functions_hash_equal() -> None:
    corpus = _corpus()
    assert len(corpus) >= 50
    hashes = []
    for make in corpus:
        a, b = make(), make()
        assert structural_equal(a, b)
        assert structural_hash(a) == structural_hash(b)
        hashes.append(structural_hash(a))
    # distinct programs should (almost always) hash differently
    assert len(set(hashes)) == len(hashes)


def test_mutator_returns_same_object_when_unchanged() -> None:
    f = elemwise()

    class Nothing(ir.StmtExprMutator):
        pass

    assert Nothing().visit_func(f) is f

    class DoubleConstants(ir.StmtExprMutator):
        def visit_float_imm_(self, e: ir.FloatImm) -> ir.PrimExpr:
            return ir.FloatImm(e.dtype, e.value * 2)

    g = DoubleConstants().visit_func(f)
    assert g is not f
    assert structural_equal(g, elemwise(scale=4.0))
    # the untouched buffer param mapping is shared
    assert g.buffer_map is f.buffer_map


def test_visitor_sees_every_expression() -> None:
    f = elemwise()
    seen: list[str] = []

    class Collect(ir.StmtExprVisitor):
        def visit_buffer_load_(self, e: ir.BufferLoad) -> None:
            seen.append("load:" + e.buffer.name)
            self.generic_visit(e)

        def visit_var_(self, e: Var) -> None:
            seen.append("var:" + e.name)

    Collect().visit_func(f)
    assert seen == ["load:A", "var:i", "var:i"]


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        ({"k": 1}, {"k": 1}, True),
        ({"k": 1}, {"k": 2}, False),
        ({"k": (1, 2.5, "s")}, {"k": (1, 2.5, "s")}, True),
        ({"k": float("nan")}, {"k": float("nan")}, True),
        ({"k": float("nan")}, {"k": -float("nan")}, True),
        ({"k": -0.0}, {"k": 0.0}, False),  # a kernel can observe the sign
        ({"k": 0.1}, {"k": 0.2}, False),
        ({"k": True}, {"k": 1}, False),
        ({"k": ForKind.SERIAL}, {"k": ForKind.SERIAL}, True),
        ({"k": ForKind.SERIAL}, {"k": ForKind.PARALLEL}, False),
        ({"k": {"inner": 1}}, {"k": {"inner": 1}}, True),
        ({"k": {"inner": 1}}, {"k": {"inner": 2}}, False),
        ({"k": "a"}, {"k": "b"}, False),
        ({"k": as_dtype("int8")}, {"k": as_dtype("int8")}, True),
        ({"k": as_dtype("int8")}, {"k": as_dtype("uint8")}, False),
    ],
)
def test_hash_agrees_with_equality_for_attribute_values(
    left: dict[str, Any], right: dict[str, Any], equal: bool
) -> None:
    # Attribute values take every branch of the hasher (mappings, sequences, floats, enums,
    # plain values); equal values hash equal, and these unequal ones hash apart.
    f, g = elemwise().with_attr("k", left["k"]), elemwise().with_attr("k", right["k"])
    assert structural_equal(f, g) == equal
    assert (structural_hash(f) == structural_hash(g)) == equal


def test_a_tuple_and_a_list_are_unequal_but_may_share_a_hash() -> None:
    f, g = elemwise().with_attr("k", (1, 2)), elemwise().with_attr("k", [1, 2])
    assert not structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)  # allowed: only equal => same hash


def test_a_python_bool_attribute_equals_tvms_bool_constant() -> None:
    # TVM converts T.func_attr({"tir.noalias": True}) to T.bool(True), which its printer shows
    from tvmscript import tir as T

    @T.prim_func
    def plain(A: T.Buffer((4,), "float32")) -> None:
        T.func_attr({"tir.noalias": True})
        A[0] = T.float32(1)

    @T.prim_func
    def constant(A: T.Buffer((4,), "float32")) -> None:
        T.func_attr({"tir.noalias": T.bool(True)})
        A[0] = T.float32(1)

    @T.prim_func
    def other(A: T.Buffer((4,), "float32")) -> None:
        T.func_attr({"tir.noalias": T.bool(False)})
        A[0] = T.float32(1)

    plain, constant, other = (f.with_attr("global_symbol", "f") for f in (plain, constant, other))
    assert structural_equal(plain, constant)
    assert structural_hash(plain) == structural_hash(constant)
    assert not structural_equal(plain, other)
