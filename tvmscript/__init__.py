"""tvmscript: a TVMScript-style kernel language and compiler on llvmlite.

``from tvmscript import tir as T`` gives the ``T`` namespace (``@T.prim_func``),
``from tvmscript import ir as I`` the ``I`` namespace (``@I.ir_module``);
``tvmscript.from_source(text)`` parses TVMScript text; ``tvmscript.build(func)``
compiles a PrimFunc into a callable kernel.

Importing loads the language (IR, builder, parser, printer); the compiler (lowering, code
generation, llvmlite) is imported by the first ``build`` while the JIT is created on a
background thread (:mod:`tvmscript._prewarm`).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from irbuilder.ir import IRModule, PrimFunc, set_script_display, set_script_printer
from irbuilder.ir_module import register_ir_module_parser
from irbuilder.tir import register_prim_func_parser

from . import _prewarm, display, ir, notebook, tir
from .diagnostics import DiagnosticError
from .parser.entry import from_source, parse_ir_module, parse_prim_func
from .printer import script

if TYPE_CHECKING:
    from lowering.target import Target

    from .compiler.build import Kernel, KernelModule, clear_build_cache

set_script_printer(script)
set_script_display(display.show, display.html_of)
register_prim_func_parser(parse_prim_func)
register_ir_module_parser(parse_ir_module)


def build(
    func_or_module: PrimFunc | IRModule, target: Any = "llvm", opt_level: int = 3, **options: Any
) -> Any:
    """Compile a PrimFunc (to a :class:`Kernel`) or an IRModule (to a :class:`KernelModule`).

    ``target="llvm"`` JIT-compiles for the host CPU, a :class:`Target` (or its string or dict
    spelling, ``"llvm -mcpu=znver4"``) for that CPU, ``target="interp"`` runs the reference
    interpreter; ``opt_level`` is 0-3. Options (``fastmath``, ``fp_contract``, ``cache``,
    ``verify``, ``bounds_check``, ``release_gil``, ``count_allocations``,
    ``copy_noncontiguous_inputs``, ...) are documented on ``tvmscript.build`` 's implementation,
    ``tvmscript.compiler.build.build``, and in the README.
    """
    # One thread imports at a time: the prewarm thread stops after its current module and
    # the build imports what it needs (a disk-cache hit: not code generation nor the passes).
    _prewarm.stop_imports()
    from .compiler.build import build as build_impl

    try:
        return build_impl(func_or_module, target, opt_level, **options)
    except RecursionError:
        # The compiler walks the IR recursively (irbuilder.ir.functor.room_for_deep_ir).
        raise RecursionError(
            "build(): the program nests too deeply for the compiler to follow (statements "
            "or expressions more than about 2,000 levels deep, such as a chain of that "
            "many variable bindings); split it into smaller functions or loops"
        ) from None
    except Exception as err:
        if not _is_user_error(err):
            raise
        # A refusal about the user's program or options: shown without the compiler's frames.
        if isinstance(err, DiagnosticError):
            err = err.detach()
        raise err.with_traceback(None) from None


def _is_user_error(err: Exception) -> bool:
    """Errors the compiler raises about its input (located diagnostics, constructs the CPU
    cannot build, ``build():`` option checks), as opposed to internal failures."""
    from lowering.cpu.support import UnsupportedConstructError

    if isinstance(err, (DiagnosticError, UnsupportedConstructError)):
        return True
    return isinstance(err, (TypeError, ValueError, NotImplementedError)) and str(err).startswith(
        ("build()", "unknown target")
    )


def explain_bufferization(func: PrimFunc, opt_level: int | None = None, **kwargs: Any) -> str:
    """Print and return, for every tensor of ``func``, where it is computed and why.

    Like MLIR's ``print-conflicts``: each copy or allocation comes with the source lines
    of the definition, the conflicting write and the read that forced it.
    """
    from lowering.transforms.bufferize import explain_bufferization as explain

    report = explain(func, opt_level=opt_level, **kwargs)
    print(report)
    return report


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext tvmscript``: diagnostics shown without internal tracebacks
    (:mod:`tvmscript.notebook`; done automatically when imported inside IPython)."""
    notebook.install(ipython)


if "IPython" in sys.modules:
    notebook.install()


_LAZY = {
    "Kernel": f"{__name__}.compiler.build",
    "KernelModule": f"{__name__}.compiler.build",
    "clear_build_cache": f"{__name__}.compiler.build",
    "Target": "lowering.target",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Last: the thread's imports (llvmlite, the runtime) must not contend with this package's.
# Not inside mypy, which imports this package only to load tvmscript.mypy_plugin.
if "mypy.build" not in sys.modules:
    _prewarm.start()

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
