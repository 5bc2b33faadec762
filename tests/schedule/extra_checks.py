"""Helpers of the tests of the ``schedule_extra`` primitives: the realize of a block, its
bindings as text, the loops above it, and a comparison of two functions compiled for a
native target on the same random arguments."""

from __future__ import annotations

from typing import Any

import numpy as np

import tvmscript
from irbuilder.ir import BlockRealize, For, PrimFunc, expr_text, post_order_visit
from tvmscript import tir as T
from tvmscript.schedule import random_arguments

NATIVE = "llvm -mcpu=znver3"


def func_of(sch: T.Schedule) -> PrimFunc:
    return sch.mod["main"]


def realize_of(sch: T.Schedule, block: Any) -> BlockRealize:
    """The BlockRealize of ``block`` (a handle or a name) in the scheduled function."""
    node = sch.get(sch.get_block(block) if isinstance(block, str) else block)
    found: list[BlockRealize] = []
    post_order_visit(
        func_of(sch).body,
        lambda n: found.append(n) if isinstance(n, BlockRealize) and n.block is node else None,
    )
    assert len(found) == 1, found
    return found[0]


def bindings(sch: T.Schedule, block: Any) -> list[str]:
    """``"<iter var>=<binding>"`` for each iter var of the block, in order."""
    realize = realize_of(sch, block)
    return [
        f"{iv.var.name}={expr_text(value)}"
        for iv, value in zip(realize.block.iter_vars, realize.iter_values)
    ]


def loop_shape(sch: T.Schedule, block: Any) -> list[tuple[str, int, int]]:
    """(name, min, extent) of the loops above the block, outermost first."""
    rv = sch.get_block(block) if isinstance(block, str) else block
    out = []
    for lp in sch.get_loops(rv):
        node = sch.get(lp)
        assert isinstance(node, For)
        out.append((node.loop_var.name, int(node.min.value), int(node.extent.value)))
    return out


def block_names(func: PrimFunc) -> list[str]:
    """The names of the blocks in pre-order (the root excluded)."""
    names: list[str] = []
    post_order_visit(
        func.body,
        lambda n: names.append(n.block.name_hint) if isinstance(n, BlockRealize) else None,
    )
    # post order lists children first; the tests compare sets or sort where order matters
    return [n for n in names if n != "root"]


def run_native(func: PrimFunc, args: list[np.ndarray[Any, Any]]) -> list[np.ndarray[Any, Any]]:
    arrays = [a.copy() for a in args]
    tvmscript.build(func, target=NATIVE)(*arrays)
    return arrays


def assert_native_same(original: PrimFunc, sch: T.Schedule, seed: int = 7) -> None:
    """The scheduled function compiled natively gives the original's numbers."""
    args = random_arguments(original, seed)
    assert args is not None
    want = run_native(original, args)
    got = run_native(func_of(sch), args)
    for w, g in zip(want, got):
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(g, w)


def region_text(region: Any) -> str:
    """``"B[lo:hi, ...]"`` of a BufferRegion, bounds as the IR prints them."""
    parts = []
    for rng in region.region:
        lo = expr_text(rng.min)
        ext = rng.extent
        if hasattr(ext, "value") and ext.value == 1:
            parts.append(lo)
        else:
            parts.append(f"{lo}:{lo}+{expr_text(ext)}")
    return f"{region.buffer.name}[{', '.join(parts)}]"
