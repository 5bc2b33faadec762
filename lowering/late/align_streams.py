"""Large write-only arrays ("streams") and the ``align_streams`` pass.

Code generation writes a large array the function never reads with non-temporal stores,
which skip the read-for-ownership of every cache line (``backend/codegen/streaming.py``).
Those need aligned addresses, and numpy only guarantees element alignment, while a stencil
even writes ``B[i + 1, j + 1]``: one element past the row start. This pass moves such vector
loops onto cache-line boundaries at run time::

    for jo in range(E):                               # every value a lane-wise function
        X[Ramp(c + jo*L, 1, L)] = f(Ramp(a + jo*L, 1, L), ...)   # of its own position
    # becomes
    q = elements from X[c] to the next 64-byte boundary;  n = (E*L - q) // L;  r = E*L - q - n*L
    t = f(Ramp(a, 1, L), ...);  X[c + u] = t[u] for u < q                   # head
    for jo in range(n):
        X[Ramp(c + q + jo*L, 1, L)] = f(Ramp(a + q + jo*L, 1, L), ...)    # aligned stores
    t = f(Ramp(a + (E-1)*L, 1, L), ...);  X[c + E*L - r + u] = t[L - r + u] for u < r  # tail

Head and tail compute whole vectors of the original loop (vector math stays vector) into a
small local temporary and store only the lanes outside the aligned part, so no cache line
is written by both kinds of store. Every element gets the value it had before, but the
loads are regrouped, which is exact only while the other arrays read do not overlap ``X``:
the rewrite is versioned on a run-time no-overlap test, the original loop running otherwise
-- and when the shift is 0, since the original loop is then aligned already. It applies
where every vector in the value is built lane by lane (arithmetic, loads, gathers) from
unit-stride ramps stepping ``L`` per iteration and broadcasts of something the loop does not
change, a vector spans whole cache lines, nothing can trap or call out, and the loop runs at
least twice.
"""

from __future__ import annotations

from collections.abc import Callable

from irbuilder.ir import (
    GE,
    NE,
    Add,
    Allocate,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DeclBuffer,
    Div,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    Let,
    LetStmt,
    Mod,
    Mul,
    PrimExpr,
    PrimFunc,
    Ramp,
    SeqStmt,
    Shuffle,
    Stmt,
    StmtExprMutator,
    StmtExprVisitor,
    Sub,
    Var,
    as_dtype,
    make_data_var,
    post_order_visit,
)

from ..analysis.loads import LoadCollector, reads_memory
from ..analysis.substitute import substitute_expr
from ..analysis.vars import depends_on, free_vars
from ..arith.canonical import linear_coefficient
from ..pass_infra import FunctionPass, PassContext, function_pass
from ..target import as_target
from ..transforms.unroll import copy_with_fresh_vars
from .versioning import LoopRewriter, all_of, byte_range, no_overlap_checks, rewrite_loops

__all__ = [
    "SHIFT_NAME",
    "STREAMING_MIN_BYTES",
    "STREAMING_MIN_FOOTPRINT",
    "streaming_min_footprint",
    "align_loop",
    "align_streams",
    "mark_streams",
    "STREAMS_ATTR",
    "streamed_data_vars",
    "StreamLoopRewriter",
    "TRANSPOSED_ATTR",
    "inline_lets",
    "rewrite_stream_loops",
    "stream_size_tests",
    "streaming_data_vars",
]

STREAMING_MIN_BYTES = 16 << 20
"""Smallest array (bytes) written with non-temporal stores: far beyond L2, and data that size
will not be found in cache by whoever reads it next anyway."""

STREAMS_ATTR = "tvms.streaming_stores"
"""Function attribute set by ``mark_streams``: positions (in ``params``) of the buffer
parameters whose contiguous vector stores code generation makes non-temporal."""

STREAMING_MIN_FOOTPRINT = 48 << 20
"""Smallest total size (bytes) of a function's parameter arrays for any of them to stream.
Below it, arrays and output together fit in (or near) a large last-level cache (32 MiB on
this project's reference host), so a kernel called again on the same arrays finds them in
cache, and the next kernel reading the output would too: non-temporal stores would push
the output out to memory for nothing (measured: a 16 MiB bias + relu over a 16 MiB input
took 0.38 ms streaming against 0.22 ms with ordinary stores)."""

TRANSPOSED_ATTR = "tvms.transposed_outputs"
"""Function attribute set by ``transpose_tiles``: positions (in ``params``) of the buffer
parameters it writes in transposed tiles. Such an array streams whenever the parameter
arrays reach :data:`STREAMING_MIN_FOOTPRINT`, even where a large last-level cache keeps
other arrays cached (:func:`streaming_min_footprint`): a tile writes a line in each of
``L`` rows, and with ordinary stores each of those lines is first read for ownership
(Intel AVX-512 host, 480 MiB L3, a 4096-square float32 transpose: 37 ms with ordinary
stores, 12 ms streamed; 3072: 17 -> 3.2 ms)."""

SHIFT_NAME = "stream_shift"
"""Name of the variable holding the run-time shift (marks loops already aligned)."""

_U64 = as_dtype("uint64")
_LINE = 64
"""Stores are shifted onto cache-line boundaries: a line written partly by ordinary stores
and partly by non-temporal ones is flushed from the cache mid-way (measured: slower than no
streaming at all)."""


def streaming_min_footprint() -> int:
    """:data:`STREAMING_MIN_FOOTPRINT`, or for the host target one and a half times its
    last-level cache when that is larger: arrays a 480 MiB L3 holds stay there between calls
    (an Intel host: a 64 MiB outer product took 1.37 ms streamed, 1.21 ms with ordinary
    stores, numba's 1.21). A named CPU's caches are not known: the default holds there."""
    target = PassContext.current().target
    llc = as_target(target).last_level_cache_bytes if target is not None else None
    return max(STREAMING_MIN_FOOTPRINT, llc * 3 // 2) if llc else STREAMING_MIN_FOOTPRINT


def streaming_data_vars(func: PrimFunc, symbolic: bool = False) -> frozenset[int]:
    """Ids of the data vars of ``func``'s write-only parameter arrays of at least
    :data:`STREAMING_MIN_BYTES` (never loaded, never handed to a call), when the parameter
    arrays together reach :func:`streaming_min_footprint`. With ``symbolic``, arrays whose
    size (or the total) is symbolic count too: code generation tests the sizes at run time
    (:func:`stream_size_tests`)."""
    total = _static_footprint(func)
    only: frozenset[int] | None = None  # when set, the only arrays that may stream
    if total is not None and total < streaming_min_footprint():
        only = _listed_data_vars(func, TRANSPOSED_ATTR) if total >= STREAMING_MIN_FOOTPRINT \
            else None
        if not only:
            return frozenset()
    candidates: set[int] = set()
    for buffer in func.buffer_map.values():
        if buffer.dtype.is_bool or buffer.dtype.lanes != 1:
            continue
        size = buffer.dtype.itemsize
        for extent in buffer.shape:
            if isinstance(extent, IntImm):
                size *= extent.value
            elif symbolic and extent.dtype.is_int and not reads_memory(extent):
                size = max(size, STREAMING_MIN_BYTES)  # decided at run time
            else:
                size = 0
        if size and size >= STREAMING_MIN_BYTES:
            candidates.add(id(buffer.data))
    if not candidates:
        return frozenset()
    excluded: set[int] = set()

    def visit(node: object) -> None:
        if isinstance(node, BufferLoad):
            excluded.add(id(node.buffer.data))
        elif isinstance(node, Call):
            for arg in node.args:
                excluded.update(id(v) for v in free_vars(arg))

    post_order_visit(func.body, visit)
    streams = candidates - excluded
    return frozenset(streams if only is None else streams & only)


_I64 = as_dtype("int64")


def _parameter_buffers(func: PrimFunc) -> list[Buffer]:
    seen: set[int] = set()
    out = []
    for buffer in func.buffer_map.values():
        if id(buffer.data) not in seen:
            seen.add(id(buffer.data))
            out.append(buffer)
    return out


def _static_bytes(buffer: Buffer) -> int | None:
    size = buffer.dtype.itemsize * buffer.dtype.lanes
    for extent in buffer.shape:
        if not isinstance(extent, IntImm):
            return None
        size *= extent.value
    return size


def _static_footprint(func: PrimFunc) -> int | None:
    """Total bytes of the parameter arrays, or None when a size is symbolic."""
    total = 0
    for buffer in _parameter_buffers(func):
        size = _static_bytes(buffer)
        if size is None:
            return None
        total += size
    return total


def _bytes_expr(buffer: Buffer) -> PrimExpr:
    size: PrimExpr = IntImm(_I64, buffer.dtype.itemsize * buffer.dtype.lanes)
    for extent in buffer.shape:
        size = Mul(size, extent if extent.dtype == _I64 else Cast(_I64, extent))
    return size


def stream_size_tests(func: PrimFunc) -> dict[int, PrimExpr | None]:
    """For each write-only array :func:`streaming_data_vars` (``symbolic=True``) lists (by
    data var id), the run-time test that it is a stream: its size at least
    :data:`STREAMING_MIN_BYTES` and the parameter arrays' total at least
    :data:`STREAMING_MIN_FOOTPRINT`, each part present only when symbolic (``None``: always
    a stream)."""
    streams = streaming_data_vars(func, symbolic=True)
    if not streams:
        return {}
    total_known = _static_footprint(func) is not None
    total: PrimExpr | None = None
    if not total_known:
        for buffer in _parameter_buffers(func):
            size = _bytes_expr(buffer)
            total = size if total is None else Add(total, size)
    out: dict[int, PrimExpr | None] = {}
    for buffer in _parameter_buffers(func):
        if id(buffer.data) not in streams:
            continue
        parts: list[PrimExpr] = []
        if _static_bytes(buffer) is None:
            parts.append(GE(_bytes_expr(buffer), IntImm(_I64, STREAMING_MIN_BYTES)))
        if total is not None:
            parts.append(GE(total, IntImm(_I64, STREAMING_MIN_FOOTPRINT)))
        out[id(buffer.data)] = all_of(parts) if parts else None
    return out


class _Shape(StmtExprVisitor):
    """Whether a stored value is lane-wise in positions that step ``lanes`` per iteration."""

    def __init__(self, var: Var, lanes: int) -> None:
        self.var = var
        self.lanes = lanes
        self.ok = True

    def visit_expr(self, expr: PrimExpr) -> None:
        if not self.ok:
            return
        if isinstance(expr, Ramp):
            stride = expr.stride
            if not (
                isinstance(stride, IntImm)
                and stride.value == 1
                and expr.lanes == self.lanes
                and linear_coefficient(expr.base, self.var) == self.lanes
            ):
                self.ok = False
            return  # the base may use the loop var: that is what the shift moves
        if isinstance(expr, Broadcast):
            if depends_on(expr.value, self.var):
                self.ok = False
            return
        if isinstance(expr, (Shuffle, Let)) or expr is self.var:
            self.ok = False
            return
        if isinstance(expr, Call) and expr.kind is CallKind.EXTERN:
            self.ok = False
            return
        # Everything else is lane-wise: arithmetic, casts, selects and loads (a gather's
        # lane u reads at lane u of its index, itself checked here), so the value at a
        # position does not depend on where the vector starts.
        super().visit_expr(expr)


class _ShiftRamps(StmtExprMutator):
    def __init__(self, shift: PrimExpr) -> None:
        self.shift = shift

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if isinstance(expr, Ramp):
            shift = self.shift if self.shift.dtype == expr.base.dtype else Cast(
                expr.base.dtype, self.shift
            )
            return Ramp(Add(expr.base, shift), expr.stride, expr.lanes, span=expr.span)
        return super().visit_expr(expr)


def align_loop(
    loop: For, streams: frozenset[int], size_tests: dict[int, PrimExpr | None]
) -> Stmt | None:
    """The loop shifted onto aligned stores (module doc), or None when it does not apply.
    ``size_tests`` (from :func:`stream_size_tests`, over the same streams) gives each
    stream's run-time test."""
    if loop.kind is not ForKind.SERIAL:
        return None
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        return None
    extent = loop.extent
    if isinstance(extent, IntImm):
        if extent.value < 2:
            return None
    elif not extent.dtype.is_int or reads_memory(extent):
        return None
    store = inline_lets(loop.body)
    if store is None:
        return None
    target = store.buffer
    if id(target.data) not in streams or len(store.indices) != 1:
        return None
    (index,) = store.indices
    item = target.dtype.itemsize
    if not isinstance(index, Ramp) or (index.lanes * item) % _LINE or _LINE % item:
        return None
    var = loop.loop_var
    shape = _Shape(var, index.lanes)
    shape.visit_expr(index)
    shape.visit_expr(store.value)
    if not shape.ok:
        return None
    effects = LoadCollector(traps_are_effects=True)
    effects.visit_expr(store.value)
    if effects.impure:
        return None
    written = byte_range(target)
    checks = None if written is None else no_overlap_checks(
        written, (load.buffer for load in effects.loads)
    )
    if checks is None:
        return None
    test = size_tests.get(id(target.data))
    if test is not None:
        checks = [test, *checks]

    idx_dtype = index.base.dtype
    lanes = index.lanes
    if isinstance(extent, IntImm):
        total: PrimExpr = IntImm(idx_dtype, extent.value * lanes)
        last_at: PrimExpr = IntImm(var.dtype, extent.value - 1)
    else:
        # A symbolic trip count: the loop must run at least twice; the array's run-time
        # size test (the one code generation applies to the non-temporal stores themselves)
        # comes below; otherwise the original loop runs.
        checks = [GE(extent, IntImm(extent.dtype, 2)), *checks]  # before the size test
        trips = extent if extent.dtype == idx_dtype else Cast(idx_dtype, extent)
        total = Mul(trips, IntImm(idx_dtype, lanes))
        last_at = Sub(extent, IntImm(extent.dtype, 1))
        if last_at.dtype != var.dtype:
            last_at = Cast(var.dtype, last_at)
    first = copy_with_fresh_vars(store, {var: IntImm(var.dtype, 0)})
    last = copy_with_fresh_vars(store, {var: last_at})
    assert isinstance(first, BufferStore) and isinstance(first.indices[0], Ramp)
    assert isinstance(last, BufferStore)
    start = first.indices[0].base  # element of X the loop writes first
    address = Add(Cast(_U64, target.data), Mul(Cast(_U64, start), IntImm(_U64, item)))
    line = IntImm(_U64, _LINE)
    gap = Mod(Sub(line, Mod(address, line)), line)  # bytes to the next line boundary
    # An array not even element aligned gets some shift below _LINE / item: its stores then
    # simply stay unaligned (and ordinary).
    shift = Var(SHIFT_NAME, idx_dtype)
    full = Var("stream_vectors", idx_dtype)
    rest = Var("stream_rest", idx_dtype)

    def const(value: int) -> IntImm:
        return IntImm(idx_dtype, value)

    shifted = For(
        var,
        loop.min,
        Cast(var.dtype, full) if var.dtype != idx_dtype else full,
        loop.kind,
        _ShiftRamps(shift).visit_stmt(store),
        loop.thread_binding,
        loop.annotations,
        span=loop.span,
    )
    # Head and tail: the first and the last vector of the original loop (whole vectors keep
    # vector math), of which only the lanes outside the aligned part are stored.
    head = _partial(first, const(0), shift, "stream_head")
    tail = _partial(last, Sub(const(lanes), rest), rest, "stream_tail")
    aligned_body = LetStmt(
        full,
        Div(Sub(total, shift), const(lanes)),
        LetStmt(
            rest,
            Sub(Sub(total, shift), Mul(full, const(lanes))),
            SeqStmt((head, copy_with_fresh_vars(shifted), tail)),
        ),
    )
    # Already on a boundary (shift 0), the original loop is the aligned one; with
    # overlapping arrays it is the only correct one.
    return LetStmt(
        shift,
        Cast(idx_dtype, Div(gap, IntImm(_U64, item)) if item > 1 else gap),
        IfThenElse(all_of([NE(shift, const(0)), *checks]), aligned_body, loop, span=loop.span),
    )


def inline_lets(body: Stmt) -> BufferStore | None:
    """The loop body's single store with the values of enclosing ``LetStmt``s substituted
    (recomputing a value used twice is left to LLVM), or None for any other body."""
    bindings: dict[Var, PrimExpr] = {}
    while isinstance(body, LetStmt):
        bindings[body.var] = substitute_expr(body.value, bindings)
        body = body.body
    if not isinstance(body, BufferStore):
        return None
    if not bindings:
        return body
    pure = LoadCollector(traps_are_effects=True)
    for value in bindings.values():
        pure.visit_expr(value)
    if pure.impure:
        return None  # an unused binding that may trap must still run
    value = substitute_expr(body.value, bindings)
    indices = tuple(substitute_expr(i, bindings) for i in body.indices)
    return BufferStore(body.buffer, value, indices, span=body.span)


def _partial(store: BufferStore, first_lane: PrimExpr, count: PrimExpr, name: str) -> Stmt:
    """Compute ``store``'s vector into a local temporary, then store lanes
    ``[first_lane, first_lane + count)`` of it one by one."""
    target = store.buffer
    (index,) = store.indices
    assert isinstance(index, Ramp)
    lanes = index.lanes
    dtype = index.base.dtype
    data = make_data_var(name, target.dtype)
    tmp = Buffer(name, data, (IntImm(dtype, lanes),), target.dtype)
    lane = Var("lane", dtype)
    at = Add(first_lane, lane)
    copy = For(
        lane,
        IntImm(dtype, 0),
        count,
        ForKind.SERIAL,
        BufferStore(target, BufferLoad(tmp, (at,)), (Add(index.base, at),)),
    )
    fill = BufferStore(tmp, store.value, (Ramp(IntImm(dtype, 0), IntImm(dtype, 1), lanes),))
    return Allocate(
        data,
        target.dtype,
        IntImm(dtype, lanes),
        IntImm(as_dtype("bool"), 1),
        DeclBuffer(tmp, SeqStmt((fill, copy))),
    )


class StreamLoopRewriter(LoopRewriter):
    """Offers every loop to ``rewrite(loop, streams, local_data)``; a ``LetStmt`` binding a
    variable named ``marker`` is an earlier run's output (the rewrites run twice)."""

    def __init__(
        self,
        local_data: set[int],
        streams: frozenset[int],
        rewrite: Callable[[For, frozenset[int], set[int]], Stmt | None],
        marker: str,
        inner_first: bool,
    ) -> None:
        super().__init__(local_data)
        self.streams = streams
        self.rewrite_loop = rewrite
        self.marker = marker
        self.inner_first = inner_first

    def rewrite(self, loop: For) -> Stmt | None:
        return self.rewrite_loop(loop, self.streams, self.local_data)

    def done(self, stmt: Stmt) -> bool:
        # Versioned already: both copies stay.
        return isinstance(stmt, LetStmt) and stmt.var.name == self.marker


def rewrite_stream_loops(
    func: PrimFunc,
    rewrite: Callable[[For, frozenset[int], set[int]], Stmt | None],
    marker: str,
    *,
    inner_first: bool = True,
    symbolic: bool = False,
) -> PrimFunc:
    """``func`` with ``rewrite`` offered every loop, when it has streaming arrays at all
    (``symbolic``: arrays of symbolic size count, see :func:`streaming_data_vars`)."""
    streams = streaming_data_vars(func, symbolic=symbolic)
    if not streams:
        return func
    return rewrite_loops(
        func,
        lambda local_data: StreamLoopRewriter(local_data, streams, rewrite, marker, inner_first),
    )


@function_pass("align_streams", opt_level=1)
def _align_streams(func: PrimFunc) -> PrimFunc:
    """Shift vector loops storing to large write-only arrays onto aligned addresses."""
    size_tests = stream_size_tests(func)
    return rewrite_stream_loops(
        func, lambda loop, streams, _local: align_loop(loop, streams, size_tests), SHIFT_NAME,
        inner_first=False, symbolic=True,
    )


align_streams: FunctionPass = _align_streams
"""The ``align_streams`` pass (a :class:`FunctionPass`)."""


@function_pass("mark_streams", opt_level=1)
def _mark_streams(func: PrimFunc) -> PrimFunc:
    """Record the function's streaming arrays in attr :data:`STREAMS_ATTR` (code generation
    reads it and analyses nothing itself; a listed array of symbolic size streams when its
    size is at least :data:`STREAMING_MIN_BYTES` at run time)."""
    streams = streaming_data_vars(func, symbolic=True)
    positions = [
        i for i, param in enumerate(func.params)
        if param in func.buffer_map and id(func.buffer_map[param].data) in streams
    ]
    if not positions or func.attrs.get(STREAMS_ATTR) == positions:
        return func
    return func.with_attr(STREAMS_ATTR, positions)


mark_streams: FunctionPass = _mark_streams
"""The ``mark_streams`` pass (a :class:`FunctionPass`)."""


def streamed_data_vars(func: PrimFunc) -> frozenset[int]:
    """Ids of the data vars of the parameters listed in ``func``'s :data:`STREAMS_ATTR`."""
    return _listed_data_vars(func, STREAMS_ATTR)


def _listed_data_vars(func: PrimFunc, attr: str) -> frozenset[int]:
    """Ids of the data vars of the buffer parameters whose positions ``func``'s attribute
    ``attr`` lists (:data:`STREAMS_ATTR`, :data:`TRANSPOSED_ATTR`)."""
    positions = func.attrs.get(attr) or ()
    out: set[int] = set()
    for position in positions:
        if not isinstance(position, int) or not 0 <= position < len(func.params):
            raise ValueError(f"{func.name}: attr {attr!r} lists a bad position {position!r}")
        buffer = func.buffer_map.get(func.params[position])
        if buffer is None:
            raise ValueError(
                f"{func.name}: attr {attr!r} lists parameter {position}, not a buffer"
            )
        out.add(id(buffer.data))
    return frozenset(out)
