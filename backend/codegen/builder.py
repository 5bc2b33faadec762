"""Text emission inside one LLVM function: temporaries, blocks, entry allocas, error exits."""

from __future__ import annotations

from irbuilder.ir import Buffer, DataType, Var

from ..abi.c_errors import add_c_error_helpers
from ..abi.shared_helpers import PAR_ERROR_DEFINITION, PY_ERROR_DECLARATIONS
from .context import CodegenError, ModuleContext, llvm_type, sanitize

__all__ = ["FunctionBuilder", "ensure_helpers"]

_RESERVED = frozenset({"fail", "body", "entry", "exit.ok"})


class FunctionBuilder:
    """Accumulates the instructions of one LLVM function as text.

    Instructions are appended to the current block; after a terminator the next
    instruction opens a fresh (unreachable) block so the text always verifies.
    Allocas go to the entry block (``entry_lines``). Every error exit branches to
    ``fail_label``, whose block frees live heap allocations (``heap_slots`` hold
    the pointers, null when not allocated) and returns the failure code.
    """

    def __init__(self, ctx: ModuleContext, *, parallel_ctx: str | None = None) -> None:
        self.ctx = ctx
        self.lines: list[str] = []
        self.entry_lines: list[str] = []
        self.heap_slots: list[str] = []
        self.block = "body"
        self.terminated = False
        self._names: dict[str, int] = {}
        self._used: set[str] = set()
        self.vars: dict[int, tuple[Var, str]] = {}
        self.fail_label = "fail"
        self.parallel_ctx = parallel_ctx
        """The context pointer of an outlined parallel body (errors are recorded there)."""
        self.func_name = ""
        self.buffer_handles: frozenset[int] = frozenset()
        """ids of the function's buffer parameters (what a call to another kernel may pass)."""

    # -- names ------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        """A new unique local name (without the ``%``)."""
        base = sanitize(hint)
        count = self._names.get(base, 0)
        name = base
        # A produced name can equal another hint's numbered form ("x.1"): probe until free.
        while name in self._used or name in _RESERVED:
            count += 1
            name = f"{base}.{count}"
        self._names[base] = count
        self._used.add(name)
        return name

    def tmp(self, hint: str = "t") -> str:
        """A new SSA value name, ``%hint.N``."""
        return "%" + self.fresh(hint)

    def new_label(self, hint: str) -> str:
        """A new block label (without ``%``)."""
        return self.fresh(hint)

    # -- emission ---------------------------------------------------------
    def emit(self, line: str) -> None:
        """Append one instruction to the current block."""
        if self.terminated:
            self.label(self.new_label("dead"))
        self.lines.append("  " + line)

    def assign(self, hint: str, rhs: str) -> str:
        """Emit ``%name = rhs``; return ``%name``."""
        name = self.tmp(hint)
        self.emit(f"{name} = {rhs}")
        return name

    def label(self, name: str) -> None:
        """Start block ``name`` (falls through from an unterminated block)."""
        if not self.terminated:
            self.lines.append(f"  br label %{name}")
        self.lines.append(f"{name}:")
        self.block = name
        self.terminated = False

    def br(self, target: str, suffix: str = "") -> None:
        """Unconditional branch; ``suffix`` may attach metadata (``, !llvm.loop !3``)."""
        self.emit(f"br label %{target}{suffix}")
        self.terminated = True

    def cond_br(self, cond: str, then: str, other: str, suffix: str = "") -> None:
        """Conditional branch on an ``i1``."""
        self.emit(f"br i1 {cond}, label %{then}, label %{other}{suffix}")
        self.terminated = True

    def entry_alloca(self, ty: str, hint: str, count: str = "", align: int = 0) -> str:
        """An ``alloca`` in the entry block (so it is allocated once, and mem2reg sees it)."""
        name = self.tmp(hint)
        parts = f"{name} = alloca {ty}"
        if count:
            parts += f", i64 {count}"
        if align:
            parts += f", align {align}"
        self.entry_lines.append("  " + parts)
        return name

    def finish(self, header: str, success: list[str], failure: list[str]) -> str:
        """The complete function text: entry allocas, body, success exit, failure exit.

        The failure block frees every heap allocation still live (slots are null
        otherwise), so assertion and division errors never leak memory.
        """
        if not self.terminated:
            self.lines.append("  br label %exit.ok")
        out = [header + " {", "entry:", *self.entry_lines]
        out += [f"  store ptr null, ptr {slot}, align 8" for slot in self.heap_slots]
        out += [
            "  br label %body",
            "body:",
            *self.lines,
            "exit.ok:",
            *success,
            f"{self.fail_label}:",
        ]
        for slot in self.heap_slots:
            live = self.tmp("live")
            out.append(f"  {live} = load ptr, ptr {slot}, align 8")
            out.append(f"  call void @__tvms_heap_free(ptr {live})")
        out += [*failure, "}"]
        return "\n".join(out)

    # -- variables ----------------------------------------------------------
    def bind(self, var: Var, value: str) -> None:
        """Bind an IR variable to an LLVM value (Vars are keyed by identity)."""
        self.vars[id(var)] = (var, value)

    def lookup(self, var: Var) -> str:
        """The LLVM value of a bound variable; a clear error for an unbound one."""
        entry = self.vars.get(id(var))
        if entry is None:
            raise CodegenError(
                f"variable {var.name!r} ({var.dtype}) is used but not defined "
                f"in function {self.func_name!r}"
            )
        return entry[1]

    def buffer_pointer(self, buffer: Buffer) -> str:
        """The data pointer of ``buffer`` (its data var must be bound)."""
        entry = self.vars.get(id(buffer.data))
        if entry is None:
            raise CodegenError(
                f"buffer {buffer.name!r}: its data var {buffer.data.name!r} is not bound "
                f"(no LetStmt/Allocate/param defines it) in function {self.func_name!r}"
            )
        return entry[1]

    # -- errors -------------------------------------------------------------
    def raise_error(self, kind: int, message: str) -> None:
        """Set a Python exception (or record it in a parallel context) and jump to ``fail``."""
        ensure_helpers(self.ctx)
        msg = self.ctx.string(message)
        if self.parallel_ctx is None:
            self.emit(f"call void @__tvms_raise(i32 {kind}, ptr {msg})")
        else:
            self.emit(
                f"call void @__tvms_par_error(ptr {self.parallel_ctx}, i32 {kind}, ptr {msg})"
            )
        self.br(self.fail_label)

    def raise_formatted(self, kind: int, pieces: list[str], values: list[tuple[str, str]]) -> None:
        """Raise ``kind`` with ``pieces`` joined by ``values`` and jump to ``fail``.

        ``values`` are ``(llvm i64 value, printf conversion)`` pairs (``%lld``, ``%llu`` or
        ``%S`` for a Python object). In a parallel body a worker thread cannot set the
        caller's exception, so the region records the message with ``?`` for each value.
        """
        if not values:
            self.raise_error(kind, pieces[0])
            return
        if self.parallel_ctx is not None:
            self.raise_error(kind, "?".join(pieces))
            return
        ensure_helpers(self.ctx)
        parts = [pieces[0].replace("%", "%%")]
        for (_, conversion), piece in zip(values, pieces[1:], strict=True):
            parts.append(conversion)
            parts.append(piece.replace("%", "%%"))
        fmt = self.ctx.string("".join(parts))
        args = [value for value, _ in values] + ["0"] * (4 - len(values))
        arg_text = ", ".join(f"i64 {a}" for a in args)
        self.emit(f"call void @__tvms_raise_fmt(i32 {kind}, ptr {fmt}, {arg_text})")
        self.br(self.fail_label)

    def check(self, ok: str, kind: int, message: str, hint: str = "check") -> None:
        """Continue when ``ok`` (an ``i1``) holds, else raise ``kind`` with ``message``."""
        good = self.new_label(f"{hint}.ok")
        bad = self.new_label(f"{hint}.fail")
        self.cond_br(ok, good, bad)
        self.label(bad)
        self.raise_error(kind, message)
        self.label(good)

    # -- conversions used by several emitters ------------------------------------
    def to_i64(self, value: str, dtype: DataType) -> str:
        """Widen a scalar integer (or bool) value to ``i64`` respecting signedness."""
        ty = llvm_type(dtype)
        if ty == "i64":
            return value
        op = "sext" if dtype.is_int else "zext"
        return self.assign("idx", f"{op} {ty} {value} to i64")


def ensure_helpers(ctx: ModuleContext) -> None:
    """Add the error-raising helpers to the module once.

    ``__tvms_raise(kind, msg)`` maps an :class:`ErrorKind` code to the runtime's
    ``@tvms_exc_<Name>`` slot and calls the runtime prelude's ``tvms_raise`` (and
    ``__tvms_raise_fmt(kind, fmt, 4 x i64)`` its ``tvms_raise_fmt``), which takes
    the GIL with ``PyGILState_Ensure`` (correct whether or not the entry wrapper released
    it). With the Python error ABI the module only declares them: one library per process
    defines them (:mod:`backend.abi.shared_helpers`),
    since LLVM's code generator costs about a millisecond per function however small.
    ``__tvms_par_error`` records the first error of a parallel region in the region's
    context (``{i32 kind, ptr msg}`` at offset 0); the caller raises it after
    ``tvms_parallel_for`` returns, on the Python thread; it is declared with the memory
    effects LLVM infers from its body (it only touches the context), which keep the parallel
    body's loops optimisable around the call.
    """
    if "__tvms_raise" in ctx.helpers:
        return
    ctx.helpers.add("__tvms_raise")
    if ctx.options.error_abi == "c":
        ctx.definitions.append(PAR_ERROR_DEFINITION.replace("define void", "define internal void"))
        add_c_error_helpers(ctx)  # same helper names, Python-free bodies
        return
    ctx.definitions.append(PY_ERROR_DECLARATIONS)
