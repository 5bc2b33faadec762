"""A throwaway compilation of a small kernel, one step at a time, for the prewarm thread.

A process's first build pays for more than its kernel: the lazily imported parts of the
compiler (code generation, the passes' own imports), the caches the IR visitors and the
passes fill on first use, and LLVM's pass pipelines and instruction-selection tables. On the
Zen 2 host a small kernel built one second after ``import tvmscript`` took 62-86 ms, the next
one 32-35 ms. :func:`steps` runs the same path -- lowering with the build's default options
for the host, LLVM IR generation, LLVM optimisation and machine code -- on a two-line kernel
and drops the result: nothing is linked, cached or counted by ``build_cache_info`` or
``compile_stats``. It yields between the steps so the thread can stop before the next one
when a build starts (:func:`tvmscript._prewarm.stop_imports`).
"""

from __future__ import annotations

from collections.abc import Iterator

from irbuilder.ir import PrimFunc

__all__ = ["steps"]

_KERNEL = """
from tvmscript import tir as T

@T.prim_func
def warm_up(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        B[i] = A[i] * T.float32(2) + T.float32(1)
"""


def steps() -> Iterator[str]:
    """Compile :data:`_KERNEL` for the host with ``build``'s default options, yielding the
    name of each step done."""
    import backend.codegen  # noqa: F401 - the build's lazy import, first of the steps
    from backend.runtime.engine import warm_codegen

    from ..parser.entry import from_source
    from .build import module_text
    from .options import lower_for_build, parse_options

    yield "imports"
    func = from_source(_KERNEL)
    assert isinstance(func, PrimFunc)  # one prim_func in the text
    options, _ = parse_options(3, {})
    lowered = lower_for_build(func, options)
    yield "lowering"
    text = module_text(func, [func], [lowered], options)[0]
    yield "codegen"
    warm_codegen(text, options.opt_level)
    yield "llvm"
