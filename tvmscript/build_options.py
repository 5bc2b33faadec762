"""Options of :func:`tvmscript.build` and the lowering pipeline they select."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import lowering
from irbuilder.ir import PrimFunc
from lowering import (
    Pass,
    PassContext,
    PassInstrument,
    Sequential,
    default_pipeline,
    verify_well_formed,
)

__all__ = ["BuildOptions", "bounds_check_pass", "lower_for_build", "parse_options"]


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
    """Insert index checks (``lowering.bounds_check``) raising IndexError on out-of-range access."""
    release_gil: bool = False
    """Release the GIL while the kernel runs (about 35 ns per call; worth it for long kernels)."""
    count_allocations: bool = True
    """Count heap allocations per compiled library (:meth:`Kernel.allocation_stats`)."""
    copy_noncontiguous_inputs: bool = True
    """A non-C-contiguous array passed for a buffer the kernel only reads is copied."""

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
    values: dict[str, bool] = {}
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
    """The ``lowering.bounds_check`` pass and where it runs (``"before:<pass>"`` or ``"end"``).

    The module may set ``PIPELINE_POSITION``; the default runs it just before
    ``flatten_buffer`` (while accesses still have their logical N-d indices and shapes).
    Raises ``NotImplementedError`` while the module does not exist.
    """
    try:
        module = importlib.import_module("lowering.bounds_check")
    except ModuleNotFoundError as exc:
        if exc.name not in ("lowering.bounds_check", "lowering"):
            raise
        raise NotImplementedError(
            "build(..., bounds_check=True) needs the pass lowering.bounds_check, "
            "which is not available in this version"
        ) from None
    pass_ = getattr(module, "bounds_check", None)
    if not isinstance(pass_, Pass):
        raise NotImplementedError("lowering.bounds_check does not export a pass 'bounds_check'")
    position = getattr(module, "PIPELINE_POSITION", "before:flatten_buffer")
    if not isinstance(position, str) or not (position == "end" or position.startswith("before:")):
        raise ValueError(f"lowering.bounds_check.PIPELINE_POSITION is invalid: {position!r}")
    return pass_, position


class _Verifier:
    """Verifies after each pass; accesses must be 1-d once ``flatten_buffer`` ran."""

    def __init__(self) -> None:
        self.flattened = False

    def __call__(self, func: PrimFunc) -> None:
        pass_name = PassContext.current().current_pass or None
        if pass_name == "flatten_buffer":
            self.flattened = True
        verify_well_formed(func, lowered=self.flattened, pass_name=pass_name)


def lower_for_build(
    func: PrimFunc, options: BuildOptions, instruments: Sequence[PassInstrument] = ()
) -> PrimFunc:
    """Run the default pipeline (plus the bounds-check pass when asked) on one function.

    The active PassContext's instruments observe the passes, and ``instruments`` too.
    """
    outer = PassContext.current()
    every = (*outer.instruments, *instruments)
    if not options.bounds_check:
        return lowering.lower(
            func, opt_level=options.opt_level, verify_each=options.verify, instruments=every
        )
    check, position = bounds_check_pass()
    passes = list(default_pipeline(options.opt_level))
    names = [p.name.replace("-", "_") for p in passes]
    if position == "end":
        passes.append(check)
    else:
        target = position[len("before:") :].replace("-", "_")
        index = names.index(target) if target in names else len(passes)
        passes.insert(index, check)
    ctx = PassContext(
        opt_level=options.opt_level,
        disabled_passes=outer.disabled_passes,
        config=outer.config,
        instruments=every,
        verify_each=options.verify,
        verifier=_Verifier(),
    )
    if options.verify:
        verify_well_formed(func, pass_name="<input>")
    with ctx:
        result = Sequential(passes, "build_pipeline")(func)
    if options.verify:
        verify_well_formed(result, lowered=True, pass_name="build_pipeline")
    return result
