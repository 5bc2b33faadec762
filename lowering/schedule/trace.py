"""The trace: every instruction applied to a schedule, and the sampling decisions.

TVM v0.16's model (see :mod:`lowering.schedule.instruction`): ``Trace(insts, decisions)``
with decisions keyed by instruction. ``str(trace)`` / :meth:`Trace.as_python` print the
Python that replays it, exactly in TVM's form (``# from tvm import tir`` then
``def apply_trace(sch: tir.Schedule) -> None:`` and one call per line, RVs named ``b0``,
``l1``, ``v2``... in order of appearance); :meth:`Trace.as_json` gives TVM's
``[[[kind, inputs, attrs, outputs], ...], [[index, decision], ...]]`` form, which
:meth:`Trace.apply_json_to_schedule` (and :meth:`Trace.from_json`) read back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from irbuilder.ir import FloatImm, IntImm, PrimExpr, Var
from irbuilder.ir.functor import post_order_visit

from .instruction import (
    Instruction,
    InstructionKind,
    Name,
    TypedFloat,
    is_rv,
    parse_index_map,
    plain,
    rv_names,
    rv_prefix,
)
from .layout import IndexMap
from .rv import RV, BlockRV, ExprRV, LoopRV
from .rv_maps import map_rvs, rename_rvs, translate_rvs

if TYPE_CHECKING:
    from .schedule import Schedule

__all__ = ["Trace"]

DecisionProvider = Callable[[Instruction, list[Any], list[Any], Any], Any]
"""TVM's ``decision_provider(inst, inputs, attrs, decision) -> decision``."""

_FRESH_RV: dict[str, type[RV]] = {"b": BlockRV, "l": LoopRV, "v": ExprRV}


class Trace:
    """The instructions applied to a schedule, in order, with the sampling decisions."""

    def __init__(
        self,
        insts: Sequence[Instruction] | None = None,
        decisions: Mapping[Instruction, Any] | None = None,
    ) -> None:
        insts = [] if insts is None else insts
        decisions = {} if decisions is None else decisions
        if not isinstance(insts, (list, tuple)):
            raise TypeError(
                f"Trace: insts must be a list of Instruction, got {type(insts).__name__}"
            )
        if not isinstance(decisions, Mapping):
            raise TypeError(
                f"Trace: decisions must be a dict of Instruction to decision, got "
                f"{type(decisions).__name__}"
            )
        for inst in [*insts, *decisions]:
            if not isinstance(inst, Instruction):
                raise TypeError(f"Trace: expected an Instruction, got {type(inst).__name__}")
        self._insts: list[Instruction] = list(insts)
        self._decisions: dict[Instruction, Any] = dict(decisions)

    # -- contents -------------------------------------------------------------------------
    @property
    def insts(self) -> list[Instruction]:
        """The instructions, in order (a copy: change the trace with append/pop)."""
        return list(self._insts)

    @property
    def decisions(self) -> dict[Instruction, Any]:
        """The sampling instructions' decisions, keyed by instruction (a copy)."""
        return dict(self._decisions)

    def get_decision(self, inst: Instruction) -> Any:
        """The decision recorded for ``inst``, or None."""
        return self._decisions.get(inst)

    def append(self, inst: Instruction, decision: Any = None) -> None:
        """Add ``inst`` at the end (with its decision, for a sampling instruction)."""
        if not isinstance(inst, Instruction):
            raise TypeError(f"Trace.append: expected an Instruction, got {type(inst).__name__}")
        self._insts.append(inst)
        if decision is not None:
            self._decisions[inst] = decision

    def pop(self) -> Instruction | None:
        """Remove and return the last instruction (None when the trace is empty)."""
        if not self._insts:
            return None
        inst = self._insts.pop()
        self._decisions.pop(inst, None)
        return inst

    def copy(self) -> Trace:
        return Trace(self._insts, self._decisions)

    def _valid(self, remove_postproc: bool) -> list[Instruction]:
        """The instructions before the first ``EnterPostproc`` when removing postprocessing."""
        if not remove_postproc:
            return list(self._insts)
        out: list[Instruction] = []
        for inst in self._insts:
            if inst.kind.is_postproc:
                break
            out.append(inst)
        return out

    # -- new traces -----------------------------------------------------------------------
    def with_decision(self, inst: Instruction, decision: Any, remove_postproc: bool) -> Trace:
        """A copy of the trace where ``inst`` has ``decision``."""
        if not isinstance(inst, Instruction):
            raise TypeError(
                f"Trace.with_decision: expected an Instruction, got {type(inst).__name__}"
            )
        decisions = dict(self._decisions)
        decisions[inst] = decision
        return Trace(self._valid(remove_postproc), decisions)

    def simplified(self, remove_postproc: bool) -> Trace:
        """The trace without pure instructions (queries, samples) whose outputs nothing
        later uses, and, when ``remove_postproc``, without postprocessing."""
        used: set[int] = set()
        kept: list[Instruction] = []
        for inst in reversed(self._valid(remove_postproc)):
            if inst.kind.is_pure and not any(id(o) in used for o in inst.outputs):
                continue
            kept.append(inst)
            _collect_rvs([*inst.inputs, *inst.attrs], used)
        kept.reverse()
        decisions = {i: self._decisions[i] for i in kept if i in self._decisions}
        return Trace(kept, decisions)

    # -- printing -------------------------------------------------------------------------
    def as_python(self, remove_postproc: bool = False) -> list[str]:
        """One line of Python per instruction."""
        names = _Names()
        lines: list[str] = []
        for inst in self._valid(remove_postproc):
            inputs = [_named(x, names) for x in inst.inputs]
            attrs = [rename_rvs(a, names.of) for a in inst.attrs]
            outputs = names.add(inst.outputs)
            lines.append(inst.kind.as_python(outputs, inputs, attrs, self.get_decision(inst)))
        return lines

    def __str__(self) -> str:
        body = self.as_python(remove_postproc=False) or ["pass"]
        return "# from tvm import tir\ndef apply_trace(sch: tir.Schedule) -> None:\n" + "\n".join(
            "  " + line for line in body
        )

    __repr__ = __str__

    def show(self) -> None:
        print(self)

    # -- JSON -----------------------------------------------------------------------------
    def as_json(self, remove_postproc: bool = False) -> list[Any]:
        """TVM's JSON form: ``[[[kind, inputs, attrs, outputs], ...], [[index, decision],
        ...]]``; RVs by name, string inputs quoted (``'"x"'``), floats as floats."""
        names = _Names()
        insts: list[Any] = []
        decisions: list[Any] = []
        for index, inst in enumerate(self._valid(remove_postproc)):
            inputs = [_json_input(x, names) for x in inst.inputs]
            kind = inst.kind
            attrs = [rename_rvs(a, names.of) for a in inst.attrs]
            attrs = kind.attrs_as_json(attrs) if kind.attrs_as_json else attrs
            attrs = [_json_attr(a) for a in attrs]
            insts.append([kind.name, inputs, attrs, names.add(inst.outputs)])
            decision = self.get_decision(inst)
            if decision is not None:
                decisions.append([index, plain(decision)])
        return [insts, decisions]

    @staticmethod
    def from_json(data: Any) -> Trace:
        """A trace from :meth:`as_json`'s form (or its ``json.dumps`` text), with fresh
        handles for the RVs it names."""
        if isinstance(data, (str, bytes)):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as err:
                raise ValueError(f"Trace.from_json: not JSON ({err})") from None
        if not (isinstance(data, (list, tuple)) and len(data) == 2):
            raise ValueError(
                "Trace.from_json: a trace's JSON is [instructions, decisions], got "
                f"{_short(data)}"
            )
        json_insts, json_decisions = data
        if not all(isinstance(part, (list, tuple)) for part in (json_insts, json_decisions)):
            raise ValueError("Trace.from_json: instructions and decisions must both be lists")
        decided: dict[int, Any] = {}
        for entry in json_decisions:
            if not (
                isinstance(entry, (list, tuple))
                and len(entry) == 2
                and isinstance(entry[0], int)
                and 0 <= entry[0] < len(json_insts)
            ):
                raise ValueError(
                    "Trace.from_json: each decision is [instruction index, decision], got "
                    f"{_short(entry)}"
                )
            decided[entry[0]] = entry[1]
        table: dict[str, Any] = {}
        trace = Trace()
        for index, entry in enumerate(json_insts):
            if not (
                isinstance(entry, (list, tuple))
                and len(entry) == 4
                and isinstance(entry[0], str)
                and all(isinstance(e, (list, tuple)) for e in entry[1:])
                and all(isinstance(o, str) for o in entry[3])
            ):
                raise ValueError(
                    "Trace.from_json: each instruction is [kind, inputs, attrs, outputs], got "
                    f"{_short(entry)}"
                )
            name, inputs, attrs, outputs = entry
            kind = InstructionKind.get(name)
            sampled = {k: v for k, v in table.items() if isinstance(v, ExprRV)}
            with rv_names(sampled):  # an index map's text may name sampled values
                decoded = [_decode_input(x, table) for x in inputs]
                attrs = list(attrs)
                if kind.attrs_from_json is not None:
                    attrs = kind.attrs_from_json(attrs)
            outs: list[Any] = []
            for out in outputs:
                rv = _fresh(out)
                if rv is not None:
                    table[out] = rv
                outs.append(rv)
            trace.append(Instruction(kind, decoded, attrs, outs), decided.get(index))
        return trace

    @staticmethod
    def apply_json_to_schedule(json_obj: Any, sch: Schedule) -> None:
        """Apply a trace in :meth:`as_json`'s form to ``sch``."""
        _check_schedule(sch, "apply_json_to_schedule")
        Trace.from_json(json_obj).apply_to_schedule(sch)

    # -- replay ---------------------------------------------------------------------------
    def apply_to_schedule(
        self,
        sch: Schedule,
        remove_postproc: bool = False,
        decision_provider: DecisionProvider | None = None,
    ) -> None:
        """Replay every instruction on ``sch`` (with the recorded decisions, or those
        ``decision_provider(inst, inputs, attrs, decision)`` returns)."""
        _check_schedule(sch, "apply_to_schedule")
        table: dict[int, Any] = {}
        for inst in self._valid(remove_postproc):
            inputs = [_translate(x, table) for x in inst.inputs]
            attrs = [translate_rvs(a, table) for a in inst.attrs]
            decision = self.get_decision(inst)
            if decision_provider is not None:
                decision = decision_provider(inst, inputs, attrs, decision)
            produced = inst.kind.apply(sch, inputs, attrs, decision)
            if len(produced) != len(inst.outputs):
                raise ValueError(
                    f"Trace.apply_to_schedule: {inst.kind.name} produced {len(produced)} "
                    f"outputs where the trace has {len(inst.outputs)}"
                )
            for old, new in zip(inst.outputs, produced):
                if old is not None:
                    table[id(old)] = new


# -- helpers ----------------------------------------------------------------------------------
def _check_schedule(sch: Any, method: str) -> None:
    from .schedule import Schedule  # the schedule module imports this one

    if not isinstance(sch, Schedule):
        raise TypeError(f"Trace.{method}: expected a Schedule, got {type(sch).__name__}")


class _Names:
    """RV names in order of appearance: ``b0``, ``l1``, ``v2``... (TVM's numbering counts
    every output before it)."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def add(self, outputs: Sequence[Any]) -> list[str]:
        result: list[str] = []
        for rv in outputs:
            if rv is not None and id(rv) in self.names:
                raise ValueError(f"the random variable {self.names[id(rv)]} is produced twice")
            name = "_" if rv is None else f"{rv_prefix(rv)}{len(self.names)}"
            if rv is not None:
                self.names[id(rv)] = name
            result.append(name)
        return result

    def of(self, rv: Any) -> str:
        name = self.names.get(id(rv))
        if name is None:
            raise ValueError(f"{rv!r} is used before any instruction of the trace produced it")
        return name


def _named(value: Any, names: _Names) -> Any:
    """An input for printing: RVs as their bare names."""
    if is_rv(value):
        return Name(names.of(value))
    if isinstance(value, list):
        return [_named(v, names) for v in value]
    return rename_rvs(value, names.of)


def _json_attr(value: Any) -> Any:
    if isinstance(value, IntImm):
        return plain(value)
    if isinstance(value, FloatImm):
        return TypedFloat(value.value, str(value.dtype))
    if isinstance(value, (list, tuple)):
        return [_json_attr(v) for v in value]
    if isinstance(value, IndexMap):
        return repr(value)
    return value


def _json_input(value: Any, names: _Names) -> Any:
    if value is None:
        return "None"
    if is_rv(value):
        return names.of(value)
    if isinstance(value, str):
        return '"' + value + '"'  # TVM's quoting: the outer quotes mark a string value
    if isinstance(value, (list, tuple)):
        return [_json_input(v, names) for v in value]
    if isinstance(value, IndexMap):
        # ``lambda ...``: never an RV name, never a quoted string
        return repr(rename_rvs(value, names.of))
    if isinstance(value, (bool, int, float, dict, IntImm, FloatImm)):
        return _json_attr(value)
    raise TypeError(f"cannot write a {type(value).__name__} input to a trace's JSON: {value!r}")


def _decode_input(value: Any, table: dict[str, Any]) -> Any:
    if isinstance(value, (list, tuple)):
        return [_decode_input(v, table) for v in value]
    if not isinstance(value, str):
        return value
    if not value:
        raise ValueError("Trace.from_json: an empty string is not an input (strings are quoted)")
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return value[1:-1]
    if value.startswith("lambda "):
        return parse_index_map(value)
    if value == "None":
        return None
    if value not in table:
        raise ValueError(f"Trace.from_json: the random variable {value!r} is not defined")
    return table[value]


def _fresh(name: str) -> RV | None:
    if name == "_":
        return None
    cls = _FRESH_RV.get(name[:1])
    if cls is None or not name[1:].isdigit():
        raise ValueError(
            f"Trace.from_json: output {name!r} is not an RV name (b<n>, l<n>, v<n> or _)"
        )
    return cls()


def _translate(value: Any, table: dict[int, Any]) -> Any:
    if is_rv(value):
        if id(value) not in table:
            raise ValueError(
                f"Trace.apply_to_schedule: {value!r} is used before any instruction of the "
                "trace produced it"
            )
        return table[id(value)]
    if isinstance(value, list):
        return [_translate(v, table) for v in value]
    return translate_rvs(value, table)


def _collect_rvs(values: Sequence[Any], used: set[int]) -> None:
    for value in values:
        if is_rv(value):
            used.add(id(value))
        elif isinstance(value, (list, tuple)):
            _collect_rvs(value, used)
        elif isinstance(value, PrimExpr):
            _collect_vars(value, used)
        else:
            used.update(id(rv) for rv in map_rvs(value))


def _collect_vars(expr: PrimExpr, used: set[int]) -> None:
    def visit(node: Any) -> None:
        if isinstance(node, Var):
            used.add(id(node))

    post_order_visit(expr, visit)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
