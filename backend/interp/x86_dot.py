"""x86's integer dot-product intrinsics, evaluated by the interpreter.

TVM's x86 tensor intrinsics (``T.call_llvm_pure_intrin`` in a tensorized int8 dense or
conv2d) and our late stage's narrow integer tiles call these by their LLVM names; the
interpreter gives each instruction's definition on the operands' bytes, whatever vector
type the call passes them as (TVM reinterprets ``uint8x64`` as ``int32x16``):

* ``pmaddwd`` (``sse2.pmadd.wd``, ``avx2.pmadd.wd``, ``avx512.pmaddw.d.512``): int16 pairs
  multiplied and summed into int32 (wrapping: only two ``-32768 * -32768`` overflow);
* ``pmaddubsw`` (``ssse3.pmadd.ub.sw.128``, ``avx2.pmadd.ub.sw``,
  ``avx512.pmaddubs.w.512``): unsigned bytes of the first operand times signed bytes of the
  second, pairs summed into int16 with signed saturation;
* ``vpdpbusd`` / ``vpdpbusds`` (``avx512.vpdpbusd[s].{128,256,512}``): the accumulator
  plus the sums of four unsigned-by-signed byte products (``s``: saturated to int32);
* ``vpdpwssd`` / ``vpdpwssds`` (``avx512.vpdpwssd[s].{128,256,512}``): the accumulator
  plus the sums of two int16 products (``s``: saturated).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from irbuilder.ir import DataType

from . import values as V

__all__ = ["X86_DOT_PRODUCTS", "x86_dot_product"]

_I32 = (-(2**31), 2**31 - 1)


def _variants(stem: str, widths: Sequence[str]) -> tuple[str, ...]:
    return tuple(f"llvm.x86.{stem}.{width}" for width in widths)


X86_DOT_PRODUCTS: dict[str, str] = {
    **dict.fromkeys(("llvm.x86.sse2.pmadd.wd", "llvm.x86.avx2.pmadd.wd",
                     "llvm.x86.avx512.pmaddw.d.512"), "pmaddwd"),
    **dict.fromkeys(("llvm.x86.ssse3.pmadd.ub.sw.128", "llvm.x86.avx2.pmadd.ub.sw",
                     "llvm.x86.avx512.pmaddubs.w.512"), "pmaddubsw"),
    **dict.fromkeys(_variants("avx512.vpdpbusd", ("128", "256", "512")), "vpdpbusd"),
    **dict.fromkeys(_variants("avx512.vpdpbusds", ("128", "256", "512")), "vpdpbusds"),
    **dict.fromkeys(_variants("avx512.vpdpwssd", ("128", "256", "512")), "vpdpwssd"),
    **dict.fromkeys(_variants("avx512.vpdpwssds", ("128", "256", "512")), "vpdpwssds"),
}
"""LLVM intrinsic name -> the instruction it is."""


def _bytes_as(value: V.Value, dtype: DataType, element: str) -> np.ndarray[Any, Any]:
    """The bytes of ``value`` (of ``dtype``) read as ``element`` lanes."""
    return V.to_numpy(value, dtype).view(element).astype(np.int64)


def _wrap32(sums: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return (sums + 2**31) % 2**32 - 2**31


def x86_dot_product(name: str, values: Sequence[V.Value], types: Sequence[DataType],
                    result: DataType) -> V.Value:
    """Evaluate the dot-product intrinsic ``name`` (:data:`X86_DOT_PRODUCTS`) on ``values``
    of ``types`` for a ``result``; raises TypeError on operands the instruction does not
    take."""
    kind = X86_DOT_PRODUCTS[name]
    lanes = result.lanes
    accumulates = kind.startswith("vpdp")
    if len(values) != (3 if accumulates else 2):
        raise TypeError(f"{name} takes {3 if accumulates else 2} operands, got {len(values)}")
    width = result.bits * lanes
    if any(t.bits * t.lanes != width for t in types):
        raise TypeError(f"{name}: every operand must be as wide as the {result} result")
    sources = values[1:] if accumulates else values
    source_types = types[1:] if accumulates else types
    if kind in ("pmaddwd", "vpdpwssd", "vpdpwssds"):
        a, b = (_bytes_as(v, t, "<i2") for v, t in zip(sources, source_types))
        group = 2
    else:
        a = _bytes_as(sources[0], source_types[0], "u1")
        b = _bytes_as(sources[1], source_types[1], "i1")
        group = 2 if kind == "pmaddubsw" else 4
    sums = (a * b).reshape(lanes, group).sum(axis=1)
    if kind == "pmaddubsw":
        out = np.clip(sums, -(2**15), 2**15 - 1)
    elif kind == "pmaddwd":
        out = _wrap32(sums)
    else:
        total = _bytes_as(values[0], types[0], "<i4") + sums
        out = np.clip(total, *_I32) if kind.endswith("s") else _wrap32(total)
    return V.from_numpy(out.astype(str(result.element_of())), result)
