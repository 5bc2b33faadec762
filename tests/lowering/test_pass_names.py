"""One pass-name convention: snake_case, verb first, and a pass's ``name`` is the Python name
of the pass object in its module (ARCHITECTURE.md, "Pass names")."""

from __future__ import annotations

import importlib
import re

import pytest

from lowering import PassContext
from lowering.checks.bounds_check import insert_bounds_checks
from lowering.pass_infra import Pass
from lowering.pipeline import LATE_STAGE, PIPELINE_ORDER, lowering_passes
from lowering.target import Target

SNAKE = re.compile(r"^[a-z]+(_[a-z0-9]+)*$")
AVX512 = Target("llvm -mcpu=skylake-avx512")


def _every_pass() -> list[Pass]:
    with PassContext(config={"version_gathers": {"enabled": True}}):
        passes = lowering_passes(opt_level=3, target=AVX512)
    return [*passes, insert_bounds_checks]


def test_every_pipeline_pass_is_assembled() -> None:
    assert [p.name for p in _every_pass()[:-1]] == list(PIPELINE_ORDER)


@pytest.mark.parametrize("p", _every_pass(), ids=lambda p: p.name)
def test_name_is_snake_case_and_the_pass_objects_name(p: Pass) -> None:
    assert SNAKE.match(p.name), p.name
    module = _defining_module(p)
    assert getattr(module, p.name) is p


def _defining_module(p: Pass) -> object:
    fn = getattr(p, "fn", None)
    assert fn is not None, p
    return importlib.import_module(fn.__module__)


def test_late_stage_names() -> None:
    assert LATE_STAGE == (
        "interchange_divided_reductions",
        "split_divided_loops",
        "partition_loops",
        "branch_select_updates",
        "promote_index_reductions",
        "tabulate_bindings",
        "transpose_tiles",
        "vectorize_streams",
        "vectorize_remainders",
        "distribute_reductions",
        "vectorize_row_reductions",
        "jam_parallel_reductions",
        "tile_reduction_panels",
        "interchange_reductions",
        "promote_accumulators",
        "vectorize_parallel_columns",
        "version_accumulator_nests",
        "version_gathers",
        "privatize_scatter_adds",
        "align_streams",
        "mark_streams",
        "simplify",
    )


def test_a_disabled_name_in_either_spelling_skips_the_pass() -> None:
    for spelling in ("insert_entry_checks", "insert-entry-checks"):
        ctx = PassContext(disabled_passes={spelling})
        passes = {p.name: p for p in _every_pass()}
        assert not ctx.enabled(passes["insert_entry_checks"])
        assert ctx.enabled(passes["flatten_buffer"])
