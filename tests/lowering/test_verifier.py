"""The well-formedness verifier: one failing program per rule, plus accepted forms."""

# The IR constructors convert Python ints and dtype strings at run time; their
# annotations name the converted types, so literal shapes/dtypes are fine here.
# mypy: disable-error-code=arg-type

from __future__ import annotations

import pytest

from irbuilder.ir import (
    Allocate,
    Block,
    BlockRealize,
    Buffer,
    BufferStore,
    Call,
    CallKind,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    LetStmt,
    PrimFunc,
    Ramp,
    Range,
    Reduce,
    ReduceKind,
    SeqStmt,
    Span,
    Stmt,
    Var,
    as_dtype,
    const,
    make_data_var,
)
from lowering import WellFormedError, verify_well_formed
from lowering.checks.verifier import ENTRY_CHECKED_ATTR, well_formed_problems

F32 = as_dtype("float32")


def buf(name: str, shape: tuple[object, ...], dtype: str = "float32") -> Buffer:
    return Buffer(name, make_data_var(f"{name}_data", as_dtype(dtype)), shape, dtype)


def loop(var: Var, extent: int, body: Stmt) -> For:
    return For(var, const(0), const(extent), ForKind.SERIAL, body)


def func(body: Stmt, *buffers: Buffer, scalars: tuple[Var, ...] = ()) -> PrimFunc:
    handles = [Var(f"{b.name}_handle", "handle") for b in buffers]
    return PrimFunc(
        (*handles, *scalars),
        body,
        buffer_map=dict(zip(handles, buffers)),
        attrs={"global_symbol": "f"},
    )


def fails(f: PrimFunc, match: str, *, lowered: bool = False) -> WellFormedError:
    with pytest.raises(WellFormedError, match=match) as info:
        verify_well_formed(f, lowered=lowered)
    return info.value


def test_well_formed_function_passes() -> None:
    a = buf("A", (16,))
    i = Var("i")
    f = func(loop(i, 16, BufferStore(a, a[i] + 1.0, (i,))), a)
    verify_well_formed(f)
    verify_well_formed(f, lowered=True)


def test_implicit_buffer_declaration() -> None:
    a, hidden = buf("A", (16,)), buf("Hidden", (16,))
    i = Var("i")
    err = fails(
        func(loop(i, 16, BufferStore(a, hidden[i], (i,))), a),
        "'Hidden' is accessed but never declared",
    )
    assert err.errors and "implicit buffer" in err.errors[0].message


def test_alias_declared_by_decl_buffer_is_accepted() -> None:
    a = buf("A", (4, 4))
    flat = Buffer("A_flat", a.data, (16,), "float32")
    i = Var("i")
    verify_well_formed(func(DeclBuffer(flat, loop(i, 16, BufferStore(flat, const(0.0), (i,)))), a))


def test_undefined_buffer_data_var() -> None:
    a = buf("A", (16,))
    orphan = buf("Orphan", (16,))  # its data var comes from nowhere
    i = Var("i")
    body = DeclBuffer(orphan, loop(i, 16, BufferStore(a, orphan[i], (i,))))
    fails(
        func(body, a), "buffer 'Orphan' is declared over data var 'Orphan_data', which is undefined"
    )


def test_buffer_over_allocate_is_accepted() -> None:
    a, tmp = buf("A", (16,)), buf("T", (16,))
    i = Var("i")
    body = Allocate(
        tmp.data,
        F32,
        const(16),
        const(True),
        DeclBuffer(
            tmp, loop(i, 16, SeqStmt((BufferStore(tmp, a[i], (i,)), BufferStore(a, tmp[i], (i,)))))
        ),
    )
    verify_well_formed(func(body, a))


def test_buffer_data_from_let_bound_call_is_accepted() -> None:
    a = buf("A", (16,))
    data = make_data_var("p", F32)
    ext = Buffer("Ext", data, (16,), "float32")
    i = Var("i")
    call = Call(as_dtype("handle"), "my_malloc", (const(64),), CallKind.EXTERN)
    body = LetStmt(data, call, DeclBuffer(ext, loop(i, 16, BufferStore(a, ext[i], (i,)))))
    verify_well_formed(func(body, a))


def test_buffer_used_outside_its_declaration() -> None:
    a, tmp = buf("A", (16,)), buf("T", (16,))
    i = Var("i")
    body = SeqStmt(
        (
            Allocate(tmp.data, F32, const(16), const(True), DeclBuffer(tmp, Evaluate(const(0)))),
            loop(i, 16, BufferStore(a, tmp[i], (i,))),
        )
    )
    fails(func(body, a), "buffer 'T' is used outside the scope of its declaration")


def test_var_used_but_never_defined() -> None:
    a = buf("A", (16,))
    ghost = Var("ghost")
    fails(func(BufferStore(a, const(1.0), (ghost,)), a), "variable 'ghost' is not defined")


def test_var_used_before_definition() -> None:
    a = buf("A", (16,))
    x = Var("x")
    body = SeqStmt((BufferStore(a, const(1.0), (x,)), LetStmt(x, const(3), Evaluate(x))))
    fails(func(body, a), "variable 'x' is used before its definition")


def test_var_defined_twice() -> None:
    a = buf("A", (16,))
    x = Var("x")
    body = LetStmt(x, const(1), LetStmt(x, const(2), BufferStore(a, const(1.0), (x,))))
    fails(func(body, a), "variable 'x' is defined twice")


def test_same_loop_var_in_two_sibling_loops_is_defined_twice() -> None:
    a = buf("A", (16,))
    i = Var("i")
    body = SeqStmt(
        (
            loop(i, 16, BufferStore(a, const(1.0), (i,))),
            loop(i, 16, BufferStore(a, const(2.0), (i,))),
        )
    )
    fails(func(body, a), "variable 'i' is defined twice")


def test_loop_var_used_after_the_loop() -> None:
    a = buf("A", (16,))
    i = Var("i")
    body = SeqStmt((loop(i, 16, Evaluate(i)), BufferStore(a, const(1.0), (i,))))
    err = fails(func(body, a), "loop variable 'i' is used outside its scope")
    assert len(err.errors) == 1


def test_let_rebinding_a_loop_var() -> None:
    a = buf("A", (16,))
    i = Var("i")
    body = loop(i, 16, LetStmt(i, const(0), BufferStore(a, const(1.0), (i,))))
    fails(func(body, a), "LetStmt rebinds loop variable 'i'")


def test_store_value_dtype_mismatch() -> None:
    a = buf("A", (16,))
    i = Var("i")
    value = const(1.0, "float64")
    fails(
        func(loop(i, 16, BufferStore(a, value, (i,))), a),
        "store into buffer 'A': value has type float64, expected float32",
    )


def test_vector_store_lanes_mismatch() -> None:
    a = buf("A", (16,))
    index = Ramp(const(0), const(1), 4)
    value = a[Ramp(const(0), const(1), 8)]  # 8 lanes stored through a 4-lane index
    fails(func(BufferStore(a, value, (index,)), a), r"value has type float32x8, expected float32x4")


def test_vector_indices_with_different_lanes() -> None:
    a = buf("A", (16, 16))
    store = BufferStore(
        a,
        a[Ramp(const(0), const(1), 4), Ramp(const(0), const(1), 4)],
        (Ramp(const(0), const(1), 4), Ramp(const(0), const(1), 2)),
    )
    fails(func(store, a), "mixes vector indices of 4 and 2 lanes")


def test_wrong_index_count() -> None:
    a = buf("A", (4, 4))
    fails(func(BufferStore(a, const(0.0), (const(1),)), a), "has 1 indices for 2 dimensions")


def test_symbolic_shape_vars_are_defined_by_the_signature() -> None:
    n = Var("n")
    a = buf("A", (n,))
    i = Var("i")
    verify_well_formed(
        func(For(i, const(0), n, ForKind.SERIAL, BufferStore(a, const(0.0), (i,))), a)
    )


def test_after_entry_checks_signature_vars_need_bindings() -> None:
    n = Var("n")
    a = buf("A", (n,))
    i = Var("i")
    f = func(For(i, const(0), n, ForKind.SERIAL, BufferStore(a, const(0.0), (i,))), a)
    problems = well_formed_problems(f.with_attr(ENTRY_CHECKED_ATTR, True))
    assert [p.message for p in problems] == ["variable 'n' is not defined"]


def _block_func() -> PrimFunc:
    a = buf("A", (16,))
    i = Var("i")
    vi = IterVar(Var("vi"), Range(const(0), const(16)), IterKind.SPATIAL)
    block = Block((vi,), (), (), "B", BufferStore(a, const(0.0), (vi.var,)))
    return func(loop(i, 16, BlockRealize((i,), const(True), block)), a)


def test_blocks_are_accepted_before_lowering() -> None:
    verify_well_formed(_block_func())


def test_lowered_forbids_blocks() -> None:
    fails(_block_func(), "block 'B' remains in lowered IR", lowered=True)


def test_lowered_forbids_reduce() -> None:
    a = buf("A", (16,))
    b = buf("B", (1,))
    k = IterVar(Var("k"), Range(const(0), const(16)), IterKind.REDUCE)
    red = Reduce(ReduceKind.SUM, a[k.var], (k,))
    f = func(BufferStore(b, red, (const(0),)), a, b)
    verify_well_formed(f)
    fails(f, r"Reduce \(sum\) remains in lowered IR", lowered=True)


def test_lowered_forbids_nd_access() -> None:
    a = buf("A", (4, 4))
    f = func(BufferStore(a, const(0.0), (const(0), const(1))), a)
    verify_well_formed(f)
    fails(f, "store of buffer 'A' is 2-d in lowered IR", lowered=True)


def test_block_iter_var_used_outside_block() -> None:
    a = buf("A", (16,))
    i = Var("i")
    vi = IterVar(Var("vi"), Range(const(0), const(16)), IterKind.SPATIAL)
    block = Block((vi,), (), (), "B", BufferStore(a, const(0.0), (vi.var,)))
    body = loop(
        i,
        16,
        SeqStmt((BlockRealize((i,), const(True), block), BufferStore(a, const(1.0), (vi.var,)))),
    )
    fails(func(body, a), "block iteration variable 'vi' is used outside its scope")


def test_errors_list_all_problems_and_span() -> None:
    a = buf("A", (16,))
    x, y = Var("x"), Var("y")
    span = Span("k.py", 3, 5, 3, 20)
    body = SeqStmt((BufferStore(a, const(1.0), (x,), span=span), BufferStore(a, const(1.0), (y,))))
    err = fails(func(body, a), r"variable 'x' is not defined \(and 1 more\)")
    assert [p.message for p in err.errors] == [
        "variable 'x' is not defined",
        "variable 'y' is not defined",
    ]
    assert err.span == span
    assert isinstance(err, ValueError)


def test_scalar_params_are_defined() -> None:
    a = buf("A", (16,))
    s = Var("s", "float32")
    verify_well_formed(func(BufferStore(a, s, (IntImm(as_dtype("int32"), 0),)), a, scalars=(s,)))


def test_a_loop_annotation_may_not_read_the_loop_variable() -> None:
    """Expression annotations (``tvmscript.parallel_if``) are evaluated before the loop."""
    a = buf("A", (16,))
    i = Var("i")
    body = BufferStore(a, const(0.0), (i,))
    own = For(i, const(0), const(16), ForKind.PARALLEL, body,
              annotations={"tvmscript.parallel_if": i < 8})
    fails(func(own, a), "variable 'i' is used before its definition")
    outer = For(i, const(0), const(16), ForKind.PARALLEL, body,
                annotations={"tvmscript.parallel_if": a[0] < 8.0})
    verify_well_formed(func(outer, a))
