"""Record every kernel the parser tests build (see :mod:`registry`)."""

from __future__ import annotations

from typing import Any

import tvmscript  # noqa: F401  (installs the parser hooks wrapped below)
from irbuilder.ir_module import register_ir_module_parser
from irbuilder.tir import register_prim_func_parser
from tvmscript.parser.entry import parse_ir_module, parse_prim_func

from .registry import record

_TVMSCRIPT_FRAME_TRANSPARENT = True  # the decorators see the test module as caller


def _recording_prim_func(fn: Any, **kwargs: Any) -> Any:
    result = parse_prim_func(fn, **kwargs)
    record(getattr(fn, "__qualname__", "?"), result)
    return result


def _recording_ir_module(cls: Any, **kwargs: Any) -> Any:
    result = parse_ir_module(cls, **kwargs)
    record(getattr(cls, "__qualname__", "?"), result)
    return result


register_prim_func_parser(_recording_prim_func)
register_ir_module_parser(_recording_ir_module)
