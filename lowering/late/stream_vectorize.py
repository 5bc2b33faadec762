"""The ``vectorize_streams`` pass: serial loops that fill a large write-only array become
vector loops, so that code generation can write the array with non-temporal stores.

Non-temporal stores skip the read-for-ownership of every cache line written
(``backend/codegen/streaming.py``), but only explicit vector stores stream, and a loop
LLVM does not vectorize itself -- a gather ``O[i] = T[I[i]]`` on a host without fast
hardware gathers -- keeps one ordinary scalar store per element::

    for i in range(E):                      # O: a write-only parameter of >= 16 MiB
        O[c + i] = f(i)
    # becomes
    if <O overlaps no array f reads>:
        for i_outer in range(E // L):       # L elements = one 64-byte line per store
            O[Ramp(c + i_outer*L, 1, L)] = f(Ramp(i_outer*L, 1, L))
        <the remaining E % L iterations>
    else:
        <the loop as it was>

The vector loop loads ``L`` iterations' operands before storing their results, which is
exact only while the loaded arrays do not overlap ``O`` (``O`` itself is never loaded):
hence the run-time test. ``align_streams`` then moves the vector loop onto cache-line
boundaries. Applies to innermost serial loops with a constant trip count of at least
:data:`MIN_TRIP_COUNT` whose body is one scalar store into a streaming array
(:func:`~lowering.late.align_streams.streaming_data_vars`) at an index stepping one element per
iteration, with a value that cannot trap or call out (integer division, extern calls) and
that :mod:`lowering.transforms.vectorize` can widen. Measured on the benchmark suite's 16M-element
gather on an AVX2 Zen 3: about 15% faster than the scalar loop.
"""

from __future__ import annotations

from irbuilder.ir import (
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    PrimFunc,
    Stmt,
    Var,
    as_dtype,
)

from ..analysis.loads import LoadCollector
from ..arith.canonical import linear_coefficient
from ..pass_infra import FunctionPass, function_pass
from ..transforms.unroll import copy_with_fresh_vars
from ..transforms.vectorize import CannotVectorize, vectorize_for
from .align_streams import inline_lets, rewrite_stream_loops
from .versioning import all_of, byte_range, no_overlap_checks

__all__ = ["MIN_TRIP_COUNT", "VERSION_NAME", "vectorize_stream_loop", "vectorize_streams"]

MIN_TRIP_COUNT = 64
"""Shorter loops are not worth the test and the second copy (and write far less than a
streaming array holds)."""

VERSION_NAME = "stream_vectorized"
"""Name of the variable holding the no-overlap test (marks loops already rewritten)."""

_LINE = 64


def vectorize_stream_loop(loop: For, streams: frozenset[int], local_data: set[int]) -> Stmt | None:
    """``loop`` as a versioned vector loop (module doc), or None when it does not apply."""
    if loop.kind is not ForKind.SERIAL or loop.thread_binding is not None or loop.annotations:
        return None
    if not (isinstance(loop.extent, IntImm) and loop.extent.value >= MIN_TRIP_COUNT):
        return None
    if not isinstance(loop.min, IntImm):
        return None
    store = inline_lets(loop.body)
    if store is None or len(store.indices) != 1:
        return None
    target = store.buffer
    item = target.dtype.itemsize
    if id(target.data) not in streams or store.value.dtype.lanes != 1 or _LINE % item:
        return None
    (index,) = store.indices
    if index.dtype.lanes != 1 or linear_coefficient(index, loop.loop_var) != 1:
        return None
    effects = LoadCollector(traps_are_effects=True)
    effects.visit_expr(index)
    effects.visit_expr(store.value)
    if effects.impure:  # (the target itself is never loaded: it is a stream)
        return None
    written = byte_range(target)
    reads = (load.buffer for load in effects.loads)
    checks = None if written is None else no_overlap_checks(written, reads, local_data)
    if checks is None:
        return None
    lanes = _LINE // item
    vector_loop = For(
        loop.loop_var, loop.min, loop.extent, ForKind.VECTORIZED, store, span=loop.span
    )
    fresh = copy_with_fresh_vars(vector_loop)  # the original stays as the fallback copy
    assert isinstance(fresh, For)
    try:
        vectorized = vectorize_for(fresh, max_width=lanes, strict=True)
    except CannotVectorize:
        return None  # the value has no vector form
    if not checks:
        return vectorized  # reads only local arrays: nothing can overlap
    test = Var(VERSION_NAME, as_dtype("bool"))
    return LetStmt(test, all_of(checks), IfThenElse(test, vectorized, loop, span=loop.span))


@function_pass("vectorize_streams", opt_level=1)
def _vectorize_streams(func: PrimFunc) -> PrimFunc:
    """Vectorize serial loops filling large write-only arrays (see the module doc)."""
    return rewrite_stream_loops(func, vectorize_stream_loop, VERSION_NAME)


vectorize_streams: FunctionPass = _vectorize_streams
"""The ``vectorize_streams`` pass (a :class:`FunctionPass`)."""
