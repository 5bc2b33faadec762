"""``ScheduleError`` and its rendering: the message plus the offending IR, underlined.

The printed function is located by pre-order position: the n-th loop (a ``T.grid`` line
holds several) or the n-th ``with T.block`` line of the script is the n-th For or Block of
the tree, because the printer emits statements in tree order.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import Block, For, PrimFunc, Stmt

from .state import ScheduleState, walk_preorder

__all__ = ["BufferArgumentError", "ScheduleError", "fail", "render_error"]

_CONTEXT_LINES = 12


class ScheduleError(ValueError):
    """A schedule primitive was refused; the IR is unchanged.

    ``primitive`` names the primitive, ``reason`` says what is wrong in user terms and
    ``rendered`` (part of ``str(err)`` at the "detail" render level) shows the function
    with the offending loop or block underlined. At the "fast" level the message is
    ``fast`` (a fixed text, as TVM's fast error strings) or the reason alone; at "none"
    it is ``(not rendered)``.
    """

    def __init__(
        self, primitive: str, reason: str, rendered: str = "", fast: str | None = None
    ) -> None:
        self.primitive = primitive
        self.reason = reason
        self.rendered = rendered
        self.fast = fast  # TVM's short "fast" text for this error, when it has one
        text = f"ScheduleError: {primitive}: {reason}"
        if rendered:
            text += "\n" + rendered
        super().__init__(text)


class BufferArgumentError(ScheduleError, AssertionError):
    """A buffer argument given as ``("read"|"write", index)``, an index or a name that names
    no buffer of the block (transform_layout, set_axis_separator, reindex).

    TVM v0.16 checks these arguments in its Python wrapper with ``assert`` before the
    primitive runs, so TVM code (and TVM's tests) expect ``AssertionError``; here every
    refusal is a ``ScheduleError`` leaving the IR unchanged. The class is both, so code
    written against either catches it. Integer indices that TVM checks in C++ (set_scope,
    storage_align, cache_read, ...) stay plain ``ScheduleError``s, as in TVM.
    """


def _marks(func: PrimFunc, nodes: Sequence[Stmt]) -> list[tuple[str, int]]:
    """For each node: ("loop", n) or ("block", n), its pre-order number among its kind."""
    loops = blocks = 0
    found: dict[int, tuple[str, int]] = {}
    wanted = {id(n) for n in nodes}
    for stmt in walk_preorder(func.body):
        if isinstance(stmt, For):
            if id(stmt) in wanted:
                found[id(stmt)] = ("loop", loops)
            loops += 1
        elif isinstance(stmt, Block):
            if id(stmt) in wanted:
                found[id(stmt)] = ("block", blocks)
            blocks += 1
    return [found[id(n)] for n in nodes if id(n) in found]


def _locate(lines: list[str], kind: str, number: int) -> tuple[int, int, int] | None:
    """(line index, start column, end column) of the n-th loop target or block header."""
    loops = blocks = 0
    for row, line in enumerate(lines):
        text = line.strip()
        indent = len(line) - len(line.lstrip())
        if text.startswith("for ") and " in " in text:
            targets = text[4 : text.index(" in ")].split(", ")
            if kind == "loop" and loops <= number < loops + len(targets):
                name = targets[number - loops]
                col = line.index(name, indent + 4)
                return row, col, col + len(name)
            loops += len(targets)
        elif text.startswith("with T.block("):
            if kind == "block" and blocks == number:
                return row, indent, len(line.rstrip())
            blocks += 1
    return None


def _region_end(lines: list[str], row: int) -> int:
    indent = len(lines[row]) - len(lines[row].lstrip())
    end = row + 1
    while end < len(lines):
        line = lines[end]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        end += 1
    return end


def render_error(func: PrimFunc, nodes: Sequence[Stmt]) -> str:
    """The function's script around ``nodes`` with each of them underlined."""
    try:
        text = func.script()
    except Exception:  # no printer installed (tvmscript not imported): message only
        return ""
    lines = [line for line in text.splitlines() if not line.startswith("# from")]
    spots = [_locate(lines, kind, n) for kind, n in _marks(func, nodes)]
    located = [s for s in spots if s is not None]
    if not located:
        return ""
    first = min(s[0] for s in located)
    last = max(_region_end(lines, s[0]) for s in located)
    last = min(last, max(s[0] for s in located) + _CONTEXT_LINES)
    head = next((r for r in range(first, -1, -1) if lines[r].startswith("def ")), first)
    width = len(str(last))
    out: list[str] = [f"  --> in {func.name}:"]
    shown = [head] if head < first else []
    shown.extend(range(first, last))
    previous = None
    for row in shown:
        if previous is not None and row != previous + 1:
            out.append(f"{'':>{width}} | ...")
        out.append(f"{row + 1:>{width}} | {lines[row]}")
        for spot_row, start, end in located:
            if spot_row == row:
                out.append(f"{'':>{width}} | {' ' * start}{'^' * max(1, end - start)}")
        previous = row
    return "\n".join(out)


def fail(state: ScheduleState, primitive: str, reason: str, *nodes: Stmt) -> ScheduleError:
    """The error refusing ``primitive``, with ``nodes`` underlined in the current function."""
    return ScheduleError(primitive, reason, render_error(state.output(), nodes) if nodes else "")
