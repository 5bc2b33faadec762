"""Loading the kernels of a Python file for the command line (``python -m tvmscript``).

A file is run like a script whose ``__name__`` is not ``"__main__"`` (so its
``if __name__ == "__main__":`` block does not run), with its folder first on ``sys.path``;
every module-level ``PrimFunc`` and ``IRModule`` it defines is a kernel. In *collecting*
mode the ``@T.prim_func`` / ``@I.ir_module`` decorators record a failing kernel's
diagnostic and go on, so ``check`` reports every broken kernel of a file, not the first.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irbuilder import ir_module as _ir_module_hooks
from irbuilder.ir import IRModule, PrimFunc
from irbuilder.tir import func as _prim_func_hooks

from .diagnostics import DiagnosticError

__all__ = ["CliError", "LoadedFile", "load_file", "select", "split_target"]


class CliError(Exception):
    """A user error the command line reports as one message (exit status 1)."""


@dataclass
class LoadedFile:
    """The kernels of one file, in definition order, and the diagnostics of broken ones."""

    path: Path
    kernels: dict[str, PrimFunc | IRModule] = field(default_factory=dict)
    diagnostics: list[DiagnosticError] = field(default_factory=list)
    failure: str | None = None
    """The file itself failed to run (an exception outside any kernel), as a report."""


def split_target(target: str) -> tuple[Path, str | None]:
    """``FILE.py[:FUNC]`` -> (path, FUNC or None)."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or os.sep in name or name.endswith(".py"):
        return Path(target), None
    return Path(path), name or None


@contextlib.contextmanager
def _collecting(diagnostics: list[DiagnosticError]) -> Iterator[None]:
    """Decorators that record a kernel's DiagnosticError and hand back the Python function."""
    saved = (list(_prim_func_hooks._parser_hook), list(_ir_module_hooks._parser_hook))

    def guard(hook: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(obj: Any, **kwargs: Any) -> Any:
            try:
                return hook(obj, **kwargs)
            except DiagnosticError as err:
                diagnostics.append(err)
                return obj

        return guarded

    _prim_func_hooks.register_prim_func_parser(guard(saved[0][0]))
    _ir_module_hooks.register_ir_module_parser(guard(saved[1][0]))
    try:
        yield
    finally:
        _prim_func_hooks._parser_hook[:] = saved[0]
        _ir_module_hooks._parser_hook[:] = saved[1]


def _user_traceback(err: BaseException, path: Path) -> str:
    """The traceback lines from the user's file on (none of the loader's frames)."""
    frames = traceback.extract_tb(err.__traceback__)
    resolved = str(path.resolve())
    start = next((i for i, f in enumerate(frames) if os.path.abspath(f.filename) == resolved), 0)
    lines = traceback.format_list(frames[start:])
    lines += traceback.format_exception_only(type(err), err)
    return "Traceback (most recent call last):\n" + "".join(lines)


def load_file(path: Path, *, collect: bool = False) -> LoadedFile:
    """Run ``path`` and gather its kernels; a failure outside kernels raises :class:`CliError`
    (``collect=False``) or is stored in ``failure`` (``collect=True``)."""
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    import tvmscript  # noqa: F401  (installs the parser behind the decorators)

    loaded = LoadedFile(path)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        with _collecting(loaded.diagnostics) if collect else contextlib.nullcontext():
            namespace = runpy.run_path(str(path), run_name="__tvmscript_cli__")
    except DiagnosticError as err:
        if not collect:
            raise
        loaded.diagnostics.append(err)
        return loaded
    except SystemExit as err:
        message = f"{path}: the file called sys.exit({err.code!r}) while loading"
        if not collect:
            raise CliError(message) from None
        loaded.failure = message
        return loaded
    except Exception as err:
        report = f"{path}: the file failed to run:\n{_user_traceback(err, path)}"
        if not collect:
            raise CliError(report.rstrip()) from None
        loaded.failure = report
        return loaded
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    for name, value in namespace.items():
        if isinstance(value, (PrimFunc, IRModule)) and not name.startswith("__"):
            loaded.kernels[name] = value
    return loaded


def select(loaded: LoadedFile, name: str | None) -> list[tuple[str, PrimFunc | IRModule]]:
    """The kernels named by ``name`` (all when None); ``Module.func`` picks one function of
    an IRModule, and a plain name is also looked for inside the file's IRModules."""
    if name is None:
        if not loaded.kernels:
            raise CliError(f"{loaded.path}: defines no @T.prim_func or @I.ir_module")
        return list(loaded.kernels.items())
    if name in loaded.kernels:
        return [(name, loaded.kernels[name])]
    module_name, _, func_name = name.partition(".")
    module = loaded.kernels.get(module_name)
    if isinstance(module, IRModule) and func_name:
        for fname, func in module.items():
            if fname == func_name:
                return [(name, func)]
    for mname, value in loaded.kernels.items():
        if isinstance(value, IRModule):
            for fname, func in value.items():
                if fname == name:
                    return [(f"{mname}.{fname}", func)]
    known = ", ".join(loaded.kernels) or "none"
    raise CliError(f"{loaded.path}: no kernel named {name!r} (kernels: {known})")
