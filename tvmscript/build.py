"""``tvmscript.build``: lower, generate LLVM IR, JIT-compile and wrap as Python callables.

A built kernel is called like the function: numpy arrays (or any buffer-protocol object)
for buffer parameters, Python numbers for scalars. The call goes straight to a generated
CPython fast-call entry point (no Python frame in between), which checks the arguments in
generated code.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

import lowering
from backend.codegen import CodegenOptions, generate
from backend.interp import make_interp_kernel
from backend.runtime import (
    BufferParam,
    CompiledLibrary,
    EntrySpec,
    ScalarParam,
    compile_ir,
    entry_wrapper_ir,
    make_builtin,
)
from irbuilder.ir import IRModule, PrimFunc, structural_equal, structural_hash

__all__ = ["Kernel", "KernelModule", "build", "clear_build_cache"]

SourceKind = Literal["tir", "ll", "asm"]
_CACHE_SIZE = 64
_cache: OrderedDict[tuple[Any, ...], tuple[PrimFunc | IRModule, Any]] = OrderedDict()
_cache_lock = threading.Lock()


class Kernel:
    """A compiled kernel: call it like the function; inspect it with :meth:`get_source`.

    Calling goes directly to the generated native entry point: every instance gets its own
    subclass whose ``__call__`` *is* that builtin.
    """

    __slots__ = ("_library", "entry", "func", "lowered", "name")

    entry: Callable[..., Any]

    def __new__(
        cls, func: PrimFunc, lowered: PrimFunc, library: CompiledLibrary | None,
        entry: Callable[..., Any],
    ) -> Kernel:
        subclass = type(cls.__name__, (cls,), {"__slots__": (), "__call__": entry})
        return super().__new__(subclass)

    def __init__(
        self, func: PrimFunc, lowered: PrimFunc, library: CompiledLibrary | None,
        entry: Callable[..., Any],
    ) -> None:
        self.func = func
        self.lowered = lowered
        self._library = library
        self.entry = entry
        self.name = func.name

    if TYPE_CHECKING:  # the real __call__ is the builtin set on each instance's class

        def __call__(self, *args: Any) -> Any: ...

    def get_source(self, kind: SourceKind = "tir") -> str:
        """The lowered TVMScript (``"tir"``), LLVM IR (``"ll"``) or assembly (``"asm"``)."""
        if kind == "tir":
            return self.lowered.script()
        if self._library is None:
            raise ValueError(f"kernel {self.name!r} was not compiled to machine code")
        if kind == "ll":
            return str(self._library.llvm_ir)
        if kind == "asm":
            return str(self._library.asm)
        raise ValueError(f"unknown source kind {kind!r}; expected 'tir', 'll' or 'asm'")

    def export_object(self, path: str) -> None:
        """Write the kernel's object file (position independent) to ``path``."""
        if self._library is None:
            raise ValueError(f"kernel {self.name!r} was not compiled to machine code")
        self._library.export_object(path)

    def export_library(self, path: str) -> None:
        """Link the kernel into a shared library at ``path`` (needs a system ``cc``)."""
        if self._library is None:
            raise ValueError(f"kernel {self.name!r} was not compiled to machine code")
        self._library.export_library(path)

    def __repr__(self) -> str:
        params = ", ".join(p.name for p in self.func.params)
        return f"<tvmscript.Kernel {self.name}({params})>"


class KernelModule:
    """The kernels of a built IRModule, as attributes and by ``module["name"]``."""

    def __init__(self, kernels: dict[str, Kernel], library: CompiledLibrary | None) -> None:
        self._kernels = kernels
        self._library = library
        for name, kernel in kernels.items():
            setattr(self, name, kernel)

    def __getitem__(self, name: str) -> Kernel:
        return self._kernels[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._kernels)

    def __len__(self) -> int:
        return len(self._kernels)

    def get_source(self, kind: SourceKind = "ll") -> str:
        """LLVM IR or assembly of the whole module; ``"tir"`` gives every lowered function."""
        if kind == "tir":
            return "\n\n".join(k.get_source("tir") for k in self._kernels.values())
        if self._library is None:
            raise ValueError("module was not compiled to machine code")
        return str(self._library.llvm_ir if kind == "ll" else self._library.asm)


def _entry_spec(func: PrimFunc) -> EntrySpec:
    params: list[BufferParam | ScalarParam] = []
    used: set[str] = set()
    for param in func.params:
        buffer = func.buffer_map.get(param)
        name = buffer.name if buffer is not None else param.name
        if not name.isidentifier() or name in used:
            name = param.name if param.name not in used else f"arg{len(params)}"
        used.add(name)
        if buffer is not None:
            params.append(BufferParam(name, str(buffer.dtype)))
        elif param.dtype.is_handle:
            raise TypeError(
                f"parameter {param.name!r} of {func.name!r} is a raw handle without a buffer; "
                "declare it with T.Buffer or T.match_buffer"
            )
        else:
            params.append(ScalarParam(name, str(param.dtype)))
    return EntrySpec(func.name, params)


def _cache_key(ir: PrimFunc | IRModule, target: str, options: tuple[Any, ...]) -> tuple[Any, ...]:
    return (structural_hash(ir), target, options)


def _cached(key: tuple[Any, ...], ir: PrimFunc | IRModule) -> Any:
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and structural_equal(hit[0], ir):
            _cache.move_to_end(key)
            return hit[1]
    return None


def _remember(key: tuple[Any, ...], ir: PrimFunc | IRModule, result: Any) -> None:
    with _cache_lock:
        _cache[key] = (ir, result)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)


def clear_build_cache() -> None:
    """Forget every kernel kept by the in-process build cache (their code is freed when unused)."""
    with _cache_lock:
        _cache.clear()


def build(
    func_or_module: PrimFunc | IRModule,
    target: str = "llvm",
    opt_level: int = 3,
    *,
    fastmath: bool = False,
    cache: bool | None = None,
    verify: bool = False,
) -> Any:
    """Compile a PrimFunc (to a :class:`Kernel`) or an IRModule (to a :class:`KernelModule`).

    ``target="llvm"`` JIT-compiles for the host CPU; ``target="interp"`` runs the IR with the
    reference interpreter. ``opt_level`` drives both our passes and LLVM's pipeline;
    ``fastmath`` allows reassociation (vectorized reductions); ``cache=True`` (or the
    ``TVMSCRIPT_CACHE`` environment variable) keeps object code on disk so a later process
    skips LLVM; ``verify`` runs the well-formedness verifier after every pass.
    """
    if not isinstance(func_or_module, (PrimFunc, IRModule)):
        raise TypeError(
            f"build() expects a PrimFunc or IRModule, got {type(func_or_module).__name__}"
        )
    if target == "interp":
        if isinstance(func_or_module, IRModule):
            return {name: make_interp_kernel(f) for name, f in func_or_module.items()}
        return make_interp_kernel(func_or_module)
    if target != "llvm":
        raise ValueError(f"unknown target {target!r}; expected 'llvm' or 'interp'")
    if not 0 <= opt_level <= 3:
        raise ValueError(f"opt_level must be 0..3, got {opt_level}")
    options = (opt_level, fastmath, verify)
    key = _cache_key(func_or_module, target, options)
    hit = _cached(key, func_or_module)
    if hit is not None:
        return hit
    result = _build_llvm(func_or_module, opt_level, fastmath, cache, verify)
    _remember(key, func_or_module, result)
    return result


def _build_llvm(
    ir: PrimFunc | IRModule, opt_level: int, fastmath: bool, cache: bool | None, verify: bool
) -> Any:
    funcs = [ir] if isinstance(ir, PrimFunc) else [f for _, f in ir.items()]
    lowered = [lowering.lower(f, opt_level=opt_level, verify_each=verify) for f in funcs]
    result = generate(lowered, CodegenOptions(fastmath=fastmath))
    specs = [_entry_spec(f) for f in lowered]
    wrappers = [entry_wrapper_ir(s, f.name, with_prelude=False) for s, f in
                zip(specs, lowered)]
    text = result.text + "\n" + "\n".join(wrappers)
    name = funcs[0].name if isinstance(ir, PrimFunc) else "module"
    library = compile_ir(text, opt_level=opt_level, name=name, cache=cache)
    kernels = {
        f.name: Kernel(f, low, library, make_builtin(library, spec, f.name))
        for f, low, spec in zip(funcs, lowered, specs)
    }
    if isinstance(ir, PrimFunc):
        return kernels[ir.name]
    return KernelModule(kernels, library)
