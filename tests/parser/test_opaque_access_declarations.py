"""A block using a buffer opaquely (its data pointer ``A.data`` itself, or
``T.tvm_access_ptr`` with access mask 3) has regions no inference can give: TVM refuses it
without ``T.reads``/``T.writes`` (its ScriptComplete), and so does the parser here, with a
diagnostic at the statement using the pointer. Mask 1 or 2 reads or writes the whole buffer
and needs no annotation; a declared block is taken as declared."""

from __future__ import annotations

import pytest

from irbuilder.ir import Block, BlockRealize, PrimFunc
from irbuilder.ir.functor import post_order_visit
from tvmscript import DiagnosticError, from_source

HEAD = '@T.prim_func\ndef f(A: T.Buffer((16, 16), "float32")):\n'
GRID = '    for i, j in T.grid(16, 16):\n        with T.block("b"):\n'


def in_block(*lines: str) -> str:
    return HEAD + GRID + "".join(f"            {line}\n" for line in lines)


def error(text: str) -> DiagnosticError:
    with pytest.raises(DiagnosticError) as info:
        from_source(text)
    return info.value


def the_block(func: PrimFunc) -> Block:
    found: list[Block] = []

    def visit(node: object) -> None:
        if isinstance(node, BlockRealize) and node.block.name_hint == "b":
            found.append(node.block)

    post_order_visit(func.body, visit)
    (block,) = found
    return block


CALL = 'T.evaluate(T.call_extern("int32", "f", A.data))'


def test_a_bare_data_pointer_without_regions_is_refused_at_its_statement() -> None:
    err = error(in_block(CALL))
    assert err.span is not None and (err.span.line, err.span.col) == (5, 13)
    assert "block 'b' uses buffer 'A' opaquely" in err.message
    assert "no T.reads and T.writes" in err.message
    assert "Can not auto detect buffer access region" in err.message  # TVM's words
    text = str(err)
    assert 'T.evaluate(T.call_extern("int32", "f", A.data))' in text and "^^^^" in text


def test_one_missing_declaration_is_enough_to_refuse() -> None:
    err = error(in_block("T.reads(A[0:16, 0:16])", CALL))
    assert "no T.writes" in err.message and "no T.reads" not in err.message
    assert err.span is not None and err.span.line == 6


def test_an_access_ptr_of_mask_3_is_opaque() -> None:
    ptr = "T.tvm_access_ptr(T.type_annotation('float32'), A.data, 0, 256, 3)"
    err = error(in_block(f'T.evaluate(T.call_extern("int32", "f", {ptr}))'))
    assert "uses buffer 'A' opaquely" in err.message


def test_masks_1_and_2_are_inferred_as_the_whole_buffer() -> None:
    ptr = "T.tvm_access_ptr(T.type_annotation('float32'), A.data, 0, 256, {})"
    for mask, side in ((1, "reads"), (2, "writes")):
        func = from_source(in_block(f'T.evaluate(T.call_extern("int32", "f", {ptr.format(mask)}))'))
        regions = getattr(the_block(func), side)
        assert [r.buffer.name for r in regions] == ["A"]
        assert [(r.min.value, r.extent.value) for r in regions[0].region] == [(0, 16), (0, 16)]


def test_a_declared_block_is_taken_as_declared() -> None:
    func = from_source(in_block("T.reads(A[i, 0:16])", "T.writes()", CALL))
    block = the_block(func)
    assert [r.buffer.name for r in block.reads] == ["A"] and block.writes == ()


def test_a_pointer_of_a_block_local_buffer_is_not_an_access() -> None:
    func = from_source(
        in_block(
            'L = T.alloc_buffer((4,), "float32")',
            'T.evaluate(T.call_extern("int32", "f", L.data))',
            "A[i, j] = 1.0",
        )
    )
    assert [r.buffer.name for r in the_block(func).writes] == ["A"]
