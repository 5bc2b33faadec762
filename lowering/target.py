"""What code is generated for: :class:`Target`, spelled as TVM spells an ``llvm`` target.

``Target("llvm -mcpu=znver3")``, ``Target({"kind": "llvm", "mcpu": "znver4", "mattr":
["+avx512f"]})`` and ``Target.host()`` (the machine running Python) describe a CPU. Every
decision that depends on the machine -- which late passes run (:mod:`lowering.pipeline`), the
LLVM target machine, vector math variants, benchmark schedules -- reads a Target; the host is
only the default. Lowering uses the decision-relevant features (:attr:`Target.features`);
the backend hands :attr:`llvm_cpu`/:attr:`llvm_features` to LLVM.

Differences from TVM: ``"llvm"`` without ``-mcpu`` means the host CPU (TVM's default is
LLVM's generic CPU; we JIT for the running process, so the host is what ``build`` has always
meant), only the ``llvm`` kind and x86_64 triples exist, and the features implied by
``-mcpu`` come from a table of known CPUs (:data:`KNOWN_CPUS`; llvmlite cannot ask LLVM for
them) -- an unknown CPU name is refused rather than silently treated as generic.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KNOWN_CPUS", "TRACKED_FEATURES", "Target", "TargetLike", "as_target"]

TRACKED_FEATURES: tuple[str, ...] = (
    "sse2", "sse4.2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl",
    "avx512vnni", "avx512fp16",
)
"""The CPU features code generation decides on (vector width, gathers, vector math), and
those LLVM uses unasked for a named CPU (``avx512vnni``: the int8 tiles' ``pmaddwd`` and add
become ``vpdpwssd``), so that code for a CPU is known not to run on a host without them."""

_V1 = frozenset({"sse2"})
_V2 = _V1 | {"sse4.2"}
_AVX = _V2 | {"avx"}
_V3 = _AVX | {"avx2", "fma"}
_V4 = _V3 | {"avx512f", "avx512bw", "avx512dq", "avx512vl"}
_VNNI = _V4 | {"avx512vnni"}
_SPR = _VNNI | {"avx512fp16"}

KNOWN_CPUS: Mapping[str, frozenset[str]] = {
    **dict.fromkeys(("x86-64", "generic", "k8", "nocona", "core2", "penryn"), _V1),
    **dict.fromkeys(
        ("x86-64-v2", "nehalem", "westmere", "silvermont", "goldmont", "goldmont-plus",
         "tremont", "btver1", "bdver1"), _V2),
    **dict.fromkeys(("sandybridge", "ivybridge", "btver2", "bdver2", "bdver3"), _AVX),
    **dict.fromkeys(
        ("x86-64-v3", "haswell", "broadwell", "skylake", "alderlake", "raptorlake",
         "meteorlake", "gracemont", "bdver4", "znver1", "znver2", "znver3"), _V3),
    **dict.fromkeys(("x86-64-v4", "skylake-avx512", "cannonlake"), _V4),
    **dict.fromkeys(
        ("cascadelake", "cooperlake", "icelake-client", "icelake-server", "rocketlake",
         "tigerlake", "znver4", "znver5"),
        _VNNI),
    **dict.fromkeys(("sapphirerapids", "emeraldrapids", "graniterapids"), _SPR),
}
"""x86-64 CPU names (LLVM's ``-mcpu`` spelling) and the tracked features each implies."""

_FULL_RATE_WIDE_SHUFFLES = frozenset({"znver5"})
"""CPUs whose 512-bit shuffles cost what their 256-bit ones do
(:attr:`Target.full_rate_wide_shuffles`)."""

_OPTIONS = ("mcpu", "mtriple", "mattr", "keys")


class Target:
    """An ``llvm`` code generation target (immutable, hashable, compared by its string).

    Attributes follow TVM: ``kind`` (``"llvm"``), ``keys`` (``("cpu",)``), ``mcpu``,
    ``mtriple``, ``mattr`` (``("+avx512f", "-fma")``); ``str(target)`` is the canonical
    target string. ``is_host`` is true for a target whose CPU was not named (the host's).
    """

    __slots__ = ("_host_features", "features", "is_host", "keys", "kind", "mattr", "mcpu",
                 "mtriple")

    kind: str
    keys: tuple[str, ...]
    mcpu: str
    mtriple: str
    mattr: tuple[str, ...]
    is_host: bool
    features: frozenset[str]
    """Tracked features (:data:`TRACKED_FEATURES`) the target has, ``-mattr`` applied."""
    _host_features: str

    def __init__(self, spec: TargetLike) -> None:
        if isinstance(spec, Target):
            for name in Target.__slots__:
                object.__setattr__(self, name, getattr(spec, name))
            return
        options = _parse(spec)
        host = _host()
        mcpu = options.get("mcpu")
        self._set("kind", "llvm")
        self._set("keys", tuple(options.get("keys") or ("cpu",)))
        self._set("mattr", tuple(options.get("mattr") or ()))
        self._set("mtriple", options.get("mtriple") or host.triple)
        self._set("is_host", mcpu is None)
        self._set("mcpu", host.cpu if mcpu is None else mcpu)
        self._set("_host_features", host.llvm_features if mcpu is None else "")
        if not self.mtriple.startswith("x86_64"):
            raise ValueError(
                f"Target: only x86_64 triples are supported, got -mtriple={self.mtriple}"
            )
        if mcpu is None:
            base = host.features
        elif mcpu in KNOWN_CPUS:
            base = KNOWN_CPUS[mcpu]
        elif mcpu == host.cpu:
            base = host.features
        else:
            raise ValueError(
                f"Target: unknown -mcpu={mcpu}; known x86-64 CPUs: {', '.join(sorted(KNOWN_CPUS))}"
            )
        features = set(base)
        for attr in self.mattr:
            if len(attr) < 2 or attr[0] not in "+-":
                raise ValueError(f"Target: -mattr entries look like +avx2 or -fma, got {attr!r}")
            (features.add if attr[0] == "+" else features.discard)(attr[1:])
        self._set("features", frozenset(f for f in features if f in TRACKED_FEATURES))

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Target is immutable")

    @staticmethod
    def host() -> Target:
        """The machine running this process (its CPU name and every feature it has)."""
        return _host_target()

    # -- decisions -------------------------------------------------------------------------

    def has_feature(self, name: str) -> bool:
        """Whether the target has the tracked feature ``name`` (e.g. ``"avx512f"``)."""
        if name not in TRACKED_FEATURES:
            raise ValueError(f"Target: untracked feature {name!r}; tracked: {TRACKED_FEATURES}")
        return name in self.features

    @property
    def vector_bits(self) -> int:
        """Width of the widest vector register (512 with AVX-512F, 256 with AVX, else 128)."""
        if "avx512f" in self.features:
            return 512
        return 256 if "avx" in self.features else 128

    @property
    def full_rate_wide_shuffles(self) -> bool:
        """Whether the CPU shuffles 512-bit vectors as fast as 256-bit ones (Zen 5; Zen 4
        splits each 512-bit shuffle in two halves, so twice as wide gains nothing there).
        Intel's AVX-512 cores are not listed: not measured."""
        return "avx512f" in self.features and self.mcpu in _FULL_RATE_WIDE_SHUFFLES

    @property
    def cache_line_bytes(self) -> int:
        """Cache line size (64 on every x86-64 CPU)."""
        return 64

    @property
    def last_level_cache_bytes(self) -> int | None:
        """Size of the host's largest cache (its L3) for the host target, as Linux reports
        it; None for a named CPU (its machine's caches are not known) or when unreadable."""
        return _host_last_level_cache() if self.is_host else None

    def missing_on_host(self) -> tuple[str, ...]:
        """Tracked features the target uses that the host lacks (code for it may SIGILL here)."""
        host = Target.host()
        if not self.mtriple.split("-")[0] == host.mtriple.split("-")[0]:
            return (f"-mtriple={self.mtriple}",)
        return tuple(f for f in TRACKED_FEATURES if f in self.features - host.features)

    # -- what LLVM receives ----------------------------------------------------------------

    @property
    def llvm_cpu(self) -> str:
        """The CPU name for LLVM's target machine."""
        return self.mcpu

    @property
    def llvm_features(self) -> str:
        """The feature string for LLVM's target machine: the host's detected features for a
        host target, then ``-mattr`` (later entries win)."""
        return ",".join(p for p in (self._host_features, *self.mattr) if p)

    # -- identity --------------------------------------------------------------------------

    def export(self) -> dict[str, Any]:
        """The target as a dict (TVM's ``Target.export``)."""
        out: dict[str, Any] = {"kind": self.kind, "keys": list(self.keys), "mcpu": self.mcpu,
                               "mtriple": self.mtriple}
        if self.mattr:
            out["mattr"] = list(self.mattr)
        return out

    def __str__(self) -> str:
        parts = [self.kind, f"-keys={','.join(self.keys)}", f"-mcpu={self.mcpu}",
                 f"-mtriple={self.mtriple}"]
        if self.mattr:
            parts.append(f"-mattr={','.join(self.mattr)}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Target):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[str, str]:
        return str(self), self._host_features


TargetLike = Target | str | Mapping[str, Any]
"""What :class:`Target` and ``build(..., target=)`` accept."""


def as_target(spec: TargetLike | None) -> Target:
    """``spec`` as a Target; None is the host."""
    if spec is None:
        return Target.host()
    return spec if isinstance(spec, Target) else Target(spec)


def _parse(spec: object) -> dict[str, Any]:
    if isinstance(spec, str):
        return _parse_string(spec)
    if isinstance(spec, Mapping):
        return _parse_dict(spec)
    raise TypeError(f"Target: expected a target string or dict, got {type(spec).__name__}")


def _parse_string(text: str) -> dict[str, Any]:
    words = text.split()
    if not words:
        raise ValueError("Target: empty target string; expected e.g. 'llvm -mcpu=znver3'")
    options: dict[str, Any] = {"kind": words[0]}
    for word in words[1:]:
        name, eq, value = word.lstrip("-").partition("=")
        if not word.startswith("-") or not eq:
            raise ValueError(f"Target: options look like -mcpu=znver3, got {word!r} in {text!r}")
        options[name] = value.split(",") if name in ("mattr", "keys") else value
    return _parse_dict(options)


def _parse_dict(spec: Mapping[str, Any]) -> dict[str, Any]:
    kind = spec.get("kind")
    if kind != "llvm":
        raise ValueError(f"Target: unsupported kind {kind!r}; the only kind is 'llvm'")
    unknown = sorted(set(spec) - {"kind", *_OPTIONS})
    if unknown:
        raise ValueError(
            f"Target: unknown option(s) {', '.join(unknown)}; expected some of "
            f"{', '.join(_OPTIONS)}"
        )
    out: dict[str, Any] = {}
    for name in _OPTIONS:
        value = spec.get(name)
        if value is None:
            continue
        if name in ("mattr", "keys"):
            if isinstance(value, str):
                value = value.split(",")
            if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
                raise TypeError(f"Target: {name} must be a list of str, got {value!r}")
            out[name] = tuple(v for v in value if v)
        else:
            if not isinstance(value, str) or not value:
                raise TypeError(f"Target: {name} must be a non-empty str, got {value!r}")
            out[name] = value
    return out


class _HostInfo:
    """The host as LLVM detects it (llvmlite is imported only when a Target is first made)."""

    def __init__(self) -> None:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        self.triple: str = llvm.get_process_triple()
        self.cpu: str = llvm.get_host_cpu_name()
        feature_map = llvm.get_host_cpu_features()
        self.llvm_features: str = feature_map.flatten()
        self.features = frozenset(f for f in TRACKED_FEATURES if feature_map.get(f, False))


@functools.cache
def _host_last_level_cache() -> int | None:
    """The largest data or unified cache of CPU 0 in bytes (sysfs), or None."""
    import os

    base = "/sys/devices/system/cpu/cpu0/cache"
    largest: int | None = None
    try:
        entries = os.listdir(base)
    except OSError:
        return None
    for entry in entries:
        if not entry.startswith("index"):
            continue
        try:
            with open(os.path.join(base, entry, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(base, entry, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        if kind == "Instruction" or not text:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
        digits = text[:-1] if text[-1] in "KMG" else text
        if digits.isdigit():
            size = int(digits) * scale
            largest = size if largest is None else max(largest, size)
    return largest


@functools.cache
def _host() -> _HostInfo:
    return _HostInfo()


@functools.cache
def _host_target() -> Target:
    return Target("llvm")
