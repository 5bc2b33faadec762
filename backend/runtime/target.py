"""Host target machine description and the LLVM optimisation pipeline.

Every JIT engine must receive its *own* :class:`TargetMachine` (an MCJIT/LLJIT engine takes
ownership of the machine it is given, and two engines sharing one machine segfault when they are
freed), so :func:`host_target_machine` always builds a fresh one.  Code generation that does not
hand the machine to an engine (``emit_object`` / ``emit_assembly``) reuses a per-configuration
machine from :func:`codegen_target_machine`; llvmlite serialises every LLVM call behind one global
lock, so sharing it between threads is safe.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import llvmlite
import llvmlite.binding as llvm

from lowering.target import Target

__all__ = [
    "HostTarget",
    "apply_fastmath",
    "codegen_target_machine",
    "machine_cpu_and_features",
    "ensure_initialized",
    "host_target",
    "host_target_machine",
    "optimize",
    "optimize_count",
    "run_pipeline",
]

_init_lock = threading.Lock()
_initialized = False


def ensure_initialized() -> None:
    """Initialise LLVM's native target and assembly printer exactly once per process.

    ``llvm.initialize()`` must not be called: it raises ``RuntimeError`` in llvmlite 0.50.
    """
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _initialized = True


@dataclass(frozen=True)
class HostTarget:
    """Immutable description of the machine code target (the host CPU)."""

    triple: str
    cpu: str
    features: str
    llvmlite_version: str
    llvm_version: tuple[int, ...]

    @property
    def has_avx2(self) -> bool:
        """True when the host supports AVX2 (ymm integer/FP vectors, libmvec ``d`` variants)."""
        return "+avx2" in self.features.split(",")

    @property
    def has_avx512f(self) -> bool:
        """True when the host supports AVX-512F (libmvec ``e`` variants)."""
        return "+avx512f" in self.features.split(",")

    def fingerprint(self) -> str:
        """A string that changes whenever the generated machine code could change."""
        return "\0".join(
            [self.triple, self.cpu, self.features, self.llvmlite_version, repr(self.llvm_version)]
        )


_host: HostTarget | None = None


def host_target() -> HostTarget:
    """Return the (cached) description of the host target."""
    global _host
    if _host is None:
        ensure_initialized()
        _host = HostTarget(
            triple=llvm.get_process_triple(),
            cpu=llvm.get_host_cpu_name(),
            features=llvm.get_host_cpu_features().flatten(),
            llvmlite_version=llvmlite.__version__,
            llvm_version=tuple(llvm.llvm_version_info),
        )
    return _host


def host_target_machine(
    opt: int = 3,
    *,
    jit: bool = True,
    reloc: str = "default",
    codemodel: str = "jitdefault",
    cpu: str | None = None,
    features: str | None = None,
) -> Any:
    """Create a *fresh* ``llvmlite.binding.TargetMachine`` for the host CPU.

    Give each JIT engine its own machine (see module docstring).  ``opt`` is the codegen
    optimisation level (0-3); it matters for compile time of large kernels.  ``cpu`` /
    ``features`` override the host values (e.g. ``cpu="x86-64-v3", features=""`` for a portable
    ahead-of-time artefact).
    """
    host = host_target()
    target = llvm.Target.from_triple(host.triple)
    return target.create_target_machine(
        cpu=host.cpu if cpu is None else cpu,
        features=host.features if features is None else features,
        opt=_clamp_level(opt),
        reloc=reloc,
        codemodel=codemodel,
        jit=jit,
    )


_codegen_tms: dict[tuple[int, str, str, str, str], Any] = {}
_codegen_lock = threading.Lock()


def codegen_target_machine(
    opt: int = 3, *, reloc: str = "default", target: Target | None = None
) -> Any:
    """Return a cached machine used only for ``emit_object``/``emit_assembly`` and pass tuning.

    Never pass the result to an engine constructor (the engine would take ownership of it).
    ``reloc="pic"`` gives position-independent code with the small code model, as needed for a
    shared library; otherwise the JIT's large code model is used. ``target`` (default: the
    host) gives the CPU and features.
    """
    cpu, features = machine_cpu_and_features(target)
    key = (_clamp_level(opt), reloc, "default" if reloc == "pic" else "jitdefault", cpu, features)
    with _codegen_lock:
        tm = _codegen_tms.get(key)
        if tm is None:
            tm = host_target_machine(
                key[0], jit=reloc != "pic", reloc=reloc, codemodel=key[2], cpu=cpu,
                features=features,
            )
            _codegen_tms[key] = tm
        return tm


def machine_cpu_and_features(target: Target | None) -> tuple[str, str]:
    """The CPU name and feature string of the machine that compiles for ``target`` (None:
    the host): a host target without ``-mattr`` takes the host's detected features."""
    chosen = Target.host() if target is None else target
    if target is None or (chosen.is_host and not chosen.mattr):
        return host_target().cpu, host_target().features
    if chosen.is_host:
        return chosen.llvm_cpu, chosen.llvm_features
    return chosen.llvm_cpu, _without_foreign_extensions(chosen.llvm_features)


VENDOR_EXTENSIONS = ("sse4a", "fma4", "xop", "tbm")
"""AMD-only instruction sets a named CPU implies (``znver*``: SSE4A, ``bdver*``: all four)
that LLVM picks unasked (SSE4A's ``insertq`` for a byte shuffle of int8 tiles): code for
``-mcpu=znver3`` built on an Intel host leaves out those the host lacks, so that it runs
there (they are never what makes a kernel fast)."""


def _without_foreign_extensions(features: str) -> str:
    present = {f[1:] for f in host_target().features.split(",") if f.startswith("+")}
    dropped = [f"-{name}" for name in VENDOR_EXTENSIONS if name not in present]
    return ",".join(part for part in (features, *dropped) if part)


def _clamp_level(level: int) -> int:
    if not isinstance(level, int) or isinstance(level, bool):
        raise TypeError(f"optimisation level must be an int, got {type(level).__name__}")
    if not 0 <= level <= 3:
        raise ValueError(f"optimisation level must be in 0..3, got {level}")
    return level


# Instructions that accept fast-math flags, as printed by LLVM's canonical IR writer.
_FP_OPS = re.compile(
    r"(= (?:fadd|fsub|fmul|fdiv|frem|fneg|fcmp)) "
    r"((?:(?:fast|nnan|ninf|nsz|arcp|contract|afn|reassoc) )*)"
)
# FP-returning calls (scalar or vector float/double/half), e.g. `= tail call float @f(...)`.
_FP_CALLS = re.compile(
    r"(= (?:tail |musttail |notail )?call) "
    r"((?:(?:fast|nnan|ninf|nsz|arcp|contract|afn|reassoc) )*)"
    r"(?=(?:half|float|double|<\d+ x (?:half|float|double)>) )"
)


def apply_fastmath(module: Any) -> Any:
    """Return a new module equal to *module* with the ``fast`` flag on every FP instruction.

    llvmlite cannot set instruction flags on a parsed module, so the module is printed in LLVM's
    canonical form (one instruction per line, fixed spelling), the flags are rewritten on that
    text and the result is re-parsed and re-verified.
    """
    text = str(module)
    text = _FP_OPS.sub(r"\1 fast ", text)
    text = _FP_CALLS.sub(r"\1 fast ", text)
    new = llvm.parse_assembly(text)
    new.triple = module.triple
    new.data_layout = module.data_layout
    new.verify()
    return new


_optimize_runs = 0
_optimize_lock = threading.Lock()


def optimize_count() -> int:
    """Number of times :func:`optimize` ran in this process (used by tests of the object cache)."""
    return _optimize_runs


_WIDE_UNSIGNED_TO_FLOAT = re.compile(r"uitofp (?:<\d+ x )?i(?!1\b)\d+")


def slp_is_safe(ir_text: str) -> bool:
    """Whether LLVM's SLP vectorizer may run on this IR: not when it converts an unsigned
    integer wider than one bit to floating point. The SLP vectorizer's bit-width reduction
    narrows the operand of such a ``uitofp`` by counting its sign bits, which is only right
    for ``sitofp``: ``uitofp(or i64 %x, -4)`` (about 2^64) became ``uitofp i32`` (about 2^32)
    on AVX-512 targets (found by the differential fuzzer; LLVM's SLP bit-width analysis
    has had several such miscompiles). Such modules are vectorized by our own passes and
    LLVM's loop vectorizer only."""
    return _WIDE_UNSIGNED_TO_FLOAT.search(ir_text) is None


_MASKED_WIDTH = re.compile(r"@llvm\.masked\.\w+\.v(\d+)")


def has_odd_vectors(ir_text: str) -> bool:
    """Whether optimised IR holds a masked load, store, gather or scatter of a vector whose
    lane count is not a power of two (at least 3). LLVM 22's loop vectorizer groups strided
    accesses of a small stack buffer into vectors such as ``<48 x i32>`` (a stride-6
    interleave group), SROA then promotes the buffer into them and the SLP vectorizer adds
    masked loads of ``<12 x i32>``; instruction selection of such a module has aborted the
    process (an assertion, "Already set a value for this node", found by the schedule fuzz
    on a plain three-stage kernel). Such modules are optimised again without interleave
    groups (:func:`without_interleaving`). Interleave groups alone (a stride-3 slice's
    ``<24 x float>``) compile and stay: without them that slice ran 9% slower."""
    for match in _MASKED_WIDTH.finditer(ir_text):
        lanes = int(match.group(1))
        if lanes >= 3 and lanes & (lanes - 1):
            return True
    return False


@contextlib.contextmanager
def without_interleaving() -> Iterator[None]:
    """LLVM's loop vectorizer without interleaved access groups while the block runs (a
    process-wide LLVM option, set back after: x86's default is on)."""
    llvm.set_option("tvmscript", "-enable-interleaved-mem-accesses=false")
    try:
        yield
    finally:
        llvm.set_option("tvmscript", "-enable-interleaved-mem-accesses=true")


def optimize(
    module: Any, opt_level: int = 3, *, fastmath: bool = False, target: Target | None = None,
    slp: bool | None = None,
) -> Any:
    """Run LLVM's new-pass-manager ``default<O{opt_level}>`` pipeline on *module*.

    Loop and SLP vectorisation are enabled from O2 (SLP defaults to off in llvmlite 0.50);
    SLP only where :func:`slp_is_safe` (``slp``: that decision made by the caller, who has
    the module's text; None scans the module).
    With ``fastmath=True`` every FP instruction first gets the ``fast`` flag (see
    :func:`apply_fastmath`); this can change results (reassociation, no NaN/Inf guarantees).
    Returns the optimised module: *module* itself, or a new module when ``fastmath`` is set.
    ``target`` (default: the host) is the machine the pass pipeline tunes for.
    """
    global _optimize_runs
    level = _clamp_level(opt_level)
    if fastmath:
        module = apply_fastmath(module)
    with _optimize_lock:
        _optimize_runs += 1
    run_pipeline(module, level, target=target, slp=slp)
    return module


def run_pipeline(module: Any, level: int, *, target: Target | None = None,
                 slp: bool | None = None) -> None:
    """:func:`optimize`'s ``default<O{level}>`` run on *module* in place, not counted by
    :func:`optimize_count` (the prewarm thread's throwaway compilation uses it)."""
    # default<O0> still runs the always-inliner, so alwaysinline runtime helpers disappear.
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pto.loop_vectorization = level >= 2
    if slp is None and level >= 2:
        slp = slp_is_safe(str(module))
    pto.slp_vectorization = level >= 2 and bool(slp)
    pb = llvm.create_pass_builder(codegen_target_machine(level, target=target), pto)
    pb.getModulePassManager().run(module, pb)
