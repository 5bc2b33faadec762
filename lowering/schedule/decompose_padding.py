"""``decompose_padding``: a padding block (``A[...] = T.if_then_else(in bounds, value,
constant)``) split into a block filling the constant everywhere, placed above a given loop,
and the block writing the in-bound values on the in-bound iterations only (TVM v0.16's
DecomposePadding; ``can_decompose_padding`` answers whether it applies).

The in-bound iterations of each block iter are the values of its binding that satisfy the
bound conditions on it (an interval); the conditions must each bound one binding. Where a
binding is a loop variable of the single-child chain of loops above the block, that loop is
narrowed to the interval (starting at 0, the variable shifted back in every use); other
bindings are shifted by the interval's start and the conditions stay as the block's
predicate. The constant block runs over new copies of the loops from the block up to the
given loop, so every element the padding block wrote is written, and the in-bound block
then overwrites the in-bound ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from irbuilder.ir import (
    GE,
    GT,
    LE,
    LT,
    And,
    Block,
    BlockRealize,
    BufferRegion,
    BufferStore,
    Call,
    CallKind,
    FloatImm,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    Stmt,
    Var,
    const,
    post_order_visit,
    seq,
)
from lowering.analysis.substitute import substitute_expr
from lowering.arith import Analyzer, IntBound, LinearForm, simplify_expr, supports_linear, to_linear

from .analysis import is_complete_block
from .error import fail
from .state import ScheduleState

__all__ = ["decompose_padding"]

_NAME = "decompose_padding"


def decompose_padding(
    state: ScheduleState, block: Block, loop: For, check_only: bool = False
) -> Block | None:
    """Apply (returns the constant-filling block), or with ``check_only`` only check
    (returns None); a ScheduleError says why it does not apply."""
    index = state.index
    realize = index.realize_of(block)
    if not is_complete_block(index, block):
        raise fail(state, _NAME, f"block {block.name_hint!r} is not a complete block", block)
    loops = index.loops_above(block)
    if all(lp is not loop for lp in loops):
        raise fail(
            state,
            _NAME,
            f"loop {loop.loop_var.name!r} is not an ancestor of block {block.name_hint!r}",
            loop,
            block,
        )
    inner_first = loops[::-1]
    in_bound_pos = _in_bound_position(inner_first, loop)
    if in_bound_pos is None:
        raise fail(
            state, _NAME, "the loop right above the block holds other statements too", block
        )
    store, value, pad_value = _match_pattern(state, block)
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    predicate = _conjoin(
        [*_conjuncts(substitute_expr(_cond(store), binding)), *_conjuncts(realize.predicate)]
    )
    domains = {lp.loop_var: Range(lp.min, lp.extent) for lp in loops}
    analyzer = _bounded(domains)
    predicate = _simplify(predicate, analyzer)
    if analyzer.can_prove(predicate):
        raise _pattern_error(state, block, "The in-bound predicate is trivial")
    regions = _in_bound_regions(state, block, realize.iter_values, domains, predicate)
    if len(block.writes) != 1:
        raise _pattern_error(state, block, "the block must write exactly one buffer region")
    const_nest, const_block = _const_block(realize, store, pad_value, inner_first, loop,
                                           analyzer)
    in_bound_nest, in_bound_block = _in_bound_block(
        realize, store, value, regions, predicate, inner_first, in_bound_pos, domains
    )
    if check_only:
        return None
    reuse: dict[Stmt, Stmt] = {block: in_bound_block}
    # the in-bound loops keep their variables: they continue the old loops
    old_loops = inner_first[: inner_first.index(in_bound_pos) + 1]
    node: Stmt = in_bound_nest
    for old in old_loops[::-1]:
        assert isinstance(node, For)
        reuse[old] = node
        node = node.body
    if in_bound_pos is loop:
        state.replace(loop, seq([const_nest, in_bound_nest]), reuse)
    else:
        state.replace(in_bound_pos, in_bound_nest, reuse)
        current = state.resolve(loop)
        assert current is not None
        state.replace(current, seq([const_nest, current]))
    return const_block


def _in_bound_position(inner_first: Sequence[For], loop: For) -> For | None:
    """The highest loop, up to ``loop``, of the chain of single-child loops right above the
    block: the in-bound block's loops are rebuilt up to it."""
    position: For | None = None
    for cur in inner_first:
        # the given loop too: when it holds other statements (a consumer computed at it),
        # the in-bound loops are rebuilt only below it
        if not isinstance(cur.body, (For, BlockRealize)):
            return position
        position = cur
        if cur is loop:
            return cur
    return position


def _pattern_error(state: ScheduleState, block: Block, reason: str) -> Exception:
    return fail(
        state,
        _NAME,
        f"the block {block.name_hint!r} does not match the padding pattern "
        f"(A[...] = T.if_then_else(in bounds, value, constant)): {reason}",
        block,
    )


def _match_pattern(state: ScheduleState, block: Block) -> tuple[BufferStore, PrimExpr, PrimExpr]:
    store = block.body
    if not isinstance(store, BufferStore):
        raise _pattern_error(state, block, "Block body expect a BufferStore to the write buffer")
    call = store.value
    if not (isinstance(call, Call) and call.op == "if_then_else" and len(call.args) == 3):
        raise _pattern_error(
            state, block, "Value of BufferStore expect to be constrained by a padding predicate"
        )
    value, pad_value = call.args[1], call.args[2]
    if not isinstance(pad_value, (IntImm, FloatImm)):
        raise _pattern_error(state, block, "Pad value should be constant")
    if _has_side_effect(value):
        raise _pattern_error(state, block, "Inbound computation should not have side-effect")
    return store, value, pad_value


def _cond(store: BufferStore) -> PrimExpr:
    call = store.value
    assert isinstance(call, Call)
    return call.args[0]


def _has_side_effect(expr: PrimExpr) -> bool:
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, Call) and node.kind == CallKind.EXTERN:
            found = True

    post_order_visit(expr, visit)
    return found


def _conjuncts(expr: PrimExpr) -> list[PrimExpr]:
    """``expr``'s conjunction as a list, ``likely`` dropped, ``True`` parts left out."""
    if isinstance(expr, And):
        return [*_conjuncts(expr.a), *_conjuncts(expr.b)]
    if isinstance(expr, Call) and expr.op == "likely" and expr.args:
        return _conjuncts(expr.args[0])
    if isinstance(expr, IntImm) and expr.value == 1:
        return []
    return [expr]


def _conjoin(parts: Sequence[PrimExpr]) -> PrimExpr:
    if not parts:
        return const(True)
    out = parts[0]
    for part in parts[1:]:
        out = And(out, part)
    return out


def _bounded(domains: Mapping[Var, Range]) -> Analyzer:
    analyzer = Analyzer()
    for var, rng in domains.items():
        analyzer.bind_range(var, rng.min, rng.extent)
    return analyzer


def _in_bound_regions(
    state: ScheduleState,
    block: Block,
    values: Sequence[PrimExpr],
    domains: Mapping[Var, Range],
    predicate: PrimExpr,
) -> list[Range]:
    """Per binding, the interval of its values satisfying the conditions on it."""
    analyzer = _bounded(domains)
    loop_ids = {id(v) for v in domains}
    owner: dict[int, int] = {}  # loop var -> the binding using it
    forms = []
    for k, value in enumerate(values):
        if not supports_linear(value.dtype):
            raise _pattern_error(state, block, "Block iters are not independent wrt padding "
                                 "condition")
        form = to_linear(value)
        for atom, coef in form.live_terms():
            if not (isinstance(atom, Var) and id(atom) in loop_ids):
                raise _pattern_error(
                    state, block, "Block iters are not independent wrt padding condition"
                )
            if id(atom) in owner and owner[id(atom)] != k:
                raise _pattern_error(
                    state, block, "Block iters are not independent wrt padding condition"
                )
            owner[id(atom)] = k
            if coef <= 0:
                raise _pattern_error(state, block, "Strided iteration is not supported")
        coefs = [c for _, c in form.live_terms()]
        if coefs and min(coefs) != 1:
            raise _pattern_error(state, block, "Strided iteration is not supported")
        forms.append(form)
    lows: list[int] = []
    highs: list[int] = []
    for value in values:
        bound = analyzer.const_int_bound(value)
        if bound == IntBound.of_dtype(value.dtype):  # nothing known: a symbolic extent
            raise _pattern_error(state, block, "the block's bindings are not bounded")
        lows.append(int(bound.lo))
        highs.append(int(bound.hi))
    for cond in _conjuncts(predicate):
        found = _bound_of(cond, forms, owner)
        if found is None:
            raise _pattern_error(
                state, block, "Block iters are not independent wrt padding condition"
            )
        k, low, high = found
        if low is not None:
            lows[k] = max(lows[k], low)
        if high is not None:
            highs[k] = min(highs[k], high)
    out: list[Range] = []
    for value, low, high in zip(values, lows, highs):
        if high < low:
            raise _pattern_error(state, block, "the in-bound region is empty")
        out.append(Range(const(low, value.dtype), const(high - low + 1, value.dtype)))
    return out


def _bound_of(
    cond: PrimExpr, forms: Sequence[LinearForm], owner: Mapping[int, int]
) -> tuple[int, int | None, int | None] | None:
    """``(binding, low, high)`` when ``cond`` bounds one binding (``c <= e``, ``e < c``,
    ...), inclusive bounds."""
    if not isinstance(cond, (LT, LE, GT, GE)):
        return None
    if not supports_linear(cond.a.dtype):
        return None
    diff = to_linear(cond.a - cond.b)  # cond: diff < 0, diff <= 0, diff > 0, diff >= 0
    terms = diff.live_terms()
    if not terms:
        return None
    users = {owner.get(id(atom)) for atom, _ in terms}
    if len(users) != 1 or None in users:
        return None
    k = users.pop()
    assert k is not None
    form = forms[k]
    mine = {id(a): c for a, c in form.live_terms()}
    theirs = {id(a): c for a, c in terms}
    if set(mine) != set(theirs):
        return None
    sign = next(iter(theirs.values())) // next(iter(mine.values()))
    if sign not in (1, -1) or any(theirs[a] != sign * c for a, c in mine.items()):
        return None
    # diff = sign * (e - e_const) + diff_const: the condition on e
    offset = diff.const - sign * form.const
    # the condition is ``sign * e + offset (op) 0``, i.e. ``sign * e (op) -offset``
    op = {LT: "lt", LE: "le", GT: "gt", GE: "ge"}[type(cond)]
    rhs = -offset
    if sign == -1:  # ``-e (op) rhs`` is ``e (flipped op) -rhs``
        op = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[op]
        rhs = -rhs
    if op == "lt":
        return k, None, rhs - 1
    if op == "le":
        return k, None, rhs
    if op == "gt":
        return k, rhs + 1, None
    return k, rhs, None


def _rewriter(repl: Mapping[Var, PrimExpr], analyzer: Analyzer) -> Callable[[PrimExpr], PrimExpr]:
    def rewrite(expr: PrimExpr) -> PrimExpr:
        return _simplify(substitute_expr(expr, repl), analyzer)

    return rewrite


def _simplify(expr: PrimExpr, analyzer: Analyzer) -> PrimExpr:
    """Simplified, and an integer known to be one value (a var of a unit loop) as that
    value, as TVM's simplifier gives it."""
    out = simplify_expr(expr, analyzer)
    if out.dtype.is_integer and out.dtype.is_scalar and not isinstance(out, IntImm):
        bound = analyzer.const_int_bound(out)
        if bound.is_point:
            return const(bound.lo, out.dtype)
    return out


def _const_block(
    realize: BlockRealize,
    store: BufferStore,
    pad_value: PrimExpr,
    inner_first: Sequence[For],
    top: For,
    analyzer: Analyzer,
) -> tuple[Stmt, Block]:
    block = realize.block
    repl: dict[Var, PrimExpr] = {}
    iter_vars = []
    for iv in block.iter_vars:
        var = Var(iv.var.name, iv.var.dtype)
        iter_vars.append(IterVar(var, iv.dom, IterKind.SPATIAL))
        repl[iv.var] = var
    rewrite = _rewriter(repl, analyzer)
    write = block.writes[0]
    region = BufferRegion(
        write.buffer, tuple(Range(rewrite(r.min), rewrite(r.extent)) for r in write.region)
    )
    body = BufferStore(store.buffer, pad_value, tuple(rewrite(i) for i in store.indices))
    new_block = Block(tuple(iter_vars), (), (region,), block.name_hint + "_pad_const", body)
    copied: list[tuple[For, Var]] = []
    for lp in inner_first:
        var = Var(lp.loop_var.name, lp.loop_var.dtype)
        copied.append((lp, var))
        repl[lp.loop_var] = var  # the new loop variables carry no bounds: not simplified away
        if lp is top:
            break
    nest: Stmt = BlockRealize(
        tuple(rewrite(v) for v in realize.iter_values), rewrite(realize.predicate), new_block
    )
    for lp, var in copied:
        nest = For(var, lp.min, lp.extent, ForKind.SERIAL, nest)
    return nest, new_block


def _in_bound_block(
    realize: BlockRealize,
    store: BufferStore,
    value: PrimExpr,
    regions: Sequence[Range],
    predicate: PrimExpr,
    inner_first: Sequence[For],
    top: For,
    domains: Mapping[Var, Range],
) -> tuple[Stmt, Block]:
    block = realize.block
    rebuilt = inner_first[: list(inner_first).index(top) + 1]
    ranges: dict[int, Range] = {id(lp.loop_var): Range(lp.min, lp.extent) for lp in rebuilt}
    repl: dict[Var, PrimExpr] = {}
    iter_vars = []
    bindings: list[PrimExpr] = []
    shifted: dict[int, Range] = {}
    plain_analyzer = _bounded(domains)
    for iv, binding, region in zip(block.iter_vars, realize.iter_values, regions):
        var = Var(iv.var.name, iv.var.dtype)
        new_range = Range(const(0, var.dtype), region.extent)
        iter_vars.append(IterVar(var, new_range, IterKind.SPATIAL))
        repl[iv.var] = _plus(var, region.min)
        if isinstance(binding, Var) and id(binding) in ranges:
            # a loop of the chain bound alone: narrow the loop, not the block's predicate
            ranges[id(binding)] = new_range
            shifted[id(binding)] = new_range
            bindings.append(binding)
            repl[binding] = _plus(binding, region.min)
        else:
            bindings.append(_simplify(binding - region.min, plain_analyzer))
    analyzer = Analyzer()
    for var, rng in domains.items():
        rng = shifted.get(id(var), rng)
        analyzer.bind_range(var, rng.min, rng.extent)
    rewrite = _rewriter(repl, analyzer)

    def regions_of(items: Sequence[BufferRegion]) -> tuple[BufferRegion, ...]:
        return tuple(
            BufferRegion(
                r.buffer, tuple(Range(rewrite(d.min), rewrite(d.extent)) for d in r.region)
            )
            for r in items
        )

    body = BufferStore(store.buffer, rewrite(value), tuple(rewrite(i) for i in store.indices))
    new_block = Block(
        tuple(iter_vars), regions_of(block.reads), regions_of(block.writes), block.name_hint,
        body,
    )
    nest: Stmt = BlockRealize(tuple(bindings), rewrite(predicate), new_block)
    for lp in rebuilt:
        rng = ranges[id(lp.loop_var)]
        nest = For(
            lp.loop_var, rng.min, rng.extent, lp.kind, nest, lp.thread_binding, lp.annotations
        )
    return nest, new_block


def _plus(var: Var, offset: PrimExpr) -> PrimExpr:
    return var if isinstance(offset, IntImm) and offset.value == 0 else var + offset
