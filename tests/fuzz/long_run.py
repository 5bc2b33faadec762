"""Long differential fuzz run: ``python tests/fuzz/long_run.py N [seed]``; reports counts.

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

from differential import DEAD_TRAP_REMOVALS, check_program
from hypothesis import HealthCheck, given, seed, settings
from progen import Program, programs


def main(count: int, rng_seed: int) -> int:
    """Run ``count`` programs from ``rng_seed``; print stats; exit status 1 on failures."""
    failures: collections.Counter[str] = collections.Counter()
    examples: dict[str, str] = {}
    stats = {"programs": 0, "mismatches": 0, "crashes": 0}
    start = time.time()

    @seed(rng_seed)
    @settings(max_examples=count, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def run(prog: Program) -> None:
        stats["programs"] += 1
        try:
            check_program(prog, opt_level=3 if prog.arg_seed % 3 else prog.arg_seed % 4)
        except AssertionError as exc:
            stats["mismatches"] += 1
            key = "mismatch: " + str(exc).split("\n")[0][:160]
            failures[key] += 1
            if key not in examples:
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
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0))
