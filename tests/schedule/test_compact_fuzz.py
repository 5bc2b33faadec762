"""Random schedules compiled: buffers that compute_at/reverse_compute_at move under loops are
compacted by lowering (lowering/transforms/compact_buffer.py), and the compiled kernel must
still compute what the interpreter computes for the original program.

The programs and primitives are the fuzz generator's (fuzz_schedule.py), with a
``compute_at``/``reverse_compute_at`` attempt after each step so that intermediate buffers
often end up under loops.
"""

from __future__ import annotations

import random

import numpy as np
from fuzz_schedule import _block_names, _random_step, random_program

import tvmscript
from irbuilder.ir import PrimFunc
from lowering.transforms.compact_buffer import compact_buffer_allocation
from lowering.transforms.lower_blocks import lower_blocks
from lowering.transforms.plan_alloc import plan_allocation_location
from tvmscript import from_source
from tvmscript import tir as T


def _scheduled(seed: int) -> tuple[PrimFunc, PrimFunc | None]:
    """The original and the scheduled function (None when transform_layout changed a
    parameter's layout: the kernel then takes other arrays)."""
    rng = random.Random(seed)
    original = from_source(random_program(rng))
    assert isinstance(original, PrimFunc)
    sch = T.Schedule(original, error_render_level="fast", seed=seed)
    for _ in range(rng.randint(4, 16)):
        _, step = _random_step(sch, rng)
        try:
            step()
        except T.ScheduleError:
            pass
        names = _block_names(sch.mod["main"])
        block, other = sch.get_block(rng.choice(names)), sch.get_block(rng.choice(names))
        loops = sch.get_loops(other)
        if loops:
            primitive = getattr(sch, rng.choice(["compute_at", "reverse_compute_at"]))
            try:
                primitive(block, rng.choice(loops))
            except T.ScheduleError:
                pass
    result = sch.mod["main"]
    assert isinstance(result, PrimFunc)
    return original, None if sch._state.param_layouts else result


def _compacts(func: PrimFunc) -> bool:
    placed = plan_allocation_location(lower_blocks(func))
    return compact_buffer_allocation(placed) is not placed


def test_compiled_random_schedules_with_compacted_buffers() -> None:
    compacted = 0
    for seed in range(1000, 1040):
        original, result = _scheduled(seed)
        if result is None or not _compacts(result):
            continue
        compacted += 1
        shape = tuple(int(d.value) for d in original.buffer_map[original.params[0]].shape)
        a = np.random.default_rng(seed).integers(-5, 5, size=shape).astype("int32")
        expected, got = np.zeros_like(a), np.zeros_like(a)
        tvmscript.build(original, target="interp")(a.copy(), expected)
        tvmscript.build(result)(a.copy(), got)  # a "clobber" stage writes its input
        np.testing.assert_array_equal(got, expected, err_msg=f"seed {seed}")
    assert compacted >= 5  # the seeds do exercise the pass
