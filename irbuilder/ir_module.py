"""The ``I`` namespace of the IRBuilder: ``from irbuilder import ir_module as I``.

``with I.ir_module():`` holds several ``T.prim_func()`` frames, each named by
``T.func_name``; the builder's result is then an IRModule. The class decorator
``@I.ir_module`` is the parser's: ``tvmscript`` installs it with
:func:`register_ir_module_parser`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .builder import IRBuilder, IRBuilderError
from .frames import ModuleFrame

__all__ = ["ir_module", "module_attrs", "register_ir_module_parser"]

_parser_hook: list[Callable[..., Any]] = []


def register_ir_module_parser(hook: Callable[..., Any]) -> None:
    """Install the class decorator behind ``@I.ir_module``: ``hook(cls, **kwargs)``."""
    _parser_hook[:] = [hook]


def ir_module(cls: type | None = None, **kwargs: Any) -> Any:
    """``@I.ir_module``: parse a class of ``@T.prim_func`` methods into an ``IRModule``.

    Each function is stored under its method name; ``Module.f(...)`` inside a kernel calls
    the module's function ``f``. Inside an IRBuilder, ``with I.ir_module():`` (no class) is
    the module frame. The decorator needs the parser, which ``import tvmscript`` installs.

    Parameters
    ----------
    cls : type, optional
        The decorated class.
    **kwargs
        Passed to the parser (``check_well_formed=True`` runs the verifier).

    Returns
    -------
    IRModule or ModuleFrame

    Examples
    --------
    >>> @I.ir_module
    ... class Module:
    ...     @T.prim_func
    ...     def inc(A: T.Buffer((2,), "int32")):
    ...         for i in range(2):
    ...             A[i] = A[i] + 1
    >>> a = np.array([1, 2], dtype="int32"); tvmscript.build(Module)["inc"](a); print(a)
    [2 3]
    """
    if cls is None and IRBuilder.is_in_scope() and not kwargs:
        return ModuleFrame()
    if not _parser_hook:
        raise IRBuilderError(
            "@I.ir_module on a class needs the parser: `import tvmscript` "
            "(from tvmscript import ir as I); inside an IRBuilder use `with I.ir_module():`"
        )
    hook = _parser_hook[0]
    if cls is None:
        return lambda c: hook(c, **kwargs)
    return hook(cls, **kwargs)


def module_attrs(attrs: dict[str, Any]) -> None:
    """Merge ``attrs`` into the attributes of the enclosing ``I.ir_module`` frame."""
    top = IRBuilder.current("I.module_attrs").top()
    if not isinstance(top, ModuleFrame):
        where = "outside any frame" if top is None else f"inside {top.kind}"
        raise IRBuilderError(f"I.module_attrs must be directly inside I.ir_module, not {where}")
    top.attrs.update(attrs)
