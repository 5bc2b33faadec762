"""Long differential fuzz run: ``python tests/fuzz/long_run.py N [seed] [kind]``; reports counts.

``kind`` is ``mixed`` (default: the general generator), ``parallel`` (progen_parallel:
``T.parallel`` loops with per-iteration buffers, several native runs per program on all
cores, planted races that the build must refuse) or ``both`` (alternating).

Unlike the pytest property it keeps going after a failure and groups failures by
their first line, printing one full program per group.
"""

from __future__ import annotations

import collections
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from differential import DEAD_TRAP_REMOVALS, check_parallel_program, check_program
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from progen import Program, programs
from progen_parallel import ParallelProgram, parallel_programs


def _check(prog: Program | ParallelProgram) -> None:
    opt_level = 3 if prog.arg_seed % 3 else prog.arg_seed % 4
    if isinstance(prog, ParallelProgram):
        check_parallel_program(prog, opt_level=opt_level, runs=3)
    else:
        check_program(prog, opt_level=opt_level)


def main(count: int, rng_seed: int, kind: str = "mixed") -> int:
    """Run ``count`` programs from ``rng_seed``; print stats; exit status 1 on failures."""
    failures: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    stats = {"programs": 0, "mismatches": 0, "crashes": 0, "racy": 0}
    strategy = {"mixed": programs(), "parallel": parallel_programs(),
                "both": st.one_of(programs(), parallel_programs())}[kind]
    start = time.time()

    @seed(rng_seed)
    @settings(max_examples=count, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(prog: Program | ParallelProgram) -> None:
        stats["programs"] += 1
        stats["racy"] += int(getattr(prog, "racy", False))
        try:
            _check(prog)
        except AssertionError as exc:
            stats["mismatches"] += 1
            key = "mismatch: " + str(exc).split("\n")[0][:160]
            failures[key] += 1
            if failures[key] <= 20:  # every program, not one per kind: causes may differ
                print("=" * 30, key, "\n", str(exc)[:3000], flush=True)
            examples.setdefault(key, str(exc))
        except Exception as exc:
            stats["crashes"] += 1
            key = f"{type(exc).__name__}: " + str(exc).split("\n")[0][:160]
            failures[key] += 1
            examples.setdefault(key, traceback.format_exc() + "\n" + prog.func.script())
        if stats["programs"] % 500 == 0:
            print(f"... {stats} after {time.time() - start:.0f}s", flush=True)

    run()
    print(f"FINAL {stats} in {time.time() - start:.0f}s; dead trapping divisions removed "
          f"(accepted, see differential.py): {DEAD_TRAP_REMOVALS[0]}", flush=True)
    for key, n in failures.most_common():
        print(f"{n:6d}  {key}")
    for key, text in examples.items():
        print("=" * 30, key, "\n", text[:4000])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0,
                  sys.argv[3] if len(sys.argv) > 3 else "mixed"))
