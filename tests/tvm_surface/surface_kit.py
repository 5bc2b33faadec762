"""Shared checks of the TVM-surface tests: parse a text, print it, parse the print back to a
structurally equal function; build natively and with the reference interpreter and compare."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from irbuilder.ir import PrimFunc, assert_structural_equal
from tvmscript import build, from_source

HEADER = "from tvmscript import tir as T\n\n"


def round_trip(source: str) -> PrimFunc:
    """Parse ``source`` (a TVMScript text without the import line), print it, parse the print
    back, check structural equality and a stable second print; returns the first function."""
    first = from_source(HEADER + textwrap.dedent(source))
    assert isinstance(first, PrimFunc)
    printed = first.script()
    second = from_source(printed)
    assert isinstance(second, PrimFunc)
    assert_structural_equal(first, second)
    assert second.script() == printed, "printing is not stable"
    return first


def run_both(func: PrimFunc, *arrays: Any, **build_kwargs: Any) -> list[Any]:
    """Run ``func`` natively and in the interpreter on copies of ``arrays``; assert equal
    (NaN-aware, float rtol 1e-5) outputs and return the native arrays and result."""
    native_args = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    interp_args = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
    native_result = build(func, **build_kwargs)(*native_args)
    interp_result = build(func, target="interp")(*interp_args)
    for got, want in zip(native_args, interp_args):
        if not isinstance(got, np.ndarray):
            continue
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)
        else:
            np.testing.assert_array_equal(got, want)
    if native_result is not None or interp_result is not None:
        np.testing.assert_allclose(np.asarray(native_result), np.asarray(interp_result), rtol=1e-5)
    return [*native_args, native_result]
