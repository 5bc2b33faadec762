"""Read-after-write conflicts (the seed's print-conflicts example, adapted), matmul, errors."""

from __future__ import annotations

import numpy as np
import pytest
from buf_helpers import allocates, built, call_built, here, kernel, lowered, run

from irbuilder import IRBuilder, IRBuilderError
from irbuilder import tir as T
from irbuilder.ir import PrimFunc, SizeVar, as_dtype
from lowering.abi.boundary import output_specs
from lowering.transforms.bufferize import analyze, explain_bufferization

LINES: dict[str, int] = {}


def conflict_kernel() -> PrimFunc:
    """D defined; E would overwrite D in place; F reads D again afterwards."""

    def body(b: IRBuilder) -> None:
        a = T.arg("A", T.Buffer((16,), "float32"))
        k = T.reduce_axis(0, 16)
        with b.with_span(s := here(offset=1)):
            d = T.compute((16,), lambda i: a[i] + 1.0, name="D")
        LINES["def"] = s.line
        with b.with_span(s := here(offset=1)):
            e = T.compute((16,), lambda i: d[i] * 2.0, name="E")
        LINES["write"] = s.line
        with b.with_span(s := here(offset=1)):
            f = T.compute((1,), lambda _: T.sum(e[k] + d[k], axis=k), name="F")
        LINES["read"] = s.line
        T.return_tensors(f)

    return kernel("conflict", body)


def test_conflict_forces_new_buffer_and_explain_names_three_lines() -> None:
    f = conflict_kernel()
    plan = analyze(f)
    by_name = {d.tensor.name: d for d in plan.decisions}
    assert by_name["E"].kind == "alloc"
    (conflict,) = by_name["E"].conflicts
    assert conflict.tensor == "D" and "read again later" in conflict.what
    assert conflict.definition is not None and conflict.definition.line == LINES["def"]
    assert conflict.write is not None and conflict.write.line == LINES["write"]
    assert conflict.read is not None and conflict.read.line == LINES["read"]
    text = explain_bufferization(f, opt_level=1)
    assert f"test_conflicts.py:{LINES['def']}  d = T.compute" in text
    assert f"test_conflicts.py:{LINES['write']}  e = T.compute" in text
    assert f"test_conflicts.py:{LINES['read']}  f = T.compute" in text
    assert "allocations: 2" in text
    # bufferization's two buffers; the 16-step sum's partial accumulators are the
    # reduction's own (vectorize_reductions)
    kept = [a for a in allocates(lowered(f, opt_level=1))
            if not a.buffer_var.name.endswith("_lanes")]
    assert len(kept) == 2
    a = np.arange(16, dtype="float32")
    (out,) = run(f, [a], opt_level=1)
    np.testing.assert_array_equal(out, [np.sum((a + 1) * 2 + (a + 1))])


def test_shifted_read_is_a_conflict_in_the_same_statement() -> None:
    def body(b: IRBuilder) -> None:
        a = T.arg("A", T.Buffer((8,), "float32"))
        c = T.compute((8,), lambda i: a[i] * 3.0, name="C")
        d = T.compute((8,), lambda i: c[i] + c[T.min(i + 1, 7)], name="D")
        T.return_tensors(d)

    f = kernel("shift", body)
    decision = analyze(f).decisions[-1]
    assert "another index" in decision.conflicts[0].what
    a = np.arange(8, dtype="float32")
    ref = a * 3
    for opt in (0, 1, 2, 3):
        (out,) = run(f, [a], opt_level=opt)
        np.testing.assert_array_equal(out, ref + ref[np.minimum(np.arange(8) + 1, 7)])


def mm_bias_relu(m: int | SizeVar, n: int, kk: int) -> PrimFunc:
    def body(b: IRBuilder) -> None:
        a = T.arg("A", T.Buffer((m, kk), "float32"))
        w = T.arg("W", T.Buffer((kk, n), "float32"))
        bias = T.arg("bias", T.Buffer((n,), "float32"))
        k = T.reduce_axis(0, kk)
        mm = T.compute((m, n), lambda i, j: T.sum(a[i, k] * w[k, j], axis=k), name="MM")
        biased = T.compute((m, n), lambda i, j: mm[i, j] + bias[j], name="Biased")
        relu = T.compute((m, n), lambda i, j: T.max(biased[i, j], 0.0), name="Relu")
        T.return_tensors(relu, mm)

    return kernel("mm_bias_relu", body)


def test_matmul_bias_relu_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, (6, 5)).astype("float32")
    w = rng.integers(-3, 4, (5, 7)).astype("float32")
    bias = rng.integers(-3, 4, (7,)).astype("float32")
    ref_mm = a @ w
    ref = np.maximum(ref_mm + bias, 0)
    f = mm_bias_relu(6, 7, 5)
    for opt in (0, 1, 2, 3):
        for always in (False, True):
            relu, mm = run(f, [a, w, bias], opt_level=opt, always=always)
            np.testing.assert_array_equal(relu, ref)
            np.testing.assert_array_equal(mm, ref_mm)
    assert allocates(lowered(f, opt_level=2)) == []  # MM returned, bias+relu fused into Relu
    text = explain_bufferization(f, opt_level=1)
    assert "Biased: in output parameter 0" in text and "MM: output parameter" in text


def test_matmul_symbolic_rows_and_build() -> None:
    m = SizeVar("m", as_dtype("int32"))
    f = mm_bias_relu(m, 7, 5)
    low = lowered(f)
    assert [(s.name, s.dtype) for s in output_specs(low)] == [
        ("Relu", "float32"), ("MM", "float32")
    ]
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, (9, 5)).astype("float32")
    w = rng.integers(-3, 4, (5, 7)).astype("float32")
    bias = rng.integers(-3, 4, (7,)).astype("float32")
    relu, mm = run(f, [a, w, bias])
    assert mm.shape == (9, 7)
    assert relu.shape == (9, 7)
    np.testing.assert_array_equal(relu, np.maximum(a @ w + bias, 0))
    kernel_ = built(f)
    got = call_built(kernel_, [a, w, bias])
    np.testing.assert_allclose(got[0], np.maximum(a @ w + bias, 0), rtol=1e-6)


def test_destination_passing_style_computes_chain_in_destination() -> None:
    def body(b: IRBuilder) -> None:
        a = T.arg("A", T.Buffer((8,), "float32"))
        c = T.arg("C", T.Buffer((8,), "float32"))
        d = T.compute((8,), lambda i: a[i] + 1.0, name="D")
        e = T.compute((8,), lambda i: d[i] * 2.0, name="E")
        T.compute((8,), lambda i: e[i] - 1.0, out=c)

    f = kernel("dps", body)
    assert allocates(lowered(f, opt_level=1)) == []
    assert "computed directly in the destination C" in explain_bufferization(f, opt_level=1)
    a = np.arange(8, dtype="float32")
    for always in (False, True):
        c = np.zeros(8, dtype="float32")
        from backend.interp import interpret

        interpret(lowered(f, opt_level=1, always=always), [a, c])
        np.testing.assert_array_equal(c, (a + 1) * 2 - 1)


def test_return_errors_name_the_offender() -> None:
    def param(b: IRBuilder) -> None:
        a = T.arg("A", T.Buffer((8,), "float32"))
        T.return_tensors(a)

    with pytest.raises(IRBuilderError, match="'A' is a parameter"):
        kernel("bad", param)

    def twice(b: IRBuilder) -> None:
        a = T.arg("A", T.Buffer((8,), "float32"))
        d = T.compute((8,), lambda i: a[i], name="D")
        T.return_tensors(d, d)

    with pytest.raises(IRBuilderError, match="'D' is returned twice"):
        kernel("bad", twice)

    def written_twice(b: IRBuilder) -> None:
        a = T.arg("A", T.Buffer((8,), "float32"))
        d = T.compute((8,), lambda i: a[i], name="D")
        T.compute((8,), lambda i: a[i] * 2.0, out=d)
        T.return_tensors(d)

    with pytest.raises(ValueError, match="returns 'D', which is not a tensor"):
        lowered(kernel("bad", written_twice))


def test_printer_prints_return() -> None:
    def body(b: IRBuilder) -> None:
        a = T.arg("A", T.Buffer((8,), "float32"))
        d = T.compute((8,), lambda i: a[i] + 1.0, name="D")
        e = T.compute((8,), lambda i: d[i] * 2.0, name="E")
        T.return_tensors(d, e)

    text = kernel("ret", body).script()
    assert text.rstrip().endswith("return D, E")
    assert "tensor_returns" not in text
