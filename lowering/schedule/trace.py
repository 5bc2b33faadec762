"""The trace: every primitive applied, with its arguments and sampling decisions.

``str(trace)`` / :meth:`Trace.as_python` print Python that replays the schedule
(``def apply_trace(sch):`` then one call per line, as TVM prints it);
:meth:`Trace.apply_to_schedule` replays it on another schedule and :meth:`Trace.as_json` /
:meth:`Trace.from_json` give a JSON form that round-trips.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .layout import IndexMap
from .rv import RV, BlockRV, ExprRV, LoopRV

if TYPE_CHECKING:
    from .schedule import Schedule

__all__ = ["Instruction", "Trace"]

_RV_KINDS: dict[str, type[RV]] = {"b": BlockRV, "l": LoopRV, "v": ExprRV}
_VARARGS = {"fuse": "loops", "reorder": "ordered_loops"}
"""Primitives taking ``*loops``: the recorded list is passed positionally."""


@dataclass(eq=False)
class Instruction:
    """One primitive call: its name, keyword arguments, outputs and decision (an
    instruction is itself, as in TVM: it keys ``Trace.decisions``)."""

    kind: str
    kwargs: dict[str, Any]
    outputs: list[RV]
    decision: Any = None


@dataclass
class Trace:
    """The instructions applied to a schedule, in order."""

    insts: list[Instruction] = field(default_factory=list)

    def append(self, inst: Instruction) -> None:
        self.insts.append(inst)

    @property
    def decisions(self) -> dict[Instruction, Any]:
        """The sampling instructions' decisions, keyed by instruction (TVM's map)."""
        return {i: i.decision for i in self.insts if i.decision is not None}

    def _names(self) -> dict[RV, str]:
        names: dict[RV, str] = {}
        for inst in self.insts:
            for rv in inst.outputs:
                names[rv] = f"{rv.prefix}{len(names)}"
        return names

    def get_decision(self, inst: Instruction) -> Any:
        """The decision recorded for a sampling instruction (None for others)."""
        return inst.decision

    def with_decision(self, inst: Instruction, decision: Any, remove_postproc: bool) -> Trace:
        """A copy of the trace with ``inst``'s decision replaced."""
        del remove_postproc
        insts = [
            Instruction(i.kind, i.kwargs, i.outputs, decision if i is inst else i.decision)
            for i in self.insts
        ]
        return Trace(insts)

    def show(self) -> None:
        print(self)

    def as_python(self, remove_postproc: bool = False) -> list[str]:
        """One line of Python per instruction."""
        del remove_postproc  # no postprocessing instructions exist here
        names = self._names()
        lines: list[str] = []
        for inst in self.insts:
            star = _VARARGS.get(inst.kind)
            args = [
                ", ".join(_py(x, names) for x in v) if k == star else f"{k}={_py(v, names)}"
                for k, v in inst.kwargs.items()
            ]
            if inst.decision is not None:
                args.append(f"decision={_py(inst.decision, names)}")
            call = f"sch.{inst.kind}({', '.join(args)})"
            if inst.outputs:
                call = ", ".join(names[rv] for rv in inst.outputs) + " = " + call
            lines.append(call)
        return lines

    def __str__(self) -> str:
        body = self.as_python() or ["pass"]
        return "def apply_trace(sch):\n" + "\n".join("  " + line for line in body)

    def as_json(self) -> list[Any]:
        names = self._names()
        out: list[Any] = []
        for inst in self.insts:
            out.append(
                [
                    inst.kind,
                    {k: _js(v, names) for k, v in inst.kwargs.items()},
                    [names[rv] for rv in inst.outputs],
                    inst.decision,
                ]
            )
        return out

    @staticmethod
    def from_json(data: Any) -> Trace:
        """A trace whose RVs are fresh handles named as in ``data``."""
        table: dict[str, RV] = {}
        trace = Trace()
        for kind, kwargs, outputs, decision in json.loads(data) if isinstance(data, str) else data:
            decoded = {k: _unjs(v, table) for k, v in kwargs.items()}
            outs: list[RV] = []
            for name in outputs:
                rv = _RV_KINDS[name[0]]()
                table[name] = rv
                outs.append(rv)
            trace.append(Instruction(kind, decoded, outs, decision))
        return trace

    def apply_to_schedule(
        self,
        sch: Schedule,
        remove_postproc: bool = False,
        decision_provider: Callable[[Instruction, Any], Any] | None = None,
    ) -> None:
        """Replay every instruction on ``sch`` (with the recorded decisions)."""
        del remove_postproc  # no postprocessing instructions exist here
        table: dict[RV, RV] = {}
        for inst in self.insts:
            kwargs = {k: _remap(v, table) for k, v in inst.kwargs.items()}
            decision = inst.decision
            if decision_provider is not None:
                decision = decision_provider(inst, decision)
            if decision is not None:
                kwargs["decision"] = decision
            star = _VARARGS.get(inst.kind)
            positional = kwargs.pop(star) if star is not None else []
            result = getattr(sch, inst.kind)(*positional, **kwargs)
            produced = _as_list(result)
            for old, new in zip(inst.outputs, produced):
                table[old] = new

    @staticmethod
    def apply_json_to_schedule(data: Any, sch: Schedule) -> None:
        Trace.from_json(data).apply_to_schedule(sch)


def _as_list(result: Any) -> list[RV]:
    if result is None:
        return []
    if isinstance(result, RV):
        return [result]
    return [r for r in result if isinstance(r, RV)]


def _remap(value: Any, table: dict[RV, RV]) -> Any:
    if isinstance(value, RV):
        return table.get(value, value)
    if isinstance(value, list):
        return [_remap(v, table) for v in value]
    return value


def _py(value: Any, names: dict[RV, str]) -> str:
    if isinstance(value, RV):
        return names.get(value, "<unknown rv>")
    if isinstance(value, list):
        return "[" + ", ".join(_py(v, names) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        items = ", ".join(_py(v, names) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, IndexMap):
        return f"T.IndexMap.from_func({value!r})"
    return repr(value)


def _js(value: Any, names: dict[RV, str]) -> Any:
    if isinstance(value, RV):
        return {"rv": names[value]}
    if isinstance(value, IndexMap):
        return {"index_map": repr(value)}
    if isinstance(value, tuple):
        return {"tuple": [_js(v, names) for v in value]}
    if isinstance(value, list):
        return [_js(v, names) for v in value]
    return value


def _unjs(value: Any, table: dict[str, RV]) -> Any:
    if isinstance(value, dict) and set(value) == {"rv"}:
        return table[value["rv"]]
    if isinstance(value, dict) and set(value) == {"index_map"}:
        return IndexMap.from_func(eval(value["index_map"], {}))  # printed by Trace.as_json
    if isinstance(value, dict) and set(value) == {"tuple"}:
        return tuple(_unjs(v, table) for v in value["tuple"])
    if isinstance(value, list):
        return [_unjs(v, table) for v in value]
    return value
