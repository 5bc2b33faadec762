"""``tvmscript.build``: lower, generate LLVM IR, JIT-compile and wrap as Python callables.

A built kernel is called like the function: numpy arrays (or any buffer-protocol object)
for buffer parameters, Python numbers for scalars. The call goes straight to a generated
CPython fast-call entry point (no Python frame in between), which checks the arguments in
generated code.

Entry-point contract (checked in generated code; errors name the parameter):

* argument count and scalar types/ranges -> ``TypeError``/``OverflowError``;
* buffer ndim and dtype -> ``TypeError``; shape (symbolic dims are bound from the first
  buffer that has them and checked against later ones) -> ``ValueError``;
* layout: buffers are indexed row-major, so an array that is not C-contiguous is copied when
  the kernel only *reads* it, and rejected with ``ValueError`` when the kernel writes it (a
  copy would silently lose the writes); written buffers must be writable (``ValueError``);
* alignment: nothing beyond the element alignment numpy guarantees is ever assumed;
* overlapping arguments get sequential semantics (no ``noalias`` is promised).

Calls between kernels of one module: ``T.call_extern("int32", "<kernel>", A, B, n)`` where
``A``/``B`` are the caller's buffer *parameters* (handles: whole arrays are passed, checked by
the callee's entry checks) and scalars are passed by value; a failure in the callee
propagates its exception.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from backend.abi.call_args import CallBinder
from backend.abi.pyentry import (
    BufferParam,
    EntrySpec,
    ScalarParam,
    entry_wrapper_ir,
    make_builtin,
)
from backend.alloc_counters import COUNTER_NAMES
from backend.runtime import CompiledLibrary, cache_enabled, compile_ir, load_object
from backend.runtime.engine import cache_scope
from irbuilder.ir import IRModule, PrimFunc, structural_equal, structural_hash
from irbuilder.ir.functor import room_for_deep_ir
from lowering import PassContext
from lowering.abi.boundary import allocate_outputs, num_outputs, output_specs
from lowering.analysis import buffer_accesses, free_vars
from lowering.checks.verifier import ENTRY_CHECKED_ATTR
from lowering.target import TargetLike
from lowering.transforms.scalar_return import has_scalar_return

from .cache import build_cache_path, load_build, save_build
from .options import (
    BuildOptions,
    check_runnable,
    lower_for_build,
    parse_options,
    parse_target,
)
from .progress import BuildProgress, progress_requested

__all__ = ["Kernel", "KernelModule", "build", "build_cache_info", "clear_build_cache"]

SourceKind = Literal["tir", "ll", "asm"]
_CACHE_SIZE = 64
_cache: OrderedDict[tuple[Any, ...], tuple[PrimFunc | IRModule, Any]] = OrderedDict()
_cache_lock = threading.Lock()
_cache_stats = {"memory_hits": 0, "disk_hits": 0, "compiles": 0}



class Kernel:
    """A compiled kernel: call it like the function; inspect it with :meth:`get_source`.

    Calling goes directly to the generated native entry point: every instance gets its own
    subclass whose ``__call__`` *is* that builtin.
    """

    __slots__ = (
        "_counters",
        "_library",
        "_lowered",
        "_tir",
        "entry",
        "from_cache",
        "func",
        "name",
        "options",
        "spec",
    )

    entry: Callable[..., Any]

    def __new__(cls, *args: Any, **kwargs: Any) -> Kernel:
        subclass = type(cls.__name__, (cls,), {"__slots__": (), "__call__": args[4]})
        return super().__new__(subclass)

    def __init__(
        self,
        func: PrimFunc,
        lowered: PrimFunc | str,
        library: CompiledLibrary | None,
        spec: EntrySpec | None,
        entry: Callable[..., Any],
        options: BuildOptions | None = None,
        counters: Any = None,
    ) -> None:
        self.func = func
        """The PrimFunc as given to ``build``."""
        self._lowered = lowered if isinstance(lowered, PrimFunc) else None
        self._tir = lowered if isinstance(lowered, str) else None
        self._library = library
        self.spec = spec
        """The Python-visible signature (parameter names and dtypes)."""
        self.entry = entry
        """The native entry point (a builtin function)."""
        self.name = func.name
        self.options = options or BuildOptions()
        self._counters = counters
        self.from_cache = library.from_cache if library is not None else False
        """True when the machine code was loaded from the on-disk cache."""

    if TYPE_CHECKING:  # the real __call__ is the builtin set on each instance's class

        def __call__(self, *args: Any) -> Any: ...

    @property
    def lowered(self) -> PrimFunc | None:
        """The lowered PrimFunc (None when the kernel was loaded from the disk cache)."""
        return self._lowered

    @property
    def library(self) -> CompiledLibrary | None:
        """The loaded machine code (shared by every kernel of a module)."""
        return self._library

    def get_source(self, kind: SourceKind = "tir") -> str:
        """The lowered TVMScript (``"tir"``), LLVM IR (``"ll"``) or assembly (``"asm"``)."""
        if kind == "tir":
            if self._tir is None:
                assert self._lowered is not None
                self._tir = self._lowered.script()
            return self._tir
        if kind not in ("ll", "asm"):
            raise ValueError(f"unknown source kind {kind!r}; expected 'tir', 'll' or 'asm'")
        library = self._require_library()
        return str(library.llvm_ir if kind == "ll" else library.asm)

    def _require_library(self) -> CompiledLibrary:
        if self._library is None:
            raise ValueError(f"kernel {self.name!r} was not compiled to machine code")
        return self._library

    def allocation_stats(self) -> dict[str, int]:
        """Heap allocations made by this kernel's library.

        ``live``/``live_bytes``: not yet freed (0 after every call returns, including calls
        that failed an assertion); ``total``/``total_bytes``: every allocation so far;
        ``peak``/``peak_bytes``: the most live at once. Stack allocations (small constant
        sizes) are not counted. Kernels of one module share their library's counters.
        Needs ``count_allocations=True`` (the default); see :meth:`reset_allocation_stats`.
        """
        if self._counters is None:
            raise ValueError(
                f"kernel {self.name!r} was built without count_allocations; "
                "rebuild with build(..., count_allocations=True)"
            )
        c = self._counters
        return {
            "live": int(c[0]),
            "total": int(c[1]),
            "live_bytes": int(c[2]),
            "total_bytes": int(c[3]),
            "peak_bytes": int(c[4]),
            "peak": int(c[5]),
        }

    def reset_allocation_stats(self) -> None:
        """Zero the totals and peaks (live counts are kept: they describe memory in use)."""
        if self._counters is None:
            raise ValueError(f"kernel {self.name!r} was built without count_allocations")
        c = self._counters
        c[1] = c[3] = 0
        c[4], c[5] = c[2], c[0]

    def export_object(self, path: str | Path, target: TargetLike | None = None) -> Path:
        """Write a position-independent ELF object to ``path``: the kernel with the native ABI
        (``PyObject*`` ndarrays; tvmscript runtime symbols left weak undefined) and its plain-C
        entry ``<name>_c`` (see :mod:`tvmscript.compiler.export`). ``target`` (default: the
        build's) may be any CPU: the object is compiled for it, never run here."""
        from . import export

        return export.export_object(self._require_library(), [self], path, target)

    def export_library(self, path: str | Path, target: TargetLike | None = None) -> Path:
        """Link a shared library at ``path`` (needs ``cc``) and write ``<stem>.h`` beside it.

        The header declares the kernel's native-ABI symbol (ndarray ``PyObject*`` arguments,
        needs CPython) and its plain-C entry ``<name>_c`` (raw pointers, int64 extents,
        error code + ``<name>_c_last_error()``); see :mod:`tvmscript.compiler.export`.
        ``target`` as for :meth:`export_object`.
        """
        from . import export

        return export.export_library(self._require_library(), [self], path, target)

    def __repr__(self) -> str:
        params = ", ".join(p.name for p in self.func.params)
        return f"<tvmscript.Kernel {self.name}({params})>"


class KernelModule:
    """The kernels of a built IRModule, as attributes and by ``module["name"]``."""

    def __init__(
        self,
        kernels: dict[str, Kernel],
        library: CompiledLibrary | None,
        internal: tuple[str, ...] = (),
    ) -> None:
        self._kernels = kernels
        self._library = library
        self._internal = internal
        for name, kernel in kernels.items():
            setattr(self, name, kernel)

    def __getitem__(self, name: str) -> Kernel:
        return self._kernels[name]

    def __getattr__(self, name: str) -> Kernel:
        # Only reached for names that are not kernels (kernels are instance attributes).
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._internal:
            raise AttributeError(
                f"{name!r} is a subroutine the module's kernels call (it is private or takes "
                "a data pointer, T.handle), not callable from Python"
            )
        raise AttributeError(f"module has no kernel {name!r}; it has {', '.join(self._kernels)}")

    def __iter__(self) -> Iterator[str]:
        return iter(self._kernels)

    def __len__(self) -> int:
        return len(self._kernels)

    def __contains__(self, name: object) -> bool:
        return name in self._kernels

    def get_source(self, kind: SourceKind = "ll") -> str:
        """LLVM IR or assembly of the whole module; ``"tir"`` gives every lowered function."""
        if kind == "tir":
            return "\n\n".join(k.get_source("tir") for k in self._kernels.values())
        if kind not in ("ll", "asm"):
            raise ValueError(f"unknown source kind {kind!r}; expected 'tir', 'll' or 'asm'")
        if self._library is None:
            raise ValueError("module was not compiled to machine code")
        return str(self._library.llvm_ir if kind == "ll" else self._library.asm)

    def export_object(self, path: str | Path, target: TargetLike | None = None) -> Path:
        """Write the module's object file (all kernels) to ``path``, compiled for ``target``
        (default: the build's)."""
        if self._library is None:
            raise ValueError("module was not compiled to machine code")
        kernels = list(self._kernels.values())
        from . import export

        return export.export_object(self._library, kernels, path, target)

    def export_library(self, path: str | Path, target: TargetLike | None = None) -> Path:
        """Link all kernels into one shared library at ``path`` plus ``<stem>.h`` beside it,
        compiled for ``target`` (default: the build's)."""
        if self._library is None:
            raise ValueError("module was not compiled to machine code")
        kernels = list(self._kernels.values())
        from . import export

        return export.export_library(self._library, kernels, path, target)

    def __repr__(self) -> str:
        return f"<tvmscript.KernelModule {', '.join(self._kernels)}>"


def _entry_spec(func: PrimFunc, options: BuildOptions, passed_on: set[int]) -> EntrySpec:
    params: list[BufferParam | ScalarParam] = []
    used: set[str] = set()
    accesses = buffer_accesses(func.body)
    for param in func.params:
        buffer = func.buffer_map.get(param)
        name = buffer.name if buffer is not None else param.name
        if not name.isidentifier() or name in used:
            name = (
                param.name
                if param.name not in used and param.name.isidentifier()
                else f"arg{len(params)}"
            )
        used.add(name)
        if buffer is not None:
            # Only buffers the kernel never writes and indexes row-major may be copied.
            written = accesses.stores_to(buffer.data)
            copy = (
                options.copy_noncontiguous_inputs
                and not buffer.strides
                and not written
                and id(param) not in passed_on
            )
            params.append(BufferParam(name, str(buffer.dtype), copy, written))
        elif param.dtype.is_handle:
            raise TypeError(
                f"parameter {param.name!r} of {func.name!r} is a raw handle without a buffer; "
                "declare it with T.Buffer or T.match_buffer"
            )
        else:
            params.append(ScalarParam(name, str(param.dtype)))
    return EntrySpec(func.name, params, release_gil=options.release_gil)


def _handles_in_body(func: PrimFunc) -> set[int]:
    """ids of buffer handles whose handle or data pointer the (unlowered) body uses
    directly, e.g. passes to another kernel that may write through them: such buffers must
    never be silently copied."""
    used = {id(v) for v in free_vars(func.body)}
    return {id(p) for p, b in func.buffer_map.items() if id(p) in used or id(b.data) in used}


def clear_build_cache() -> None:
    """Forget every kernel kept by the in-process build cache (their code is freed when unused)."""
    with _cache_lock:
        _cache.clear()


def build_cache_info() -> dict[str, int]:
    """Counters: in-memory hits, disk-cache hits and full compiles in this process."""
    with _cache_lock:
        return dict(_cache_stats, memory_entries=len(_cache))


def build(
    func_or_module: PrimFunc | IRModule,
    target: TargetLike = "llvm",
    opt_level: int = 3,
    **options: Any,
) -> Any:
    """Compile a PrimFunc (to a :class:`Kernel`) or an IRModule (to a :class:`KernelModule`).

    ``target="llvm"`` JIT-compiles for the host CPU; a :class:`~lowering.target.Target`, target
    string (``"llvm -mcpu=znver3"``) or dict for another CPU the host can run (a target whose
    features the host lacks raises ``ValueError`` naming them: export for it instead);
    ``target="interp"`` runs the IR with the reference interpreter. ``opt_level`` (0-3)
    drives both our passes and LLVM's pipeline.
    Options (unknown names raise ``TypeError``):

    * ``fastmath=False``: allow reassociation/contraction (vectorized float reductions);
    * ``fp_contract=True``: let LLVM fuse a multiply and an add of one expression into an FMA
      (one rounding instead of two, like C compilers' default); ``False`` rounds after every
      operation, bit-for-bit like numpy's separate ``*`` and ``+``;
    * ``cache=None``: keep the build on disk (``True``; ``None`` follows ``TVMSCRIPT_CACHE``
      / ``TVMSCRIPT_CACHE_DIR``) so a later process skips lowering, codegen and LLVM;
    * ``verify=False``: run the well-formedness verifier after every lowering pass;
    * ``bounds_check=False``: check every buffer index (IndexError),
      ``lowering.checks.bounds_check``;
    * ``release_gil=False``: release the GIL while the kernel runs;
    * ``count_allocations=True``: per-library heap allocation counters
      (:meth:`Kernel.allocation_stats`);
    * ``copy_noncontiguous_inputs=True``: copy non-contiguous arrays given for read-only
      buffers (written buffers are always rejected when not C-contiguous);
    * ``check_races=True``: refuse a ``T.parallel`` loop whose iterations may write an
      element another iteration writes or reads (``DiagnosticError`` at the access and the
      loop; see docs/race-check.md); a loop annotated ``{"tvmscript.allow_races": True}``
      is exempt.
    * ``strict_reductions=False``: keep block reductions (``T.init``/``T.axis.reduce``,
      ``T.sum``...) in source order instead of the fixed lane-split order of
      ``lowering.transforms.reduce_vectorize`` (docs/performance.md).
    * ``progress=None``: a build still running after a second reports its passes and LLVM
      phases on stderr (``None`` follows ``TVMSCRIPT_PROGRESS``); not part of the cache key.

    Threads are a process setting (``TVMSCRIPT_NUM_THREADS``,
    ``backend.runtime.set_num_threads``), not a build option. Structurally equal inputs built
    with equal options return the same cached object.
    """
    if not isinstance(func_or_module, (PrimFunc, IRModule)):
        raise TypeError(
            f"build() expects a PrimFunc or IRModule, got {type(func_or_module).__name__}"
        )
    room_for_deep_ir()
    report_progress = progress_requested(options.pop("progress", None))
    opts, cache = parse_options(opt_level, options)
    if isinstance(target, str) and target == "interp":
        from backend.interp import make_interp_kernel
        from lowering.cpu.prepare import prepare_for_cpu

        if isinstance(func_or_module, IRModule):
            functions = {name: prepare_for_cpu(f) for name, f in func_or_module.items()}
            # named as the compiled module names its kernels: by the exported symbol
            return {str(f.attrs.get("global_symbol", name)): make_interp_kernel(f, functions)
                    for name, f in functions.items()}
        return make_interp_kernel(prepare_for_cpu(func_or_module))
    if isinstance(target, str) and target.split()[:1] != ["llvm"]:
        raise ValueError(
            f"unknown target {target!r}; expected 'llvm', 'llvm -mcpu=...' or 'interp'"
        )
    machine = parse_target(target)
    check_runnable(machine)
    _refuse_unchecked_entry(func_or_module)
    opts = dataclasses.replace(opts, target=machine)
    target = "llvm"
    ir_hash = structural_hash(func_or_module)
    # Structural equality ignores function names, but they are the kernels' symbols.
    names = tuple(f.name for f in _functions(func_or_module))
    key = (ir_hash, names, target, opts.key())
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and structural_equal(hit[0], func_or_module):
            _cache.move_to_end(key)
            _cache_stats["memory_hits"] += 1
            return hit[1]
    use_disk = cache_enabled(cache)
    path = None
    if use_disk:
        kind = "func" if isinstance(func_or_module, PrimFunc) else "module"
        path = build_cache_path(kind, ir_hash, target, (names, *opts.key()))
    # The thread pool's library, compiled lazily when a parallel kernel is linked, follows
    # this build's cache switch.
    with cache_scope(use_disk):
        result = _load_cached(func_or_module, opts, path) if path is not None else None
        if result is None:
            result = _build_llvm(func_or_module, opts, use_disk, path, report_progress)
    with _cache_lock:
        _cache[key] = (func_or_module, result)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return result


def _refuse_unchecked_entry(ir: PrimFunc | IRModule) -> None:
    """The compiled entry trusts what ``insert_entry_checks`` verified (dtype, shape,
    strides): without it a wrong array argument would read or write out of bounds. A
    function already lowered through it (attr ``entry_checked``) carries its checks."""
    disabled = {name.replace("-", "_") for name in PassContext.current().disabled_passes}
    if "insert_entry_checks" not in disabled:
        return
    unchecked = [f.name for f in _functions(ir) if not f.attrs.get(ENTRY_CHECKED_ATTR)]
    if unchecked:
        raise ValueError(
            "build(): the pass insert_entry_checks cannot be disabled for a Python-callable "
            f"kernel ({', '.join(unchecked)}): the compiled code trusts the dtype, shape and "
            "strides it checks, so a wrong array would crash the process. export_library() "
            "writes a C entry without them (the C caller's contract)."
        )


def _functions(ir: PrimFunc | IRModule) -> list[PrimFunc]:
    """The functions to compile; a private function of a module (no ``global_symbol``) is
    named by its key in the module, which is what ``Module.f(...)`` calls. A call of a
    scalar function for its value is its returned expression
    (:func:`lowering.transforms.scalar_calls.inline_scalar_calls`)."""
    if isinstance(ir, PrimFunc):
        return [ir]
    from lowering.transforms.scalar_calls import inline_scalar_calls

    return [
        f if "global_symbol" in f.attrs else f.with_attr("global_symbol", name)
        for name, f in inline_scalar_calls(ir).items()
    ]


def _takes_pointer(func: PrimFunc) -> bool:
    return any(p.dtype.is_handle and p not in func.buffer_map for p in func.params)


def _subroutines(ir: PrimFunc | IRModule) -> tuple[str, ...]:
    """Functions of a module only its other kernels call (as TVM's internal subroutines):
    private ones, and those taking a data pointer (``T.handle("float32")``)."""
    if isinstance(ir, PrimFunc):
        return ()
    from lowering.transforms.scalar_calls import inline_scalar_calls

    # the module as compiled: with the copies made for statement calls (private ones)
    return tuple(
        name for name, f in inline_scalar_calls(ir).items()
        if "global_symbol" not in f.attrs or _takes_pointer(f)
    )


def _entry_functions(ir: PrimFunc | IRModule) -> list[PrimFunc]:
    """The functions that get a Python entry (all but :func:`_subroutines`)."""
    internal = _subroutines(ir)
    return [f for f in _functions(ir) if f.name not in internal]


def _new_counters(options: BuildOptions) -> tuple[Any, dict[str, int]]:
    if not options.count_allocations:
        return None, {}
    counters = (ctypes.c_int64 * len(COUNTER_NAMES))()
    base = ctypes.addressof(counters)
    return counters, {name: base + 8 * i for i, name in enumerate(COUNTER_NAMES)}


def _assemble(
    ir: PrimFunc | IRModule,
    library: CompiledLibrary,
    entries: Sequence[tuple[PrimFunc, PrimFunc | str, EntrySpec]],
    options: BuildOptions,
    counters: Any,
) -> Kernel | KernelModule:
    kernels = {}
    for func, low, spec in entries:
        kernel = Kernel(
            func, low, library, spec, make_builtin(library, spec, func.name), options, counters
        )
        plan = _output_plan(func, low)
        if plan is not None:
            call = _returning_call(kernel.entry, plan, [p.name for p in spec.params])
            type(kernel).__call__ = staticmethod(call)  # type: ignore[method-assign]
        kernels[func.name] = kernel
    if isinstance(ir, PrimFunc):
        return kernels[ir.name]
    return KernelModule(kernels, library, _subroutines(ir))


def _output_plan(func: PrimFunc, lowered: PrimFunc | str) -> PrimFunc | None:
    """The bufferized function whose trailing params are returned tensors (or the
    ``T.ret`` scalar's ``ret_value``), if any."""
    scalar = has_scalar_return(func)
    if "tensor_returns" not in func.attrs and not scalar:
        return None
    if isinstance(lowered, PrimFunc):
        source = lowered
    else:
        from lowering.transforms.bufferize import bufferize
        from lowering.transforms.scalar_return import lower_scalar_return

        source = bufferize(func)
        if scalar:
            source = lower_scalar_return(source)
    return source if num_outputs(source) > 0 else None


def _returning_call(
    entry: Callable[..., Any], func: PrimFunc, param_names: Sequence[str]
) -> Callable[..., Any]:
    """A call that allocates the returned tensors, runs the kernel and returns them."""
    output_specs(func)  # fail at build time, not per call, when a shape is not computable
    inputs = len(param_names) - num_outputs(func)
    bind = CallBinder(func.name, param_names[:inputs])

    if func.attrs.get("scalar_return"):
        (spec,) = output_specs(func)
        dtype = np.dtype(spec.dtype)

        def call_scalar(*args: Any, **kwargs: Any) -> Any:
            if kwargs or len(args) != inputs:
                args = tuple(bind(args, kwargs))
            slot = np.zeros(1, dtype)  # zero when no T.ret ran on the path taken
            entry(*args, slot)
            return slot[0].item()

        return call_scalar

    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != inputs:
            args = tuple(bind(args, kwargs))
        outputs = allocate_outputs(func, args)
        entry(*args, *outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return call


def _load_cached(
    ir: PrimFunc | IRModule, options: BuildOptions, path: Path
) -> Kernel | KernelModule | None:
    entry = load_build(path)
    if entry is None:
        return None
    funcs = _entry_functions(ir)
    if [k.spec.name for k in entry.kernels] != [f.name for f in funcs]:
        return None  # a hash collision or a stale entry: rebuild
    counters, symbols = _new_counters(options)
    try:
        library = load_object(
            entry.obj,
            entry.exports,
            entry.externals,
            name=entry.name,
            opt_level=options.opt_level,
            fastmath=options.fastmath,
            symbols=symbols,
            ir_compressed=entry.ir_compressed,
            target=options.target,
        )
    except RuntimeError:
        return None  # e.g. a symbol this process cannot provide: rebuild from source
    entries = [(f, k.tir, k.spec) for f, k in zip(funcs, entry.kernels)]
    with _cache_lock:
        _cache_stats["disk_hits"] += 1
    return _assemble(ir, library, entries, options, counters)


def module_text(
    ir: PrimFunc | IRModule, funcs: list[PrimFunc], lowered: list[PrimFunc],
    options: BuildOptions,
) -> tuple[str, list[PrimFunc], list[PrimFunc], list[EntrySpec]]:
    """The LLVM module of a build: the lowered functions' code and an entry wrapper for each
    one callable from Python (not a subroutine of the module). Returns the text and the
    callable functions (source and lowered) with their entry specs."""
    from backend.codegen import generate

    result = generate(lowered, options.codegen_options())
    internal = _subroutines(ir)
    callable_ = [(f, low) for f, low in zip(funcs, lowered) if f.name not in internal]
    funcs = [f for f, _ in callable_]
    lowered = [low for _, low in callable_]
    specs = [_entry_spec(f, options, _handles_in_body(src)) for f, src in zip(lowered, funcs)]
    wrappers = [entry_wrapper_ir(s, f.name, with_prelude=False) for s, f in zip(specs, lowered)]
    return result.text + "\n" + "\n".join(wrappers), funcs, lowered, specs


def _build_llvm(
    ir: PrimFunc | IRModule,
    options: BuildOptions,
    use_disk: bool,
    path: Path | None,
    report_progress: bool = False,
) -> Kernel | KernelModule:
    funcs = _functions(ir)
    name = funcs[0].name if isinstance(ir, PrimFunc) else "module"
    progress = BuildProgress(
        name, report=report_progress, instruments=PassContext.current().instruments
    )
    try:
        lowered = [lower_for_build(f, options, [progress]) for f in funcs]
        counters, symbols = _new_counters(options)
        with progress.phase("codegen"):
            text, funcs, lowered, specs = module_text(ir, funcs, lowered, options)
        library = compile_ir(
            # fastmath is already in the IR's instruction flags (codegen); compile_ir's flag
            # would add nnan/ninf everywhere.
            text,
            opt_level=options.opt_level,
            name=name,
            cache=use_disk,
            symbols=symbols,
            target=options.target,
            phase=progress.phase,
        )
    finally:
        progress.finish()
    with _cache_lock:
        _cache_stats["compiles"] += 1
    if path is not None:
        save_build(path, library, [(s, f.script()) for s, f in zip(specs, lowered)])
    entries: list[tuple[PrimFunc, PrimFunc | str, EntrySpec]] = list(zip(funcs, lowered, specs))
    return _assemble(ir, library, entries, options, counters)
