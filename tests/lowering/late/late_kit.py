"""Running one late pass on its own: its input (the function lowered up to the late stage),
its output, and the numbers both compute.

:func:`before_late` lowers a function for a pinned Target with every late rewrite disabled:
that is what the late stage receives. :func:`run_pass` applies exactly one pass to it.
:func:`compiled_exactly` compiles a lowered function with every pipeline pass disabled, so the
machine code is the translation of that very IR; :func:`assert_same_numbers` runs the before
and after functions (and the reference interpreter on the source) on random inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import lowering
import tvmscript
from irbuilder.ir import AttrStmt, For, IfThenElse, PrimFunc, Stmt
from irbuilder.ir.functor import post_order_visit
from lowering.pass_infra import Pass
from lowering.pipeline import LATE_STAGE, PIPELINE_ORDER
from lowering.target import Target

AVX2 = Target("llvm -mcpu=znver3")
"""An AVX2 machine: 8 float32 lanes, no gather fast path."""
AVX512 = Target("llvm -mcpu=znver4")
"""An AVX-512 machine: 16 float32 lanes, the gather fast path runs."""

runs_avx2 = pytest.mark.skipif(
    bool(AVX2.missing_on_host()),
    reason=f"the host lacks {', '.join(AVX2.missing_on_host())} (target znver3)",
)
"""Compiled code for :data:`AVX2` runs only on a host with its features."""


def before_late(
    func: PrimFunc, target: Target = AVX2, config: dict[str, dict[str, Any]] | None = None
) -> PrimFunc:
    """``func`` lowered for ``target`` up to the late stage (no late rewrite applied);
    ``config`` as ``PassContext``'s."""
    late = frozenset(LATE_STAGE) - {"simplify"}
    with lowering.PassContext(disabled_passes=late, config=config or {}):
        return lowering.lower(func, target=target)


def late_pass(name: str) -> Pass:
    """The late pass called ``name`` (its module's pass object)."""
    with lowering.PassContext(config={"version_gathers": {"enabled": True}}):
        passes = {p.name: p for p in lowering.pipeline.lowering_passes(3, AVX512)}
    assert name in LATE_STAGE, name
    return passes[name]


def run_pass(name: str, func: PrimFunc, target: Target | None = None, **config: Any) -> PrimFunc:
    """``func`` after the late pass ``name`` alone, for ``target`` (passes that size code by
    the machine read it; default: the host) (``config``: that pass's options)."""
    with lowering.PassContext(
        opt_level=3, config={name: config} if config else {}, target=target
    ):
        return late_pass(name)(func)


def compiled_exactly(func: PrimFunc, target: Target = AVX2, fp_contract: bool = True) -> Any:
    """A kernel translating the lowered ``func`` as it is (no pass runs again)."""
    with lowering.PassContext(disabled_passes=frozenset(PIPELINE_ORDER)):
        kernel = tvmscript.build(func, target=target, cache=False, fp_contract=fp_contract)
    assert kernel.get_source("tir") == func.script()
    return kernel


def random_arrays(func: PrimFunc, rng: np.random.Generator, low: int = 0,
                  high: int = 8) -> list[np.ndarray[Any, Any]]:
    """One array per buffer parameter: standard normal floats, integers in ``[low, high)``."""
    arrays = []
    for buffer in func.buffer_map.values():
        shape = tuple(int(d) for d in buffer.shape)
        if buffer.dtype.is_float:
            arrays.append(rng.standard_normal(shape).astype(str(buffer.dtype)))
        else:
            arrays.append(rng.integers(low, high, shape).astype(str(buffer.dtype)))
    return arrays


_REFERENCE_RUNS: dict[tuple[Any, ...], tuple[PrimFunc, list[bytes], list[bytes]]] = {}
_REFERENCE_BYTES_KEPT = 256 << 20  # the oldest runs are forgotten past this


def _argument_memory(
    args: Sequence[Any],
) -> tuple[list[np.ndarray[Any, Any]], tuple[Any, ...]] | None:
    """The arrays owning the memory of ``args`` (in order of first use) and where each
    argument lies in them; None unless every argument is a view of a C-contiguous array
    that owns its memory."""
    roots: list[np.ndarray[Any, Any]] = []
    layout = []
    for arg in args:
        if not isinstance(arg, np.ndarray):
            return None
        root = arg
        while isinstance(root.base, np.ndarray):
            root = root.base
        if root.base is not None or not root.flags.c_contiguous:
            return None
        index = next((k for k, r in enumerate(roots) if r is root), None)
        if index is None:
            index = len(roots)
            roots.append(root)
        offset = arg.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        layout.append((index, offset, arg.shape, arg.strides, arg.dtype.str))
    return roots, tuple(layout)


def run_reference(source: PrimFunc, args: Sequence[Any]) -> None:
    """The reference interpreter's run of ``source`` on ``args`` (arrays, written in place).

    A run on arguments equal to an earlier run's (the same memory contents and the same
    layout of the arguments in it) gives the earlier run's results without interpreting
    again: the interpreter's build runs no pipeline pass, so its results depend on the
    function and its arguments' memory only, and the tests run one source on the same
    random arrays once per pinned target (the interpreter is most of their time)."""
    memory = _argument_memory(args)
    if memory is None:
        tvmscript.build(source, target="interp")(*args)
        return
    roots, layout = memory
    inputs = [r.tobytes() for r in roots]
    key = (id(source), layout, tuple(hash(b) for b in inputs))
    known = _REFERENCE_RUNS.get(key)
    if known is not None and known[0] is source and known[1] == inputs:
        for root, result in zip(roots, known[2]):
            root.reshape(-1).view(np.uint8)[:] = np.frombuffer(result, np.uint8)
        return
    tvmscript.build(source, target="interp")(*args)
    _REFERENCE_RUNS[key] = (source, inputs, [r.tobytes() for r in roots])
    while sum(2 * sum(map(len, r[1])) for r in _REFERENCE_RUNS.values()) > _REFERENCE_BYTES_KEPT:
        del _REFERENCE_RUNS[next(iter(_REFERENCE_RUNS))]


def assert_same_numbers(
    source: PrimFunc,
    before: PrimFunc,
    after: PrimFunc,
    make_args: Callable[[np.random.Generator], Sequence[np.ndarray[Any, Any]]] | None = None,
    rounds: int = 3,
    bit_exact: bool = True,
    reference: bool = True,
    fp_contract: bool = True,
) -> None:
    """``before`` and ``after`` compiled leave bit-identical arrays (the late rewrites are
    bit-exact; with ``bit_exact=False`` within 2 ulp), equal to the interpreter's run of
    ``source`` within float32 rounding, for ``rounds`` random inputs. ``reference=False``
    skips the interpreter (whose unfused multiply-adds drift from the compiled FMAs when
    outputs feed back through overlapping arguments). ``fp_contract=False`` compiles both
    without fused multiply-adds (LLVM fuses where the code's shape lets it, which a rewrite
    may change)."""
    def interpreter(*args: Any) -> None:
        run_reference(source, args)

    kernels = (compiled_exactly(before, fp_contract=fp_contract),
               compiled_exactly(after, fp_contract=fp_contract))
    for seed in range(rounds):
        results = []
        for run in (interpreter, *kernels):
            rng = np.random.default_rng(seed)
            args = list(make_args(rng) if make_args else random_arrays(source, rng))
            run(*args)
            results.append(args)
        want, got_before, got_after = results
        for w, b, a in zip(want, got_before, got_after):
            if bit_exact:
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_array_max_ulp(a, b, maxulp=2)
            if reference:
                np.testing.assert_allclose(a, w, rtol=1e-5, atol=1e-5)


def stmts(func: PrimFunc) -> list[Stmt]:
    """Every statement of ``func``'s body, in post order."""
    found: list[Stmt] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, Stmt) else None)
    return found


def loops(func: PrimFunc) -> list[For]:
    """Every loop of ``func``, outermost first among nested ones."""
    return [s for s in reversed(stmts(func)) if isinstance(s, For)]


def versioning_ifs(func: PrimFunc, attr_key: str) -> Iterator[IfThenElse]:
    """The ``if``s whose then-branch is an ``AttrStmt`` ``attr_key`` (a versioned fast path)."""
    for s in stmts(func):
        if isinstance(s, IfThenElse) and isinstance(s.then_case, AttrStmt) \
                and s.then_case.attr_key == attr_key:
            yield s


def one_storage(
    func: PrimFunc, offsets: Sequence[int], rng: np.random.Generator
) -> list[np.ndarray[Any, Any]]:
    """Arrays for ``func``'s buffer parameters (all of one float dtype) as views into one
    random array, parameter ``i`` starting ``offsets[i]`` elements in: overlapping arguments,
    the case a versioned rewrite must leave to its original loop."""
    buffers = list(func.buffer_map.values())
    shapes = [tuple(int(d) for d in b.shape) for b in buffers]
    dtype = str(buffers[0].dtype)
    assert all(str(b.dtype) == dtype for b in buffers)
    sizes = [int(np.prod(s)) for s in shapes]
    storage = rng.standard_normal(max(o + n for o, n in zip(offsets, sizes))).astype(dtype)
    return [storage[o : o + n].reshape(s) for o, n, s in zip(offsets, sizes, shapes)]


def output_at(
    func: PrimFunc, offset: int, rng: np.random.Generator
) -> list[np.ndarray[Any, Any]]:
    """Random arrays for ``func``, the last one (the output) starting ``offset`` elements into
    a larger array: another alignment of the output's address."""
    arrays = random_arrays(func, rng)
    out = arrays[-1]
    storage = np.zeros(out.size + offset, out.dtype)
    arrays[-1] = storage[offset:].reshape(out.shape)
    return arrays


def pinned_targets() -> list[Any]:
    """:data:`AVX2` and :data:`AVX512` as pytest params, each skipped (with the reason) on a
    host that cannot run its code."""
    avx512 = pytest.param(AVX512, id="znver4", marks=pytest.mark.skipif(
        bool(AVX512.missing_on_host()), reason="the host lacks AVX-512 (target znver4)"))
    return [pytest.param(AVX2, id="znver3", marks=runs_avx2), avx512]


def standard_normal(func: PrimFunc, seed: int) -> list[np.ndarray[Any, Any]]:
    """Standard normal arrays (of their float dtypes) for ``func``'s buffer parameters."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(int(d) for d in b.shape)).astype(str(b.dtype))
            for b in func.buffer_map.values()]


def agrees_with_interpreter(func: PrimFunc, make_args: Callable[[], list[np.ndarray[Any, Any]]],
                            target: Target, runs: int = 3) -> None:
    """``func`` built for ``target`` (default options, ``fp_contract=False``) leaves the
    interpreter's arrays bit for bit, ``runs`` times; fresh arguments per run (``make_args``:
    copies would not keep views of one storage overlapping)."""
    want = make_args()
    run_reference(func, want)
    kernel = tvmscript.build(func, target=target, cache=False, fp_contract=False)
    for _ in range(runs):
        got = make_args()
        kernel(*got)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)


def packed_copies(func: PrimFunc, target: Any = "llvm -mcpu=znver3") -> list[str]:
    """Names of the packed copies (``pack_transposed_operands``) allocated in ``func``
    lowered for ``target``."""
    from irbuilder.ir import Allocate
    from irbuilder.ir.functor import post_order_visit

    lowered = lowering.lower(func, target=target)
    names: list[str] = []

    def visit(node: object) -> None:
        if isinstance(node, Allocate) and node.buffer_var.name.endswith("_packed"):
            names.append(node.buffer_var.name)

    post_order_visit(lowered.body, visit)
    return names
