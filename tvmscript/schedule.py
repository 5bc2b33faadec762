"""The schedule's proof by execution: the reference interpreter on random inputs.

``tir.Schedule(func, debug_mask="all")`` runs, after every primitive, the scheduled function
and the original one on the same random arguments and compares every buffer afterwards.
Integers must match exactly; floats within ``rtol=atol=1e-4`` because reordering or
factoring a reduction reassociates its sum (TVM does the same; the order is what the schedule
asks for). Functions with scalar parameters, symbolic shapes or returned tensors are not
executed (only the verifier runs), and so are functions whose run would execute more than
``MAX_CHECKED_INSTANCES`` statement instances (the interpreter is slow; TVM's own test
functions of 128^4 elements would take hours).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from backend.interp import make_interp_kernel
from irbuilder.ir import For, IntImm, PrimFunc, Stmt
from lowering.schedule import set_equivalence_checker

__all__ = ["MAX_CHECKED_INSTANCES", "check_same_results", "random_arguments"]

_TRIALS = 2
MAX_CHECKED_INSTANCES = 1 << 17


def statement_instances(stmt: Any) -> int:
    """How many statement instances running ``stmt`` executes (a symbolic loop extent
    counts as more than the check's limit)."""
    if isinstance(stmt, For):
        extent = stmt.extent
        trips = extent.value if isinstance(extent, IntImm) else MAX_CHECKED_INSTANCES + 1
        return max(trips, 0) * statement_instances(stmt.body)
    if isinstance(stmt, (list, tuple)):
        return sum(statement_instances(s) for s in stmt)
    if not isinstance(stmt, Stmt) or not dataclasses.is_dataclass(stmt):
        return 0
    total = 1
    for field in dataclasses.fields(stmt):
        value = getattr(stmt, field.name)
        if isinstance(value, (Stmt, list, tuple)):
            total += statement_instances(value)
    return total


_REFERENCE: dict[
    int, tuple[PrimFunc, list[list[np.ndarray[Any, Any]]], list[list[np.ndarray[Any, Any]]]]
] = {}


def random_arguments(func: PrimFunc, seed: int) -> list[np.ndarray[Any, Any]] | None:
    """One random array per parameter, or None when the function cannot be run this way."""
    if "tensor_returns" in func.attrs:
        return None
    rng = np.random.default_rng(seed)
    args: list[np.ndarray[Any, Any]] = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            return None
        if not all(isinstance(d, IntImm) for d in buffer.shape):
            return None
        shape = tuple(d.value for d in buffer.shape)  # type: ignore[attr-defined]
        dtype = np.dtype(str(buffer.dtype))
        if dtype.kind in "iu":
            args.append(rng.integers(-8 if dtype.kind == "i" else 0, 9, shape).astype(dtype))
        elif dtype.kind == "f":
            args.append(rng.uniform(-1.0, 1.0, shape).astype(dtype))
        elif dtype.kind == "b":
            args.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            return None
    return args


def _run(func: PrimFunc, inputs: list[np.ndarray[Any, Any]]) -> list[np.ndarray[Any, Any]]:
    arrays = [a.copy() for a in inputs]
    make_interp_kernel(func)(*arrays)
    return arrays


def _reference(
    original: PrimFunc,
) -> tuple[list[list[np.ndarray[Any, Any]]], list[list[np.ndarray[Any, Any]]]] | None:
    cached = _REFERENCE.get(id(original))
    if cached is not None and cached[0] is original:
        return cached[1], cached[2]
    inputs: list[list[np.ndarray[Any, Any]]] = []
    outputs: list[list[np.ndarray[Any, Any]]] = []
    for trial in range(_TRIALS):
        args = random_arguments(original, seed=trial)
        if args is None:
            return None
        inputs.append(args)
        try:
            outputs.append(_run(original, args))
        except NotImplementedError:  # the interpreter cannot run it (an unmodelled builtin)
            return None
        except IndexError:  # the original itself accesses out of bounds: nothing to compare
            return None
    if len(_REFERENCE) > 64:
        _REFERENCE.clear()
    _REFERENCE[id(original)] = (original, inputs, outputs)
    return inputs, outputs


def _moved(
    arrays: list[np.ndarray[Any, Any]], layouts: Sequence[Any], seed: int
) -> list[np.ndarray[Any, Any]]:
    """The arrays with the parameters ``transform_layout`` moved put in their new layouts
    (each layout's ``apply`` fills padding with its pad value, or arbitrary values)."""
    moved = list(arrays)
    for layout in layouts:
        moved[layout.param] = layout.apply(moved[layout.param], seed)
    return moved


def check_same_results(
    original: PrimFunc, scheduled: PrimFunc, layouts: Sequence[Any] = ()
) -> str | None:
    """None when ``scheduled`` computes what ``original`` does; else what differs.

    ``layouts`` are parameters whose layout the schedule changed: the scheduled function
    gets the inputs moved into them and must produce the outputs moved likewise (padding
    holding the pad value, or left as it was)."""
    for func in (original, scheduled):
        if statement_instances(func.body) > MAX_CHECKED_INSTANCES:
            return None
    reference = _reference(original)
    if reference is None:
        return None
    for trial, (inputs, expected) in enumerate(zip(*reference)):
        if layouts:
            inputs, expected = _moved(inputs, layouts, trial), _moved(expected, layouts, trial)
        try:
            got = _run(scheduled, inputs)
        except Exception as err:  # the scheduled program failed where the original ran
            return f"the scheduled function raised {type(err).__name__}: {err}"
        for param, want, have in zip(original.params, expected, got):
            name = original.buffer_map[param].name
            if want.dtype.kind == "f":
                same = np.allclose(want, have, rtol=1e-4, atol=1e-4, equal_nan=True)
            else:
                same = np.array_equal(want, have)
            if not same:
                bad = (
                    np.argwhere(~np.isclose(want, have, rtol=1e-4, atol=1e-4))
                    if want.dtype.kind == "f"
                    else np.argwhere(want != have)
                )
                where = tuple(int(x) for x in bad[0]) if len(bad) else ()
                return (
                    f"buffer {name} differs from the original's at {where}: "
                    f"{want[where] if where else want} vs {have[where] if where else have}"
                )
    return None


set_equivalence_checker(check_same_results)
