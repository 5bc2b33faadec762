"""lower_blocks: init guards, predicates, iter-var substitution, allocations, views, Reduce."""

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
    BufferRegion,
    BufferStore,
    DeclBuffer,
    For,
    ForKind,
    IfThenElse,
    IterKind,
    IterVar,
    MatchBufferRegion,
    PrimExpr,
    PrimFunc,
    Range,
    Reduce,
    ReduceKind,
    SeqStmt,
    Span,
    Stmt,
    Sub,
    Var,
    as_dtype,
    assert_structural_equal,
    const,
    make_data_var,
)
import lowering
from lowering import lower_blocks, verify_well_formed

F32 = as_dtype("float32")


def buf(
    name: str, shape: tuple[object, ...], dtype: str = "float32", data: Var | None = None
) -> Buffer:
    return Buffer(name, data or make_data_var(f"{name}_data", as_dtype(dtype)), shape, dtype)


def loop(var: Var, extent: int, body: Stmt, reduction: str | None = None) -> For:
    marks = {} if reduction is None else {"tvmscript.reduction": reduction}
    return For(var, const(0), const(extent), ForKind.SERIAL, body, annotations=marks)


def func(body: Stmt, *buffers: Buffer) -> PrimFunc:
    handles = [Var(f"{b.name}_handle", "handle") for b in buffers]
    return PrimFunc(tuple(handles), body, buffer_map=dict(zip(handles, buffers)))


def iv(name: str, extent: int, kind: IterKind = IterKind.SPATIAL) -> IterVar:
    return IterVar(Var(name), Range(const(0), const(extent)), kind)


def realize(
    values: tuple[PrimExpr, ...], block: Block, predicate: PrimExpr | None = None
) -> BlockRealize:
    return BlockRealize(values, predicate if predicate is not None else const(True), block)


def matmul(n: int = 16) -> tuple[PrimFunc, Buffer, Buffer, Buffer]:
    a, b, c = buf("A", (n, n)), buf("B", (n, n)), buf("C", (n, n))
    i, j, k = Var("i"), Var("j"), Var("k")
    vi, vj, vk = iv("vi", n), iv("vj", n), iv("vk", n, IterKind.REDUCE)
    init = BufferStore(c, const(0.0), (vi.var, vj.var), span=Span("m.py", 5, 9, 5, 30))
    update = BufferStore(
        c, c[vi.var, vj.var] + a[vi.var, vk.var] * b[vk.var, vj.var], (vi.var, vj.var)
    )
    block = Block((vi, vj, vk), (), (), "C", update, init=init)
    body = loop(i, n, loop(j, n, loop(k, n, realize((i, j, k), block))))
    return func(body, a, b, c), a, b, c


def test_matmul_init_becomes_guarded_store_on_first_reduction_iteration() -> None:
    f, a, b, c = matmul()
    out = lower_blocks(f)
    verify_well_formed(out)
    i, j, k = Var("i"), Var("j"), Var("k")
    expected_body = loop(
        i,
        16,
        loop(
            j,
            16,
            loop(
                k,
                16,
                SeqStmt(
                    (
                        IfThenElse(k == 0, BufferStore(c, const(0.0), (i, j))),
                        BufferStore(c, c[i, j] + a[i, k] * b[k, j], (i, j)),
                    )
                ),
                reduction="sum",  # the declared reduction, for vectorize_reductions
            ),
        ),
    )
    assert_structural_equal(out.body, expected_body, map_free_vars=True)
    # the init's span is kept on the guard
    guard = out.body.body.body.body.seq[0]  # type: ignore[attr-defined]
    assert guard.span == Span("m.py", 5, 9, 5, 30)


def test_init_condition_of_a_split_binding_is_each_loop_at_its_min() -> None:
    # vk = ko * 4 + ki reaches its domain min 0 only with both loops at 0 (positive
    # coefficients, loops from 0): the guard names the loops, as an unsplit one would
    c, a = buf("C", (4,)), buf("A", (4, 8))
    i, ko, ki = Var("i"), Var("ko"), Var("ki")
    vi = iv("vi", 4)
    vk = IterVar(Var("vk"), Range(const(0), const(8)), IterKind.REDUCE)
    block = Block(
        (vi, vk),
        (),
        (),
        "R",
        BufferStore(c, c[vi.var] + a[vi.var, vk.var], (vi.var,)),
        init=BufferStore(c, const(0.0), (vi.var,)),
    )
    body = loop(i, 4, loop(ko, 2, loop(ki, 4, realize((i, ko * 4 + ki), block))))
    out = lower_blocks(func(body, c, a))
    inner = out.body.body.body.body  # type: ignore[attr-defined]
    assert isinstance(inner, SeqStmt) and isinstance(inner.seq[0], IfThenElse)
    assert_structural_equal(inner.seq[0].condition, (ko == 0) & (ki == 0),
                            map_free_vars=True)


def test_init_condition_keeps_a_binding_not_at_its_min_with_the_loops() -> None:
    c, a = buf("C", (4,)), buf("A", (4, 8))
    i, ko, ki = Var("i"), Var("ko"), Var("ki")
    vi = iv("vi", 4)
    vk = IterVar(Var("vk"), Range(const(0), const(8)), IterKind.REDUCE)
    block = Block((vi, vk), (), (), "R", BufferStore(c, c[vi.var] + a[vi.var, vk.var], (vi.var,)),
                  init=BufferStore(c, const(0.0), (vi.var,)))
    # ko * 4 - ki: a negative coefficient, so the loops' minimum is not the only zero
    body = loop(i, 4, loop(ko, 2, loop(ki, 4, realize((i, ko * 4 - ki + 3), block))))
    out = lower_blocks(func(body, c, a))
    inner = out.body.body.body.body  # type: ignore[attr-defined]
    assert_structural_equal(inner.seq[0].condition, ko * 4 - ki + 3 == 0, map_free_vars=True)


def test_where_predicate_becomes_if() -> None:
    a = buf("A", (10,))
    o, t = Var("o"), Var("t")
    vi = iv("vi", 10)
    block = Block((vi,), (), (), "B", BufferStore(a, const(1.0), (vi.var,)))
    body = loop(o, 3, loop(t, 4, realize((o * 4 + t,), block, predicate=o * 4 + t < 10)))
    out = lower_blocks(func(body, a))
    verify_well_formed(out)
    expected = loop(
        o, 3, loop(t, 4, IfThenElse(o * 4 + t < 10, BufferStore(a, const(1.0), (o * 4 + t,))))
    )
    assert_structural_equal(out.body, expected, map_free_vars=True)


def test_root_alloc_buffer_is_placed_around_the_covering_statements() -> None:
    a, b = buf("A", (8,)), buf("B", (8,))
    tmp = buf("T", (2, 4))
    i, j, k = Var("i"), Var("j"), Var("k")
    first = loop(i, 8, BufferStore(b, const(0.0), (i,)))
    produce = loop(j, 8, BufferStore(tmp, a[j], (j // 4, j % 4)))
    consume = loop(k, 8, BufferStore(b, tmp[k // 4, k % 4], (k,)))
    root = Block((), (), (), "root", SeqStmt((first, produce, consume)), alloc_buffers=(tmp,))
    out = lower_blocks(func(realize((), root), a, b))
    verify_well_formed(out)
    expected = SeqStmt(
        (
            first,
            Allocate(
                tmp.data, F32, const(8), const(True), DeclBuffer(tmp, SeqStmt((produce, consume)))
            ),
        )
    )
    assert_structural_equal(out.body, expected)


def test_alloc_sinks_into_if_branch_but_not_into_loops() -> None:
    a = buf("A", (8,))
    acc = buf("acc", (1,))
    i, k = Var("i"), Var("k")
    flag = Var("flag", "bool")
    reduce_loop = loop(k, 8, BufferStore(acc, acc[0] + a[k], (const(0),)))
    inner = IfThenElse(flag, reduce_loop, BufferStore(a, const(0.0), (i,)))
    blk = Block((), (), (), "outer", inner, alloc_buffers=(acc,))
    body = loop(i, 8, realize((), blk))
    handle = Var("A_handle", "handle")
    f = PrimFunc((handle, flag), body, buffer_map={handle: a})
    out = lower_blocks(f)
    verify_well_formed(out)
    alloc = Allocate(acc.data, F32, const(1), const(True), DeclBuffer(acc, reduce_loop))
    expected = loop(i, 8, IfThenElse(flag, alloc, BufferStore(a, const(0.0), (i,))))
    assert_structural_equal(out.body, expected)


def test_match_buffer_becomes_strided_view_with_offset() -> None:
    a = buf("A", (16, 16))
    m = buf("M", (4, 16))
    i, r, c = Var("i"), Var("r"), Var("c")
    vi = iv("vi", 4)
    region = BufferRegion(a, (Range(vi.var * 4, const(4)), Range(const(0), const(16))))
    store = loop(r, 4, loop(c, 16, BufferStore(m, const(0.0), (r, c))))
    block = Block((vi,), (), (), "tile", store, match_buffers=(MatchBufferRegion(m, region),))
    out = lower_blocks(func(loop(i, 4, realize((i,), block)), a))
    verify_well_formed(out)
    view = Buffer(
        "M", a.data, (4, 16), F32, strides=(const(16), const(1)), elem_offset=(i * 4) * 16
    )
    expected = loop(
        i, 4, DeclBuffer(view, loop(r, 4, loop(c, 16, BufferStore(view, const(0.0), (r, c)))))
    )
    assert_structural_equal(out.body, expected)


def test_match_buffer_symbolic_vars_are_substituted() -> None:
    a = buf("A", (8, 8))
    n, s0, off = Var("n"), Var("s0"), Var("off")
    m = Buffer("M", make_data_var("M_data", F32), (n,), F32, strides=(s0,), elem_offset=off)
    region = BufferRegion(a, (Range(const(2), const(1)), Range(const(0), const(8))))
    store = BufferStore(m, const(1.0), (n - 1,))
    block = Block((), (), (), "row", store, match_buffers=(MatchBufferRegion(m, region),))
    out = lower_blocks(func(realize((), block), a))
    verify_well_formed(out)
    assert isinstance(out.body, DeclBuffer)
    view = out.body.buffer
    assert view.data is a.data
    assert_structural_equal(view.shape, (const(8),))
    assert_structural_equal(view.elem_offset, const(16))
    # substitution does not fold (simplify does): n - 1 becomes Sub(8, 1)
    assert_structural_equal(
        out.body.body, BufferStore(view, const(1.0), (Sub(const(8), const(1)),))
    )


def test_reduce_expression_is_computed_into_a_local_temp() -> None:
    a, c = buf("A", (4, 8)), buf("C", (4,))
    i = Var("i")
    k = IterVar(Var("k"), Range(const(0), const(8)), IterKind.REDUCE)
    body = loop(i, 4, BufferStore(c, Reduce(ReduceKind.MAX, a[i, k.var], (k,)) * 2.0, (i,)))
    out = lower_blocks(func(body, a, c))
    verify_well_formed(out, lowered=False)
    tmp = Buffer("max_red", make_data_var("d", F32, "local"), (1,), F32, scope="local")
    from irbuilder.ir import Max

    inner = SeqStmt(
        (
            BufferStore(tmp, const(float("-inf")), (const(0),)),
            For(
                k.var,
                const(0),
                const(8),
                ForKind.SERIAL,
                BufferStore(tmp, Max(tmp[0], a[i, k.var]), (const(0),)),
                annotations={"tvmscript.reduction": "max"},
            ),
            BufferStore(c, tmp[0] * 2.0, (i,)),
        )
    )
    expected = loop(i, 4, Allocate(tmp.data, F32, const(1), const(True), DeclBuffer(tmp, inner)))
    assert_structural_equal(out.body, expected)


def test_block_without_realize_but_with_iter_vars_is_rejected() -> None:
    a = buf("A", (4,))
    vi = iv("vi", 4)
    block = Block((vi,), (), (), "lonely", BufferStore(a, const(0.0), (vi.var,)))
    with pytest.raises(ValueError, match="block 'lonely' has iteration variables"):
        lower_blocks(func(block, a))


def test_function_without_blocks_is_returned_unchanged() -> None:
    a = buf("A", (4,))
    i = Var("i")
    f = func(loop(i, 4, BufferStore(a, const(0.0), (i,))), a)
    assert lower_blocks(f) is f


# -- split reduction loops (as a schedule leaves them) ---------------------------------------


def _split_rowsum() -> PrimFunc:
    from tvmscript import tir as T

    @T.prim_func
    def g(A: T.Buffer((8, 112), "float32"), S: T.Buffer((8,), "float32")):
        for i in range(8):
            for k_0, k_1 in T.grid(7, 16):
                with T.block("sum"):
                    vi = T.axis.spatial(8, i)
                    vk = T.axis.reduce(112, k_0 * 16 + k_1)
                    with T.init():
                        S[vi] = T.float32(0)
                    S[vi] = S[vi] + A[vi, vk]
    return g


def test_the_loops_of_a_split_reduction_are_marked_and_init_at_their_first_iteration() -> None:
    from lowering.transforms.lower_blocks import lower_blocks

    text = lower_blocks(_split_rowsum()).script()
    assert text.count('annotations={"tvmscript.reduction": "sum"}') == 2
    assert "if k_0 == 0 and k_1 == 0:" in text
    assert 'for i in range(8):' in text  # the spatial loop is not a reduction loop


def test_a_loop_a_spatial_binding_reads_is_not_marked() -> None:
    from tvmscript import tir as T
    from lowering.transforms.lower_blocks import lower_blocks

    @T.prim_func
    def window(A: T.Buffer((20,), "float32"), S: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 5):
            with T.block("win"):
                vi = T.axis.spatial(16, i)
                vk = T.axis.reduce(20, i + k)  # i feeds the spatial value too
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vk]

    text = lower_blocks(window).script()
    assert text.count("tvmscript.reduction") == 1
    assert 'for k in T.serial(5, annotations={"tvmscript.reduction": "sum"}):' in text
    # i + k == 0 with both at least 0: both at 0
    assert "if i == 0 and k == 0:" in text


def test_a_match_buffer_the_source_region_contradicts_is_refused() -> None:
    from tvmscript import tir as T

    # one stride var for two dimensions: bound to 8 by the row, asked to be 1 by the column
    # (TVM's LowerMatchBuffer refuses it too); compiled it used to run with s = 8
    @T.prim_func
    def one_stride(A: T.Buffer((8, 8), "float32")):
        for i in range(8):
            with T.block():
                s = T.int32()
                sub = T.match_buffer(A[i, 0:4], (1, 4), strides=[s, s], offset_factor=1)
                for jj in range(4):
                    sub[0, jj] = T.float32(1)

    with pytest.raises(ValueError, match=r"match_buffer 'sub': its strides\[1\] is 8 but the "
                                         r"region of 'A' it matches gives 1"):
        lowering.lower(one_stride)

    from tvmscript import DiagnosticError

    # A constant shape the region contradicts is refused earlier, at its match_buffer line
    # (tests/parser/test_block_declarations.py).
    with pytest.raises(DiagnosticError, match=r"shape\[1\] is 6 but the region of 'A'"):

        @T.prim_func
        def wrong_shape(A: T.Buffer((8, 8), "float32")):
            for i in range(8):
                with T.block():
                    sub = T.match_buffer(A[i, 0:4], (1, 6))
                    sub[0, 0] = T.float32(1)
