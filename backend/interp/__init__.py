"""The reference interpreter of the IR (lowered or not): the differential-test oracle."""

from .interpreter import Interpreter, assertion_error, interpret
from .kernel import InterpKernel, make_interp_kernel
from .memory import Pointer, Storage

__all__ = [
    "InterpKernel",
    "Interpreter",
    "Pointer",
    "Storage",
    "assertion_error",
    "interpret",
    "make_interp_kernel",
]
