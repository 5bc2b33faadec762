"""TVM runtime constructs that real TVMScript (0.13-0.16) uses: GPU thread launches and
the ``tvm_*`` builtins.

They exist so that TVM programs parse and round-trip; the CPU backend may reject them.

* ``T.launch_thread("blockIdx.x", 8)`` (or ``T.launch_thread(v, 8)`` with
  ``v = T.env_thread("blockIdx.x")``) opens, for the rest of the enclosing body, an
  ``AttrStmt(IterVar(v, Range(0, 8), THREAD, "blockIdx.x"), "thread_extent", 8)``, as TVM
  builds it; it yields the thread var.
* ``T.call_packed``/``T.call_cpacked``, ``T.address_of``, ``T.tvm_access_ptr``,
  ``T.type_annotation``, ``T.tvm_thread_allreduce``, ``T.tvm_storage_sync``,
  ``T.tvm_stack_*`` ... build ``CallKind.BUILTIN`` calls named as TVM's ops without the
  ``tir.`` prefix (:data:`RUNTIME_BUILTINS` lists them and their result types).
"""

from __future__ import annotations

from typing import Any

from ..builder import Frame, IRBuilder
from ..frames import PrimFuncFrame
from ..ir import (
    Add,
    AttrStmt,
    Buffer,
    BufferLoad,
    Call,
    CallKind,
    IntImm,
    IterKind,
    IterVar,
    PrimExpr,
    Range,
    StringImm,
    Sub,
    Var,
    as_dtype,
    structural_equal,
)
from ._common import DTypeArg, as_expr, builder, index_expr, to_dtype

__all__ = [
    "RUNTIME_BUILTINS",
    "LaunchThreadFrame",
    "address_of",
    "call_cpacked",
    "call_packed",
    "env_thread",
    "launch_thread",
    "llvm_lookup_intrinsic_id",
    "prefetch",
    "tvm_access_ptr",
    "tvm_stack_alloca",
    "tvm_stack_make_array",
    "tvm_stack_make_shape",
    "tvm_storage_sync",
    "tvm_thread_allreduce",
    "type_annotation",
]

RUNTIME_BUILTINS: dict[str, str | None] = {
    "tvm_call_packed": "int32",
    "tvm_call_cpacked": "int32",
    "address_of": "handle",
    "tvm_access_ptr": "handle",
    "type_annotation": None,  # typed by its dtype argument
    "tvm_thread_allreduce": "handle",
    "tvm_storage_sync": "int32",
    "tvm_stack_alloca": "handle",
    "tvm_stack_make_shape": "handle",
    "tvm_stack_make_array": "handle",
}
"""Builtin op name -> result type (None: given by the call) of the runtime builtins."""


def _args(args: tuple[Any, ...], what: str) -> tuple[PrimExpr, ...]:
    return tuple(StringImm(a) if isinstance(a, str) else as_expr(a, what) for a in args)


def _call(dtype: DTypeArg, op: str, args: tuple[Any, ...]) -> PrimExpr:
    return Call(to_dtype(dtype), op, _args(args, f"T.{op}"), CallKind.BUILTIN)


def call_packed(name: str, *args: Any) -> PrimExpr:
    """``T.call_packed("f", ...)``: call the TVM packed function ``f`` (int32 result).

    There is no TVM runtime here: it parses, prints and compares; the build refuses it.

    Parameters
    ----------
    name : str
        The packed function's registered name.
    *args : PrimExpr, number or str
        Its arguments.

    Returns
    -------
    PrimExpr
        The ``tvm_call_packed`` builtin call.

    Examples
    --------
    >>> print(T.call_packed("my_func", T.int32(1)).op)
    tvm_call_packed
    """
    if not isinstance(name, str):
        raise TypeError(f"T.call_packed: the function name must be a string, got {name!r}")
    return _call("int32", "tvm_call_packed", (name, *args))


def call_cpacked(name: str, *args: Any) -> PrimExpr:
    """``T.call_cpacked("f", ...)``: call the C packed function ``f`` (int32 result).

    There is no TVM runtime here: it parses, prints and compares; the build refuses it.

    Parameters
    ----------
    name : str
        The C function's symbol.
    *args : PrimExpr, number or str
        Its arguments.

    Returns
    -------
    PrimExpr
        The builtin call (``int32``).

    Examples
    --------
    >>> print(T.call_cpacked("my_func", T.int32(1)).op)
    tvm_call_cpacked
    """
    if not isinstance(name, str):
        raise TypeError(f"T.call_cpacked: the function name must be a string, got {name!r}")
    return _call("int32", "tvm_call_cpacked", (name, *args))


def address_of(load: Any, dtype: Any = None) -> PrimExpr:
    """``T.address_of(A[i])``: the address of a buffer element (a handle).

    ``dtype`` is accepted and ignored, as TVM's ``T.address_of`` does (its printer writes
    ``dtype="handle"``).

    Parameters
    ----------
    load : BufferLoad
        The element, ``A[i]``.
    dtype : optional
        Accepted and ignored.

    Returns
    -------
    PrimExpr
        A ``handle`` (pass it to extern calls).

    Examples
    --------
    >>> @T.prim_func
    ... def copy_tail(A: T.Buffer((4,), "float32"), B: T.Buffer((2,), "float32")):
    ...     T.evaluate(T.call_extern("handle", "memcpy", T.address_of(B[0]),
    ...                              T.address_of(A[2]), 8))
    >>> b = np.zeros(2, dtype="float32")
    >>> tvmscript.build(copy_tail)(np.arange(4, dtype="float32"), b); print(b)
    [2. 3.]
    """
    del dtype
    if not isinstance(load, BufferLoad):
        raise TypeError(
            f"T.address_of: expected a buffer element such as A[i], got {type(load).__name__}"
        )
    return Call(as_dtype("handle"), "address_of", (load,), CallKind.BUILTIN)


def llvm_lookup_intrinsic_id(name: str) -> StringImm:
    """``T.llvm_lookup_intrinsic_id("llvm.ctpop.i8")``: the intrinsic, for the first
    argument of ``T.call_llvm_(pure_)intrin``.

    TVM returns LLVM's numeric id, which changes between LLVM versions; here the name
    stands for the intrinsic (the call prints with the name and builds from it).

    Parameters
    ----------
    name : str
        An ``llvm.*`` intrinsic name.

    Returns
    -------
    StringImm

    Examples
    --------
    >>> print(T.llvm_lookup_intrinsic_id("llvm.sqrt"))
    StringImm('llvm.sqrt')
    """
    if not isinstance(name, str) or not name.startswith("llvm."):
        raise ValueError(f"T.llvm_lookup_intrinsic_id: expected an 'llvm.*' name, got {name!r}")
    return StringImm(name)


def prefetch(buffer: Any, bounds: Any) -> PrimExpr:
    """``T.prefetch(A, [T.Range(0, 8), ...])``: a hint to fetch a region of ``A`` into cache.

    TVM builds a ``Prefetch`` statement; we build the builtin call ``prefetch(A[mins],
    extents...)`` (a bare line evaluates it). The CPU build prefetches the region's first
    element (``llvm.prefetch``); the interpreter ignores it.

    Parameters
    ----------
    buffer : Buffer
        The buffer.
    bounds : list of Range
        One ``T.Range`` per dimension.

    Returns
    -------
    PrimExpr
        The ``prefetch`` builtin call (use with ``T.evaluate``).

    Examples
    --------
    >>> A = T.Buffer((16,), "float32")
    >>> print(T.prefetch(A, [T.Range(0, 16)]).op)
    prefetch
    """
    if not isinstance(buffer, Buffer):
        raise TypeError(f"T.prefetch: expected a Buffer, got {type(buffer).__name__}")
    ranges = list(bounds)
    if len(ranges) != buffer.ndim or not all(isinstance(r, Range) for r in ranges):
        raise TypeError(
            f"T.prefetch: expected {buffer.ndim} T.Range bounds for buffer {buffer.name!r}"
        )
    start = BufferLoad(buffer, tuple(r.min for r in ranges))
    return Call(
        as_dtype("int32"), "prefetch", (start, *(_extent(r) for r in ranges)), CallKind.BUILTIN
    )


def _extent(bounds: Range) -> PrimExpr:
    """The extent of a hint's range; ``T.Range(x, x + e)`` gives ``e``, not ``x + e - x``:
    the printer writes every hint that way, so a hint whose extent was simplified (``1``)
    parses back to itself."""
    extent = bounds.extent
    if (
        isinstance(extent, Sub)
        and isinstance(extent.a, Add)
        and structural_equal(extent.a.a, extent.b)
        and structural_equal(extent.b, bounds.min)
    ):
        return extent.a.b
    return extent


def type_annotation(dtype: DTypeArg) -> PrimExpr:
    """``T.type_annotation("float32")``: a value that only carries a type.

    Parameters
    ----------
    dtype : str or type object
        The carried type.

    Returns
    -------
    PrimExpr
        A call of that type, without arguments (``T.tvm_access_ptr``'s first argument).

    Examples
    --------
    >>> print(T.type_annotation("float32").dtype)
    float32
    """
    return Call(to_dtype(dtype), "type_annotation", (), CallKind.BUILTIN)


def tvm_access_ptr(ptype: Any, data: Any, offset: Any, extent: Any, rw_mask: Any) -> PrimExpr:
    """``T.tvm_access_ptr(T.type_annotation("float32"), A.data, off, n, rw)``.

    A pointer to ``extent`` elements of ``data`` from ``offset``; built as ``data + offset``
    elements. ``A.access_ptr("r")`` builds one for a buffer.

    Parameters
    ----------
    ptype : PrimExpr
        ``T.type_annotation(dtype)`` of the elements.
    data : Var
        The data pointer.
    offset, extent : int or PrimExpr
        The first element and the element count.
    rw_mask : int
        1 read, 2 write, 3 both.

    Returns
    -------
    PrimExpr
        A ``handle``.

    Examples
    --------
    >>> @T.prim_func
    ... def copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    ...     T.evaluate(T.call_extern("handle", "memcpy", B.access_ptr("w"), A.access_ptr("r"), 16))
    >>> b = np.zeros(4, dtype="float32")
    >>> tvmscript.build(copy)(np.arange(4, dtype="float32"), b); print(b)
    [0. 1. 2. 3.]
    """
    return _call("handle", "tvm_access_ptr", (ptype, data, offset, extent, rw_mask))


def tvm_thread_allreduce(*args: Any) -> PrimExpr:
    """``T.tvm_thread_allreduce(n, values..., cond, results..., threads...)``: a reduction
    across GPU threads, inside ``T.attr(T.comm_reducer(...), "reduce_scope", ...)``.

    The CPU build runs the thread loops around it serially (each iteration computes the
    whole reduction); elsewhere it is refused.

    Parameters
    ----------
    *args : PrimExpr
        The number of values, the values, the condition, the result pointers and the
        thread variables, as in TVM.

    Returns
    -------
    PrimExpr
        The builtin call (``handle``); use it with ``T.evaluate``.
    """
    return _call("handle", "tvm_thread_allreduce", args)


def tvm_storage_sync(scope: str) -> PrimExpr:
    """``T.tvm_storage_sync("shared")``: a barrier over ``scope`` memory (GPU).

    It parses, prints and compares; the CPU build refuses it.

    Parameters
    ----------
    scope : str
        ``"shared"``, ``"global"``, ``"warp"``.

    Returns
    -------
    PrimExpr

    Examples
    --------
    >>> print(T.tvm_storage_sync("shared").op)
    tvm_storage_sync
    """
    return _call("int32", "tvm_storage_sync", (scope,))


def tvm_stack_alloca(kind: str, count: Any) -> PrimExpr:
    """``T.tvm_stack_alloca("arg_value", n)``: stack space for packed-call arguments.

    There is no TVM runtime here: it parses, prints and compares; the build refuses it.

    Parameters
    ----------
    kind : str
        ``"arg_value"``, ``"arg_tcode"``, ``"shape"``, ``"array"``.
    count : int or PrimExpr
        How many entries.

    Returns
    -------
    PrimExpr
        The builtin call (``handle``).

    Examples
    --------
    >>> print(T.tvm_stack_alloca("arg_value", 2).dtype)
    handle
    """
    return _call("handle", "tvm_stack_alloca", (kind, count))


def tvm_stack_make_shape(*dims: Any) -> PrimExpr:
    """``T.tvm_stack_make_shape(d0, d1, ...)``: a shape array on the stack.

    There is no TVM runtime here: it parses, prints and compares; the build refuses it.

    Parameters
    ----------
    *dims : int or PrimExpr
        The extents.

    Returns
    -------
    PrimExpr
        The builtin call (``handle``).

    Examples
    --------
    >>> print(T.tvm_stack_make_shape(4, 8).dtype)
    handle
    """
    return _call("handle", "tvm_stack_make_shape", dims)


def tvm_stack_make_array(*args: Any) -> PrimExpr:
    """``T.tvm_stack_make_array(data, shape, strides, ndim, dtype, offset)``: a DLTensor
    on the stack.

    There is no TVM runtime here: it parses, prints and compares; the build refuses it.

    Parameters
    ----------
    *args : PrimExpr
        ``data, shape, strides, ndim, dtype, offset``, as in TVM.

    Returns
    -------
    PrimExpr
        The builtin call (``handle``).

    Examples
    --------
    >>> h = T.handle()
    >>> print(T.tvm_stack_make_array(h, h, h, 1, T.type_annotation("float32"), 0).op)
    tvm_stack_make_array
    """
    return _call("handle", "tvm_stack_make_array", args)


# -- threads ---------------------------------------------------------------------------


def _thread_var_name(tag: str) -> str:
    return tag.replace(".", "_")


def _env_table(what: str) -> dict[int, tuple[Var, str]]:
    # env_thread vars and their tags live on the function being built: launch_thread(v)
    # must find the tag of the var ``v`` that env_thread made.
    # A fragment built without a function keeps them on the builder itself.
    b = builder(what)
    owner: Any = next((f for f in reversed(b.frames) if isinstance(f, PrimFuncFrame)), b)
    table: dict[int, tuple[Var, str]] | None = getattr(owner, "_env_threads", None)
    if table is None:
        table = {}
        owner._env_threads = table
    return table


def env_thread(thread_tag: str, dtype: DTypeArg = "int32") -> Var:
    """``T.env_thread("threadIdx.x")``: a thread index var, launched by ``T.launch_thread``.

    Parameters
    ----------
    thread_tag : str
        The thread axis (``"threadIdx.x"``, ``"blockIdx.y"``, ...).
    dtype : str
        The variable's integer type.

    Returns
    -------
    Var

    Examples
    --------
    >>> @T.prim_func
    ... def launched(A: T.Buffer((8,), "float32")):
    ...     tx = T.env_thread("threadIdx.x")
    ...     with T.launch_thread(tx, 8):
    ...         A[tx] = T.float32(0)
    >>> '"thread_extent", 8' in launched.script()
    True
    """
    if not isinstance(thread_tag, str) or not thread_tag:
        raise TypeError(
            f"T.env_thread: expected a thread tag such as 'threadIdx.x', got {thread_tag!r}"
        )
    var = Var(_thread_var_name(thread_tag), to_dtype(dtype))
    _env_table("T.env_thread")[id(var)] = (var, thread_tag)
    return var


class LaunchThreadFrame(Frame):
    """``T.launch_thread(...)``: an ``AttrStmt(IterVar, "thread_extent", extent)`` scope."""

    kind = "T.launch_thread"

    def __init__(self, iter_var: IterVar, extent: PrimExpr) -> None:
        super().__init__()
        self.iter_var = iter_var
        self.extent = extent

    def value(self) -> Any:
        return self.iter_var.var

    def finalize(self, builder: IRBuilder) -> None:
        stmt = AttrStmt(self.iter_var, "thread_extent", self.extent, self.body(), span=self.span)
        builder.add_stmt(stmt, self.kind)


def launch_thread(thread: Var | str, extent: Any) -> LaunchThreadFrame:
    """``with T.launch_thread(thread, extent):`` runs its body on ``extent`` GPU threads.

    Builds ``AttrStmt(IterVar, "thread_extent", extent)``. It parses, prints and compares;
    the CPU build refuses it.

    Parameters
    ----------
    thread : Var or str
        A ``T.env_thread`` variable (the extent is converted to its type), or a thread tag
        (then the frame yields a new variable of the extent's type).
    extent : int or PrimExpr
        The number of threads.

    Returns
    -------
    LaunchThreadFrame

    Examples
    --------
    >>> @T.prim_func
    ... def blocks(A: T.Buffer((4,), "int32")):
    ...     bx = T.launch_thread("blockIdx.x", 4)
    ...     A[bx] = bx
    >>> '"blockIdx.x"' in blocks.script()
    True
    """
    ext = index_expr(extent, "T.launch_thread")
    if isinstance(thread, str):
        # A new thread var takes the extent's type (TVM: T.int64 extent, int64 var).
        tag = thread
        var = Var(_thread_var_name(tag), ext.dtype)
    elif isinstance(thread, Var):
        entry = _env_table("T.launch_thread").get(id(thread))
        if entry is None or entry[0] is not thread:
            raise TypeError(f"T.launch_thread: {thread.name!r} is not a var made by T.env_thread")
        var, tag = entry
    else:
        raise TypeError(
            "T.launch_thread: expected a thread tag such as 'threadIdx.x' or a T.env_thread "
            f"var, got {type(thread).__name__}"
        )
    if ext.dtype != var.dtype:
        ext = ext.astype(var.dtype)
    iter_var = IterVar(var, Range(IntImm(var.dtype, 0), ext), IterKind.THREAD, tag)
    return LaunchThreadFrame(iter_var, ext)
