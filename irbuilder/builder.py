"""The imperative IRBuilder: a thread-local stack of builders, each with a frame stack.

A :class:`Frame` is a ``with``-context. Entering pushes it on the current
builder's frame stack; leaving always pops it and, only when no exception is in
flight, *finalizes* it: builds its IR node and hands it to the enclosing frame
(or, for a function or module, to the builder as its result).

A frame may also be entered *implicitly* (:meth:`Frame.enter_implicit`), the way
the parser handles ``x = T.bind(v)`` or ``A_data = T.allocate(...)`` written
without ``with``: such a frame stays open until the frame that encloses it is
closed, and is finalized just before it.

A builder may also build a statement *fragment*, as TVM's does: a statement
written, or a statement frame closed, while no frame is open becomes the
builder's result (``with IRBuilder() as ib: T.evaluate(0)``, then ``ib.get()``
is that ``Evaluate``). A fragment is one statement: a second one at the top
level is an error, since nothing says how the two should be combined.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, ClassVar, TypeVar

from .ir import IRModule, PrimFunc, Span, Stmt, seq

__all__ = ["Frame", "IRBuilder", "IRBuilderError", "current_span", "with_span"]


class IRBuilderError(RuntimeError):
    """Misuse of the IRBuilder (no builder, a statement in the wrong frame...).

    ``span``, when given, is where the IR at fault came from (a statement's span): a
    front end reports the error there rather than at the construct being closed."""

    def __init__(self, message: str, *, span: Span | None = None) -> None:
        super().__init__(message)
        self.span = span


_local = threading.local()


def _builders() -> list[IRBuilder]:
    stack: list[IRBuilder] | None = getattr(_local, "builders", None)
    if stack is None:
        stack = []
        _local.builders = stack
    return stack


_FrameT = TypeVar("_FrameT", bound="Frame")


class IRBuilder:
    """Builds one PrimFunc or IRModule through ``with``-frames; see the module doc.

    The current builder is thread-local, so two threads build independently;
    builders nest (the innermost ``with IRBuilder()`` is current).
    """

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.result: PrimFunc | IRModule | Stmt | None = None
        self._spans: list[Span | None] = []

    # -- the thread-local builder stack -----------------------------------------
    def __enter__(self) -> IRBuilder:
        _builders().append(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack = _builders()
        if not stack or stack[-1] is not self:
            raise IRBuilderError("IRBuilders must be closed in the reverse order of opening")
        try:
            if exc_type is None:
                self._close_implicit_frames()
        finally:
            stack.pop()

    def _close_implicit_frames(self) -> None:
        # A frame entered without ``with`` (``v = T.bind(x)`` in a fragment) has no enclosing
        # frame to close it: the end of the builder does, innermost first.
        while self.frames and all(f.implicit for f in self.frames):
            self._pop(self.frames[-1], finalize=True)

    @staticmethod
    def current(what: str = "this call") -> IRBuilder:
        """The innermost active builder of this thread; ``what`` names the caller in errors."""
        stack = _builders()
        if not stack:
            raise IRBuilderError(
                f"{what} needs an active IRBuilder: use `with IRBuilder() as ib:` "
                "(or write the kernel inside @T.prim_func)"
            )
        return stack[-1]

    @staticmethod
    def is_in_scope() -> bool:
        """Whether this thread has an active builder."""
        return bool(_builders())

    # -- results ----------------------------------------------------------------
    def get(self) -> PrimFunc | IRModule | Stmt:
        """The finished PrimFunc, IRModule or statement fragment; every frame must be closed.

        A fragment is the statement its outermost frame built: a ``For`` for a loop frame,
        a ``BlockRealize`` for ``T.block`` (a ``Block`` with ``no_realize=True``).
        """
        if self.frames:
            open_frames = ", ".join(f.kind for f in self.frames)
            raise IRBuilderError(
                f"IRBuilder.get() called while frames are still open: {open_frames}"
            )
        if self.result is None:
            raise IRBuilderError(
                "IRBuilder.get(): nothing was built (no T.prim_func finished and no statement "
                "was written)"
            )
        return self.result

    def set_result(self, node: PrimFunc | IRModule | Stmt, kind: str) -> None:
        """Record the finished top-level node; only one per builder."""
        if self.result is not None:
            if isinstance(node, Stmt):
                hint = (
                    "a fragment is one statement: write several inside one frame "
                    "(a loop, T.block, T.prim_func...)"
                )
            else:
                hint = (
                    "build several functions inside one I.ir_module() frame, or use one "
                    "IRBuilder per function"
                )
            raise IRBuilderError(
                f"{kind}: this IRBuilder already holds its result (a finished "
                f"{type(self.result).__name__}); {hint}"
            )
        self.result = node

    def replace_fragment(self, old: Stmt, new: Stmt) -> None:
        """Replace the fragment result ``old`` (a frame that wrote its statement first and
        its body afterwards, ``T.Assert``, completes it)."""
        if self.result is not old:
            raise IRBuilderError("IRBuilder.replace_fragment: the result is not that statement")
        self.result = new

    # -- frames -----------------------------------------------------------------
    def top(self) -> Frame | None:
        """The innermost open frame, or None."""
        return self.frames[-1] if self.frames else None

    def find(self, cls: type[_FrameT]) -> _FrameT | None:
        """The innermost open frame of class ``cls``, or None."""
        for frame in reversed(self.frames):
            if isinstance(frame, cls):
                return frame
        return None

    def add_stmt(self, stmt: Stmt, what: str) -> None:
        """Append ``stmt`` to the innermost frame, or with no frame open make it the
        builder's fragment result; ``what`` names the caller in errors."""
        top = self.top()
        if top is None:
            self.set_result(stmt, what)
            return
        if not top.holds_stmts:
            raise IRBuilderError(f"{what} cannot appear directly inside {top.kind}")
        top.stmts.append(stmt)

    def _push(self, frame: Frame) -> None:
        self.frames.append(frame)

    def _pop(self, frame: Frame, finalize: bool) -> None:
        if not any(f is frame for f in self.frames):
            raise IRBuilderError(f"{frame.kind} frame is not open in the current IRBuilder")
        while self.frames[-1] is not frame:
            inner = self.frames[-1]
            if finalize and not inner.implicit:
                raise IRBuilderError(
                    f"cannot close {frame.kind}: the inner frame {inner.kind} is still open"
                )
            self.frames.pop()
            inner.state = "closed"
            if finalize:
                inner.finalize(self)
        self.frames.pop()
        frame.state = "closed"
        if finalize:
            frame.finalize(self)

    # -- spans ------------------------------------------------------------------
    @property
    def span(self) -> Span | None:
        """The span stamped on nodes created now (innermost :meth:`with_span`)."""
        return self._spans[-1] if self._spans else None

    @contextmanager
    def with_span(self, span: Span | None) -> Iterator[None]:
        """Stamp ``span`` on every statement and frame created inside."""
        self._spans.append(span)
        try:
            yield
        finally:
            self._spans.pop()


def current_span() -> Span | None:
    """The current builder's span, or None without a builder."""
    stack = _builders()
    return stack[-1].span if stack else None


@contextmanager
def with_span(span: Span | None) -> Iterator[None]:
    """:meth:`IRBuilder.with_span` on the current builder."""
    with IRBuilder.current("with_span").with_span(span):
        yield


class Frame:
    """Base of all ``with``-frames; subclasses set ``kind`` and implement ``finalize``.

    ``kind`` is the user-facing name (``"T.serial"``) used in error messages.
    ``holds_stmts`` says whether statements may be appended directly to it;
    ``needs_stmt_parent`` whether the frame itself builds a statement (and so
    must be opened where statements are allowed: inside a frame holding
    statements, or with no frame open, as a fragment).
    """

    kind: str = "frame"
    holds_stmts: ClassVar[bool] = True
    needs_stmt_parent: ClassVar[bool] = True

    def __init__(self) -> None:
        # Constructing a frame already requires a builder, so that `T.serial(4)`
        # outside a builder fails at the call, naming the construct.
        IRBuilder.current(self.kind)
        self.span: Span | None = current_span()
        self.stmts: list[Stmt] = []
        self.implicit = False
        self.state = "new"

    def value(self) -> Any:
        """What ``with frame as x`` binds (a loop var, a buffer...); None by default."""
        return None

    def check_parent(self, parent: Frame | None) -> None:
        """Raise IRBuilderError when this frame cannot open inside ``parent``."""
        if not self.needs_stmt_parent or parent is None:
            return
        if not parent.holds_stmts:
            raise IRBuilderError(f"{self.kind} cannot appear directly inside {parent.kind}")

    def _open(self, implicit: bool) -> Any:
        if self.state != "new":
            raise IRBuilderError(f"{self.kind} frame entered twice")
        builder = IRBuilder.current(self.kind)
        self.check_parent(builder.top())
        self.implicit = implicit
        self.state = "open"
        builder._push(self)
        return self.value()

    def __enter__(self) -> Any:
        return self._open(implicit=False)

    def enter_implicit(self) -> Any:
        """Open without ``with``: closed (and finalized) when its enclosing frame closes."""
        return self._open(implicit=True)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.state == "closed":
            raise IRBuilderError(f"{self.kind} frame closed twice")
        if self.state == "new":
            raise IRBuilderError(f"{self.kind} frame closed before it was entered")
        IRBuilder.current(self.kind)._pop(self, finalize=exc_type is None)

    def body(self) -> Stmt:
        """The statements appended to this frame as one statement."""
        return seq(self.stmts)

    def finalize(self, builder: IRBuilder) -> None:
        """Build this frame's node and give it to the enclosing frame or the builder."""
        raise NotImplementedError(f"{type(self).__name__}.finalize")
