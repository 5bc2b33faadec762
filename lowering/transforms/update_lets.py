"""A reduction block's updates bound by ``let`` before they are stored, as one.

TOPI prints a reduction with several outputs (a tuple reduction: a layer norm's sum and sum
of squares, an argmax's value and index) as one block whose new values are bound first and
stored after::

    with T.block("T_layer_norm_red"):
        ...
        v_s: T.float32 = S[v_i] + X[v_i, v_k]
        v_q: T.float32 = Q[v_i] + X[v_i, v_k] * X[v_i, v_k]
        S[v_i] = v_s
        Q[v_i] = v_q

Every value is computed before any store. :func:`inline_update_lets` substitutes the
bindings into the stores (``S[v_i] = S[v_i] + X[..]``; ``Q[v_i] = Q[v_i] + ..``) when that
reads the same numbers: no value reads an element an earlier store of the sequence writes
(its own element is the one it updates; another is another buffer or a different constant
index), and the values are pure. ``lower_blocks`` then sees the updates it declares as a
reduction (each its own, reordered independently), which the later passes vectorize; the
argmax form (both values read the running maximum) stays as written.
"""

from __future__ import annotations

from irbuilder.ir import (
    BufferLoad,
    BufferStore,
    IntImm,
    LetStmt,
    SeqStmt,
    Stmt,
)

from ..analysis.loads import LoadCollector
from ..analysis.substitute import substitute_expr
from ..analysis.vars import free_vars

__all__ = ["inline_update_lets", "surely_distinct"]


def surely_distinct(a: BufferLoad | BufferStore, b: BufferStore) -> bool:
    """``a`` accesses an element ``b`` does not write: another buffer, or constant indices
    that differ in some dimension."""
    if a.buffer.data is not b.buffer.data:
        return True
    return any(isinstance(i, IntImm) and isinstance(j, IntImm) and i.value != j.value
               for i, j in zip(a.indices, b.indices, strict=False))


def inline_update_lets(body: Stmt) -> Stmt:
    """``body`` with its leading bindings substituted into the stores that follow them, or
    ``body`` itself when that could read other numbers (module doc)."""
    bindings: list[LetStmt] = []
    inner = body
    while isinstance(inner, LetStmt):
        bindings.append(inner)
        inner = inner.body
    if not bindings:
        return body
    stores = inner.seq if isinstance(inner, SeqStmt) else (inner,)
    if not all(isinstance(s, BufferStore) for s in stores):
        return body
    bound = {let.var: let.value for let in bindings}
    for let in bindings:
        found = LoadCollector(traps_are_effects=True)
        found.visit_expr(let.value)
        if found.impure:
            return body
    out: list[Stmt] = []
    for k, store in enumerate(stores):
        assert isinstance(store, BufferStore)
        if any(v in bound for i in store.indices for v in free_vars(i)):
            return body  # a bound index: keep the bindings
        value = store.value
        for _ in range(len(bindings)):  # a binding may use an earlier one
            if not any(v in bound for v in free_vars(value)):
                break
            value = substitute_expr(value, bound)
        if any(v in bound for v in free_vars(value)):
            return body
        earlier = stores[:k]
        reads = LoadCollector()
        reads.visit_expr(value)
        for load in reads.loads:
            if any(not surely_distinct(load, e) for e in earlier if isinstance(e, BufferStore)):
                return body
        out.append(BufferStore(store.buffer, value, store.indices, span=store.span))
    if len(out) == 1:
        return out[0]
    return SeqStmt(tuple(out), span=inner.span)

