"""Statements the parser must reject with a located diagnostic (issue #8, item 3), and the
legitimate neighbours of each that must keep working."""

from __future__ import annotations

import sys

import pytest

from irbuilder.ir import AssertStmt, Call, IRModule, PrimFunc, StringImm
from irbuilder.ir.functor import post_order_visit
from tvmscript import DiagnosticError, from_source

HEAD = '@T.prim_func\ndef f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):\n'


def kernel(body: str, head: str = HEAD) -> str:
    return head + "".join(f"    {line}\n" for line in body.split("\n"))


def error(text: str, **kwargs: object) -> DiagnosticError:
    with pytest.raises(DiagnosticError) as info:
        from_source(text, **kwargs)  # type: ignore[arg-type]
    return info.value


def at(err: DiagnosticError) -> tuple[int, int]:
    assert err.span is not None
    return err.span.line, err.span.col


# --------------------------------------------------------------- loop variables


def test_assigning_an_outer_loop_var_in_an_inner_loop_is_rejected() -> None:
    text = kernel("for i in range(16):\n    for j in range(2):\n        i = j\n    B[i] = A[i]")
    err = error(text)
    assert "cannot assign to loop variable 'i'" in err.message
    assert at(err) == (5, 13)


@pytest.mark.parametrize("stmt", ["i += 1", "i: T.int32 = 1", "i = T.meta_var(3)"])
def test_every_binding_form_is_checked_against_loop_vars(stmt: str) -> None:
    err = error(kernel(f"for i in range(16):\n    for j in range(2):\n        {stmt}"))
    assert "loop variable 'i'" in err.message
    assert at(err) == (5, 13)


def test_a_loop_var_of_t_grid_is_protected_too() -> None:
    err = error(kernel("for i, j in T.grid(4, 4):\n    if j > 0:\n        j = 1"))
    assert "cannot assign to loop variable 'j'" in err.message


def test_reusing_a_loop_var_name_after_its_loop_still_binds() -> None:
    f = from_source(kernel("for i in range(16):\n    B[i] = A[i]\ni = 3\nB[i] = A[i]"))
    assert isinstance(f, PrimFunc)


def test_a_parse_time_loop_item_may_be_rebound() -> None:
    f = from_source(kernel("for k in [1, 2]:\n    k = k + 1\n    B[k] = A[k]"))
    assert "B[3]" in f.script()


# ----------------------------------------------------------------- namespaces


@pytest.mark.parametrize("name", ["T", "I", "range"])
def test_rebinding_a_builtin_namespace_is_rejected(name: str) -> None:
    err = error(kernel(f"{name} = 3"))
    assert f"cannot assign to '{name}'" in err.message
    assert at(err) == (3, 5)


def test_rebinding_a_captured_module_name_is_rejected() -> None:
    tx = sys.modules["tvmscript.tir"]
    err = error(kernel("tx = 3"), capture={"tx": tx})
    assert "module 'tvmscript.tir'" in err.message


def test_a_loop_target_cannot_rebind_T() -> None:
    err = error(kernel("for T in range(4):\n    pass"))
    assert "cannot assign to 'T'" in err.message


# -------------------------------------------------------------- tuple targets


def test_tuple_assignment_to_buffer_elements_is_rejected_at_the_target() -> None:
    err = error(kernel("for i in range(16):\n    (B[i], B[0]) = (A[i], A[0])"))
    assert "tuple assignment to buffer elements is not supported" in err.message
    assert at(err) == (4, 9)


def test_nested_and_starred_buffer_targets_are_rejected() -> None:
    err = error(kernel("x, (B[0], *y) = 1, (A[0], 2, 3)"))
    assert "tuple assignment to buffer elements" in err.message


def test_tuple_unpacking_of_python_values_still_works() -> None:
    f = from_source(kernel("a, (b, *c) = 1, (2, 3, 4)\nB[a + b + c[1]] = A[0]"))
    assert "B[7]" in f.script()


# -------------------------------------------------------------- T.axis.remap


def test_remap_bound_to_one_name_is_rejected_at_the_assignment() -> None:
    text = kernel(
        "for i, j in T.grid(4, 4):\n    with T.block('b'):\n"
        "        vi = T.axis.remap('SS', [i, j])\n        B[vi] = A[vi]"
    )
    err = error(text)
    assert "2 block variables" in err.message and "unpack" in err.message
    assert at(err) == (5, 13)


def test_remap_unpacked_or_single_still_works() -> None:
    two = kernel(
        "for i, j in T.grid(4, 4):\n    with T.block('b'):\n"
        "        vi, vj = T.axis.remap('SS', [i, j])\n        B[vi * 4 + vj] = A[vi]"
    )
    one = kernel("for i in range(4):\n    with T.block('b'):\n"
                 "        vi = T.axis.remap('S', [i])\n        B[vi] = A[vi]")
    assert isinstance(from_source(two), PrimFunc)
    assert isinstance(from_source(one), PrimFunc)


def test_remap_with_too_many_targets_is_reported_at_the_target() -> None:
    err = error(kernel(
        "for i, j in T.grid(4, 4):\n    with T.block('b'):\n"
        "        vi, vj, vk = T.axis.remap('SS', [i, j])"
    ))
    assert "unpack" in err.message
    assert at(err)[0] == 5


# ------------------------------------------------------------ assert messages


NHEAD = '@T.prim_func\ndef f(A: T.Buffer((16,), "float32"), n: T.int32):\n'


def _assert_message(f: object) -> object:
    assert isinstance(f, PrimFunc)
    asserts: list[AssertStmt] = []
    post_order_visit(f.body, lambda n: asserts.append(n) if isinstance(n, AssertStmt) else None)
    assert len(asserts) == 1
    return asserts[0].message


def test_an_assert_message_that_is_an_expression_is_rejected() -> None:
    err = error(kernel("for i in range(16):\n    assert i < 16, A[i]", NHEAD))
    assert "assert message must be a string constant or T.format_message" in err.message
    assert at(err) == (4, 24)


@pytest.mark.parametrize("msg", ["n", "42", "[1]"])
def test_non_string_messages_are_rejected(msg: str) -> None:
    err = error(kernel(f"assert n > 0, {msg}", NHEAD))
    assert "assert message" in err.message
    assert at(err) == (3, 19)


def test_string_and_format_message_messages_are_accepted() -> None:
    plain = from_source(kernel('assert n > 0, "n must be positive"', NHEAD))
    assert isinstance(plain, PrimFunc)
    message = _assert_message(plain)
    text = message.value if isinstance(message, StringImm) else message
    assert text == "n must be positive"
    formatted = from_source(kernel('assert n > 0, T.format_message("n = {}", n)', NHEAD))
    call = _assert_message(formatted)
    assert isinstance(call, Call) and call.op == "format_message"


def test_a_string_constant_from_the_capture_is_accepted() -> None:
    f = from_source(kernel("assert n > 0, MSG", NHEAD), capture={"MSG": "bad n"})
    assert isinstance(f, PrimFunc)


# ------------------------------------------------------- definitions and text


def test_prim_func_on_a_class_is_rejected() -> None:
    err = error("@T.prim_func\nclass C:\n    pass\n")
    assert "@T.prim_func needs a function definition" in err.message
    assert at(err) == (2, 1)


def test_ir_module_class_still_parses() -> None:
    text = (
        "@I.ir_module\nclass M:\n    @T.prim_func\n"
        '    def g(A: T.Buffer((4,), "float32")):\n        A[0] = 1.0\n'
    )
    assert isinstance(from_source(text), IRModule)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_a_text_without_definitions_is_reported_at_its_start(text: str) -> None:
    err = error(text)
    assert "defines no @T.prim_func" in err.message
    assert at(err) == (1, 1)


def test_a_null_byte_is_located() -> None:
    err = error(kernel("for i in range(16):\n    B[i] = A[i]\x00"))
    assert "null" in err.message
    assert at(err) == (4, 20)


# ---------------------------------------------------------- deep expressions


def test_a_10000_term_sum_parses() -> None:
    f = from_source(kernel("for i in range(16):\n    B[i] = " + " + ".join(["A[i]"] * 10000)))
    assert isinstance(f, PrimFunc)


def test_5000_nested_unary_minus_parse() -> None:
    f = from_source(kernel("for i in range(16):\n    B[i] = " + "-" * 5000 + "A[i]"))
    assert isinstance(f, PrimFunc)


def test_an_error_at_the_end_of_a_deep_chain_is_located() -> None:
    err = error(kernel("for i in range(16):\n    B[i] = " + "i - " * 10000 + "nope",
                       HEAD.replace("float32", "int32")))
    assert err.message == "name 'nope' is not defined"
    assert at(err) == (4, 16 + 4 * 10000)


def test_a_link_of_a_folded_chain_is_reported_at_that_link() -> None:
    err = error(kernel('for i in range(16):\n    B[i] = A[i] + A[i] + "s" + A[i]'))
    assert at(err) == (4, 16)
    assert err.span is not None and err.span.end_col == 33


def test_a_chain_too_deep_for_python_is_a_located_diagnostic() -> None:
    err = error(kernel("for i in range(16):\n    B[i] = " + " + ".join(["A[i]"] * 40000)))
    assert "nested too deeply" in err.message
    assert at(err) == (4, 9)


def test_the_recursion_limit_is_restored() -> None:
    before = sys.getrecursionlimit()
    from_source(kernel("B[0] = " + " + ".join(["A[0]"] * 5000)))
    assert sys.getrecursionlimit() == before


# --------------------------------------------------------------- block predicates


def test_block_predicate_over_its_own_iter_var_is_rejected() -> None:
    # TVM's well-formedness check refuses it too; the loop variable is what T.where names.
    body = (
        "for i in range(16):\n    with T.block('b'):\n        vi = T.axis.spatial(16, i)\n"
        "        T.where(vi < 6)\n        B[vi] = A[vi]"
    )
    err = error(kernel(body))
    assert "T.where of block 'b' uses the block's own iter var 'vi'" in err.message


def test_block_predicate_over_the_loop_variable_works() -> None:
    import numpy as np

    import tvmscript

    body = (
        "for i in range(16):\n    with T.block('b'):\n        vi = T.axis.spatial(16, i)\n"
        "        T.where(i < 6)\n        B[vi] = A[vi]"
    )
    func = from_source(kernel(body))
    assert isinstance(func, PrimFunc)
    a, b = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    tvmscript.build(func, target="interp")(a, b)
    np.testing.assert_array_equal(b, np.where(np.arange(16) < 6, a, 0))


# ------------------------------------------------------------- handle casts


HHEAD = ('@T.prim_func\ndef f(a: T.handle, c: T.handle):\n'
         '    A = T.match_buffer(a, (8,), "float32")\n'
         '    C = T.match_buffer(c, (8,), "float32")\n')


@pytest.mark.parametrize("expr", ["T.float32(c)", 'T.Cast("float64", c)',
                                  'T.Cast("handle", A[0])'])
def test_a_handle_cast_to_or_from_a_float_is_rejected_where_it_is_written(expr: str) -> None:
    # Once invalid LLVM IR (a ptrtoint to float) reported by LLVM's parser at build time.
    err = error(kernel(f"for i in range(8):\n    T.evaluate({expr})", head=HHEAD))
    assert "handle (pointer) converts to and from integer types only" in err.message
    assert at(err)[0] == 6


def test_a_handle_still_casts_to_an_integer() -> None:
    f = from_source(kernel('C[0] = T.Cast("float32", T.Cast("int64", c) % 64)', head=HHEAD))
    assert 'T.Cast("int64", c)' in f.script()
