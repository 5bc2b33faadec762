"""Showing TVMScript: syntax highlighting in a terminal, HTML in a notebook.

``func.show()`` prints the script: highlighted with ANSI colours when standard output is a
terminal, as HTML when running in a Jupyter kernel, plain otherwise (or when ``NO_COLOR`` is
set). ``func._repr_html_()`` (what a notebook shows for a bare ``func``) is highlighted HTML.
Highlighting uses pygments when installed (``pip install tvmscript[notebook]``); without it
the text is the same, uncoloured.
"""

from __future__ import annotations

import html
import importlib
import os
import sys
from typing import Any

__all__ = ["highlight_ansi", "highlight_html", "html_of", "show"]

_DEFAULT_STYLE = "default"


def _pygments() -> Any:
    """The pygments package (optional; imported untyped), or None."""
    try:
        pygments = importlib.import_module("pygments")
        importlib.import_module("pygments.formatters")
        importlib.import_module("pygments.lexers")
    except ImportError:
        return None
    return pygments


def highlight_ansi(text: str, style: str | None = None) -> str:
    """``text`` (Python/TVMScript) with ANSI colours; unchanged without pygments."""
    pygments = _pygments()
    if pygments is None:
        return text
    formatter = pygments.formatters.Terminal256Formatter(style=style or _DEFAULT_STYLE)
    result: str = pygments.highlight(text, pygments.lexers.PythonLexer(), formatter)
    return result


def highlight_html(text: str, style: str | None = None) -> str:
    """``text`` as a self-contained ``<pre>`` block, coloured inline with pygments if present."""
    pygments = _pygments()
    if pygments is None:
        return f'<pre class="tvmscript">{html.escape(text)}</pre>'
    formatter = pygments.formatters.HtmlFormatter(
        style=style or _DEFAULT_STYLE, noclasses=True, nobackground=True, cssclass="tvmscript"
    )
    result: str = pygments.highlight(text, pygments.lexers.PythonLexer(), formatter)
    return result


def _in_notebook() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _terminal() -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def show(node: Any, style: str | None = None) -> None:
    """What ``PrimFunc.show()`` / ``IRModule.show()`` do (see the module docstring)."""
    text = node.script()
    if _in_notebook():
        ipython_display: Any = importlib.import_module("IPython.display")  # untyped package
        ipython_display.display(ipython_display.HTML(highlight_html(text, style)))
    elif _terminal():
        sys.stdout.write(highlight_ansi(text, style))
        sys.stdout.flush()
    else:
        print(text)


def html_of(node: Any) -> str:
    """``_repr_html_`` of a PrimFunc or IRModule."""
    return highlight_html(node.script())
