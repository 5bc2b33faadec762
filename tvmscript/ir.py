"""The ``I`` namespace of TVMScript: ``from tvmscript import ir as I``.

``@I.ir_module`` on a class of ``@T.prim_func`` methods parses it into an IRModule (each
function under its method name); ``I.module_attrs({...})`` in the class body sets the
module's attributes.  Structural comparison of IR is re-exported here:
``I.structural_equal(a, b)``, ``I.assert_structural_equal(a, b)``,
``I.structural_hash(node)``.
"""

from __future__ import annotations

from typing import Any

from irbuilder import IRBuilder
from irbuilder.ir import (
    IRModule,
    PrimFunc,
    StructuralMismatch,
    assert_structural_equal,
    structural_equal,
    structural_hash,
)
from irbuilder.ir_module import ir_module
from irbuilder.ir_module import module_attrs as _module_attrs

__all__ = [
    "IRBuilder",
    "IRModule",
    "PrimFunc",
    "StructuralMismatch",
    "assert_structural_equal",
    "ir_module",
    "module_attrs",
    "structural_equal",
    "structural_hash",
]


def module_attrs(attrs: dict[str, Any]) -> None:
    """Set the attributes of the module being built (see :func:`irbuilder.ir_module.module_attrs`).

    Python runs an ``@I.ir_module`` class body before the decorator parses it; outside an
    IRBuilder the call therefore does nothing (the parser makes it again, in the module).

    Parameters
    ----------
    attrs : dict
        Merged into the module's attributes.

    Returns
    -------
    None

    Examples
    --------
    >>> @I.ir_module
    ... class Module:
    ...     I.module_attrs({"note": "demo"})
    ...     @T.prim_func
    ...     def f(A: T.Buffer((1,), "int32")):
    ...         A[0] = 1
    >>> Module.attrs["note"]
    'demo'
    """
    if IRBuilder.is_in_scope():
        _module_attrs(attrs)
