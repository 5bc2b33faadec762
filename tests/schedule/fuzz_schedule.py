"""Random schedules on random block programs: each primitive is refused with ScheduleError
or the program still computes what the original computes.

A program is a chain of 1-4 stages over int32 buffers (exact arithmetic): elementwise,
transposed, shifted (stencil), halving (``B[vi // 2, vj]``), edge-guarded, reversed-store and
reduction blocks, each reading the previous stage. A
schedule is 1-8 random primitives with random (often illegal) arguments. The schedule runs
with ``debug_mask="all"``, so every applied primitive is verified and executed against the
original on random inputs; a failed internal check means the legality checks let a wrong
program through, which is a bug (reported as a failure, like any other exception).

Long run: ``PYTHONPATH=. python tests/schedule/fuzz_schedule.py --cases 2000 --seed 1``;
``--kernels`` schedules the hand-written kernels of ``fuzz_kernels.py`` instead (float
arithmetic, reductions with ``T.init``, padding, views). Besides the results, every run
checks that a refused primitive leaves the schedule as it was, that the result prints and
parses back to itself and that its trace replays to it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from irbuilder.ir import IntImm, PrimFunc, assert_structural_equal, structural_equal
from tvmscript import from_source
from tvmscript import tir as T
from tvmscript.schedule import check_same_results

_SIZES = (4, 6, 8, 12)


def random_program(rng: random.Random) -> str:
    """TVMScript source of a random chain of stages."""
    n = rng.choice(_SIZES)
    m = rng.choice(_SIZES)
    stages = rng.randint(1, 4)
    lines = [
        "@T.prim_func",
        f'def fuzz(A: T.Buffer(({n}, {m}), "int32"), OUT: T.Buffer(({n}, {m}), "int32")):',
    ]
    names = [f"S{k}" for k in range(stages - 1)] + ["OUT"]
    for name in names[:-1]:
        lines.append(f'    {name} = T.alloc_buffer(({n}, {m}), "int32")')
    source = "A"
    for k, name in enumerate(names):
        kinds = ["ew", "ew", "shift", "reduce", "clobber", "mix", "halve", "pad", "revstore"]
        kind = rng.choice([*kinds, "transpose"] if n == m else kinds)
        block = f"b{k}"
        if kind == "reduce":
            lines += [
                f"    for i, j, r in T.grid({n}, {m}, {m}):",
                f'        with T.block("{block}"):',
                '            vi, vj, vr = T.axis.remap("SSR", [i, j, r])',
                "            with T.init():",
                f"                {name}[vi, vj] = 0",
                f"            {name}[vi, vj] = {name}[vi, vj] + {source}[vi, vr] * (vj + 1)",
            ]
            source = name
            continue
        if kind == "clobber":  # the input changes between two readers of it
            lines += [
                f"    for i, j in T.grid({n}, {m}):",
                f'        with T.block("{block}c"):',
                '            vi, vj = T.axis.remap("SS", [i, j])',
                "            A[vi, vj] = A[vi, vj] + 1",
            ]
        expr = {
            "clobber": f"{source}[vi, vj] + A[vi, vj]",
            "mix": f"{source}[vi, vj] - A[{n - 1} - vi, vj]",
            "ew": f"{source}[vi, vj] * {rng.randint(2, 3)} + {rng.randint(-2, 2)}",
            "shift": f"{source}[vi, vj] + {source}[vi, T.min(vj + 1, {m - 1})]",
            "transpose": f"{source}[vj, vi] - vi",
            # floordiv reads, guarded reads past the edge, reversed stores (compute_at's
            # interval relaxation and store solving)
            "halve": f"{source}[vi // 2, vj] + vj",
            "pad": f"T.if_then_else(1 <= vj, {source}[vi, vj - 1], 7) + {source}[vi, vj]",
            "revstore": f"{source}[vi, vj] * 2 - vj",
        }[kind]
        store = f"{name}[{n - 1} - vi, vj]" if kind == "revstore" else f"{name}[vi, vj]"
        lines += [
            f"    for i, j in T.grid({n}, {m}):",
            f'        with T.block("{block}"):',
            '            vi, vj = T.axis.remap("SS", [i, j])',
            f"            {store} = {expr}",
        ]
        source = name
    return "from tvmscript import tir as T\n\n" + "\n".join(lines) + "\n"


@dataclass
class Outcome:
    applied: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def _pick(rng: random.Random, items: list[Any]) -> Any:
    return items[rng.randrange(len(items))]


def _random_step(sch: T.Schedule, rng: random.Random) -> tuple[str, Any]:
    """One random primitive call (name, thunk)."""
    func = sch.mod["main"]
    names = _block_names(func)
    if not names:
        return "none", lambda: None
    block = sch.get_block(_pick(rng, names))
    loops = sch.get_loops(block)
    other = sch.get_block(_pick(rng, names))
    other_loops = sch.get_loops(other)
    choice = rng.choice(
        [
            "split",
            "split",
            "fuse",
            "reorder",
            "parallel",
            "vectorize",
            "unroll",
            "compute_at",
            "reverse_compute_at",
            "compute_inline",
            "reverse_compute_inline",
            "cache_read",
            "cache_write",
            "reindex_cache_read",
            "reindex_cache_write",
            "decompose_reduction",
            "rfactor",
            "add_unit_loop",
            "transform_layout",
            "transform_block_layout",
            "blockize",
            "reindex",
            "loop_partition",
            "pad_einsum",
            "set_scope",
            "storage_align",
        ]
    )
    if choice == "split" and loops:
        loop = _pick(rng, loops)
        extent = sch.get(loop).extent
        if not isinstance(extent, IntImm):
            # compute_at may leave a loop-dependent extent (TVM's relaxed region): the
            # inferred factor is the only one a symbolic extent takes
            factor = rng.randint(1, 4)
            return choice, lambda: sch.split(loop, [None, factor])
        factor = rng.randint(1, max(1, extent.value))
        factors = _pick(rng, [[None, factor], [factor, None], [2, None, 2], [extent.value, 1]])
        return choice, lambda: sch.split(loop, factors)
    if choice == "fuse" and len(loops) >= 2:
        start = rng.randrange(len(loops) - 1)
        return choice, lambda: sch.fuse(*loops[start : start + 2])
    if choice == "reorder" and len(loops) >= 2:
        chosen = rng.sample(loops, k=min(len(loops), rng.randint(2, 3)))
        return choice, lambda: sch.reorder(*chosen)
    if choice in ("parallel", "vectorize", "unroll") and loops:
        loop = _pick(rng, loops)
        return choice, lambda: getattr(sch, choice)(loop)
    if choice in ("compute_at", "reverse_compute_at") and other_loops:
        loop = _pick(rng, other_loops)
        preserve, index = rng.random() < 0.3, _pick(rng, [-1, -1, -2, 0, 1])
        return choice, lambda: getattr(sch, choice)(block, loop, preserve, index)
    if choice in ("compute_inline", "reverse_compute_inline"):
        return choice, lambda: getattr(sch, choice)(block)
    if choice == "cache_read":
        return choice, lambda: sch.cache_read(
            block, rng.randrange(2), _pick(rng, ["local", "shared"])
        )
    if choice == "cache_write":
        readers = [other] if rng.random() < 0.4 else None
        return choice, lambda: sch.cache_write(
            block, 0, _pick(rng, ["local", "global"]), consumer_blocks=readers
        )
    if choice in ("reindex_cache_read", "reindex_cache_write"):
        reverse = rng.random() < 0.5

        def permuted(*vs):
            return tuple(reversed(vs)) if reverse else vs

        return choice, lambda: getattr(sch, choice)(
            block, rng.randrange(2) if choice == "reindex_cache_read" else 0, "local", permuted
        )
    if choice == "decompose_reduction" and loops:
        loop = _pick(rng, loops)
        return choice, lambda: sch.decompose_reduction(block, loop)
    if choice == "rfactor" and loops:
        loop = _pick(rng, loops)
        return choice, lambda: sch.rfactor(loop, rng.randint(0, 2))
    if choice == "blockize" and loops:
        loop = _pick(rng, loops)
        return choice, lambda: sch.blockize(loop)
    if choice == "reindex":
        side = _pick(rng, ["read", "write"])
        return choice, lambda: sch.reindex(block, (side, rng.randrange(2)))
    if choice == "transform_block_layout":
        ndim = len(sch.get(block).iter_vars)
        maps = {
            2: [lambda a, b: (b, a), lambda a, b: (a, b)],
            3: [lambda a, b, c: (c, a, b), lambda a, b, c: (b, a, c)],
        }.get(ndim, [])
        if maps:
            chosen_map = _pick(rng, maps)
            return choice, lambda: sch.transform_block_layout(block, chosen_map)
    if choice == "add_unit_loop":
        return choice, lambda: sch.add_unit_loop(_pick(rng, [block, *loops]))
    if choice == "transform_layout":  # padded maps included; parameters too
        chosen = _pick(
            rng,
            [
                lambda i, j: (i // 4, j, i % 4),
                lambda i, j: (j // 3, i, j % 3),
                lambda i, j: ((j + 1) // 4, i, (j + 1) % 4),
                lambda i, j: (j, i),
                lambda i, j: (i // 2, j // 2, i % 2, j % 2),
            ],
        )
        pad = _pick(rng, [None, 0, 7, lambda *ix: ix[0] - ix[-1]])
        injective = rng.random() < 0.2
        buffer = (_pick(rng, ["read", "write"]), rng.randrange(2))
        return choice, lambda: sch.transform_layout(
            block, buffer, chosen, pad_value=pad, assume_injective_transform=injective
        )
    if choice == "loop_partition" and loops:
        loop, factor = _pick(rng, loops), rng.randint(2, 5)
        return choice, lambda: sch.loop_partition(loop, [None, factor])
    if choice == "pad_einsum":
        pads = [rng.randint(1, 4) for _ in sch.get(block).iter_vars]
        return choice, lambda: sch.pad_einsum(block, pads)
    if choice == "set_scope":
        return choice, lambda: sch.set_scope(block, 0, _pick(rng, ["local", "global"]))
    if choice == "storage_align":
        axis, factor = rng.randint(0, 1), _pick(rng, [4, 8])
        return choice, lambda: sch.storage_align(block, 0, axis, factor, 1)
    return "none", lambda: None


def _block_names(func: PrimFunc) -> list[str]:
    from irbuilder.ir import Block
    from lowering.schedule.state import walk_preorder

    # a name two blocks share (blockize twice gives two "<name>_o") cannot be looked up
    names = [n.name_hint for n in walk_preorder(func.body)
             if isinstance(n, Block) and n.name_hint != "root"]
    return sorted(name for name in set(names) if names.count(name) == 1)


def run_case(seed: int, kernel: int | None = None, native: bool = False) -> Outcome:
    """One random schedule of a random program (of ``fuzz_kernels.KERNELS[kernel]`` when
    given); raises AssertionError on a wrong result. A refused primitive must leave the
    schedule as it was; the result must compute what the original does, print and parse
    back to itself, and replay from its trace; with ``native``, built for a pinned CPU it
    gives the original's numbers too (parameters keeping their layouts)."""
    rng = random.Random(seed)
    if kernel is None:
        text = random_program(rng)
        original = from_source(text)
    else:
        from fuzz_kernels import KERNELS

        original = KERNELS[kernel]
        text = original.script()
    assert isinstance(original, PrimFunc)
    sch = T.Schedule(original, debug_mask="all", error_render_level="fast", seed=seed)
    outcome = Outcome()
    for _ in range(rng.randint(1, 8)):
        name, step = _random_step(sch, rng)
        before = sch.mod["main"]
        try:
            step()
        except T.ScheduleError as err:
            if "internal check failed" in str(err):
                raise AssertionError(
                    f"seed {seed}: {name} let a wrong program through: {err}\n{text}"
                ) from err
            if not structural_equal(sch.mod["main"], before):
                raise AssertionError(
                    f"seed {seed}: {name} was refused but changed the schedule: {err}\n"
                    f"{text}\n{sch.trace}"
                ) from err
            outcome.refused.append(name)
            continue
        except (IndexError, ValueError) as err:
            # arguments the random driver made up (a read index a block does not have...)
            if isinstance(err, T.ScheduleError):
                raise
            raise AssertionError(f"seed {seed}: {name} crashed: {err!r}\n{text}") from err
        outcome.applied.append(name)
    result = sch.mod["main"]
    # parameters transform_layout moved: compared in their new layouts
    layouts = sch._state.param_layouts
    difference = check_same_results(original, result, layouts)
    assert difference is None, f"seed {seed}: {difference}\n{text}\n{sch.trace}"
    assert_structural_equal(from_source(result.script()), result)
    if native and not layouts:
        from extra_checks import assert_native_same

        from tvmscript import DiagnosticError

        try:
            assert_native_same(original, sch, seed % 1000)
        except DiagnosticError as err:
            # the build's race check refuses what it cannot prove (a parallel loop whose
            # variable only a predicate uses): a refusal, not a wrong result
            if "cannot prove the iterations of the parallel loop" not in str(err):
                raise
    replay = T.Schedule(original)
    sch.trace.apply_to_schedule(replay, remove_postproc=False)
    assert structural_equal(replay.mod["main"], result), (
        f"seed {seed}: the trace replays to another function\n{text}\n{sch.trace}")
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kernels", action="store_true",
                        help="schedule fuzz_kernels.KERNELS (in turn) instead of random chains")
    parser.add_argument("--native", action="store_true",
                        help="also build each result for a pinned CPU and compare its numbers")
    args = parser.parse_args(argv)
    applied = refused = failures = 0
    start = time.time()
    for k in range(args.cases):
        seed = args.seed * 1_000_003 + k
        try:
            if args.kernels:
                from fuzz_kernels import KERNELS

                outcome = run_case(seed, kernel=k % len(KERNELS), native=args.native)
            else:
                outcome = run_case(seed, native=args.native)
        except Exception as err:
            failures += 1
            print(f"--- case {k} (seed {seed}): {type(err).__name__}: {str(err)[:3000]}")
            print("".join(traceback.format_tb(err.__traceback__)[-3:]))
            continue
        applied += len(outcome.applied)
        refused += len(outcome.refused)
    took = time.time() - start
    print(
        f"{args.cases} programs, {applied} primitives applied, {refused} refused, "
        f"{failures} failures, {took:.1f} s"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
