"""Whole functions, before and after lowering, run by the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from interp_helpers import buf, func, loop, store

from backend.interp import interpret
from irbuilder.ir import (
    Allocate,
    AssertStmt,
    Block,
    BlockRealize,
    Broadcast,
    Buffer,
    BufferLoad,
    Call,
    CallKind,
    DeclBuffer,
    Evaluate,
    FloatImm,
    ForKind,
    IfThenElse,
    IterKind,
    IterVar,
    Let,
    LetStmt,
    MatchBufferRegion,
    PrimExpr,
    Ramp,
    Range,
    Reduce,
    ReduceKind,
    SeqStmt,
    Shuffle,
    SizeVar,
    Stmt,
    StringImm,
    Var,
    While,
    as_dtype,
    const,
)

F32 = as_dtype("float32")


def _iv(name: str, extent: int, kind: IterKind = IterKind.SPATIAL) -> IterVar:
    return IterVar(Var(name), Range.from_min_extent(0, extent), kind)


def _realize(
    values: tuple[PrimExpr, ...],
    iter_vars: tuple[IterVar, ...],
    body: Stmt,
    *,
    init: Stmt | None = None,
    predicate: PrimExpr | bool = True,
    alloc: tuple[Buffer, ...] = (),
    match: tuple[MatchBufferRegion, ...] = (),
    name: str = "blk",
) -> BlockRealize:
    block = Block(iter_vars, (), (), name, body, init, alloc, match)
    return BlockRealize(
        values, const(predicate) if isinstance(predicate, bool) else predicate, block
    )


def test_elementwise() -> None:
    a, b = buf("A", (4, 5)), buf("B", (4, 5))
    body = loop("i", 4, lambda i: loop("j", 5, lambda j: store(b, [i, j], a[i, j] * 2.0 + 1.0)))
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    y = np.zeros_like(x)
    interpret(func([a, b], body), [x, y])
    np.testing.assert_array_equal(y, x * 2 + 1)


def _matmul_blocks(n: int) -> tuple[Buffer, Buffer, Buffer, Stmt]:
    a, b, c = buf("A", (n, n)), buf("B", (n, n)), buf("C", (n, n))
    vi, vj = _iv("vi", n), _iv("vj", n)
    vk = _iv("vk", n, IterKind.REDUCE)

    def body(i: Var, j: Var, k: Var) -> Stmt:
        return _realize(
            (i, j, k),
            (vi, vj, vk),
            store(c, [vi.var, vj.var], c[vi.var, vj.var] + a[vi.var, vk.var] * b[vk.var, vj.var]),
            init=store(c, [vi.var, vj.var], FloatImm(F32, 0.0)),
            name="C",
        )

    nest = loop("i", n, lambda i: loop("j", n, lambda j: loop("k", n, lambda k: body(i, j, k))))
    return a, b, c, nest


def test_matmul_block_with_init_and_reduce_axis() -> None:
    a, b, c, nest = _matmul_blocks(6)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 6)).astype(np.float32)
    y = rng.standard_normal((6, 6)).astype(np.float32)
    z = np.full((6, 6), 99.0, dtype=np.float32)  # init must overwrite this
    interpret(func([a, b, c], nest), [x, y, z])
    np.testing.assert_allclose(z, x @ y, rtol=1e-5, atol=1e-5)


def test_flattened_matmul_matches_blocks() -> None:
    n = 5
    a, b, c, nest = _matmul_blocks(n)
    blocked = func([a, b, c], nest)
    # The lowered form: flat aliases over the same data vars, init as `if k == 0`,
    # entry assertions and data pointers from the entry builtins.
    af = buf("A_flat", (n * n,), data=a.data)
    bf = buf("B_flat", (n * n,), data=b.data)
    cf = buf("C_flat", (n * n,), data=c.data)

    def inner(i: Var, j: Var, k: Var) -> Stmt:
        idx = i * n + j
        return SeqStmt(
            (
                IfThenElse(k == 0, store(cf, [idx], FloatImm(F32, 0.0))),
                store(cf, [idx], cf[idx] + af[i * n + k] * bf[k * n + j]),
            )
        )

    nest2 = loop("i", n, lambda i: loop("j", n, lambda j: loop("k", n, lambda k: inner(i, j, k))))
    flat_body: Stmt = DeclBuffer(af, DeclBuffer(bf, DeclBuffer(cf, nest2)))
    lowered = func([a, b, c], flat_body)
    handles = list(lowered.params)
    for h, buffer in zip(reversed(handles), (c, b, a)):
        flat_body = LetStmt(
            buffer.data, Call(as_dtype("handle"), "array_data", (h,), CallKind.BUILTIN), flat_body
        )
        shape0 = Call(as_dtype("int64"), "array_shape", (h, const(0)), CallKind.BUILTIN)
        ndim = Call(as_dtype("int32"), "array_ndim", (h,), CallKind.BUILTIN)
        is_f32 = Call(
            as_dtype("bool"), "array_dtype_is", (h, StringImm("float32")), CallKind.BUILTIN
        )
        flat_body = SeqStmt(
            (
                AssertStmt(ndim == 2, StringImm(f"ValueError: {h.name} must be 2-d")),
                AssertStmt(is_f32, StringImm(f"TypeError: {h.name} must be float32")),
                AssertStmt(shape0 == const(n, "int64"), StringImm(f"ValueError: {h.name} extent")),
                flat_body,
            )
        )
    lowered = lowered.with_body(flat_body)

    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, n)).astype(np.float32)
    y = rng.standard_normal((n, n)).astype(np.float32)
    z1, z2 = np.full((n, n), np.nan, np.float32), np.zeros((n, n), np.float32)
    interpret(blocked, [x, y, z1])
    interpret(lowered, [x, y, z2], check_args=False)
    np.testing.assert_array_equal(z1, z2)
    # The entry assertions fire with the exception type their message names.
    with pytest.raises(TypeError, match=r"^B must be float32$"):
        interpret(lowered, [x, y.astype(np.float64), z2], check_args=False)
    with pytest.raises(ValueError, match=r"^A must be 2-d$"):
        interpret(lowered, [x.ravel(), y, z2], check_args=False)


def test_where_predicate_skips_block() -> None:
    a = buf("A", (10,))
    vi = _iv("vi", 10)
    nest = loop(
        "i",
        3,
        lambda i: loop(
            "j",
            4,
            lambda j: _realize(
                (i * 4 + j,),
                (vi,),
                store(a, [vi.var], FloatImm(F32, 1.0)),
                predicate=(i * 4 + j < 10),
            ),
        ),
    )
    x = np.zeros(10, np.float32)
    interpret(func([a], nest), [x])  # without the predicate 12 stores would go out of bounds
    np.testing.assert_array_equal(x, np.ones(10))


def test_alloc_buffer_in_root_block_starts_as_garbage() -> None:
    a, b = buf("A", (8,)), buf("B", (8,))
    tmp = buf("tmp", (8,))
    spy = buf("spy", (1,))
    body = SeqStmt(
        (
            store(spy, [0], tmp[0]),  # read before any write: sees the NaN garbage
            loop("i", 8, lambda i: store(tmp, [i], a[i] + 1.0)),
            loop("i", 8, lambda i: store(b, [i], tmp[7 - i] * 2.0)),
        )
    )
    root = _realize((), (), body, alloc=(tmp,), name="root")
    x = np.arange(8, dtype=np.float32)
    y = np.zeros(8, np.float32)
    s = np.zeros(1, np.float32)
    interpret(func([a, b, spy], root), [x, y, s])
    np.testing.assert_array_equal(y, (x[::-1] + 1) * 2)
    assert np.isnan(s[0])


def test_decl_buffer_alias_reinterprets_float_as_int() -> None:
    a, b = buf("A", (4,)), buf("B", (4,), "int32")
    alias = buf("A_bits", (2, 2), "int32", data=a.data)
    body = DeclBuffer(alias, loop("i", 4, lambda i: store(b, [i], alias[i // 2, i % 2])))
    x = np.array([1.0, -2.0, 0.5, np.inf], np.float32)
    y = np.zeros(4, np.int32)
    interpret(func([a, b], body), [x, y])
    np.testing.assert_array_equal(y, x.view(np.int32))


def test_alias_writes_are_visible_through_the_other_view() -> None:
    a = buf("A", (4,), "int32")
    bytes_view = buf("A_u8", (16,), "uint8", data=a.data)
    body = DeclBuffer(bytes_view, store(bytes_view, [4], const(255, "uint8")))
    x = np.zeros(4, np.int32)
    interpret(func([a], body), [x])
    assert list(x) == [0, 255, 0, 0]


def test_allocate_and_decl_buffer_lowered_form() -> None:
    a = buf("A", (6,))
    data = Var("tmp_data", as_dtype("handle"))
    tmp = buf("tmp", (6,), data=data)
    body = Allocate(
        data,
        F32,
        const(6),
        const(True),
        DeclBuffer(
            tmp,
            SeqStmt(
                (
                    loop("i", 6, lambda i: store(tmp, [i], a[i] * a[i])),
                    loop("i", 6, lambda i: store(a, [i], tmp[i] - 1.0)),
                )
            ),
        ),
    )
    x = np.arange(6, dtype=np.float32)
    interpret(func([a], body), [x])
    np.testing.assert_array_equal(x, np.arange(6) ** 2 - 1)


def test_strides_and_elem_offset() -> None:
    # A 3x3 view at offset 1 inside a 16-element array, row stride 5.
    a = buf("A", (16,))
    view = buf("V", (3, 3), data=a.data, strides=(5, 1), elem_offset=1)
    body = DeclBuffer(
        view,
        loop("i", 3, lambda i: loop("j", 3, lambda j: store(view, [i, j], FloatImm(F32, 1.0)))),
    )
    x = np.zeros(16, np.float32)
    interpret(func([a], body), [x])
    expected = np.zeros(16, np.float32)
    for i in range(3):
        expected[1 + 5 * i : 4 + 5 * i] = 1
    np.testing.assert_array_equal(x, expected)


def test_symbolic_strides_bound_from_a_non_contiguous_array() -> None:
    n, s0, s1 = Var("n"), Var("s0"), Var("s1")
    a = buf("A", (n, n), strides=(s0, s1))
    b = buf("B", (n,))
    body = loop("i", n, lambda i: store(b, [i], a[i, i]))
    big = np.arange(36, dtype=np.float32).reshape(6, 6)
    y = np.zeros(3, np.float32)
    interpret(func([a, b], body), [big[::2, ::-2], y])
    np.testing.assert_array_equal(y, np.diag(big[::2, ::-2]))


def test_match_buffer_views_a_region() -> None:
    a = buf("A", (4, 4))
    sub = buf(
        "S",
        (2, 2),
        data=Var("S_data", as_dtype("handle")),
        strides=(Var("ss0"), Var("ss1")),
        elem_offset=Var("off"),
    )
    region = a[1:3, 2:4]
    body = loop("i", 2, lambda i: loop("j", 2, lambda j: store(sub, [i, j], sub[i, j] + 10.0)))
    root = _realize((), (), body, match=(MatchBufferRegion(sub, region),))
    x = np.zeros((4, 4), np.float32)
    interpret(func([a], root), [x])
    expected = np.zeros((4, 4), np.float32)
    expected[1:3, 2:4] = 10
    np.testing.assert_array_equal(x, expected)


def test_reduce_node_sums_over_its_axis() -> None:
    a, b = buf("A", (3, 4)), buf("B", (3,))
    k = _iv("k", 4, IterKind.REDUCE)

    def body(i: Var) -> Stmt:
        return store(b, [i], Reduce(ReduceKind.SUM, a[i, k.var], (k,)))

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.zeros(3, np.float32)
    interpret(func([a, b], loop("i", 3, body)), [x, y])
    np.testing.assert_array_equal(y, x.sum(axis=1))


def test_reduce_max_with_condition() -> None:
    a, b = buf("A", (6,), "int32"), buf("B", (1,), "int32")
    k = _iv("k", 6, IterKind.REDUCE)
    red = Reduce(ReduceKind.MAX, a[k.var], (k,), condition=k.var < 3)
    x = np.array([5, -1, 2, 100, 7, 8], np.int32)
    y = np.zeros(1, np.int32)
    interpret(func([a, b], store(b, [0], red)), [x, y])
    assert y[0] == 5


def test_vector_ramp_load_store_and_broadcast() -> None:
    a, b = buf("A", (16,)), buf("B", (16,))

    def body(i: Var) -> Stmt:
        idx = Ramp(i * 4, const(1), 4)
        return store(b, [idx], a[idx] * Broadcast(FloatImm(F32, 3.0), 4))

    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    interpret(func([a, b], loop("i", 4, body, ForKind.VECTORIZED)), [x, y])
    np.testing.assert_array_equal(y, x * 3)


def test_gather_and_shuffle() -> None:
    a, idx, b = buf("A", (8,)), buf("I", (4,), "int32"), buf("B", (4,))
    gathered = BufferLoad(a, (idx[Ramp(const(0), const(1), 4)],))
    reversed_ = Shuffle((gathered,), (3, 2, 1, 0))
    body = store(b, [Ramp(const(0), const(1), 4)], reversed_)
    x = np.arange(8, dtype=np.float32) * 10
    ind = np.array([7, 0, 3, 3], np.int32)
    y = np.zeros(4, np.float32)
    interpret(func([a, idx, b], body), [x, ind, y])
    np.testing.assert_array_equal(y, x[ind][::-1])


def test_strided_ramp_store() -> None:
    b = buf("B", (8,), "int32")
    body = store(b, [Ramp(const(1), const(2), 4)], Ramp(const(10), const(-3), 4))
    y = np.zeros(8, np.int32)
    interpret(func([b], body), [y])
    assert list(y) == [0, 10, 0, 7, 0, 4, 0, 1]


@pytest.mark.parametrize(
    ("message", "exc", "text"),
    [
        ("TypeError: wrong dtype", TypeError, "wrong dtype"),
        ("ValueError: bad shape", ValueError, "bad shape"),
        ("IndexError: out of range", IndexError, "out of range"),
        ("n must be positive", AssertionError, "n must be positive"),
    ],
)
def test_assert_raises_the_named_exception(message: str, exc: type, text: str) -> None:
    n = Var("n")
    f = func([n], AssertStmt(n > 0, StringImm(message)))
    interpret(f, [1])
    with pytest.raises(exc) as info:
        interpret(f, [0])
    assert type(info.value) is exc
    assert str(info.value) == text


def test_let_while_and_if_then_else_builtin() -> None:
    # Collatz: out[0] walks from n to 1, out[1] counts the steps.
    n, out = Var("n"), buf("out", (2,), "int32")
    v = out[0]
    nxt = Call(as_dtype("int32"), "if_then_else", (v % 2 == 0, v // 2, v * 3 + 1), CallKind.BUILTIN)
    y = Var("y")
    body = SeqStmt(
        (
            store(out, [0], n),
            store(out, [1], const(0)),
            While(
                out[0] != 1,
                SeqStmt(
                    (
                        store(out, [0], Let(y, nxt, y)),
                        store(out, [1], out[1] + 1),
                    )
                ),
            ),
        )
    )
    result = np.zeros(2, np.int32)
    interpret(func([n, out], body), [27, result])
    assert list(result) == [1, 111]


def test_if_then_else_builtin_evaluates_one_side() -> None:
    n, out = Var("n"), buf("out", (1,), "int32")
    safe = Call(
        as_dtype("int32"), "if_then_else", (n != 0, const(100) // n, const(-1)), CallKind.BUILTIN
    )
    f = func([n, out], store(out, [0], safe))
    result = np.zeros(1, np.int32)
    interpret(f, [0, result])
    assert result[0] == -1
    interpret(f, [7, result])
    assert result[0] == 14


def test_likely_assume_and_extern_calls() -> None:
    a = buf("A", (4,))
    i = Var("i")
    likely = Call(as_dtype("bool"), "likely", (i < 4,), CallKind.BUILTIN)
    assume = Evaluate(Call(as_dtype("int32"), "assume", (i >= 0,), CallKind.BUILTIN))
    sqrt = Call(F32, "sqrtf", (a[i],), CallKind.PURE_EXTERN)
    body = loop(
        "i", 4, lambda j: LetStmt(i, j, SeqStmt((assume, IfThenElse(likely, store(a, [i], sqrt)))))
    )
    x = np.array([1, 4, 9, 16], np.float32)
    interpret(func([a], body), [x])
    np.testing.assert_array_equal(x, [1, 2, 3, 4])


def test_memset_extern() -> None:
    a = buf("A", (4,), "int32")
    f = func(
        [a],
        Evaluate(Call(as_dtype("int32"), "memset", (a.data, const(1), const(8)), CallKind.EXTERN)),
    )
    x = np.full(4, -1, np.int32)
    interpret(f, [x])
    assert list(x) == [0x01010101, 0x01010101, -1, -1]


def test_unknown_extern_raises_naming_the_symbol() -> None:
    a = buf("A", (1,))
    f = func([a], store(a, [0], Call(F32, "my_kernel_helper", (a[0],), CallKind.EXTERN)))
    with pytest.raises(NotImplementedError, match="my_kernel_helper"):
        interpret(f, [np.zeros(1, np.float32)])


def test_out_of_bounds_access_raises_index_error() -> None:
    a = buf("A", (4,))
    f = func([a], loop("i", 5, lambda i: store(a, [i], FloatImm(F32, 0.0))))
    with pytest.raises(IndexError, match="'A'"):
        interpret(f, [np.zeros(4, np.float32)])


def test_symbolic_shape_bound_from_array() -> None:
    n = SizeVar("n")
    a, b = buf("A", (n,)), buf("B", (n,))
    f = func([a, b], loop("i", n, lambda i: store(b, [i], a[n - 1 - i])))
    x = np.arange(7, dtype=np.float32)
    y = np.zeros(7, np.float32)
    interpret(f, [x, y])
    np.testing.assert_array_equal(y, x[::-1])


def test_float16_storage() -> None:
    a = buf("A", (3,), "float16")
    f = func([a], loop("i", 3, lambda i: store(a, [i], a[i] * FloatImm(as_dtype("float16"), 3.0))))
    x = np.array([1.0, 0.1, 65504.0], np.float16)
    interpret(f, [x])
    np.testing.assert_array_equal(
        x, np.array([3.0, np.float16(0.1) * np.float16(3), np.inf], np.float16)
    )


def test_fresh_integer_allocation_holds_the_garbage_pattern() -> None:
    out = buf("out", (2,), "int32")
    data = Var("tmp_data", as_dtype("handle"))
    tmp = buf("tmp", (2,), "int32", data=data)
    body = Allocate(
        data,
        as_dtype("int32"),
        const(2),
        const(True),
        DeclBuffer(
            tmp,
            SeqStmt(
                (
                    store(tmp, [1], const(7)),
                    loop("i", 2, lambda i: store(out, [i], tmp[i])),
                )
            ),
        ),
    )
    y = np.zeros(2, np.int32)
    interpret(func([out], body), [y])
    assert list(y) == [np.array([0xCDCDCDCD], np.uint32).view(np.int32)[0], 7]


def test_variable_out_of_scope_raises_name_error() -> None:
    out = buf("out", (1,), "int32")
    stray = Var("stray")
    with pytest.raises(NameError, match="'stray'"):
        interpret(func([out], store(out, [0], stray + 1)), [np.zeros(1, np.int32)])


def test_bool_and_uint64_buffers() -> None:
    a, flags = buf("A", (3,), "uint64"), buf("F", (3,), "bool")
    body = loop(
        "i",
        3,
        lambda i: SeqStmt(
            (
                store(flags, [i], a[i] > const(2**63, "uint64")),
                store(a, [i], a[i] + const(1, "uint64")),
            )
        ),
    )
    x = np.array([2**64 - 1, 2**63 + 5, 3], np.uint64)
    f = np.zeros(3, np.bool_)
    interpret(func([a, flags], body), [x, f])
    assert list(f) == [True, True, False]
    assert [int(v) for v in x] == [0, 2**63 + 6, 4]


def test_predicate_guards_iter_value_evaluation() -> None:
    a, d = buf("A", (1,), "int32"), Var("d")
    vi = _iv("vi", 10)
    realize = _realize((const(10) // d,), (vi,), store(a, [0], vi.var), predicate=d > 0)
    x = np.zeros(1, np.int32)
    interpret(func([d, a], realize), [0, x])  # the predicate is false: no division by zero
    interpret(func([d, a], realize), [5, x])
    assert x[0] == 2
