"""The ``vectorize_remainders`` pass: constant remainders of vectorized loops become narrower
vectors.

``vectorize_loop`` splits ``T.vectorized(56)`` into three 16-lane vectors plus a scalar
loop of 8 iterations, tagged with :data:`lowering.transforms.vectorize.REMAINDER_ANNOTATION`. Eight
scalar iterations cost as much as the three vectors (conv2d ran 1.5x slower), and LLVM
cannot re-vectorize them because the scalar loads and stores may alias. This pass
rewrites a tagged loop of constant extent ``r`` as one vector statement per set bit of
``r`` (8, then 4, 2 lanes) and a scalar statement for an odd last element. A body that
has no vector form keeps its scalar loop.
"""

from __future__ import annotations

from irbuilder.ir import For, IntImm, PrimExpr, PrimFunc, Stmt, StmtExprMutator, seq

from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars
from ..transforms.vectorize import REMAINDER_ANNOTATION, CannotVectorize, vectorize_body

__all__ = ["vectorize_remainders", "vectorize_remainder_loop"]


def vectorize_remainder_loop(loop: For) -> Stmt | None:
    """The chunked vector form of a tagged remainder loop, or None to keep it."""
    if REMAINDER_ANNOTATION not in loop.annotations:
        return None
    if not (isinstance(loop.extent, IntImm) and isinstance(loop.min, IntImm)):
        return None
    count = loop.extent.value
    if count < 2:
        return None
    dtype = loop.loop_var.dtype
    parts: list[Stmt] = []
    offset = loop.min.value
    lanes = 1 << (count.bit_length() - 1)
    try:
        while lanes >= 1:
            if count & lanes:
                base = IntImm(dtype, offset)
                if lanes == 1:
                    parts.append(copy_with_fresh_vars(loop.body, {loop.loop_var: base}))
                else:
                    parts.append(vectorize_body(loop.loop_var, loop.body, base, lanes))
                offset += lanes
            lanes >>= 1
    except CannotVectorize:
        return None
    return seq(parts)


class _Remainders(StmtExprMutator):
    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr  # loops are statements: skip expression trees

    def visit_for_(self, stmt: For) -> Stmt:
        new = self.generic_mutate(stmt)  # inner loops first
        out = vectorize_remainder_loop(new)
        return new if out is None else out


@function_pass("vectorize_remainders", opt_level=1)
def _vectorize_remainders(func: PrimFunc) -> PrimFunc:
    """Vectorize tagged constant remainder loops in power-of-two chunks (see module doc)."""
    body = _Remainders().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


vectorize_remainders: FunctionPass = _vectorize_remainders
"""The ``vectorize_remainders`` pass (a :class:`FunctionPass`)."""
