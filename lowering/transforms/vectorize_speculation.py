"""Which lazy choices inside a ``T.vectorized`` loop may evaluate both values on every lane.

A vector of lanes cannot keep a choice lazy when its lanes choose differently: the vector
form of ``T.if_then_else(c, a, b)``, and of an ``if``/``else`` whose two branches store to
the same place (``if c: B[j] = a`` / ``else: B[j] = b``), is ``B[j] = T.Select(c, a, b)``,
which evaluates ``a`` and ``b`` on every lane. That is only right when neither can fault.
A program writes such a choice precisely to protect a division or a load at a border
(``if D[j] != 0: B[j] = A[j] // D[j]``, ``if 1 <= j: B[j] = A[j - 1]``): a choice whose
values may fault keeps its loop scalar, as TVM scalarizes a vectorized ``if`` whose
condition depends on the loop variable.

Two tests, both requiring no trapping division (by anything but a non-zero constant) and
no extern call:

* :class:`Speculation`, run by the ``vectorize_loop`` pass over each vectorized loop before
  it is vectorized, knows the ranges of the loops around: every load must be proven inside
  memory of a known size (:func:`known_sizes`). It rewrites the harmless choices into
  ``T.Select``.
* :func:`merge_is_safe`, for the vectorizer's other callers (late passes, which know no
  ranges): every load must be one the loop makes on every lane anyway -- a load of the
  condition (evaluated whatever the lanes choose), or of the stored location itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from irbuilder.ir import (
    Allocate,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimExpr,
    PrimFunc,
    Select,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    Var,
    post_order_visit,
    structural_equal,
)

from ..analysis.loads import LoadCollector
from ..analysis.vars import free_vars
from ..arith.analyzer import Analyzer

__all__ = [
    "Speculation",
    "has_lazy_choice",
    "known_sizes",
    "merge_is_safe",
    "merged_store",
    "two_stores",
]


def two_stores(stmt: IfThenElse) -> tuple[BufferStore, BufferStore] | None:
    """The two branches of ``stmt`` when both store to the same buffer at the same indices."""
    then, other = stmt.then_case, stmt.else_case
    if (
        isinstance(then, BufferStore)
        and isinstance(other, BufferStore)
        and then.buffer is other.buffer
        and len(then.indices) == len(other.indices)
        and all(structural_equal(x, y) for x, y in zip(then.indices, other.indices))
    ):
        return then, other
    return None


def merged_store(stmt: IfThenElse, then: BufferStore, other: BufferStore) -> BufferStore:
    """``stmt``'s two stores as one store of ``T.Select(condition, ...)``."""
    return BufferStore(then.buffer, Select(stmt.condition, then.value, other.value),
                       then.indices, span=stmt.span)


def _faults_free(expr: PrimExpr) -> tuple[bool, list[BufferLoad]]:
    """Whether ``expr`` has no trapping division and no extern call; its loads."""
    found = LoadCollector(traps_are_effects=True)
    found.visit_expr(expr)
    return not found.impure, found.loads


class _AlwaysLoaded(StmtExprVisitor):
    """The loads an expression evaluates whatever its values are: not those in the lazy
    branches of a ``T.if_then_else`` (``and``/``or`` evaluate both sides in this codegen,
    as in TVM's)."""

    def __init__(self) -> None:
        self.loads: list[BufferLoad] = []

    def visit_buffer_load_(self, node: BufferLoad) -> None:
        self.loads.append(node)
        self.generic_visit(node)

    def visit_call_(self, node: Call) -> None:
        if node.kind is CallKind.BUILTIN and node.op == "if_then_else" and node.args:
            self.visit_expr(node.args[0])
            return
        self.generic_visit(node)


def _same_load(a: BufferLoad, b: BufferLoad | BufferStore) -> bool:
    return a.buffer is b.buffer and len(a.indices) == len(b.indices) and all(
        structural_equal(x, y) for x, y in zip(a.indices, b.indices))


def merge_is_safe(condition: PrimExpr, then: BufferStore, other: BufferStore) -> bool:
    """Whether both stores' values may be evaluated on every lane, knowing no loop ranges:
    no fault, and each load one the loop makes anyway (module doc)."""
    always = _AlwaysLoaded()
    always.visit_expr(condition)
    for value in (then.value, other.value):
        safe, loads = _faults_free(value)
        if not safe:
            return False
        for load in loads:
            if not (_same_load(load, then) or any(_same_load(load, seen) for seen in always.loads)):
                return False
    return True


class Speculation(StmtExprMutator):
    """``T.if_then_else(c, a, b)``, and an ``if``/``else`` of two stores to one place whose
    condition depends on a vectorized loop's variable, become ``T.Select(c, a, b)`` where
    evaluating ``a`` and ``b`` in every iteration is harmless: no trapping division, no call
    with effects, and every load proven (from the ranges of the loops around it) to lie
    inside memory of a known size -- parameters (their entry checks enforce the shape) and
    constant-size allocations. The values are the same; only the laziness goes, which a
    vector of lanes choosing differently cannot keep. Other choices stay lazy (and their
    loop scalar)."""

    def __init__(self, sizes: dict[Var, int]) -> None:
        self.analyzer = Analyzer()
        self.sizes = sizes
        self.vector_vars: set[Var] = set()

    @contextmanager
    def loop(self, loop: For) -> Iterator[None]:
        """The analyzer knows ``loop``'s variable range inside the ``with``."""
        with self.analyzer.scope():
            self.analyzer.bind_range(loop.loop_var, loop.min, loop.extent)
            yield

    def visit_for_(self, stmt: For) -> Stmt:
        vector = stmt.kind is ForKind.VECTORIZED
        if vector:
            self.vector_vars.add(stmt.loop_var)
        try:
            with self.loop(stmt):
                return self.generic_mutate(stmt)
        finally:
            if vector:
                self.vector_vars.discard(stmt.loop_var)

    def visit_call_(self, node: Call) -> PrimExpr:
        new = self.generic_mutate(node)
        if not (
            isinstance(new, Call) and new.kind is CallKind.BUILTIN
            and new.op == "if_then_else" and len(new.args) == 3
        ):
            return new
        cond, then, other = new.args
        if self.harmless(then) and self.harmless(other):
            return Select(cond, then, other, span=node.span)
        return new

    def visit_if_then_else_(self, stmt: IfThenElse) -> Stmt:
        new = self.generic_mutate(stmt)
        branches = two_stores(new)
        # an invariant condition stays an `if` around vector stores: nothing to speculate
        if branches is None or not any(v in self.vector_vars for v in free_vars(new.condition)):
            return new
        then, other = branches
        if self.harmless(then.value) and self.harmless(other.value):
            return merged_store(new, then, other)
        return new

    def harmless(self, expr: PrimExpr) -> bool:
        """Whether evaluating ``expr`` in any iteration of the loops around it can neither
        trap nor touch memory outside a known allocation."""
        safe, loads = _faults_free(expr)
        return safe and all(self._in_bounds(load) for load in loads)

    def _in_bounds(self, load: BufferLoad) -> bool:
        buffer = load.buffer
        size = self.sizes.get(buffer.data)
        if size is None or len(load.indices) != 1 or not isinstance(buffer.elem_offset, IntImm):
            return False
        (index,) = load.indices
        if not (index.dtype.is_integer and index.dtype.is_scalar):
            return False
        bound = self.analyzer.const_int_bound(index)
        offset, item = buffer.elem_offset.value, buffer.dtype.itemsize
        return (offset + bound.lo) * item >= 0 and (offset + bound.hi + 1) * item <= size


def has_lazy_choice(stmt: Stmt) -> bool:
    """Whether ``stmt`` holds a ``T.if_then_else`` or an ``if``/``else`` of two stores to one
    place (what :class:`Speculation` may rewrite)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        found = found or (isinstance(node, Call) and node.op == "if_then_else") or (
            isinstance(node, IfThenElse) and two_stores(node) is not None)

    post_order_visit(stmt, visit)
    return found


def known_sizes(func: PrimFunc) -> dict[Var, int]:
    """Bytes behind each data var of ``func`` whose size is known: contiguous parameter
    buffers of constant shape (the entry checks enforce it) and constant-size allocations."""
    sizes: dict[Var, int] = {}
    for buffer in func.buffer_map.values():
        if buffer.strides or not all(isinstance(e, IntImm) for e in buffer.shape):
            continue
        if not (isinstance(buffer.elem_offset, IntImm) and buffer.elem_offset.value == 0):
            continue
        count = 1
        for extent in buffer.shape:
            assert isinstance(extent, IntImm)
            count *= extent.value
        sizes[buffer.data] = count * buffer.dtype.itemsize

    def visit(node: object) -> None:
        if isinstance(node, Allocate) and isinstance(node.extent, IntImm):
            sizes[node.buffer_var] = node.extent.value * node.dtype.itemsize

    post_order_visit(func.body, visit)
    return sizes
