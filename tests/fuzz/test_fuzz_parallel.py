"""Differential fuzzing of ``T.parallel`` kernels on all cores (see progen_parallel.py).

Per-iteration scratch buffers must be private to the iteration (several runs per
program, since a shared buffer gives wrong numbers only on some runs), and every planted
race must be refused by the build's static race check. ``TVMSCRIPT_FUZZ_LONG=N`` draws
N fresh programs instead of the fixed set.
"""

from __future__ import annotations

import os
from typing import Any

from differential import check_parallel_program
from hypothesis import HealthCheck, given, settings
from progen_parallel import ParallelProgram, parallel_programs

_LONG = int(os.environ.get("TVMSCRIPT_FUZZ_LONG", "0") or 0)

_SETTINGS: Any = settings(
    max_examples=_LONG or 80,
    derandomize=not _LONG,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)


@_SETTINGS
@given(parallel_programs())
def test_parallel_programs_match_the_interpreter_or_their_race_is_refused(
        prog: ParallelProgram) -> None:
    check_parallel_program(prog, opt_level=3 if prog.arg_seed % 3 else prog.arg_seed % 4)
