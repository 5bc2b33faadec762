"""tvmscript: a TVMScript-style kernel language and compiler on llvmlite.

``from tvmscript import tir as T`` gives the ``T`` namespace (``@T.prim_func``),
``from tvmscript import ir as I`` the ``I`` namespace (``@I.ir_module``);
``tvmscript.from_source(text)`` parses TVMScript text; ``tvmscript.build(func)``
compiles a PrimFunc into a callable kernel.
"""

from typing import Any

from backend.runtime import jit_prewarm  # noqa: F401  (first: starts creating the JIT)
from irbuilder.ir import PrimFunc, set_script_printer
from irbuilder.ir_module import register_ir_module_parser
from irbuilder.tir import register_prim_func_parser
from lowering.bufferize import explain_bufferization as _explain
from lowering.target import Target

from . import ir, tir
from .build import Kernel, KernelModule, build, clear_build_cache
from .diagnostics import DiagnosticError
from .parser.entry import from_source, parse_ir_module, parse_prim_func
from .printer import script

set_script_printer(script)
register_prim_func_parser(parse_prim_func)
register_ir_module_parser(parse_ir_module)


def explain_bufferization(func: PrimFunc, opt_level: int | None = None, **kwargs: Any) -> str:
    """Print and return, for every tensor of ``func``, where it is computed and why.

    Like MLIR's ``print-conflicts``: each copy or allocation comes with the source lines
    of the definition, the conflicting write and the read that forced it.
    """
    report = _explain(func, opt_level=opt_level, **kwargs)
    print(report)
    return report


__all__ = [
    "DiagnosticError",
    "explain_bufferization",
    "Kernel",
    "KernelModule",
    "Target",
    "build",
    "clear_build_cache",
    "from_source",
    "ir",
    "script",
    "tir",
]
