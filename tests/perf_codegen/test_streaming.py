"""Non-temporal stores for large write-only arrays (backend/codegen/streaming.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lowering
import tvmscript
from backend.codegen import CodegenOptions, generate
from backend.codegen.streaming import STREAMING_MIN_BYTES
from irbuilder.ir import PrimFunc
from lowering.late.align_streams import STREAMS_ATTR, streaming_data_vars
from pinned import AVX2, AVX512, lower_for, needs_host_features
from tvmscript import tir as T

BIG = STREAMING_MIN_BYTES // 4  # float32 elements in the smallest streaming array


def _function_text(ll: str, name: str) -> str:
    match = re.search(r"^define [^\n]*@\"?" + re.escape(name) + r"\"?\(.*?^}", ll, re.M | re.S)
    assert match is not None, f"no function {name} in the module"
    return match.group(0)


@T.prim_func
def add(A: T.Buffer((BIG,), "float32"), B: T.Buffer((BIG,), "float32"),
        C: T.Buffer((BIG,), "float32")):
    for io in T.parallel(BIG // 4096):
        for ii in T.vectorized(4096):
            C[io * 4096 + ii] = A[io * 4096 + ii] + B[io * 4096 + ii]


@T.prim_func
def scale_serial(A: T.Buffer((BIG,), "float64"), C: T.Buffer((BIG,), "float64")):
    for io in range(BIG // 64):
        for ii in T.vectorized(64):
            C[io * 64 + ii] = A[io * 64 + ii] * T.float64(3)


@T.prim_func
def small(A: T.Buffer((4096,), "float32"), C: T.Buffer((4096,), "float32")):
    for ii in T.vectorized(4096):
        C[ii] = A[ii] + T.float32(1)


@T.prim_func
def read_back(A: T.Buffer((BIG,), "float32"), C: T.Buffer((BIG,), "float32")):
    for io in range(BIG // 4096):
        for ii in T.vectorized(4096):
            C[io * 4096 + ii] = C[io * 4096 + ii] + A[io * 4096 + ii]


def test_large_write_only_outputs_stream_and_the_function_fences() -> None:
    ll = tvmscript.build(add, target=AVX2).get_source("ll")
    body = _function_text(ll, "add__par_0")
    assert "!nontemporal" in body
    assert "fence seq_cst" in body
    asm = tvmscript.build(add, target=AVX2).get_source("asm")
    assert "movntps" in asm


@pytest.mark.parametrize("func", [small, read_back], ids=["small", "read-back"])
def test_other_arrays_do_not_stream(func: PrimFunc) -> None:
    ll = tvmscript.build(func, target=AVX2).get_source("ll")
    assert "!nontemporal" not in ll and "fence seq_cst" not in ll


def _streaming_names(func: PrimFunc) -> list[str]:
    lowered = lower_for(func, AVX2)
    chosen = streaming_data_vars(lowered)
    return sorted(b.name for b in lowered.buffer_map.values() if id(b.data) in chosen)


def test_only_write_only_large_buffers_are_candidates() -> None:
    assert _streaming_names(add) == ["C"]
    assert _streaming_names(scale_serial) == ["C"]
    assert _streaming_names(read_back) == []
    assert _streaming_names(small) == []


@needs_host_features(AVX2)
@pytest.mark.parametrize("offset", [0, 1, 2, 3], ids=lambda o: f"offset{o}")
def test_results_with_aligned_and_misaligned_outputs(offset: int) -> None:
    rng = np.random.default_rng(offset)
    a = rng.standard_normal(BIG).astype(np.float32)
    b = rng.standard_normal(BIG).astype(np.float32)
    storage = np.full(BIG + 8, -1.0, np.float32)
    c = storage[offset : offset + BIG]  # 4-byte steps from numpy's 16-byte alignment
    tvmscript.build(add, target=AVX2)(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    assert (storage[:offset] == -1).all() and (storage[offset + BIG :] == -1).all()


@needs_host_features(AVX2)
def test_float64_serial_stream() -> None:
    ll = tvmscript.build(scale_serial, target=AVX2).get_source("ll")
    assert "!nontemporal" in ll and "fence seq_cst" in ll
    a = np.random.default_rng(9).standard_normal(BIG)
    c = np.empty_like(a)
    tvmscript.build(scale_serial, target=AVX2)(a, c)
    np.testing.assert_array_equal(c, a * 3)


@T.prim_func
def add_symbolic(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 64), "float32")
    C = T.match_buffer(c, (n, 64), "float32")
    for i in T.parallel(n):
        for j in T.vectorized(64):
            C[i, j] = A[i, j] + T.float32(1)


def test_a_symbolic_size_array_streams_when_large_at_run_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The streams attribute lists the symbolic output; the outlined parallel body tests
    ``n * 64 * 4 >= 4096`` bytes (the threshold here) and streams only then, reading the shape
    variable captured from the caller; below the threshold the stores are ordinary ones."""
    import lowering.late.align_streams as align

    monkeypatch.setattr(align, "STREAMING_MIN_BYTES", 4096)
    monkeypatch.setattr(align, "STREAMING_MIN_FOOTPRINT", 4096)
    kernel = tvmscript.build(add_symbolic, target=AVX2, cache=False)
    assert kernel.lowered is not None and kernel.lowered.attrs[STREAMS_ATTR] == [1]
    body = _function_text(kernel.get_source("ll"), "add_symbolic__par_0")
    stores = re.findall(r"^\s*store <\d+ x float>[^\n]*", body, re.M)
    assert any("!nontemporal" in st for st in stores)
    assert any("!nontemporal" not in st for st in stores)
    for rows in (0, 1, 3, 15, 16, 40):  # 16 rows: 4096 bytes, the first size that streams
        a = np.random.default_rng(rows).standard_normal((rows, 64)).astype("float32")
        c = np.full((rows, 64), np.nan, "float32")
        kernel(a, c)
        np.testing.assert_array_equal(c, a + np.float32(1))


def test_symbolic_size_arrays_are_not_stream_candidates_of_the_loop_rewrites() -> None:
    """vectorize_streams and align_streams still want constant sizes (symbolic=False)."""
    lowered = lowering.lower(add_symbolic)
    assert streaming_data_vars(lowered) == frozenset()
    assert streaming_data_vars(lowered, symbolic=True) == frozenset(
        {id(lowered.buffer_map[lowered.params[1]].data)}
    )


@T.prim_func
def bias_relu(A: T.Buffer((BIG // 1024, 1024), "float32"), b: T.Buffer((1024,), "float32"),
              O: T.Buffer((BIG // 1024, 1024), "float32")):
    for i in T.parallel(BIG // 1024):
        for j in T.vectorized(1024):
            O[i, j] = T.max(A[i, j] + b[j], T.float32(0))


@T.prim_func
def bias_relu_residual(A: T.Buffer((BIG // 1024, 1024), "float32"),
                       R: T.Buffer((BIG // 1024, 1024), "float32"),
                       b: T.Buffer((1024,), "float32"),
                       O: T.Buffer((BIG // 1024, 1024), "float32")):
    for i in T.parallel(BIG // 1024):
        for j in T.vectorized(1024):
            O[i, j] = T.max(A[i, j] + b[j], T.float32(0)) + R[i, j]


def test_a_working_set_that_fits_a_large_cache_does_not_stream() -> None:
    """16 MiB out of 16 MiB in (32 MiB in all) stays in a 32 MiB last-level cache from call
    to call: ordinary stores. One more 16 MiB input (48 MiB) makes the output a stream."""
    from lowering.late.align_streams import STREAMING_MIN_FOOTPRINT

    assert 2 * STREAMING_MIN_BYTES + 4096 < STREAMING_MIN_FOOTPRINT <= 3 * STREAMING_MIN_BYTES
    fits = lower_for(bias_relu, AVX512)
    assert STREAMS_ATTR not in fits.attrs
    assert "!nontemporal" not in generate([fits], CodegenOptions(target=AVX512)).text
    spills = lower_for(bias_relu_residual, AVX512)
    assert spills.attrs[STREAMS_ATTR] == [3]
    assert "!nontemporal" in generate([spills], CodegenOptions(target=AVX512)).text


def test_a_symbolic_working_set_is_measured_at_run_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """With symbolic shapes the total is computed from the shapes at run time: the output
    streams only when it reaches its own threshold and all arrays together theirs."""
    import lowering.late.align_streams as align

    monkeypatch.setattr(align, "STREAMING_MIN_BYTES", 4096)
    monkeypatch.setattr(align, "STREAMING_MIN_FOOTPRINT", 3 * 4096)
    text = generate([lower_for(add_symbolic, AVX2)], CodegenOptions(target=AVX2)).text
    body = _function_text(text, "add_symbolic__par_0")
    assert "icmp sge i64" in body and ", 4096" in body and ", 12288" in body  # both, in bytes
    kernel = tvmscript.build(add_symbolic, target=AVX2, cache=False)
    for rows in (16, 40, 48, 100):  # 48 rows: 12 KiB out, 24 KiB in all
        a = np.random.default_rng(rows).standard_normal((rows, 64)).astype("float32")
        c = np.full((rows, 64), np.nan, "float32")
        kernel(a, c)
        np.testing.assert_array_equal(c, a + np.float32(1))


def test_the_host_last_level_cache_raises_the_footprint(monkeypatch: pytest.MonkeyPatch) -> None:
    # arrays a large L3 holds stay in it between calls: ordinary stores there (a 480 MiB L3:
    # a 64 MiB outer product 1.37 ms streamed, 1.21 ms not); a named CPU keeps the default
    import lowering.target as target_module
    from lowering.late.align_streams import STREAMING_MIN_FOOTPRINT, streaming_min_footprint
    from lowering.target import Target

    monkeypatch.setattr(target_module, "_host_last_level_cache", lambda: 480 << 20)
    with lowering.PassContext(target=Target("llvm")):
        assert streaming_min_footprint() == 720 << 20
        assert _streaming_names_for(add, Target("llvm")) == []  # 3 x 16 MiB: fits the L3
    with lowering.PassContext(target=AVX2):
        assert streaming_min_footprint() == STREAMING_MIN_FOOTPRINT
    monkeypatch.setattr(target_module, "_host_last_level_cache", lambda: 8 << 20)
    with lowering.PassContext(target=Target("llvm")):
        assert streaming_min_footprint() == STREAMING_MIN_FOOTPRINT
        assert _streaming_names_for(add, Target("llvm")) == ["C"]


@T.prim_func
def transpose_big(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32")):
    for i in T.parallel(4096):
        for j in range(4096):
            B[i, j] = A[j, i]


def test_transposed_tiles_stream_beside_a_large_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A transpose's tiles write a line in each of L rows: with ordinary stores each is read
    for ownership first (a 4096-square transpose on the 480 MiB-L3 Intel host: 37 ms with
    ordinary stores, 12 ms streamed). Its output streams from the default footprint on,
    whatever the host's cache; an elementwise kernel of the same size does not."""
    import lowering.target as target_module
    from lowering.late.align_streams import TRANSPOSED_ATTR
    from lowering.target import Target

    monkeypatch.setattr(target_module, "_host_last_level_cache", lambda: 480 << 20)
    host = Target("llvm")
    with lowering.PassContext(target=host):
        lowered = lowering.lower(transpose_big, target=host)
        assert list(lowered.attrs[TRANSPOSED_ATTR]) == [1]
        assert list(lowered.attrs[STREAMS_ATTR]) == [1]
        assert _streaming_names_for(transpose_big, host) == ["B"]
        assert _streaming_names_for(add, host) == []  # 3 x 16 MiB: fits the L3, as above


def _streaming_names_for(func: PrimFunc, target: object) -> list[str]:
    lowered = lowering.lower(func, target=target)
    chosen = streaming_data_vars(lowered)
    return sorted(b.name for b in lowered.buffer_map.values() if id(b.data) in chosen)
