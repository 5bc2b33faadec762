"""Helpers of the bufferization tests: spans at the caller's line, running through the pipeline."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from backend.interp import interpret
from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import Allocate, PrimFunc, Span, post_order_visit
from lowering import PassContext, lower
from lowering.abi.boundary import allocate_outputs


def here(back: int = 1, offset: int = 0) -> Span:
    """A span covering the caller's source line (+ ``offset``), so explain can quote it."""
    frame = inspect.currentframe()
    assert frame is not None
    for _ in range(back):
        assert frame.f_back is not None
        frame = frame.f_back
    line = frame.f_lineno + offset
    return Span(frame.f_code.co_filename, line, 1, line, 2)


def kernel(name: str, body: Callable[[IRBuilder], None]) -> PrimFunc:
    """A prim_func built by ``body(builder)`` inside ``T.prim_func()``."""
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name(name)
            body(b)
    func = b.get()
    assert isinstance(func, PrimFunc)
    return func


def lowered(func: PrimFunc, opt_level: int = 3, always: bool = False,
            disabled: Sequence[str] = ()) -> PrimFunc:
    """``lower`` under a PassContext with the bufferize option and disabled passes."""
    config = {"bufferize": {"always_allocate": always}}
    with PassContext(config=config, disabled_passes=frozenset(disabled)):
        return lower(func, opt_level=opt_level)


def run(func: PrimFunc, inputs: Sequence[np.ndarray[Any, Any]], opt_level: int = 3,
        always: bool = False, disabled: Sequence[str] = ()) -> list[np.ndarray[Any, Any]]:
    """Lower, allocate outputs from the inputs' shapes, interpret; returns the outputs."""
    low = lowered(func, opt_level, always, disabled)
    outs = allocate_outputs(low, inputs)
    for out in outs:
        out.fill(np.nan if out.dtype.kind == "f" else 0)
    interpret(low, [*inputs, *outs])
    return outs


def allocates(func: PrimFunc) -> list[Allocate]:
    """Every Allocate of a lowered function (global scope: intermediates), but the one-vector
    head/tail temporaries of the late stage's ``align_streams`` (``stream_*``)."""
    found: list[Allocate] = []

    def visit(node: object) -> None:
        if isinstance(node, Allocate) and not node.buffer_var.name.startswith("stream_"):
            found.append(node)

    post_order_visit(func.body, visit)
    return found


def built(func: PrimFunc, opt_level: int = 3) -> Any:
    """``tvmscript.build`` of ``func``, or skip when build cannot return outputs yet."""
    try:
        from tvmscript.compiler.build import build
    except ImportError:
        pytest.skip("tvmscript.build is not available")
    kernel = build(func, opt_level=opt_level)
    return kernel


def call_built(kernel: Any, inputs: Sequence[np.ndarray[Any, Any]]) -> Any:
    """Call a built kernel with its inputs; one array or a tuple of outputs comes back
    (the kernel allocates the returned tensors itself)."""
    return kernel(*inputs)
