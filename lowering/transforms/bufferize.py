"""One-Shot-style bufferization (pass ``bufferize``): decide where each tensor lives, then rewrite.

Adapted from MLIR's One-Shot Bufferize (seed ``mlir-bufferization.md``). Tensors
are the root-level ``T.compute`` results recognised by :mod:`lowering.transforms.tensor_ir`.

**Analysis** -- one forward pass over the top-level statements, greedy, deciding
on the spot. Tensors sharing memory form a *storage class* (a chain of tensors
whose live ranges follow each other); a class lives in a new allocation, an
output parameter, or a destination buffer.

* A tensor ``t`` defined by a spatial-only compute may be computed **in place**
  in an operand tensor ``u`` (joining ``u``'s class) when ``u`` has the same
  shape and dtype, every read of ``u`` by ``t``'s producer is at the index being
  written (the block vars, in order), ``u`` is not read by any later statement
  and not returned. Otherwise the candidate is rejected with a **read-after-write
  conflict** ``(definition of u, conflicting write: t's producer, read)``, the
  read being the later statement, the producer itself (a read at another index
  such as ``u[i + 1]``) or the ``return``.
* A tensor with no in-place candidate starts a class in a **new allocation**.
* A **returned** tensor lives in its output parameter. When it could be computed
  in place in ``u`` and ``u``'s class is a new allocation, that whole class is
  moved to the output parameter instead (the chain is materialised directly in
  the caller's array: no allocation at all).
* A compute writing an existing buffer ``C`` (``out=C``, destination-passing
  style) likewise takes over the class of an operand ``u`` it could be computed
  in place in, when ``C`` is not accessed while the class is live and the compute
  does not read ``C``: the chain is computed in ``C``.

Reductions never bufferize in place (their ``init`` overwrites an element before
the update reads it). Buffers passed as parameters are assumed not to alias
(MLIR's ``restrict``). **Always-allocate mode** --
``PassContext(config={"bufferize": {"always_allocate": True}})``, the seed's
``AlwaysCopyAnalysisState`` -- skips the analysis: every tensor gets its own
buffer (returned ones their output parameter).

**Rewrite** -- tensors are replaced by their class storage buffer; classes in a
new allocation keep the first member's buffer as a root ``alloc_buffer`` (which
``lower_blocks`` turns into ``Allocate`` + ``DeclBuffer`` around the statements
using it); every returned tensor becomes an output parameter (a handle param
and ``buffer_map`` entry appended after the inputs, in return order; attr
``"num_outputs"``) -- see :mod:`lowering.abi.boundary` for evaluating their shapes.

:func:`explain_bufferization` reports the decisions like ``print-conflicts``.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field

from irbuilder.ir import (
    BlockRealize,
    Buffer,
    PrimFunc,
    Span,
    Var,
    as_dtype,
    make_data_var,
    rebuild,
)
from irbuilder.tir.tensor import RETURNS_ATTR, RETURNS_SPAN_ATTR

from ..analysis import substitute
from ..pass_infra import PassContext, function_pass
from .tensor_ir import TensorProgram, same_shape, tensor_program

__all__ = [
    "NUM_OUTPUTS_ATTR",
    "BufferizationPlan",
    "Conflict",
    "Decision",
    "analyze",
    "bufferize",
    "explain_bufferization",
]

NUM_OUTPUTS_ATTR = "num_outputs"
"""PrimFunc attr after bufferize: how many trailing buffer params are outputs."""


@dataclass(frozen=True)
class Conflict:
    """A read-after-write conflict: writing ``tensor``'s buffer would clobber a needed value."""

    tensor: str
    what: str
    definition: Span | None
    write: Span | None
    read: Span | None


@dataclass
class _Class:
    members: list[Buffer]
    kind: str  # "alloc" | "output" | "destination"
    storage: Buffer | None = None  # destination buffer, or the output param buffer
    output_index: int = -1


@dataclass
class Decision:
    """Where one tensor lives and why."""

    tensor: Buffer
    kind: str
    """``"alloc"`` (new buffer), ``"inplace"`` (in an operand's buffer), ``"output"``."""
    shares_with: Buffer | None
    reason: str
    conflicts: list[Conflict] = field(default_factory=list)
    span: Span | None = None


@dataclass
class BufferizationPlan:
    """The analysis result: a decision per tensor and the storage classes."""

    program: TensorProgram
    decisions: list[Decision]
    classes: list[_Class]
    class_of: dict[Buffer, int]
    always_allocate: bool
    notes: list[str] = field(default_factory=list)


def _identity_reads(prog: TensorProgram, p: int, u: Buffer) -> bool:
    nest = prog.nests[p]
    assert nest is not None
    return all(
        len(idx) == len(nest.spatial) and all(a is b for a, b in zip(idx, nest.spatial))
        for idx in prog.loads[p].get(u, [])
    )


def _span(prog: TensorProgram, p: int) -> Span | None:
    if p >= prog.end:
        return prog.return_span
    nest = prog.nests[p]
    return nest.span if nest is not None else prog.stmts[p].span


def _inplace_candidate(
    prog: TensorProgram, p: int, t: Buffer | None, plan: BufferizationPlan
) -> tuple[Buffer | None, list[Conflict], list[str]]:
    """The operand tensor the compute at ``p`` may write in place, with rejected ones."""
    nest = prog.nests[p]
    assert nest is not None
    conflicts: list[Conflict] = []
    others: list[str] = []
    if nest.is_reduction:
        return None, conflicts, ["a reduction never runs in place (init overwrites first)"]
    out = nest.output
    for u in prog.loads[p]:
        if u not in prog.tensors or u is t:
            continue
        definition = _span(prog, prog.tensors[u])
        write = _span(prog, p)
        if not same_shape(u.shape, out.shape) or u.dtype != out.dtype:
            others.append(f"{u.name}: different shape or dtype")
            continue
        if not _identity_reads(prog, p, u):
            what = f"{u.name} is read at another index than the one written"
            conflicts.append(Conflict(u.name, what, definition, write, write))
            continue
        later = [q for q in prog.readers(u) if q > p]
        if prog.is_returned(u):
            conflicts.append(
                Conflict(u.name, f"{u.name} is returned", definition, write, prog.return_span)
            )
            continue
        if later:
            what = f"{u.name} is read again later"
            conflicts.append(Conflict(u.name, what, definition, write, _span(prog, later[0])))
            continue
        cls = plan.classes[plan.class_of[u]]
        if t is None and cls.kind != "alloc":
            others.append(f"{u.name}: already lives in {cls.kind} storage")
            continue
        return u, conflicts, others
    return None, conflicts, others


def analyze(func: PrimFunc, always_allocate: bool | None = None) -> BufferizationPlan:
    """Decide the storage of every tensor of ``func`` (see module); no rewriting.

    ``always_allocate`` defaults to the active PassContext's ``bufferize`` option.
    """
    if always_allocate is None:
        ctx = PassContext.current()
        always_allocate = bool(ctx.option("bufferize", "always_allocate", False))
    prog = tensor_program(func)
    plan = BufferizationPlan(prog, [], [], {}, always_allocate)
    for p, nest in enumerate(prog.nests):
        if nest is None:
            continue
        t = nest.output
        if t in prog.tensors:
            _decide_tensor(plan, p, t)
        elif not always_allocate and not nest.is_reduction:
            _anchor_destination(plan, p, t)
    return plan


def _new_class(plan: BufferizationPlan, t: Buffer, kind: str) -> _Class:
    cls = _Class([t], kind)
    plan.class_of[t] = len(plan.classes)
    plan.classes.append(cls)
    return cls


def _decide_tensor(plan: BufferizationPlan, p: int, t: Buffer) -> None:
    prog = plan.program
    span = _span(prog, p)
    returned = prog.is_returned(t)
    if plan.always_allocate:
        cls = _new_class(plan, t, "output" if returned else "alloc")
        if returned:
            cls.output_index = _output_index(prog, t)
        reason = "always-allocate mode" + (" (returned: output parameter)" if returned else "")
        kind = "output" if returned else "alloc"
        plan.decisions.append(Decision(t, kind, None, reason, [], span))
        return
    u, conflicts, others = _inplace_candidate(prog, p, t, plan)
    if returned:
        index = _output_index(prog, t)
        if u is not None and plan.classes[plan.class_of[u]].kind == "alloc":
            cls = plan.classes[plan.class_of[u]]
            cls.kind, cls.output_index = "output", index
            cls.members.append(t)
            plan.class_of[t] = plan.class_of[u]
            names = ", ".join(m.name for m in cls.members[:-1])
            reason = f"returned: output {index}; the chain {names} is computed in it too"
        else:
            _new_class(plan, t, "output").output_index = index
            reason = f"returned: output {index}"
        plan.decisions.append(Decision(t, "output", u, reason, conflicts, span))
        return
    if u is not None:
        plan.class_of[t] = plan.class_of[u]
        plan.classes[plan.class_of[u]].members.append(t)
        reason = f"in place in {u.name}'s buffer ({u.name} is dead afterwards)"
        plan.decisions.append(Decision(t, "inplace", u, reason, conflicts, span))
        return
    _new_class(plan, t, "alloc")
    if conflicts:
        reason = "new buffer: every in-place candidate has a read-after-write conflict"
    elif others:
        reason = "new buffer: no operand fits (" + "; ".join(others) + ")"
    else:
        reason = "new buffer: no tensor operand to reuse"
    plan.decisions.append(Decision(t, "alloc", None, reason, conflicts, span))


def _anchor_destination(plan: BufferizationPlan, p: int, dest: Buffer) -> None:
    """A DPS compute into ``dest``: move an operand's allocation class into ``dest``."""
    prog = plan.program
    u, _, _ = _inplace_candidate(prog, p, None, plan)
    if u is None:
        return
    cls = plan.classes[plan.class_of[u]]
    first = min(prog.tensors[m] for m in cls.members)
    if dest in prog.loads[p] or any(first <= q < p for q in prog.accessors(dest)):
        return
    cls.kind, cls.storage = "destination", dest
    names = ", ".join(m.name for m in cls.members)
    plan.notes.append(f"{names} computed directly in the destination {dest.name}")


def _output_index(prog: TensorProgram, t: Buffer) -> int:
    return next(i for i, r in enumerate(prog.returns) if r is t)


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 0
    while candidate in taken:
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate)
    return candidate


def _output_buffer(t: Buffer, name: str) -> Buffer:
    return Buffer(name, make_data_var(f"{name}_data", t.dtype), t.shape, t.dtype, span=t.span)


def rewrite(plan: BufferizationPlan) -> PrimFunc:
    """Apply ``plan``: tensors replaced by their storage, outputs made parameters."""
    prog = plan.program
    func = prog.func
    if prog.root is None:
        return func
    taken = {p.name for p in func.params} | {b.name for b in func.buffer_map.values()}
    outputs: list[Buffer] = []
    for r in prog.returns:
        outputs.append(_output_buffer(r, _unique(r.name, taken)))
    storage: list[Buffer] = []
    for cls in plan.classes:
        if cls.kind == "output":
            storage.append(outputs[cls.output_index])
        elif cls.kind == "destination":
            assert cls.storage is not None
            storage.append(cls.storage)
        else:
            storage.append(cls.members[0])
    bmap: dict[Buffer, Buffer] = {}
    for t, index in plan.class_of.items():
        if storage[index] is not t:
            bmap[t] = storage[index]
    root = prog.root
    body = substitute(root.body, None, bmap)
    kept = tuple(b for b in root.alloc_buffers if b not in bmap)
    old = func.body
    assert isinstance(old, BlockRealize)
    new_root = rebuild(root, {"body": body, "alloc_buffers": kept})
    realize = BlockRealize(old.iter_values, old.predicate, new_root, span=old.span)
    params = list(func.params)
    buffer_map = dict(func.buffer_map)
    for out in outputs:
        handle = Var(out.name, as_dtype("handle"))
        params.append(handle)
        buffer_map[handle] = out
    attrs = {k: v for k, v in func.attrs.items() if k not in (RETURNS_ATTR, RETURNS_SPAN_ATTR)}
    if prog.returns:
        attrs[NUM_OUTPUTS_ATTR] = len(outputs)
    return PrimFunc(tuple(params), realize, func.ret_type, buffer_map, attrs, span=func.span)


@function_pass("bufferize")
def bufferize(func: PrimFunc) -> PrimFunc:
    """Analyse, then rewrite tensors to buffers and returned tensors to output params."""
    if RETURNS_ATTR not in func.attrs and tensor_program(func).root is None:
        return func
    return rewrite(analyze(func))


# -- explain ------------------------------------------------------------------------


def _where(span: Span | None) -> str:
    if span is None:
        return "<unknown location>"
    text = linecache.getline(span.file, span.line).strip()
    return f"{span.file}:{span.line}" + (f"  {text}" if text else "")


def _elements(buffer: Buffer) -> str:
    return " x ".join(str(getattr(s, "value", s)) for s in buffer.shape) + f" {buffer.dtype}"


def explain_bufferization(func: PrimFunc, opt_level: int | None = None) -> str:
    """A report of fusion and bufferization decisions for tensor-level ``func``.

    Fusion runs as in :func:`lowering.lower` (``opt_level`` defaults to the active
    PassContext's; ``fuse_tensors`` may be disabled there); then each tensor's
    decision is listed, and for each allocation the conflicts that forced it with
    the source lines (``file:line  text``) of the definition, the conflicting
    write and the read -- like One-Shot Bufferize's ``print-conflicts``.
    """
    from .tensor_fusion import fuse_tensors, fuse_tensors_with_records

    ctx = PassContext.current()
    level = ctx.opt_level if opt_level is None else opt_level
    lines = [f"bufferization of {func.name!r} (opt_level {level})"]
    probe = PassContext(opt_level=level, disabled_passes=ctx.disabled_passes)
    if probe.enabled(fuse_tensors):
        func, records = fuse_tensors_with_records(func)
        for rec in records:
            lines.append(
                f"  fused: {rec.tensor} inlined into {rec.consumer} (no buffer)\n"
                f"      definition: {_where(rec.producer_span)}"
            )
    plan = analyze(func)
    if plan.always_allocate:
        lines.append("  always-allocate mode: analysis disabled, every tensor gets a buffer")
    allocs: list[Buffer] = []
    for d in plan.decisions:
        cls = plan.classes[plan.class_of[d.tensor]]
        where = {"alloc": "new buffer", "inplace": "in place", "output": "output parameter"}
        kind = where[d.kind]
        if cls.kind == "output" and d.kind != "output":
            kind = f"in output parameter {cls.output_index} (chain of {cls.members[-1].name})"
        elif cls.kind == "destination" and cls.storage is not None:
            kind = f"in destination {cls.storage.name}"
        lines.append(f"  {d.tensor.name}: {kind} -- {d.reason}")
        lines.append(f"      definition: {_where(d.span)}")
        if d.kind == "alloc" and cls.kind == "alloc" and cls.members[0] is d.tensor:
            allocs.append(d.tensor)
        for i, c in enumerate(d.conflicts):
            lines.append(f"      conflict C_{i}: {c.what}")
            lines.append(f"        DEF:         {_where(c.definition)}")
            lines.append(f"        CONFL-WRITE: {_where(c.write)}")
            lines.append(f"        READ:        {_where(c.read)}")
    for note in plan.notes:
        lines.append(f"  {note}")
    shown = ", ".join(f"{b.name} ({_elements(b)})" for b in allocs)
    lines.append(f"  allocations: {len(allocs)}" + (f": {shown}" if allocs else ""))
    return "\n".join(lines)
