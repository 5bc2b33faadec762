"""The TIR dialect of the parser: handlers registered under the token ``"tir"``.

Importing this package registers the handlers (:mod:`.stmts` for statements,
:mod:`.function` for ``def``/``class``); :mod:`tvmscript.parser.entry` imports it
explicitly.  :mod:`.values` holds the dialect's evaluation hooks and capture predicate,
:mod:`.macro` the ``@T.macro`` expansion.
"""

from . import function, stmts
from .context import ParseState, active, caller_frame, current_state, user_frame
from .macro import MAX_MACRO_DEPTH, TIRMacro, macro
from .stmts import TOKEN, stamp_span
from .values import TIR_HOOKS, KernelRange, is_ir_object, is_parse_time_condition

__all__ = [
    "MAX_MACRO_DEPTH",
    "TIR_HOOKS",
    "TOKEN",
    "KernelRange",
    "ParseState",
    "TIRMacro",
    "active",
    "caller_frame",
    "current_state",
    "function",
    "is_ir_object",
    "is_parse_time_condition",
    "macro",
    "stamp_span",
    "stmts",
    "user_frame",
]
