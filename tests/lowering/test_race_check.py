"""The static race check of ``T.parallel`` loops (``lowering/checks/race_check.py``).

Refused kernels must name the buffer and point at both the access and the parallel loop;
the lines are found through the ``# <tag>`` comments of this file. Accepted kernels must
build and compute the interpreter's result on two threads, run after run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lowering
import tvmscript
from backend.runtime import get_num_threads, set_num_threads
from irbuilder import IRBuilder
from irbuilder import tir as IB
from irbuilder.ir import PrimFunc
from lowering import PassContext, default_pipeline
from lowering.checks.race_check import ALLOW_RACES, RaceError, find_races
from lowering.target import Target
from lowering.transforms.bufferize import bufferize
from tvmscript import tir as T
from tvmscript.ir import assert_structural_equal

_SOURCE = Path(__file__).read_text().splitlines()
_FILE = Path(__file__).name


def _line(tag: str) -> int:
    """The line of this file ending with the comment ``# <tag>``."""
    hits = [n for n, text in enumerate(_SOURCE, 1) if text.rstrip().endswith(f"# {tag}")]
    assert len(hits) == 1, f"tag {tag!r} found {len(hits)} times"
    return hits[0]


def _refused(func: PrimFunc, **options: Any) -> str:
    with pytest.raises(tvmscript.DiagnosticError) as info:
        tvmscript.build(func, **options)
    err = info.value
    assert err.__cause__ is None  # no internal traceback behind the report
    return str(err)


def _assert_located(text: str, buffer: str, access: str, loop: str) -> None:
    assert f"'{buffer}'" in text, text
    assert f"{_FILE}:{_line(access)}:" in text, text
    assert f"{_FILE}:{_line(loop)}:" in text, text
    # the source lines are shown and underlined
    assert _SOURCE[_line(access) - 1].split("#")[0].strip() in text
    assert _SOURCE[_line(loop) - 1].split("#")[0].strip() in text
    assert "^^^" in text


# -- refused shapes ------------------------------------------------------------------


@T.prim_func
def histogram(H: T.Buffer((4,), "int32"), D: T.Buffer((64,), "int32")):
    for i in T.parallel(64):  # hist-loop
        H[D[i]] += 1  # hist-access


@T.prim_func
def shared_accumulator(A: T.Buffer((64, 8), "float32"), B: T.Buffer((1,), "float32")):
    acc = T.alloc_buffer((1,), "float32")
    acc[0] = T.float32(0)
    for i in T.parallel(64):  # acc-loop
        for j in range(8):
            acc[0] += A[i, j]  # acc-access
    B[0] = acc[0]


@T.prim_func
def shift_left(A: T.Buffer((65,), "float32")):
    for i in T.parallel(64):  # shift-loop
        A[i] = A[i + 1]  # shift-access


@T.prim_func
def gather_written(
    A: T.Buffer((64,), "float32"),
    B: T.Buffer((64,), "float32"),
    C: T.Buffer((64,), "float32"),
    D: T.Buffer((64,), "int32"),
):
    for i in T.parallel(64):  # gather-loop
        B[i] = A[i] * T.float32(2)  # gather-write
        C[i] = B[D[i]]  # gather-read


@T.prim_func
def flag_in_branch(A: T.Buffer((64,), "float32"), F: T.Buffer((1,), "int32")):
    for i in T.parallel(64):  # flag-loop
        if A[i] > T.float32(0):
            F[0] = 1  # flag-access


@T.prim_func
def nested_parallel_race(A: T.Buffer((4, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.parallel(4):  # nested-outer
        for j in T.parallel(16):
            B[j] = A[i, j]  # nested-access


@T.prim_func
def race_in_serial_loop(A: T.Buffer((64,), "float32"), S: T.Buffer((4,), "float32")):
    for t in range(4):
        for i in T.parallel(64):  # serial-loop
            S[t] = S[t] + A[i]  # serial-access


@T.prim_func
def halving(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in T.parallel(n):  # halving-loop
        B[i // 2] = A[i]  # halving-access


@T.prim_func
def parallel_reduce_axis(A: T.Buffer((8, 64), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in T.parallel(64):  # reduce-loop
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]  # reduce-access


@T.prim_func
def vectorized_race(A: T.Buffer((4, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.parallel(4):  # vector-loop
        for j in T.vectorized(16):
            B[j] = A[i, j]  # vector-access


@T.macro
def bump(buf, k):
    buf[k] = buf[k] + 1  # macro-access


@T.prim_func
def macro_histogram(H: T.Buffer((4,), "int32"), D: T.Buffer((64,), "int32")):
    for i in T.parallel(64):  # macro-loop
        bump(H, D[i])


@T.prim_func
def extern_writer(A: T.Buffer((64,), "float32")):
    for i in T.parallel(64):  # extern-loop
        T.evaluate(T.call_extern("int32", "fill", A.data, i))  # extern-access


@T.prim_func
def fused_wrong_split(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
    for f in T.parallel(1024):  # split-loop
        B[f // 64, f % 32] = A[f // 64, f % 64]  # split-access


@T.prim_func
def columns_overlap(a: T.handle, b: T.handle, n: T.int32, m: T.int32):
    A = T.match_buffer(a, (m,), "float32")
    B = T.match_buffer(b, (n * m + 1,), "float32")
    for i in T.parallel(n + 1):  # overlap-loop
        for j in range(m):
            B[j * n + i] = A[j]  # overlap-access


REFUSED = [
    (histogram, "H", "hist-access", "hist-loop", "cannot prove"),
    (shared_accumulator, "acc", "acc-access", "acc-loop", "data race"),
    (shift_left, "A", "shift-access", "shift-loop", "data race"),
    (gather_written, "B", "gather-write", "gather-loop", "cannot prove"),
    (flag_in_branch, "F", "flag-access", "flag-loop", "cannot prove"),
    (nested_parallel_race, "B", "nested-access", "nested-outer", "cannot prove"),
    (race_in_serial_loop, "S", "serial-access", "serial-loop", "data race"),
    (halving, "B", "halving-access", "halving-loop", "cannot prove"),
    (parallel_reduce_axis, "C", "reduce-access", "reduce-loop", "data race"),
    (vectorized_race, "B", "vector-access", "vector-loop", "cannot prove"),
    (macro_histogram, "H", "macro-access", "macro-loop", "cannot prove"),
    (extern_writer, "A", "extern-access", "extern-loop", "cannot prove"),
    (fused_wrong_split, "B", "split-access", "split-loop", "cannot prove"),
    (columns_overlap, "B", "overlap-access", "overlap-loop", "cannot prove"),
]


@pytest.mark.parametrize(
    ("func", "buffer", "access", "loop", "kind"), REFUSED, ids=[r[0].name for r in REFUSED]
)
def test_race_is_refused_at_the_access_and_the_loop(
    func: PrimFunc, buffer: str, access: str, loop: str, kind: str
) -> None:
    text = _refused(func)
    _assert_located(text, buffer, access, loop)
    assert text.startswith(f"error: {kind}"), text
    assert ALLOW_RACES in text and "check_races=False" in text
    if kind == "cannot prove":
        assert "independent" in text


def test_messages_say_what_conflicts() -> None:
    assert "every iteration of the parallel loop over 'i' writes acc[0]" in _refused(
        shared_accumulator
    )
    assert "iteration i - 1 reads as A[(i + 1)]" in _refused(shift_left)
    assert "loaded from memory" in _refused(histogram)
    text = _refused(gather_written)
    assert "another reads B[D[i]]" in text
    # the conflicting read is a third location
    third = rf"note: B\[D\[i\]\] is read here\n *--> \S*{_FILE}:{_line('gather-read')}:"
    assert re.search(third, text), text
    assert "escapes" in _refused(extern_writer)


@T.prim_func
def address_taken(A: T.Buffer((64,), "float32")):
    for i in T.parallel(64):  # address-loop
        T.evaluate(T.call_extern("int32", "poke", T.address_of(A[i])))  # address-access


def test_an_escaping_address_is_refused() -> None:
    text = _refused(address_taken)
    _assert_located(text, "A", "address-access", "address-loop")
    assert "T.address_of(A[...]) of buffer 'A' escapes" in text


@pytest.mark.parametrize("func", [r[0] for r in REFUSED], ids=[r[0].name for r in REFUSED])
def test_before_lower_blocks_the_same_kernels_are_refused(func: PrimFunc) -> None:
    # The pass may move before lower_blocks (right after allocation placement).
    assert find_races(bufferize(func))


# -- accepted shapes -----------------------------------------------------------------


@T.prim_func
def per_column_histogram(P: T.Buffer((16, 8), "int32"), D: T.Buffer((64,), "int32")):
    for c in T.parallel(16):
        for i in range(64):
            P[c, D[i]] += 1


@T.prim_func
def private_decl_buffer(A: T.Buffer((64, 8), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(8):
            acc[0] += A[i, j]
        B[i] = acc[0]


@T.prim_func
def private_allocate(A: T.Buffer((64, 8), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        data = T.allocate([8], "float32", "global")
        row = T.decl_buffer((8,), "float32", data=data)
        for j in range(8):
            row[j] = A[i, j] * T.float32(2)
        B[i] = row[0] + row[7]


@T.prim_func
def private_block_buffer(A: T.Buffer((64, 8), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        with T.block("row"):
            t = T.alloc_buffer((8,), "float32")
            for j in range(8):
                t[j] = A[i, j] + T.float32(1)
            B[i] = t[3] * t[5]


@T.prim_func
def tiled_vectorized(A: T.Buffer((512,), "float32"), B: T.Buffer((512,), "float32")):
    for io in T.parallel(8):
        for ii in T.vectorized(64):
            B[io * 64 + ii] = A[io * 64 + ii] * T.float32(3)
        for ii in range(64):
            B[io * 64 + ii] = B[io * 64 + ii] + T.float32(1)


@T.prim_func
def even_odd(A: T.Buffer((64,), "float32"), B: T.Buffer((128,), "float32")):
    for i in T.parallel(64):
        B[2 * i] = A[i]
        B[2 * i + 1] = B[2 * i] * T.float32(2)


@T.prim_func
def nested_parallel(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16, 32), "float32")):
    for i in T.parallel(16):
        for j in T.parallel(32):
            B[i, j] = A[i, j] + T.float32(1)


@T.prim_func
def parallel_in_serial(A: T.Buffer((5, 64), "float32")):
    for t in range(4):
        for i in T.parallel(64):
            A[t + 1, i] = A[t, i] * T.float32(2) + A[t, 63 - i]


@T.prim_func
def symbolic_rows(a: T.handle, c: T.handle, n: T.int32, m: T.int32):
    A = T.match_buffer(a, (n, m), "float32")
    C = T.match_buffer(c, (n * m,), "float32")
    for i in T.parallel(n):
        for j in range(m):
            C[i * m + j] = A[i, j] + T.float32(1)


@T.prim_func
def symbolic_columns(a: T.handle, b: T.handle, n: T.int32, m: T.int32):
    A = T.match_buffer(a, (n * m,), "float32")
    B = T.match_buffer(b, (n * m,), "float32")
    for i in T.parallel(n):
        for j in range(m):
            B[j * n + i] = A[i * m + j]  # distinct: i < n


@T.prim_func
def first_iteration_only(A: T.Buffer((64,), "float32"), B: T.Buffer((65,), "float32")):
    for i in T.parallel(64):
        B[i + 1] = A[i]
        if i == 0:
            B[0] = A[0] * T.float32(10)


@T.prim_func
def block_reduction(A: T.Buffer((64, 16), "float32"), C: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        for k in range(16):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]


@T.prim_func
def stencil(A: T.Buffer((66, 66), "float32"), B: T.Buffer((66, 66), "float32")):
    for i in T.parallel(64):
        for j in T.vectorized(64):
            B[i + 1, j + 1] = (
                A[i, j + 1] + A[i + 2, j + 1] + A[i + 1, j] + A[i + 1, j + 2]
            ) * T.float32(0.25)


@T.prim_func
def widened_index(A: T.Buffer((T.int64(64),), "float32"), B: T.Buffer((T.int64(128),), "float32")):
    for i in T.parallel(64):
        B[T.Cast("int64", i * 2 + 1)] = A[T.Cast("int64", i)]
        B[T.Cast("int64", i) * T.int64(2)] = A[i]


@T.prim_func
def fused_loops(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
    for f in T.parallel(1024):
        B[f // 64, f % 64] = A[f // 64, f % 64] * T.float32(2)


@T.prim_func
def fused_three(A: T.Buffer((4, 16, 8), "float32")):
    for f in T.parallel(512):
        A[f // 128, f % 128 // 8, f % 8] = A[f // 128, f % 128 // 8, f % 8] + T.float32(1)


@T.prim_func
def invariant_offset(
    A: T.Buffer((64,), "float32"), B: T.Buffer((128,), "float32"), D: T.Buffer((1,), "int32")
):
    for i in T.parallel(64):
        B[D[0] + i] = A[i]  # D is never written: D[0] is the same in every iteration


@T.prim_func
def placed_accumulator(A: T.Buffer((64, 8), "float32"), B: T.Buffer((64,), "float32")):
    acc = T.alloc_buffer((1,), "float32")  # the parser puts it in the root block
    for i in T.parallel(64):
        acc[0] = T.float32(0)
        for j in range(8):
            acc[0] += A[i, j]
        B[i] = acc[0]


@T.macro
def add_one(buf, k):
    buf[k] = buf[k] + T.float32(1)


@T.prim_func
def macro_rows(A: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        add_one(A, i)
        add_one(A, i)


ACCEPTED = [
    per_column_histogram,
    private_decl_buffer,
    private_allocate,
    private_block_buffer,
    tiled_vectorized,
    even_odd,
    nested_parallel,
    parallel_in_serial,
    symbolic_rows,
    symbolic_columns,
    first_iteration_only,
    block_reduction,
    stencil,
    widened_index,
    fused_loops,
    fused_three,
    invariant_offset,
    placed_accumulator,
    macro_rows,
]

_SYMBOLIC = {
    "symbolic_rows": lambda rng: [
        rng.standard_normal((24, 5), "float32"),
        np.zeros(120, "float32"),
        24,
        5,
    ],
    "symbolic_columns": lambda rng: [
        rng.standard_normal(120, "float32"),
        np.zeros(120, "float32"),
        24,
        5,
    ],
}


@pytest.fixture
def two_threads() -> Iterator[None]:
    before = get_num_threads()
    set_num_threads(2)
    try:
        yield
    finally:
        set_num_threads(before)


def _inputs(func: PrimFunc, rng: np.random.Generator) -> list[Any]:
    """Random arrays for the buffers (indices in ``[0, 8)`` for int32 ones)."""
    if func.name in _SYMBOLIC:
        return _SYMBOLIC[func.name](rng)
    args: list[Any] = []
    for param in func.params:
        buffer = func.buffer_map[param]
        shape = tuple(int(d.value) for d in buffer.shape)  # type: ignore[attr-defined]
        if str(buffer.dtype) == "int32":
            args.append(rng.integers(0, 8, shape, dtype="int32"))
        else:
            args.append(rng.standard_normal(shape, dtype="float32"))
    return args


@pytest.mark.parametrize("func", ACCEPTED, ids=[f.name for f in ACCEPTED])
def test_before_lower_blocks_the_same_kernels_are_accepted(func: PrimFunc) -> None:
    if func is placed_accumulator:
        pytest.skip("private only once plan_allocation_location moved its allocation")
    assert find_races(bufferize(func)) == []


def _as_checked(func: PrimFunc) -> PrimFunc:
    """``func`` as the race check sees it: every pipeline pass before it applied."""
    for p in default_pipeline():
        if p.name == "check_parallel_races":
            return func
        func = p(func)
    raise AssertionError("check_parallel_races is not in the default pipeline")


def test_the_check_runs_after_allocation_placement() -> None:
    names = [p.name for p in default_pipeline()]
    assert names.index("check_parallel_races") == names.index("plan_allocation_location") + 1
    assert names.index("check_parallel_races") < names.index("flatten_buffer")
    # the accumulator is shared where the parser put it, private where placement puts it
    assert find_races(lowering.lower_blocks(placed_accumulator))
    assert find_races(_as_checked(placed_accumulator)) == []


@pytest.mark.parametrize("func", ACCEPTED, ids=[f.name for f in ACCEPTED])
def test_race_free_kernel_matches_the_interpreter_on_two_threads(
    func: PrimFunc, two_threads: None
) -> None:
    assert find_races(_as_checked(func)) == []
    kernel = tvmscript.build(func)
    reference = tvmscript.build(func, target="interp")
    rng = np.random.default_rng(0)
    for _ in range(5):
        args = _inputs(func, rng)
        expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        reference(*expected)
        kernel(*args)
        for got, want in zip(args, expected):
            if isinstance(got, np.ndarray):
                # a block reduction adds its lanes in the documented order, the
                # interpreter in source order: equal up to rounding
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


# -- opt-outs ------------------------------------------------------------------------


@T.prim_func
def annotated_histogram(H: T.Buffer((4,), "int32"), D: T.Buffer((64,), "int32")):
    for i in T.parallel(64, annotations={"tvmscript.allow_races": True}):
        H[D[i]] += 1


@T.prim_func
def one_loop_annotated(H: T.Buffer((4,), "int32"), D: T.Buffer((64,), "int32")):
    for i in T.parallel(64, annotations={"tvmscript.allow_races": True}):
        H[D[i]] += 1
    for i in T.parallel(64):  # second-loop
        H[D[i]] += 2  # second-access


@T.prim_func
def annotated_inside(H: T.Buffer((4,), "int32"), D: T.Buffer((64,), "int32")):
    for o in T.parallel(4):  # noqa: B007  # around-loop
        for i in T.parallel(64, annotations={"tvmscript.allow_races": True}):
            H[D[i]] += 1  # around-access


def test_annotation_opts_one_loop_out(two_threads: None) -> None:
    kernel = tvmscript.build(annotated_histogram)
    H = np.zeros(4, "int32")
    kernel(H, np.zeros(64, "int32"))
    assert 1 <= H[0] <= 64  # racy increments may be lost; no other element is touched
    assert H[1:].tolist() == [0, 0, 0]
    # the annotation covers its own loop only
    _assert_located(_refused(one_loop_annotated), "H", "second-access", "second-loop")
    # ... and not the loops around it
    text = _refused(annotated_inside)
    _assert_located(text, "H", "around-access", "around-loop")
    assert "parallel loop over 'o'" in text


def test_build_option_turns_the_check_off() -> None:
    assert isinstance(tvmscript.build(histogram, check_races=False), tvmscript.Kernel)
    assert tvmscript.build(shared_accumulator, check_races=False).options.check_races is False
    with pytest.raises(TypeError, match="option check_races must be a bool"):
        tvmscript.build(histogram, check_races="no")


@pytest.mark.parametrize("options", [{"verify": True}, {"bounds_check": True}, {"opt_level": 0}])
def test_every_build_path_runs_the_check(options: dict[str, Any]) -> None:
    text = _refused(histogram, **options)
    _assert_located(text, "H", "hist-access", "hist-loop")


def test_lower_takes_the_switch_from_its_argument_or_the_pass_context() -> None:
    with pytest.raises(RaceError) as info:
        lowering.lower(histogram)
    assert info.value.buffer == "H" and info.value.span is not None
    assert info.value.span.line == _line("hist-access")
    assert [n for n, s in info.value.notes if s is not None and s.line == _line("hist-loop")]
    lowering.lower(histogram, check_races=False)
    with PassContext(config={"check_parallel_races": {"enabled": False}}):
        lowering.lower(histogram)
        tvmscript.build(shift_left)  # build's default does not override the context
    with PassContext(disabled_passes={"check_parallel_races"}):
        lowering.lower(histogram)
    with PassContext(config={"check_parallel_races": {"enabled": False}}):
        with pytest.raises(RaceError):
            lowering.lower(histogram, check_races=True)


def test_allow_races_annotation_round_trips_through_the_printer() -> None:
    text = annotated_histogram.script()
    assert '"tvmscript.allow_races": True' in text
    parsed = tvmscript.from_source(text)
    assert isinstance(parsed, PrimFunc)
    assert_structural_equal(annotated_histogram, parsed)
    assert tvmscript.build(parsed) is not None
    # the parsed annotation still exempts the loop
    assert find_races(_as_checked(parsed)) == []


# -- soundness against brute force ---------------------------------------------------

_coef = st.sampled_from([0, 0, 0, 1, -1, 2, -2, 3])


@st.composite
def _affine_kernels(draw: st.DrawFn) -> tuple[PrimFunc, bool]:
    """A parallel loop over ``i`` around a serial ``j`` storing to ``B`` at affine indices
    ``a*i + b*j + c`` (and maybe reading ``B`` at others), with whether two iterations
    really touch one element, one of them writing (found by enumeration)."""
    extent_i, extent_j = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    ndim = draw(st.integers(1, 2))
    Index = list[tuple[int, int, int]]

    def index() -> Index:
        return [(draw(_coef), draw(_coef), draw(st.integers(-2, 2))) for _ in range(ndim)]

    write = index()
    read = index() if draw(st.booleans()) else None
    pin = draw(st.none() | st.integers(0, extent_i - 1))  # if i == pin: ...
    points = [(i, j) for i in range(extent_i) for j in range(extent_j) if pin in (None, i)]

    def element(index: Index, i: int, j: int) -> tuple[int, ...]:
        return tuple(a * i + b * j + c for a, b, c in index)

    forms = [write] + ([read] if read else [])
    every = [(i, j) for i in range(extent_i) for j in range(extent_j)]
    low = [min(element(f, i, j)[d] for f in forms for i, j in every) for d in range(ndim)]
    high = [max(element(f, i, j)[d] for f in forms for i, j in every) for d in range(ndim)]
    shape = tuple(h - lo + 1 for lo, h in zip(low, high))

    def body() -> None:
        B = IB.arg("B", IB.Buffer(shape, "int32"))
        with IB.parallel(extent_i) as i, IB.serial(extent_j) as j:

            def at(index: Index) -> list[Any]:
                return [a * i + b * j + (c - lo) for (a, b, c), lo in zip(index, low)]

            value = B[tuple(at(read))] + 1 if read else IB.int32(1)
            if pin is None:
                IB.buffer_store(B, value, at(write))
            else:
                with IB.If(i == pin), IB.Then():
                    IB.buffer_store(B, value, at(write))

    with IRBuilder() as ib:
        with IB.prim_func():
            IB.func_name("affine")
            body()
    func = ib.get()
    others = {i: [element(write, i2, j2) for i2, j2 in points if i2 != i] for i, _ in points}
    conflict = any(
        element(write, i, j) in others[i] or (read and element(read, i, j) in others[i])
        for i, j in points
    )
    return func, bool(conflict)


@settings(max_examples=300)
@given(_affine_kernels())
def test_accepted_loops_never_conflict_and_certain_races_always_do(
    case: tuple[PrimFunc, bool],
) -> None:
    func, conflict = case
    problems = find_races(func)
    if not problems:
        assert not conflict, func.script()
    elif problems[0].message.startswith("data race"):
        assert conflict, (problems[0].message, func.script())


@T.prim_func
def match_buffer_rows(OUT: T.Buffer((4, 3), "int32")):
    for i in T.parallel(4):
        with T.block("row"):
            row = T.match_buffer(OUT[i, 0:3], (3,), "int32")
            for j in range(3):
                row[j] = i * 3 + j


@T.prim_func
def match_buffer_same_row(OUT: T.Buffer((4, 3), "int32")):
    for i in T.parallel(4):
        with T.block("row"):
            row = T.match_buffer(OUT[0, 0:3], (3,), "int32")
            for j in range(3):
                row[j] = i * 3 + j  # every iteration writes row 0


def test_match_buffer_view_of_the_own_row_is_accepted() -> None:
    # The view's offset (i * 3 after lower_blocks) separates the iterations: found by the
    # parallel fuzz generator, which writes rows through such views.
    out = np.zeros((4, 3), "int32")
    tvmscript.build(match_buffer_rows)(out)
    assert out.tolist() == np.arange(12).reshape(4, 3).tolist()


def test_match_buffer_view_shared_by_every_iteration_is_refused() -> None:
    text = _refused(match_buffer_same_row)
    assert "'row'" in text or "'OUT'" in text, text


@T.prim_func
def ramp_slices(B: T.Buffer((64, 64), "float32"), P: T.Buffer((4096,), "float32")):
    # TVM's printed vector stores (roundtrip's packed matmul): disjoint lane runs per x
    for x in T.parallel(2):
        for y in range(64):
            P[T.ramp(x * 2048 + y * 32, 1, 32)] = B[y, T.ramp(x * 32, 1, 32)]


@T.prim_func
def ramp_interleaved(A: T.Buffer((32,), "float32"), P: T.Buffer((32,), "float32")):
    for x in T.parallel(2):
        P[T.ramp(x, 2, 16)] = A[T.ramp(x, 2, 16)] + T.Broadcast(T.float32(1), 16)


@T.prim_func
def ramp_overlap(B: T.Buffer((64, 64), "float32"), P: T.Buffer((4096,), "float32")):
    for x in T.parallel(2):  # ramp-overlap-loop
        for y in range(64):
            P[T.ramp(x * 16 + y * 32, 1, 32)] = B[y, T.ramp(0, 1, 32)]  # ramp-overlap-store


def test_vector_stores_are_checked_lane_by_lane() -> None:
    assert find_races(bufferize(ramp_slices)) == []
    assert find_races(bufferize(ramp_interleaved)) == []
    text = _refused(ramp_overlap, target="llvm -mcpu=znver3")
    _assert_located(text, "P", "ramp-overlap-store", "ramp-overlap-loop")


def test_disjoint_vector_stores_compute_the_interpreters_result() -> None:
    a = np.arange(32, dtype="float32")
    got, want = np.zeros(32, "float32"), np.zeros(32, "float32")
    tvmscript.build(ramp_interleaved, target="interp")(a, want)
    if not Target("llvm -mcpu=znver3").missing_on_host():
        tvmscript.build(ramp_interleaved, target="llvm -mcpu=znver3")(a, got)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, a + 1)


@T.prim_func
def interleaved(A: T.Buffer((32,), "float32"), P: T.Buffer((32,), "float32")):
    for x in T.parallel(2):
        for lane in range(16):
            P[x + 2 * lane] = A[x + 2 * lane] * T.float32(2)


@T.prim_func
def interleaved_overlapping(A: T.Buffer((48,), "float32"), P: T.Buffer((48,), "float32")):
    for x in T.parallel(3):
        for lane in range(16):
            P[x + 2 * lane] = A[x + 2 * lane] * T.float32(2)  # x = 2, lane = 0 is x = 0, lane = 1


def test_iterations_told_apart_by_the_index_modulo_the_inner_step() -> None:
    assert find_races(bufferize(interleaved)) == []
    assert find_races(bufferize(interleaved_overlapping))
