"""Small constructors for hand-built IR in the interpreter tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from irbuilder.ir import (
    Buffer,
    BufferStore,
    For,
    ForKind,
    PrimExpr,
    PrimFunc,
    Stmt,
    Var,
    as_dtype,
    const,
    convert,
    make_data_var,
)


def buf(
    name: str,
    shape: Sequence[Any],
    dtype: str = "float32",
    *,
    data: Var | None = None,
    strides: Sequence[Any] = (),
    elem_offset: Any = 0,
) -> Buffer:
    """A buffer with a fresh data var unless ``data`` is given (an alias)."""
    dt = as_dtype(dtype)
    if data is None:
        data = make_data_var(f"{name}_data", dt)
    return Buffer(name, data, tuple(shape), dt, tuple(strides), elem_offset)


def func(params: Sequence[Var | Buffer], body: Stmt, name: str = "main") -> PrimFunc:
    """A PrimFunc whose Buffer params become handle params mapped in buffer_map."""
    vars_: list[Var] = []
    buffer_map: dict[Var, Buffer] = {}
    for p in params:
        if isinstance(p, Buffer):
            handle = Var(p.name, as_dtype("handle"))
            buffer_map[handle] = p
            vars_.append(handle)
        else:
            vars_.append(p)
    return PrimFunc(tuple(vars_), body, None, buffer_map, {"global_symbol": name})


def loop(
    name: str,
    extent: Any,
    make_body: Callable[[Var], Stmt],
    kind: ForKind = ForKind.SERIAL,
    dtype: str = "int32",
) -> For:
    """``for name in range(extent)`` with the body built from the loop var."""
    var = Var(name, as_dtype(dtype))
    ext = extent if isinstance(extent, PrimExpr) else const(extent, dtype)
    return For(var, const(0, dtype), ext, kind, make_body(var))


def store(buffer: Buffer, indices: Sequence[Any], value: PrimExpr) -> BufferStore:
    """``buffer[indices] = value`` with Python ints converted."""
    return BufferStore(buffer, value, tuple(convert(i) for i in indices))
