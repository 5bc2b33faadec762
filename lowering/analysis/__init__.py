"""Shared analyses over the IR: substitution, free variables and buffer uses."""

from .buffer_uses import BufferAccesses, buffer_accesses, uses_buffer_data
from .substitute import Substituter, substitute, substitute_expr
from .vars import add, free_vars, is_const, mul, product

__all__ = [
    "BufferAccesses",
    "Substituter",
    "add",
    "buffer_accesses",
    "free_vars",
    "is_const",
    "mul",
    "product",
    "substitute",
    "substitute_expr",
    "uses_buffer_data",
]
