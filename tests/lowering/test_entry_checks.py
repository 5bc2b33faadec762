"""insert_entry_checks: ndim/dtype/shape/stride/writability asserts and data/shape bindings."""

# The IR constructors convert Python ints and dtype strings at run time; their
# annotations name the converted types, so literal shapes/dtypes are fine here.
# mypy: disable-error-code=arg-type

from __future__ import annotations

from irbuilder.ir import (
    AssertStmt,
    Buffer,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DeclBuffer,
    FloorDiv,
    For,
    ForKind,
    LetStmt,
    PrimExpr,
    PrimFunc,
    SeqStmt,
    Span,
    Stmt,
    StringImm,
    Var,
    as_dtype,
    assert_structural_equal,
    const,
    format_message,
    make_data_var,
)
from lowering import flatten_buffer, insert_entry_checks, verify_well_formed
from lowering.checks.verifier import ENTRY_CHECKED_ATTR

F32 = as_dtype("float32")
I64 = as_dtype("int64")


def buf(name: str, shape: tuple[object, ...], **kw: object) -> Buffer:
    return Buffer(name, make_data_var(f"{name}_data", F32), shape, F32, **kw)


def builtin(dtype: str, op: str, *args: PrimExpr) -> Call:
    return Call(as_dtype(dtype), op, args, CallKind.BUILTIN)


def func(body: Stmt, *buffers: Buffer) -> tuple[PrimFunc, list[Var]]:
    handles = [Var(f"{b.name.lower()}", "handle") for b in buffers]
    return PrimFunc(tuple(handles), body, buffer_map=dict(zip(handles, buffers))), handles


def template(message: PrimExpr) -> str:
    """The text of an assert message (a format_message's template)."""
    if isinstance(message, StringImm):
        return message.value
    assert isinstance(message, Call) and message.op == "format_message"
    first = message.args[0]
    assert isinstance(first, StringImm)
    return first.value


def messages(stmt: Stmt) -> list[str]:
    """Assert messages and ``let <name>`` entries of the entry preamble, in order."""
    out: list[str] = []
    while True:
        if isinstance(stmt, SeqStmt):
            for s in stmt.seq[:-1]:
                assert isinstance(s, AssertStmt)
                out.append(template(s.message))
            stmt = stmt.seq[-1]
        elif isinstance(stmt, LetStmt):
            out.append(f"let {stmt.var.name}")
            stmt = stmt.body
        elif isinstance(stmt, AssertStmt):
            out.append(template(stmt.message))
            return out
        else:
            return out


def test_constant_shape_checks_exact_ir() -> None:
    a = buf("A", (16,))
    i = Var("i")
    body = For(i, const(0), const(16), ForKind.SERIAL, BufferStore(a, const(0.0), (i,)))
    f, (h,) = func(body, a)
    out = insert_entry_checks(f)
    verify_well_formed(out, lowered=True)
    expected = SeqStmt(
        (
            AssertStmt(
                builtin("int32", "array_ndim", h) == 1,
                format_message(
                    "TypeError: A: expected ndim == 1, got {}", builtin("int32", "array_ndim", h)
                ),
            ),
            AssertStmt(
                builtin("bool", "array_dtype_is", h, StringImm("float32")),
                format_message(
                    "TypeError: A: expected dtype float32, got {}",
                    builtin("handle", "array_descr", h),
                ),
            ),
            AssertStmt(
                builtin("int64", "array_shape", h, const(0)) == const(16, I64),
                format_message(
                    "ValueError: A: expected shape[0] == 16, got {}",
                    builtin("int64", "array_shape", h, const(0)),
                ),
            ),
            AssertStmt(
                (builtin("int64", "array_shape", h, const(0)) <= 1)
                | (builtin("int64", "array_stride", h, const(0)) == const(4, I64)),
                format_message(
                    "ValueError: A: expected a C-contiguous array (strides[0] == 4 bytes), "
                    "got strides[0] == {}",
                    builtin("int64", "array_stride", h, const(0)),
                ),
            ),
            AssertStmt(
                Call(
                    as_dtype("int32"),
                    "bitwise_and",
                    (builtin("int32", "array_flags", h), const(0x400)),
                )
                != 0,
                StringImm("ValueError: A: expected a writable array, got a read-only one"),
            ),
            LetStmt(a.data, builtin("handle", "array_data", h), body),
        )
    )
    assert_structural_equal(out.body, expected)
    assert out.attrs[ENTRY_CHECKED_ATTR] is True


def test_symbolic_dim_bound_once_then_checked() -> None:
    n = Var("n")
    a, b = buf("A", (n, 16)), buf("B", (n,))
    i = Var("i")
    body = For(i, const(0), n, ForKind.SERIAL, BufferStore(b, a[i, 0], (i,)))
    f, (ha, _hb) = func(body, a, b)
    out = insert_entry_checks(flatten_buffer(f))
    verify_well_formed(out, lowered=True)
    assert messages(out.body) == [
        "TypeError: A: expected ndim == 2, got {}",
        "TypeError: A: expected dtype float32, got {}",
        "let n",
        "ValueError: A: expected shape[1] == 16, got {}",
        "ValueError: A: expected a C-contiguous array (strides[1] == 4 bytes), got strides[1] == {}",
        "ValueError: A: expected a C-contiguous array (strides[0] == 64 bytes), got strides[0] == {}",
        "let A_data",
        "TypeError: B: expected ndim == 1, got {}",
        "TypeError: B: expected dtype float32, got {}",
        "ValueError: B: expected shape[0] == n = {}, got {}",
        "ValueError: B: expected a C-contiguous array (strides[0] == 4 bytes), got strides[0] == {}",
        "ValueError: B: expected a writable array, got a read-only one",
        "let B_data",
    ]
    # n is bound from A's first dim; B's dim is compared with it
    seq = out.body
    assert isinstance(seq, SeqStmt)
    let_n = seq.seq[-1]
    assert isinstance(let_n, LetStmt) and let_n.var is n
    assert_structural_equal(
        let_n.value, Cast(as_dtype("int32"), builtin("int64", "array_shape", ha, const(0)))
    )


def test_symbolic_contiguity_uses_bound_dims() -> None:
    n, m = Var("n"), Var("m")
    a = buf("A", (n, m))
    f, _ = func(BufferStore(a, const(0.0), (const(0), const(0))), a)
    out = insert_entry_checks(flatten_buffer(f))
    verify_well_formed(out, lowered=True)
    assert (
        "ValueError: A: expected a C-contiguous array (strides[0] == (4 * m) = {} bytes), "
        "got strides[0] == {}"
    ) in messages(out.body)


def test_read_only_buffer_has_no_writability_check_and_unused_has_no_data() -> None:
    a, c, unused = buf("A", (4,)), buf("C", (4,)), buf("U", (4,))
    f, _ = func(BufferStore(c, a[0], (const(0),)), a, c, unused)
    out = insert_entry_checks(flatten_buffer(f))
    verify_well_formed(out, lowered=True)
    got = messages(out.body)
    assert not any("A: expected a writable array" in m for m in got)
    assert "ValueError: C: expected a writable array, got a read-only one" in got
    assert "let U_data" not in got and "ValueError: U: expected shape[0] == 4, got {}" in got
    assert not any("U: expected a C-contiguous" in m for m in got)


def test_explicit_strides_checked_or_bound() -> None:
    s = Var("s")
    a = buf("A", (4, 4), strides=(const(8), const(1)))
    b = buf("B", (4,), strides=(s,))
    i = Var("i")
    body = For(i, const(0), const(4), ForKind.SERIAL, BufferStore(b, a[i, i], (i,)))
    f, (_ha, hb) = func(body, a, b)
    out = insert_entry_checks(flatten_buffer(f))
    verify_well_formed(out, lowered=True)
    got = messages(out.body)
    assert "ValueError: A: expected strides[0] == 32 bytes, got {}" in got
    assert "ValueError: A: expected strides[1] == 4 bytes, got {}" in got
    assert "let s" in got

    def find_let(stmt: Stmt, var: Var) -> LetStmt:
        while not (isinstance(stmt, LetStmt) and stmt.var is var):
            stmt = stmt.seq[-1] if isinstance(stmt, SeqStmt) else stmt.body  # type: ignore[attr-defined]
        return stmt

    let_s = find_let(out.body, s)
    assert_structural_equal(
        let_s.value,
        Cast(
            as_dtype("int32"),
            FloorDiv(builtin("int64", "array_stride", hb, const(0)), const(4, I64)),
        ),
    )


def test_scalar_params_are_untouched_and_pass_is_idempotent() -> None:
    a = buf("A", (4,))
    x = Var("x", "float32")
    h = Var("a", "handle")
    f = PrimFunc((h, x), BufferStore(a, x, (const(0),)), buffer_map={h: a})
    once = insert_entry_checks(f)
    assert insert_entry_checks(once) is once
    assert isinstance(once.body, SeqStmt)
    assert not any("x" in m.split(":")[1] for m in messages(once.body) if ":" in m)


def test_flat_alias_declarations_stay_inside_the_data_binding() -> None:
    a = buf("A", (2, 2))
    f, _ = func(BufferStore(a, const(1.0), (const(1), const(1))), a)
    out = insert_entry_checks(flatten_buffer(f))
    stmt: Stmt = out.body
    while not isinstance(stmt, DeclBuffer):
        stmt = stmt.seq[-1] if isinstance(stmt, SeqStmt) else stmt.body  # type: ignore[attr-defined]
    assert stmt.buffer.data is a.data
    verify_well_formed(out, lowered=True)


def test_checks_carry_the_buffer_span() -> None:
    span = Span("k.py", 2, 10, 2, 40)
    a = Buffer("A", make_data_var("A_data", F32), (4,), F32, span=span)
    f, _ = func(BufferStore(a, const(0.0), (const(0),)), a)
    out = insert_entry_checks(f)
    assert isinstance(out.body, SeqStmt)
    assert all(s.span == span for s in out.body.seq)
