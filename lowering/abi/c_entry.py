"""The plain-C entry variant of a kernel: raw pointers, symbolic extents and scalars by value.

:func:`make_c_entry` takes a function lowered *without* ``insert_entry_checks`` (buffer data
vars and symbolic dims still free) and returns a PrimFunc ``<name>_c`` whose parameters are, in the
kernel's parameter order:

* a buffer parameter ``A`` -> its data pointer (``float *A``: C-contiguous, row-major, or laid
  out by its explicit strides), immediately followed by an ``int64`` parameter for every
  symbolic variable of its shape (then of its explicit strides, in elements) not passed
  before: each variable is passed once (``int64_t n``), so two uses of ``n`` cannot disagree;
* a scalar parameter -> itself, by value.

What the C entry checks (nothing else is checkable from raw pointers): a variable used
directly as an extent is ``>= 0``; a variable whose IR dtype is narrower than ``int64``
fits it. Pointers are trusted (null is fine when nothing is accessed). Parallel loops run
serially: the thread pool (``backend/runtime/threadpool.py``) is configured, forked and shut
down from Python. Assertion messages that format a Python object (``format_message`` with a
handle value) print ``?`` in its place.

A kernel that uses a buffer *handle* itself (e.g. passes ``A`` to another kernel with
``T.call_extern``) has no C entry: :class:`CEntryError` says why.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from irbuilder.ir import (
    AssertStmt,
    Buffer,
    Call,
    CallKind,
    Cast,
    For,
    ForKind,
    LetStmt,
    MessageFormatError,
    PrimExpr,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    StringImm,
    Var,
    as_dtype,
    const,
    expr_text,
    format_message,
    message_parts,
    post_order_visit,
    rebuild,
    seq,
)

from ..analysis import buffer_accesses, free_vars
from ..checks.verifier import ENTRY_CHECKED_ATTR
from .boundary import num_outputs

__all__ = ["C_ENTRY_ATTR", "CEntry", "CEntryError", "CParam", "make_c_entry"]

C_ENTRY_ATTR = "c_entry_of"
"""Attribute of a C-entry PrimFunc: the name of the kernel it implements."""

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto "
    "if inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while _Bool _Complex _Imaginary bool true false "
    "alignas alignof nullptr static_assert thread_local typeof".split()
)


class CEntryError(ValueError):
    """The kernel cannot have a plain-C entry point (the message says why)."""


@dataclass(frozen=True)
class CParam:
    """One parameter of a C entry point, as the generated header declares it."""

    name: str
    """C identifier."""
    role: str
    """``"buffer"`` (a pointer), ``"scalar"`` (by value) or ``"extent"`` (an ``int64``
    symbolic shape or stride variable)."""
    dtype: str
    """Element dtype of a buffer; value dtype of a scalar; ``"int64"`` for an extent."""
    doc: str
    """What the caller must pass (the header comment)."""
    writes: bool = False
    """For buffers: the kernel stores to it (the header omits ``const``)."""


@dataclass(frozen=True)
class CEntry:
    """A kernel's C entry point: the function to compile and its documented parameters."""

    kernel: str
    func: PrimFunc
    params: tuple[CParam, ...]

    @property
    def name(self) -> str:
        """The C symbol of the entry point."""
        return self.func.name


def _dtype_range(dtype_var: Var) -> tuple[int, int]:
    dtype = dtype_var.dtype
    if dtype.is_uint or dtype.is_bool:
        return 0, (1 << dtype.bits) - 1
    return -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1


_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def _limits_text(low: int, high: int) -> str:
    if high >= _I64_MAX:
        return f">= {low}" if low > _I64_MIN else "any int64"
    return f"in [{low}, {high}]"


@dataclass
class _Extent:
    var: Var  # the variable of the IR
    param: Var  # the int64 C parameter (``var`` itself when it is an int64)
    name: str
    uses: list[str]  # "A.shape[0]" for every direct use as an extent


class _Signature:
    """Collects the C parameters, the prologue checks and the bindings of converted vars."""

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel
        self.params: list[Var] = []
        self.docs: list[CParam | _Extent] = []
        self.names: set[str] = set()
        self.bound: dict[int, Var] = {}
        self.extents: dict[int, _Extent] = {}

    def c_name(self, hint: str, fallback: str) -> str:
        """A C identifier from ``hint``, unique among the parameters and not a keyword."""
        name = hint if hint.isidentifier() and hint.isascii() else fallback
        if name in _C_KEYWORDS or name.startswith("__"):
            name = f"{name}_"
        base, count = name, 1
        while name in self.names:
            count += 1
            name = f"{base}_{count}"
        self.names.add(name)
        return name

    def add(self, var: Var, doc: CParam) -> None:
        """Append a buffer pointer or scalar parameter."""
        self.params.append(var)
        self.docs.append(doc)
        self.bound[id(var)] = var

    def extent(self, var: Var, where: str | None) -> None:
        """Make ``var`` (a symbolic shape/stride variable) an ``int64`` parameter, once."""
        known = self.extents.get(id(var))
        if known is None and id(var) in self.bound:
            return  # a scalar parameter of the kernel
        if known is None:
            if not (var.dtype.is_int or var.dtype.is_uint) or var.dtype.lanes != 1:
                raise CEntryError(
                    f"kernel {self.kernel!r}: shape variable {var.name!r} has dtype "
                    f"{var.dtype}; a C entry passes symbolic extents as int64"
                )
            name = self.c_name(var.name, f"dim{len(self.params)}")
            param = var if str(var.dtype) == "int64" else Var(name, as_dtype("int64"))
            known = _Extent(var, param, name, [])
            self.extents[id(var)] = known
            self.params.append(param)
            self.docs.append(known)
            self.bound[id(var)] = param
        if where is not None:
            known.uses.append(where)

    def prologue(self) -> tuple[list[Stmt], list[tuple[Var, PrimExpr]]]:
        """Range checks of the extent parameters, and Lets of the narrower IR variables."""
        checks: list[Stmt] = []
        lets: list[tuple[Var, PrimExpr]] = []
        for index, doc in enumerate(self.docs):
            if not isinstance(doc, _Extent):
                continue
            low, high = _dtype_range(doc.var)
            if doc.uses:
                low = max(low, 0)
            conds: list[PrimExpr] = []
            if low > _I64_MIN:
                conds.append(doc.param >= const(low, "int64"))
            if high < _I64_MAX:
                conds.append(doc.param <= const(high, "int64"))
            limits = _limits_text(low, high)
            if conds:
                cond = conds[0] if len(conds) == 1 else conds[0] & conds[1]
                message = format_message(
                    f"ValueError: {self.kernel}: {doc.name} must be {limits}, got {{}}", doc.param
                )
                checks.append(AssertStmt(cond, message))
            if doc.param is not doc.var:
                lets.append((doc.var, Cast(doc.var.dtype, doc.param)))
            what = f"extent of {', '.join(doc.uses)}" if doc.uses else "shape variable"
            if doc.param is not doc.var:
                what += f" ({doc.var.dtype} in the kernel)"
            self.docs[index] = CParam(doc.name, "extent", "int64", f"{what}; must be {limits}")
        return checks, lets

    def c_params(self) -> tuple[CParam, ...]:
        """The documented parameters (after :meth:`prologue`)."""
        return tuple(d for d in self.docs if isinstance(d, CParam))


class _CEntryBody(StmtExprMutator):
    """Parallel loops become serial; Python-object values leave assertion messages."""

    def visit_for_(self, node: For) -> Stmt:
        new = self.generic_mutate(node)
        if new.kind is ForKind.PARALLEL:
            return rebuild(new, {"kind": ForKind.SERIAL})  # type: ignore[no-any-return]
        return new

    def visit_assert_stmt_(self, node: AssertStmt) -> Stmt:
        new: AssertStmt = self.generic_mutate(node)
        try:
            pieces, values = message_parts(new.message)
        except MessageFormatError:
            return new
        if not any(v.dtype.is_handle for v in values):
            return new
        template = [pieces[0].replace("{", "{{").replace("}", "}}")]
        kept: list[PrimExpr] = []
        for value, piece in zip(values, pieces[1:]):
            if value.dtype.is_handle:
                template.append("?")
            else:
                template.append("{}")
                kept.append(value)
            template.append(piece.replace("{", "{{").replace("}", "}}"))
        text = "".join(template)
        message: PrimExpr = (
            format_message(text, *kept, span=new.message.span)
            if kept
            else StringImm(text.replace("{{", "{").replace("}}", "}"), span=new.message.span)
        )
        return rebuild(new, {"message": message})  # type: ignore[no-any-return]


def _kernel_calls(body: Stmt, kernels: Collection[str]) -> list[str]:
    found: list[str] = []

    def visit(node: object) -> None:
        if (
            isinstance(node, Call)
            and node.kind in (CallKind.EXTERN, CallKind.PURE_EXTERN)
            and node.op in kernels
            and node.op not in found
        ):
            found.append(node.op)

    post_order_visit(body, visit)
    return found


def _buffer_doc(name: str, buffer: Buffer, writes: bool, used: bool) -> str:
    dims = "".join(f"[{expr_text(d, casts=False)}]" for d in buffer.shape) or "[1] (0-d)"
    layout = (
        "strides (elements) " + ", ".join(expr_text(s, casts=False) for s in buffer.strides)
        if buffer.strides
        else "C-contiguous, row-major"
    )
    access = "written" if writes else ("read only" if used else "not accessed")
    return f"{buffer.dtype}{dims}, {layout}; {access}"


def make_c_entry(
    func: PrimFunc, kernel_names: Collection[str] = (), suffix: str = "_c"
) -> CEntry:
    """The C entry of ``func`` (lowered with ``insert_entry_checks`` disabled), named
    ``name+suffix``.

    ``kernel_names`` are the other kernels of the module: calling one of them passes ndarray
    handles, so such a kernel has no C entry (:class:`CEntryError`).
    """
    kernel = func.name
    if func.attrs.get(ENTRY_CHECKED_ATTR):
        raise ValueError(
            f"make_c_entry({kernel!r}): the function already has Python entry checks; "
            "lower it with the 'insert_entry_checks' pass disabled"
        )
    calls = _kernel_calls(func.body, set(kernel_names))
    if calls:
        raise CEntryError(
            f"kernel {kernel!r} calls kernel(s) {', '.join(map(repr, calls))} with ndarray "
            "handles; it has no C entry"
        )
    handles = {id(h): h for h in func.buffer_map}
    direct = [v.name for v in free_vars(func.body) if id(v) in handles]
    if direct:
        raise CEntryError(
            f"kernel {kernel!r} uses buffer handle(s) {', '.join(map(repr, direct))} directly "
            "(e.g. passes them to another function); it has no C entry"
        )
    accesses = buffer_accesses(func.body)
    sig = _Signature(kernel)
    for param in func.params:
        if param not in func.buffer_map and not param.dtype.is_handle:
            sig.bound[id(param)] = param  # scalars are bound before any extent
    elem_offsets: list[tuple[Var, PrimExpr]] = []
    outputs = num_outputs(func)  # returned tensors are the trailing params
    for position, param in enumerate(func.params):
        buffer = func.buffer_map.get(param)
        if buffer is None:
            if param.dtype.is_handle:
                raise CEntryError(f"kernel {kernel!r}: parameter {param.name!r} is a raw handle")
            name = sig.c_name(param.name, f"arg{position}")
            sig.add(param, CParam(name, "scalar", str(param.dtype), f"scalar {param.dtype}"))
            continue
        if buffer.axis_separators:
            raise CEntryError(f"buffer {buffer.name!r}: axis_separators are not supported")
        name = sig.c_name(buffer.name, f"arg{position}")
        writes = accesses.stores_to(buffer.data)
        used = buffer.data in accesses.data_vars
        doc = _buffer_doc(name, buffer, writes, used)
        if position >= len(func.params) - outputs:
            doc += "; the returned tensor (caller allocates)"
        sig.add(buffer.data, CParam(name, "buffer", str(buffer.dtype), doc, writes))
        for i, dim in enumerate(buffer.shape):
            where = f"{name}.shape[{i}]" if isinstance(dim, Var) else None
            for var in free_vars(dim):
                sig.extent(var, where)
        for i, stride in enumerate(buffer.strides):
            for var in free_vars(stride):
                sig.extent(var, f"{name}.strides[{i}]" if isinstance(stride, Var) else None)
        offset = buffer.elem_offset
        if isinstance(offset, Var) and id(offset) not in sig.bound:
            # A pointer points at element 0 of its buffer.
            elem_offsets.append((offset, const(0, offset.dtype)))
            sig.bound[id(offset)] = offset
    checks, lets = sig.prologue()
    body = _CEntryBody().visit_stmt(func.body)
    defined = {id(v) for v in sig.params} | {id(v) for v, _ in lets + elem_offsets}
    defined |= {id(b.data) for b in func.buffer_map.values()}
    missing = [v.name for v in free_vars(body) if id(v) not in defined]
    if missing:
        raise CEntryError(
            f"kernel {kernel!r}: variable(s) {', '.join(missing)} are defined by no parameter "
            "or shape"
        )
    for var, value in reversed(lets + elem_offsets):
        body = LetStmt(var, value, body)
    body = seq([*checks, body])
    attrs = {"global_symbol": kernel + suffix, C_ENTRY_ATTR: kernel}
    c_func = PrimFunc(tuple(sig.params), body, func.ret_type, {}, attrs, span=func.span)
    return CEntry(kernel, c_func, sig.c_params())
