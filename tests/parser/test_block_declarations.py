"""Block declarations TVM refuses must be located diagnostics here too, and the ones it
merges must merge: duplicate names in one target, a second T.where, conflicting
T.block_attr values (nested dicts merge), `with T.block() as x`, strided regions."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import Block, BlockRealize, PrimFunc
from irbuilder.ir.functor import post_order_visit
from tvmscript import DiagnosticError, from_source

HEAD = '@T.prim_func\ndef f(A: T.Buffer((16, 16), "float32")):\n'


def kernel(body: str) -> str:
    return HEAD + "".join(f"    {line}\n" for line in body.split("\n"))


def error(text: str) -> DiagnosticError:
    with pytest.raises(DiagnosticError) as info:
        from_source(text)
    return info.value


def at(err: DiagnosticError) -> tuple[int, int]:
    assert err.span is not None
    return err.span.line, err.span.col


def only_block(func: PrimFunc) -> Block:
    found: list[Block] = []

    def visit(node: object) -> None:
        if isinstance(node, BlockRealize) and node.block.name_hint == "b":
            found.append(node.block)

    post_order_visit(func.body, visit)
    (block,) = found
    return block


GRID = 'for i, j in T.grid(16, 16):\n    with T.block("b"):\n'


def in_block(*lines: str) -> str:
    return kernel(GRID + "".join(f"        {line}\n" for line in lines).rstrip("\n"))


def test_a_name_twice_in_one_remap_target_is_refused_at_the_second() -> None:
    err = error(in_block('vi, vi = T.axis.remap("SS", [i, j])', "A[vi, 0] = 1.0"))
    assert err.message == "'vi' appears twice in one assignment target"
    assert at(err) == (5, 17)  # the second vi
    assert "vi, vi = T.axis.remap" in str(err) and "<tvmscript" in str(err)


def test_a_name_twice_in_a_loop_target_is_refused() -> None:
    err = error(kernel("for i, i in T.grid(4, 4):\n    A[i, 0] = 1.0"))
    assert err.message == "'i' appears twice in one assignment target"
    assert at(err) == (3, 12)


def test_a_second_where_is_refused_at_its_line() -> None:
    err = error(in_block(
        'vi, vj = T.axis.remap("SS", [i, j])', "T.where(i < 8)", "T.where(j < 8)",
        "A[vi, vj] = 1.0",
    ))  # fmt: skip
    assert err.message.startswith("T.where given twice in T.block 'b'")
    assert at(err) == (7, 13)


def test_one_where_still_sets_the_predicate() -> None:
    f = from_source(in_block('vi, vj = T.axis.remap("SS", [i, j])', "T.where(i < 8)",
                             "A[vi, vj] = 1.0"))  # fmt: skip
    assert "T.where(i < 8)" in f.script()


def test_block_attr_with_a_conflicting_value_is_refused() -> None:
    err = error(in_block('T.block_attr({"k": "one"})', 'T.block_attr({"k": "two"})',
                         "T.evaluate(0)"))  # fmt: skip
    assert err.message == (
        "T.block_attr: duplicate block annotation 'k': already 'one', now 'two'"
    )
    assert at(err) == (6, 13)


def test_block_attr_nested_dicts_merge_and_equal_values_are_kept() -> None:
    f = from_source(in_block(
        'T.block_attr({"k": {"a": 1}, "same": 2})',
        'T.block_attr({"k": {"b": "x"}, "same": 2, "new": 3})',
        "T.evaluate(0)",
    ))  # fmt: skip
    assert only_block(f).annotations == {"k": {"a": 1, "b": "x"}, "same": 2, "new": 3}


def test_a_conflict_inside_a_nested_dict_names_its_path() -> None:
    err = error(in_block('T.block_attr({"k": {"a": 1}})', 'T.block_attr({"k": {"a": 2}})',
                         "T.evaluate(0)"))  # fmt: skip
    assert err.message == "T.block_attr: duplicate block annotation k.'a': already 1, now 2"


def test_binding_a_block_frame_with_as_is_refused() -> None:
    err = error(kernel('with T.block("root") as x:\n    T.evaluate(0)'))
    assert err.message == "`with T.block(...)` binds no value: remove `as x`"
    assert at(err) == (3, 29)


def test_a_frame_that_binds_a_value_still_takes_as() -> None:
    f = from_source(kernel('with T.LetStmt(T.int32(3)) as n:\n    A[n, 0] = 1.0'))
    assert "A[n, 0]" in f.script()


@pytest.mark.parametrize("stmt", ["T.writes(A[0:16:2, 0:16])", "T.reads(A[0, 0:16:4])"])
def test_a_strided_slice_in_a_declared_region_is_refused(stmt: str) -> None:
    err = error(kernel(f"with T.block():\n    {stmt}\n    T.evaluate(0)"))
    assert "a region cannot be strided, got a slice with step" in err.message
    assert at(err) == (4, 9)


def test_a_unit_step_slice_in_a_region_is_the_box() -> None:
    f = from_source(kernel('with T.block("b"):\n    T.writes(A[0, 0:16:1])\n    T.evaluate(0)'))
    (write,) = only_block(f).writes
    assert [(int(r.min.value), int(r.extent.value)) for r in write.region] == [(0, 1), (0, 16)]


# ------------------------------------------------------- match_buffer shape vs region

MATCH_HEAD = '@T.prim_func\ndef f(A: T.Buffer((8, 8), "float32"), n: T.int32):\n'


def matching(view: str) -> str:
    return MATCH_HEAD + (
        "    for i, j in T.grid(8, 2):\n"
        '        with T.block("b"):\n'
        f"            sub = {view}\n"
        "            for k in range(4):\n"
        "                sub[k] = T.float32(1)\n"
    )


def test_a_view_shape_the_region_cannot_have_is_refused_at_the_match_buffer() -> None:
    err = error(matching("T.match_buffer(A[i, j * 4 : j * 4 + 4], (5,))"))
    assert err.message == "T.match_buffer: shape[0] is 5 but the region of 'A' has extent 4 there"
    assert at(err) == (5, 19)


def test_a_view_may_not_reshape_its_region() -> None:
    # TVM matches dimension by dimension: 4 elements are no (2, 2) view.
    err = error(matching("T.match_buffer(A[i, j * 4 : j * 4 + 4], (2, 2))"))
    assert "shape[0] is 2 but the region of 'A' has extent 1 there" in err.message


def test_a_dropped_leading_dimension_must_have_extent_one() -> None:
    err = error(matching("T.match_buffer(A[0:2, j * 4 : j * 4 + 4], (4,))"))
    assert err.message == (
        "T.match_buffer: the region of 'A' has extent 2 in dimension 0, which the 1-d view "
        "drops; only extent-1 dimensions can be dropped"
    )


def test_a_view_with_more_dimensions_than_its_region_is_refused() -> None:
    err = error(matching("T.match_buffer(A[i, 0:4], (1, 1, 4))"))
    assert "a 3-d view of a 2-d region of 'A'" in err.message


@pytest.mark.parametrize(
    "view",
    [
        "T.match_buffer(A[i, j * 4 : j * 4 + 4], (4,))",  # the leading unit extent dropped
        "T.match_buffer(A[i, j * 4 : j * 4 + 4], (T.int32(),))",  # a shape var binds
        "T.match_buffer(A[i, 0:n], (4,))",  # symbolic: not provably different
    ],
    ids=["drop-unit", "shape-var", "symbolic"],
)
def test_views_that_can_match_their_region_are_accepted(view: str) -> None:
    f = from_source(matching(view))
    (match,) = only_block(f).match_buffers
    assert match.source.buffer.name == "A"


def test_a_matching_view_computes_like_the_interpreter() -> None:
    f = from_source(matching("T.match_buffer(A[i, j * 4 : j * 4 + 4], (4,))"))
    want = np.zeros((8, 8), "float32")
    tvmscript.build(f, target="interp")(want, 0)
    got = np.zeros((8, 8), "float32")
    tvmscript.build(f, target="llvm -mcpu=znver3")(got, 0)
    np.testing.assert_array_equal(got, np.ones((8, 8), "float32"))
    np.testing.assert_array_equal(want, got)
