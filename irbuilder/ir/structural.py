"""Structural equality and hashing of IR.

Variables and buffers that the IR *binds* (function params and the buffers
of ``buffer_map`` with the symbolic dims of their shapes, loop vars, let vars,
iter vars, allocated data vars, declared/allocated/matched buffers) compare
up to a consistent renaming. Free variables compare by identity unless
``map_free_vars`` is set. Name hints (``Var.name``, ``Buffer.name``, the
function's ``global_symbol``) are not part of the structure; block names are.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import math
import struct
from collections.abc import Callable, Mapping
from typing import Any

from .buffer import Buffer, IterVar
from .dtype import DataType, as_dtype
from .expr import BinaryOp, Cast, IntImm, Not, PrimExpr, Var
from .function import IRModule, PrimFunc
from .functor import DEFINITION_FIELDS
from .span import Span
from .stmt import Stmt, bare_root_body

__all__ = ["StructuralMismatch", "assert_structural_equal", "structural_equal", "structural_hash"]

_IGNORED_ATTRS = frozenset({"global_symbol"})
_SKIPPED_FIELDS = frozenset({"span", "name"})
# Node fields that define buffers (everywhere else a buffer is used).
_BUFFER_DEF_FIELDS: dict[str, tuple[str, ...]] = {
    "DeclBuffer": ("buffer",),
    "Block": ("alloc_buffers",),
    "MatchBufferRegion": ("buffer",),
    # A comm_reducer's parameters are defined by it (compared before its results).
    "CommReducer": ("lhs", "rhs"),
}


# Fields holding binders (IterVars) that must be compared before the fields using them:
# a Reduce's source refers to the vars of its axes.
# A Block's allocated and matched buffers are used by its reads/writes/body: define first.
_BINDING_FIRST: dict[str, tuple[str, ...]] = {
    "Reduce": ("axes",),
    "Block": ("iter_vars", "alloc_buffers", "match_buffers"),
}


def _node_plan(cls: type) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """A node class's name, the fields it defines vars in (sorted), then its other compared
    fields, binders first (see ``_BINDING_FIRST``)."""
    name = cls.__name__
    defs = tuple(sorted(DEFINITION_FIELDS.get(name, frozenset())))
    first = _BINDING_FIRST.get(name, ())
    rest = [f.name for f in dataclasses.fields(cls) if f.name not in first]
    ordered = (n for n in (*first, *rest) if n not in _SKIPPED_FIELDS)
    return name, defs, tuple(n for n in ordered if n not in defs)


class StructuralMismatch(AssertionError):
    """Raised by :func:`assert_structural_equal`; ``path`` locates the difference."""

    def __init__(self, path: str, lhs: Any, rhs: Any, reason: str) -> None:
        self.path = path
        self.lhs = lhs
        self.rhs = rhs
        self.reason = reason
        super().__init__(
            f"structural mismatch at {path}: {reason}\n  lhs: {_show(lhs)}\n  rhs: {_show(rhs)}"
        )


def _show(value: Any) -> str:
    if isinstance(value, (Stmt, PrimFunc, IRModule)):
        try:
            text = value.script() if not isinstance(value, Stmt) else repr(value)
        except Exception:  # printing is best effort inside an error message
            text = repr(value)
        return text if len(text) < 2000 else text[:2000] + " ..."
    return repr(value)


def _var_type(v: Var) -> str:
    if v.type_annotation is None:
        return str(v.dtype)
    return f"{v.dtype}({v.type_annotation.element}, {v.type_annotation.scope!r})"


# How equality and hashing treat a value, decided once per class: chained isinstance checks
# (one of them against the Mapping ABC) cost more than the comparing or hashing itself.
_SPAN, _VAR, _BUFFER, _FUNC, _MODULE, _SEQ, _MAP, _NODE, _FLOAT, _ENUM, _OTHER = range(11)
_VALUE_KINDS: dict[type, int] = {}
# Per node class: its _node_plan.
_NODE_PLANS: dict[type, tuple[str, tuple[str, ...], tuple[str, ...]]] = {}
_PLAIN_TYPES = frozenset({int, str, bool, bytes, type(None)})


def _value_kind(cls: type) -> int:
    kind = _VALUE_KINDS.get(cls)
    if kind is not None:
        return kind
    # Cheap class tests first: an ABC check (Mapping) costs tens of microseconds per class.
    if issubclass(cls, Span):
        kind = _SPAN
    elif issubclass(cls, Var):
        kind = _VAR
    elif issubclass(cls, Buffer):
        kind = _BUFFER
    elif issubclass(cls, PrimFunc):
        kind = _FUNC
    elif issubclass(cls, IRModule):
        kind = _MODULE
    elif issubclass(cls, (tuple, list)):
        kind = _SEQ
    elif issubclass(cls, dict):
        kind = _MAP
    elif issubclass(cls, float):
        kind = _FLOAT
    elif cls in _PLAIN_TYPES or issubclass(cls, DataType):
        kind = _OTHER
    elif dataclasses.is_dataclass(cls):
        kind = _NODE
        _NODE_PLANS[cls] = _node_plan(cls)
    elif issubclass(cls, enum.Enum):
        kind = _ENUM
    elif issubclass(cls, Mapping):
        kind = _MAP
    else:
        kind = _OTHER
    _VALUE_KINDS[cls] = kind
    return kind


# A path into the compared values, built only when a comparison fails: ``(parent, step)``
# links, where a step is an attribute suffix (``".body"``), an index or a mapping key.
_Path = Any


def _render(path: _Path) -> str:
    steps: list[str] = []
    while isinstance(path, tuple):
        path, step = path
        if isinstance(step, int):
            steps.append(f"[{step}]")
        elif isinstance(step, _Key):
            steps.append(f"[{step.key!r}]")
        else:
            steps.append(step)
    return str(path) + "".join(reversed(steps))


class _Key:
    """A mapping key as a path step (rendered ``[key]``)."""

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key


class _Equal:
    def __init__(self, map_free_vars: bool, compare_block_names: bool = True) -> None:
        self.map_free_vars = map_free_vars
        self.compare_block_names = compare_block_names
        self.lhs_to_rhs: dict[int, Any] = {}
        self.rhs_to_lhs: dict[int, Any] = {}
        self.keepalive: list[Any] = []
        self.defining = 0

    def fail(self, path: _Path, a: Any, b: Any, reason: str | Callable[[], str]) -> None:
        """Raise the mismatch; a ``reason`` that is costly to render comes as a callable."""
        text = reason if isinstance(reason, str) else reason()
        raise StructuralMismatch(_render(path), a, b, text)

    def bind(self, a: Any, b: Any, path: _Path) -> None:
        mapped = self.lhs_to_rhs.get(id(a))
        if mapped is not None:
            if mapped is not b:
                self.fail(path, a, b, "bound to a different variable earlier")
            return
        back = self.rhs_to_lhs.get(id(b))
        if back is not None and back is not a:
            self.fail(path, a, b, "rhs variable is bound to a different lhs variable")
        self.lhs_to_rhs[id(a)] = b
        self.rhs_to_lhs[id(b)] = a
        self.keepalive.extend((a, b))

    def var(self, a: Var, b: Var, path: _Path, define: bool = False) -> None:
        if type(a) is not type(b):
            self.fail(path, a, b, f"{type(a).__name__} vs {type(b).__name__}")
        if a.dtype != b.dtype or a.type_annotation != b.type_annotation:
            self.fail(
                path, a, b, lambda: f"variable types differ: {_var_type(a)} vs {_var_type(b)}"
            )
        mapped = self.lhs_to_rhs.get(id(a))
        if mapped is not None:
            if mapped is not b:
                self.fail(path, a, b, "different variables")
            return
        if define or self.defining or self.map_free_vars:
            self.bind(a, b, path)
            return
        if a is not b:
            self.fail(path, a, b, f"free variables {a.name!r} and {b.name!r} differ")

    def buffer(self, a: Buffer, b: Buffer, path: _Path) -> None:
        mapped = self.lhs_to_rhs.get(id(a))
        if mapped is not None:
            if mapped is not b:
                self.fail(path, a, b, f"different buffers {a.name!r} and {b.name!r}")
            return
        if a is b and not self.map_free_vars:
            return
        # Only a buffer met at a definition site (buffer_map, DeclBuffer, alloc/match buffers)
        # binds; a free buffer is compared field by field, so its data var must be the same.
        define = bool(self.defining) or self.map_free_vars
        if define:
            self.bind(a, b, path)
            self.defining += 1
        try:
            self.value(a.dtype, b.dtype, (path, ".dtype"))
            self.value(a.data, b.data, (path, ".data"))
            for name in (
                "shape",
                "strides",
                "elem_offset",
                "scope",
                "data_alignment",
                "offset_factor",
                "axis_separators",
            ):
                self.value(getattr(a, name), getattr(b, name), (path, "." + name))
        finally:
            if define:
                self.defining -= 1

    def node(self, a: Any, b: Any, path: _Path) -> None:
        name, defs, rest = _NODE_PLANS[type(a)]
        for field in defs:
            self.var(getattr(a, field), getattr(b, field), (path, "." + field), define=True)
        buffer_defs = _BUFFER_DEF_FIELDS.get(name, ())
        for field in rest:
            if field == "name_hint" and name == "Block" and not self.compare_block_names:
                continue
            if field in buffer_defs:
                self.defining += 1
                try:
                    self.value(getattr(a, field), getattr(b, field), (path, "." + field))
                finally:
                    self.defining -= 1
                continue
            self.value(getattr(a, field), getattr(b, field), (path, "." + field))

    def func(self, a: PrimFunc, b: PrimFunc, path: _Path) -> None:
        if len(a.params) != len(b.params):
            self.fail((path, ".params"), a.params, b.params, "different parameter counts")
        for i, (pa, pb) in enumerate(zip(a.params, b.params)):
            self.var(pa, pb, ((path, ".params"), i), define=True)
        for i, (pa, pb) in enumerate(zip(a.params, b.params)):
            ba, bb = a.buffer_map.get(pa), b.buffer_map.get(pb)
            if (ba is None) != (bb is None):
                self.fail(((path, ".buffer_map"), i), ba, bb, "buffer parameter vs scalar")
            if ba is not None and bb is not None:
                self.defining += 1  # buffer_map defines its buffers
                try:
                    self.buffer(ba, bb, ((path, ".buffer_map"), f"[{pa.name}]"))
                finally:
                    self.defining -= 1
        if len(a.buffer_map) != len(b.buffer_map):
            self.fail((path, ".buffer_map"), a.buffer_map, b.buffer_map, "different sizes")
        self.value(a.ret_type, b.ret_type, (path, ".ret_type"))
        # The body first: attrs may name buffers the body defines (returned tensors).
        self.value(_function_body(a), _function_body(b), (path, ".body"))
        self.mapping(
            {k: v for k, v in a.attrs.items() if k not in _IGNORED_ATTRS},
            {k: v for k, v in b.attrs.items() if k not in _IGNORED_ATTRS},
            (path, ".attrs"),
        )

    def mapping(self, a: Mapping[Any, Any], b: Mapping[Any, Any], path: _Path) -> None:
        if sorted(map(str, a)) != sorted(map(str, b)):
            self.fail(path, dict(a), dict(b), lambda: f"keys differ: {sorted(a)} vs {sorted(b)}")
        for key in sorted(a, key=str):
            self.value(_annotation(a[key]), _annotation(b[key]), (path, _Key(key)))

    def value(self, a: Any, b: Any, path: _Path) -> None:
        cls = type(a)
        kind = _value_kind(cls)
        if a is b and kind != _VAR and kind != _BUFFER:
            if not self.map_free_vars or not isinstance(a, (PrimExpr, Stmt, IterVar)):
                return
        if kind == _SPAN or isinstance(b, Span):
            return  # source positions are never part of the structure
        if kind == _VAR and isinstance(b, Var):
            self.var(a, b, path)
        elif kind == _BUFFER and isinstance(b, Buffer):
            self.buffer(a, b, path)
        elif cls is not type(b):
            self.fail(path, a, b, f"{cls.__name__} vs {type(b).__name__}")
        elif kind == _NODE:
            self.node(a, b, path)
        elif kind == _SEQ:
            if len(a) != len(b):
                self.fail(path, a, b, f"lengths differ: {len(a)} vs {len(b)}")
            for i, (x, y) in enumerate(zip(a, b)):
                self.value(x, y, (path, i))
        elif kind == _FUNC:
            self.func(a, b, path)
        elif kind == _MODULE:
            if sorted(a.functions) != sorted(b.functions):
                self.fail(path, sorted(a.functions), sorted(b.functions), "function names differ")
            for name in sorted(a.functions):
                # Each function is its own scope: a var or buffer object that several
                # functions define (one Buffer in two buffer_maps) is several definitions.
                inner = type(self)(self.map_free_vars, self.compare_block_names)
                inner.value(a.functions[name], b.functions[name], (path, _Key(name)))
        elif kind == _MAP:
            self.mapping(a, b, path)
        elif kind == _FLOAT:
            # -0.0 and 0.0 differ (a sign a kernel can observe); every NaN is the same value.
            same = a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
            if not (same or (math.isnan(a) and math.isnan(b))):
                self.fail(path, a, b, lambda: f"{a!r} vs {b!r}")
        elif a != b:
            self.fail(path, a, b, lambda: f"{a!r} vs {b!r}")


def _function_body(func: PrimFunc) -> Any:
    """The body, seen through a bare root block: an explicit bare ``with T.block("root")``
    and none at all are the same function (functions built outside the parser, by passes
    or by hand, may have none)."""
    inner = bare_root_body(func.body)
    return func.body if inner is None else inner


class _Unequal(Exception):
    """A mismatch found by :func:`structural_equal` (no message: nobody reads it)."""


class _EqualQuiet(_Equal):
    # The simplifier asks "equal?" many times where the answer is no; rendering the
    # mismatch message (the path and both sides' text) cost more than the comparison.
    def fail(self, path: _Path, a: Any, b: Any, reason: str | Callable[[], str]) -> None:
        raise _Unequal


def assert_structural_equal(
    lhs: Any, rhs: Any, map_free_vars: bool = False, *, compare_block_names: bool = False
) -> None:
    """Raise :class:`StructuralMismatch` naming the first differing path.

    Block names are not compared (TVM's rule: its ``Block`` equality skips ``name_hint``);
    ``compare_block_names=True`` compares them too."""
    _Equal(map_free_vars, compare_block_names).value(lhs, rhs, "<root>")


def structural_equal(
    lhs: Any, rhs: Any, map_free_vars: bool = False, *, compare_block_names: bool = False
) -> bool:
    """Whether two IR values are equal up to renaming of the variables they bind."""
    if lhs is rhs and not map_free_vars:
        return True
    if isinstance(lhs, PrimExpr) and type(lhs) is not type(rhs) and not isinstance(rhs, Span):
        return False  # the comparison's first step; most of the simplifier's questions end here
    if not map_free_vars and isinstance(lhs, PrimExpr):
        return _expr_equal(lhs, rhs)
    try:
        _EqualQuiet(map_free_vars, compare_block_names).value(lhs, rhs, "<root>")
    except _Unequal:
        return False
    return True


def _expr_equal(a: PrimExpr, b: PrimExpr) -> bool:
    """``structural_equal(a, b)`` of two expressions, free variables compared by identity.

    The simplifier asks this thousands of times a build, mostly of small index trees.
    Operators, casts and constants define no variable, so their operands compare alone and
    a free variable equals only itself; any other node (a ``Let`` binds one, a load names
    a buffer) goes to the full comparison, which sees no enclosing binding here either.
    """
    if a is b:
        return True
    cls = type(a)
    if cls is not type(b):
        return False
    if isinstance(a, BinaryOp) and isinstance(b, BinaryOp):
        return a.dtype == b.dtype and _expr_equal(a.a, b.a) and _expr_equal(a.b, b.b)
    if cls is IntImm and isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.dtype == b.dtype and a.value == b.value
    if cls is Var:
        return False  # two free variables: equal only when they are one object
    if isinstance(a, Cast) and isinstance(b, Cast):
        return a.dtype == b.dtype and _expr_equal(a.value, b.value)
    if isinstance(a, Not) and isinstance(b, Not):
        return _expr_equal(a.a, b.a)
    try:
        _EqualQuiet(False, False).value(a, b, "<root>")
    except _Unequal:
        return False
    return True


class _Hasher:
    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.put = self.tokens.append
        self.numbers: dict[int, int] = {}
        self.keepalive: list[Any] = []
        self.var_types: dict[int, str] = {}

    def digest(self) -> int:
        data = "\x00".join(self.tokens).encode("utf-8", "surrogatepass")
        return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")

    def bind(self, obj: Any) -> None:
        if id(obj) not in self.numbers:
            self.numbers[id(obj)] = len(self.numbers)
            self.keepalive.append(obj)

    def var(self, v: Var, define: bool = False) -> None:
        if define:
            self.bind(v)
        number = self.numbers.get(id(v))
        signature = self.var_types.get(id(v))
        if signature is None:
            signature = f"{type(v).__name__}:{v.dtype}:{v.type_annotation}"
            self.var_types[id(v)] = signature
            self.keepalive.append(v)
        self.put(signature)
        # Free vars hash by type only so that hashing agrees with both
        # identity comparison and map_free_vars comparison.
        self.put("free" if number is None else f"#{number}")

    def buffer(self, b: Buffer) -> None:
        number = self.numbers.get(id(b))
        if number is not None:
            self.put(f"buf#{number}")
            return
        self.bind(b)
        self.put("buffer")
        self.bind(b.data)
        for name in (
            "data",
            "dtype",
            "shape",
            "strides",
            "elem_offset",
            "scope",
            "data_alignment",
            "offset_factor",
            "axis_separators",
        ):
            value = getattr(b, name)
            if isinstance(value, tuple):
                for item in value:
                    if isinstance(item, Var):
                        self.bind(item)
            elif isinstance(value, Var):
                self.bind(value)
            self.value(value)

    def value(self, a: Any) -> None:
        cls = type(a)
        kind = _value_kind(cls)
        if kind == _NODE:
            name, defs, rest = _NODE_PLANS[cls]
            self.put(name)
            for field in defs:
                self.var(getattr(a, field), define=True)
            for field in rest:
                self.value(getattr(a, field))
        elif kind == _VAR:
            self.var(a)
        elif kind == _OTHER:
            self.put(f"{cls.__name__}:{a}")
        elif kind == _SEQ:
            self.put(f"seq{len(a)}")
            for item in a:
                self.value(item)
        elif kind == _BUFFER:
            self.buffer(a)
        elif kind == _SPAN:
            self.put("span")
        elif kind == _FLOAT:
            self.put("fnan" if a != a else "f" + struct.pack("<d", a).hex())
        elif kind == _FUNC:
            self.put("PrimFunc")
            for p in a.params:
                self.var(p, define=True)
            for p in a.params:
                if p in a.buffer_map:
                    self.buffer(a.buffer_map[p])
            self.value(a.ret_type)
            self.value(_function_body(a))
            self.value({k: v for k, v in a.attrs.items() if k not in _IGNORED_ATTRS})
        elif kind == _MODULE:
            self.put("IRModule")
            for name in sorted(a.functions):
                self.put(name)
                self.put(str(structural_hash(a.functions[name])))  # one scope per function
        elif kind == _MAP:
            self.put(f"map{len(a)}")
            for key in sorted(a, key=str):
                self.put(str(key))
                self.value(_annotation(a[key]))
        else:  # _ENUM
            self.put(f"{cls.__name__}.{a.name}")


_BOOL = as_dtype("bool")


def _annotation(value: Any) -> Any:
    """An attribute or annotation value as TVM holds it: a Python bool is the bool constant
    (TVM converts ``True`` to ``T.bool(True)``, which is what its printer shows)."""
    if value is True or value is False:
        return IntImm(_BOOL, int(value))
    return value


def structural_hash(value: Any) -> int:
    """A hash consistent with :func:`structural_equal`, stable across processes."""
    hasher = _Hasher()
    hasher.value(value)
    return hasher.digest()
