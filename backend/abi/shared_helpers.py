"""The error and argument-conversion helpers of every JIT-built kernel, compiled once per process.

Kernel modules declare ``tvms_raise``, ``tvms_raise_fmt``, the ``tvms_arg_*`` conversion
errors (:data:`~backend.abi.pyabi.SHARED_PRELUDE_HELPERS`) and ``__tvms_raise``/
``__tvms_raise_fmt`` (the code generator's, Python error ABI). LLVM's code generator spends
about a millisecond on every function of a module however small, and these eight cold
functions were about 4 ms of each build when every module defined its own copy. The engine
binds the declarations to this library (:func:`shared_helper_address`, a symbol provider):
built at level 0 on first use, from the disk cache after the first process.

An export must not depend on this process: :func:`link_definitions` links the same
definitions into an exported module, internal to it.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any

import llvmlite.binding as llvm

from ..runtime.engine import CompiledLibrary, compile_ir, jit_lock
from ..runtime.target import codegen_target_machine
from .error_kinds import ErrorKind
from .pyabi import (
    SHARED_PRELUDE_HELPERS,
    ndarray_layout,
    prelude_helper_definitions,
    runtime_prelude_ir,
)

__all__ = [
    "PAR_ERROR_DEFINITION",
    "PY_ERROR_DECLARATIONS",
    "check_array_definition",
    "SHARED_HELPERS",
    "link_definitions",
    "shared_helper_address",
    "shared_helpers_ir",
    "shared_helpers_library",
]

SHARED_HELPERS: frozenset[str] = frozenset(
    (*SHARED_PRELUDE_HELPERS, "__tvms_raise", "__tvms_raise_fmt", "__tvms_par_error",
     "tvms_check_array")
)
"""Helpers a kernel module declares and this library defines."""

PY_ERROR_DECLARATIONS = """\
declare void @__tvms_raise(i32, ptr) cold nounwind
declare void @__tvms_raise_fmt(i32, ptr, i64, i64, i64, i64) cold nounwind
declare void @__tvms_par_error(ptr captures(none), i32, ptr)
    cold mustprogress nofree norecurse nounwind willreturn memory(argmem: readwrite)"""
"""How a kernel module (Python error ABI) declares the code generator's error helpers. The
attributes of ``__tvms_par_error`` are those LLVM infers from its body (it writes only the
region context it is given): a parallel body's loops stay optimisable around the call."""

PAR_ERROR_DEFINITION = """\
define void @__tvms_par_error(ptr %ctx, i32 %kind, ptr %msg) cold noinline {
entry:
  %res = cmpxchg ptr %ctx, i32 0, i32 %kind seq_cst seq_cst
  %won = extractvalue { i32, i1 } %res, 1
  br i1 %won, label %store, label %done
store:
  %slot = getelementptr inbounds i8, ptr %ctx, i64 8
  store ptr %msg, ptr %slot, align 8
  br label %done
done:
  ret void
}"""
"""``__tvms_par_error(ctx, kind, msg)`` records the first error of a parallel region in its
context (``{i32 kind, ptr msg}``); the caller raises it once ``tvms_parallel_for`` returns."""

_RAISE_HELPER = """define void @__tvms_raise(i32 %kind, ptr %msg) cold noinline optnone {{
entry:
  switch i32 %kind, label %k7 [
{cases}  ]
{blocks}}}"""

_RAISE_FMT_HELPER = """\
define void @__tvms_raise_fmt(i32 %kind, ptr %fmt, i64 %a, i64 %b, i64 %c, i64 %d)
    cold noinline optnone {{
entry:
  switch i32 %kind, label %k7 [
{cases}  ]
{blocks}}}"""


def py_error_helper_definitions() -> str:
    """IR text defining ``__tvms_raise`` and ``__tvms_raise_fmt`` (external linkage): map an
    :class:`ErrorKind` code to the runtime's ``@tvms_exc_<Name>`` slot and call the prelude's
    ``tvms_raise``/``tvms_raise_fmt``."""
    cases = []
    blocks = []
    fmt_blocks = []
    for kind, pyname in sorted(ErrorKind.PY_NAMES.items()):
        if kind != ErrorKind.RUNTIME:
            cases.append(f"    i32 {kind}, label %k{kind}\n")
        blocks.append(
            f"k{kind}:\n  call void @tvms_raise(ptr @tvms_exc_{pyname}, ptr %msg)\n  ret void\n"
        )
        fmt_blocks.append(
            f"k{kind}:\n  call void @tvms_raise_fmt(ptr @tvms_exc_{pyname}, ptr %fmt, "
            "i64 %a, i64 %b, i64 %c, i64 %d)\n  ret void\n"
        )
    return "\n".join((
        _RAISE_HELPER.format(cases="".join(cases), blocks="".join(blocks)),
        _RAISE_FMT_HELPER.format(cases="".join(cases), blocks="".join(fmt_blocks)),
    ))


_CHECK_RECORD = "{ i64, i64, i64, i64, ptr }"


def check_array_definition() -> str:
    """IR text defining ``i32 tvms_check_array(ptr array, ptr table, i64 n)``: run the
    ``n`` records of ``table`` on an ndarray in order; raise the first failing record's
    message (its ErrorKind, its format with the value it shows) and return -1, else 0.

    A record (:data:`backend.codegen.entry_table.CHECK_RECORD_TYPE`) is ``{op, kind, a, b,
    fmt}``: op 1 ndim == a; 2 dtype type number a or b with native byte order (shows the
    descr, ``%S``); 3 shape[a] == b; 4 shape[a] <= 1 or strides[a] == b bytes; 5 flags & a
    (shows nothing). Records after an ndim record may read the shape arrays: the table of a
    buffer starts with its ndim check."""
    lay = ndarray_layout()
    rec = _CHECK_RECORD
    return f"""\
define i32 @tvms_check_array(ptr %h, ptr %table, i64 %n) noinline cold {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %pass ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %none
body:
  %rec = getelementptr inbounds {rec}, ptr %table, i64 %i
  %op = load i64, ptr %rec, align 8
  %ap = getelementptr inbounds {rec}, ptr %rec, i64 0, i32 2
  %a = load i64, ptr %ap, align 8
  %bp = getelementptr inbounds {rec}, ptr %rec, i64 0, i32 3
  %b = load i64, ptr %bp, align 8
  switch i64 %op, label %pass [
    i64 1, label %ndim
    i64 2, label %dtype
    i64 3, label %shape
    i64 4, label %stride
    i64 5, label %flags
  ]
ndim:
  %ndp = getelementptr inbounds i8, ptr %h, i64 {lay.nd}
  %nd = load i32, ptr %ndp, align 4
  %nd64 = sext i32 %nd to i64
  %ndok = icmp eq i64 %nd64, %a
  br i1 %ndok, label %pass, label %fail
dtype:
  %dsp = getelementptr inbounds i8, ptr %h, i64 {lay.descr}
  %ds = load ptr, ptr %dsp, align 8
  %tnp = getelementptr inbounds i8, ptr %ds, i64 {lay.descr_type_num}
  %tn = load i32, ptr %tnp, align 4
  %tn64 = sext i32 %tn to i64
  %m1 = icmp eq i64 %tn64, %a
  %m2 = icmp eq i64 %tn64, %b
  %m = or i1 %m1, %m2
  %bop = getelementptr inbounds i8, ptr %ds, i64 {lay.descr_byteorder}
  %bo = load i8, ptr %bop, align 1
  %bok = icmp ne i8 %bo, {ord(">") if sys.byteorder == "little" else ord("<")}
  %dok = and i1 %m, %bok
  %dsi = ptrtoint ptr %ds to i64
  br i1 %dok, label %pass, label %fail
shape:
  %shp = getelementptr inbounds i8, ptr %h, i64 {lay.dims}
  %sh = load ptr, ptr %shp, align 8
  %dp = getelementptr inbounds i64, ptr %sh, i64 %a
  %d = load i64, ptr %dp, align 8
  %dok2 = icmp eq i64 %d, %b
  br i1 %dok2, label %pass, label %fail
stride:
  %shp3 = getelementptr inbounds i8, ptr %h, i64 {lay.dims}
  %sh3 = load ptr, ptr %shp3, align 8
  %ep = getelementptr inbounds i64, ptr %sh3, i64 %a
  %e = load i64, ptr %ep, align 8
  %small = icmp sle i64 %e, 1
  %stp = getelementptr inbounds i8, ptr %h, i64 {lay.strides}
  %st = load ptr, ptr %stp, align 8
  %sp = getelementptr inbounds i64, ptr %st, i64 %a
  %s = load i64, ptr %sp, align 8
  %seq = icmp eq i64 %s, %b
  %sok = or i1 %small, %seq
  br i1 %sok, label %pass, label %fail
flags:
  %flp = getelementptr inbounds i8, ptr %h, i64 {lay.flags}
  %fl = load i32, ptr %flp, align 4
  %fl64 = zext i32 %fl to i64
  %fm = and i64 %fl64, %a
  %fok = icmp ne i64 %fm, 0
  br i1 %fok, label %pass, label %fail
pass:
  %i1 = add i64 %i, 1
  br label %loop
fail:
  %v = phi i64 [ %nd64, %ndim ], [ %dsi, %dtype ], [ %d, %shape ], [ %s, %stride ], [ 0, %flags ]
  %kp = getelementptr inbounds {rec}, ptr %rec, i64 0, i32 1
  %k = load i64, ptr %kp, align 8
  %k32 = trunc i64 %k to i32
  %fp = getelementptr inbounds {rec}, ptr %rec, i64 0, i32 4
  %f = load ptr, ptr %fp, align 8
  call void @__tvms_raise_fmt(i32 %k32, ptr %f, i64 %v, i64 0, i64 0, i64 0)
  ret i32 -1
none:
  ret i32 0
}}"""


def shared_helpers_ir() -> str:
    """IR text of the module defining :data:`SHARED_HELPERS` (external linkage)."""
    return "\n".join((
        runtime_prelude_ir(declare_helpers=False),
        prelude_helper_definitions(),
        py_error_helper_definitions(),
        PAR_ERROR_DEFINITION,
        check_array_definition(),
    ))


_library: CompiledLibrary | None = None
_lock = threading.Lock()


def shared_helpers_library() -> CompiledLibrary:
    """Compile (once per process, lazily) and return the helpers' library."""
    global _library
    if _library is not None:
        return _library
    # The JIT's lock first, as the thread pool's library does: a compile binding these
    # symbols calls this holding it.
    with jit_lock(), _lock:
        if _library is None:
            # Cold code: level 0 throughout (their bodies are optnone anyway).
            _library = compile_ir(
                shared_helpers_ir(), opt_level=0, codegen_opt_level=0,
                name="tvms_shared_helpers", cache=None,
            )
            # Kernels call into it until the process ends (even while modules are torn
            # down at exit): never free it.
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(_library))
    return _library


def shared_helper_address(name: str) -> int | None:
    """Engine symbol provider: the address of a shared helper (compiles the library)."""
    if name in SHARED_HELPERS:
        return shared_helpers_library().address(name)
    return None


def link_definitions(module: Any) -> None:
    """Link the definitions of the :data:`SHARED_HELPERS` that ``module`` (an llvmlite module)
    declares into it, with internal linkage, so the module needs none of this process."""
    used = {f.name for f in module.functions if f.is_declaration and f.name in SHARED_HELPERS}
    if not used:
        return
    helpers = llvm.parse_assembly(shared_helpers_ir())
    helpers.triple, helpers.data_layout = module.triple, module.data_layout
    module.link_in(helpers)
    for function in module.functions:
        if function.name in SHARED_HELPERS and not function.is_declaration:
            function.linkage = llvm.Linkage.internal
    # Drop what the module does not call (the unused helpers, the linked prelude's accessors).
    builder = llvm.create_pass_builder(codegen_target_machine(0),
                                       llvm.create_pipeline_tuning_options())
    passes = llvm.create_new_module_pass_manager()
    passes.add_global_dead_code_eliminate_pass()
    passes.run(module, builder)
