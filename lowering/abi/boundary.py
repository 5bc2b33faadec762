"""Function boundary after ``bufferize``: output parameters and their shapes.

``bufferize`` appends one buffer parameter per returned tensor after the inputs
and sets the attr ``"num_outputs"``. A kernel object calls
:func:`output_specs` once, then per call :func:`allocate_outputs` (or
:func:`output_shapes`) with the input arguments, passes ``inputs + outputs`` to
the compiled function and returns the outputs (one array, or a tuple for
several). Output shapes may be symbolic: every variable in them must be bound by
an input -- a scalar parameter, or a dimension of an input buffer's shape that
is a plain variable (``n`` in ``A: T.Buffer((n,), ...)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from irbuilder.ir import (
    Add,
    Cast,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    PrimFunc,
    Sub,
    Var,
)

from ..analysis import free_vars

__all__ = ["OutputSpec", "allocate_outputs", "num_outputs", "output_shapes", "output_specs"]


@dataclass(frozen=True)
class OutputSpec:
    """One output parameter: its name, shape expressions (over input vars) and dtype."""

    name: str
    shape: tuple[PrimExpr, ...]
    dtype: str


def num_outputs(func: PrimFunc) -> int:
    """How many trailing params of ``func`` are outputs (0 before bufferize or without return)."""
    return int(func.attrs.get("num_outputs", 0))


def output_specs(func: PrimFunc) -> list[OutputSpec]:
    """The output parameters of a bufferized ``func``, in return order.

    Raises ``ValueError`` when an output shape uses a variable no input binds.
    """
    k = num_outputs(func)
    if k == 0:
        return []
    inputs, outs = func.params[:-k], func.params[-k:]
    bound = _bindable(func, inputs)
    specs: list[OutputSpec] = []
    for param in outs:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            raise ValueError(f"function {func.name!r}: output param {param.name!r} is no buffer")
        for dim in buffer.shape:
            for var in free_vars(dim):
                if var not in bound:
                    raise ValueError(
                        f"function {func.name!r}: the shape of output {buffer.name!r} uses "
                        f"{var.name!r}, which no input binds"
                    )
        specs.append(OutputSpec(buffer.name, buffer.shape, str(buffer.dtype)))
    return specs


def _bindable(func: PrimFunc, inputs: Sequence[Var]) -> set[Var]:
    bound: set[Var] = set()
    for param in inputs:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            bound.add(param)
            continue
        bound.update(d for d in buffer.shape if isinstance(d, Var))
    return bound


def _bind(func: PrimFunc, args: Sequence[Any]) -> dict[Var, int]:
    k = num_outputs(func)
    inputs = func.params[: len(func.params) - k]
    if len(args) != len(inputs):
        raise TypeError(f"{func.name}() takes {len(inputs)} input arguments, got {len(args)}")
    env: dict[Var, int] = {}
    for param, arg in zip(inputs, args):
        buffer = func.buffer_map.get(param)
        if buffer is None:
            if isinstance(arg, (int, np.integer)):
                env[param] = int(arg)
            continue
        shape = np.shape(arg)
        for i, dim in enumerate(buffer.shape):
            if isinstance(dim, Var) and dim not in env and i < len(shape):
                env[dim] = int(shape[i])
    return env


_BINARY: Mapping[type, Callable[[int, int], int]] = {
    Add: lambda a, b: a + b,
    Sub: lambda a, b: a - b,
    Mul: lambda a, b: a * b,
    FloorDiv: lambda a, b: a // b,
    FloorMod: lambda a, b: a % b,
    Max: max,
    Min: min,
}


def _eval(expr: PrimExpr, env: Mapping[Var, int]) -> int:
    if isinstance(expr, IntImm):
        return expr.value
    if isinstance(expr, Var):
        if expr not in env:
            raise ValueError(f"output shape variable {expr.name!r} is not bound by the inputs")
        return env[expr]
    if isinstance(expr, Cast):
        return _eval(expr.value, env)
    op = _BINARY.get(type(expr))
    if op is not None:
        return op(_eval(expr.a, env), _eval(expr.b, env))  # type: ignore[attr-defined]
    raise ValueError(f"cannot evaluate output shape expression {expr!r}")


def output_shapes(func: PrimFunc, args: Sequence[Any]) -> list[tuple[int, ...]]:
    """The concrete shape of every output of ``func`` for these input arguments."""
    env = _bind(func, args)
    shapes: list[tuple[int, ...]] = []
    for spec in output_specs(func):
        shape = tuple(_eval(d, env) for d in spec.shape)
        if any(s < 0 for s in shape):
            raise ValueError(f"output {spec.name!r} would have negative shape {shape}")
        shapes.append(shape)
    return shapes


def allocate_outputs(func: PrimFunc, args: Sequence[Any]) -> list[np.ndarray[Any, Any]]:
    """Fresh (uninitialised) numpy arrays for the outputs of ``func`` given its inputs."""
    specs = output_specs(func)
    return [
        np.empty(shape, dtype=spec.dtype)
        for spec, shape in zip(specs, output_shapes(func, args))
    ]
