"""Kernels for the build tests, made with the IRBuilder API (``with T.prim_func()``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import PrimExpr, PrimFunc


def make(name: str, body: Callable[[], None]) -> PrimFunc:
    """A PrimFunc named ``name`` whose parameters and body ``body()`` builds."""
    with IRBuilder() as ib:
        with T.prim_func():
            T.func_name(name)
            body()
    func = ib.get()
    assert isinstance(func, PrimFunc)
    return func


def buf(name: str, shape: Any, dtype: str = "float32") -> Any:
    """A buffer parameter."""
    return T.arg(name, T.Buffer(shape, dtype))


def add(n: int | None = None, dtype: str = "float32", name: str = "add") -> PrimFunc:
    """``C = A + B`` over ``n`` elements (symbolic ``n`` when None)."""

    def body() -> None:
        size = T.int64() if n is None else n
        A, B, C = buf("A", (size,), dtype), buf("B", (size,), dtype), buf("C", (size,), dtype)
        with T.serial(size) as i:
            T.buffer_store(C, A[i] + B[i], [i])

    return make(name, body)


def unary(name: str, n: int, in_dtype: str, out_dtype: str,
          fn: Callable[[PrimExpr], PrimExpr]) -> PrimFunc:
    """``B[i] = fn(A[i])``."""

    def body() -> None:
        A, B = buf("A", (n,), in_dtype), buf("B", (n,), out_dtype)
        with T.serial(n) as i:
            T.buffer_store(B, fn(A[i]), [i])

    return make(name, body)


def binary(name: str, n: int, dtype: str, out_dtype: str,
           fn: Callable[[PrimExpr, PrimExpr], PrimExpr]) -> PrimFunc:
    """``C[i] = fn(A[i], B[i])``."""

    def body() -> None:
        A, B, C = buf("A", (n,), dtype), buf("B", (n,), dtype), buf("C", (n,), out_dtype)
        with T.serial(n) as i:
            T.buffer_store(C, fn(A[i], B[i]), [i])

    return make(name, body)
