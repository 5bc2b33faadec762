"""flatten_buffer: flat DeclBuffer aliases, strides, elem_offset, Ramp indices."""

# The IR constructors convert Python ints and dtype strings at run time; their
# annotations name the converted types, so literal shapes/dtypes are fine here.
# mypy: disable-error-code=arg-type

from __future__ import annotations

import pytest

from irbuilder.ir import (
    Allocate,
    Buffer,
    BufferStore,
    DeclBuffer,
    For,
    ForKind,
    PrimFunc,
    Ramp,
    SeqStmt,
    Stmt,
    Var,
    as_dtype,
    assert_structural_equal,
    const,
    make_data_var,
)
from lowering import flatten_buffer, verify_well_formed

F32 = as_dtype("float32")


def buf(name: str, shape: tuple[object, ...], **kw: object) -> Buffer:
    return Buffer(name, make_data_var(f"{name}_data", F32), shape, F32, **kw)


def loop(var: Var, extent: object, body: Stmt) -> For:
    return For(
        var,
        const(0),
        extent if not isinstance(extent, int) else const(extent),
        ForKind.SERIAL,
        body,
    )


def func(body: Stmt, *buffers: Buffer) -> PrimFunc:
    handles = [Var(f"{b.name}_handle", "handle") for b in buffers]
    return PrimFunc(tuple(handles), body, buffer_map=dict(zip(handles, buffers)))


def elemwise() -> tuple[PrimFunc, Buffer, Buffer, Var, Var]:
    a, c = buf("A", (16, 16)), buf("C", (16, 16))
    i, j = Var("i"), Var("j")
    body = loop(i, 16, loop(j, 16, BufferStore(c, a[i, j], (i, j))))
    return func(body, a, c), a, c, i, j


def test_elemwise_lowers_exactly_to_the_design_form() -> None:
    """DESIGN.md section 3: A_flat/C_flat aliases over A.data/C.data, index i * 16 + j."""
    f, _, _, _, _ = elemwise()
    out = flatten_buffer(f)
    verify_well_formed(out, lowered=True)

    # the expected form, built by hand from fresh objects
    a, c = buf("A", (16, 16)), buf("C", (16, 16))
    a_flat = Buffer("A_flat", a.data, (256,), "float32")
    c_flat = Buffer("C_flat", c.data, (256,), "float32")
    i, j = Var("i"), Var("j")
    ha, hc = Var("A_handle", "handle"), Var("C_handle", "handle")
    expected = PrimFunc(
        (ha, hc),
        DeclBuffer(
            a_flat,
            DeclBuffer(
                c_flat,
                loop(i, 16, loop(j, 16, BufferStore(c_flat, a_flat[i * 16 + j], (i * 16 + j,)))),
            ),
        ),
        buffer_map={ha: a, hc: c},
    )
    assert_structural_equal(out, expected)
    # buffer_map keeps the logical shapes
    assert [b.ndim for b in out.buffer_map.values()] == [2, 2]


def test_flat_alias_shares_the_data_var() -> None:
    f, a, c, _, _ = elemwise()
    out = flatten_buffer(f)
    assert isinstance(out.body, DeclBuffer) and out.body.buffer.data is a.data
    assert isinstance(out.body.body, DeclBuffer) and out.body.body.buffer.data is c.data
    assert out.body.buffer.name == "A_flat"


def test_three_dims_row_major() -> None:
    a = buf("A", (2, 3, 4))
    i, j, k = Var("i"), Var("j"), Var("k")
    out = flatten_buffer(func(BufferStore(a, const(0.0), (i, j, k)), a))
    store = out.body.body  # type: ignore[attr-defined]
    assert_structural_equal(store.indices, ((i * 3 + j) * 4 + k,))
    assert_structural_equal(out.body.buffer.shape, (const(24),))  # type: ignore[attr-defined]


def test_strided_buffer_uses_strides() -> None:
    a = buf("A", (4, 4), strides=(const(8), const(1)))
    i, j = Var("i"), Var("j")
    out = flatten_buffer(func(BufferStore(a, const(0.0), (i, j)), a))
    decl = out.body
    assert isinstance(decl, DeclBuffer)
    # extent covers the last element: 1 + 3 * 8 + 3 * 1
    assert_structural_equal(decl.buffer.shape, (const(28),))
    assert_structural_equal(decl.body.indices, (i * 8 + j,))  # type: ignore[attr-defined]
    wrapped = flatten_buffer(func(loop(i, 4, loop(j, 4, BufferStore(a, const(0.0), (i, j)))), a))
    verify_well_formed(wrapped, lowered=True)


def test_elem_offset_is_added_to_the_index() -> None:
    a = buf("A", (4, 4), elem_offset=const(5))
    i, j = Var("i"), Var("j")
    out = flatten_buffer(func(BufferStore(a, const(0.0), (i, j)), a))
    decl = out.body
    assert isinstance(decl, DeclBuffer)
    assert_structural_equal(decl.buffer.shape, (const(21),))
    assert_structural_equal(decl.body.indices, (i * 4 + j + 5,))  # type: ignore[attr-defined]
    assert_structural_equal(decl.buffer.elem_offset, const(0))


def test_symbolic_shape_index_and_extent() -> None:
    n, m = Var("n"), Var("m")
    a = buf("A", (n, m))
    i, j = Var("i"), Var("j")
    out = flatten_buffer(func(loop(i, n, loop(j, m, BufferStore(a, const(1.0), (i, j)))), a))
    verify_well_formed(out, lowered=True)
    assert isinstance(out.body, DeclBuffer)
    assert_structural_equal(out.body.buffer.shape, (n * m,))
    store = out.body.body.body.body  # type: ignore[attr-defined]
    assert_structural_equal(store.indices, (i * m + j,))


def test_ramp_in_last_dim_stays_a_ramp() -> None:
    a, b = buf("A", (4, 8)), buf("B", (4, 8))
    i = Var("i")
    ramp = Ramp(const(0), const(1), 8)
    out = flatten_buffer(func(loop(i, 4, BufferStore(b, a[i, ramp], (i, ramp))), a, b))
    verify_well_formed(out, lowered=True)
    store = out.body.body.body.body  # type: ignore[attr-defined]
    assert_structural_equal(store.indices, (Ramp(i * 8, const(1), 8),))
    assert store.value.dtype == as_dtype("float32x8")


def test_declared_buffer_gets_alias_inside_its_declaration() -> None:
    a = buf("A", (8,))
    tmp = buf("T", (2, 4))
    i = Var("i")
    inner = loop(i, 8, BufferStore(a, tmp[i // 4, i % 4], (i,)))
    body = Allocate(tmp.data, F32, const(8), const(True), DeclBuffer(tmp, inner))
    out = flatten_buffer(func(body, a))
    verify_well_formed(out, lowered=True)
    a_flat = Buffer("A_flat", a.data, (8,), F32)
    t_flat = Buffer("T_flat", tmp.data, (8,), F32)
    expected_inner = loop(i, 8, BufferStore(a_flat, t_flat[(i // 4) * 4 + i % 4], (i,)))
    expected = DeclBuffer(
        a_flat,
        Allocate(
            tmp.data,
            F32,
            const(8),
            const(True),
            DeclBuffer(tmp, DeclBuffer(t_flat, expected_inner)),
        ),
    )
    assert_structural_equal(out.body, expected)


def test_flat_declared_buffer_is_used_directly() -> None:
    a = buf("A", (8,))
    tmp = buf("T", (8,))
    i = Var("i")
    body = Allocate(
        tmp.data,
        F32,
        const(8),
        const(True),
        DeclBuffer(
            tmp,
            loop(i, 8, SeqStmt((BufferStore(tmp, const(0.0), (i,)), BufferStore(a, tmp[i], (i,))))),
        ),
    )
    out = flatten_buffer(func(body, a))
    decl = out.body.body.body  # type: ignore[attr-defined]
    assert isinstance(decl, DeclBuffer) and decl.buffer is tmp
    assert not isinstance(decl.body, DeclBuffer)


def test_unaccessed_param_gets_no_alias() -> None:
    a, unused = buf("A", (2, 2)), buf("U", (2, 2))
    out = flatten_buffer(func(BufferStore(a, const(0.0), (const(1), const(1))), a, unused))
    assert isinstance(out.body, DeclBuffer) and out.body.buffer.data is a.data
    assert_structural_equal(out.body.body.indices, (const(3),))  # type: ignore[attr-defined]


def test_axis_separators_are_rejected() -> None:
    a = buf("A", (4, 4), axis_separators=(1,))
    with pytest.raises(ValueError, match="axis_separators are not supported by the CPU backend"):
        flatten_buffer(func(BufferStore(a, const(0.0), (const(0), const(0))), a))


def test_blocks_must_be_lowered_first() -> None:
    from irbuilder.ir import Block, BlockRealize

    a = buf("A", (4,))
    blk = Block((), (), (), "B", BufferStore(a, const(0.0), (const(0),)))
    with pytest.raises(ValueError, match="block 'B' remains; run lower_blocks first"):
        flatten_buffer(func(BlockRealize((), const(True), blk), a))


def test_undeclared_buffer_is_reported() -> None:
    a, ghost = buf("A", (4,)), buf("Ghost", (4,))
    with pytest.raises(ValueError, match="buffer 'Ghost' is accessed but not declared"):
        flatten_buffer(func(BufferStore(a, ghost[0], (const(0),)), a))


def test_spans_survive_flattening() -> None:
    from irbuilder.ir import Span

    span = Span("k.py", 4, 8, 4, 30)
    a = buf("A", (2, 2))
    i = Var("i")
    store = BufferStore(a, a[i, 0] + 1.0, (i, const(1)), span=span)
    out = flatten_buffer(func(loop(i, 2, store), a))
    new_store = out.body.body.body  # type: ignore[attr-defined]
    assert isinstance(new_store, BufferStore) and new_store.span == span
