"""Snapshot of what the compiler produces for every benchmark kernel, to check that a change
meant to be a pure speedup keeps the generated code identical (docs/compile-time.md).

    python benchmarks/codegen_snapshot.py write before.json      # on the old code
    python benchmarks/codegen_snapshot.py write after.json       # on the new code
    python benchmarks/codegen_snapshot.py compare before.json after.json

For each kernel of the benchmark modules and each pinned target (an AVX-512 and an AVX2 CPU,
so the host does not matter): a hash of the TIR after every lowering pass, the final TIR, the
optimised LLVM IR, and hashes of the assembly and of the object bytes. ``compare`` prints
every difference and exits 1 when there is one. Run ``write`` from the checkout to snapshot
(the kernels and the compiler are imported from the current directory).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

MODULES = (
    "benchmarks.kernels",
    "benchmarks.ib_kernels",
    "benchmarks.symbolic_kernels",
    "benchmarks.user_kernels",
    "benchmarks.alloc_kernels",
)
TARGETS = ("llvm -mcpu=skylake-avx512", "llvm -mcpu=haswell")


def _digest(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:16]


class _AfterEachPass:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str]] = []

    def before_pass(self, name: str, ir: Any) -> None:
        return None

    def after_pass(self, name: str, ir: Any, seconds: float) -> None:
        self.rows.append((name, _digest(ir.script())))


def _kernels() -> Iterator[tuple[str, Any]]:
    from irbuilder.ir import PrimFunc

    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name, value in sorted(vars(module).items()):
            if isinstance(value, PrimFunc):
                yield f"{module_name}.{name}", value


_FUNCTION_TYPE = re.compile(r"^\s*\.type\s+([\w.$]+),@function", re.M)
# Local labels carry the function's index in the module (`.LBB4_2`, `.LCPI4_0`): a function
# added or removed before it renumbers them without changing its code.
_NUMBERED_LABEL = re.compile(r"\.L(BB|CPI|func_end|tmp)\d+(?=_|\b)")


def _asm_functions(asm: str) -> dict[str, str]:
    """Digest of each function's assembly (its label to its ``.size``), so that a change in
    the entry or helper code can be told apart from one in the kernel's loops."""
    out: dict[str, str] = {}
    for name in _FUNCTION_TYPE.findall(asm):
        start = re.search(rf"^{re.escape(name)}:", asm, re.M)
        end = re.search(rf"^\s*\.size\s+{re.escape(name)},", asm, re.M)
        if start and end:
            body = _NUMBERED_LABEL.sub(lambda m: f".L{m[1]}", asm[start.end():end.start()])
            out[name] = _digest(body)
    return out


def write(path: str) -> int:
    sys.path.insert(0, ".")
    import tvmscript
    from lowering import PassContext

    out: dict[str, dict[str, Any]] = {}
    for target in TARGETS:
        for key, func in _kernels():
            passes = _AfterEachPass()
            with PassContext(instruments=[passes]):
                kernel = tvmscript.build(func, target=target, cache=False)
            out[f"{target}|{key}"] = {
                "passes": passes.rows,
                "tir": kernel.get_source("tir"),
                "ll": kernel.get_source("ll"),
                "asm": _digest(kernel.get_source("asm")),
                "asm_functions": _asm_functions(kernel.get_source("asm")),
                "obj": _digest(kernel._library.object_bytes),
            }
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print(f"{len(out)} kernel builds written to {path}")
    return 0


def compare(before_path: str, after_path: str) -> int:
    with open(before_path) as f:
        before = json.load(f)
    with open(after_path) as f:
        after = json.load(f)
    differences = [f"only in one snapshot: {key}" for key in sorted(set(before) ^ set(after))]
    for key in sorted(set(before) & set(after)):
        for part in before[key]:
            old, new = before[key][part], after[key].get(part)
            if part == "asm_functions" and isinstance(new, dict):
                changed = sorted(n for n in set(old) | set(new) if old.get(n) != new.get(n))
                differences += [f"{key}: asm of {name}" for name in changed]
            elif old != new:
                differences.append(f"{key}: {part}")
    print("\n".join(differences) if differences else f"identical ({len(before)} kernel builds)")
    return 1 if differences else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "write":
        sys.exit(write(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    print(__doc__)
    sys.exit(2)
