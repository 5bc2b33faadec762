"""Where LLVM may form gathers on its own: only in functions that ask for them.

On AVX-512 targets LLVM's cost model takes a gather of a few elements for cheap, and its SLP
vectorizer packs independent scalar chains whose loads are far apart into one: the four
rows that ``jam_parallel_reductions`` interleaves in an arg-min became a ``vgatherqps`` of
4 floats per column, built with shuffles, where four scalar loads were due. On the Zen 5
host that arg-min (4096 x 1024 float32) ran at 0.86 ms for AVX-512 code against 0.39 ms for
AVX2 code, and 0.42 ms with gathers off; an arg-max, a log-sum-exp, a float16 row sum and an
average pool also gained 13-27%, and no kernel of the suite or of ``benchmarks/tvm_style*``
lost. Such functions get the function attribute ``"target-features"`` with LLVM's
``+prefer-no-gather`` tuning added to the machine's features.

A function that means to gather keeps the default: one with a no-overlap region whose loads
gathers vectorize (a ``version_gathers`` loop at data-dependent indices, the point of that
pass; a stride-2 window's columns: without gathers a stride-2 depthwise convolution, max
pool and average pool ran 1.4-1.8x slower) or with an
explicit vector load at a data-dependent index (``llvm.masked.gather``, which the tuning
would turn back into per-lane loads).
"""

from __future__ import annotations

from irbuilder.ir import (
    AttrStmt,
    Broadcast,
    BufferLoad,
    For,
    IntImm,
    PrimFunc,
    Ramp,
    Stmt,
    post_order_visit,
)
from lowering.analysis.loads import reads_memory
from lowering.arith.canonical import linear_coefficient
from lowering.late.alias_version import NOALIAS_ATTR
from lowering.target import Target
from lowering.transforms.auto_parallel import child_stmts, has_loop

__all__ = ["function_attributes", "intends_gathers"]


def intends_gathers(func: PrimFunc) -> bool:
    """Whether ``func`` asks for gathers (module doc)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, AttrStmt) and node.attr_key == NOALIAS_ATTR:
            found = found or _gathers_pay(node.body)
        elif isinstance(node, BufferLoad) and node.dtype.lanes > 1 and node.indices:
            found = found or not isinstance(node.indices[-1], (Ramp, Broadcast))

    post_order_visit(func.body, visit)
    return found


SHORT_LOOP = 8
"""Trip count below which LLVM unrolls a loop whole and vectorizes the one around it (a 3-tap
window's column loop): the loop whose strides decide (:func:`_gathers_pay`)."""


def _gathers_pay(region: Stmt) -> bool:
    """Whether a no-overlap region has loads only gathers vectorize: at a data-dependent
    index (``version_gathers``' loops) or with a stride other than 0 or 1 along the loop
    LLVM vectorizes (the innermost one, or the one around a short innermost loop: a
    stride-2 window's columns). Where that loop walks every load contiguously, the
    gathers LLVM forms vectorize across the rows of a short row instead: a 14 x 14
    convolution's interchanged window (rows 16 apart in its padded input) became 168
    ``vgatherdps``, 163 -> 18 ms one thread with the tuning."""
    found = False

    def strided(loop: For) -> bool:
        var = loop.loop_var
        hit = False

        def visit(node: object) -> None:
            nonlocal hit
            if not isinstance(node, BufferLoad) or not node.indices:
                return
            index = node.indices[-1]
            if isinstance(index, Ramp):
                hit = hit or not (isinstance(index.stride, IntImm)
                                  and index.stride.value in (0, 1))
                index = index.base
            step = linear_coefficient(index, var)
            hit = hit or step is None or abs(step) > 1

        post_order_visit(loop.body, visit)
        return hit

    def walk(stmt: Stmt, loops: list[For]) -> None:
        nonlocal found
        if found:
            return
        if isinstance(stmt, For):
            if not has_loop(stmt.body):
                chosen = [*loops, stmt]
                at = len(chosen) - 1
                while at > 0 and _short(chosen[at]):
                    at -= 1
                found = strided(chosen[at])
                return
            walk(stmt.body, [*loops, stmt])
            return
        for child in child_stmts(stmt):
            walk(child, loops)

    def data_dependent(node: object) -> None:
        nonlocal found
        if isinstance(node, BufferLoad) and any(reads_memory(i) for i in node.indices):
            found = True

    post_order_visit(region, data_dependent)
    walk(region, [])
    return found


def _short(loop: For) -> bool:
    extent = loop.extent
    return isinstance(extent, IntImm) and extent.value < SHORT_LOOP


def function_attributes(func: PrimFunc, target: Target, machine_features: str) -> str:
    """Attributes for the header of ``func`` and of its outlined parallel bodies: the gather
    tuning (module doc) on AVX-512 targets, or nothing. ``machine_features`` is the feature
    string of the target machine (the attribute replaces it for the function)."""
    if not target.has_feature("avx512f") or intends_gathers(func):
        return ""
    features = ",".join(f for f in (machine_features, "+prefer-no-gather") if f)
    return f' "target-features"="{features}"'
