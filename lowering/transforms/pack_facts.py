"""What ``pack_transposed_operands`` asks of the loops of a candidate nest: constant trip
counts, each load's index as coefficients of the loop variables, and whether a loop
accumulates (a reduction) or stores contiguously (vectorizable outputs)."""

from __future__ import annotations

from irbuilder.ir import BufferLoad, BufferStore, For, IntImm, PrimExpr, Var, post_order_visit
from irbuilder.ir.linear_form import supports_linear, to_linear

from ..analysis.vars import depends_on, free_vars
from ..arith.canonical import linear_coefficient

__all__ = ["NestFacts", "accumulates_along", "linear_terms", "stores_contiguously_along",
           "trip_count"]


def trip_count(loop: For) -> int | None:
    """The loop's constant trip count (constant bounds), or None."""
    if isinstance(loop.min, IntImm) and isinstance(loop.extent, IntImm):
        return loop.extent.value
    return None


class NestFacts:
    """What the candidate nests of one function share: each load's index as coefficients of
    variables, and per loop whether it accumulates / stores contiguously (each computed once:
    every loop of a nest is offered in turn)."""

    def __init__(self) -> None:
        self._forms: dict[int, tuple[dict[int, int], set[int]] | None] = {}
        self._accumulates: dict[int, bool] = {}
        self._contiguous: dict[int, bool] = {}

    def coefficient(self, load: BufferLoad, var: Var) -> int | None:
        """``linear_coefficient(load's index, var)``, from one linear form per load."""
        key = id(load)
        if key not in self._forms:
            self._forms[key] = linear_terms(load.indices[0])
        form = self._forms[key]
        if form is None:
            return None
        coefs, nonlinear = form
        return None if id(var) in nonlinear else coefs.get(id(var), 0)

    def accumulates(self, loop: For) -> bool:
        if id(loop) not in self._accumulates:
            self._accumulates[id(loop)] = accumulates_along(loop)
        return self._accumulates[id(loop)]

    def contiguous(self, loop: For) -> bool:
        if id(loop) not in self._contiguous:
            self._contiguous[id(loop)] = stores_contiguously_along(loop)
        return self._contiguous[id(loop)]


def linear_terms(index: PrimExpr) -> tuple[dict[int, int], set[int]] | None:
    """The factor of each variable (by id) appearing alone in ``index``'s linear form, and
    the variables inside non-linear terms; None when ``index`` has no linear form."""
    if not supports_linear(index.dtype):
        return None
    coefs: dict[int, int] = {}
    nonlinear: set[int] = set()
    for atom, factor in to_linear(index).live_terms():
        if isinstance(atom, Var):
            coefs[id(atom)] = coefs.get(id(atom), 0) + factor
        else:
            nonlinear.update(id(v) for v in free_vars(atom))
    return coefs, nonlinear


def accumulates_along(loop: For) -> bool:
    """Whether ``loop`` is a reduction: it stores, and only to elements that do not
    depend on its variable (the same accumulators every iteration)."""
    indices: list[PrimExpr] = []

    def visit(node: object) -> None:
        if isinstance(node, BufferStore):
            indices.extend(node.indices)

    post_order_visit(loop.body, visit)
    return bool(indices) and not any(depends_on(i, loop.loop_var) for i in indices)


def stores_contiguously_along(loop: For) -> bool:
    """Whether some store in ``loop`` writes consecutive elements for consecutive
    iterations (the outputs a vector of its iterations fills)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, BufferStore) and len(node.indices) == 1:
            found = found or linear_coefficient(node.indices[0], loop.loop_var) == 1

    post_order_visit(loop.body, visit)
    return found
