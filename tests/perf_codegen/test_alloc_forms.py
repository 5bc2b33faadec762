"""The benchmark's T.alloc_buffer accumulator forms lower to the same TIR as the locals forms.

``benchmarks/alloc_placement.py`` times both forms; they only run equally fast because
allocation placement makes them one program. Checked on the IR for both matmul
schedules (AVX-512 in place, AVX2 packed), whatever the host.
"""

from __future__ import annotations

import re

import pytest

import lowering
from benchmarks import alloc_kernels, kernels
from irbuilder.ir import PrimFunc


def _text(func: PrimFunc) -> str:
    lowered = lowering.lower(func.with_attr("global_symbol", "f"))
    # Only the accumulators' data-var numbering may differ.
    return re.sub(r"\b(acc|Bp|Ap)_data(_\d+)?\b", r"\1_data", lowered.script())


@pytest.mark.parametrize(
    "local, alloc",
    [
        (kernels._matmul_tiled_in_place, alloc_kernels._matmul_tiled_in_place_alloc),
        (kernels._matmul_tiled_packed, alloc_kernels._matmul_tiled_packed_alloc),
        (kernels.conv2d, alloc_kernels.conv2d_alloc),
    ],
    ids=["matmul_in_place", "matmul_packed", "conv2d"],
)
def test_alloc_buffer_form_lowers_like_the_locals_form(local: PrimFunc, alloc: PrimFunc) -> None:
    assert _text(alloc) == _text(local)
