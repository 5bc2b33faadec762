"""The ``split_divided_loops`` pass: a loop whose variable is divided by a small constant
runs the quotient as its variable and the remainders as copies of the body.

A nearest-neighbour upsample, ``O[h, w] = A[h // 2, w // 2]``, indexes ``A`` with ``w //
2``, which no vectorizer turns into a vector load: LLVM leaves the loop scalar (on the
Zen 5 host 0.45 ms for 8 x 64 x 112 x 112 float32, against 0.21-0.36 ms for numba's twin).
With ``w = 2 * w_q + r``::

    for w_q in range(56):
        O[h * 112 + 2 * w_q] = A[h // 2 * 56 + w_q]          # r = 0: w // 2 = w_q
        O[h * 112 + 2 * w_q + 1] = A[h // 2 * 56 + w_q]      # r = 1

the loads are contiguous in ``w_q`` and the two stores one interleaved group, which LLVM
vectorizes. The iterations run in the same order (``w = 2 * w_q + r``, ``r`` inner), each
with the same operations: exact.

Applied to SERIAL loops without annotations, from 0 to a constant extent divisible by
``d``, whose body contains ``w // d`` or ``w % d`` for one constant ``d`` in 2..4
(:data:`MAX_DIVISOR`), the loop variable itself the dividend.

A loop fused by a schedule (``for f in T.parallel(1000 * 999)`` reading ``B[f % 999]``, or
``f // 3136``, ``f % 3136 // 56`` and ``f % 56`` for three fused axes) is *unfused*
instead when its smallest divisor ``d`` is at least :data:`MIN_UNFUSED`, divides the extent
and every other divisor: ``f = d * f_o + f_i``, ``f_o`` the loop's own kind (a parallel loop
stays parallel) and ``f_i`` a serial loop over ``d``; once simplified, the divisions are the
two variables (``(56 * a + b) // 3136`` is ``a // 56``) and the inner loop a row the
vectorizers take. Same iterations in the same order: exact.
"""

from __future__ import annotations

from irbuilder.ir import (
    Add,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IntImm,
    Mul,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    Sub,
    Var,
    post_order_visit,
    seq,
)

from ..arith.canonical import linear_coefficient
from ..arith.rewrite import simplify_expr
from ..pass_infra import FunctionPass, function_pass
from ..transforms.auto_parallel import PARALLEL_IF
from ..transforms.simplify import simplify_stmt
from ..transforms.unroll import copy_with_fresh_vars

__all__ = [
    "MAX_DIVISOR",
    "MIN_UNFUSED",
    "dividend_divisors",
    "divided_vars",
    "substitute_quotient",
    "split_divided_loop",
    "split_divided_loops",
    "unfuse_divided_loop",
]

MAX_DIVISOR = 4
"""Largest divisor split: the body is copied once per remainder."""

MIN_UNFUSED = 8
"""Smallest divisor of a fused loop's variable unfused into an inner loop (module doc)."""


def divided_vars(body: Stmt) -> dict[int, set[int]]:
    """For each variable (by id) divided by a constant in ``body``, the constants (one
    walk for the whole function: a loop's variable occurs only inside the loop)."""
    found: dict[int, set[int]] = {}

    def visit(node: object) -> None:
        if isinstance(node, (FloorDiv, FloorMod)) and isinstance(node.a, Var) and isinstance(
            node.b, IntImm
        ):
            found.setdefault(id(node.a), set()).add(node.b.value)

    post_order_visit(body, visit)
    return found


def dividend_divisors(node: Stmt | PrimExpr, var: Var) -> set[int]:
    """The constants ``d`` of the divisions ``(var + e) // d`` and ``(var + e) % d`` in
    ``node``, ``e`` free of ``var`` (the dilation's ``(t - k) // 2`` of a transposed
    convolution); empty when ``var`` is also divided in another form (``(2 * var) // 3``)."""
    found: set[int] = set()
    other = False

    def visit(expr: object) -> None:
        nonlocal other
        if (isinstance(expr, (FloorDiv, FloorMod)) and isinstance(expr.b, IntImm)
                and expr.b.value > 0):
            coef = linear_coefficient(expr.a, var)
            if coef == 1:
                found.add(expr.b.value)
            elif coef != 0:
                other = True

    post_order_visit(node, visit)
    return set() if other else found


class _PullQuotient(StmtExprMutator):
    """``(d * c * q + e) // d`` becomes ``c * q + e // d`` and ``(d * c * q + e) % d``
    becomes ``e % d``: exact for floor division whatever the signs."""

    def __init__(self, quotient: Var) -> None:
        self.quotient = quotient

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        expr = super().visit_expr(expr)
        if not (isinstance(expr, (FloorDiv, FloorMod)) and isinstance(expr.b, IntImm)):
            return expr
        d = expr.b.value
        coef = linear_coefficient(expr.a, self.quotient)
        if not coef or d <= 0 or coef % d:
            return expr
        q = self.quotient
        rest = simplify_expr(Sub(expr.a, Mul(IntImm(q.dtype, coef), q)))
        if isinstance(expr, FloorMod):
            return FloorMod(rest, expr.b)
        return Add(Mul(IntImm(q.dtype, coef // d), q), FloorDiv(rest, expr.b))


def substitute_quotient(stmt: Stmt, var: Var, d: int, quotient: Var, remainder: int) -> Stmt:
    """A copy of ``stmt`` with ``var`` = ``d * quotient + remainder``, divisions by ``d``
    of the dividends :func:`dividend_divisors` finds taken apart (``(t - k) // 2`` with
    ``t = 2 * q + 1`` is ``q + (1 - k) // 2``), simplified."""
    at: PrimExpr = Mul(IntImm(var.dtype, d), quotient)
    if remainder:
        at = Add(at, IntImm(var.dtype, remainder))
    return simplify_stmt(_PullQuotient(quotient).visit_stmt(copy_with_fresh_vars(stmt, {var: at})))


def split_divided_loop(loop: For, divisors: set[int] | None = None) -> For | None:
    """``loop`` with its variable split by the divisor of its body (module doc), or None;
    ``divisors``: those of its variable when already known."""
    if (loop.kind is not ForKind.SERIAL or loop.annotations or loop.thread_binding is not None
            or not isinstance(loop.min, IntImm) or loop.min.value != 0
            or not isinstance(loop.extent, IntImm)):
        return None
    var = loop.loop_var
    if divisors is None:
        divisors = divided_vars(loop.body).get(id(var), set())
    if len(divisors) != 1:
        return None
    (d,) = divisors
    if not 2 <= d <= MAX_DIVISOR or loop.extent.value % d:
        return None
    quotient = Var(f"{var.name}_q", var.dtype)
    copies = [substitute_quotient(loop.body, var, d, quotient, r) for r in range(d)]
    return For(quotient, IntImm(var.dtype, 0), IntImm(var.dtype, loop.extent.value // d),
               ForKind.SERIAL, seq(copies), span=loop.span)


def unfuse_divided_loop(loop: For, divisors: set[int]) -> For | None:
    """``loop`` (serial or parallel, no annotation but ``parallelize_loops``' no-overlap
test) as a loop over its variable's quotients
    by the smallest of ``divisors`` around a serial loop over the remainders (module doc), or
    None."""
    if (loop.kind not in (ForKind.SERIAL, ForKind.PARALLEL)
            or set(loop.annotations) - {PARALLEL_IF} or loop.thread_binding is not None
            or not isinstance(loop.min, IntImm) or loop.min.value != 0
            or not isinstance(loop.extent, IntImm) or not divisors):
        return None
    d = min(divisors)
    extent = loop.extent.value
    if d < MIN_UNFUSED or extent % d or extent == d or any(x % d for x in divisors):
        return None
    var = loop.loop_var
    dtype = var.dtype
    outer, inner = Var(f"{var.name}_o", dtype), Var(f"{var.name}_i", dtype)
    body = copy_with_fresh_vars(loop.body, {var: Mul(outer, IntImm(dtype, d)) + inner})
    rows = For(inner, IntImm(dtype, 0), IntImm(dtype, d), ForKind.SERIAL, body, span=loop.span)
    # ``parallelize_loops``' no-overlap test stays on the outer loop: it reads no variable of
    # the loop, and run serially (the test failing) the rows keep the original order.
    unfused = For(outer, IntImm(dtype, 0), IntImm(dtype, extent // d), loop.kind, rows,
                  annotations=loop.annotations, span=loop.span)
    simplified = simplify_stmt(unfused)
    assert isinstance(simplified, For)
    return simplified


class _Split(StmtExprMutator):
    def __init__(self, divided: dict[int, set[int]]) -> None:
        self.divided = divided

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr

    def visit_for_(self, stmt: For) -> Stmt:
        visited = self.generic_mutate(stmt)
        assert isinstance(visited, For)
        divisors = self.divided.get(id(visited.loop_var))
        if divisors is None:
            return visited
        split = split_divided_loop(visited, divisors) or unfuse_divided_loop(visited, divisors)
        return visited if split is None else split


@function_pass("split_divided_loops", opt_level=1)
def _split_divided_loops(func: PrimFunc) -> PrimFunc:
    """Split loops whose variable is divided by a small constant (module doc)."""
    divided = divided_vars(func.body)
    if not divided:
        return func
    body = _Split(divided).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


split_divided_loops: FunctionPass = _split_divided_loops
"""The ``split_divided_loops`` pass (a :class:`FunctionPass`)."""
