"""``python -m tvmscript bench``: time a kernel on random inputs.

Buffer shapes come from the kernel's signature; symbolic dimensions and scalar parameters
are given as ``--shape n=1024`` (repeatable, or comma separated). Returned tensors are
allocated by the kernel itself, as in a normal call.
"""

from __future__ import annotations

import statistics
import time
import timeit
from collections.abc import Sequence
from typing import Any

import numpy as np

from irbuilder.ir import IntImm, PrimFunc, Var

from .cli_load import CliError

__all__ = ["bench", "parse_bindings", "random_arguments"]


def parse_bindings(items: Sequence[str]) -> dict[str, float]:
    """``["n=4,m=8", "alpha=0.5"]`` -> ``{"n": 4, "m": 8, "alpha": 0.5}``."""
    bindings: dict[str, float] = {}
    for item in items:
        for part in item.split(","):
            name, sep, text = part.partition("=")
            name, text = name.strip(), text.strip()
            if not sep or not name.isidentifier():
                raise CliError(f"--shape expects NAME=VALUE, got {part.strip()!r}")
            try:
                bindings[name] = int(text)
            except ValueError:
                try:
                    bindings[name] = float(text)
                except ValueError:
                    raise CliError(f"--shape {name}: {text!r} is not a number") from None
    return bindings


def _dim(func: PrimFunc, buffer_name: str, dim: Any, bindings: dict[str, float]) -> int:
    if isinstance(dim, IntImm):
        return int(dim.value)
    if isinstance(dim, Var):
        if dim.name not in bindings:
            raise CliError(
                f"{func.name}: the shape of {buffer_name} uses {dim.name}; "
                f"give it with --shape {dim.name}=..."
            )
        return int(bindings[dim.name])
    raise CliError(
        f"{func.name}: the shape of {buffer_name} has the expression {dim}; bench supports "
        "constant and plain-variable dimensions"
    )


def _random_array(shape: tuple[int, ...], dtype: np.dtype[Any], rng: np.random.Generator) -> Any:
    if dtype.kind == "f":
        return rng.random(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        # From 1: kernels dividing by an input never divide by zero on bench data.
        return rng.integers(1, 10, size=shape).astype(dtype)
    raise CliError(f"bench cannot make random data of dtype {dtype}")


def random_arguments(func: PrimFunc, bindings: dict[str, float], seed: int = 0) -> list[Any]:
    """Arguments for ``func``'s parameters: random arrays, scalars from ``bindings`` (or 1)."""
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is not None:
            shape = tuple(_dim(func, buffer.name, d, bindings) for d in buffer.shape)
            dtype = np.dtype(buffer.dtype.element_of().numpy_dtype)
            args.append(_random_array(shape, dtype, rng))
        elif param.dtype.is_float:
            args.append(float(bindings.get(param.name, 1.0)))
        elif str(param.dtype) == "bool":
            args.append(bool(bindings.get(param.name, 1)))
        else:
            args.append(int(bindings.get(param.name, 1)))
    return args


def bench(
    func: PrimFunc, bindings: dict[str, float], *, opt_level: int, repeat: int, min_time: float
) -> str:
    """Build ``func``, call it on random inputs and report build and per-call times."""
    from .compiler.build import build

    args = random_arguments(func, bindings)
    start = time.perf_counter()
    kernel = build(func, opt_level=opt_level)
    build_seconds = time.perf_counter() - start
    kernel(*args)  # first call: argument errors surface here, before timing
    timer = timeit.Timer(lambda: kernel(*args))
    number = 1
    while True:  # like timeit's autorange, with our own time budget per repeat
        if timer.timeit(number) >= min_time:
            break
        number *= 10 if number < 1000 else 2
    times = [t / number for t in timer.repeat(repeat, number)]
    described = ", ".join(
        f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in args
    )
    return "\n".join(
        [
            f"kernel {func.name}({described})",
            f"build: {build_seconds * 1e3:.1f} ms"
            + (" (cached)" if getattr(kernel, "from_cache", False) else ""),
            f"call: median {_fmt(statistics.median(times))}, best {_fmt(min(times))} "
            f"({repeat} x {number} calls)",
        ]
    )


def _fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.3f} us"
