"""Parse time per source line: our parser, and TVM 0.27's on the same text when importable.

Sources: a generated 1,000-line kernel (plain loops and buffer stores, syntax both parsers
accept) and the seed examples.  Each source is parsed ``repeats`` times from text
(``tvmscript.from_source`` / ``tvm.script.from_source``); the best time is reported as
microseconds per line.

Run: ``/work/peers/bin/python benchmarks/parse_speed.py [repeats]`` (that interpreter has
TVM; with the project venv only our numbers are printed).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import tvmscript  # noqa: E402


def generated_kernel(lines: int = 1000) -> str:
    """A kernel of about ``lines`` lines: loop nests with stores and arithmetic."""
    out = [
        "@T.prim_func",
        'def big(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), '
        'C: T.Buffer((64,), "float32")):',
    ]
    k = 0
    while len(out) < lines:
        out.append(f"    for i{k} in range(64):")
        out.append(f"        for j{k} in range(64):")
        out.append(
            f"            B[i{k}, j{k}] = A[i{k}, j{k}] * T.float32({k % 7 + 1}) + B[j{k}, i{k}]"
        )
        out.append(f"        C[i{k}] = C[i{k}] + B[i{k}, {k % 64}] - A[{k % 64}, i{k}]")
        k += 1
    return "\n".join(out) + "\n"


EXAMPLES: dict[str, str] = {
    "elemwise_before": """
@T.prim_func
def elemwise(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        C[i, j] = A[i, j]
""",
    "elemwise_after": """
@T.prim_func
def elemwise(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    A_flat = T.decl_buffer((256,), "float32", data=A.data)
    C_flat = T.decl_buffer((256,), "float32", data=C.data)
    for i, j in T.grid(16, 16):
        C_flat[i * 16 + j] = A_flat[i * 16 + j]
""",
    "buffer_alias": """
@T.prim_func
def buffer_alias(A: T.Buffer((16,), "float32")):
    A_vector = T.decl_buffer((4,), "float32x4", data=A.data)
    T.evaluate(A_vector[0])
""",
    "matmul_blocks": """
@T.prim_func
def main(A: T.Buffer((128, 128, 128), "float32"), B: T.Buffer((128, 128, 128), "float32")):
    for i, j, k in T.grid(128, 128, 128):
        with T.block("block"):
            vi = T.axis.spatial(128, i)
            vj = T.axis.spatial(128, j)
            vk = T.axis.reduce(128, k)
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)
""",
}


def _best(parse: Callable[[str], object], text: str, repeats: int) -> float:
    parse(text)  # warm-up (imports, caches)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        parse(text)
        best = min(best, time.perf_counter() - start)
    return best


def _tvm_parser() -> Callable[[str], object] | None:
    try:
        import tvm  # type: ignore[import-not-found]
        from tvm.script import tirx  # type: ignore[import-not-found]
    except ImportError:
        return None

    def parse(text: str) -> object:
        return tvm.script.from_source(text, extra_vars={"T": tirx})

    return parse


def main(repeats: int = 5) -> None:
    """Print a table of microseconds per line for each source."""
    sources = {"generated_1000_lines": generated_kernel(), **EXAMPLES}
    tvm_parse = _tvm_parser()
    header = f"{'source':<24}{'lines':>7}{'ours us/line':>14}"
    if tvm_parse is not None:
        header += f"{'tvm us/line':>13}{'ratio':>8}"
    print(header)
    for name, text in sources.items():
        lines = len([ln for ln in text.splitlines() if ln.strip()])
        ours = _best(tvmscript.from_source, text, repeats) / lines * 1e6
        row = f"{name:<24}{lines:>7}{ours:>14.1f}"
        if tvm_parse is not None:
            try:
                theirs = _best(tvm_parse, text, repeats) / lines * 1e6
            except Exception as err:  # TVM rejects the source: say so, keep going
                row += f"{'error':>13}  ({type(err).__name__})"
            else:
                row += f"{theirs:>13.1f}{ours / theirs:>8.2f}"
        print(row)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
