"""Tests of the vectorize_loop pass."""

from __future__ import annotations

import pytest

from irbuilder.ir import (
    Add,
    Allocate,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    Div,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    Mod,
    Mul,
    PrimFunc,
    Ramp,
    Select,
    SeqStmt,
    Stmt,
    Var,
    as_dtype,
    make_data_var,
    structural_equal,
)
from lowering.pass_infra import FunctionPass, PassContext
from lowering.transforms.vectorize import CannotVectorize, vectorize_body, vectorize_loop

I32 = as_dtype("int32")
F32 = as_dtype("float32")
BOOL = as_dtype("bool")


def i32(v: int) -> IntImm:
    return IntImm(I32, v)


def flat(name: str, n: int = 1024, dtype: str = "float32") -> Buffer:
    dt = as_dtype(dtype)
    return Buffer(name, make_data_var(name, dt), (i32(n),), dt)


def run(body: Stmt) -> Stmt:
    return vectorize_loop(PrimFunc((), body)).body


def vloop(var: Var, extent: int | Var, body: Stmt) -> For:
    ext = i32(extent) if isinstance(extent, int) else extent
    return For(var, i32(0), ext, ForKind.VECTORIZED, body)


def test_pass_object() -> None:
    assert isinstance(vectorize_loop, FunctionPass) and vectorize_loop.name == "vectorize_loop"


def test_add_16_wide_is_one_vector_store() -> None:
    A, B, C = flat("A"), flat("B"), flat("C")
    i = Var("i")
    body = BufferStore(C, BufferLoad(A, (i,)) + BufferLoad(B, (i,)), (i,))
    out = run(vloop(i, 16, body))
    ramp = Ramp(i32(0), i32(1), 16)
    expected = BufferStore(C, Add(BufferLoad(A, (ramp,)), BufferLoad(B, (ramp,))), (ramp,))
    assert structural_equal(out, expected)
    assert isinstance(out, BufferStore) and out.value.dtype == as_dtype("float32x16")


def test_invariants_are_broadcast_and_affine_indices_stay_ramps() -> None:
    A, C = flat("A"), flat("C")
    i, j, s = Var("i"), Var("j"), Var("s", F32)
    body = BufferStore(C, BufferLoad(A, (j * 2,)) * s, (i * 16 + j,))
    out = run(For(i, i32(0), i32(4), ForKind.SERIAL, vloop(j, 8, body)))
    assert isinstance(out, For) and isinstance(out.body, BufferStore)
    store = out.body
    assert structural_equal(store.indices[0], Ramp(Mul(i, i32(16)), i32(1), 8))
    expected_value = Mul(BufferLoad(A, (Ramp(i32(0), i32(2), 8),)), Broadcast(s, 8))
    assert structural_equal(store.value, expected_value)


def test_gather_and_vector_intrinsic() -> None:
    A, C = flat("A"), flat("C")
    idx = flat("idx", dtype="int32")
    i = Var("i")
    exp = Call(F32, "exp", (BufferLoad(A, (BufferLoad(idx, (i,)),)),), CallKind.INTRINSIC)
    out = run(vloop(i, 4, BufferStore(C, exp, (i,))))
    assert isinstance(out, BufferStore) and isinstance(out.value, Call)
    assert out.value.op == "exp" and out.value.dtype == as_dtype("float32x4")
    gather = out.value.args[0]
    assert isinstance(gather, BufferLoad) and gather.indices[0].dtype == as_dtype("int32x4")
    assert isinstance(gather.indices[0], BufferLoad)  # a vector index: the codegen gathers


def test_cast_select_and_vector_let() -> None:
    A, C = flat("A"), flat("C")
    i, x = Var("i"), Var("x", F32)
    value = Select(BufferLoad(A, (i,)) > FloatImm(F32, 0.0), x, Cast(F32, i))
    body = LetStmt(x, BufferLoad(A, (i,)) * FloatImm(F32, 2.0), BufferStore(C, value, (i,)))
    out = run(vloop(i, 8, body))
    assert isinstance(out, LetStmt) and out.var is not x
    assert out.var.dtype == as_dtype("float32x8")
    assert isinstance(out.body, BufferStore) and out.body.value.dtype == as_dtype("float32x8")


def test_extent_20_is_main_vector_plus_scalar_remainder() -> None:
    A, C = flat("A"), flat("C")
    i = Var("i")
    out = run(vloop(i, 20, BufferStore(C, BufferLoad(A, (i,)), (i,))))
    assert isinstance(out, SeqStmt) and len(out.seq) == 2
    main, rem = out.seq
    ramp = Ramp(i32(0), i32(1), 16)
    assert structural_equal(main, BufferStore(C, BufferLoad(A, (ramp,)), (ramp,)))
    assert isinstance(rem, For) and rem.kind is ForKind.SERIAL
    assert structural_equal(rem.extent, i32(4))
    assert isinstance(rem.body, BufferStore)
    assert structural_equal(rem.body.indices[0], Add(rem.loop_var, i32(16)))


def test_extent_40_loops_over_full_vectors() -> None:
    A, C = flat("A"), flat("C")
    i = Var("i")
    out = run(vloop(i, 40, BufferStore(C, BufferLoad(A, (i,)), (i,))))
    assert isinstance(out, SeqStmt)
    main, rem = out.seq
    assert isinstance(main, For) and structural_equal(main.extent, i32(2))
    assert isinstance(main.body, BufferStore)
    assert structural_equal(main.body.indices[0], Ramp(Mul(main.loop_var, i32(16)), i32(1), 16))
    assert isinstance(rem, For) and structural_equal(rem.extent, i32(8))


def test_symbolic_extent_splits() -> None:
    A, C = flat("A"), flat("C")
    i, n = Var("i"), Var("n")
    out = run(vloop(i, n, BufferStore(C, BufferLoad(A, (i,)), (i,))))
    assert isinstance(out, SeqStmt)
    main, rem = out.seq
    assert isinstance(main, For) and structural_equal(main.extent, Div(n, i32(16)))
    assert isinstance(rem, For) and structural_equal(rem.extent, Mod(n, i32(16)))
    assert isinstance(main.body, BufferStore) and main.body.value.dtype.lanes == 16


def test_max_width_option() -> None:
    A, C = flat("A"), flat("C")
    i = Var("i")
    loop = vloop(i, 16, BufferStore(C, BufferLoad(A, (i,)), (i,)))
    with PassContext(config={"vectorize_loop": {"max_width": 8}}):
        out = run(loop)
    assert isinstance(out, For) and structural_equal(out.extent, i32(2))
    assert isinstance(out.body, BufferStore) and out.body.value.dtype.lanes == 8


def test_if_inside_falls_back_to_serial() -> None:
    A, C = flat("A"), flat("C")
    i = Var("i")
    body = IfThenElse(
        BufferLoad(A, (i,)) > FloatImm(F32, 0.0), BufferStore(C, BufferLoad(A, (i,)), (i,))
    )
    out = run(vloop(i, 16, body))
    assert isinstance(out, For) and out.kind is ForKind.SERIAL and out.body is body


def test_if_else_of_two_stores_becomes_select() -> None:
    A, C = flat("A"), flat("C")
    i = Var("i")
    cond = BufferLoad(A, (i,)) > FloatImm(F32, 0.0)
    body = IfThenElse(
        cond, BufferStore(C, FloatImm(F32, 1.0), (i,)), BufferStore(C, FloatImm(F32, 2.0), (i,))
    )
    out = run(vloop(i, 4, body))
    assert isinstance(out, BufferStore) and isinstance(out.value, Select)
    assert out.value.dtype == as_dtype("float32x4")


def test_vectorize_body_merges_an_if_else_only_when_no_value_can_fault() -> None:
    # late passes vectorize bodies without loop ranges: a merged value may only load what
    # the condition loads or the stored element itself, and never divide by a variable
    A, C = flat("A"), flat("C")
    D, Q = flat("D", dtype="int32"), flat("Q", dtype="int32")
    i = Var("i")
    safe = IfThenElse(
        BufferLoad(A, (i,)) > FloatImm(F32, 0.0),
        BufferStore(C, BufferLoad(A, (i,)), (i,)),
        BufferStore(C, BufferLoad(C, (i,)) * FloatImm(F32, 2.0), (i,)),
    )
    out = vectorize_body(i, safe, i32(0), 8)
    assert isinstance(out, BufferStore) and isinstance(out.value, Select)
    shifted = IfThenElse(
        i >= i32(1),
        BufferStore(C, BufferLoad(A, (i - i32(1),)), (i,)),
        BufferStore(C, FloatImm(F32, 0.0), (i,)),
    )
    divided = IfThenElse(
        BufferLoad(D, (i,)) != i32(0),
        BufferStore(Q, Div(i32(100), BufferLoad(D, (i,))), (i,)),
        BufferStore(Q, i32(0), (i,)),
    )
    for body in (shifted, divided):
        with pytest.raises(CannotVectorize):
            vectorize_body(i, body, i32(0), 8)


def test_invariant_if_stays_an_if() -> None:
    A, C = flat("A"), flat("C")
    i, flag = Var("i"), Var("flag", BOOL)
    body = IfThenElse(flag, BufferStore(C, BufferLoad(A, (i,)), (i,)))
    out = run(vloop(i, 4, body))
    assert isinstance(out, IfThenElse) and isinstance(out.then_case, BufferStore)
    assert out.then_case.value.dtype.lanes == 4


def test_unvectorizable_bodies_fall_back() -> None:
    A, C = flat("A"), flat("C")
    i, j = Var("i"), Var("j")
    nested = vloop(
        i,
        4,
        For(j, i32(0), i32(4), ForKind.SERIAL, BufferStore(C, BufferLoad(A, (j,)), (i * 4 + j,))),
    )
    extern = vloop(
        i, 4, BufferStore(C, Call(F32, "my_fn", (BufferLoad(A, (i,)),), CallKind.EXTERN), (i,))
    )
    same_place = vloop(i, 4, BufferStore(C, BufferLoad(A, (i,)), (i32(0),)))
    data = make_data_var("T", F32)
    alloc = vloop(
        i,
        4,
        Allocate(data, F32, i32(4), IntImm(BOOL, 1), BufferStore(C, BufferLoad(A, (i,)), (i,))),
    )
    for loop in (nested, extern, same_place, alloc):
        out = run(loop)
        assert isinstance(out, For) and out.kind is ForKind.SERIAL


def test_nested_vectorized_inner_wins() -> None:
    A, C = flat("A"), flat("C")
    i, j = Var("i"), Var("j")
    loop = vloop(i, 4, vloop(j, 4, BufferStore(C, BufferLoad(A, (i * 4 + j,)), (i * 4 + j,))))
    out = run(loop)
    assert isinstance(out, For) and out.kind is ForKind.SERIAL
    assert isinstance(out.body, BufferStore) and out.body.value.dtype.lanes == 4


def test_small_extents() -> None:
    A, C = flat("A"), flat("C")
    i = Var("i")
    one = run(For(i, i32(5), i32(1), ForKind.VECTORIZED, BufferStore(C, BufferLoad(A, (i,)), (i,))))
    assert structural_equal(one, BufferStore(C, BufferLoad(A, (i32(5),)), (i32(5),)))
    three = run(vloop(i, 3, BufferStore(C, BufferLoad(A, (i,)), (i,))))
    assert isinstance(three, SeqStmt)
    assert isinstance(three.seq[0], BufferStore) and three.seq[0].value.dtype.lanes == 2
