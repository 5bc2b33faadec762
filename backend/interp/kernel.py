"""A kernel-like callable that runs a PrimFunc in the reference interpreter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from irbuilder.ir import PrimFunc
from irbuilder.ir.functor import room_for_deep_ir
from lowering.abi.entry_checks import check_layout_vars_defined

from ..abi.call_args import CallBinder
from .arguments import bind_arguments, written_data_vars
from .interpreter import Interpreter

__all__ = ["InterpKernel", "make_interp_kernel"]


class InterpKernel:
    """Called like a compiled kernel: checks its arguments, runs, returns ``None``."""

    def __init__(self, func: PrimFunc, module: Mapping[str, PrimFunc] | None = None) -> None:
        if not isinstance(func, PrimFunc):
            raise TypeError(f"make_interp_kernel needs a PrimFunc, got {type(func).__name__}")
        self.func = func
        self.module = module
        self.name = func.name
        self._written = written_data_vars(func)
        buffers = [func.buffer_map.get(p) for p in func.params]
        # As the compiled entry does by default (copy_noncontiguous_inputs): an array given
        # for a buffer the kernel never writes, indexed row-major, may be any layout.
        self._copyable = tuple(
            i for i, b in enumerate(buffers)
            if b is not None and not b.strides and id(b.data) not in self._written
        )
        self._bind = CallBinder(
            func.name, [b.name if b is not None else p.name for b, p in zip(buffers, func.params)]
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != len(self._bind.param_names):
            args = tuple(self._bind(args, kwargs))
        if any(isinstance(args[i], np.ndarray) and not args[i].flags.c_contiguous
               for i in self._copyable):
            args = tuple(
                np.ascontiguousarray(a) if i in self._copyable and isinstance(a, np.ndarray)
                else a for i, a in enumerate(args))
        interp = Interpreter(self.func, self.module)
        with np.errstate(all="ignore"):
            # Check everything first (with the precomputed write set), then run unchecked.
            bind_arguments(
                self.func,
                args,
                interp._bind,
                interp._lookup_opt,
                interp.eval,
                check=True,
                written=self._written,
            )
        room_for_deep_ir()
        return interp.run(args, check_args=False)

    def __repr__(self) -> str:
        return f"<InterpKernel {self.name!r}>"


def make_interp_kernel(
    func: PrimFunc, module: Mapping[str, PrimFunc] | None = None
) -> InterpKernel:
    """A callable running ``func`` in the interpreter, with compiled-kernel argument checks;
    ``module`` holds the functions it may call (the other kernels of its IRModule)."""
    if isinstance(func, PrimFunc):
        check_layout_vars_defined(func)
    return InterpKernel(func, module)
