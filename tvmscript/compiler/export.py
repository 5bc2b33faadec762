"""Exported objects and libraries (``Kernel.export_object``/``export_library``).

The C header written beside a library is :mod:`backend.abi.c_header`.

Every exported kernel has two entry points:

* ``int32_t name(...)`` -- the native ABI of ARCHITECTURE.md: one argument per PrimFunc
  parameter; a buffer is the ``PyObject*`` of an exact ``numpy.ndarray`` (the kernel checks
  dtype, ndim, shape, strides and writability itself), a scalar its C type. It returns 0, or
  nonzero with a Python exception set (GIL held). ``name__py`` is the ``METH_FASTCALL``
  entry. These need the tvmscript runtime symbols (``tvms_exc_*``, ``tvms_descr_*``,
  ``tvms_parallel_for``, ...) and CPython: the object references them as *weak* undefined
  symbols, so a process without them can still link and load the library (calling these
  entries there is undefined behaviour).
* ``int32_t name_c(...)`` -- plain C (see :mod:`lowering.abi.c_entry`): a pointer per buffer
  (C-contiguous, row-major, ``const`` when only read), an ``int64_t`` per symbolic shape
  variable (once each, right after the first buffer using it), scalars by value. Returns 0
  or a ``TVMS_ERR_*`` code; ``name_c_last_error()`` gives the calling thread's last message.
  No Python, no GIL; parallel loops run serially; the ``tvms_*`` symbols are not needed.

A kernel whose body uses a buffer handle itself (e.g. passes it to another kernel) has no C
entry; the header says why. The C entry is lowered at export time with the kernel's build
options and the :class:`~lowering.PassContext` active during the export.

An export is compiled for a :class:`~lowering.target.Target`: the build's by default (the
JIT's optimised IR is reused), or any other x86-64 CPU given as ``target=`` (cross-compiling:
the kernels are lowered and generated again for it; nothing is run here, so the host need
not have the target's features).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import llvmlite.binding as llvm

from backend.abi.c_entry import LAST_ERROR_SUFFIX, generate_c_entries
from backend.abi.c_header import write_header
from backend.abi.pyentry import EntrySpec, entry_wrapper_ir
from backend.abi.shared_helpers import link_definitions
from backend.codegen import CodegenOptions, generate
from backend.runtime import CompiledLibrary, CompileError
from backend.runtime.target import codegen_target_machine, optimize
from irbuilder.ir import PrimFunc
from lowering import PassContext
from lowering.abi.c_entry import CEntry, CEntryError, make_c_entry
from lowering.target import Target, TargetLike, as_target

from .options import BuildOptions, lower_for_build

__all__ = [
    "C_ENTRY_SUFFIX",
    "ExportedKernel",
    "ExportPlan",
    "export_library",
    "export_object",
    "plan_export",
]

C_ENTRY_SUFFIX = "_c"
"""The C entry of kernel ``f`` is ``f_c``."""

# Undefined symbols only a CPython process running tvmscript provides: weak in exports.
_PYTHON_SYMBOL = re.compile(r"^(_?Py|tvms_)")


class ExportedKernel(Protocol):
    """What an export needs of a built kernel (``tvmscript.Kernel``)."""

    @property
    def name(self) -> str: ...
    @property
    def func(self) -> PrimFunc: ...
    @property
    def spec(self) -> EntrySpec | None: ...
    @property
    def options(self) -> BuildOptions: ...


@dataclass(frozen=True)
class ExportPlan:
    """The kernels of one export: Python-ABI specs, C entries, and why some have none."""

    kernels: tuple[tuple[str, EntrySpec], ...]
    c_entries: tuple[CEntry, ...]
    skipped: dict[str, str]
    """Kernel name -> why it has no C entry."""


def plan_export(kernels: Sequence[ExportedKernel], target: Target | None = None) -> ExportPlan:
    """Lower every kernel's C entry (``insert_entry_checks`` disabled) for ``target`` (default: each
    kernel's build target); see the module docstring."""
    names = {k.name for k in kernels}
    outer = PassContext.current()
    entries: list[CEntry] = []
    skipped: dict[str, str] = {}
    for kernel in kernels:
        ctx = PassContext(
            opt_level=outer.opt_level,
            disabled_passes=outer.disabled_passes | {"insert_entry_checks"},
            config=outer.config,
            instruments=outer.instruments,
        )
        options = kernel.options
        if target is not None:
            options = dataclasses.replace(options, target=target)
        with ctx:
            lowered = lower_for_build(kernel.func, options)
        try:
            entry = make_c_entry(lowered, names, C_ENTRY_SUFFIX)
        except CEntryError as exc:
            skipped[kernel.name] = str(exc)
            continue
        clash = {entry.name, entry.name + LAST_ERROR_SUFFIX} & names
        if clash:
            raise ValueError(
                f"cannot export: the C entry of kernel {kernel.name!r} would be named "
                f"{sorted(clash)[0]!r}, which is another kernel of the module; rename it"
            )
        entries.append(entry)
    specs = tuple((k.name, k.spec) for k in kernels if k.spec is not None)
    return ExportPlan(specs, tuple(entries), skipped)


def _python_abi_module(
    library: CompiledLibrary,
    kernels: Sequence[ExportedKernel],
    options: BuildOptions,
    target: Target | None,
) -> object:
    """The optimised LLVM module of the Python-ABI kernels for ``target``: the library's own
    (built for it) or, for another target, lowered and generated again."""
    if target is None:
        ir = library.llvm_ir
        if not ir.strip():
            raise ValueError(
                f"library {library.name!r} has no LLVM IR to export (loaded without it)"
            )
        return llvm.parse_assembly(ir)
    lowered = [
        lower_for_build(k.func, dataclasses.replace(k.options, target=target)) for k in kernels
    ]
    result = generate(
        lowered,
        options.codegen_options(target),
    )
    wrappers = [
        entry_wrapper_ir(k.spec, k.name, with_prelude=False) for k in kernels if k.spec is not None
    ]
    module = llvm.parse_assembly(result.text + "\n" + "\n".join(wrappers))
    module.verify()
    return optimize(module, options.opt_level, target=target)


def _export_target(
    library: CompiledLibrary, target: TargetLike | None
) -> tuple[Target | None, Target | None]:
    """(the target objects are compiled for, the target to rebuild for or None to reuse the
    library's code)."""
    built_for = library.target
    if target is None:
        return built_for, None
    chosen = as_target(target)
    if chosen == (built_for or Target.host()):
        return built_for, None
    return chosen, chosen


def _object_code(
    library: CompiledLibrary,
    kernels: Sequence[ExportedKernel],
    target: TargetLike | None = None,
) -> tuple[bytes, ExportPlan]:
    """One PIC object: the Python-ABI kernels (weak runtime refs) + the C entries."""
    options = _options_of(kernels)
    machine, rebuild = _export_target(library, target)
    plan = plan_export(kernels, machine)
    module: Any = _python_abi_module(library, kernels, options, rebuild)
    link_definitions(module)  # the error helpers a JIT build binds to this process' copy
    if plan.c_entries:
        text = generate_c_entries(
            [e.func for e in plan.c_entries],
            CodegenOptions(
                fastmath=options.fastmath, fp_contract=options.fp_contract, target=machine
            ),
        )
        c_module = llvm.parse_assembly(text)
        c_module.verify()
        # fastmath flags are already on the instructions (codegen), as in build().
        module.link_in(optimize(c_module, options.opt_level, target=machine))
    for value in (*module.functions, *module.global_variables):
        if value.is_declaration and _PYTHON_SYMBOL.match(value.name):
            value.linkage = llvm.Linkage.external_weak
    tm = codegen_target_machine(options.opt_level, reloc="pic", target=machine)
    module.triple, module.data_layout = tm.triple, str(tm.target_data)
    module.verify()
    return bytes(tm.emit_object(module)), plan


def _options_of(kernels: Sequence[ExportedKernel]) -> BuildOptions:
    return kernels[0].options if kernels else BuildOptions()


def export_object(
    library: CompiledLibrary,
    kernels: Sequence[ExportedKernel],
    path: str | os.PathLike[str],
    target: TargetLike | None = None,
) -> Path:
    """Write the ELF object of ``kernels`` (both entry points each) to ``path``, compiled for
    ``target`` (default: the build's)."""
    obj, _plan = _object_code(library, kernels, target)
    out = Path(path)
    out.write_bytes(obj)
    return out


def _linker() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc or not (os.path.isabs(cc) or shutil.which(cc)):
        raise CompileError(
            "export_library needs a C compiler ('cc') on PATH to link a shared library; "
            "none was found. Use export_object() and link it elsewhere."
        )
    return cc


def export_library(
    library: CompiledLibrary,
    kernels: Sequence[ExportedKernel],
    path: str | os.PathLike[str],
    target: TargetLike | None = None,
) -> Path:
    """Link ``kernels`` into a shared library at ``path`` (needs ``cc``) plus ``<stem>.h``,
    compiled for ``target`` (default: the build's)."""
    cc = _linker()
    obj, plan = _object_code(library, kernels, target)
    out = Path(path)
    libs = ["-lm"]
    if b"_ZGV" in obj:
        libs.insert(0, "-lmvec")  # the Python-ABI kernels' SIMD math (glibc libmvec)
    with tempfile.TemporaryDirectory(prefix="tvms-link-") as tmp:
        obj_path = Path(tmp) / "module.o"
        obj_path.write_bytes(obj)
        proc = subprocess.run(
            [cc, "-shared", "-o", str(out), str(obj_path), *libs],
            capture_output=True,
            text=True,
            check=False,
        )
    if proc.returncode != 0:
        raise CompileError(f"linking {out} with {cc} failed:\n{proc.stderr.strip()}")
    write_header(out.with_suffix(".h"), out.stem, plan.kernels, plan.c_entries, plan.skipped)
    return out
