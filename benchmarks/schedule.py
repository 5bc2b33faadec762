"""Target-dependent schedule choices shared by our kernels and the peers' (same loop nests).

The target is :func:`benchmark_target`: ``TVMSCRIPT_BENCH_TARGET`` (a target string such as
``"llvm -mcpu=znver3"``) or else the host. Only the tiled matmul depends on it: its register tile must fit the vector register
file. With AVX-512 (32 zmm registers of 16 floats) a 4x64 tile of accumulators (16 zmm)
sweeps B in place; with AVX2 (16 ymm registers of 8 floats) the tile is 6x16 (12 ymm
accumulators, 2 for B, 1 for a broadcast of A) inside a GotoBLAS-style blocking: B is
packed into contiguous KC x NR micro-panels (the unpacked panel's 4 KiB row stride defeats
the L1 cache and the prefetchers), and an MR x KC slice of A is reused across the NC / NR
micro-panels of a column panel. A itself is packed once, up front, into k-major MR-row
micro-panels: a register tile then reads one sequential stream rather than MR rows 4 KiB
apart, which is what held two threads back (1.73-1.75x over one thread, as for numpy's
OpenBLAS sgemm here; 1.94-1.97x with A packed, parallel_speedup.py --rounds 15).
"""

from __future__ import annotations

import functools
import os

from lowering.target import Target

__all__ = ["MATMUL_PACKED_TILE", "benchmark_target", "host_has_avx512", "pin_numba_cpu"]


@functools.cache
def benchmark_target() -> Target:
    """The Target the benchmarks build for and schedule by (``TVMSCRIPT_BENCH_TARGET`` or the
    host)."""
    spec = os.environ.get("TVMSCRIPT_BENCH_TARGET", "").strip()
    return Target(spec) if spec else Target.host()


def pin_numba_cpu() -> None:
    """Make numba compile for :func:`benchmark_target` too (``NUMBA_CPU_NAME``, read when
    numba is imported): with ``TVMSCRIPT_BENCH_TARGET="llvm -mcpu=znver3"`` on an AVX-512
    host every side runs AVX2 code, the nearest thing to an AVX2 host."""
    if not os.environ.get("TVMSCRIPT_BENCH_TARGET", "").strip():
        return
    os.environ.setdefault("NUMBA_CPU_NAME", benchmark_target().mcpu)
    # numba adds the host's features unless given some; the CPU name implies the rest
    os.environ.setdefault("NUMBA_CPU_FEATURES", "+sse2")


def host_has_avx512() -> bool:
    """Whether the benchmark target (:func:`benchmark_target`, the host by default) has
    AVX-512F (the name is kept for the peers' scripts)."""
    return benchmark_target().has_feature("avx512f")


#: Packed schedule (AVX2 hosts): register tile rows MR and columns NR, column-panel width NC
#: (parallel tasks), depth KC of a packed slice of B. KC = 1024 (the whole reduction: each
#: accumulator tile is loaded once and stored once) measured best on an AVX2 Zen 3 among
#: NC in {32, 64, 128, 256} x KC in {256, 512, 1024}: 1.03x numpy's sgemm against 0.93x for
#: KC = 256 (14 interleaved rounds, 0.3 s apart so BLAS's spinning threads have stopped).
MATMUL_PACKED_TILE = (6, 16, 64, 1024)
