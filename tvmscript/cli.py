"""The ``tvmscript`` command (``python -m tvmscript``): inspect, explain, check and bench kernels.

::

    tvmscript inspect FILE.py[:FUNC] [--stage parsed|lowered|llvm|asm] [--after-each-pass]
    tvmscript explain FILE.py:FUNC
    tvmscript check FILE.py [FILE.py ...]
    tvmscript bench FILE.py:FUNC [--shape n=1024] [--repeat 5]

Exit status: 0 success, 1 a kernel or file error (reported located, without a traceback
of ours), 2 a usage error (argparse). See ``docs/cli.md``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from irbuilder.ir import IRModule, PrimFunc

from .cli_load import CliError, load_file, select, split_target
from .diagnostics import DiagnosticError

__all__ = ["main"]

STAGES = ("parsed", "lowered", "llvm", "asm")


class _PrintEachPass:
    """Pass instrument: the IR after every pass, headed by the pass name and its time."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def before_pass(self, name: str, ir: PrimFunc | IRModule) -> None:
        return None

    def after_pass(self, name: str, ir: PrimFunc | IRModule, seconds: float) -> None:
        if name in _PIPELINES:  # the whole sequence: its time, not its IR a second time
            self.out.write(f"# {name}: {seconds * 1e3:.3f} ms in all\n\n")
            return
        self.out.write(f"# after {name} ({seconds * 1e3:.3f} ms)\n{ir.script()}\n\n")


_PIPELINES = ("default_pipeline", "build_pipeline", "sequential")


def _lower(ir: PrimFunc | IRModule, opt_level: int, **kwargs: Any) -> PrimFunc | IRModule:
    import lowering

    if isinstance(ir, PrimFunc):
        return lowering.lower(ir, opt_level=opt_level, **kwargs)
    return lowering.lower(ir, opt_level=opt_level, **kwargs)


def _stage_text(ir: PrimFunc | IRModule, stage: str, opt_level: int) -> str:
    if stage == "parsed":
        return ir.script()
    if stage == "lowered":
        return _lower(ir, opt_level).script()
    from .compiler.build import build

    return str(build(ir, opt_level=opt_level).get_source("ll" if stage == "llvm" else "asm"))


def _cmd_inspect(args: argparse.Namespace, out: TextIO) -> int:
    path, name = split_target(args.target)
    kernels = select(load_file(path), name)
    for index, (label, ir) in enumerate(kernels):
        if len(kernels) > 1:
            out.write(f"{'' if index == 0 else chr(10)}# ---- {label} ----\n")
        if args.after_each_pass:
            out.write(f"# input of {label}\n{ir.script()}\n\n")
            _lower(ir, args.opt_level, instruments=[_PrintEachPass(out)])
            if args.stage == "parsed":
                continue
        out.write(_stage_text(ir, args.stage, args.opt_level).rstrip("\n") + "\n")
    return 0


def _cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    from lowering.transforms.bufferize import explain_bufferization

    path, name = split_target(args.target)
    if name is None:
        raise CliError(f"explain needs FILE.py:FUNC, got {args.target!r}")
    for label, ir in select(load_file(path), name):
        if not isinstance(ir, PrimFunc):
            raise CliError(f"{label} is an IRModule; name one of its functions (Module.func)")
        out.write(explain_bufferization(ir, opt_level=args.opt_level).rstrip("\n") + "\n")
    return 0


def _cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    failed = False
    for file in args.files:
        loaded = load_file(Path(file), collect=True)
        problems = list(loaded.diagnostics)
        lowered = 0
        if loaded.failure is None and args.lower:
            for label, ir in loaded.kernels.items():
                problem = _lower_problem(ir, args.opt_level)
                if problem is not None:
                    problems.append(problem)
                    err.write(f"{file}: {label}: lowering failed\n")
                else:
                    lowered += 1
        for diagnostic in problems:
            err.write(diagnostic.render() + "\n\n")
        if loaded.failure is not None:
            err.write(loaded.failure.rstrip("\n") + "\n")
        if problems or loaded.failure is not None:
            failed = True
            count = len(problems) + (loaded.failure is not None)
            out.write(f"{file}: {count} error{'s' if count > 1 else ''}\n")
        else:
            n = len(loaded.kernels)
            out.write(f"{file}: {n} kernel{'s' if n != 1 else ''} ok\n")
    return 1 if failed else 0


def _lower_problem(ir: PrimFunc | IRModule, opt_level: int) -> DiagnosticError | None:
    try:
        _lower(ir, opt_level, verify_each=True)
    except DiagnosticError as error:
        return error
    except Exception as error:  # a pass refusing the kernel: report where the kernel is
        funcs = [ir] if isinstance(ir, PrimFunc) else [f for _, f in ir.items()]
        return DiagnosticError(f"lowering failed: {error}", funcs[0].span)
    return None


def _cmd_bench(args: argparse.Namespace, out: TextIO) -> int:
    from .cli_bench import bench, parse_bindings

    path, name = split_target(args.target)
    if name is None:
        raise CliError(f"bench needs FILE.py:FUNC, got {args.target!r}")
    bindings = parse_bindings(args.shape)
    for label, ir in select(load_file(path), name):
        if not isinstance(ir, PrimFunc):
            raise CliError(f"{label} is an IRModule; name one of its functions (Module.func)")
        out.write(
            bench(
                ir, bindings, opt_level=args.opt_level, repeat=args.repeat, min_time=args.min_time
            )
            + "\n"
        )
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvmscript",
        description="Inspect, explain, check and benchmark TVMScript kernels defined in "
        "Python files. A kernel is a module-level @T.prim_func or @I.ir_module; FILE.py is "
        "run with a __name__ other than '__main__'.",
    )
    parser.add_argument("--version", action="version", version=f"tvmscript {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def opt_level(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "-O",
            "--opt-level",
            type=int,
            choices=range(4),
            default=3,
            metavar="{0,1,2,3}",
            help="optimisation level (default 3)",
        )

    p = sub.add_parser(
        "inspect",
        help="print a kernel at one stage of compilation",
        description="Print the kernel(s) of FILE.py (or only FUNC) at a stage.",
    )
    p.add_argument("target", metavar="FILE.py[:FUNC]")
    p.add_argument(
        "--stage",
        choices=STAGES,
        default="parsed",
        help="parsed TVMScript, lowered TIR, LLVM IR or assembly (default parsed)",
    )
    p.add_argument(
        "--after-each-pass",
        action="store_true",
        help="print the IR after every lowering pass, with the pass's time",
    )
    opt_level(p)

    p = sub.add_parser(
        "explain",
        help="print the bufferization report of a kernel",
        description="Where each tensor of FUNC is computed, and why.",
    )
    p.add_argument("target", metavar="FILE.py:FUNC")
    opt_level(p)

    p = sub.add_parser(
        "check",
        help="parse and verify every kernel of files",
        description="Parse and verify every kernel; print located diagnostics. "
        "Exit status 1 when any kernel is broken (usable as a pre-commit hook).",
    )
    p.add_argument("files", nargs="+", metavar="FILE.py")
    p.add_argument(
        "--lower", action="store_true", help="also lower every kernel, verifying after each pass"
    )
    opt_level(p)

    p = sub.add_parser(
        "bench",
        help="time a kernel on random inputs",
        description="Build FUNC and time calls on random inputs.",
    )
    p.add_argument("target", metavar="FILE.py:FUNC")
    p.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a symbolic dimension or scalar parameter (repeatable, or a,b=...)",
    )
    p.add_argument("--repeat", type=int, default=5, help="timing repeats (default 5)")
    p.add_argument(
        "--min-time",
        type=float,
        default=0.05,
        help="seconds of calls per repeat, at least (default 0.05)",
    )
    opt_level(p)
    return parser


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("tvmscript")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    out, err = sys.stdout, sys.stderr
    try:
        if args.command == "inspect":
            return _cmd_inspect(args, out)
        if args.command == "explain":
            return _cmd_explain(args, out)
        if args.command == "check":
            return _cmd_check(args, out, err)
        return _cmd_bench(args, out)
    except DiagnosticError as error:
        err.write(error.render() + "\n")
    except CliError as error:
        err.write(f"tvmscript {args.command}: error: {error}\n")
    except (TypeError, ValueError) as error:  # e.g. a kernel refusing its bench arguments
        err.write(f"tvmscript {args.command}: error: {error}\n")
    except BrokenPipeError:  # `tvmscript inspect ... | head`
        return 0
    return 1
