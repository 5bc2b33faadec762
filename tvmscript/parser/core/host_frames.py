"""Where a host Python helper failed while a kernel was being built.

A kernel may call a captured Python function (``@T.prim_func(capture=[helper])``) at
parse time. When it raises -- its own ``raise``, or a symbolic value used where Python
needs a concrete ``bool`` -- the diagnostic is located at the call in the kernel, and
this module finds the helper's own line in the traceback for a note.
"""

from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass
from types import TracebackType

from irbuilder.ir.span import Span

__all__ = ["HostFrame", "failing_host_frame"]

_INTERNAL_PACKAGES = ("tvmscript", "irbuilder", "lowering", "backend")
_LIBRARY_ROOTS = tuple(
    {sys.prefix, sys.base_prefix, sys.exec_prefix, getattr(sys, "base_exec_prefix", sys.prefix)}
)


@dataclass(frozen=True)
class HostFrame:
    """The innermost line of host code a failure went through."""

    function: str
    span: Span


def _is_host_code(globals_: dict[str, object], filename: str) -> bool:
    module = str(globals_.get("__name__", ""))
    if module.split(".")[0] in _INTERNAL_PACKAGES:
        return False
    # Python's library and installed packages (numpy...) are not the helper's own code.
    return not filename.startswith(_LIBRARY_ROOTS) and not filename.startswith("<frozen")


def _char_col(filename: str, line: int, byte_col: int) -> int:
    text = linecache.getline(filename, line)
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")) + 1


def failing_host_frame(tb: TracebackType | None, marker: str) -> HostFrame | None:
    """The innermost traceback entry running host code (see the module docstring), or
    None when the failure is deeper, in an expression of the kernel (``marker`` in its
    globals: a lambda the helper called)."""
    found: HostFrame | None = None
    while tb is not None:
        frame = tb.tb_frame
        code = frame.f_code
        if frame.f_globals.get(marker) is True:
            found = None  # the kernel's own code, compiled by the evaluator
        elif _is_host_code(frame.f_globals, code.co_filename):
            line = tb.tb_lineno
            end_line, col, end_col = line, 0, len(linecache.getline(code.co_filename, line))
            positions = list(code.co_positions()) if hasattr(code, "co_positions") else []
            if 0 <= tb.tb_lasti // 2 < len(positions):
                start, stop, first, last = positions[tb.tb_lasti // 2]
                if None not in (start, stop, first, last):
                    assert start is not None and stop is not None
                    assert first is not None and last is not None
                    line, end_line, col, end_col = start, stop, first, last
            span = Span(
                code.co_filename,
                line,
                _char_col(code.co_filename, line, col),
                end_line,
                _char_col(code.co_filename, end_line, end_col),
            )
            found = HostFrame(code.co_name, span)
        tb = tb.tb_next
    return found
