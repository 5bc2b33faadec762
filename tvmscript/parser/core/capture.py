"""Collecting the values a TVMScript program may use from the Python code around it.

A kernel's body is never run by Python; the parser evaluates its expressions against
the *captured environment* built here when the decorator runs.  Candidates come from,
highest priority first:

1. the ``capture={"name": value}`` mapping form, if used (always captured);
2. the function's closure cells (``__code__.co_freevars``/``__closure__``): exactly the
   enclosing-function locals Python itself would resolve in the body;
3. the locals of the decorator's caller (``caller_frame``, passed in by the entry
   point), which is where ``def gen_matmul(n, m): @T.prim_func def f(A: T.Buffer((n, m)))``
   finds ``n`` and ``m`` when they appear only in annotations (annotations are not part
   of the body, so they create no closure cells);
4. the defining module's globals.

Policy (from the metaprogramming RFC): a value is captured automatically if it is a
*primitive* -- ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes``,
``...``, a numpy scalar, or a ``tuple``/``list``/``set``/``frozenset``/``dict`` built
recursively of primitives and IR objects -- or an *IR object* according to the caller's
``is_ir_object`` predicate, or it is a *closure cell* or a *module global*: a name the
program uses that Python resolves to a local of the enclosing function or a global of the
defining module (a helper class or function defined next to the kernel, a module-level
helper returning expressions). TVM v0.16 evaluates such names from the function's closure
and globals, and the program naming them is the user's acknowledgement the RFC asks for.
Anything else (functions, modules, classes, arbitrary objects from the caller's other
locals) is captured only when listed in ``capture=[...]``, matched by identity to the
names that refer to it.  Names that were found but refused are remembered with their
kind, so that using one yields ``name 'foo' is a function from the enclosing scope; add
it to capture=[...] to use it`` rather than a bare ``NameError``.

The ``T``/``I`` namespaces are not captured here; the entry point supplies them as extra
names that are always visible.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import numpy as np

__all__ = [
    "CapturedEnv",
    "IsIRObject",
    "capture_env",
    "describe_kind",
    "is_auto_captured",
    "uncaptured_message",
]

IsIRObject = Callable[[Any], bool]
"""Predicate telling IR objects (expressions, buffers, ...) from other Python values."""

_SCALARS = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis), np.generic)
_SEQUENCES = (tuple, list, set, frozenset)


def _never(_value: Any) -> bool:
    return False


@dataclass(frozen=True)
class CapturedEnv:
    """Captured values by name, plus the names that were seen but refused (with kinds)."""

    values: Mapping[str, Any] = field(default_factory=dict)
    refused: Mapping[str, str] = field(default_factory=dict)
    from_globals: frozenset[str] = frozenset()
    """Names captured only because they are module globals the program names (a kernel
    assigning one shadows it, as in Python)."""

    def refusal(self, name: str) -> str | None:
        """The diagnostic for using ``name`` if it was refused, else ``None``."""
        kind = self.refused.get(name)
        return None if kind is None else uncaptured_message(name, kind)


def uncaptured_message(name: str, kind: str) -> str:
    """The message for a reference to a value that needs ``capture=[...]``."""
    return f"name '{name}' is {kind} from the enclosing scope; add it to capture=[...] to use it"


def describe_kind(value: Any) -> str:
    """``"a function"``, ``"a module"``, ``"a class"`` or ``"a 'Foo' object"``."""
    if inspect.ismodule(value):
        return "a module"
    if isinstance(value, type):
        return "a class"
    if inspect.isroutine(value) or callable(value):
        return "a function"
    return f"a '{type(value).__name__}' object"


def is_auto_captured(value: Any, is_ir_object: IsIRObject = _never) -> bool:
    """Whether the capture policy takes ``value`` without it being listed."""
    return _auto(value, is_ir_object, set())


def _auto(value: Any, is_ir_object: IsIRObject, seen: set[int]) -> bool:
    if isinstance(value, _SCALARS) or is_ir_object(value):
        return True
    if isinstance(value, (*_SEQUENCES, dict)):
        if id(value) in seen:  # a self-containing container is not a plain value
            return False
        seen.add(id(value))
        items: Iterable[Any] = value
        if isinstance(value, dict):
            items = (*value.keys(), *value.values())
        return all(_auto(item, is_ir_object, seen) for item in items)
    return False


def capture_env(
    obj: Any,
    capture: Iterable[Any] | Mapping[str, Any] = (),
    *,
    caller_frame: FrameType | None = None,
    is_ir_object: IsIRObject | None = None,
    names: Collection[str] | None = None,
) -> CapturedEnv:
    """Build the environment of ``obj`` (a function or class) under the capture policy.

    ``capture`` is the decorator's ``capture=[...]`` list (objects, matched by identity)
    or a ``{name: value}`` mapping.  ``caller_frame`` is the frame that applied the
    decorator.  ``names``, if given, limits the environment to these identifiers
    (normally every name the program mentions), which keeps unrelated module globals
    out of it and avoids inspecting them.
    """
    is_ir = is_ir_object or _never
    explicit = dict(capture) if isinstance(capture, Mapping) else {}
    listed = set() if isinstance(capture, Mapping) else {id(v) for v in capture}
    values: dict[str, Any] = {}
    refused: dict[str, str] = {}
    from_globals: set[str] = set()
    module_globals = _module_globals(getattr(obj, "__func__", obj))
    for name, value, in_closure in _candidates(obj, caller_frame, explicit):
        if names is not None and name not in names:
            continue
        if name in values or name in refused:
            continue  # a higher-priority source already decided this name
        global_value = module_globals.get(name, _MISSING)
        if (
            in_closure
            or name in explicit
            or id(value) in listed
            or is_auto_captured(value, is_ir)
        ):
            values[name] = value
        elif global_value is value:
            values[name] = value
            from_globals.add(name)
        else:
            refused[name] = describe_kind(value)
    return CapturedEnv(values, refused, frozenset(from_globals))


_MISSING = object()


def _candidates(
    obj: Any, caller_frame: FrameType | None, explicit: Mapping[str, Any]
) -> Iterable[tuple[str, Any, bool]]:
    """``(name, value, from a closure cell)``, highest priority first (see the module
    docstring)."""
    for name, value in explicit.items():
        yield name, value, False
    target = getattr(obj, "__func__", obj)
    code = getattr(target, "__code__", None)
    cells = getattr(target, "__closure__", None) or ()
    if code is not None:
        for name, cell in zip(code.co_freevars, cells):
            try:
                yield name, cell.cell_contents, True
            except ValueError:  # the enclosing function has not assigned it (yet)
                continue
    if caller_frame is not None:
        # Copy: on 3.13 f_locals is a live proxy of the frame (PEP 667).
        for name, value in dict(caller_frame.f_locals).items():
            yield name, value, False
    for name, value in _module_globals(target).items():
        yield name, value, False


def _module_globals(target: Any) -> Mapping[str, Any]:
    found = getattr(target, "__globals__", None)
    if isinstance(found, dict):
        return found
    module = inspect.getmodule(target)
    return vars(module) if module is not None else {}
