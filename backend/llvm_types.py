"""The LLVM type of each IR dtype: the one map the code generator and the runtime glue read.

Kept out of :mod:`backend.codegen` (which imports :mod:`backend.runtime`) so that the
runtime's entry wrappers can spell scalar parameter types with it too.
"""

from __future__ import annotations

from irbuilder.ir import DataType, TypeCode, as_dtype

__all__ = ["CodegenError", "llvm_type", "mask_type", "mem_type", "scalar_type"]


class CodegenError(Exception):
    """Raised for lowered IR the code generator cannot translate (names the offending node)."""


_SCALAR_INT = {8: "i8", 16: "i16", 32: "i32", 64: "i64"}
_SCALAR_FLOAT = {16: "half", 32: "float", 64: "double"}


def scalar_type(dtype: DataType, *, memory: bool = False) -> str:
    """The LLVM type of one lane (bool is ``i1`` in registers, ``i8`` in memory)."""
    if dtype.is_bool:
        return "i8" if memory else "i1"
    if dtype.is_integer:
        return _SCALAR_INT[dtype.bits]
    if dtype.code == TypeCode.FLOAT:
        return _SCALAR_FLOAT[dtype.bits]
    if dtype.code == TypeCode.BFLOAT:
        return "bfloat"
    if dtype.is_handle:
        return "ptr"
    # float8 has no LLVM type: it is legalised to wider floats before code generation.
    raise CodegenError(f"no LLVM type for {dtype}")


def llvm_type(dtype: DataType) -> str:
    """The LLVM register type of a (possibly vector) dtype."""
    elem = scalar_type(dtype)
    return elem if dtype.lanes == 1 else f"<{dtype.lanes} x {elem}>"


def mem_type(dtype: DataType) -> str:
    """The LLVM in-memory type of a (possibly vector) dtype."""
    elem = scalar_type(dtype, memory=True)
    return elem if dtype.lanes == 1 else f"<{dtype.lanes} x {elem}>"


def mask_type(dtype: DataType) -> str:
    """The LLVM type of a bool mask with ``dtype``'s lanes (``i1`` or ``<N x i1>``)."""
    return llvm_type(as_dtype("bool").with_lanes(dtype.lanes))
