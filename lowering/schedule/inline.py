"""compute_inline and reverse_compute_inline.

compute_inline(B) substitutes B's stored value into every load of B's buffer and deletes B.
It needs (as TVM): B's body is one store ``B[v0, v1, ...] = value`` indexed by distinct
iter vars (all of them), B is the buffer's only writer, B has no init and no predicate, and
the buffer is allocated (not a parameter, whose contents the caller sees). Because the
value is now evaluated later, it also refuses when a block that runs after B writes a buffer
B's value reads, or when a block reads B's buffer before B runs.

reverse_compute_inline(C) folds a consumer C into its producer: C's store is made in the
producer's block with the producer's value substituted for C's load of it. It needs C to be
one store reading the producer's buffer at one set of indices that is an injective affine
map of C's iter vars (:mod:`.inverse_index` inverts it, so each producer instance makes the
consumer instance reading its point, under an ``if`` when C covers fewer points); the
producer to be one store at its distinct iter vars and the only writer; C the only reader
of the producer's buffer; and nothing between the two touching what C reads or writes.
"""

from __future__ import annotations

from irbuilder.ir import (
    Block,
    Buffer,
    BufferLoad,
    BufferStore,
    IfThenElse,
    IntImm,
    PrimExpr,
    Stmt,
    StmtExprMutator,
    Var,
    post_order_visit,
    rebuild,
    structural_equal,
)
from lowering.analysis.substitute import substitute_expr

from .analysis import block_access, mentions_any, refuse_position_dependent, uses_opaquely
from .edit import is_allocated, refresh_regions, remove_leaf, replace_block, without_alloc
from .error import fail
from .inverse_index import invert_load
from .state import ScheduleState

__all__ = ["compute_inline", "reverse_compute_inline"]



def _single_store(state: ScheduleState, block: Block, name: str) -> BufferStore:
    body = block.body
    if not isinstance(body, BufferStore):
        raise fail(
            state,
            name,
            f"the body of block {block.name_hint!r} is not a single buffer store",
            block,
        )
    if block.init is not None:
        raise fail(
            state, name, f"block {block.name_hint!r} is a reduction (it has an init)", block
        )
    if block.alloc_buffers or block.match_buffers:
        raise fail(state, name, f"block {block.name_hint!r} allocates or matches buffers", block)
    return body


def _iter_indices(block: Block, indices: tuple[PrimExpr, ...]) -> list[Var] | None:
    """The iter vars the indices are, when they are distinct iter vars covering them all."""
    iter_vars = [iv.var for iv in block.iter_vars]
    found: list[Var] = []
    for index in indices:
        if not isinstance(index, Var) or not any(index is v for v in iter_vars):
            return None
        if any(index is f for f in found):
            return None
        found.append(index)
    if len(found) != len(iter_vars):
        return None
    return found


def _stored_index_vars(block: Block, store: BufferStore) -> list[Var] | None:
    """For compute_inline, TVM's rule: the indices are distinct iter vars, and the stored
    value reads no other iter var. An iter var the store does not mention (a constant
    block's `vi = T.axis.spatial(1, 0)` storing `c[()]`) does not change what is stored."""
    iter_vars = [iv.var for iv in block.iter_vars]
    found: list[Var] = []
    for index in store.indices:
        if not isinstance(index, Var) or not any(index is v for v in iter_vars):
            return None
        if any(index is f for f in found):
            return None
        found.append(index)
    unindexed = {id(v) for v in iter_vars} - {id(v) for v in found}
    if unindexed and mentions_any(store.value, unindexed):
        return None
    return found


def _true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1


def _scope_blocks(state: ScheduleState, block: Block) -> list[Block]:
    index = state.index
    return index.child_blocks(index.scope_block(index.realize_of(block)))


def _refuse_users_outside_scope(
    state: ScheduleState, name: str, block: Block, buffer: Buffer
) -> None:
    """Inlining rewrites the readers and writers of ``buffer`` in ``block``'s scope only: a
    block elsewhere (a loop_partition's other part, a reader after the scope) reading or
    writing it would lose what it reads or keep writing beside the inlined value."""
    index = state.index
    scope = index.scope_block(index.realize_of(block))
    inside: set[int] = set()
    post_order_visit(scope.body, lambda n: inside.add(id(n)) if isinstance(n, Block) else None)
    around = {id(scope), *(id(a) for a in index.ancestors(index.realize_of(scope)))}
    found: list[Block] = []

    def visit(node: object) -> None:
        if (isinstance(node, Block) and id(node) not in inside and id(node) not in around
                and not found):
            access = block_access(node)
            if any(b is buffer for b in (*access.read_buffers, *access.write_buffers)):
                found.append(node)

    post_order_visit(state.func.body, visit)
    if found:
        raise fail(
            state, name, f"block {found[0].name_hint!r}, outside the scope of "
            f"{block.name_hint!r} ({scope.name_hint!r}), also uses {buffer.name!r}: inlining "
            "rewrites the scope's blocks only", found[0], block,
        )


def _writers(blocks: list[Block], buffer: Buffer) -> list[Block]:
    return [b for b in blocks if any(w is buffer for w in block_access(b).write_buffers)]


def _readers(blocks: list[Block], buffer: Buffer) -> list[Block]:
    return [b for b in blocks if any(r is buffer for r in block_access(b).read_buffers)]


class _InlineLoads(StmtExprMutator):
    def __init__(self, buffer: Buffer, params: list[Var], value: PrimExpr) -> None:
        self.buffer = buffer
        self.params = params
        self.value = value

    def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
        load = self.generic_mutate(load)
        if load.buffer is not self.buffer:
            return load
        return substitute_expr(self.value, dict(zip(self.params, load.indices)))


def compute_inline(state: ScheduleState, block: Block) -> None:
    name = "compute_inline"
    store = _single_store(state, block, name)
    refuse_position_dependent(state, name, block)
    buffer = store.buffer
    params = _stored_index_vars(block, store)
    if params is None:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} stores {buffer.name!r} at indices that are not its "
            "distinct iter vars (or stores a value reading an iter var no index names), so a "
            "load of it cannot be rewritten into the stored value",
            block,
        )
    index = state.index
    if not _true(index.realize_of(block).predicate):
        raise fail(state, name, f"block {block.name_hint!r} has a predicate (T.where)", block)
    if not is_allocated(state.func, index, buffer):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} writes {buffer.name!r}, a buffer of the function's "
            "signature; inlining would leave it unwritten",
            block,
        )
    siblings = _scope_blocks(state, block)
    if _writers(siblings, buffer) != [block]:
        raise fail(state, name, f"{buffer.name!r} is written by more than one block", block)
    _refuse_users_outside_scope(state, name, block, buffer)
    position = next(k for k, b in enumerate(siblings) if b is block)
    # A block's T.where may read the buffer too (outside the block's own accesses)
    guarded = [
        b for b in siblings if b is not block and _loads_of(index.realize_of(b).predicate, buffer)
    ]
    early = [b for b in _readers(siblings[:position], buffer)] + [
        b for b in guarded if siblings.index(b) < position
    ]
    if early:
        raise fail(
            state,
            name,
            f"block {early[0].name_hint!r} reads {buffer.name!r} before {block.name_hint!r} "
            "writes it",
            early[0],
            block,
        )
    inputs = {id(b) for b in block_access(block).read_buffers}
    for later in siblings[position + 1 :]:
        clobbered = [w for w in block_access(later).write_buffers if id(w) in inputs]
        if clobbered:
            raise fail(
                state,
                name,
                f"block {later.name_hint!r} writes {clobbered[0].name!r}, which the inlined "
                f"value reads; inlining would read the new contents",
                later,
                block,
            )
    consumers = _readers(siblings[position + 1 :], buffer)
    consumers += [b for b in guarded if b not in consumers]
    opaque = [b for b in consumers if uses_opaquely(b, buffer)]
    if opaque:
        raise fail(
            state,
            name,
            f"block {opaque[0].name_hint!r} uses {buffer.name!r} by its data pointer or a "
            "match_buffer view, not by loads that the value could replace",
            opaque[0],
            block,
        )
    inliner = _InlineLoads(buffer, params, store.value)
    for consumer in consumers:
        new = inliner.visit_stmt(consumer)
        assert isinstance(new, Block)
        new = refresh_regions(new)
        realize = state.index.realize_of(consumer)
        predicate = inliner.visit_expr(realize.predicate)
        state.replace(
            realize,
            rebuild(realize, {"block": new, "predicate": predicate}),
            {consumer: new},
        )
    remove_leaf(state, block, name)
    without_alloc(state, buffer)


def _loads_of(expr_or_stmt: object, buffer: Buffer) -> list[BufferLoad]:
    found: list[BufferLoad] = []

    def visit(node: object) -> None:
        if isinstance(node, BufferLoad) and node.buffer is buffer:
            found.append(node)

    post_order_visit(expr_or_stmt, visit)  # type: ignore[arg-type]
    return found


def reverse_compute_inline(state: ScheduleState, block: Block) -> None:
    name = "reverse_compute_inline"
    store = _single_store(state, block, name)
    refuse_position_dependent(state, name, block)
    index = state.index
    if not _true(index.realize_of(block).predicate):
        raise fail(state, name, f"block {block.name_hint!r} has a predicate (T.where)", block)
    siblings = _scope_blocks(state, block)
    position = next(k for k, b in enumerate(siblings) if b is block)
    reads = block_access(block).read_buffers
    candidates = [
        (k, b)
        for k, b in enumerate(siblings[:position])
        if any(id(w) in {id(r) for r in reads} for w in block_access(b).write_buffers)
    ]
    if len(candidates) != 1:
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} must have exactly one producer in its scope, it has "
            f"{len(candidates)}",
            block,
        )
    producer_pos, producer = candidates[0]
    produced = block_access(producer).write_buffers
    if len(produced) != 1:
        raise fail(
            state, name, f"producer {producer.name_hint!r} writes several buffers", producer
        )
    buffer = produced[0]
    producer_store = _single_store(state, producer, name)
    loads = _loads_of(store.value, buffer)
    if not loads or any(_loads_of(i, buffer) for i in store.indices):
        raise fail(
            state, name, f"block {block.name_hint!r} must read {buffer.name!r} in its value", block
        )
    first = loads[0]
    if not all(
        all(structural_equal(a, b) for a, b in zip(first.indices, other.indices))
        for other in loads[1:]
    ):
        raise fail(
            state,
            name,
            f"block {block.name_hint!r} reads {buffer.name!r} at several indices",
            block,
        )
    vmap, predicate = _consumer_in_producer(state, block, first.indices, producer, producer_store)
    if not is_allocated(state.func, index, buffer):
        raise fail(
            state,
            name,
            f"{buffer.name!r} is a parameter of the function; it would no longer be written",
            producer,
        )
    others = [b for b in _readers(siblings, buffer) if b is not block]
    if others:
        raise fail(
            state,
            name,
            f"block {others[0].name_hint!r} also reads {buffer.name!r}",
            others[0],
        )
    if _writers(siblings, buffer) != [producer]:
        raise fail(state, name, f"{buffer.name!r} is written by more than one block", producer)
    _refuse_users_outside_scope(state, name, producer, buffer)
    mine = block_access(block)
    touched_reads = {id(b) for b in mine.read_buffers if b is not buffer}
    touched_writes = {id(b) for b in mine.write_buffers}
    for between in siblings[producer_pos + 1 : position]:
        access = block_access(between)
        if any(
            id(w) in touched_reads or id(w) in touched_writes for w in access.write_buffers
        ) or any(id(r) in touched_writes for r in access.read_buffers):
            raise fail(
                state,
                name,
                f"block {between.name_hint!r} runs between the producer and "
                f"{block.name_hint!r} and touches what {block.name_hint!r} reads or writes",
                between,
                block,
            )
    if any(id(r) in touched_writes for r in block_access(producer).read_buffers):
        raise fail(
            state,
            name,
            f"producer {producer.name_hint!r} reads what {block.name_hint!r} writes",
            producer,
        )

    class _Value(StmtExprMutator):
        def visit_buffer_load_(self, load: BufferLoad) -> PrimExpr:
            if load.buffer is buffer:
                return producer_store.value
            return self.generic_mutate(load)

        def visit_var_(self, var: Var) -> PrimExpr:
            return vmap.get(var, var)

    value = _Value().visit_expr(store.value)
    indices = tuple(substitute_expr(i, vmap) for i in store.indices)
    new_body: Stmt = BufferStore(store.buffer, value, indices, span=store.span)
    if predicate is not None:
        new_body = IfThenElse(predicate, new_body)
    new_producer = refresh_regions(rebuild(producer, {"body": new_body}))
    replace_block(state, producer, new_producer)
    remove_leaf(state, block, name)
    without_alloc(state, buffer)


def _same_domain(a: Block, b: Block, a_vars: list[Var], b_vars: list[Var]) -> bool:
    a_dom = {id(iv.var): iv.dom for iv in a.iter_vars}
    b_dom = {id(iv.var): iv.dom for iv in b.iter_vars}
    return all(
        structural_equal(a_dom[id(x)].min, b_dom[id(y)].min)
        and structural_equal(a_dom[id(x)].extent, b_dom[id(y)].extent)
        for x, y in zip(a_vars, b_vars)
    )


def _consumer_in_producer(
    state: ScheduleState,
    block: Block,
    load_indices: tuple[PrimExpr, ...],
    producer: Block,
    producer_store: BufferStore,
) -> tuple[dict[Var, PrimExpr], PrimExpr | None]:
    """Each consumer iter var as an expression of the producer's iter vars, and the
    condition for that consumer instance to exist (None: always)."""
    consumer_params = _iter_indices(block, load_indices)
    producer_params = _iter_indices(producer, producer_store.indices)
    if (
        consumer_params is not None
        and producer_params is not None
        and _same_domain(block, producer, consumer_params, producer_params)
    ):
        # the same points over the same domains (also when the domains are symbolic)
        return dict(zip(consumer_params, producer_params)), None
    inverse = invert_load(block.iter_vars, load_indices, producer.iter_vars, producer_store.indices)
    if inverse is None:
        raise fail(
            state,
            "reverse_compute_inline",
            f"block {block.name_hint!r} reads {producer_store.buffer.name!r} at indices that "
            "are not an injective affine map of its iter vars onto points "
            f"{producer.name_hint!r} writes",
            block,
            producer,
        )
    return {iv.var: v for iv, v in zip(block.iter_vars, inverse.values)}, inverse.predicate
