"""tvmscript: a TVMScript-style kernel language and compiler on llvmlite.

``from tvmscript import tir as T`` gives the ``T`` namespace; ``tvmscript.build(func)``
compiles a PrimFunc into a callable kernel.
"""

from irbuilder.ir import set_script_printer

from .build import Kernel, KernelModule, build, clear_build_cache
from .diagnostics import DiagnosticError
from .printer import script

set_script_printer(script)

__all__ = ["DiagnosticError", "Kernel", "KernelModule", "build", "clear_build_cache", "script"]
