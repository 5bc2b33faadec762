"""Instructions of a schedule trace, in TVM v0.16's model.

An :class:`Instruction` is one primitive call: its :class:`InstructionKind` (``"Split"``,
``"GetBlock"``, ... TVM's names), its *inputs* (random variables and values that may
mention them), its *attrs* (plain values fixed when the instruction was made) and its
*outputs* (the random variables it produced). A sampling instruction's decision is not part
of it: the :class:`~lowering.schedule.trace.Trace` keeps decisions keyed by instruction,
as TVM does, so one instruction can be replayed under another decision.

Each kind knows how to apply itself to a schedule and how to print itself as a line of
Python (TVM's per-kind ``f_apply_to_schedule`` / ``f_as_python``); the kinds are
registered in :mod:`lowering.schedule.inst_kinds`.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from irbuilder.ir import FloatImm, IntImm, Var

from .layout import IndexMap
from .rv import RV

if TYPE_CHECKING:
    from .schedule import Schedule

__all__ = [
    "Instruction",
    "InstructionKind",
    "PythonCall",
    "TypedFloat",
    "is_rv",
    "parse_index_map",
    "plain",
    "py_value",
    "rv_names",
]

ApplyFn = Callable[["Schedule", list[Any], list[Any], Any], list[Any]]
"""``(sch, inputs, attrs, decision) -> outputs``, the inputs already the schedule's RVs."""
PrintFn = Callable[[list[str], list[Any], list[Any], Any], str]
"""``(output names, inputs, attrs, decision) -> line``; inputs hold :class:`Name` for RVs."""
JsonFn = Callable[[list[Any]], list[Any]]


def is_rv(value: object) -> bool:
    """A random variable: a block/loop/expression handle, or a ``tir.Var`` standing for
    a sampled value (TVM's ``ExprRV`` is a Var, and instructions may be built with one)."""
    return isinstance(value, (RV, Var))


def rv_prefix(value: object) -> str:
    return value.prefix if isinstance(value, RV) else "v"


@dataclass(frozen=True)
class InstructionKind:
    """One kind of instruction: TVM's name, purity and how to apply and print it.

    ``is_pure`` kinds only query or sample (TVM: they do not change the function), so
    :meth:`Trace.simplified` may drop them when nothing uses their outputs.
    """

    name: str
    is_pure: bool
    apply: ApplyFn
    as_python: PrintFn
    num_inputs: tuple[int, int | None]
    """The fewest and most inputs (None: any number more, as ``Split``'s factors)."""
    num_attrs: int
    attrs_as_json: JsonFn | None = None
    attrs_from_json: JsonFn | None = None

    @property
    def is_postproc(self) -> bool:
        """Whether this is ``EnterPostproc``: what follows it is postprocessing."""
        return self.name == "EnterPostproc"

    _is_postproc = is_postproc  # TVM's Python spelling

    @staticmethod
    def get(name: str) -> InstructionKind:
        """The registered kind called ``name`` (TVM's names, e.g. ``"GetBlock"``)."""
        if not isinstance(name, str):
            raise TypeError(f"InstructionKind.get expects a str, got {type(name).__name__}")
        from . import inst_kinds  # noqa: F401  (registers the kinds on first use)

        kind = _REGISTRY.get(name)
        if kind is None:
            raise ValueError(
                f"unknown instruction kind {name!r}; the kinds are {sorted(_REGISTRY)}"
            )
        return kind

    def __repr__(self) -> str:
        return f"InstructionKind({self.name!r})"


_REGISTRY: dict[str, InstructionKind] = {}


def register(kind: InstructionKind) -> InstructionKind:
    if kind.name in _REGISTRY:
        raise ValueError(f"instruction kind {kind.name!r} is registered twice")
    _REGISTRY[kind.name] = kind
    return kind


class Instruction:
    """One applied primitive. Compared and hashed by identity (it keys
    ``Trace.decisions``); :meth:`same_as` is TVM's identity test."""

    __slots__ = ("attrs", "inputs", "kind", "outputs")

    def __init__(
        self,
        kind: InstructionKind,
        inputs: Sequence[Any],
        attrs: Sequence[Any],
        outputs: Sequence[Any],
    ) -> None:
        if not isinstance(kind, InstructionKind):
            raise TypeError(
                f"Instruction: kind must be an InstructionKind (InstructionKind.get(name)), "
                f"got {type(kind).__name__}"
            )
        for what, seq in (("inputs", inputs), ("attrs", attrs), ("outputs", outputs)):
            if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
                raise TypeError(f"Instruction: {what} must be a list, got {type(seq).__name__}")
        low, high = kind.num_inputs
        if len(inputs) < low or (high is not None and len(inputs) > high):
            count = f"{low}" if low == high else f"{low} to {high}" if high else f"{low} or more"
            raise ValueError(f"Instruction: {kind.name} takes {count} inputs, got {len(inputs)}")
        if len(attrs) != kind.num_attrs:
            raise ValueError(
                f"Instruction: {kind.name} takes {kind.num_attrs} attrs, got {len(attrs)}"
            )
        for out in outputs:
            if out is not None and not is_rv(out):
                raise TypeError(
                    "Instruction: outputs must be BlockRV, LoopRV, ExprRV (or tir.Var) "
                    f"handles, got {type(out).__name__}"
                )
        self.kind = kind
        self.inputs = list(inputs)
        self.attrs = list(attrs)
        self.outputs = list(outputs)

    def same_as(self, other: object) -> bool:
        return self is other

    def __repr__(self) -> str:
        return f"Instruction({self.kind.name}, inputs={self.inputs!r}, attrs={self.attrs!r})"


# -- values ---------------------------------------------------------------------------------
class TypedFloat(float):
    """A float attr read from an IR constant: a float for JSON, printed as TVMScript
    prints the constant (``T.float32(1.0)``), which is how TVM shows such an attr."""

    dtype: str

    def __new__(cls, value: float, dtype: str = "float32") -> TypedFloat:
        obj = super().__new__(cls, value)
        obj.dtype = dtype
        return obj

    def __repr__(self) -> str:
        return f"T.{self.dtype}({float(self)!r})"


def plain(value: Any) -> Any:
    """IR constants as Python values (an ``IntImm`` of bool as a bool), recursively: the
    form the schedule's methods take."""
    if isinstance(value, IntImm):
        return bool(value.value) if value.dtype.is_bool else int(value.value)
    if isinstance(value, FloatImm):
        return float(value.value)
    if isinstance(value, TypedFloat):
        return float(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    return value


class Name(str):
    """An RV's printed name among an instruction's inputs (printed bare, not quoted)."""


def _float_text(value: float) -> str:
    # TVM prints floats with 17 significant digits (``1.0`` as ``1``); keep a marker of
    # floatness where that would read back as an int, so replaying gives a float again
    text = f"{value:.17g}"
    return text if any(c in text for c in ".eEn") else text + ".0"


def py_value(value: Any) -> str:
    """Python source text for an input or attr value (RV names bare, strings quoted)."""
    if value is None:
        return "None"
    if isinstance(value, Name):
        return str(value)
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, IntImm):
        return py_value(plain(value))
    if isinstance(value, (FloatImm, TypedFloat)):
        return _float_text(plain(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(py_value(v) for v in value) + "]"
    if isinstance(value, tuple):
        items = ", ".join(py_value(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, dict):
        pairs = sorted((py_value(k), py_value(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if isinstance(value, IndexMap):
        return repr(value)
    raise TypeError(f"cannot print a {type(value).__name__} in a trace: {value!r}")


class PythonCall:
    """One ``sch.<method>(...)`` line, built argument by argument (TVM's PythonAPICall)."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.args: list[str] = []
        self.output: str | None = None

    def arg(self, name: str, value: Any) -> PythonCall:
        """``name=value``; an empty name is a positional argument."""
        text = py_value(value)
        self.args.append(f"{name}={text}" if name else text)
        return self

    def raw(self, name: str, text: str) -> PythonCall:
        """``name=text`` with ``text`` already Python source."""
        self.args.append(f"{name}={text}")
        return self

    def decision(self, decision: Any) -> PythonCall:
        if decision is not None:
            self.arg("decision", plain(decision))
        return self

    def single_output(self, outputs: list[str]) -> PythonCall:
        if len(outputs) != 1:
            raise ValueError(f"sch.{self.method} makes one output, got {len(outputs)}")
        self.output = outputs[0]
        return self

    def output_list(self, outputs: list[str]) -> PythonCall:
        # one output still unpacks a list: ``l1, = sch.get_loops(...)``
        if outputs:
            self.output = outputs[0] + "," if len(outputs) == 1 else ", ".join(outputs)
        return self

    def text(self) -> str:
        call = f"sch.{self.method}({', '.join(self.args)})"
        return call if self.output is None else f"{self.output} = {call}"


_INDEX_MAP_NODES = (
    ast.Expression,
    ast.Lambda,
    ast.arguments,
    ast.arg,
    ast.Tuple,
    ast.BinOp,
    ast.UnaryOp,
    ast.USub,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.FloorDiv,
    ast.Mod,
    ast.Name,
    ast.Load,
    ast.Constant,
)


# sampled values an index map's text may name while a JSON trace is read (``v1`` in
# ``lambda i, j: (i, j // v1)``): name -> ExprRV
_RV_NAMES: ContextVar[Mapping[str, Any] | None] = ContextVar("rv_names", default=None)


@contextmanager
def rv_names(names: Mapping[str, Any]) -> Iterator[None]:
    """Let :func:`parse_index_map` read ``names`` (the trace's sampled values)."""
    token = _RV_NAMES.set(names)
    try:
        yield
    finally:
        _RV_NAMES.reset(token)


def parse_index_map(text: str) -> IndexMap:
    """An index map from the lambda text a trace prints (``lambda i, j: (j, i)``); only
    index arithmetic is accepted, so a JSON trace cannot run arbitrary code. Free names
    are the trace's sampled values (:func:`rv_names`)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise ValueError(f"not an index map: {text!r} ({err.msg})") from None
    bad = [type(n).__name__ for n in ast.walk(tree) if not isinstance(n, _INDEX_MAP_NODES)]
    if bad or not isinstance(tree.body, ast.Lambda):
        raise ValueError(f"not an index map lambda of index arithmetic: {text!r}")
    namespace = {"__builtins__": {}, **(_RV_NAMES.get() or {})}
    func = eval(compile(tree, "<index map>", "eval"), namespace)
    return IndexMap.from_func(func)
