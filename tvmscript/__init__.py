"""tvmscript: a TVMScript-style kernel language and compiler on llvmlite.

``from tvmscript import tir as T`` gives the ``T`` namespace (``@T.prim_func``),
``from tvmscript import ir as I`` the ``I`` namespace (``@I.ir_module``);
``tvmscript.from_source(text)`` parses TVMScript text; ``tvmscript.build(func)``
compiles a PrimFunc into a callable kernel.
"""

from irbuilder.ir import set_script_printer
from irbuilder.ir_module import register_ir_module_parser
from irbuilder.tir import register_prim_func_parser

from . import ir, tir
from .build import Kernel, KernelModule, build, clear_build_cache
from .diagnostics import DiagnosticError
from .parser.entry import from_source, parse_ir_module, parse_prim_func
from .printer import script

set_script_printer(script)
register_prim_func_parser(parse_prim_func)
register_ir_module_parser(parse_ir_module)

__all__ = [
    "DiagnosticError",
    "Kernel",
    "KernelModule",
    "build",
    "clear_build_cache",
    "from_source",
    "ir",
    "script",
    "tir",
]
