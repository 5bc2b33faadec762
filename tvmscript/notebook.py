"""IPython and Jupyter: kernels defined in cells, diagnostics that point at the cell.

IPython keeps every cell's source in :mod:`linecache` under a generated file name, which is
where the parser reads a ``@T.prim_func`` from, so kernels work in cells with no setup. This
module adds the finishing touches, installed automatically when ``tvmscript`` is imported
inside IPython (or with ``%load_ext tvmscript``):

* diagnostics name the cell as IPython does (``--> Cell In[3]:4:16``), not its file name;
* a :class:`~tvmscript.diagnostics.DiagnosticError` is shown as the located report alone,
  without the traceback through the decorator and the parser.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["cell_label", "install"]

_installed: set[int] = set()


def _shell() -> Any:
    ipython = sys.modules.get("IPython")
    return None if ipython is None else ipython.get_ipython()


def cell_label(filename: str) -> str | None:
    """``"Cell In[3]"`` when ``filename`` is an IPython cell of the running shell."""
    shell = _shell()
    compiler = getattr(shell, "compile", None)
    format_code_name = getattr(compiler, "format_code_name", None)
    if format_code_name is None:
        return None
    try:
        named = format_code_name(filename)
    except Exception:  # an older or unusual IPython: fall back to the file name
        return None
    return None if named is None else f"{named[0]} {named[1]}"


def _show_diagnostic(
    shell: Any,
    etype: type[BaseException],
    value: BaseException,
    tb: Any,
    tb_offset: int | None = None,
) -> None:
    # The report is the message; the frames (decorator, parser) are tvmscript's own.
    print(str(value), file=sys.stderr)


def install(shell: Any = None) -> bool:
    """Install the exception display for ``DiagnosticError`` in ``shell`` (the running one by
    default); returns whether there was a shell. Idempotent."""
    from .diagnostics import DiagnosticError

    shell = shell if shell is not None else _shell()
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    if id(shell) not in _installed:
        custom = getattr(shell, "custom_exceptions", ())
        if custom and DiagnosticError not in custom:
            return True  # the user's own handler stays; diagnostics still name the cell
        shell.set_custom_exc((DiagnosticError,), _show_diagnostic)
        _installed.add(id(shell))
    return True
