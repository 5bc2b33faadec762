"""The ``vectorize_loop`` pass: ``T.vectorized`` loops become Ramp/Broadcast vector code.

The loop variable becomes ``Ramp(base, 1, lanes)``, loop-invariant expressions stay
scalar and are broadcast where they meet a vector, arithmetic on a Ramp and a scalar
stays a Ramp (so ``A[i * 16 + j]`` reads ``A[Ramp(i * 16 + base, 1, lanes)]``), any
other vector index is a gather, and intrinsic calls become vector-typed calls.

Lanes: the extent itself when it is a constant power of two <= ``max_width``
(``PassContext.option("vectorize_loop", "max_width", 16)``); otherwise a serial loop
over full vectors of the chosen width plus a scalar remainder loop (also for
non-constant extents). An inner serial loop whose bounds do not depend on the vectorized
variable runs once for all lanes, its body vectorized (TVM's rule). A ``T.if_then_else``
whose condition is the same on every lane stays one branch for all of them. A body that cannot be
vectorized (allocations, extern calls, data-dependent control flow other than an if/else
of two stores to the same place whose values cannot fault -- see
:mod:`lowering.transforms.vectorize_speculation` --, an inner loop with lane-dependent
bounds, ...) falls back to a SERIAL loop.

Like TVM, ``T.vectorized`` is taken as the user's promise that iterations are
independent: no loop-carried dependence analysis is done.
"""

from __future__ import annotations

from irbuilder.ir import (
    GE,
    GT,
    INTRINSICS,
    LE,
    LT,
    Add,
    And,
    AssertStmt,
    BinaryOp,
    Broadcast,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DataType,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Let,
    LetStmt,
    Mod,
    Mul,
    Not,
    PrimExpr,
    PrimFunc,
    Ramp,
    Select,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    StringImm,
    Sub,
    Var,
    as_dtype,
    rebuild,
    seq,
)

from ..analysis.vars import free_vars
from ..arith import simplify_expr
from ..pass_infra import FunctionPass, PassContext, function_pass
from .unroll import copy_with_fresh_vars
from .vectorize_speculation import (
    Speculation,
    has_lazy_choice,
    known_sizes,
    merge_is_safe,
    merged_store,
    two_stores,
)

__all__ = [
    "REMAINDER_ANNOTATION",
    "CannotVectorize",
    "vectorize_body",
    "vectorize_expr",
    "vectorize_loop",
]

DEFAULT_MAX_WIDTH = 16
REMAINDER_ANNOTATION = "vector_remainder"
"""Annotation of a constant scalar remainder loop; its value is the main loop's width."""
_ELEMENTWISE_BUILTINS = frozenset({"likely", "reinterpret"})


class CannotVectorize(Exception):
    """The body of a vectorized loop has a construct with no vector form (the reason)."""


class _Vectorizer:
    """Turns one loop body into its vector form for ``lanes`` iterations from ``base``."""

    def __init__(self, loop_var: Var, base: PrimExpr, lanes: int, *, guarded: bool = False
                 ) -> None:
        self.loop_var = loop_var
        self.lanes = lanes
        one = IntImm(loop_var.dtype, 1)
        self.vars: dict[Var, PrimExpr] = {loop_var: Ramp(base, one, lanes)}
        self.guarded = guarded
        self.guards: list[PrimExpr] = []
        """Scalar conditions under which the vector form is exact (``guarded`` only): the
        caller runs the lanes one by one when one of them fails."""
        self._inner: set[int] = set()
        """Variables bound inside the body (a guard is tested outside it: none of these)."""

    def _guard(self, condition: PrimExpr) -> bool:
        """Record ``condition`` as a guard if the caller can test it; whether it did."""
        if not self.guarded or any(id(v) in self._inner for v in free_vars(condition)):
            return False
        self.guards.append(condition)
        return True

    def widen(self, expr: PrimExpr) -> PrimExpr:
        """``expr`` as a vector of ``lanes`` (broadcast when it is scalar)."""
        return expr if expr.dtype.lanes == self.lanes else Broadcast(expr, self.lanes)

    def _varying(self, new: PrimExpr) -> bool:
        return new.dtype.lanes > 1

    # -- expressions ---------------------------------------------------------
    def expr(self, expr: PrimExpr) -> PrimExpr:
        """Vector form of ``expr``, or ``expr`` itself when it is loop-invariant."""
        if expr.dtype.is_vector:
            raise CannotVectorize(f"the body already holds a {expr.dtype} vector expression")
        if isinstance(expr, Var):
            return self.vars.get(expr, expr)
        if isinstance(expr, (IntImm, FloatImm, StringImm)):
            return expr
        if isinstance(expr, BinaryOp):
            return self._binary(expr)
        if isinstance(expr, Not):
            a = self.expr(expr.a)
            return expr if a is expr.a else Not(a, span=expr.span)
        if isinstance(expr, Cast):
            value = self.expr(expr.value)
            if value is expr.value:
                return expr
            if not self._varying(value):
                # a guarded division made it the same on every lane
                return Cast(expr.dtype, value, span=expr.span)
            ramp = self._widened_ramp(value, expr.dtype)
            if ramp is not None:
                return ramp
            return Cast(expr.dtype.with_lanes(self.lanes), value, span=expr.span)
        if isinstance(expr, Select):
            parts = [self.expr(e) for e in (expr.condition, expr.true_value, expr.false_value)]
            if all(
                p is o for p, o in zip(parts, (expr.condition, expr.true_value, expr.false_value))
            ):
                return expr
            cond, tv, fv = (self.widen(p) for p in parts)
            return Select(cond, tv, fv, span=expr.span)
        if isinstance(expr, Call):
            return self._call(expr)
        if isinstance(expr, BufferLoad):
            indices = self._indices(expr.indices, f"load from {expr.buffer.name}")
            if indices is expr.indices:
                return expr
            return BufferLoad(expr.buffer, indices, span=expr.span)
        if isinstance(expr, Let):
            self._inner.add(id(expr.var))
            value = self.expr(expr.value)
            var = self._bind(expr.var, value)
            body = self.expr(expr.body)
            if value is expr.value and body is expr.body:
                return expr
            return Let(var, value, body, span=expr.span)
        raise CannotVectorize(f"no vector form for {type(expr).__name__}")

    def _widened_ramp(self, value: PrimExpr, dtype: DataType) -> Ramp | None:
        """The vectorized loop variable's own ramp cast to a wider integer type, as a ramp of
        that type (``E[I[b], d]`` with an int64 ``I``: ``int64(d)`` stays a contiguous index
        instead of a gather). Exact: the lanes are values the loop variable takes, so none
        wraps in its own type, and a widening cast of each is the widened ramp's lane."""
        ramp = self.vars.get(self.loop_var)
        if value is not ramp or not isinstance(ramp, Ramp):
            return None
        src = ramp.dtype.element_of()
        if not (src.is_integer and dtype.is_integer and dtype.bits >= src.bits):
            return None
        base = simplify_expr(Cast(dtype, ramp.base))
        stride = simplify_expr(Cast(dtype, ramp.stride))
        return Ramp(base, stride, self.lanes)

    def _bind(self, var: Var, value: PrimExpr) -> Var:
        if not self._varying(value):
            return var
        new = Var(var.name, value.dtype, span=var.span)
        self.vars[var] = new
        return new

    def _binary(self, expr: BinaryOp) -> PrimExpr:
        a, b = self.expr(expr.a), self.expr(expr.b)
        if a is expr.a and b is expr.b:
            return expr
        if expr.dtype.is_integer:
            ramp = self._ramp_arith(expr, a, b)
            if ramp is None and self.guarded:
                ramp = self._unwrapped_division(expr, a, b)
            if ramp is not None:
                return ramp
        return rebuild(expr, {"a": self.widen(a), "b": self.widen(b)})  # type: ignore[no-any-return]

    def _ramp_arith(self, expr: BinaryOp, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
        """Keep affine arithmetic on Ramps a Ramp (contiguous or strided access)."""
        lanes = self.lanes
        tidy = simplify_expr
        if isinstance(expr, (Add, Sub)):
            if isinstance(a, Ramp) and not self._varying(b):
                return Ramp(tidy(rebuild(expr, {"a": a.base, "b": b})), a.stride, lanes)
            if isinstance(b, Ramp) and not self._varying(a):
                base = tidy(rebuild(expr, {"a": a, "b": b.base}))
                stride = b.stride if isinstance(expr, Add) else tidy(Sub(_zero(b.stride), b.stride))
                return Ramp(base, stride, lanes)
            if isinstance(a, Ramp) and isinstance(b, Ramp):
                base = tidy(rebuild(expr, {"a": a.base, "b": b.base}))
                stride = tidy(rebuild(expr, {"a": a.stride, "b": b.stride}))
                return Ramp(base, stride, lanes)
        if isinstance(expr, Mul):
            ramp, scale = (a, b) if isinstance(a, Ramp) else (b, a)
            if isinstance(ramp, Ramp) and not self._varying(scale):
                return Ramp(tidy(Mul(ramp.base, scale)), tidy(Mul(ramp.stride, scale)), lanes)
        return None

    def _unwrapped_division(self, expr: BinaryOp, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
        """``(base + s*lane) // c`` and ``% c`` (a fused loop split by a schedule) when the
        lanes do not cross a multiple of ``c``: the quotient is the same for every lane and
        the remainder a ramp. That is a guard on ``base % c``."""
        if not (isinstance(expr, (FloorDiv, FloorMod)) and isinstance(a, Ramp)
                and isinstance(b, IntImm) and isinstance(a.stride, IntImm)):
            return None
        c, stride = b.value, a.stride.value
        if stride < 0 or stride * (self.lanes - 1) >= c:
            return None
        first = simplify_expr(FloorMod(a.base, b))
        span = IntImm(b.dtype, stride * (self.lanes - 1))
        if not self._guard(simplify_expr(LT(Add(first, span), b))):
            return None
        if isinstance(expr, FloorDiv):
            return simplify_expr(FloorDiv(a.base, b))
        return Ramp(first, a.stride, self.lanes)

    def _call(self, expr: Call) -> PrimExpr:
        if expr.kind is CallKind.EXTERN:
            raise CannotVectorize(f"call of extern function {expr.op!r} may have side effects")
        args = tuple(self.expr(a) for a in expr.args)
        if all(n is o for n, o in zip(args, expr.args)):
            return expr
        if expr.kind is CallKind.BUILTIN and expr.op == "if_then_else" and len(args) == 3:
            return self._if_then_else(expr, *args)
        spec = INTRINSICS.get(expr.op) if expr.kind is CallKind.INTRINSIC else None
        if spec is not None and not spec.pure:
            raise CannotVectorize(f"intrinsic {expr.op!r} has side effects")
        # The intrinsic table says which intrinsics apply lane-wise.
        elementwise = (expr.kind is CallKind.INTRINSIC and (spec is None or spec.vector)) or (
            expr.kind is CallKind.BUILTIN and expr.op in _ELEMENTWISE_BUILTINS
        )
        if not elementwise:
            raise CannotVectorize(f"no vector form for {expr.kind.value} call {expr.op!r}")
        widened = tuple(self.widen(a) for a in args)
        return Call(expr.dtype.with_lanes(self.lanes), expr.op, widened, expr.kind, span=expr.span)

    def _if_then_else(self, expr: Call, cond: PrimExpr, then: PrimExpr, other: PrimExpr
                      ) -> PrimExpr:
        """``T.if_then_else(c, a, b)`` whose condition is the same on every lane (a padded
        convolution's row test, inlined into a loop over channels) keeps its branch: one
        test for all the lanes, and only the chosen side evaluated, as in the scalar form
        (the other may read out of bounds). A condition that varies by lane has no such
        form."""
        if self._varying(cond):
            raise CannotVectorize("if_then_else condition depends on the loop var")
        return Call(expr.dtype.with_lanes(self.lanes), expr.op,
                    (cond, self.widen(then), self.widen(other)), expr.kind, span=expr.span)

    def _indices(self, indices: tuple[PrimExpr, ...], what: str) -> tuple[PrimExpr, ...]:
        new = tuple(self.expr(i) for i in indices)
        if all(n is o for n, o in zip(new, indices)):
            return indices
        if any(self._varying(i) for i in new[:-1]):
            raise CannotVectorize(f"{what}: only the last index may depend on the loop var")
        return new

    # -- statements ----------------------------------------------------------
    def stmt(self, stmt: Stmt) -> Stmt:
        """Vector form of ``stmt``; raises :class:`CannotVectorize`."""
        if isinstance(stmt, SeqStmt):
            return seq([self.stmt(s) for s in stmt.seq])
        if isinstance(stmt, BufferStore):
            return self._store(stmt)
        if isinstance(stmt, LetStmt):
            self._inner.add(id(stmt.var))
            value = self.expr(stmt.value)
            var = self._bind(stmt.var, value)
            return LetStmt(var, value, self.stmt(stmt.body), span=stmt.span)
        if isinstance(stmt, IfThenElse):
            return self._if(stmt)
        if isinstance(stmt, For):
            return self._loop(stmt)
        if isinstance(stmt, AssertStmt):
            if self._varying(self.expr(stmt.condition)):
                raise CannotVectorize("assert condition depends on the loop var")
            return stmt
        if isinstance(stmt, Evaluate):
            if isinstance(stmt.value, (IntImm, FloatImm)):
                return stmt
            if self._varying(self.expr(stmt.value)):
                raise CannotVectorize("evaluated expression depends on the loop var")
            raise CannotVectorize("a T.evaluate would run once instead of once per lane")
        raise CannotVectorize(f"no vector form for {type(stmt).__name__} inside the loop")

    def _loop(self, stmt: For) -> Stmt:
        """An inner loop runs once for all lanes, its body vectorized (as TVM does): every
        lane performs the inner iterations in order, the lanes side by side."""
        if stmt.kind not in (ForKind.SERIAL, ForKind.UNROLLED) or stmt.thread_binding is not None:
            raise CannotVectorize(f"a {stmt.kind.value} loop inside the loop")
        if self._varying(self.expr(stmt.min)) or self._varying(self.expr(stmt.extent)):
            raise CannotVectorize("an inner loop's bounds depend on the loop var")
        self._inner.add(id(stmt.loop_var))
        return For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, self.stmt(stmt.body),
                   stmt.thread_binding, stmt.annotations, span=stmt.span)

    def _store(self, stmt: BufferStore) -> Stmt:
        if stmt.buffer.dtype.is_vector:
            raise CannotVectorize(f"buffer {stmt.buffer.name} already holds vectors")
        indices = self._indices(stmt.indices, f"store to {stmt.buffer.name}")
        value = self.expr(stmt.value)
        if not indices or not self._varying(indices[-1]):
            raise CannotVectorize(
                f"store to {stmt.buffer.name}: the location does not depend on the loop var"
            )
        return BufferStore(stmt.buffer, self.widen(value), indices, span=stmt.span)

    def _if(self, stmt: IfThenElse) -> Stmt:
        cond = self.expr(stmt.condition)
        if not self._varying(cond):
            else_case = None if stmt.else_case is None else self.stmt(stmt.else_case)
            return IfThenElse(cond, self.stmt(stmt.then_case), else_case, span=stmt.span)
        then, other = stmt.then_case, stmt.else_case
        branches = two_stores(stmt)
        # Both values get evaluated on every lane: only when neither can fault (the
        # vectorize_loop pass has already merged those it proved in bounds).
        if branches is not None and merge_is_safe(stmt.condition, *branches):
            return self._store(merged_store(stmt, *branches))
        every_lane = _on_every_lane(cond) if self.guarded and other is None else None
        if every_lane is not None and self._guard(every_lane):
            # A predicate of a non-dividing split (``T.where``): true for all the lanes but
            # the last vector's, which the caller runs one by one.
            return self.stmt(then)
        raise CannotVectorize("if condition depends on the loop var (data-dependent control flow)")


def _lane(expr: PrimExpr, lane: int) -> PrimExpr | None:
    """Lane ``lane`` of a ramp, or ``expr`` itself when it is scalar (None otherwise)."""
    if not expr.dtype.is_vector:
        return expr
    if isinstance(expr, Ramp):
        return simplify_expr(Add(expr.base, Mul(expr.stride, IntImm(expr.stride.dtype, lane))))
    if isinstance(expr, Broadcast):
        return expr.value
    return None


def _on_every_lane(cond: PrimExpr) -> PrimExpr | None:
    """A scalar condition that holds exactly when the vector comparison ``cond`` (ordered
    comparisons of ramps and scalars, joined by ``and``) is true on every lane: a linear
    function is monotone, so its first and last lanes decide."""
    if isinstance(cond, And):
        left, right = _on_every_lane(cond.a), _on_every_lane(cond.b)
        return None if left is None or right is None else simplify_expr(And(left, right))
    if not isinstance(cond, (LT, LE, GT, GE)) or not cond.a.dtype.is_integer:
        return None
    last = cond.dtype.lanes - 1
    lanes = [0, last]
    stride_a, stride_b = _stride(cond.a), _stride(cond.b)
    if stride_a is not None and stride_b is not None:
        rise = stride_a - stride_b
        # ``a - b`` grows with the lane when rise > 0: ``<`` is decided by the last lane
        # and ``>`` by the first (the other way round when it falls).
        rising = rise > 0 if isinstance(cond, (LT, LE)) else rise < 0
        lanes = [last] if rising else [0]
    ends: list[PrimExpr] = []
    for lane in lanes:
        a, b = _lane(cond.a, lane), _lane(cond.b, lane)
        if a is None or b is None:
            return None
        ends.append(rebuild(cond, {"a": a, "b": b}))
    return simplify_expr(ends[0] if len(ends) == 1 else And(ends[0], ends[1]))


def _stride(expr: PrimExpr) -> int | None:
    """How much ``expr`` grows from lane to lane when known (0 for a scalar)."""
    if not expr.dtype.is_vector or isinstance(expr, Broadcast):
        return 0
    if isinstance(expr, Ramp) and isinstance(expr.stride, IntImm):
        return expr.stride.value
    return None


def _zero(like: PrimExpr) -> PrimExpr:
    return IntImm(like.dtype, 0)


def vectorize_body(loop_var: Var, body: Stmt, base: PrimExpr, lanes: int) -> Stmt:
    """``body`` run for ``loop_var`` in ``[base, base + lanes)`` as one vector statement.

    Raises :class:`CannotVectorize` (with the reason) when some part has no vector form.
    """
    return _Vectorizer(loop_var, base, lanes).stmt(body)


def vectorize_expr(loop_var: Var, expr: PrimExpr, base: PrimExpr, lanes: int) -> PrimExpr:
    """``expr`` for ``loop_var`` in ``[base, base + lanes)`` as one vector of ``lanes``
    (broadcast when it does not vary); raises :class:`CannotVectorize`."""
    vectorizer = _Vectorizer(loop_var, base, lanes)
    return vectorizer.widen(vectorizer.expr(expr))


def _guarded_vector(loop_var: Var, body: Stmt, base: PrimExpr, lanes: int) -> Stmt:
    """:func:`vectorize_body` that may also take the forms exact only under a run-time guard
    (a ``T.where`` predicate true on every lane, a fused index whose lanes stay within one
    row): ``if guards: vector form else: the lanes one by one``."""
    vectorizer = _Vectorizer(loop_var, base, lanes, guarded=True)
    vector = vectorizer.stmt(body)
    if not vectorizer.guards:
        return vector
    condition = vectorizer.guards[0]
    for guard in vectorizer.guards[1:]:
        condition = And(condition, guard)
    dtype = loop_var.dtype
    lane = Var(f"{loop_var.name}_lane", dtype)
    one_by_one = For(lane, IntImm(dtype, 0), IntImm(dtype, lanes), ForKind.SERIAL,
                     copy_with_fresh_vars(body, {loop_var: simplify_expr(base + lane)}))
    return IfThenElse(simplify_expr(condition), vector, one_by_one)


def _largest_power_of_two(n: int) -> int:
    return 1 << (n.bit_length() - 1)


def _serial(loop: For) -> For:
    return For(
        loop.loop_var,
        loop.min,
        loop.extent,
        ForKind.SERIAL,
        loop.body,
        loop.thread_binding,
        loop.annotations,
        span=loop.span,
    )


def _split(loop: For, width: int, main_extent: PrimExpr, rem_extent: PrimExpr) -> Stmt:
    """A serial loop over full vectors of ``width`` lanes, then a scalar remainder loop."""
    dtype = loop.loop_var.dtype
    var = loop.loop_var
    outer = Var(f"{var.name}_outer", dtype)
    main_body = _guarded_vector(var, loop.body, simplify_expr(loop.min + outer * width), width)
    parts: list[Stmt] = []
    if isinstance(main_extent, IntImm) and main_extent.value == 1:
        parts.append(_guarded_vector(var, loop.body, loop.min, width))
    elif not (isinstance(main_extent, IntImm) and main_extent.value <= 0):
        parts.append(
            For(outer, _zero(main_extent), main_extent, ForKind.SERIAL, main_body, span=loop.span)
        )
    if not (isinstance(rem_extent, IntImm) and rem_extent.value <= 0):
        inner = Var(f"{var.name}_rem", dtype)
        start = simplify_expr(loop.min + main_extent * width + inner)
        rem_body = copy_with_fresh_vars(loop.body, {var: start})
        # A constant remainder is tagged so that ``lowering.late.vector_remainder`` can turn it
        # into narrower vectors (8 + 4 + ... lanes) instead of one scalar op per lane.
        tag = {REMAINDER_ANNOTATION: width} if isinstance(rem_extent, IntImm) else {}
        parts.append(
            For(
                inner, _zero(rem_extent), rem_extent, ForKind.SERIAL, rem_body,
                annotations=tag, span=loop.span,
            )
        )
    return seq(parts)


def vectorize_for(
    loop: For, max_width: int = DEFAULT_MAX_WIDTH, *, strict: bool = False,
    speculation: Speculation | None = None,
) -> Stmt:
    """The vector form of one ``T.vectorized`` loop: serial when it cannot be vectorized, or
    with ``strict``, :class:`CannotVectorize` raised instead. ``speculation`` (knowing the
    ranges of the loops around ``loop``) first turns its harmless lazy choices
    (``if_then_else``, an ``if``/``else`` of two stores to one place) into selects."""
    if speculation is not None and has_lazy_choice(loop.body):
        speculated = speculation.visit_stmt(loop)
        assert isinstance(speculated, For)
        loop = speculated
    dtype = loop.loop_var.dtype
    extent = loop.extent
    try:
        if isinstance(extent, IntImm):
            count = extent.value
            if count <= 0:
                return Evaluate(IntImm(as_dtype("int32"), 0), span=loop.span)
            if count == 1:
                return copy_with_fresh_vars(loop.body, {loop.loop_var: loop.min})
            if max_width < 2:
                raise CannotVectorize("vectorization is off (max_width < 2)")
            if count <= max_width and count & (count - 1) == 0:
                return _guarded_vector(loop.loop_var, loop.body, loop.min, count)
            width = _largest_power_of_two(min(max_width, count))
            return _split(loop, width, IntImm(dtype, count // width), IntImm(dtype, count % width))
        if max_width < 2 or not dtype.is_integer:
            raise CannotVectorize("vectorization is off or the loop variable is not an integer")
        width_const = IntImm(extent.dtype, _largest_power_of_two(max_width))
        # truncating division: a negative extent runs neither loop
        main = simplify_expr(Div(extent, width_const))
        rem = simplify_expr(Mod(extent, width_const))
        return _split(loop, width_const.value, main, rem)
    except CannotVectorize:
        if strict:
            raise
        return _serial(loop)


class _LoopVectorizer(StmtExprMutator):
    def __init__(self, max_width: int, speculation: Speculation | None) -> None:
        self.max_width = max_width
        self.speculation = speculation

    def visit_for_(self, stmt: For) -> Stmt:
        if stmt.kind is ForKind.VECTORIZED:
            # inner loops first; an inner vectorized loop is vectorized here with the
            # outer one's range still unknown to the speculation (a rare, safe loss)
            new = self.generic_mutate(stmt)
            assert isinstance(new, For)
            return vectorize_for(new, self.max_width, speculation=self.speculation)
        if self.speculation is None:
            return self.generic_mutate(stmt)
        with self.speculation.loop(stmt):
            return self.generic_mutate(stmt)


@function_pass("vectorize_loop")
def _vectorize_loop(func: PrimFunc) -> PrimFunc:
    """Vectorize ``T.vectorized`` loops (see :mod:`lowering.transforms.vectorize`)."""
    max_width = PassContext.current().option("vectorize_loop", "max_width", DEFAULT_MAX_WIDTH)
    if not isinstance(max_width, int) or isinstance(max_width, bool):
        raise TypeError(f"vectorize_loop option max_width must be an int, got {max_width!r}")
    # Loop ranges are tracked only for a function with a lazy choice to speculate.
    speculation = Speculation(known_sizes(func)) if has_lazy_choice(func.body) else None
    body = _LoopVectorizer(max_width, speculation).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


vectorize_loop: FunctionPass = _vectorize_loop
"""The ``vectorize_loop`` pass (a :class:`FunctionPass`)."""
