"""``T.return_tensors``: return ``T.compute`` tensors from a kernel (``return D, E``).

A ``T.compute`` without ``out=`` allocates its result at the function's root
block: until the ``bufferize`` pass runs, such a buffer is a *tensor* (a value
written once by its compute nest; where it lives is not decided yet). Returning
tensors records them, in order, in the function attribute :data:`RETURNS_ATTR`
(a tuple of the Buffers) and the span of the ``return`` in
:data:`RETURNS_SPAN_ATTR`. ``bufferize`` turns each returned tensor into an
output parameter appended after the inputs (``"num_outputs"`` attr); the printer
prints the attribute back as ``return D, E`` at the end of the body.
"""

from __future__ import annotations

from ..builder import IRBuilderError
from ..frames import BlockFrame, PrimFuncFrame
from ..ir import Buffer
from ._common import builder, span

__all__ = ["RETURNS_ATTR", "RETURNS_SPAN_ATTR", "return_tensors"]

RETURNS_ATTR = "tensor_returns"
"""PrimFunc attr: the tuple of returned tensor Buffers, in return order."""

RETURNS_SPAN_ATTR = "tensor_returns_span"
"""PrimFunc attr: the Span of the ``return`` statement (None when unknown)."""


def return_tensors(*buffers: Buffer) -> None:
    """Record ``buffers`` (root-level ``T.compute`` results) as the function's results.

    Called once per function, after the computes (the parser maps ``return D, E``
    to it). Raises :class:`IRBuilderError`/``TypeError`` on anything but distinct
    tensors allocated by the function itself at its root. The built kernel allocates the
    results and returns them (one array, or a tuple).

    Parameters
    ----------
    *buffers : Buffer
        The results, in order.

    Returns
    -------
    None

    Examples
    --------
    >>> @T.prim_func
    ... def pair(A: T.Buffer((2,), "int32")):
    ...     D = T.compute((2,), lambda i: A[i] + 1)
    ...     E = T.compute((2,), lambda i: A[i] * 2)
    ...     T.return_tensors(D, E)
    >>> d, e = tvmscript.build(pair)(np.array([3, 4], dtype="int32")); print(d, e)
    [4 5] [6 8]
    """
    b = builder("T.return_tensors")
    frame = b.find(PrimFuncFrame)
    if frame is None:
        raise IRBuilderError("T.return_tensors must be called inside T.prim_func")
    top = b.top()
    # The printer writes the implicit root block out as `with T.block("root"):`, so a
    # return at the end of an explicit root block (directly in the function) is the same.
    explicit_root = (
        isinstance(top, BlockFrame)
        and top.name == "root"
        and not top.iter_vars
        and len(b.frames) >= 2
        and b.frames[-2] is frame
    )
    if top is not frame and not explicit_root:
        where = "nothing" if top is None else top.kind
        raise IRBuilderError(
            "T.return_tensors (return) must be at the top level of the function body, "
            f"not inside {where}"
        )
    roots = list(frame.root_alloc_buffers)
    if explicit_root and isinstance(top, BlockFrame):
        roots += top.alloc_buffers
    if RETURNS_ATTR in frame.attrs:
        raise IRBuilderError("T.return_tensors: the function already returns tensors")
    if not buffers:
        raise IRBuilderError("T.return_tensors needs at least one tensor")
    for index, buffer in enumerate(buffers):
        if not isinstance(buffer, Buffer):
            raise TypeError(
                f"T.return_tensors: result {index} must be a tensor from T.compute, "
                f"got {type(buffer).__name__}"
            )
        if any(p is buffer for p in frame.buffer_map.values()):
            raise IRBuilderError(
                f"T.return_tensors: {buffer.name!r} is a parameter; only tensors computed "
                "by the function (T.compute without out=) can be returned"
            )
        if not any(a is buffer for a in roots):
            raise IRBuilderError(
                f"T.return_tensors: {buffer.name!r} is not a tensor computed at the "
                "function's top level (T.compute without out=)"
            )
        if any(other is buffer for other in buffers[:index]):
            raise IRBuilderError(f"T.return_tensors: {buffer.name!r} is returned twice")
    frame.attrs[RETURNS_ATTR] = tuple(buffers)
    frame.attrs[RETURNS_SPAN_ATTR] = span()
