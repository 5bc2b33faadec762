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

A function that means to gather keeps the default: one with a ``version_gathers`` no-overlap
region (its loop vectorizes into hardware gathers, the point of that pass) or with an
explicit vector load at a data-dependent index (``llvm.masked.gather``, which the tuning
would turn back into per-lane loads).
"""

from __future__ import annotations

from irbuilder.ir import AttrStmt, Broadcast, BufferLoad, PrimFunc, Ramp, post_order_visit
from lowering.late.alias_version import NOALIAS_ATTR
from lowering.target import Target

__all__ = ["function_attributes", "intends_gathers"]


def intends_gathers(func: PrimFunc) -> bool:
    """Whether ``func`` asks for gathers (module doc)."""
    found = False

    def visit(node: object) -> None:
        nonlocal found
        if isinstance(node, AttrStmt) and node.attr_key == NOALIAS_ATTR:
            found = True
        elif isinstance(node, BufferLoad) and node.dtype.lanes > 1 and node.indices:
            found = found or not isinstance(node.indices[-1], (Ramp, Broadcast))

    post_order_visit(func.body, visit)
    return found


def function_attributes(func: PrimFunc, target: Target, machine_features: str) -> str:
    """Attributes for the header of ``func`` and of its outlined parallel bodies: the gather
    tuning (module doc) on AVX-512 targets, or nothing. ``machine_features`` is the feature
    string of the target machine (the attribute replaces it for the function)."""
    if not target.has_feature("avx512f") or intends_gathers(func):
        return ""
    features = ",".join(f for f in (machine_features, "+prefer-no-gather") if f)
    return f' "target-features"="{features}"'
