"""Exported objects and libraries (``Kernel.export_object``/``export_library``) and their C header.

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
from backend.abi.pyentry import BufferParam, EntrySpec, entry_wrapper_ir
from backend.codegen import CodegenOptions, ErrorKind, generate
from backend.runtime import CompiledLibrary, CompileError
from backend.runtime.target import codegen_target_machine, optimize
from irbuilder.ir import PrimFunc
from lowering import PassContext
from lowering.abi.c_entry import CEntry, CEntryError, CParam, make_c_entry
from lowering.target import Target, TargetLike, as_target

from .options import BuildOptions, lower_for_build

__all__ = [
    "C_ENTRY_SUFFIX",
    "C_TYPES",
    "ExportedKernel",
    "ExportPlan",
    "export_library",
    "export_object",
    "header_text",
    "plan_export",
    "write_header",
]

C_TYPES: dict[str, str] = {
    "bool": "_Bool",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float16": "_Float16", "float32": "float", "float64": "double",
}
"""C type of each scalar parameter dtype."""

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
    """Lower every kernel's C entry (``entry_checks`` disabled) for ``target`` (default: each
    kernel's build target); see the module docstring."""
    names = {k.name for k in kernels}
    outer = PassContext.current()
    entries: list[CEntry] = []
    skipped: dict[str, str] = {}
    for kernel in kernels:
        ctx = PassContext(
            opt_level=outer.opt_level,
            disabled_passes=outer.disabled_passes | {"entry_checks"},
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
            capture_output=True, text=True, check=False,
        )
    if proc.returncode != 0:
        raise CompileError(f"linking {out} with {cc} failed:\n{proc.stderr.strip()}")
    write_header(out.with_suffix(".h"), out.stem, plan.kernels, plan)
    return out


# ----------------------------------------------------------------------------------------------
# the header
# ----------------------------------------------------------------------------------------------

_ERROR_DOCS = {
    ErrorKind.ASSERTION: "a T.Assert / assert in the kernel failed",
    ErrorKind.TYPE: "TypeError-class check failed",
    ErrorKind.VALUE: "bad argument value (e.g. a negative extent)",
    ErrorKind.INDEX: "index out of bounds (kernels built with bounds_check=True)",
    ErrorKind.ZERO_DIVISION: "integer division or modulo by zero",
    ErrorKind.MEMORY: "out of memory",
    ErrorKind.RUNTIME: "other runtime error",
    ErrorKind.OVERFLOW: "signed integer division overflow (the minimum value divided by -1)",
}


def _error_codes() -> str:
    lines = ["#ifndef TVMS_ERROR_CODES", "#define TVMS_ERROR_CODES", "#define TVMS_OK 0"]
    for kind, pyname in sorted(ErrorKind.PY_NAMES.items()):
        macro = "TVMS_ERR_" + re.sub(r"(?<!^)(?=[A-Z])", "_", pyname.removesuffix("Error")).upper()
        lines.append(f"#define {macro} {kind} /* {_ERROR_DOCS.get(kind, pyname)} */")
    return "\n".join([*lines, "#endif"]) + "\n"


def _py_declaration(name: str, spec: EntrySpec) -> str:
    args = []
    for p in spec.params:
        if isinstance(p, BufferParam):
            args.append(f"PyObject *{p.name} /* numpy.ndarray of {p.dtype} */")
        else:
            args.append(f"{C_TYPES[p.dtype]} {p.name}")
    params = ", ".join(args) if args else "void"
    return (
        f"/* {name}: returns 0, or nonzero with a Python exception set (GIL held). */\n"
        f"int32_t {name}({params});\n"
        f"/* METH_FASTCALL | METH_KEYWORDS entry: "
        f"{name}({', '.join(p.name for p in spec.params)}) */\n"
        f"PyObject *{name}__py(PyObject *self, PyObject *const *args, intptr_t nargs, "
        f"PyObject *kwnames);\n"
    )


def _c_param(param: CParam) -> str:
    if param.role == "buffer":
        const = "" if param.writes else "const "
        return f"{const}{C_TYPES[param.dtype]} *{param.name}"
    return f"{C_TYPES[param.dtype]} {param.name}"


def _c_declaration(entry: CEntry) -> str:
    head = (
        f"/* {entry.name}: plain C entry of {entry.kernel} (no Python). Returns TVMS_OK (0), or a\n"
        f" * TVMS_ERR_* code with the message in {entry.name}{LAST_ERROR_SUFFIX}(). */\n"
    )
    if not entry.params:
        decl = f"int32_t {entry.name}(void);\n"
    else:
        decls = [_c_param(p) for p in entry.params]
        width = max(len(d) for d in decls) + 1
        lines = []
        for i, (decl_text, param) in enumerate(zip(decls, entry.params)):
            sep = "," if i + 1 < len(decls) else ""
            lines.append(f"    {(decl_text + sep).ljust(width)} /* {param.doc} */")
        decl = f"int32_t {entry.name}(\n" + "\n".join(lines) + "\n);\n"
    last = (
        "/* The calling thread's last error message of any C entry of this library (a\n"
        " * thread-local buffer, overwritten by the next failure; \"\" if none failed). */\n"
        f"const char *{entry.name}{LAST_ERROR_SUFFIX}(void);\n"
    )
    return head + decl + last


def header_text(
    library: str, kernels: Sequence[tuple[str, EntrySpec]], plan: ExportPlan | None = None
) -> str:
    """The header declaring ``kernels`` (name, entry spec) of ``library`` and, when ``plan`` is
    given, their C entry points."""
    guard = "TVMS_" + re.sub(r"\W", "_", library).upper() + "_H"
    entries = {e.kernel: e for e in plan.c_entries} if plan is not None else {}
    skipped = plan.skipped if plan is not None else {}
    decls = []
    for name, spec in kernels:
        text = _py_declaration(name, spec)
        if name in entries:
            text += "\n" + _c_declaration(entries[name])
        elif name in skipped:
            text += f"/* {name}: no C entry: {skipped[name]} */\n"
        decls.append(text)
    return (
        f"/* Generated by tvmscript for {library}.\n"
        " * <kernel>_c: plain C entry points (raw pointers to C-contiguous row-major data,\n"
        " *   int64_t symbolic extents, scalars by value; thread-safe; parallel loops run\n"
        " *   serially). The library itself needs only libc and libm.\n"
        " * <kernel>: Python ABI (buffer arguments are PyObject* of exact numpy.ndarray objects;\n"
        " *   the tvmscript runtime symbols (tvms_*) must be provided by the process). */\n"
        f"#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n\n"
        "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
        f"{_error_codes()}\n"
        "typedef struct _object PyObject;\n\n"
        + "\n".join(decls)
        + "\n#ifdef __cplusplus\n}\n#endif\n\n"
        f"#endif /* {guard} */\n"
    )


def write_header(
    path: Path,
    library: str,
    kernels: Sequence[tuple[str, EntrySpec]],
    plan: ExportPlan | None = None,
) -> Path:
    """Write :func:`header_text` to ``path``; return ``path``."""
    path.write_text(header_text(library, kernels, plan))
    return path


