"""On-disk cache of whole builds, keyed by the *input* IR, so a warm build skips lowering,
code generation and LLVM (only the object file is loaded and linked).

An entry holds the object code, the optimised LLVM IR (compressed, for ``get_source``), the
exported/external symbol names, every kernel's entry signature and its lowered TVMScript.
The key is a sha256 over: the entry format, whether the input is a function or a module, the
structural hash of the input, the target, the build options, the host fingerprint (triple,
CPU, features, llvmlite and LLVM versions) and a fingerprint of the compiler's own sources.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.abi.pyentry import BufferParam, EntrySpec, ScalarParam
from backend.runtime import (
    CompiledLibrary,
    default_cache_dir,
    host_target,
    read_cache_file,
    write_cache_file,
)

__all__ = ["CachedBuild", "build_cache_path", "compiler_fingerprint", "load_build", "save_build"]

_FORMAT = 2
_SOURCE_PACKAGES = ("irbuilder", "lowering", "backend")


def _source_fingerprint() -> str:
    # About a hundred stat calls, kept to plain tuples (no per-file formatting, no sorting of
    # directory entries).
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts: list[tuple[str, int, int]] = []
    pending = [os.path.join(root, package) for package in _SOURCE_PACKAGES]
    while pending:
        try:
            entries = os.scandir(pending.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                name = entry.name
                if name.endswith(".py"):
                    if entry.is_file():
                        st = entry.stat()
                        parts.append((entry.path[len(root) :], st.st_size, st.st_mtime_ns))
                elif name[0] not in "._" and entry.is_dir():
                    pending.append(entry.path)
    here = os.path.join(root, "tvmscript")
    for name in ("build.py", "build_options.py", "build_cache.py"):
        with contextlib.suppress(OSError):
            st = os.stat(os.path.join(here, name))
            parts.append((name, st.st_size, st.st_mtime_ns))
    parts.sort()
    return hashlib.sha256(repr(parts).encode()).hexdigest()


# Taken when the compiler is imported (build.py imports it with the rest of the compiler), so
# it describes the code this process runs: a source edited later must not label what the old
# code compiles. It also keeps the ~0.5 ms of stat calls off the first build.
_FINGERPRINT = _source_fingerprint()


def compiler_fingerprint() -> str:
    """Sizes and mtimes of the compiler's sources when this process imported it (changes
    whenever the compiler may change)."""
    return _FINGERPRINT


def build_cache_path(
    kind: str, ir_hash: int, target: str, options: tuple[Any, ...], cache_dir: Path | None = None
) -> Path:
    """Path of the entry for this input (``<cache dir>/b-<sha256>.tvmb``)."""
    parts = [
        f"tvmscript-build/{_FORMAT}",
        kind,
        f"{ir_hash:x}",
        target,
        repr(options),
        host_target().fingerprint(),
        compiler_fingerprint(),
    ]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return (cache_dir or default_cache_dir()) / f"b-{key}.tvmb"


@dataclass(frozen=True)
class CachedKernel:
    """One kernel of a cache entry: its entry signature and lowered TVMScript."""

    spec: EntrySpec
    tir: str


@dataclass(frozen=True)
class CachedBuild:
    """A cache entry read back: what is needed to link the object and rebuild the kernels."""

    name: str
    obj: bytes
    ir_compressed: bytes
    exports: tuple[str, ...]
    externals: tuple[str, ...]
    kernels: tuple[CachedKernel, ...]


def _spec_to_json(spec: EntrySpec) -> dict[str, Any]:
    params: list[list[Any]] = []
    for p in spec.params:
        if isinstance(p, BufferParam):
            params.append(["buffer", p.name, p.dtype, p.copy_noncontiguous, p.written])
        else:
            params.append(["scalar", p.name, p.dtype])
    return {"name": spec.name, "params": params, "release_gil": spec.release_gil}


def _spec_from_json(data: dict[str, Any]) -> EntrySpec:
    params: list[BufferParam | ScalarParam] = []
    for entry in data["params"]:
        if entry[0] == "buffer":
            params.append(BufferParam(entry[1], entry[2], bool(entry[3]), bool(entry[4])))
        else:
            params.append(ScalarParam(entry[1], entry[2]))
    return EntrySpec(data["name"], params, release_gil=bool(data["release_gil"]))


def save_build(path: Path, library: CompiledLibrary, kernels: list[tuple[EntrySpec, str]]) -> bool:
    """Write an entry for ``library`` (kernels: (spec, lowered TVMScript)); False on I/O error."""
    header = {
        "name": library.name,
        "exports": list(library.symbols),
        "externals": list(library.externals),
        "kernels": [{"spec": _spec_to_json(spec), "tir": tir} for spec, tir in kernels],
    }
    try:
        write_cache_file(path, header, library.object_bytes, library.llvm_ir)
    except OSError:
        return False
    return True


def load_build(path: Path) -> CachedBuild | None:
    """Read an entry, or None when it is absent, corrupt or of another format."""
    hit = read_cache_file(path)
    if hit is None:
        return None
    header, obj, ir_z = hit
    try:
        kernels = tuple(
            CachedKernel(_spec_from_json(k["spec"]), str(k["tir"])) for k in header["kernels"]
        )
        return CachedBuild(
            str(header["name"]),
            obj,
            ir_z,
            tuple(header["exports"]),
            tuple(header["externals"]),
            kernels,
        )
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def decompress_ir(data: bytes) -> str:
    """The IR text of an entry's compressed IR."""
    return zlib.decompress(data).decode()
