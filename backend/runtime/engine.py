"""Compile LLVM IR text to machine code and load it into the process (ORC LLJIT).

Pipeline of :func:`compile_ir`::

    IR text -> parse -> verify -> optimize (new PM, O0-O3) -> emit_object (host TM)
            -> LLJIT library (add_object_img + symbol imports) -> CompiledLibrary

Why LLJIT rather than MCJIT: an unresolved symbol makes LLJIT's ``link`` raise instead of the
MCJIT behaviour of finalising silently and segfaulting at the first call, and a library's memory
is returned when its resource tracker is dropped.  One LLJIT instance serves the whole process;
every compile unit becomes its own uniquely named library.

Symbols: externals declared by the IR are resolved from (1) the ``symbols=`` mapping given to
:func:`compile_ir`, (2) runtime *symbol providers* registered by the other runtime modules
(exception type slots, numpy type/descr objects, ``tvms_parallel_for``, libm aliases, ...) and
(3) the process itself (libc, libm, libmvec once loaded, the CPython C API).  Addresses are bound
at load time, never baked into the object code, so objects can be cached on disk.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import warnings
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm

from lowering.target import Target

from .target import (
    codegen_target_machine,
    ensure_initialized,
    has_odd_vectors,
    host_target,
    host_target_machine,
    optimize,
    run_pipeline,
    slp_is_safe,
    without_interleaving,
)

__all__ = [
    "CompileError",
    "CompiledLibrary",
    "SymbolProvider",
    "cache_enabled",
    "cache_scope",
    "compile_ir",
    "compile_stats",
    "prewarm",
    "warm_codegen",
    "default_cache_dir",
    "load_object",
    "read_cache_file",
    "register_symbol_provider",
    "write_cache_file",
    "resolve_runtime_symbol",
]

#: Libcalls LLVM may emit on its own (half-precision conversions) that no loaded library exports;
#: found by name in the object code and bound by a provider (backend.runtime.softfp).
_IMPLICIT_LIBCALLS = ("__truncdfhf2", "__truncsfhf2", "__extendhfsf2")

#: Bumped whenever the cache file layout or the symbol-binding contract changes.
_CACHE_FORMAT = 1
_MAGIC = b"TVMSOBJ1"


class CompileError(RuntimeError):
    """Raised when IR does not parse/verify, a symbol cannot be resolved, or linking fails."""


#: A provider maps a symbol name to an address, or returns None when it does not know the name.
SymbolProvider = Callable[[str], "int | None"]

_providers: list[SymbolProvider] = []


def register_symbol_provider(provider: SymbolProvider) -> None:
    """Register a callable resolving runtime symbol names (e.g. ``tvms_exc_TypeError``).

    Providers are consulted, in registration order, for every external symbol a compiled module
    declares; they may compile or allocate things lazily (the thread pool does).
    """
    if provider not in _providers:
        _providers.append(provider)


def resolve_runtime_symbol(name: str) -> int | None:
    """Return the address a registered provider gives for *name*, or None."""
    for provider in _providers:
        addr = provider(name)
        if addr is not None:
            return addr
    return None


# ----------------------------------------------------------------------------------------------
# The process-wide LLJIT instance
# ----------------------------------------------------------------------------------------------

_jit_lock = threading.RLock()
_jit: Any = None


def jit_lock() -> threading.RLock:
    """The lock every compile and link holds (re-entrant). A library built on first use
    while symbols are being bound (the thread pool) takes it before its own lock, in the
    order a compile binding that library's symbols takes them."""
    return _jit_lock


_lib_counter = itertools.count()
_stats = {"cold_compiles": 0, "cache_hits": 0, "cache_writes": 0, "cache_errors": 0,
          "relaxed_optimizations": 0}


def _get_jit() -> Any:
    global _jit
    with _jit_lock:
        if _jit is None:
            ensure_initialized()
            # Make the process' own symbols (libc, libm, CPython) visible to address_of_symbol;
            # it returns None for everything until some library has been loaded permanently.
            try:
                llvm.load_library_permanently("libm.so.6")
            except RuntimeError:
                pass
            jit = llvm.create_lljit_compiler(host_target_machine(3), suppress_errors=True)
            # The JIT must outlive every library (trackers dispose through it) and the thread
            # pool's workers run JIT'd code until the process exits: never free it.
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(jit))
            _jit = jit
        return _jit


_prewarm_thread: threading.Thread | None = None
_prewarm_lock = threading.Lock()


def prewarm() -> None:
    """Start creating the process' JIT (LLVM initialisation, host target query, LLJIT, and one
    link of a tiny probe object: a few ms of native work) on a background thread, once;
    ``TVMSCRIPT_PREWARM=0`` disables it.

    ``import backend.runtime.jit_prewarm`` calls this, so the work overlaps the imports and
    the parse that precede a first build (``import tvmscript`` instead runs
    :func:`warm_now` on a thread that first imports this module: ``tvmscript._prewarm``).
    It has to start early: ctypes calls into LLVM release the GIL, but each return needs it
    back, which a thread running Python may hold for the whole switch interval; started at
    the first parse, the thread was measured still running when the build needed the JIT.

    The thread is not a daemon (interpreter exit waits the few milliseconds rather than tear
    LLVM down under it), and a ``fork()`` waits for it, so a child never inherits a
    half-initialised LLVM or a held lock.
    """
    global _prewarm_thread
    if _jit is not None:
        return
    if os.environ.get("TVMSCRIPT_PREWARM", "1").strip().lower() in ("0", "false", "no", "off"):
        return
    with _prewarm_lock:
        if _prewarm_thread is not None:
            return
        thread = threading.Thread(target=_warm, name="tvmscript-jit-prewarm")
        _prewarm_thread = thread
        os.register_at_fork(before=_join_prewarm)
        thread.start()


# A few lines shaped like a kernel's object (a call into the process, a read-only string, a
# writable global): linking it once runs LLVM's object-linking paths before the first real
# link needs them. Measured over 40 fresh processes: the first warm build (disk-cache hit)
# 2.0-2.3 -> 1.6-1.9 ms.
_PROBE_IR = """
@tvms_probe_message = private unnamed_addr constant [6 x i8] c"probe\\00"
@tvms_probe_counter = internal global i64 0
declare ptr @PyErr_Occurred()
define ptr @tvms_prewarm_probe() {
  %n = load i64, ptr @tvms_probe_counter
  %m = add i64 %n, 1
  store i64 %m, ptr @tvms_probe_counter
  %e = call ptr @PyErr_Occurred()
  %z = icmp eq ptr %e, null
  %r = select i1 %z, ptr @tvms_probe_message, ptr %e
  ret ptr %r
}
"""
_probe_tracker: Any = None


def _probe_link() -> None:
    global _probe_tracker
    module = llvm.parse_assembly(_PROBE_IR)
    obj = codegen_target_machine(3).emit_object(module)
    _probe_tracker, _ = _link("prewarm-probe", obj, ["tvms_prewarm_probe"], {})


def warm_now() -> None:
    """Create the JIT in the calling thread (what :func:`prewarm`'s thread runs); failures are
    left for the build that needs the JIT to report. ``tvmscript`` runs it on a thread of its
    own that imports this module first, so the import is off the importing thread too."""
    _warm()


def _warm() -> None:
    with contextlib.suppress(Exception):  # the build that needs the JIT reports any failure
        host_target()
        _get_jit()
        _probe_link()


def _join_prewarm() -> None:
    thread = _prewarm_thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def compile_stats() -> dict[str, int]:
    """Counters of cold compiles, on-disk cache hits/writes/errors in this process."""
    return dict(_stats)


# ----------------------------------------------------------------------------------------------
# Cache configuration
# ----------------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """The cache directory: ``$TVMSCRIPT_CACHE_DIR`` or ``~/.cache/tvmscript``."""
    env = os.environ.get("TVMSCRIPT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "tvmscript"


_scope = threading.local()


@contextlib.contextmanager
def cache_scope(cache: bool) -> Iterator[None]:
    """Within the block (on this thread), ``cache=None`` means ``cache``.

    ``build(..., cache=True)`` wraps loading and compiling in it, so that what a kernel pulls
    in lazily through a symbol provider (the thread pool's library) follows the same switch.
    """
    previous = getattr(_scope, "cache", None)
    _scope.cache = bool(cache)
    try:
        yield
    finally:
        _scope.cache = previous


def cache_enabled(cache: bool | None = None) -> bool:
    """Resolve the ``cache=`` argument: explicit bool wins, then an enclosing
    :func:`cache_scope`, else the environment decides.

    ``None`` enables the cache when ``TVMSCRIPT_CACHE`` is truthy (``1/true/yes/on``) or when
    ``TVMSCRIPT_CACHE_DIR`` is set and ``TVMSCRIPT_CACHE`` is not explicitly falsy.
    """
    if cache is not None:
        return bool(cache)
    scoped = getattr(_scope, "cache", None)
    if scoped is not None:
        return bool(scoped)
    flag = os.environ.get("TVMSCRIPT_CACHE", "").strip().lower()
    if flag in ("1", "true", "yes", "on"):
        return True
    if flag in ("0", "false", "no", "off"):
        return False
    return bool(os.environ.get("TVMSCRIPT_CACHE_DIR"))


def _cache_key(ir_text: str, opt_level: int, fastmath: bool, target: Target | None) -> str:
    host = host_target()
    parts = [
        f"tvmscript-object-cache/{_CACHE_FORMAT}",
        ir_text,
        host.fingerprint(),
        "host" if target is None else repr((str(target), target.llvm_features)),
        f"O{opt_level}",
        f"fastmath={int(fastmath)}",
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _write_cache(path: Path, header: dict[str, Any], obj: bytes, ir: str) -> None:
    ir_z = zlib.compress(ir.encode(), 6)
    header = dict(header, obj_len=len(obj), ir_len=len(ir_z),
                  obj_sha256=hashlib.sha256(obj).hexdigest())
    head = json.dumps(header, sort_keys=True).encode()
    blob = _MAGIC + len(head).to_bytes(8, "little") + head + obj + ir_z
    path.parent.mkdir(parents=True, exist_ok=True)
    # Atomic publish: readers see either no file or a complete one, never a torn write.
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_cache(path: Path) -> tuple[dict[str, Any], bytes, bytes] | None:
    """Return (header, object bytes, compressed IR) or None when absent/corrupt."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    try:
        if not blob.startswith(_MAGIC):
            raise ValueError("bad magic")
        pos = len(_MAGIC)
        hlen = int.from_bytes(blob[pos:pos + 8], "little")
        pos += 8
        header = json.loads(blob[pos:pos + hlen])
        pos += hlen
        obj = blob[pos:pos + header["obj_len"]]
        pos += header["obj_len"]
        ir_z = blob[pos:pos + header["ir_len"]]
        # Never hand a truncated or corrupted object to the LLVM loader.
        if hashlib.sha256(obj).hexdigest() != header["obj_sha256"] or len(ir_z) != header["ir_len"]:
            raise ValueError("checksum mismatch")
        return header, obj, ir_z
    except (ValueError, KeyError, TypeError):
        _stats["cache_errors"] += 1
        return None


# ----------------------------------------------------------------------------------------------
# CompiledLibrary
# ----------------------------------------------------------------------------------------------


class CompiledLibrary:
    """Machine code of one compiled module, loaded into the process.

    The object keeps the JIT'd code alive: the code is freed only when this object is garbage
    collected, so anything holding raw function pointers (builtins made by ``make_builtin``, the
    thread pool) must keep a reference to it.
    """

    def __init__(
        self,
        name: str,
        tracker: Any,
        exports: dict[str, int],
        object_bytes: bytes,
        *,
        opt_level: int,
        fastmath: bool,
        from_cache: bool,
        module: Any = None,
        ir_compressed: bytes | None = None,
        keepalive: list[Any] | None = None,
        externals: tuple[str, ...] = (),
        target: Target | None = None,
    ) -> None:
        self.name = name
        #: The machine code target (None: the host).
        self.target = target
        #: External symbols the object needs bound at load time (see :func:`load_object`).
        self.externals = externals
        self.opt_level = opt_level
        self.fastmath = fastmath
        #: True when the machine code came from the on-disk cache (no optimisation/codegen ran).
        self.from_cache = from_cache
        self._tracker = tracker
        self._jit = _get_jit()
        self._exports = exports
        self._object = object_bytes
        self._module = module
        self._ir_z = ir_compressed
        self._ir: str | None = None
        self._asm: str | None = None
        self._keepalive = keepalive or []

    def __repr__(self) -> str:
        src = "cache" if self.from_cache else "compiled"
        n = len(self._exports)
        return f"<CompiledLibrary {self.name!r} O{self.opt_level} ({src}), {n} symbols>"

    @property
    def symbols(self) -> tuple[str, ...]:
        """Names of the exported (non-internal) symbols defined by the module."""
        return tuple(sorted(self._exports))

    def address(self, symbol: str) -> int:
        """Address of an exported function or global; ``KeyError`` if the module lacks it."""
        try:
            return self._exports[symbol]
        except KeyError:
            raise KeyError(f"symbol {symbol!r} is not defined by library {self.name!r}") from None

    @property
    def object_bytes(self) -> bytes:
        """The relocatable object file (ELF) that was loaded."""
        return self._object

    @property
    def llvm_ir(self) -> str:
        """The optimised LLVM IR text."""
        if self._ir is None:
            if self._module is not None:
                self._ir = str(self._module)
            else:
                assert self._ir_z is not None
                self._ir = zlib.decompress(self._ir_z).decode()
        return self._ir

    @property
    def asm(self) -> str:
        """Host assembly of the optimised module (generated lazily)."""
        if self._asm is None:
            with _jit_lock:
                tm = codegen_target_machine(self.opt_level, target=self.target)
                self._asm = tm.emit_assembly(self._fresh_module())
        return self._asm

    def _fresh_module(self) -> Any:
        mod = llvm.parse_assembly(self.llvm_ir)
        mod.verify()
        return mod

    def export_object(self, path: str | os.PathLike[str]) -> Path:
        """Write a position-independent ELF object (``.o``) of the module to *path*.

        Runtime symbols (``tvms_exc_*``, ``tvms_descr_*``, ``tvms_parallel_for``, the shared
        error helpers ``tvms_raise``...) stay undefined in it; whoever links it must provide
        them (``Kernel.export_object`` defines the error helpers in the object).
        """
        with _jit_lock:
            tm = codegen_target_machine(self.opt_level, reloc="pic", target=self.target)
            mod = self._fresh_module()
            mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
            data = tm.emit_object(mod)
        out = Path(path)
        out.write_bytes(data)
        return out

    def export_library(self, path: str | os.PathLike[str]) -> Path:
        """Link the module into a shared library with the system C compiler (``cc -shared``).

        Raises :class:`CompileError` when no C compiler is available (llvmlite has no linker);
        use :meth:`export_object` or the on-disk object cache instead in that case.
        """
        cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not cc or not (os.path.isabs(cc) or shutil.which(cc)):
            raise CompileError(
                "export_library needs a C compiler ('cc') on PATH to link a shared library; "
                "none was found. Use export_object() and link it elsewhere."
            )
        out = Path(path)
        with tempfile.TemporaryDirectory(prefix="tvms-link-") as tmp:
            obj = self.export_object(Path(tmp) / "module.o")
            proc = subprocess.run(
                [cc, "-shared", "-o", str(out), str(obj), "-lm"],
                capture_output=True, text=True, check=False,
            )
        if proc.returncode != 0:
            raise CompileError(f"linking {out} with {cc} failed:\n{proc.stderr.strip()}")
        return out


# ----------------------------------------------------------------------------------------------
# compile_ir
# ----------------------------------------------------------------------------------------------

_EXPORTED_LINKAGES = ("external", "weak", "weak_odr", "common", "dllexport")


def _module_interface(mod: Any) -> tuple[list[str], list[str]]:
    """Return (exported symbol names, external symbol names) of a parsed module."""
    exported: list[str] = []
    externals: list[str] = []
    exported_linkages = {getattr(llvm.Linkage, n) for n in _EXPORTED_LINKAGES
                         if hasattr(llvm.Linkage, n)}
    for value in itertools.chain(mod.functions, mod.global_variables):
        name = value.name
        if not name or name.startswith("llvm."):
            continue
        if value.is_declaration:
            externals.append(name)
        elif value.linkage in exported_linkages:
            exported.append(name)
    return exported, externals


_process_handle: Any = None


def _process_has_symbol(name: str) -> bool:
    """True when *name* resolves from the process (what LLJIT's add_current_process sees)."""
    global _process_handle
    if llvm.address_of_symbol(name) is not None:
        return True
    if _process_handle is None:
        _process_handle = ctypes.CDLL(None)  # dlsym(RTLD_DEFAULT)-style global lookup
    try:
        _process_handle[name]
    except AttributeError:
        return False
    return True


def _bind_symbols(
    externals: list[str], explicit: Mapping[str, int]
) -> dict[str, int]:
    """Addresses to import for *externals*; raise CompileError for names nobody can provide."""
    imports: dict[str, int] = {}
    missing: list[str] = []
    for name in externals:
        addr = explicit.get(name)
        if addr is None:
            addr = resolve_runtime_symbol(name)
        if addr is not None:
            imports[name] = int(addr)
        elif not _process_has_symbol(name):
            missing.append(name)
    if missing:
        raise CompileError(
            "unresolved external symbol(s): " + ", ".join(sorted(missing))
            + " (not in symbols=, not a tvmscript runtime symbol, not found in the process)"
        )
    return imports


def _link(
    name: str, obj: bytes, exports: list[str], imports: Mapping[str, int]
) -> tuple[Any, dict[str, int]]:
    jit = _get_jit()
    builder = llvm.JITLibraryBuilder().add_object_img(obj).add_current_process()
    for sym, addr in imports.items():
        builder.import_symbol(sym, addr)
    for sym in exports:
        builder.export_symbol(sym)
    lib_name = f"{name}#{next(_lib_counter)}"
    try:
        tracker = builder.link(jit, lib_name)
    except RuntimeError as exc:
        raise CompileError(f"linking {name!r} failed: {exc}") from None
    return tracker, {sym: int(tracker[sym]) for sym in exports}


@contextlib.contextmanager
def _no_phase(name: str) -> Iterator[None]:
    yield


def compile_ir(
    ir_text: str,
    *,
    opt_level: int = 3,
    name: str = "kernel",
    cache: bool | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    fastmath: bool = False,
    symbols: Mapping[str, int] | None = None,
    target: Target | None = None,
    phase: Callable[[str], contextlib.AbstractContextManager[None]] | None = None,
    codegen_opt_level: int | None = None,
) -> CompiledLibrary:
    """Compile LLVM IR text for ``target`` (default: the host CPU) and load it; return a
    :class:`CompiledLibrary`. The caller makes sure the host can run the target's code
    (:meth:`lowering.target.Target.missing_on_host`).

    * Bad IR raises :class:`CompileError` carrying LLVM's parse/verifier message.
    * ``opt_level`` 0-3 selects the ``default<On>`` pipeline and the codegen level.
    * ``fastmath`` puts the ``fast`` flag on every FP instruction before optimising.
    * ``symbols`` binds extra external globals/functions (name -> address) at load time.
    * ``cache`` (``None`` = decided by the environment, see :func:`cache_enabled`) stores the
      object code in ``cache_dir`` (default :func:`default_cache_dir`) keyed by the sha256 of
      the IR text, llvmlite/LLVM versions, CPU name and features, opt level and fastmath; a warm
      hit loads the object without running any LLVM optimisation or code generation.
    * ``codegen_opt_level`` (default ``opt_level``) is the machine-code generator's level
      alone: 0 selects LLVM's fast instruction selection and register allocation, several
      times quicker for code whose speed does not matter (the thread pool's).
    * ``phase(name)`` (optional) is entered around each LLVM step: ``llvm-parse``,
      ``llvm-optimize``, ``llvm-codegen`` (machine code), ``llvm-link`` (progress, timing).
    """
    step = phase if phase is not None else _no_phase
    if not isinstance(ir_text, str):
        raise TypeError(f"ir_text must be str, got {type(ir_text).__name__}")
    explicit = dict(symbols or {})
    use_cache = cache_enabled(cache)
    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    emit_level = opt_level if codegen_opt_level is None else codegen_opt_level
    key = _cache_key(ir_text, opt_level, fastmath, target)
    if emit_level != opt_level:
        key = hashlib.sha256(f"{key}/codegen{emit_level}".encode()).hexdigest()
    path = directory / f"{key}.tvmo" if use_cache else None

    with _jit_lock:
        if path is not None:
            hit = _read_cache(path)
            if hit is not None:
                header, obj, ir_z = hit
                imports = _bind_symbols(list(header["externals"]), explicit)
                try:
                    tracker, addrs = _link(name, obj, list(header["exports"]), imports)
                except CompileError:
                    _stats["cache_errors"] += 1  # stale/broken entry: fall through, recompile
                else:
                    _stats["cache_hits"] += 1
                    return CompiledLibrary(
                        name, tracker, addrs, obj, opt_level=opt_level, fastmath=fastmath,
                        from_cache=True, ir_compressed=ir_z,
                        externals=tuple(header["externals"]), target=target,
                    )

        ensure_initialized()
        tm = codegen_target_machine(emit_level, target=target)
        with step("llvm-parse"):
            mod = _parse_for(tm, ir_text, name)
        with step("llvm-optimize"):
            slp = slp_is_safe(ir_text)
            mod = optimize(mod, opt_level, fastmath=fastmath, target=target, slp=slp)
            if opt_level >= 2 and has_odd_vectors(str(mod)):
                # instruction selection of such modules has aborted the process
                mod = llvm.parse_assembly(ir_text)
                mod.name = name
                mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
                with without_interleaving():
                    mod = optimize(mod, opt_level, fastmath=fastmath, target=target, slp=slp)
                _stats["relaxed_optimizations"] += 1
        # Read the interface after optimisation: dead declarations are gone by then.
        exports, externals = _module_interface(mod)
        with step("llvm-codegen"):
            obj = tm.emit_object(mod)
        externals += [s for s in _IMPLICIT_LIBCALLS
                      if s.encode() in obj and s not in externals and s not in exports]
        imports = _bind_symbols(externals, explicit)
        with step("llvm-link"):
            tracker, addrs = _link(name, obj, exports, imports)
        _stats["cold_compiles"] += 1
        lib = CompiledLibrary(
            name, tracker, addrs, obj, opt_level=opt_level, fastmath=fastmath,
            from_cache=False, module=mod, externals=tuple(externals), target=target,
        )
        if path is not None:
            try:
                _write_cache(path, {"exports": exports, "externals": externals, "name": name},
                             obj, lib.llvm_ir)
                _stats["cache_writes"] += 1
            except OSError as exc:
                _stats["cache_errors"] += 1
                warnings.warn(f"tvmscript: could not write object cache {path}: {exc}",
                              RuntimeWarning, stacklevel=2)
        return lib


def _parse_for(tm: Any, ir_text: str, name: str) -> Any:
    """Parse and verify ``ir_text`` as a module for the target machine ``tm``."""
    try:
        mod = llvm.parse_assembly(ir_text)
    except RuntimeError as exc:
        raise CompileError(f"LLVM IR of {name!r} does not parse:\n{exc}") from None
    mod.name = name
    mod.triple, mod.data_layout = tm.triple, str(tm.target_data)
    try:
        mod.verify()
    except RuntimeError as exc:
        raise CompileError(f"LLVM IR of {name!r} is invalid:\n{exc}") from None
    return mod


def warm_codegen(ir_text: str, opt_level: int = 3) -> None:
    """Optimise ``ir_text`` and generate its machine code for the host, then drop it: LLVM
    builds its pass pipelines, instruction selection and scheduling tables on first use (a
    first small kernel's optimisation and machine code took about 25 ms more than a second
    one's on the Zen 2 host), which the prewarm thread pays with this instead of a program's
    first build. Nothing is linked, cached or counted."""
    with _jit_lock:
        ensure_initialized()
        tm = codegen_target_machine(opt_level)
        mod = _parse_for(tm, ir_text, "warm-up")
        run_pipeline(mod, opt_level, slp=slp_is_safe(ir_text))
        tm.emit_object(mod)


def load_object(
    obj: bytes,
    exports: list[str] | tuple[str, ...],
    externals: list[str] | tuple[str, ...],
    *,
    name: str = "kernel",
    opt_level: int = 3,
    fastmath: bool = False,
    symbols: Mapping[str, int] | None = None,
    ir_compressed: bytes | None = None,
    target: Target | None = None,
) -> CompiledLibrary:
    """Load object code produced earlier by :func:`compile_ir` (``lib.object_bytes``).

    ``exports``/``externals`` are ``lib.symbols``/``lib.externals`` of the library that produced
    it; externals are bound exactly as in :func:`compile_ir` (no LLVM optimisation or codegen
    runs).  ``ir_compressed`` (zlib of the optimised IR) backs ``llvm_ir``/``asm``; without it
    those raise ``ValueError``.  Raises :class:`CompileError` when linking fails.
    """
    with _jit_lock:
        imports = _bind_symbols(list(externals), dict(symbols or {}))
        tracker, addrs = _link(name, obj, list(exports), imports)
        _stats["cache_hits"] += 1
        return CompiledLibrary(
            name, tracker, addrs, obj, opt_level=opt_level, fastmath=fastmath, from_cache=True,
            ir_compressed=ir_compressed if ir_compressed is not None else zlib.compress(b""),
            externals=tuple(externals), target=target,
        )


def write_cache_file(path: Path, header: dict[str, Any], obj: bytes, ir: str) -> None:
    """Atomically write a cache entry (JSON-able header, object bytes, IR text) to *path*."""
    _write_cache(path, header, obj, ir)


def read_cache_file(path: Path) -> tuple[dict[str, Any], bytes, bytes] | None:
    """Read a :func:`write_cache_file` entry: (header, object, zlib IR), or None if absent/bad."""
    return _read_cache(path)
