"""Function-level builders: ``T.prim_func``, ``T.func_name``, ``T.arg``, ``T.func_attr``...

``T.prim_func()`` (no function argument) returns the frame. The decorator
form ``@T.prim_func`` belongs to the parser: ``tvmscript`` registers it with
:func:`register_prim_func_parser`, after which ``T.prim_func(fn, **kwargs)``
(and ``T.prim_func(**kwargs)(fn)`` outside a builder) are forwarded to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from ..builder import IRBuilder, IRBuilderError
from ..frames import PrimFuncFrame
from ..ir import Buffer, Call, CallKind, DataType, ExprLike, PrimExpr, Var, as_dtype
from ._common import DTypeArg, as_expr, builder, to_dtype

__all__ = ["arg", "func_attr", "func_name", "func_ret", "prim_func", "register_prim_func_parser"]

_ParserHook = Callable[..., Any]
_parser_hook: list[_ParserHook] = []

_T = TypeVar("_T")


def register_prim_func_parser(hook: _ParserHook) -> None:
    """Install the decorator behind ``@T.prim_func``: ``hook(fn, **kwargs) -> PrimFunc``."""
    _parser_hook[:] = [hook]


def _parse(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    if not _parser_hook:
        raise IRBuilderError(
            "@T.prim_func on a Python function needs the parser: `import tvmscript` "
            "(from tvmscript import tir as T)"
        )
    return _parser_hook[0](fn, **kwargs)


def prim_func(func: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
    """``@T.prim_func``: parse a Python function as TVMScript into a ``PrimFunc``.

    The function's body is read from its source (a file, doctest or notebook cell) and never
    run by Python. Inside an IRBuilder, ``T.prim_func()`` (no function) is the function
    frame instead. The decorator needs the parser, which ``import tvmscript`` installs.

    Parameters
    ----------
    func : function, optional
        The decorated function; omitted for ``@T.prim_func(...)`` with keywords and for the
        IRBuilder frame.
    private : bool
        Leave out the ``global_symbol`` attribute (``is_private`` in the frame form).
    check_well_formed : bool
        Run the verifier on the result.
    capture : list or dict
        Values the kernel may use besides its scope's (docs/eval-scope.md).

    Returns
    -------
    PrimFunc or PrimFuncFrame
        The parsed function (``tvmscript.build(f)`` compiles it), or the frame.

    Examples
    --------
    >>> @T.prim_func
    ... def add(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "float32")):
    ...     for i in range(3):
    ...         B[i] = A[i] + T.float32(1)
    >>> b = np.zeros(3, dtype="float32")
    >>> tvmscript.build(add)(np.arange(3, dtype="float32"), b); print(b)
    [1. 2. 3.]
    """
    if func is not None:
        return _parse(func, kwargs)
    if IRBuilder.is_in_scope():
        unknown = set(kwargs) - {"is_private", "private"}
        if unknown:
            raise TypeError(f"T.prim_func() frame got unexpected arguments {sorted(unknown)}")
        private = bool(kwargs.get("is_private", kwargs.get("private", False)))
        return PrimFuncFrame(is_private=private)

    def decorate(fn: Callable[..., Any]) -> Any:
        return _parse(fn, kwargs)

    return decorate


def _func_frame(what: str) -> PrimFuncFrame:
    top = builder(what).top()
    if not isinstance(top, PrimFuncFrame):
        where = "outside any frame" if top is None else f"inside {top.kind}"
        raise IRBuilderError(f"{what} must be called directly inside T.prim_func, not {where}")
    return top


def func_name(name: str) -> None:
    """Name the function being built (its ``global_symbol``); IRBuilder form.

    Parameters
    ----------
    name : str
        A non-empty name.

    Returns
    -------
    None

    Examples
    --------
    >>> with I.IRBuilder() as ib:
    ...     with T.prim_func():
    ...         T.func_name("empty")
    >>> ib.get().attrs["global_symbol"]
    'empty'
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"T.func_name: expected a non-empty string, got {name!r}")
    _func_frame("T.func_name").name = name


def arg(name: str, obj: _T) -> _T:
    """Add a parameter to the function being built (IRBuilder form).

    Parameters
    ----------
    name : str
        The parameter's name.
    obj : Buffer or Var
        A ``Buffer`` becomes a handle parameter mapped to it in ``buffer_map``; a ``Var`` a
        scalar parameter.

    Returns
    -------
    Buffer or Var
        ``obj`` itself.

    Examples
    --------
    >>> with I.IRBuilder() as ib:
    ...     with T.prim_func():
    ...         T.func_name("fill")
    ...         A = T.arg("A", T.Buffer((2,), "int32"))
    ...         v = T.arg("v", T.int32())
    ...         with T.serial(2) as i:
    ...             T.buffer_store(A, v, [i])
    >>> a = np.zeros(2, dtype="int32"); tvmscript.build(ib.get())(a, 7); print(a)
    [7 7]
    """
    frame = _func_frame("T.arg")
    if isinstance(obj, Buffer):
        if any(b is obj for b in frame.buffer_map.values()):
            raise IRBuilderError(f"T.arg: buffer {obj.name!r} is already a parameter")
        handle = Var(name, as_dtype("handle"))
        obj.set_name_hint(name)
        frame.params.append(handle)
        frame.buffer_map[handle] = obj
        return obj
    if isinstance(obj, Var):
        if any(p is obj for p in frame.params):
            raise IRBuilderError(f"T.arg: variable {obj.name!r} is already a parameter")
        obj.set_name_hint(name)
        frame.params.append(obj)
        return obj
    raise TypeError(f"T.arg({name!r}, ...): expected a Buffer or a Var, got {type(obj).__name__}")


def func_attr(attrs: Mapping[str, Any]) -> None:
    """Merge ``attrs`` into the function's attributes.

    Parameters
    ----------
    attrs : dict
        String keys (``"global_symbol"`` renames the function, ``"tir.noalias"``, ...).

    Returns
    -------
    None

    Examples
    --------
    >>> @T.prim_func
    ... def f(A: T.Buffer((1,), "int32")):
    ...     T.func_attr({"global_symbol": "renamed", "tir.noalias": True})
    ...     A[0] = 1
    >>> f.attrs["global_symbol"], f.attrs["tir.noalias"]
    ('renamed', True)
    """
    if not isinstance(attrs, Mapping):
        raise TypeError(f"T.func_attr: expected a dict, got {type(attrs).__name__}")
    frame = _func_frame("T.func_attr")
    for key, value in attrs.items():
        if key == "global_symbol":
            if frame.is_private:
                # A global symbol is what makes a function public: both cannot hold.
                raise ValueError(
                    f"T.func_attr: a private function (@T.prim_func(private=True)) cannot "
                    f"have a 'global_symbol' attribute, got {value!r}; drop private=True "
                    "to export it under that name"
                )
            if not isinstance(value, str) or not value:
                raise TypeError(
                    f"T.func_attr: 'global_symbol' names the function: expected a non-empty "
                    f"string, got {value!r}"
                )
            frame.name = value
        frame.attrs[str(key)] = value


def func_ret(dtype: DTypeArg) -> DataType:
    """Set the function's return type (``-> T.int32`` in a kernel means the same).

    Parameters
    ----------
    dtype : str or type object
        A scalar type.

    Returns
    -------
    DataType
        The resolved type.

    Examples
    --------
    >>> with I.IRBuilder() as ib:
    ...     with T.prim_func():
    ...         T.func_name("seven")
    ...         print(T.func_ret(T.int32))
    ...         T.evaluate(T.ret(7))
    int32
    >>> tvmscript.build(ib.get())()
    7
    """
    frame = _func_frame("T.func_ret")
    resolved = to_dtype(dtype)
    frame.ret_type = resolved
    return resolved


def ret(value: ExprLike) -> PrimExpr:
    """``T.ret(value)``: return the scalar ``value`` from the function (TVM's ``tir.ret``).

    Builds ``Call(dtype, "ret", (value,))`` (a BUILTIN, used as a statement) and sets the
    function's return type when it has none. The code generator supports it where it ends
    the function on its path; the interpreter anywhere. ``return value`` in a kernel means
    the same; the built kernel returns a Python number.

    Parameters
    ----------
    value : PrimExpr or number
        A scalar (converted to the function's return type when one is set).

    Returns
    -------
    PrimExpr
        The ``ret`` call (a statement in a kernel).

    Examples
    --------
    >>> @T.prim_func
    ... def first(A: T.Buffer((3,), "float64")) -> T.float64:
    ...     T.ret(A[0] * T.float64(2))
    >>> tvmscript.build(first)(np.array([1.5, 0, 0]))
    3.0
    """
    expr = as_expr(value, "T.ret")
    if expr.dtype.is_vector or expr.dtype.is_handle:
        raise TypeError(f"T.ret returns a scalar number or bool, got {expr.dtype}")
    b = builder("T.ret")
    for frame in reversed(b.frames):
        if isinstance(frame, PrimFuncFrame):
            if frame.ret_type is None:
                frame.ret_type = expr.dtype
            elif frame.ret_type != expr.dtype:
                expr = expr.astype(frame.ret_type)
            break
    return Call(expr.dtype, "ret", (expr,), CallKind.BUILTIN)
