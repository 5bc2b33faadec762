"""The benchmark kernels built with the IRBuilder API (same loop nests as kernels.py).

A stand-in for ``benchmarks/kernels.py`` while the ``@T.prim_func`` parser is unfinished:
``KERNELS`` maps each suite name to a PrimFunc with exactly the schedule of kernels.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import PrimFunc

from .schedule import MATMUL_PACKED_TILE, host_has_avx512

N = 1 << 24


@contextmanager
def _func(name: str, out: list[PrimFunc]) -> Iterator[None]:
    with IRBuilder() as ib:
        with T.prim_func():
            T.func_name(name)
            yield
    func = ib.get()
    assert isinstance(func, PrimFunc)
    out.append(func)


def _buf(name: str, shape: Any, dtype: str = "float32") -> Any:
    return T.arg(name, T.Buffer(shape, dtype))


def vadd() -> PrimFunc:
    """C = A + B over 16M float32, parallel over 4096-element vectorized chunks."""
    out: list[PrimFunc] = []
    with _func("vadd", out):
        A, B, C = (_buf(n, (N,)) for n in "ABC")
        with T.parallel(N // 4096) as io, T.vectorized(4096) as ii:
            T.buffer_store(C, A[io * 4096 + ii] + B[io * 4096 + ii], [io * 4096 + ii])
    return out[0]


def fused() -> PrimFunc:
    """D = exp(A) * B + C."""
    out: list[PrimFunc] = []
    with _func("fused", out):
        A, B, C, D = (_buf(n, (N,)) for n in "ABCD")
        with T.parallel(N // 4096) as io, T.vectorized(4096) as ii:
            x = io * 4096 + ii
            T.buffer_store(D, T.exp(A[x]) * B[x] + C[x], [x])
    return out[0]


def rowsum() -> PrimFunc:
    """B[i] = sum_j A[i, j] with a one-element accumulator."""
    out: list[PrimFunc] = []
    with _func("rowsum", out):
        A = _buf("A", (4096, 4096))
        B = _buf("B", (4096,))
        with T.parallel(4096) as i:
            with T.decl_buffer((1,), "float32") as acc:
                T.buffer_store(acc, T.float32(0), [0])
                with T.serial(4096) as j:
                    T.buffer_store(acc, acc[0] + A[i, j], [0])
                T.buffer_store(B, acc[0], [i])
    return out[0]


def softmax() -> PrimFunc:
    """Row softmax of a 4096x1024 matrix."""
    out: list[PrimFunc] = []
    with _func("softmax", out):
        A = _buf("A", (4096, 1024))
        B = _buf("B", (4096, 1024))
        with T.parallel(4096) as i:
            with T.decl_buffer((1,), "float32") as m, T.decl_buffer((1,), "float32") as s:
                T.buffer_store(m, A[i, 0], [0])
                with T.serial(1024) as j:
                    T.buffer_store(m, T.max(m[0], A[i, j]), [0])
                T.buffer_store(s, T.float32(0), [0])
                with T.serial(1024) as j:
                    T.buffer_store(B, T.exp(A[i, j] - m[0]), [i, j])
                    T.buffer_store(s, s[0] + B[i, j], [0])
                with T.vectorized(1024) as j:
                    T.buffer_store(B, B[i, j] / s[0], [i, j])
    return out[0]


def transpose() -> PrimFunc:
    """B = A.T in 32x32 tiles."""
    out: list[PrimFunc] = []
    with _func("transpose", out):
        A = _buf("A", (4096, 4096))
        B = _buf("B", (4096, 4096))
        with T.parallel(128) as io, T.serial(128) as jo, T.serial(32) as i, T.serial(32) as j:
            T.buffer_store(B, A[io * 32 + i, jo * 32 + j], [jo * 32 + j, io * 32 + i])
    return out[0]


def matmul_naive() -> PrimFunc:
    """C = A @ B, three plain loops accumulating in C."""
    out: list[PrimFunc] = []
    with _func("matmul_naive", out):
        A, B, C = (_buf(n, (1024, 1024)) for n in "ABC")
        with T.serial(1024) as i, T.serial(1024) as j:
            T.buffer_store(C, T.float32(0), [i, j])
            with T.serial(1024) as k:
                T.buffer_store(C, C[i, j] + A[i, k] * B[k, j], [i, j])
    return out[0]


def matmul_tiled(mb: int = 32, mr: int = 4, nr: int = 64) -> PrimFunc:
    """C = A @ B: ``mb``-row blocks in parallel, ``mr x nr`` register tiles over B panels."""
    out: list[PrimFunc] = []
    with _func("matmul_tiled", out):
        A, B, C = (_buf(n, (1024, 1024)) for n in "ABC")
        with T.parallel(1024 // mb) as io, T.serial(1024 // nr) as jo, T.serial(mb // mr) as im:
            row = io * mb + im * mr
            with T.decl_buffer((mr, nr), "float32") as acc:
                with T.serial(mr) as ii, T.vectorized(nr) as ji:
                    T.buffer_store(acc, T.float32(0), [ii, ji])
                with T.serial(1024) as k, T.unroll(mr) as ii, T.vectorized(nr) as ji:
                    T.buffer_store(
                        acc, acc[ii, ji] + A[row + ii, k] * B[k, jo * nr + ji], [ii, ji]
                    )
                with T.serial(mr) as ii, T.vectorized(nr) as ji:
                    T.buffer_store(C, acc[ii, ji], [row + ii, jo * nr + ji])
    return out[0]


def matmul_tiled_packed(mr: int = 6, nr: int = 16, nc: int = 64, kc: int = 256) -> PrimFunc:
    """C = A @ B, GotoBLAS-style (benchmarks/schedule.py): A packed once into ``mr``-row
    micro-panels; ``nc``-column panels in parallel; per ``kc``-deep slice B is packed into
    ``kc x nr`` micro-panels that ``mr x nr`` register tiles sweep over all rows (the last
    tile repeats row 1023)."""
    out: list[PrimFunc] = []
    tiles = (1024 + mr - 1) // mr
    with _func("matmul_tiled", out):
        A, B, C = (_buf(n, (1024, 1024)) for n in "ABC")
        with T.decl_buffer((tiles, 1024, mr), "float32") as Ap:
            with T.parallel(tiles) as ib, T.serial(1024) as k, T.serial(mr) as ii:
                T.buffer_store(Ap, A[T.min(ib * mr + ii, 1023), k], [ib, k, ii])
            with T.parallel(1024 // nc) as jc:
                _matmul_column_panel(A, B, C, Ap, jc, mr, nr, nc, kc)
    return out[0]


def _matmul_column_panel(
    A: Any, B: Any, C: Any, Ap: Any, jc: Any, mr: int, nr: int, nc: int, kc: int
) -> None:
    with T.decl_buffer((nc // nr, kc, nr), "float32") as Bp, T.serial(1024 // kc) as kb:
        with T.serial(nc // nr) as jr, T.serial(kc) as k, T.vectorized(nr) as ji:
            T.buffer_store(Bp, B[kb * kc + k, jc * nc + jr * nr + ji], [jr, k, ji])
        with T.serial((1024 + mr - 1) // mr) as im, T.serial(nc // nr) as jr:
            col = jc * nc + jr * nr
            with T.decl_buffer((mr, nr), "float32") as acc:
                with T.If(kb == 0):
                    with T.Then(), T.serial(mr) as ii, T.vectorized(nr) as ji:
                        T.buffer_store(acc, T.float32(0), [ii, ji])
                    with T.Else(), T.serial(mr) as ii, T.vectorized(nr) as ji:
                        row = T.min(im * mr + ii, 1023)
                        T.buffer_store(acc, C[row, col + ji], [ii, ji])
                with T.serial(kc) as k, T.unroll(mr) as ii, T.vectorized(nr) as ji:
                    value = acc[ii, ji] + Ap[im, kb * kc + k, ii] * Bp[jr, k, ji]
                    T.buffer_store(acc, value, [ii, ji])
                with T.serial(mr) as ii, T.vectorized(nr) as ji:
                    row = T.min(im * mr + ii, 1023)
                    T.buffer_store(C, acc[ii, ji], [row, col + ji])


def _host_matmul_tiled() -> PrimFunc:
    """The schedule kernels.py picks for this host (benchmarks/schedule.py)."""
    return matmul_tiled() if host_has_avx512() else matmul_tiled_packed(*MATMUL_PACKED_TILE)


def conv2d() -> PrimFunc:
    """Direct NCHW 3x3 convolution, 64 -> 64 channels on 56x56, with 8 x 8 register tiles
    (output channels x columns) and blocks of 8 channels in parallel."""
    out: list[PrimFunc] = []
    with _func("conv2d", out):
        X = _buf("X", (1, 64, 58, 58))
        W = _buf("W", (64, 64, 3, 3))
        Y = _buf("Y", (1, 64, 56, 56))
        with T.parallel(8) as kb, T.serial(56) as i, T.serial(7) as jb:
            with T.decl_buffer((8, 8), "float32") as acc:
                with T.serial(8) as kk, T.vectorized(8) as j:
                    T.buffer_store(acc, T.float32(0), [kk, j])
                with T.serial(64) as c, T.serial(3) as di, T.serial(3) as dj:
                    with T.unroll(8) as kk, T.vectorized(8) as j:
                        x = X[0, c, i + di, jb * 8 + j + dj]
                        T.buffer_store(acc, acc[kk, j] + W[kb * 8 + kk, c, di, dj] * x, [kk, j])
                with T.serial(8) as kk, T.vectorized(8) as j:
                    T.buffer_store(Y, acc[kk, j], [0, kb * 8 + kk, i, jb * 8 + j])
    return out[0]


def stencil() -> PrimFunc:
    """5-point stencil on the interior of a 4096^2 grid."""
    out: list[PrimFunc] = []
    with _func("stencil", out):
        A = _buf("A", (4096, 4096))
        B = _buf("B", (4096, 4096))
        with T.parallel(4094) as i, T.vectorized(4094) as j:
            value = T.float32(0.2) * (
                A[i + 1, j + 1] + A[i, j + 1] + A[i + 2, j + 1] + A[i + 1, j] + A[i + 1, j + 2]
            )
            T.buffer_store(B, value, [i + 1, j + 1])
    return out[0]


def gather() -> PrimFunc:
    """O[i] = Tb[I[i]]."""
    out: list[PrimFunc] = []
    with _func("gather", out):
        Tb = _buf("Tb", (65536,))
        I = _buf("I", (N,), "int32")  # noqa: E741
        O = _buf("O", (N,))  # noqa: E741
        with T.serial(N) as i:
            T.buffer_store(O, Tb[I[i]], [i])
    return out[0]


def histogram() -> PrimFunc:
    """H = bincount(D) over 256 bins."""
    out: list[PrimFunc] = []
    with _func("histogram", out):
        D = _buf("D", (N,), "int32")
        H = _buf("H", (256,), "int32")
        with T.serial(256) as b:
            T.buffer_store(H, T.int32(0), [b])
        with T.serial(N) as i:
            T.buffer_store(H, H[D[i]] + 1, [D[i]])
    return out[0]


BUILDERS: dict[str, Callable[[], PrimFunc]] = {
    "vadd": vadd,
    "fused": fused,
    "rowsum": rowsum,
    "softmax": softmax,
    "transpose": transpose,
    "matmul_naive": matmul_naive,
    "matmul_tiled": _host_matmul_tiled,
    "conv2d": conv2d,
    "stencil": stencil,
    "gather": gather,
    "histogram": histogram,
}
KERNELS: dict[str, PrimFunc] = {name: make() for name, make in BUILDERS.items()}
