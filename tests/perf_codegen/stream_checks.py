"""Shared steps of the streaming-store tests: random inputs for a kernel, and a run whose
output array starts ``offset`` elements into a guarded larger one."""

from __future__ import annotations

from typing import Any

import numpy as np

import tvmscript
from irbuilder.ir import PrimFunc


def random_inputs(func: PrimFunc, rng: np.random.Generator, low: int, high: int) -> list[Any]:
    """Arrays for every buffer parameter but the last (the output): standard normal floats,
    integers drawn from ``[low, high)``."""
    inputs: list[Any] = []
    for buffer in list(func.buffer_map.values())[:-1]:
        shape = tuple(int(d) for d in buffer.shape)
        if buffer.dtype.is_float:
            inputs.append(rng.standard_normal(shape).astype(str(buffer.dtype)))
        else:
            inputs.append(rng.integers(low, high, shape).astype(str(buffer.dtype)))
    return inputs


def run_misaligned(
    func: PrimFunc, inputs: list[Any], offset: int, fill: Any
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(compiled kernel's output, interpreter's output) for an output array starting
    ``offset`` elements into a ``fill``-ed one; the elements around it must stay ``fill``."""
    out_spec = list(func.buffer_map.values())[-1]
    shape = tuple(int(d) for d in out_spec.shape)
    size = int(np.prod(shape))
    dtype = np.dtype(str(out_spec.dtype))
    storage = np.full(size + 64, fill, dtype)
    out = storage[offset : offset + size].reshape(shape)
    expected = np.full(shape, fill, dtype)
    tvmscript.build(func, target="interp")(*inputs, expected)
    tvmscript.build(func)(*inputs, out)
    assert (storage[:offset] == fill).all() and (storage[offset + size :] == fill).all()
    return out, expected
