"""Calls between the functions of one ``@I.ir_module`` class: ``Module.f(A, B)``.

Inside the class, its name stands for the module (TVM's convention): ``Module.f(args)``
is a call of the module's function ``f``, built as the IR's kernel-to-kernel call
``T.call_extern("int32", "f", args...)`` (codegen propagates the callee's failure); a
callee that returns a scalar (``-> T.float32``, ``T.ret``) gives the call its type, and
its value. Each
argument is adapted to the callee's parameter:

* a parameter of the callee's ``buffer_map`` (``T.Buffer`` / matched handle) receives
  an array: pass one of the caller's own buffer parameters (the buffer or its handle);
* a pointer parameter (``T.handle("float32")``) receives a data pointer: ``A.data``,
  ``T.address_of(A[i])``, or a buffer (its data is passed);
* a scalar parameter receives a value of its dtype (Python numbers are converted).

The class's functions are parsed callees first (a call does not depend on the order of
definition); a function may call itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from irbuilder import IRBuilder
from irbuilder.frames import PrimFuncFrame
from irbuilder.ir import Buffer, Call, CallKind, PrimExpr, PrimFunc, Var, as_dtype, const
from tvmscript.parser.core import doc

__all__ = ["ModuleFunctions", "callee_order"]

_STATUS = as_dtype("int32")  # a kernel returns 0, or nonzero with its exception set


class ModuleFunctions:
    """The value of an ``@I.ir_module`` class's name while its functions are parsed."""

    def __init__(self, class_name: str, names: list[str]) -> None:
        self._class_name = class_name
        self._names = names
        self.parsed: dict[str, PrimFunc] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._names:
            known = ", ".join(self._names) or "none"
            raise AttributeError(
                f"module {self._class_name!r} has no function {name!r} (it has: {known})"
            )
        return _Subroutine(self._class_name, name, self.parsed.get(name))

    def __repr__(self) -> str:
        return f"<functions of @I.ir_module {self._class_name}>"


class _Subroutine:
    def __init__(self, class_name: str, name: str, callee: PrimFunc | None) -> None:
        self.class_name = class_name
        self.name = name
        self.callee = callee

    def __call__(self, *args: Any, **kwargs: Any) -> Call:
        label = f"{self.class_name}.{self.name}"
        if kwargs:
            raise TypeError(f"{label}() takes positional arguments only")
        builder = IRBuilder.current() if IRBuilder.is_in_scope() else None
        caller = builder.find(PrimFuncFrame) if builder is not None else None
        if caller is None:
            raise TypeError(f"{label}() can only be called inside a kernel of the module")
        params, buffer_map = _signature(self, caller)
        if len(args) != len(params):
            raise TypeError(
                f"{label}() takes {len(params)} argument(s) "
                f"({', '.join(p.name for p in params)}), got {len(args)}"
            )
        values = tuple(
            _argument(label, position, arg, param, param in buffer_map, caller)
            for position, (arg, param) in enumerate(zip(args, params), 1)
        )
        # A callee returning a scalar (``-> T.float32`` and ``T.ret``) gives the call that
        # type (TVM's call_tir types it by the callee's return type); it is inlined before
        # code generation (lowering.transforms.scalar_calls).
        ret = self.callee.ret_type if self.callee is not None else caller.ret_type
        dtype = ret if ret is not None and not ret.is_handle else _STATUS
        return Call(dtype, self.name, values, CallKind.EXTERN)


def _signature(sub: _Subroutine, caller: PrimFuncFrame) -> tuple[list[Var], Mapping[Var, Buffer]]:
    if sub.callee is not None:
        return list(sub.callee.params), sub.callee.buffer_map
    if caller.name == sub.name:  # a recursive call: the signature is declared already
        return caller.params, caller.buffer_map
    raise TypeError(
        f"{sub.class_name}.{sub.name}() is called by a function that it calls in turn; "
        "calls between functions that call each other are not supported"
    )


def _caller_handle(caller: PrimFuncFrame, buffer: Buffer) -> Var | None:
    for handle, mapped in caller.buffer_map.items():
        if mapped is buffer:
            return handle
    return None


def _argument(
    label: str, position: int, arg: Any, param: Var, takes_array: bool, caller: PrimFuncFrame
) -> PrimExpr:
    where = f"{label}(): argument {position} ({param.name!r})"
    if takes_array:
        if isinstance(arg, Buffer):
            handle = _caller_handle(caller, arg)
            if handle is not None:
                return handle
        elif isinstance(arg, Var) and arg in caller.buffer_map:
            return arg
        got = f"buffer {arg.name!r}" if isinstance(arg, Buffer) else _describe(arg)
        raise TypeError(
            f"{where} is an array parameter (T.Buffer): pass one of the caller's buffer "
            f"parameters, got {got}"
            + (" (a data pointer; pass the buffer itself)" if _is_pointer(arg) else "")
        )
    if param.dtype.is_handle:
        if isinstance(arg, Buffer):
            return arg.data
        if isinstance(arg, Var) and arg in caller.buffer_map:
            return caller.buffer_map[arg].data
        if isinstance(arg, PrimExpr) and arg.dtype.is_handle:
            return arg
        raise TypeError(f"{where} is a pointer (T.handle): pass A.data, got {_describe(arg)}")
    if isinstance(arg, (bool, int, float)):
        return const(arg, param.dtype)
    if isinstance(arg, PrimExpr) and arg.dtype == param.dtype:
        return arg
    raise TypeError(f"{where} is {param.dtype}, got {_describe(arg)}; cast it")


def _is_pointer(value: Any) -> bool:
    return isinstance(value, PrimExpr) and value.dtype.is_handle


def _describe(value: Any) -> str:
    if isinstance(value, Buffer):
        return f"buffer {value.name!r}"
    if isinstance(value, Var):
        return f"{value.name!r} ({value.dtype})"
    if isinstance(value, PrimExpr):
        return f"a {value.dtype} expression"
    return f"a {type(value).__name__}"


def callee_order(class_name: str, defs: list[doc.FunctionDef]) -> list[doc.FunctionDef]:
    """``defs`` reordered so that a function comes after the functions it calls
    (``ClassName.f(...)``); functions calling each other keep their textual order."""
    by_name = {d.name: d for d in defs}
    calls: dict[str, list[str]] = {}
    for d in defs:
        found = []
        for node in doc.walk(d):
            if (
                isinstance(node, doc.Attribute)
                and isinstance(node.value, doc.Name)
                and node.value.id == class_name
                and node.attr in by_name
                and node.attr != d.name
                and node.attr not in found
            ):
                found.append(node.attr)
        calls[d.name] = found
    order: list[doc.FunctionDef] = []
    state: dict[str, str] = {}

    def visit(name: str) -> None:
        if state.get(name) is not None:
            return  # done, or in progress (a cycle: textual order decides)
        state[name] = "visiting"
        for callee in calls[name]:
            visit(callee)
        state[name] = "done"
        order.append(by_name[name])

    for d in defs:
        visit(d.name)
    return order
