"""Static race check for ``T.parallel`` loops (pass ``check_parallel_races``).

A parallel loop's iterations run on different threads in no fixed order, so the loop is
refused when one iteration may write a buffer element that another iteration writes or
reads. The check runs on logical N-d indices (before ``flatten_buffer``) and refuses what it
cannot prove independent; ``docs/race-check.md`` states the rule with examples.

For a loop over ``p`` and a write ``a`` with another access ``b`` of the same storage (``b``
may be ``a`` itself, executed by another iteration), ``b`` is renamed as executed by an
iteration ``p'`` (every variable bound inside the loop gets a copy with the same range) and
the pair is independent when one of these holds:

* some dimension's indices are ``c*p + r`` and ``c*p' + r'`` with the same constant ``c`` and
  ``|r - r'| < |c|`` under the loops' ranges (then equal indices force ``p == p'``);
  a symbolic stride ``S*p + r`` with ``0 <= r < S`` on both sides counts the same way;
* some dimension's indices can never be equal (their difference excludes 0);
* both accesses only run in the iteration pinned by their conditions (``if p == 0``).

Buffers allocated inside the loop body are private to an iteration. A pointer to shared
storage that escapes (a data var used as a value, ``T.address_of``) cannot be followed:
the loop is refused. The accesses are collected by :mod:`lowering.checks.race_accesses`, pairs
decided by :mod:`lowering.checks.race_pairs`.

Opt-outs: the loop annotation ``{"tvmscript.allow_races": True}``, or
``PassContext(config={"check_parallel_races": {"enabled": False}})`` (what
``build(..., check_races=False)`` sets), or disabling the pass by name.
"""

from __future__ import annotations

import linecache

from irbuilder.ir import (
    Block,
    DeclBuffer,
    For,
    IntImm,
    PrimFunc,
    Span,
    Var,
    expr_text,
    post_order_visit,
)

from ..pass_infra import PassContext, function_pass
from .race_accesses import (
    Access,
    Escape,
    InnerLoop,
    collect_body,
    has_memory,
    mentions,
    parallel_loops,
    storage_outside,
)
from .race_pairs import PairCheck, same_layout

__all__ = ["ALLOW_RACES", "PASS_NAME", "RaceError", "check_parallel_races", "find_races"]

ALLOW_RACES = "tvmscript.allow_races"
"""Loop annotation: ``True`` exempts one parallel loop from the check."""

PASS_NAME = "check_parallel_races"

_OPT_OUT = (
    f'annotate the loop with T.parallel(..., annotations={{"{ALLOW_RACES}": True}}) '
    "or build with check_races=False"
)


class RaceError(ValueError):
    """A parallel loop whose iterations may conflict.

    ``span`` locates the access, ``notes`` are ``(message, span)`` pairs: the parallel loop,
    the other access when it is a different one, and how to opt out (no span).
    """

    def __init__(
        self,
        message: str,
        buffer: str,
        span: Span | None,
        notes: list[tuple[str, Span | None]],
    ) -> None:
        self.message = message
        self.buffer = buffer
        self.span = span
        self.notes = notes
        where = f"{span}: " if span is not None else ""
        located = "".join(f"\n  {n}" + (f" ({s})" if s else "") for n, s in notes)
        super().__init__(f"{where}{message}{located}")


def _element(access: Access) -> str:
    return f"{access.buffer.name}[{', '.join(expr_text(i) for i in access.indices)}]"


def _loop_header(loop: For) -> Span | None:
    """The first line of the loop's span (the ``for ... in T.parallel(...)`` line)."""
    span = loop.span
    if span is None or span.end_line == span.line:
        return span
    text = linecache.getline(span.file, span.line).rstrip()
    end = len(text) + 1 if text else span.col + 1
    return Span(span.file, span.line, span.col, span.line, max(end, span.col + 1))


def _problem(loop: For, a: Access, b: Access, pair: PairCheck) -> RaceError:
    p = loop.loop_var.name
    name = a.buffer.name
    loop_note = (f"in this parallel loop over {p!r}", _loop_header(loop))
    other = "written" if b.write else "read"
    notes: list[tuple[str, Span | None]] = [loop_note]
    if b is not a and b.span != a.span:
        notes.append((f"{_element(b)} is {other} here", b.span))
    definite = pair.definite_offset()
    if pair.same_element_always():
        if b.write:
            message = (
                f"data race on buffer {name!r}: every iteration of the parallel loop over "
                f"{p!r} writes {_element(a)}"
            )
        else:
            message = (
                f"data race on buffer {name!r}: iterations of the parallel loop over {p!r} "
                f"write {_element(a)} while other iterations read it"
            )
        notes.append((f"to allow it anyway, {_OPT_OUT}", None))
    elif definite is not None:
        step = f"{p} + {definite}" if definite > 0 else f"{p} - {-definite}"
        verb = "writes" if b.write else "reads"
        message = (
            f"data race on buffer {name!r}: iteration {p} of the parallel loop writes "
            f"{_element(a)}, which iteration {step} {verb} as {_element(b)}"
        )
        notes.append((f"to allow it anyway, {_OPT_OUT}", None))
    else:
        if b is a:
            clash = f"two iterations may write the same element {_element(a)}"
        elif b.write:
            clash = f"one iteration may write {_element(a)} where another writes {_element(b)}"
        else:
            clash = f"one iteration may write {_element(a)} where another reads {_element(b)}"
        message = (
            f"cannot prove the iterations of the parallel loop over {p!r} independent "
            f"for buffer {name!r}: {clash}"
        )
        reason = _reason(a, b, loop.loop_var)
        if reason:
            notes.append((reason, None))
        notes.append((f"if the iterations never touch the same element, {_OPT_OUT}", None))
    return RaceError(message, name, a.span, notes)


def _reason(a: Access, b: Access, p: Var) -> str:
    if any(has_memory(i) for i in (*a.indices, *b.indices)):
        return "the index depends on values loaded from memory, which the analysis cannot follow"
    if not any(mentions(i, {p}) for i in a.indices):
        return f"no index of {a.buffer.name!r} depends on {p.name!r}, so iterations may meet"
    return ""


def _escape_problem(loop: For, escape: Escape, buffer_name: str) -> RaceError:
    p = loop.loop_var.name
    message = (
        f"cannot prove the iterations of the parallel loop over {p!r} independent: "
        f"{escape.what} of buffer {buffer_name!r} escapes (e.g. to an external call), "
        "and what is written through it cannot be followed"
    )
    notes: list[tuple[str, Span | None]] = [
        (f"in this parallel loop over {p!r}", _loop_header(loop)),
        (f"if the iterations never touch the same element, {_OPT_OUT}", None),
    ]
    return RaceError(message, buffer_name, escape.span, notes)


def _check_loop(
    loop: For, enclosing: tuple[InnerLoop, ...], storage: set[Var], names: dict[Var, str]
) -> RaceError | None:
    body = collect_body(loop, storage)
    for escape in body.escapes:
        if escape.data not in body.private:
            return _escape_problem(loop, escape, names.get(escape.data, escape.data.name))
    groups: dict[Var, list[Access]] = {}
    for access in body.accesses:
        if access.buffer.data not in body.private:
            groups.setdefault(access.buffer.data, []).append(access)
    written = {x.buffer.data for x in body.accesses if x.write}
    for accesses in groups.values():
        writes = [x for x in accesses if x.write]
        if not writes:
            continue
        buffers = list({id(x.buffer): x.buffer for x in accesses}.values())
        # A view whose offset moves with the iteration (a match_buffer of row i) separates
        # iterations through its offset: compare element offsets in the storage.
        fixed = all(isinstance(b.elem_offset, IntImm) for b in buffers)
        layout = "nd" if same_layout(buffers) and fixed else "flat"
        conflicts = [
            (a, b, pair)
            for a in writes
            for b in [a, *(x for x in accesses if x is not a)]
            if not (pair := PairCheck(loop, enclosing, a, b, layout, written)).independent()
        ]
        if conflicts:
            # A certain race explains the refusal better than an undecided pair.
            certain = [c for c in conflicts if c[2].certain()]
            return _problem(loop, *(certain or conflicts)[0])
    return None


def _allowed(loop: For) -> bool:
    value = loop.annotations.get(ALLOW_RACES)
    if isinstance(value, IntImm):
        return bool(value.value)
    return bool(value)


def find_races(func: PrimFunc) -> list[RaceError]:
    """One problem per parallel loop that is not proven race-free (outer loops first)."""
    storage = storage_outside(func)
    names = {b.data: b.name for b in func.buffer_map.values()}

    def note_names(node: object) -> None:
        if isinstance(node, DeclBuffer):
            names.setdefault(node.buffer.data, node.buffer.name)
        elif isinstance(node, Block):
            for b in node.alloc_buffers:
                names.setdefault(b.data, b.name)

    post_order_visit(func.body, note_names)
    problems = []
    for loop, enclosing in parallel_loops(func.body):
        if _allowed(loop):
            continue
        problem = _check_loop(loop, enclosing, storage, names)
        if problem is not None:
            problems.append(problem)
    return problems


@function_pass(PASS_NAME)
def check_parallel_races(func: PrimFunc) -> PrimFunc:
    """Raise :class:`RaceError` for the first parallel loop whose iterations may conflict."""
    if not PassContext.current().option(PASS_NAME, "enabled", True):
        return func
    problems = find_races(func)
    if problems:
        raise problems[0]
    return func
