"""``Schedule``: TVM v0.16's ``tir.Schedule`` API over this project's IR.

Every primitive either applies completely or raises :class:`ScheduleError` and leaves the
function unchanged. With ``debug_mask="all"`` each applied primitive is followed by the
verifier and, when an equivalence checker is installed (``tvmscript`` installs one that runs
the reference interpreter on random inputs), by a comparison with the original function.

The class is put together from the core (``schedule_base.py``: state, handles, applying
and recording a primitive, queries) and three groups of primitives (``schedule_loops.py``,
``schedule_data.py``, ``schedule_extra.py``).
"""

from __future__ import annotations

from .schedule_base import StmtSRef, set_equivalence_checker
from .schedule_data import DataPrimitives
from .schedule_extra import ExtraPrimitives
from .schedule_loops import LoopPrimitives
from .schedule_tensorize import TensorizePrimitives

__all__ = ["Schedule", "StmtSRef", "set_equivalence_checker"]


class Schedule(LoopPrimitives, DataPrimitives, ExtraPrimitives, TensorizePrimitives):
    """A user-directed schedule of a PrimFunc or of the functions of an IRModule."""
