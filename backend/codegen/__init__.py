"""LLVM IR code generation from lowered TIR (text output; compile it with ``backend.runtime``)."""

from .context import CodegenError, CodegenOptions, ErrorKind
from .module import CodegenResult, codegen_module, generate

__all__ = [
    "CodegenError",
    "CodegenOptions",
    "CodegenResult",
    "ErrorKind",
    "codegen_module",
    "generate",
]
