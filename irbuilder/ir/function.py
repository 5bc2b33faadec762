"""Functions and modules."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .buffer import Buffer
from .dtype import DataType
from .expr import Var, _set
from .span import Span
from .stmt import Stmt

__all__ = ["IRModule", "PrimFunc", "set_script_display", "set_script_printer"]

_ScriptPrinter = Callable[[Any], str]
_printer: list[_ScriptPrinter] = []


def set_script_printer(printer: _ScriptPrinter) -> None:
    """Install the TVMScript printer used by ``script()``.

    The printer belongs to the ``tvmscript`` package, which sits above the IR;
    it registers itself here when imported so the IR keeps no upward import.
    """
    _printer[:] = [printer]


def _script(node: Any) -> str:
    if not _printer:
        raise RuntimeError("no TVMScript printer installed: `import tvmscript` first")
    return _printer[0](node)


_ScriptShow = Callable[[Any, "str | None"], None]
_display: list[tuple[_ScriptShow, _ScriptPrinter]] = []


def set_script_display(show: _ScriptShow, html: _ScriptPrinter) -> None:
    """Install ``show(node, style)`` (highlighted output) and ``html(node)`` (notebooks'
    ``_repr_html_``); ``tvmscript`` installs them, like the printer."""
    _display[:] = [(show, html)]


def _show(node: Any, style: str | None) -> None:
    if _display:
        _display[0][0](node, style)
    else:
        print(_script(node))


def _html(node: Any) -> str:
    if _display:
        return _display[0][1](node)
    import html

    return f"<pre>{html.escape(_script(node))}</pre>"


@dataclass(frozen=True, eq=False, slots=True)
class PrimFunc:
    """A function over buffers and scalars.

    ``params`` are Vars: a buffer parameter is a ``handle`` Var mapped to its
    Buffer (with logical shape) in ``buffer_map``. ``attrs["global_symbol"]``
    holds the function's name.
    """

    params: tuple[Var, ...]
    body: Stmt
    ret_type: DataType | None = None
    buffer_map: Mapping[Var, Buffer] = field(default_factory=dict)
    attrs: Mapping[str, Any] = field(default_factory=dict)
    span: Span | None = field(default=None, kw_only=True, repr=False)

    __hash__ = object.__hash__

    def same_as(self, other: object) -> bool:
        """TVM's object identity test (the same function, not an equal one)."""
        return self is other

    def __post_init__(self) -> None:
        _set(self, "params", tuple(self.params))

    @property
    def name(self) -> str:
        return str(self.attrs.get("global_symbol", "main"))

    @property
    def __name__(self) -> str:
        """The function's name, as on the Python function a decorator replaced (TVM sets
        it there). A private function keeps no name in the IR: ``"main"``, as printed."""
        return self.name

    def with_body(self, body: Stmt) -> PrimFunc:
        return PrimFunc(
            self.params, body, self.ret_type, self.buffer_map, self.attrs, span=self.span
        )

    def with_attr(self, key: str, value: Any) -> PrimFunc:
        attrs = dict(self.attrs)
        attrs[key] = value
        return PrimFunc(
            self.params, self.body, self.ret_type, self.buffer_map, attrs, span=self.span
        )

    def script(self) -> str:
        """This function as TVMScript text."""
        return _script(self)

    def show(self, style: str | None = None) -> None:
        """Print :meth:`script`, syntax-highlighted in a terminal or a notebook when pygments
        is installed (``style`` names a pygments style)."""
        _show(self, style)

    def _repr_html_(self) -> str:
        """The script as (highlighted) HTML, for notebooks."""
        return _html(self)

    def __repr__(self) -> str:
        return f"PrimFunc({self.name!r}, params={[p.name for p in self.params]})"


@dataclass(frozen=True, eq=False, slots=True)
class IRModule:
    """Named functions compiled together."""

    functions: Mapping[str, PrimFunc]
    attrs: Mapping[str, Any] = field(default_factory=dict)
    span: Span | None = field(default=None, kw_only=True, repr=False)

    __hash__ = object.__hash__

    def __getitem__(self, name: str) -> PrimFunc:
        return self.functions[name]

    def __contains__(self, name: object) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def items(self) -> Iterator[tuple[str, PrimFunc]]:
        return iter(self.functions.items())

    def get_global_var(self, name: str) -> str:
        """The handle of the function ``name`` (TVM's GlobalVar; here functions are named
        by their string, as ``Schedule.func_working_on`` gives it)."""
        if name not in self.functions:
            raise ValueError(f"the module has no function {name!r}")
        return name

    def with_function(self, name: str, func: PrimFunc) -> IRModule:
        functions = dict(self.functions)
        functions[name] = func
        return IRModule(functions, self.attrs, span=self.span)

    def script(self) -> str:
        """This module as TVMScript text."""
        return _script(self)

    def show(self, style: str | None = None) -> None:
        """Print :meth:`script` (highlighted like :meth:`PrimFunc.show`)."""
        _show(self, style)

    def _repr_html_(self) -> str:
        """The script as (highlighted) HTML, for notebooks."""
        return _html(self)
