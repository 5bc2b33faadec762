"""How TIR binds names: ``x = value``, loop and ``with ... as`` targets, and what may not
be rebound.

* A new Var or Buffer is named after its target; any other expression becomes a
  ``LetStmt`` over the rest of the body (``T.bind``); a Python value (or
  ``T.meta_var(v)``) stays a Python value.
* A TIR variable cannot be rebound in the scope that defines it, and the variable of an
  enclosing loop cannot be assigned at all (``i = j`` inside ``for j`` inside ``for i``).
* ``T``, ``I``, ``range`` and names bound to modules cannot be assigned.
* ``vi = T.axis.remap("SS", ...)`` (several block vars bound to one name) is rejected:
  one name per axis; so is a name twice in one target (``vi, vi = ...``).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from irbuilder import IRBuilder, def_
from irbuilder.builder import Frame
from irbuilder.frames import BlockFrame, ForFrame
from irbuilder.ir import Buffer, PrimExpr, Var
from irbuilder.tir import MetaVar, bind
from tvmscript.parser.core import Parser, doc

__all__ = ["bind_names", "bind_target", "check_rebinding", "check_target_names"]


def _name_node(target: doc.expr, name: str) -> doc.AST:
    for node in doc.target_names(target):
        if node.id == name:
            return node
    return target


def _enclosing_loop_var(name: str, value: Any) -> bool:
    """Whether ``value`` is the variable of a loop being built around this statement."""
    if not isinstance(value, Var) or not IRBuilder.is_in_scope():
        return False
    for frame in IRBuilder.current().frames:
        if isinstance(frame, ForFrame) and any(loop.var is value for loop in frame.loops):
            return True
    return False


def check_target_names(parser: Parser, target: doc.expr, *, loop_vars: bool = True) -> None:
    """Reject binding a name that must keep its meaning in the kernel.

    A loop variable of an enclosing loop (in any enclosing scope, not only the current
    one: ``i = j`` inside ``for j`` inside ``for i`` would silently shadow ``i``; skipped
    with ``loop_vars=False`` for a nested loop's own target), and a namespace:
    ``T``/``I``/``range`` or a name captured as a module (``T = 3``; a module global the
    kernel only assigns is shadowed, as in Python).
    """
    seen: set[str] = set()
    for node in doc.target_names(target):
        name = node.id
        if name in seen:
            # `vi, vi = T.axis.remap(...)`: the second would rebind the first's name.
            parser.report_error(node, f"'{name}' appears twice in one assignment target")
        seen.add(name)
        try:
            current = parser.var_table.lookup(name)
        except KeyError:
            if name in parser.extra_names:
                parser.report_error(
                    node,
                    f"cannot assign to '{name}': it names the built-in "
                    f"{'namespace' if name != 'range' else 'loop range'} of every kernel",
                )
            current = parser.captured.values.get(name)
            if name in parser.captured.from_globals:
                current = None  # a module global the kernel assigns is shadowed, as in Python
        if isinstance(current, ModuleType):
            parser.report_error(
                node, f"cannot assign to '{name}': it names the module {current.__name__!r}"
            )
        if loop_vars and _enclosing_loop_var(name, current):
            parser.report_error(
                node,
                f"cannot assign to loop variable '{name}' inside its loop; bind the value to "
                "a new name",
            )


def check_rebinding(parser: Parser, target: doc.expr, name: str, value: Any) -> None:
    """Reject rebinding a TIR variable or buffer in the scope that defines it."""
    if not parser.var_table.defined_in_current_frame(name):
        return
    old = parser.var_table.lookup(name)
    if isinstance(old, (Var, Buffer)) or isinstance(value, (Var, Buffer, PrimExpr)):
        parser.report_error(
            _name_node(target, name),
            f"'{name}' is already defined in this scope; a TIR variable cannot be "
            "reassigned (store into a buffer element for a mutable value)",
        )


def _block_iter_vars(values: list[Any] | tuple[Any, ...]) -> int:
    """How many of ``values`` are iter vars of the innermost block (from ``T.axis.*``)."""
    if not IRBuilder.is_in_scope():
        return 0
    block = IRBuilder.current().find(BlockFrame)
    if block is None:
        return 0
    return sum(1 for v in values if any(iv.var is v for iv in block.iter_vars))


def _bind_value(parser: Parser, target: doc.expr, name: str, value: Any) -> Any:
    check_rebinding(parser, target, name, value)
    if isinstance(value, (list, tuple)) and isinstance(target, doc.Name):
        count = _block_iter_vars(value)
        if count:
            names = ", ".join(f"v{k}" for k in range(len(value)))
            parser.report_error(
                target,
                f"{len(value)} block variables (from T.axis.remap) are bound to the single "
                f"name '{name}'; unpack one name per axis: `{names} = T.axis.remap(...)`",
            )
    if isinstance(value, (Var, Buffer)) and not parser.var_table.exist(value):
        return _define(parser, name, value)
    if isinstance(value, PrimExpr):
        return def_(name, bind(value))
    return value


def _define(parser: Parser, name: str, value: Var | Buffer) -> Var | Buffer:
    """``def_``, except that a buffer over a data var the script named itself
    (``T.decl_buffer(..., data=d)``) leaves that var's name alone."""
    if isinstance(value, Buffer) and parser.var_table.exist(value.data):
        kept = value.data.name
        def_(name, value)
        value.data.set_name_hint(kept)
        return value
    return def_(name, value)


def bind_names(parser: Parser, target: doc.expr, name: str, value: Any) -> Any:
    """Name IR variables (loop vars, ``with ... as x``) without creating any statement."""
    if isinstance(value, (Var, Buffer)):
        return _define(parser, name, value)
    if isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, (Var, Buffer)):
                _define(parser, name, item)
    return value


def bind_target(parser: Parser, target: doc.expr, value: Any) -> None:
    """Assign ``value`` to ``target`` with the rules of the module docstring."""
    check_target_names(parser, target)
    if isinstance(value, MetaVar):
        parser.eval_assign(target, value.value, allow_shadowing=True)
        return
    if isinstance(value, Frame) and value.state == "new":
        value = value.enter_implicit()
        parser.eval_assign(target, value, bind_value=bind_names, allow_shadowing=False)
        return
    parser.eval_assign(target, value, bind_value=_bind_value, allow_shadowing=True)
