"""TVM v0.16's ``tir.Schedule`` on this project's IR (see docs/schedule.md).

The user entry is ``from tvmscript import tir; sch = tir.Schedule(func)``; this package is
the IR-to-IR library behind it.
"""

from .error import BufferArgumentError, ScheduleError
from .instruction import Instruction, InstructionKind
from .layout import IndexMap
from .rv import RV, BlockRV, ExprRV, LoopRV
from .schedule import Schedule, set_equivalence_checker
from .tensor_intrin import TensorIntrin
from .trace import Trace

__all__ = [
    "RV",
    "BlockRV",
    "BufferArgumentError",
    "ExprRV",
    "IndexMap",
    "Instruction",
    "InstructionKind",
    "LoopRV",
    "Schedule",
    "ScheduleError",
    "TensorIntrin",
    "Trace",
    "set_equivalence_checker",
]
