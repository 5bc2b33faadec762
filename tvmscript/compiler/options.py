"""Options of :func:`tvmscript.build` and the lowering pipeline they select."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import lowering
from irbuilder.ir import PrimFunc
from lowering import Pass, PassContext, PassInstrument
from lowering.target import Target, as_target

from ..diagnostics import DiagnosticError

if TYPE_CHECKING:
    # Imported where used: a build served from the disk cache needs neither code
    # generation nor the passes (docs/compile-time.md).
    from backend.codegen import CodegenOptions
    from lowering.checks.race_check import RaceError

__all__ = [
    "BuildOptions",
    "bounds_check_pass",
    "lower_for_build",
    "parse_options",
    "parse_target",
    "race_diagnostic",
]


@dataclass(frozen=True)
class BuildOptions:
    """Every option that changes what :func:`tvmscript.build` produces (part of cache keys)."""

    opt_level: int = 3
    fastmath: bool = False
    """Allow reassociation/contraction of float arithmetic (reductions vectorize)."""
    fp_contract: bool = True
    """Let LLVM fuse ``a * b + c`` into one FMA (C's default ``-ffp-contract=on``); ``False``
    rounds after every operation, as numpy does."""
    verify: bool = False
    """Run the well-formedness verifier on the input and after every lowering pass."""
    bounds_check: bool = False
    """Insert index checks (``lowering.checks.bounds_check``) raising IndexError on out-of-range
    access."""
    release_gil: bool = False
    """Release the GIL while the kernel runs (about 35 ns per call; worth it for long kernels)."""
    count_allocations: bool = True
    """Count heap allocations per compiled library (:meth:`Kernel.allocation_stats`)."""
    copy_noncontiguous_inputs: bool = True
    """A non-C-contiguous array passed for a buffer the kernel only reads is copied."""
    strict_reductions: bool = False
    """Keep block reductions in source order (no lane-split ``vectorize_reductions``)."""
    check_races: bool = True
    """Refuse ``T.parallel`` loops whose iterations may conflict (``lowering.checks.race_check``;
    ``DiagnosticError`` at the access and the loop)."""
    target: Target | None = None
    """The machine code target (None: the host); selects late passes and LLVM's CPU."""

    @property
    def resolved_target(self) -> Target:
        """:attr:`target`, or the host when it is None."""
        return as_target(self.target)

    def codegen_options(self, target: Target | None = None) -> CodegenOptions:
        """The code generator's options for this build (``target`` overrides :attr:`target`)."""
        from backend.codegen import CodegenOptions

        return CodegenOptions(
            fastmath=self.fastmath,
            fp_contract=self.fp_contract,
            count_allocations=self.count_allocations,
            target=self.target if target is None else target,
        )

    def key(self) -> tuple[Any, ...]:
        """A hashable, printable tuple identifying these options (and the active
        PassContext's disabled passes and config, which change the lowered code)."""
        ctx = PassContext.current()
        return (
            self.opt_level,
            self.fastmath,
            self.fp_contract,
            self.verify,
            self.bounds_check,
            self.release_gil,
            self.count_allocations,
            self.copy_noncontiguous_inputs,
            self.check_races,
            self.strict_reductions,
            "host" if self.target is None else (str(self.target), self.target.llvm_features),
            tuple(sorted(ctx.disabled_passes)),
            repr(sorted((k, sorted(v.items())) for k, v in ctx.config.items())),
        )


_BOOL_OPTIONS = (
    "fastmath",
    "fp_contract",
    "verify",
    "bounds_check",
    "release_gil",
    "count_allocations",
    "copy_noncontiguous_inputs",
    "check_races",
    "strict_reductions",
)
_ALL_OPTIONS = (*_BOOL_OPTIONS, "cache")


def parse_options(opt_level: object, options: Mapping[str, Any]) -> tuple[BuildOptions, Any]:
    """Validate ``build``'s keyword options; return (BuildOptions, the ``cache`` value).

    Unknown names raise ``TypeError`` naming them; wrong types raise ``TypeError``.
    """
    unknown = sorted(set(options) - set(_ALL_OPTIONS))
    if unknown:
        hint = ""
        if "num_threads" in unknown:
            hint = (
                " (the thread count is a process setting: TVMSCRIPT_NUM_THREADS or "
                "backend.runtime.set_num_threads)"
            )
        raise TypeError(
            f"build() got unknown option(s): {', '.join(unknown)}; expected some of "
            f"{', '.join(_ALL_OPTIONS)}{hint}"
        )
    if isinstance(opt_level, bool) or not isinstance(opt_level, int):
        raise TypeError(f"build(): opt_level must be an int 0..3, got {opt_level!r}")
    if not 0 <= opt_level <= 3:
        raise ValueError(f"build(): opt_level must be 0..3, got {opt_level}")
    values: dict[str, Any] = {}
    for name in _BOOL_OPTIONS:
        if name in options:
            value = options[name]
            if not isinstance(value, bool):
                raise TypeError(f"build(): option {name} must be a bool, got {value!r}")
            values[name] = value
    cache = options.get("cache")
    if cache is not None and not isinstance(cache, bool):
        raise TypeError(f"build(): option cache must be a bool or None, got {cache!r}")
    return BuildOptions(opt_level=opt_level, **values), cache


def bounds_check_pass() -> tuple[Pass, str]:
    """The ``lowering.checks.bounds_check`` pass and where it runs (``"before:<pass>"`` or
    ``"end"``).

    The module may set ``PIPELINE_POSITION``; the default runs it just before
    ``flatten_buffer`` (while accesses still have their logical N-d indices and shapes).
    Raises ``NotImplementedError`` while the module does not exist.
    """
    try:
        module = importlib.import_module("lowering.checks.bounds_check")
    except ModuleNotFoundError as exc:
        if exc.name not in ("lowering.checks.bounds_check", "lowering"):
            raise
        raise NotImplementedError(
            "build(..., bounds_check=True) needs the pass lowering.checks.bounds_check, "
            "which is not available in this version"
        ) from None
    pass_ = getattr(module, "insert_bounds_checks", None)
    if not isinstance(pass_, Pass):
        raise NotImplementedError(
            "lowering.checks.bounds_check does not export a pass 'insert_bounds_checks'"
        )
    position = getattr(module, "PIPELINE_POSITION", "before:flatten_buffer")
    if not isinstance(position, str) or not (position == "end" or position.startswith("before:")):
        raise ValueError(f"lowering.checks.bounds_check.PIPELINE_POSITION is invalid: {position!r}")
    return pass_, position


def parse_target(target: object) -> Target | None:
    """``build``'s ``target``: ``"llvm"`` (the host) -> None, a target string, dict or
    :class:`~lowering.target.Target` -> that Target (``"interp"`` is handled by ``build``).
    Bad values raise TypeError/ValueError."""
    if target == "llvm":
        return None
    if not isinstance(target, (str, dict, Target)):
        raise TypeError(
            f"build(): target must be 'llvm', 'interp', a target string, dict or Target, "
            f"got {target!r}"
        )
    try:
        chosen = as_target(target)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"build(): {exc}") from None
    return None if chosen == Target.host() else chosen


def check_runnable(target: Target | None) -> None:
    """Refuse (ValueError) to JIT code for a target whose features the host lacks."""
    if target is None:
        return
    missing = target.missing_on_host()
    if missing:
        host = Target.host()
        raise ValueError(
            f"build(): target '{target}' uses {', '.join(missing)}, which this host "
            f"({host.mcpu}) lacks: its code cannot run here. Build for the host and export "
            "for the target instead: kernel.export_library(path, target=...)"
        )


def lower_for_build(
    func: PrimFunc, options: BuildOptions, instruments: Sequence[PassInstrument] = ()
) -> PrimFunc:
    """Run the lowering pipeline (plus the bounds-check pass when asked) on one function.

    The active PassContext's instruments observe the passes, and ``instruments`` too. A
    parallel loop refused by the race check raises :class:`DiagnosticError` located at the
    access, with a note at the loop.
    """
    from lowering.cpu.prepare import prepare_for_cpu

    func = prepare_for_cpu(func)
    extra = [bounds_check_pass()] if options.bounds_check else []
    if options.strict_reductions or options.fastmath:
        outer = PassContext.current()
        config = {name: dict(values) for name, values in outer.config.items()}
        if options.strict_reductions:
            config.setdefault("vectorize_reductions", {})["enabled"] = False
        if options.fastmath:
            # Rows in vector lanes keep every row's order without reassociation; with it,
            # LLVM vectorizes each row's loop itself, about twice as fast from cache (a
            # 4096 x 4096 matvec: 1.33 -> 0.82 ms, a layernorm 0.28 -> 0.19 ms).
            config.setdefault("vectorize_row_reductions", {})["enabled"] = False
        adjusted = PassContext(
            opt_level=outer.opt_level,
            disabled_passes=outer.disabled_passes,
            config=config,
            instruments=outer.instruments,
        )
        with adjusted:
            return _lower(func, options, extra, instruments)
    return _lower(func, options, extra, instruments)


def _lower(
    func: PrimFunc,
    options: BuildOptions,
    extra: list[tuple[Pass, str]],
    instruments: Sequence[PassInstrument],
) -> PrimFunc:
    from lowering.checks.race_check import RaceError

    try:
        return lowering.lower(
            func,
            opt_level=options.opt_level,
            verify_each=options.verify,
            target=options.target,
            extra_passes=extra,
            check_races=race_switch(options),
            instruments=instruments,
        )
    except RaceError as err:
        raise race_diagnostic(err).detach() from None


def race_diagnostic(err: RaceError) -> DiagnosticError:
    """The located report of a refused parallel loop (the access, then the loop)."""
    diagnostic = DiagnosticError(err.message, err.span, original=err)
    for note, span in err.notes:
        diagnostic.add_note(note, span)
    return diagnostic


def race_switch(options: BuildOptions) -> bool | None:
    """``check_races=False`` turns the check off; the default leaves the PassContext's
    ``check_parallel_races`` config (or disabled passes) in charge."""
    return None if options.check_races else False
