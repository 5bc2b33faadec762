"""Module-level metaprogramming kernels (macros, capture), marked for the round trip."""

from __future__ import annotations

from tvmscript import tir as T

from .registry import roundtrip

SHAPE = (4, 8)


@T.macro
def add_one(buf, i):
    buf[i] = buf[i] + T.float32(1)


@T.macro
def add_two(buf, i):
    add_one(buf, i)
    tmp = buf[i] * T.float32(2)  # a name local to the macro
    buf[i] = tmp


@T.macro
def twice(x):
    return x * 2


@roundtrip
@T.prim_func
def uses_macros(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
    for i in range(8):
        add_two(A, i)
    for tmp in range(8):  # the macro's `tmp` does not clash with this one
        B[tmp] = twice(tmp)


@roundtrip
@T.prim_func
def captured_shape(A: T.Buffer(SHAPE, "float32")):
    for (*idx,) in T.grid(*SHAPE):
        A[tuple(idx)] = T.float32(0)
