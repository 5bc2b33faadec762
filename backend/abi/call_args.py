"""Binding a kernel call's positional and keyword arguments to its parameter list.

Compiled kernels take their positional fast path in generated code; a call with keywords or a
wrong argument count comes here (through the entry's slow path), and so does every call of the
reference interpreter's kernels, so both report the same messages. The messages name the
kernel and the parameter, never an internal class.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["CallBinder", "bind_call_arguments"]


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
