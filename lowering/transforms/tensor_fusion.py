"""Tensor fusion (pass ``fuse_tensors``, opt_level 2): inline elementwise producers.

Runs on tensor-level IR, before ``bufferize`` (the seed: transform on tensors,
then bufferize). A tensor ``t`` (see :mod:`lowering.transforms.tensor_ir`) is inlined into
its consumer when:

* its producer is *elementwise or broadcast*: spatial only (no reduce axes) and
  every load in its value is indexed by block iter vars only (``A[i, j]``,
  ``bias[j]``, ``A[j, i]``) -- so inlining never recomputes more than one
  element's worth of work;
* it is not returned and exactly one statement reads it, once, and that
  statement is a compute nest (any kind: an elementwise producer feeding a
  reduction is inlined into the reduction's body; a reduction itself is never
  inlined, since it is not elementwise);
* no statement between the producer and the consumer (the consumer included)
  writes a buffer the producer reads, so the inlined value reads what the
  producer would have read.

The load ``t[e0, e1]`` becomes the producer's value with its iter vars replaced
by ``e0, e1``; the producer's nest and ``t``'s allocation disappear. One forward
sweep fuses whole chains (the consumer, now reading the producer's inputs, may
itself be inlined further on).
"""

from __future__ import annotations

from dataclasses import dataclass

from irbuilder.ir import (
    BlockRealize,
    Buffer,
    BufferLoad,
    PrimExpr,
    PrimFunc,
    Span,
    StmtExprMutator,
    Var,
    post_order_visit,
    rebuild,
    seq,
)
from irbuilder.regions import infer_regions

from ..analysis import substitute_expr
from ..pass_infra import function_pass
from .tensor_ir import ComputeNest, TensorProgram, rebuild_nest, tensor_program

__all__ = ["FusionRecord", "fuse_tensors_with_records", "fuse_tensors"]


@dataclass(frozen=True)
class FusionRecord:
    """One inlining: ``tensor`` (defined at ``producer_span``) into the consumer."""

    tensor: str
    consumer: str
    producer_span: Span | None
    consumer_span: Span | None


def _elementwise(nest: ComputeNest) -> bool:
    if nest.is_reduction:
        return False
    spatial = set(map(id, nest.spatial))
    ok = True

    def visit(node: object) -> None:
        nonlocal ok
        if isinstance(node, BufferLoad):
            ok = ok and all(isinstance(i, Var) and id(i) in spatial for i in node.indices)

    post_order_visit(nest.store.value, visit)
    return ok


class _Inline(StmtExprMutator):
    def __init__(self, tensor: Buffer, producer: ComputeNest) -> None:
        self.tensor = tensor
        self.producer = producer

    def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
        indices = tuple(self.visit_expr(i) for i in node.indices)
        if node.buffer is not self.tensor:
            if all(a is b for a, b in zip(indices, node.indices)):
                return node
            return BufferLoad(node.buffer, indices, span=node.span)
        vmap: dict[Var, PrimExpr] = dict(zip(self.producer.spatial, indices))
        return substitute_expr(self.producer.store.value, vmap)


def _load_count(prog: TensorProgram, pos: int, tensor: Buffer) -> int:
    return len(prog.loads[pos].get(tensor, []))


def _fusable(prog: TensorProgram, tensor: Buffer, p: int) -> int | None:
    """The consumer position ``tensor`` (defined at ``p``) can be inlined into, if any."""
    producer = prog.nests[p]
    if producer is None or prog.is_returned(tensor) or not _elementwise(producer):
        return None
    readers = prog.readers(tensor)
    if len(readers) != 1:
        return None
    c = readers[0]
    consumer = prog.nests[c]
    if consumer is None or _load_count(prog, c, tensor) != 1:
        return None
    if consumer.block.init is not None and _mentions(consumer.block.init, tensor):
        return None
    inputs = set(prog.loads[p])
    for q in range(p + 1, c + 1):
        if prog.stores[q] & inputs:
            return None
    return c


def _mentions(stmt: object, tensor: Buffer) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        found = found or (isinstance(node, BufferLoad) and node.buffer is tensor)

    post_order_visit(stmt, visit)  # type: ignore[arg-type]
    return found


def fuse_tensors_with_records(func: PrimFunc) -> tuple[PrimFunc, list[FusionRecord]]:
    """``func`` with elementwise producers inlined (see module), and what was inlined."""
    records: list[FusionRecord] = []
    while True:
        prog = tensor_program(func)
        if prog.root is None:
            return func, records
        fused = _fuse_one(prog, records)
        if fused is None:
            return func, records
        func = fused


def _fuse_one(prog: TensorProgram, records: list[FusionRecord]) -> PrimFunc | None:
    for tensor, p in sorted(prog.tensors.items(), key=lambda item: item[1]):
        c = _fusable(prog, tensor, p)
        if c is None:
            continue
        producer, consumer = prog.nests[p], prog.nests[c]
        assert producer is not None and consumer is not None
        inliner = _Inline(tensor, producer)
        block = consumer.block
        body = inliner.visit_stmt(block.body)
        reads, writes = infer_regions(body, block.init, (), ())
        new_block = rebuild(block, {"body": body, "reads": reads, "writes": writes})
        stmts = list(prog.stmts)
        stmts[c] = rebuild_nest(consumer, new_block)
        del stmts[p]
        records.append(
            FusionRecord(tensor.name, consumer.output.name, producer.span, consumer.span)
        )
        assert prog.root is not None
        root = prog.root
        allocs = tuple(b for b in root.alloc_buffers if b is not tensor)
        new_root = rebuild(root, {"body": seq(stmts), "alloc_buffers": allocs})
        old = prog.func.body
        assert isinstance(old, BlockRealize)
        realize = BlockRealize(old.iter_values, old.predicate, new_root, span=old.span)
        return prog.func.with_body(realize)
    return None


@function_pass("fuse_tensors", opt_level=2)
def fuse_tensors(func: PrimFunc) -> PrimFunc:
    """Inline single-use elementwise/broadcast tensors into their consumer (see module)."""
    return fuse_tensors_with_records(func)[0]
