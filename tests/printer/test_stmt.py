"""Statement printing: scoping forms, memory sugar, loops, blocks, fragments."""

from __future__ import annotations

from textwrap import dedent

import pytest

from irbuilder.ir import (
    Allocate,
    Buffer,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IntImm,
    SeqStmt,
    Var,
    as_dtype,
    const,
    make_data_var,
)
from tvmscript.printer import script

from .corpus import CORPUS, buf, func

F32 = as_dtype("float32")


def body_of(name: str) -> str:
    """The printed body of a corpus function (after the def line), dedented."""
    text = script(CORPUS[name]())
    _, _, rest = text.partition("):\n") if "->" not in text else text.partition(":\n")
    return dedent(rest)


def test_let_stmt_in_tail_position_is_concise() -> None:
    assert body_of("let_stmt_tail") == dedent("""\
        for i in range(4):
            x: T.int32 = i * 2
            A[i] = T.Cast("float32", x + 1)
        """)


def test_let_stmt_followed_by_siblings_uses_with_form() -> None:
    assert body_of("let_stmt_scoped") == dedent("""\
        with T.LetStmt(A[0] * T.float32(2)) as x:
            A[1] = x
        A[2] = T.float32(3)
        """)


def test_scoped_allocations_use_with_forms() -> None:
    assert body_of("allocate_sugar_scoped") == dedent("""\
        with T.decl_buffer((4,), "float32", scope="local") as tmp:
            for i in range(4):
                tmp[i] = A[i]
        A[0] = T.float32(0)
        """)
    assert body_of("allocate_raw_scoped") == dedent("""\
        with T.allocate([16], "float32", "shared", annotations={"pragma": 1}) as scratch:
            flat = T.decl_buffer((16,), "float32", data=scratch, scope="shared")
            flat[3] = A[1]
        with T.decl_buffer((2, 2), "float32", data=A.data) as A_view:
            T.evaluate(0)
        T.evaluate(1)
        """)


def test_allocate_condition_prints_as_keyword() -> None:
    assert 'D = T.allocate([n], "float32", "global", condition=n > 0)' in body_of(
        "allocate_condition"
    )


def test_implicit_allocation_needs_matching_extent_and_type() -> None:
    A = buf("A", (4,))
    data = make_data_var("t_data", F32)
    tmp = Buffer("tmp", data, (const(2), const(2)), F32)
    store = BufferStore(tmp, const(1.0), (const(0), const(0)))
    sugar = func("f", [A], Allocate(data, F32, const(4), const(True), DeclBuffer(tmp, store)))
    assert 'tmp = T.decl_buffer((2, 2), "float32")\n' in script(sugar)
    int64_extent = Allocate(data, F32, IntImm(as_dtype("int64"), 4), const(True),
                            DeclBuffer(tmp, store))  # fmt: skip
    assert 'T.allocate([T.int64(4)], "float32", "global")' in script(func("g", [A], int64_extent))


def test_loop_kinds() -> None:
    assert "for i in T.parallel(64):" in body_of("loop_parallel")
    assert "for v in T.vectorized(4):" in body_of("loop_vectorized")
    assert "for i in T.unroll(4):" in body_of("loop_unroll")
    assert 'for tx in T.thread_binding(0, 32, thread="threadIdx.x"):' in body_of(
        "loop_thread_binding"
    )
    assert (
        'for i in T.serial(8, annotations={"pragma_unroll_explicit": 1, "pragma_note": "hi"}):'
        in body_of("loop_annotations")
    )
    assert "for i in T.serial(4, 16):" in body_of("loop_nonzero_min")
    # extent 16 - n with min n: the stop prints as 16 and parses back to 16 - n.
    assert "for i in T.serial(n, 16):" in body_of("loop_symbolic_min")
    assert "for i in range(T.int64(4)):" in body_of("loop_int64")


def test_grid_stops_at_dependent_extent() -> None:
    assert body_of("loop_triangular") == dedent("""\
        for i in range(8):
            for j in range(i + 1):
                A[i, j] = T.float32(1)
        """)


def test_grid_stops_at_non_serial_loop() -> None:
    assert body_of("loop_vectorized").startswith(
        "for i in range(4):\n    for v in T.vectorized(4):"
    )


def test_control_flow() -> None:
    assert body_of("if_elif_else") == dedent("""\
        for i in range(8):
            if i < 2:
                A[i] = 0
            elif i < 5:
                A[i] = 1
            else:
                A[i] = 2
        """)
    assert body_of("while_loop") == "while A[0] < 10:\n    A[0] = A[0] + 1\n"
    assert body_of("assert_stmt").startswith(
        'assert n > 0, "ValueError: n must be positive"\nassert n < 100, \'it\\\'s "big"\'\n'
    )


def test_nested_seq_is_flattened() -> None:
    A = buf("A", (2,), "int32")
    s1 = BufferStore(A, const(1), (const(0),))
    s2 = BufferStore(A, const(2), (const(1),))
    nested = SeqStmt((SeqStmt((s1, s2)), Evaluate(const(0))))
    assert script(nested) == "A[0] = 1\nA[1] = 2\nT.evaluate(0)\n"


def test_block_axes_where_and_kinds() -> None:
    assert body_of("block_where_axes") == dedent("""\
        for i, j in T.grid(3, 4):
            with T.block("B"):
                vi = T.axis.spatial(10, i * 4 + j)
                T.where(i * 4 + j < 10)
                T.reads()
                T.writes(A[vi])
                A[vi] = T.float32(1)
        """)
    text = body_of("block_axis_kinds")
    assert 'vs, vr, vc = T.axis.remap("SRC", [i, j, k])' in text
    assert "vo = T.axis.opaque((2, 4), m + 2)" in text
    assert "T.writes(A[0:4, 0:4])" in text


def test_root_block_with_alloc_buffer() -> None:
    assert body_of("block_opaque_root_alloc") == dedent("""\
        with T.block("root"):
            T.reads()
            T.writes()
            scratch = T.alloc_buffer((4,), "float32")
            for i in range(4):
                scratch[i] = A[i]
                A[i] = scratch[i] * T.float32(2)
        """)


def test_vector_statements() -> None:
    assert body_of("vector_ramp_broadcast") == dedent("""\
        for i in range(4):
            B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(T.float32(2), 4)
        """)


def test_statement_fragment_prints_free_vars_by_name() -> None:
    i = Var("i")
    A = buf("A", (4,))
    loop = For(i, const(0), const(4), ForKind.SERIAL, BufferStore(A, const(1.0), (i,)))
    assert script(loop) == "for i in range(4):\n    A[i] = T.float32(1)\n"


def test_free_var_in_function_is_declared_at_top() -> None:
    A = buf("A", (4,), "int32")
    m = Var("m")
    text = script(func("f", [A], BufferStore(A, m, (const(0),))))
    assert text.endswith('A: T.Buffer((4,), "int32")):\n    m = T.int32()\n    A[0] = m\n')


def test_unprintable_function_name_is_rejected() -> None:
    A = buf("A", (4,))
    bad = func("not valid", [A], Evaluate(const(0)))
    with pytest.raises(ValueError, match="'not valid'"):
        script(bad)
