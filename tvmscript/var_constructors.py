"""Variable and target constructors of ``T``: ``T.var``, ``T.ptr`` (``T.buffer_var``),
``T.SizeVar`` and ``T.target``, for building IR from Python as TVM's ``tir`` does."""

from __future__ import annotations

import builtins
from typing import Any

from irbuilder import ir as _ir
from irbuilder.ir import Var, as_dtype
from irbuilder.tir import types as _types

__all__ = ["SizeVar", "buffer_var", "ptr", "target", "var"]


def target(config: Any, host: Any = None) -> _ir.Target:
    """A target value for ``T.func_attr({"target": ...})``, TVM's ``T.target``.

    It is kept, compared and printed back; ``build`` does not read it (the build's
    target is :class:`tvmscript.Target`, given as ``build(f, target=...)``).

    Parameters
    ----------
    config : str or dict
        ``"llvm -mcpu=znver3"`` or ``{"kind": "llvm", "mcpu": "znver3"}``.
    host : str or dict, optional
        The host target, for device targets.

    Returns
    -------
    irbuilder.ir.Target

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> T.target("llvm -mcpu=znver3")
    Target(config='llvm -mcpu=znver3', host=None)
    """
    return _ir.Target.make(config, host)


def var(dtype: Any, name: str = "") -> Var:
    """A fresh scalar variable (TVM's ``tir.Var(name, dtype)``).

    In a kernel, ``n = T.int32()`` is the usual spelling; ``T.var`` is for building IR
    from Python (index maps, schedules, the IRBuilder).

    Parameters
    ----------
    dtype : str or DataType
        The variable's type.
    name : str, optional
        Its name in printed IR (``v`` when empty; the printer makes names unique).

    Returns
    -------
    Var

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> T.var("int64", "k")
    Var('k', int64)
    """
    return Var(name or "v", as_dtype(dtype))


def ptr(dtype: Any, storage_scope: str = "global", is_size_var: builtins.bool = False) -> Var:
    """A handle variable pointing to ``dtype`` data (TVM's ``T.handle(dtype, scope)``).

    ``T.allocate`` returns such a variable; ``T.decl_buffer(shape, dtype, data=p)`` views
    the memory behind one as a buffer.

    Parameters
    ----------
    dtype : str or DataType
        The element type pointed to.
    storage_scope : str, optional
        ``"global"`` (the default) or another of TVM's scopes.
    is_size_var : bool, optional
        Accepted for TVM's signature.

    Returns
    -------
    Var
        A ``handle``-typed variable with a ``PointerType`` annotation.

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> p = T.ptr("float32")
    >>> p.dtype, p.type_annotation
    (DataType('handle'), PointerType(element=DataType('float32'), scope='global'))
    """
    return _types.handle(dtype, storage_scope, is_size_var=is_size_var)


buffer_var = ptr
"""``T.buffer_var(dtype, scope)``: TVM's name for :func:`ptr`."""


def SizeVar(name: str, dtype: Any) -> Var:
    """A variable known to be non-negative (TVM's ``tir.SizeVar``).

    The simplifier uses the fact: ``n // 4 >= 0`` folds to true, ``T.max(n, 0)`` to
    ``n``. Shape variables bound from an array's shape are size variables.

    Parameters
    ----------
    name : str
        Its name in printed IR.
    dtype : str or DataType
        An integer type.

    Returns
    -------
    SizeVar

    Examples
    --------
    >>> from tvmscript import tir as T
    >>> T.SizeVar("n", "int32")
    SizeVar('n', int32)
    """
    return _ir.SizeVar(name, as_dtype(dtype))
