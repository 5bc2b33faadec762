"""Binding a kernel call's positional and keyword arguments to its parameter list.

Compiled kernels take their positional fast path in generated code; a call with keywords or a
wrong argument count comes here (through the entry's slow path), and so does every call of the
reference interpreter's kernels, so both report the same messages. The messages name the
kernel and the parameter, never an internal class. A buffer argument that is not an exact
``numpy.ndarray`` is converted by :func:`as_ndarray`, on both paths too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["CallBinder", "as_ndarray", "bind_call_arguments"]


def _quoted(names: Sequence[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + f" and {quoted[-1]}"


def bind_call_arguments(
    func_name: str,
    param_names: Sequence[str],
    args: Sequence[object],
    kwargs: Mapping[str, object],
) -> list[object]:
    """The call's arguments in parameter order; ``TypeError`` naming the offending parameter.

    Every parameter is required (a kernel has no defaults), may be given by position or by
    name, and not both.
    """
    n = len(param_names)
    if len(args) > n:
        plural = "argument" if n == 1 else "arguments"
        raise TypeError(f"{func_name}() takes {n} {plural} ({len(args)} given)")
    bound: list[object] = list(args)
    if kwargs:
        index = {name: i for i, name in enumerate(param_names)}
        by_position: dict[int, object] = {}
        for key, value in kwargs.items():
            i = index.get(key)
            if i is None:
                raise TypeError(
                    f"{func_name}() got an unexpected keyword argument '{key}'; its parameters "
                    f"are {', '.join(param_names)}"
                )
            if i < len(args):
                raise TypeError(f"{func_name}() got multiple values for argument '{key}'")
            by_position[i] = value
        missing = [param_names[i] for i in range(len(args), n) if i not in by_position]
        if missing:
            raise TypeError(
                f"{func_name}() missing {len(missing)} required argument"
                f"{'s' if len(missing) > 1 else ''}: {_quoted(missing)}"
            )
        bound.extend(by_position[i] for i in range(len(args), n))
    elif len(args) < n:
        plural = "argument" if n == 1 else "arguments"
        raise TypeError(
            f"{func_name}() takes {n} {plural} ({len(args)} given): missing "
            f"{_quoted(param_names[len(args):])}"
        )
    return bound


class CallBinder:
    """:func:`bind_call_arguments` for one kernel, with a quick path for well-formed calls."""

    __slots__ = ("func_name", "param_names")

    def __init__(self, func_name: str, param_names: Sequence[str]) -> None:
        self.func_name = func_name
        self.param_names = tuple(param_names)

    def __call__(self, args: Sequence[object], kwargs: Mapping[str, object]) -> list[object]:
        names = self.param_names
        given = len(args)
        if given + len(kwargs) == len(names):
            # Every remaining name present and the counts equal: exactly those names were given.
            try:
                return [*args, *[kwargs[name] for name in names[given:]]]
            except KeyError:
                pass
        return bind_call_arguments(self.func_name, names, args, kwargs)


def as_ndarray(
    obj: object, fname: str, pname: str, dtype: str | None = None
) -> np.ndarray[Any, Any]:
    """Convert a buffer argument to an exact ``numpy.ndarray`` (sharing memory when possible),
    for the compiled entry's slow path and the interpreter alike.

    Subclasses become base-class views and buffer-protocol objects are wrapped without copying;
    both keep their writability.  Lists/tuples are copied into a *read-only* array, because the
    kernel's writes could not reach the original sequence; they use *dtype* when given.
    """
    if type(obj) is np.ndarray:
        return obj
    if isinstance(obj, np.ndarray):
        return obj.view(np.ndarray)
    where = f"{fname}(): argument '{pname}'"
    if obj is None or isinstance(obj, (str, int, float, complex, bool)):
        raise TypeError(f"{where} must be an array (numpy.ndarray or buffer), "
                        f"not {type(obj).__name__}")
    try:
        mv = memoryview(obj)  # type: ignore[arg-type]
    except TypeError:
        mv = None
    try:
        if mv is not None:
            return np.asarray(mv)
        if hasattr(obj, "__array__") or hasattr(obj, "__array_interface__") or hasattr(
            obj, "__array_struct__"
        ):
            return np.asarray(obj)
        if isinstance(obj, (list, tuple)):
            arr = np.array(obj, dtype=dtype)
            if arr.dtype == object:
                raise ValueError("elements are not numbers")
            arr.flags.writeable = False
            return arr
    except (ValueError, TypeError) as exc:
        raise TypeError(f"{where} cannot be converted to an array: {exc}") from None
    raise TypeError(f"{where} must be an array (numpy.ndarray or buffer), "
                    f"not {type(obj).__name__}")
