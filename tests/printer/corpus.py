"""PrimFuncs built directly with the IR node constructors, one per feature.

Every entry of :data:`CORPUS` is a zero-argument function returning a fresh
PrimFunc, so round-trip and structural-hash tests can walk them all. The IR is
built as the TVMScript parser would build it from the printed text (loop vars
typed like their extents, thread-binding loops carrying an IterVar, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from irbuilder.ir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    Allocate,
    And,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    Broadcast,
    Buffer,
    BufferRegion,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DeclBuffer,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IRModule,
    IterKind,
    IterVar,
    Let,
    LetStmt,
    MatchBufferRegion,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    PrimFunc,
    Ramp,
    Range,
    Reduce,
    ReduceKind,
    Select,
    Shuffle,
    SizeVar,
    Stmt,
    StringImm,
    Sub,
    Var,
    While,
    as_dtype,
    const,
    make_data_var,
    seq,
)

__all__ = ["CORPUS", "MODULES", "buf", "func", "loop"]

CORPUS: dict[str, Callable[[], PrimFunc]] = {}
"""Name -> builder of a fresh PrimFunc."""

MODULES: dict[str, Callable[[], IRModule]] = {}
"""Name -> builder of a fresh IRModule."""

F32 = as_dtype("float32")
I32 = as_dtype("int32")
I64 = as_dtype("int64")
BOOL = as_dtype("bool")


def case(builder: Callable[[], PrimFunc]) -> Callable[[], PrimFunc]:
    """Register ``builder`` in :data:`CORPUS` under its function name."""
    CORPUS[builder.__name__] = builder
    return builder


def buf(
    name: str,
    shape: Sequence[Any],
    dtype: str = "float32",
    scope: str = "global",
    **kwargs: Any,
) -> Buffer:
    """A buffer with its own fresh data var (``<name>_data``)."""
    dt = as_dtype(dtype)
    return Buffer(
        name, make_data_var(f"{name}_data", dt, scope), tuple(shape), dt, scope=scope, **kwargs
    )


def func(
    name: str,
    params: Sequence[Var | Buffer],
    body: Stmt,
    attrs: dict[str, Any] | None = None,
    ret_type: str | None = None,
) -> PrimFunc:
    """A PrimFunc; Buffer params become handle vars mapped in ``buffer_map``."""
    vars_: list[Var] = []
    buffer_map: dict[Var, Buffer] = {}
    for p in params:
        if isinstance(p, Buffer):
            handle = Var(p.name.lower(), as_dtype("handle"))
            buffer_map[handle] = p
            vars_.append(handle)
        else:
            vars_.append(p)
    all_attrs = {"global_symbol": name, **(attrs or {})}
    rt = as_dtype(ret_type) if ret_type is not None else None
    return PrimFunc(tuple(vars_), body, rt, buffer_map, all_attrs)


def loop(
    var: Var,
    extent: Any,
    body: Stmt,
    kind: ForKind = ForKind.SERIAL,
    begin: Any = 0,
    annotations: dict[str, Any] | None = None,
    thread: str | None = None,
) -> For:
    """A For over ``[begin, begin + extent)`` typed like ``var``."""
    b = const(begin, var.dtype) if not isinstance(begin, PrimExpr) else begin
    e = const(extent, var.dtype) if not isinstance(extent, PrimExpr) else extent
    binding = None
    if thread is not None:
        # As T.thread_binding builds it: the IterVar has its own var named after the tag.
        binding = IterVar(Var(thread, var.dtype), Range(b, e), IterKind.THREAD, thread)
    return For(var, b, e, kind, body, binding, annotations or {})


def _dims(*dims: int) -> tuple[PrimExpr, ...]:
    return tuple(const(d) for d in dims)


def _f32(x: float) -> FloatImm:
    return FloatImm(F32, x)


def _i(v: int, dtype: str = "int32") -> IntImm:
    return IntImm(as_dtype(dtype), v)


def _region(buffer: Buffer, *ranges: tuple[Any, Any]) -> BufferRegion:
    return BufferRegion(buffer, tuple(Range.from_min_extent(m, e) for m, e in ranges))


# ---------------------------------------------------------------------------
# Golden functions
# ---------------------------------------------------------------------------


@case
def elemwise() -> PrimFunc:
    A, C = buf("A", (16, 16)), buf("C", (16, 16))
    i, j = Var("i"), Var("j")
    body = loop(i, 16, loop(j, 16, BufferStore(C, A[i, j] * _f32(2.0) + _f32(1.0), (i, j))))
    return func("elemwise", [A, C], body)


@case
def matmul() -> PrimFunc:
    A, B, C = buf("A", (16, 16)), buf("B", (16, 16)), buf("C", (16, 16))
    i, j, k = Var("i"), Var("j"), Var("k")
    vi, vj, vk = Var("vi"), Var("vj"), Var("vk")
    dom = Range.from_min_extent(0, 16)
    block = Block(
        iter_vars=(
            IterVar(vi, dom, IterKind.SPATIAL),
            IterVar(vj, dom, IterKind.SPATIAL),
            IterVar(vk, dom, IterKind.REDUCE),
        ),
        reads=(_region(A, (vi, 1), (vk, 1)), _region(B, (vk, 1), (vj, 1))),
        writes=(_region(C, (vi, 1), (vj, 1)),),
        name_hint="C",
        body=BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
        init=BufferStore(C, _f32(0.0), (vi, vj)),
    )
    realize = BlockRealize((i, j, k), const(True), block)
    nest = loop(i, 16, loop(j, 16, loop(k, 16, realize)))
    root = Block((), (), (), "root", nest)
    return func("matmul", [A, B, C], BlockRealize((), const(True), root))


@case
def alloc_alias() -> PrimFunc:
    A = buf("A", (16, 16))
    i = Var("i")
    data = make_data_var("B_data", F32)
    B = Buffer("B", data, _dims(16, 16), F32)
    B_flat = Buffer("B_flat", data, _dims(256), F32)
    body = loop(
        i,
        256,
        BufferStore(B_flat, _f32(1.0), (i,)),
    )
    inner = seq([body, BufferStore(A, B[0, 0], (_i(0), _i(0)))])
    stmt = Allocate(data, F32, _i(256), const(True), DeclBuffer(B, DeclBuffer(B_flat, inner)))
    return func("alloc_alias", [A], stmt)


@case
def flattened() -> PrimFunc:
    A, C = buf("A", (16, 16)), buf("C", (16, 16))
    A_flat = Buffer("A_flat", A.data, _dims(256), F32)
    C_flat = Buffer("C_flat", C.data, _dims(256), F32)
    i, j = Var("i"), Var("j")
    store = BufferStore(C_flat, A_flat[i * 16 + j], (i * 16 + j,))
    body = DeclBuffer(A_flat, DeclBuffer(C_flat, loop(i, 16, loop(j, 16, store))))
    return func("flattened", [A, C], body)


# ---------------------------------------------------------------------------
# Parameters and buffers
# ---------------------------------------------------------------------------


@case
def symbolic_shape() -> PrimFunc:
    n = Var("n")
    A, B = buf("A", (n,)), buf("B", (n,))
    i = Var("i")
    return func("symbolic_shape", [A, B], loop(i, n, BufferStore(B, A[i], (i,))))


@case
def scalar_param_shape() -> PrimFunc:
    n = Var("n")
    A = buf("A", (n, 4))
    i, j = Var("i"), Var("j")
    body = loop(i, n, loop(j, 4, BufferStore(A, Cast(F32, i + j), (i, j))))
    return func("scalar_param_shape", [n, A], body)


@case
def strided_param() -> PrimFunc:
    s = Var("s")
    A = buf("A", (4, 4), strides=(s, 1), elem_offset=_i(2))
    i = Var("i")
    return func("strided_param", [A], loop(i, 4, BufferStore(A, _f32(0.0), (i, i))))


@case
def scalar_params() -> PrimFunc:
    x, y = Var("x", as_dtype("float32")), Var("y", as_dtype("float64"))
    b = Var("b", as_dtype("bool"))
    A = buf("A", (1,), "float64")
    value = Select(b, Cast(as_dtype("float64"), x) + y, y)
    return func("scalar_params", [x, y, b, A], BufferStore(A, value, (_i(0),)))


@case
def handle_param() -> PrimFunc:
    p = Var("p", as_dtype("handle"))
    q = make_data_var("q", F32)
    call = Call(I32, "consume", (p, q), CallKind.EXTERN)
    return func("handle_param", [p, q], Evaluate(call))


@case
def size_var_shape() -> PrimFunc:
    n = SizeVar("n")
    A = buf("A", (n,), "int32")
    i = Var("i")
    return func("size_var_shape", [A], loop(i, n, BufferStore(A, i, (i,))))


@case
def zero_dim_buffer() -> PrimFunc:
    A, B = buf("A", ()), buf("B", ())
    return func("zero_dim_buffer", [A, B], BufferStore(B, A[()] + _f32(1.0), ()))


@case
def bool_buffer() -> PrimFunc:
    A, B = buf("A", (8,), "bool"), buf("B", (8,), "bool")
    i = Var("i")
    value = Not(A[i]) | (i < 4)
    return func("bool_buffer", [A, B], loop(i, 8, BufferStore(B, value, (i,))))


@case
def int64_indices() -> PrimFunc:
    A = buf("A", (_i(8, "int64"), _i(8, "int64")), "int64")
    i, j = Var("i", as_dtype("int64")), Var("j", as_dtype("int64"))
    body = loop(i, 8, loop(j, 8, BufferStore(A, i * _i(8, "int64") + j, (i, j))))
    return func("int64_indices", [A], body)


@case
def ret_type_and_attrs() -> PrimFunc:
    A = buf("A", (4,))
    body = Evaluate(_i(0))
    return func("ret_type_and_attrs", [A], body, {"tir.noalias": True, "note": "x"}, "int32")


@case
def decl_buffer_layout() -> PrimFunc:
    A = buf("A", (64,))
    view = Buffer("view", A.data, _dims(4, 4), F32, strides=(_i(8), _i(1)), elem_offset=_i(4))
    i = Var("i")
    return func(
        "decl_buffer_layout",
        [A],
        DeclBuffer(view, loop(i, 4, BufferStore(view, _f32(1.0), (i, i)))),
    )


# ---------------------------------------------------------------------------
# Loops
# ---------------------------------------------------------------------------


@case
def loop_parallel() -> PrimFunc:
    A = buf("A", (64,))
    i = Var("i")
    return func(
        "loop_parallel", [A], loop(i, 64, BufferStore(A, _f32(0.0), (i,)), ForKind.PARALLEL)
    )


@case
def loop_vectorized() -> PrimFunc:
    A, B = buf("A", (16,)), buf("B", (16,))
    i, v = Var("i"), Var("v")
    body = BufferStore(B, A[i * 4 + v] + _f32(1.0), (i * 4 + v,))
    inner = loop(v, 4, body, ForKind.VECTORIZED)
    return func("loop_vectorized", [A, B], loop(i, 4, inner))


@case
def loop_unroll() -> PrimFunc:
    A = buf("A", (4,), "int32")
    i = Var("i")
    return func("loop_unroll", [A], loop(i, 4, BufferStore(A, i * i, (i,)), ForKind.UNROLLED))


@case
def loop_thread_binding() -> PrimFunc:
    A = buf("A", (32,))
    tx = Var("tx")
    body = loop(
        tx, 32, BufferStore(A, _f32(1.0), (tx,)), ForKind.THREAD_BINDING, thread="threadIdx.x"
    )
    return func("loop_thread_binding", [A], body)


@case
def loop_annotations() -> PrimFunc:
    A = buf("A", (8,))
    i = Var("i")
    body = loop(
        i,
        8,
        BufferStore(A, _f32(2.0), (i,)),
        annotations={"pragma_unroll_explicit": 1, "pragma_note": "hi"},
    )
    return func("loop_annotations", [A], body)


@case
def loop_nonzero_min() -> PrimFunc:
    A = buf("A", (16,))
    i = Var("i")
    return func("loop_nonzero_min", [A], loop(i, 12, BufferStore(A, _f32(1.0), (i,)), begin=4))


@case
def loop_symbolic_min() -> PrimFunc:
    n = Var("n")
    A = buf("A", (16,))
    i = Var("i")
    body = loop(i, 16 - n, BufferStore(A, _f32(1.0), (i,)), begin=n)
    return func("loop_symbolic_min", [n, A], body)


@case
def loop_triangular() -> PrimFunc:
    A = buf("A", (8, 8))
    i, j = Var("i"), Var("j")
    body = loop(i, 8, loop(j, i + 1, BufferStore(A, _f32(1.0), (i, j))))
    return func("loop_triangular", [A], body)


@case
def loop_int64() -> PrimFunc:
    A = buf("A", (_i(4, "int64"),))
    i = Var("i", as_dtype("int64"))
    return func("loop_int64", [A], loop(i, 4, BufferStore(A, _f32(1.0), (i,))))


@case
def while_loop() -> PrimFunc:
    A = buf("A", (1,), "int32")
    body = While(A[0] < 10, BufferStore(A, A[0] + 1, (_i(0),)))
    return func("while_loop", [A], body)


# ---------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------


@case
def if_elif_else() -> PrimFunc:
    A = buf("A", (8,), "int32")
    i = Var("i")
    branch = IfThenElse(
        i < 2,
        BufferStore(A, _i(0), (i,)),
        IfThenElse(i < 5, BufferStore(A, _i(1), (i,)), BufferStore(A, _i(2), (i,))),
    )
    return func("if_elif_else", [A], loop(i, 8, branch))


@case
def if_then_only() -> PrimFunc:
    A = buf("A", (8,), "int32")
    i = Var("i")
    body = loop(i, 8, IfThenElse(FloorMod(i, _i(2)) == 0, BufferStore(A, i, (i,))))
    return func("if_then_only", [A], body)


@case
def assert_stmt() -> PrimFunc:
    n = Var("n")
    A = buf("A", (4,))
    body = seq(
        [
            AssertStmt(n > 0, StringImm("ValueError: n must be positive")),
            AssertStmt(n < 100, StringImm('it\'s "big"')),
            BufferStore(A, Cast(F32, n), (_i(0),)),
        ]
    )
    return func("assert_stmt", [n, A], body)


@case
def let_stmt_tail() -> PrimFunc:
    A = buf("A", (4,))
    i, x = Var("i"), Var("x")
    body = loop(i, 4, LetStmt(x, i * 2, BufferStore(A, Cast(F32, x + 1), (i,))))
    return func("let_stmt_tail", [A], body)


@case
def let_stmt_scoped() -> PrimFunc:
    A = buf("A", (4,))
    x = Var("x", as_dtype("float32"))
    inner = LetStmt(x, A[0] * _f32(2.0), BufferStore(A, x, (_i(1),)))
    body = seq([inner, BufferStore(A, _f32(3.0), (_i(2),))])
    return func("let_stmt_scoped", [A], body)


@case
def attr_stmt() -> PrimFunc:
    A = buf("A", (4,))
    i = Var("i")
    body = AttrStmt(
        A.data, "storage_alignment", _i(128), loop(i, 4, BufferStore(A, _f32(0.0), (i,)))
    )
    return func("attr_stmt", [A], body)


@case
def nested_seq() -> PrimFunc:
    A = buf("A", (4,), "int32")
    stores: list[Stmt] = [BufferStore(A, _i(k), (_i(k),)) for k in range(4)]
    body = seq([seq(stores[:2]), seq(stores[2:])])
    return func("nested_seq", [A], body)


@case
def evaluate_extern() -> PrimFunc:
    A = buf("A", (4,))
    body = seq(
        [
            Evaluate(Call(I32, "puts", (StringImm("hello"),), CallKind.EXTERN)),
            BufferStore(A, Call(F32, "sinf", (A[0],), CallKind.PURE_EXTERN), (_i(0),)),
        ]
    )
    return func("evaluate_extern", [A], body)


# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------


@case
def allocate_explicit() -> PrimFunc:
    A = buf("A", (8,))
    data = make_data_var("T_data", F32)
    tmp = Buffer("tmp", data, _dims(2, 4), F32)
    i = Var("i")
    inner = seq(
        [
            loop(i, 8, BufferStore(tmp, A[i], (i // 4, i % 4))),
            loop(i2 := Var("i"), 8, BufferStore(A, tmp[i2 // 4, i2 % 4], (i2,))),
        ]
    )
    # extent 9 != 2 * 4: the allocation cannot print as the decl_buffer sugar.
    return func(
        "allocate_explicit", [A], Allocate(data, F32, _i(9), const(True), DeclBuffer(tmp, inner))
    )


@case
def allocate_sugar_scoped() -> PrimFunc:
    A = buf("A", (4,))
    data = make_data_var("tmp_data", F32, "local")
    tmp = Buffer("tmp", data, _dims(4), F32, scope="local")
    i = Var("i")
    alloc = Allocate(
        data, F32, _i(4), const(True), DeclBuffer(tmp, loop(i, 4, BufferStore(tmp, A[i], (i,))))
    )
    body = seq([alloc, BufferStore(A, _f32(0.0), (_i(0),))])
    return func("allocate_sugar_scoped", [A], body)


@case
def allocate_raw_scoped() -> PrimFunc:
    A = buf("A", (4,))
    data = make_data_var("scratch", F32, "shared")
    flat = Buffer("flat", data, _dims(16), F32, scope="shared")
    alloc = Allocate(
        data,
        F32,
        _i(16),
        const(True),
        DeclBuffer(flat, BufferStore(flat, A[1], (_i(3),))),
        annotations={"pragma": 1},
    )
    decl_scoped = DeclBuffer(Buffer("A_view", A.data, _dims(2, 2), F32), Evaluate(_i(0)))
    return func("allocate_raw_scoped", [A], seq([alloc, decl_scoped, Evaluate(_i(1))]))


@case
def allocate_condition() -> PrimFunc:
    n = Var("n")
    A = buf("A", (4,))
    data = make_data_var("D", F32)
    stmt = Allocate(data, F32, n, n > 0, Evaluate(Call(I32, "use", (data,), CallKind.EXTERN)))
    return func("allocate_condition", [n, A], stmt)


# ---------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------


@case
def intrinsics() -> PrimFunc:
    A = buf("A", (4,))
    x = A[0]
    value = Call(F32, "exp", (x,)) + Call(F32, "sqrt", (x,)) * Call(F32, "pow", (x, _f32(2.0)))
    return func("intrinsics", [A], BufferStore(A, value, (_i(1),)))


@case
def call_intrin_unknown() -> PrimFunc:
    A = buf("A", (4,))
    value = Call(F32, "my_fancy_op", (A[0], _i(3)))
    odd = Call(I32, "exp", (A[1],))  # type differs from the argument: needs the long form
    return func(
        "call_intrin_unknown",
        [A],
        seq(
            [
                BufferStore(A, value, (_i(1),)),
                Evaluate(odd),
            ]
        ),
    )


@case
def builtins() -> PrimFunc:
    A, B = buf("A", (4,)), buf("B", (4,), "int32")
    i = Var("i")
    cond = Call(BOOL, "likely", (i < 3,), CallKind.BUILTIN)
    ite = Call(F32, "if_then_else", (cond, A[i], _f32(0.0)), CallKind.BUILTIN)
    reinterp = Call(I32, "reinterpret", (A[i],), CallKind.BUILTIN)
    body = loop(i, 4, seq([BufferStore(A, ite, (i,)), BufferStore(B, reinterp, (i,))]))
    return func("builtins", [A, B], body)


@case
def bitwise_ops() -> PrimFunc:
    A = buf("A", (4,), "uint32")
    x = A[0]
    value = ((x & A[1]) | (x ^ A[2])) << A[3] >> A[1]
    return func("bitwise_ops", [A], BufferStore(A, ~value, (_i(0),)))


@case
def select_cast() -> PrimFunc:
    A, B = buf("A", (8,)), buf("B", (8,), "int8")
    i = Var("i")
    value = Cast(as_dtype("int8"), Select(A[i] > _f32(0.0), A[i], -A[i]))
    return func("select_cast", [A, B], loop(i, 8, BufferStore(B, value, (i,))))


@case
def min_max() -> PrimFunc:
    A = buf("A", (8,), "int32")
    i = Var("i")
    value = Min(Max(i - 2, _i(0)), _i(5))
    return func("min_max", [A], loop(i, 8, BufferStore(A, value, (i,))))


@case
def div_mod_kinds() -> PrimFunc:
    A = buf("A", (4,), "int32")
    F = buf("F", (1,))
    n = Var("n")
    body = seq(
        [
            BufferStore(A, Div(n, _i(3)), (_i(0),)),
            BufferStore(A, Mod(n, _i(3)), (_i(1),)),
            BufferStore(A, FloorDiv(n, _i(3)), (_i(2),)),
            BufferStore(A, FloorMod(n, _i(3)), (_i(3),)),
            BufferStore(F, Div(F[0], _f32(3.0)), (_i(0),)),
        ]
    )
    return func("div_mod_kinds", [n, A, F], body)


@case
def comparisons_logic() -> PrimFunc:
    A = buf("A", (6,), "bool")
    a, b = Var("a"), Var("b")
    body = seq(
        [
            BufferStore(A, EQ(a, b), (_i(0),)),
            BufferStore(A, NE(a, b), (_i(1),)),
            BufferStore(A, And(LT(a, b), Or(LE(a, b), GT(a, b))), (_i(2),)),
            BufferStore(A, Not(GE(a, b)), (_i(3),)),
            BufferStore(A, Or(And(a < 1, b < 2), Not(a == b)), (_i(4),)),
            BufferStore(A, LT(_i(0), a), (_i(5),)),
        ]
    )
    return func("comparisons_logic", [a, b, A], body)


@case
def precedence() -> PrimFunc:
    A = buf("A", (4,), "int32")
    a, b, c = Var("a"), Var("b"), Var("c")
    body = seq(
        [
            BufferStore(A, Mul(Add(a, b), c), (_i(0),)),
            BufferStore(A, Sub(a, Sub(b, c)), (_i(1),)),
            BufferStore(A, Sub(Sub(a, b), c), (_i(2),)),
            BufferStore(A, FloorDiv(a, Mul(b, c)), (_i(3),)),
        ]
    )
    return func("precedence", [a, b, c, A], body)


@case
def folding_guard() -> PrimFunc:
    A = buf("A", (4,), "int32")
    B = buf("B", (2,), "bool")
    body = seq(
        [
            BufferStore(A, Add(_i(1), _i(2)), (_i(0),)),
            BufferStore(A, Mul(_i(3), _i(4)), (_i(1),)),
            BufferStore(A, Min(_i(3), _i(4)), (_i(2),)),
            BufferStore(A, FloorDiv(_i(7), _i(2)), (_i(3),)),
            BufferStore(B, LT(_i(1), _i(2)), (_i(0),)),
            BufferStore(B, And(const(True), const(False)), (_i(1),)),
        ]
    )
    return func("folding_guard", [A, B], body)


@case
def negative_constants() -> PrimFunc:
    A = buf("A", (2,), "int32")
    x = Var("x")
    body = seq(
        [
            BufferStore(A, x * -1, (_i(0),)),
            BufferStore(A, Sub(x, _i(-3)), (_i(1),)),
        ]
    )
    return func("negative_constants", [x, A], body)


@case
def vector_ramp_broadcast() -> PrimFunc:
    A, B = buf("A", (16,)), buf("B", (16,))
    i = Var("i")
    idx = Ramp(i * 4, _i(1), 4)
    value = A[idx] * Broadcast(_f32(2.0), 4)
    return func("vector_ramp_broadcast", [A, B], loop(i, 4, BufferStore(B, value, (idx,))))


@case
def vector_shuffle() -> PrimFunc:
    A, B = buf("A", (8,)), buf("B", (8,))
    lo = A[Ramp(_i(0), _i(1), 4)]
    hi = A[Ramp(_i(4), _i(1), 4)]
    value = Shuffle((lo, hi), (7, 6, 5, 4, 3, 2, 1, 0))
    return func("vector_shuffle", [A, B], BufferStore(B, value, (Ramp(_i(0), _i(1), 8),)))


@case
def let_expr() -> PrimFunc:
    A = buf("A", (4,))
    i, x = Var("i"), Var("x")
    value = Let(x, i * 2, Cast(F32, x * x))
    return func("let_expr", [A], loop(i, 4, BufferStore(A, value, (i,))))


@case
def string_imm_arg() -> PrimFunc:
    A = buf("A", (1,), "int32")
    call = Call(I32, "printf", (StringImm("%d\n"), A[0]), CallKind.EXTERN)
    return func("string_imm_arg", [A], Evaluate(call))


# ---------------------------------------------------------------------------
# Constants of every type
# ---------------------------------------------------------------------------


def _const_case(dtype: str, values: Sequence[int | float | bool]) -> Callable[[], PrimFunc]:
    def build() -> PrimFunc:
        A = buf("A", (len(values),), dtype)
        dt = as_dtype(dtype)
        stores: list[Stmt] = [BufferStore(A, const(v, dt), (_i(k),)) for k, v in enumerate(values)]
        return func(f"const_{dtype}", [A], seq(stores))

    build.__name__ = f"const_{dtype}"
    return case(build)


for _dtype, _values in [
    ("int8", (-128, 127)),
    ("int16", (-3, 300)),
    ("int32", (-(2**31), 2**31 - 1, 0)),
    ("int64", (-(2**40), 2**40)),
    ("uint8", (0, 255)),
    ("uint16", (1, 65535)),
    ("uint32", (7, 2**32 - 1)),
    ("uint64", (0, 2**64 - 1)),
    ("float16", (0.5, -2.0)),
    ("float32", (1.5, 0.1, -0.0, 1e-30)),
    ("float64", (2.0, 3.141592653589793)),
    ("bool", (True, False)),
]:
    _const_case(_dtype, _values)


@case
def special_floats() -> PrimFunc:
    A = buf("A", (3,))
    B = buf("B", (2,), "float64")
    body = seq(
        [
            BufferStore(A, _f32(float("inf")), (_i(0),)),
            BufferStore(A, _f32(float("-inf")), (_i(1),)),
            BufferStore(A, _f32(float("nan")), (_i(2),)),
            BufferStore(B, FloatImm(as_dtype("float64"), float("inf")), (_i(0),)),
            BufferStore(B, FloatImm(as_dtype("float64"), 1e300), (_i(1),)),
        ]
    )
    return func("special_floats", [A, B], body)


@case
def mixed_width_arith() -> PrimFunc:
    A = buf("A", (1,), "int64")
    x = Var("x")
    value = Cast(I64, x) + _i(1, "int64")
    return func("mixed_width_arith", [x, A], BufferStore(A, value, (_i(0),)))


# ---------------------------------------------------------------------------
# Blocks
# ---------------------------------------------------------------------------


def _simple_block(
    name: str,
    iter_vars: Sequence[IterVar],
    values: Sequence[PrimExpr],
    body: Stmt,
    reads: Sequence[BufferRegion] = (),
    writes: Sequence[BufferRegion] = (),
    predicate: PrimExpr | None = None,
    **kwargs: Any,
) -> BlockRealize:
    block = Block(tuple(iter_vars), tuple(reads), tuple(writes), name, body, **kwargs)
    return BlockRealize(tuple(values), predicate if predicate is not None else const(True), block)


@case
def block_where_axes() -> PrimFunc:
    A = buf("A", (10,))
    i, j = Var("i"), Var("j")
    vi = Var("vi")
    iv = IterVar(vi, Range.from_min_extent(0, 10), IterKind.SPATIAL)
    blk = _simple_block(
        "B",
        [iv],
        [i * 4 + j],
        BufferStore(A, _f32(1.0), (vi,)),
        writes=[_region(A, (vi, 1))],
        predicate=i * 4 + j < 10,
    )
    return func("block_where_axes", [A], loop(i, 3, loop(j, 4, blk)))


@case
def block_axis_kinds() -> PrimFunc:
    A = buf("A", (4, 4))
    i, j, k, m = Var("i"), Var("j"), Var("k"), Var("m")
    ivs = [
        IterVar(Var("vs"), Range.from_min_extent(0, 4), IterKind.SPATIAL),
        IterVar(Var("vr"), Range.from_min_extent(0, 4), IterKind.REDUCE),
        IterVar(Var("vc"), Range.from_min_extent(0, 4), IterKind.SCAN),
        IterVar(Var("vo"), Range.from_min_extent(2, 2), IterKind.OPAQUE),
    ]
    body = BufferStore(A, _f32(0.0), (ivs[0].var, ivs[1].var))
    blk = _simple_block("K", ivs, [i, j, k, m + 2], body, reads=[], writes=[A.full_region()])
    nest = loop(i, 4, loop(j, 4, loop(k, 4, loop(m, 2, blk))))
    return func("block_axis_kinds", [A], nest)


@case
def block_alloc_match_attr() -> PrimFunc:
    A = buf("A", (8, 8))
    i = Var("i")
    vi = Var("vi")
    iv = IterVar(vi, Range.from_min_extent(0, 2), IterKind.SPATIAL)
    tmp = buf("tmp", (4,), scope="local")
    sub = buf("sub", (4, 8))
    src = A[vi * 4 : vi * 4 + 4, 0:8]  # extent vi * 4 + 4 - vi * 4, as the parser builds it
    body = seq(
        [
            BufferStore(tmp, sub[0, 0], (_i(0),)),
            BufferStore(sub, tmp[0], (_i(1), _i(1))),
        ]
    )
    blk = _simple_block(
        "blk",
        [iv],
        [i],
        body,
        reads=[src],
        writes=[src],
        alloc_buffers=(tmp,),
        match_buffers=(MatchBufferRegion(sub, src),),
        annotations={"meta_schedule.tiling": "SSR", "level": _i(2)},
    )
    return func("block_alloc_match_attr", [A], loop(i, 2, blk))


@case
def block_opaque_root_alloc() -> PrimFunc:
    A = buf("A", (4,))
    scratch = buf("scratch", (4,))
    i = Var("i")
    inner = loop(
        i, 4, seq([BufferStore(scratch, A[i], (i,)), BufferStore(A, scratch[i] * _f32(2.0), (i,))])
    )
    root = Block((), (), (), "root", inner, alloc_buffers=(scratch,))
    return func("block_opaque_root_alloc", [A], BlockRealize((), const(True), root))


@case
def block_region_slices() -> PrimFunc:
    A, B = buf("A", (16, 16)), buf("B", (16,))
    i = Var("i")
    vi = Var("vi")
    iv = IterVar(vi, Range.from_min_extent(0, 4), IterKind.SPATIAL)
    reads = [A[vi * 4 : vi * 4 + 4, 0:16]]
    writes = [B[vi * 4 : vi * 4 + 4]]
    body = BufferStore(B, A[vi * 4, 0], (vi * 4,))
    blk = _simple_block("S", [iv], [i], body, reads=reads, writes=writes)
    return func("block_region_slices", [A, B], loop(i, 4, blk))


@case
def reduce_sum() -> PrimFunc:
    A, B = buf("A", (4, 8)), buf("B", (4,))
    i = Var("i")
    k = IterVar(Var("k"), Range.from_min_extent(0, 8), IterKind.REDUCE)
    value = Reduce(ReduceKind.SUM, A[i, k.var], (k,))
    return func("reduce_sum", [A, B], loop(i, 4, BufferStore(B, value, (i,))))


@case
def reduce_kinds() -> PrimFunc:
    A = buf("A", (4,), "int32")
    B = buf("B", (4,), "bool")
    k = IterVar(Var("k"), Range.from_min_extent(0, 4), IterKind.REDUCE)
    r = IterVar(Var("r"), Range.from_min_extent(1, 3), IterKind.REDUCE)
    body = seq(
        [
            BufferStore(A, Reduce(ReduceKind.PROD, A[k.var], (k,)), (_i(0),)),
            BufferStore(A, Reduce(ReduceKind.MAX, A[r.var], (r,), r.var > 1), (_i(1),)),
            BufferStore(A, Reduce(ReduceKind.MIN, A[k.var], (k,)), (_i(2),)),
            BufferStore(B, Reduce(ReduceKind.ALL, B[k.var], (k,)), (_i(0),)),
            BufferStore(B, Reduce(ReduceKind.ANY, B[k.var], (k,)), (_i(1),)),
        ]
    )
    return func("reduce_kinds", [A, B], body)


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------


@case
def name_clash() -> PrimFunc:
    A = buf("A", (4, 4))
    i1, i2 = Var("i"), Var("i")
    return func("name_clash", [A], loop(i1, 4, loop(i2, 4, BufferStore(A, _f32(0.0), (i1, i2)))))


@case
def name_keywords() -> PrimFunc:
    A = buf("lambda", (4,))
    t = Var("T")
    v = Var("for")
    w = Var("x.y")
    body = loop(v, 4, LetStmt(w, v + t, BufferStore(A, Cast(F32, w), (v,))))
    return func("name_keywords", [t, A], body)


@case
def name_buffer_var_clash() -> PrimFunc:
    A = buf("A", (4,))
    a = Var("A")
    return func("name_buffer_var_clash", [a, A], BufferStore(A, Cast(F32, a), (_i(0),)))


# ---------------------------------------------------------------------------
# Lowered-style entry code
# ---------------------------------------------------------------------------


@case
def lowered_entry() -> PrimFunc:
    a = Var("a", as_dtype("handle"))
    data = make_data_var("A_data", F32)
    n = Var("n", as_dtype("int64"))
    flat = Buffer("A_flat", data, (n,), F32)
    i = Var("i", as_dtype("int64"))
    checks = [
        AssertStmt(
            EQ(Call(I32, "array_ndim", (a,), CallKind.BUILTIN), _i(1)),
            StringImm("ValueError: a: expected 1 dimension"),
        ),
        AssertStmt(
            Call(BOOL, "array_dtype_is", (a, StringImm("float32")), CallKind.BUILTIN),
            StringImm("TypeError: a: expected float32"),
        ),
    ]
    body = LetStmt(
        data,
        Call(as_dtype("handle"), "array_data", (a,), CallKind.BUILTIN),
        LetStmt(
            n,
            Call(I64, "array_shape", (a, _i(0)), CallKind.BUILTIN),
            DeclBuffer(flat, loop(i, n, BufferStore(flat, _f32(0.0), (i,)))),
        ),
    )
    return func("lowered_entry", [a], seq([*checks, body]))


# ---------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------


def _two_funcs() -> IRModule:
    return IRModule({"elemwise": elemwise(), "matmul": matmul()})


MODULES["two_funcs"] = _two_funcs


def _module_attrs() -> IRModule:
    return IRModule({"main": loop_parallel()}, {"target": "llvm"})


MODULES["module_attrs"] = _module_attrs
