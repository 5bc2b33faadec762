"""Pass infrastructure: named passes over PrimFuncs and IRModules, Sequential, PassContext.

A pass is a named function over a PrimFunc (most passes) or over an IRModule.
Calling a pass accepts either: a function pass applied to a module runs on each
function. The active :class:`PassContext` (a ``with`` block, thread-local)
carries the optimisation level, disabled passes, per-pass options and the
instruments (print after each pass, time each pass, verify after each pass).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

from irbuilder.ir import IRModule, PrimFunc

from .target import Target

__all__ = [
    "FunctionPass",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PrintAfterEach",
    "Sequential",
    "TimePasses",
    "function_pass",
    "module_pass",
]


class PassInstrument(Protocol):
    """Observes pass execution.

    An instrument given to :class:`PassContext` may define either method or both (a missing
    one does nothing), and optionally ``should_run(name, ir) -> bool`` (False skips the
    pass). TVM-style instruments (``run_before_pass(mod, info)``, ``run_after_pass(mod,
    info)``, ``should_run(mod, info)``, ``enter_pass_ctx()``, ``exit_pass_ctx()``, as
    ``tvm.instrument.pass_instrument`` classes define them) are accepted too: ``info`` has
    ``name`` and ``opt_level``.
    """

    def before_pass(self, name: str, ir: PrimFunc | IRModule) -> None: ...

    def after_pass(self, name: str, ir: PrimFunc | IRModule, seconds: float) -> None: ...


@dataclass(frozen=True)
class PassInfo:
    """What a TVM-style instrument is told about a pass (TVM's ``tvm.transform.PassInfo``)."""

    name: str
    opt_level: int
    required: tuple[str, ...] = ()


_OWN_HOOKS = ("before_pass", "after_pass")
_TVM_HOOKS = ("run_before_pass", "run_after_pass", "should_run", "enter_pass_ctx", "exit_pass_ctx")


class _Hooks:
    """One user instrument with every hook present: ours as given, TVM's translated."""

    def __init__(self, instrument: Any) -> None:
        self.instrument = instrument
        self._tvm = not any(hasattr(instrument, h) for h in _OWN_HOOKS)
        self._levels: dict[str, int] = {}
        self._depth = 0

    def note_pass(self, p: Pass) -> None:
        self._levels[p.name] = p.opt_level

    def _info(self, name: str) -> PassInfo:
        return PassInfo(name, self._levels.get(name, 0))

    def should_run(self, name: str, ir: PrimFunc | IRModule) -> bool:
        hook = getattr(self.instrument, "should_run", None)
        if hook is None:
            return True
        return bool(hook(ir, self._info(name)) if self._tvm else hook(name, ir))

    def before_pass(self, name: str, ir: PrimFunc | IRModule) -> None:
        if self._tvm:
            hook = getattr(self.instrument, "run_before_pass", None)
            if hook is not None:
                hook(ir, self._info(name))
            return
        hook = getattr(self.instrument, "before_pass", None)
        if hook is not None:
            hook(name, ir)

    def after_pass(self, name: str, ir: PrimFunc | IRModule, seconds: float) -> None:
        if self._tvm:
            hook = getattr(self.instrument, "run_after_pass", None)
            if hook is not None:
                hook(ir, self._info(name))
            return
        hook = getattr(self.instrument, "after_pass", None)
        if hook is not None:
            hook(name, ir, seconds)

    def after_phase(self, name: str, seconds: float) -> None:
        hook = getattr(self.instrument, "after_phase", None)
        if hook is not None:
            hook(name, seconds)

    def enter(self) -> None:
        self._depth += 1
        hook = getattr(self.instrument, "enter_pass_ctx", None)
        if self._depth == 1 and hook is not None:
            hook()

    def exit(self) -> None:
        self._depth -= 1
        hook = getattr(self.instrument, "exit_pass_ctx", None)
        if self._depth == 0 and hook is not None:
            hook()


def _hooks(instrument: Any) -> _Hooks:
    if isinstance(instrument, _Hooks):
        return instrument
    if not any(hasattr(instrument, h) for h in (*_OWN_HOOKS, *_TVM_HOOKS)):
        raise TypeError(
            f"PassContext: instrument {instrument!r} has none of the instrument methods "
            "(before_pass(name, ir), after_pass(name, ir, seconds), or TVM's "
            "run_before_pass(mod, info), run_after_pass(mod, info), should_run(mod, info))"
        )
    return _Hooks(instrument)


@dataclass
class PrintAfterEach:
    """Prints the IR as TVMScript after every pass (to ``sink``, default ``print``)."""

    sink: Callable[[str], None] = print

    def before_pass(self, name: str, ir: PrimFunc | IRModule) -> None:
        return None

    def after_pass(self, name: str, ir: PrimFunc | IRModule, seconds: float) -> None:
        self.sink(f"# after {name}\n{ir.script()}")


@dataclass
class TimePasses:
    """Accumulates the wall time of every pass; ``report()`` formats a table."""

    seconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    def before_pass(self, name: str, ir: PrimFunc | IRModule) -> None:
        return None

    def after_pass(self, name: str, ir: PrimFunc | IRModule, seconds: float) -> None:
        self._add(name, seconds)

    def after_phase(self, name: str, seconds: float) -> None:
        """A build step that is not a TIR pass (``codegen``, ``llvm-optimize``,
        ``llvm-codegen`` ...), reported by ``tvmscript.build`` to the active context's
        instruments that have this method."""
        self._add(name, seconds)

    def _add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
        self.calls[name] = self.calls.get(name, 0) + 1

    def report(self) -> str:
        rows = sorted(self.seconds.items(), key=lambda item: -item[1])
        lines = [f"{'pass':<32} {'calls':>6} {'ms':>10}"]
        lines += [f"{n:<32} {self.calls[n]:>6} {s * 1e3:>10.3f}" for n, s in rows]
        return "\n".join(lines)


_local = threading.local()


@dataclass
class PassContext:
    """Options for running passes; use as ``with PassContext(opt_level=2): ...``.

    ``config`` maps a pass name to its options dict (read with :meth:`option`).
    ``verify_each`` runs the well-formedness verifier after every pass. ``target`` is the
    Target being compiled for (``lower()`` sets it; passes that size code by the machine,
    such as ``tile_reduction_panels``, read it; None means the host).
    """

    opt_level: int = 3
    disabled_passes: frozenset[str] = frozenset()
    config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    instruments: Sequence[PassInstrument] = ()
    verify_each: bool = False
    verifier: Callable[[PrimFunc], None] | None = None
    target: Target | None = None
    disabled_pass: Sequence[str] = ()
    """TVM's spelling of ``disabled_passes`` (merged into it)."""
    current_pass: str = field(default="", init=False, repr=False)
    """The pass whose result is being verified (set while ``verifier`` runs)."""

    def __post_init__(self) -> None:
        given: object = self.disabled_passes  # annotated frozenset; callers may pass anything
        if isinstance(self.disabled_pass, str) or isinstance(given, str):
            raise TypeError("PassContext: disabled_passes is a collection of pass names, not a str")
        self.disabled_passes = frozenset(self.disabled_passes) | frozenset(self.disabled_pass)
        self.disabled_pass = ()
        self._hooks = tuple(_hooks(i) for i in self.instruments)
        # Contexts made inside the compiler inherit ``instruments``: they pass the hooks on,
        # so a TVM-style instrument's enter/exit_pass_ctx runs once, around the outermost.
        self.instruments = self._hooks

    @staticmethod
    def current() -> PassContext:
        stack: list[PassContext] = getattr(_local, "stack", [])
        return stack[-1] if stack else _DEFAULT

    def __enter__(self) -> PassContext:
        if not hasattr(_local, "stack"):
            _local.stack = []
        _local.stack.append(self)
        for hooks in self._hooks:
            hooks.enter()
        return self

    def __exit__(self, *exc: object) -> None:
        for hooks in reversed(self._hooks):
            hooks.exit()
        _local.stack.pop()

    def option(self, pass_name: str, key: str, default: Any = None) -> Any:
        """The option ``key`` configured for ``pass_name``, or ``default``.

        Pass names are snake_case (ARCHITECTURE.md, "Pass names"); a hyphenated spelling
        names the same pass (``"unroll-loop"`` is ``"unroll_loop"``).
        """
        wanted = _normal(pass_name)
        for name, options in self.config.items():
            if _normal(name) == wanted:
                return options.get(key, default)
        return default

    def enabled(self, p: Pass) -> bool:
        """Whether ``p`` runs: not disabled (by either spelling) and within ``opt_level``."""
        disabled = {_normal(n) for n in self.disabled_passes}
        return _normal(p.name) not in disabled and p.opt_level <= self.opt_level


def _normal(name: str) -> str:
    return name.replace("-", "_")


_DEFAULT = PassContext()


class Pass:
    """A named transformation; call it on a PrimFunc or an IRModule."""

    name: str
    opt_level: int

    def __init__(self, name: str, opt_level: int = 0) -> None:
        self.name = name
        self.opt_level = opt_level

    def run_module(self, mod: IRModule) -> IRModule:
        raise NotImplementedError

    def run_func(self, func: PrimFunc) -> PrimFunc:
        result = self.run_module(IRModule({func.name: func}))
        return result[func.name]

    @overload
    def __call__(self, ir: PrimFunc) -> PrimFunc: ...

    @overload
    def __call__(self, ir: IRModule) -> IRModule: ...

    def __call__(self, ir: PrimFunc | IRModule) -> PrimFunc | IRModule:
        ctx = PassContext.current()
        if not ctx.enabled(self):
            return ir
        hooks = ctx._hooks
        for hook in hooks:
            hook.note_pass(self)
            if not hook.should_run(self.name, ir):
                return ir
        for hook in hooks:
            hook.before_pass(self.name, ir)
        start = time.perf_counter()
        result: PrimFunc | IRModule
        result = self.run_func(ir) if isinstance(ir, PrimFunc) else self.run_module(ir)
        elapsed = time.perf_counter() - start
        for hook in hooks:
            hook.after_pass(self.name, result, elapsed)
        if ctx.verify_each and ctx.verifier is not None and not isinstance(self, Sequential):
            saved, ctx.current_pass = ctx.current_pass, self.name
            try:
                for func in _functions(result):
                    ctx.verifier(func)
            finally:
                ctx.current_pass = saved
        return result

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _functions(ir: PrimFunc | IRModule) -> Iterator[PrimFunc]:
    if isinstance(ir, PrimFunc):
        yield ir
    else:
        for _, func in ir.items():
            yield func


class FunctionPass(Pass):
    """A pass defined by a function ``PrimFunc -> PrimFunc``."""

    def __init__(self, fn: Callable[[PrimFunc], PrimFunc], name: str, opt_level: int = 0):
        super().__init__(name, opt_level)
        self.fn = fn
        self.__doc__ = fn.__doc__

    def run_func(self, func: PrimFunc) -> PrimFunc:
        return self.fn(func)

    def run_module(self, mod: IRModule) -> IRModule:
        functions = {name: self.fn(func) for name, func in mod.items()}
        if all(functions[name] is mod[name] for name in functions):
            return mod
        return IRModule(functions, mod.attrs, span=mod.span)


class ModulePass(Pass):
    """A pass defined by a function ``IRModule -> IRModule``."""

    def __init__(self, fn: Callable[[IRModule], IRModule], name: str, opt_level: int = 0):
        super().__init__(name, opt_level)
        self.fn = fn
        self.__doc__ = fn.__doc__

    def run_module(self, mod: IRModule) -> IRModule:
        return self.fn(mod)


class Sequential(Pass):
    """Runs passes in order, each subject to the active PassContext."""

    def __init__(self, passes: Sequence[Pass], name: str = "sequential") -> None:
        super().__init__(name, 0)
        self.passes = list(passes)

    def run_func(self, func: PrimFunc) -> PrimFunc:
        for p in self.passes:
            func = p(func)
        return func

    def run_module(self, mod: IRModule) -> IRModule:
        for p in self.passes:
            mod = p(mod)
        return mod


def function_pass(
    name: str, opt_level: int = 0
) -> Callable[[Callable[[PrimFunc], PrimFunc]], FunctionPass]:
    """Decorator: ``@function_pass("flatten_buffer")`` turns a function into a pass."""

    def wrap(fn: Callable[[PrimFunc], PrimFunc]) -> FunctionPass:
        return FunctionPass(fn, name, opt_level)

    return wrap


def module_pass(
    name: str, opt_level: int = 0
) -> Callable[[Callable[[IRModule], IRModule]], ModulePass]:
    """Decorator for passes over a whole module."""

    def wrap(fn: Callable[[IRModule], IRModule]) -> ModulePass:
        return ModulePass(fn, name, opt_level)

    return wrap
