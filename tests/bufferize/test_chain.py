"""An 8-step elementwise chain: fused (opt_level 2) or in place (fusion off): no intermediate."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from buf_helpers import allocates, built, call_built, here, kernel, lowered, run

from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import Buffer, For, PrimFunc, SizeVar, as_dtype
from lowering import PassContext
from lowering.abi.boundary import output_shapes, output_specs
from lowering.transforms.bufferize import analyze, explain_bufferization

STEPS: list[tuple[Any, Any]] = [
    (lambda x: x * 2.0, lambda x: x * np.float32(2)),
    (lambda x: x + 1.0, lambda x: x + np.float32(1)),
    (lambda x: x - 3.0, lambda x: x - np.float32(3)),
    (lambda x: T.max(x, 0.0), lambda x: np.maximum(x, np.float32(0))),
    (lambda x: x * 0.5, lambda x: x * np.float32(0.5)),
    (lambda x: x + 2.0, lambda x: x + np.float32(2)),
    (lambda x: T.min(x, 5.0), lambda x: np.minimum(x, np.float32(5))),
    (lambda x: x * 3.0, lambda x: x * np.float32(3)),
]


def _apply(step: Any, x: Buffer) -> Any:
    return lambda i: step(x[i])


def chain(n: Any) -> PrimFunc:
    def body(b: IRBuilder) -> None:
        a = T.arg("A", T.Buffer((n,), "float32"))
        cur: Buffer = a
        for s, (step, _) in enumerate(STEPS):
            with b.with_span(here(offset=1)):
                cur = T.compute((n,), _apply(step, cur), name=f"D{s}")
        T.return_tensors(cur)

    return kernel("chain", body)


def reference(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    for _, ref in STEPS:
        a = ref(a)
    return a


def _loops(func: PrimFunc) -> int:
    count = 0

    def visit(node: object) -> None:
        nonlocal count
        count += isinstance(node, For)

    from irbuilder.ir import post_order_visit

    post_order_visit(func.body, visit)
    return count


def test_fused_chain_is_one_loop_without_allocation() -> None:
    f = chain(64)
    low = lowered(f, opt_level=2)
    assert allocates(low) == []
    assert _loops(low) == 1
    assert low.attrs["num_outputs"] == 1 and len(low.params) == 2
    a = np.linspace(-4, 4, 64, dtype="float32")
    (out,) = run(f, [a], opt_level=2)
    np.testing.assert_array_equal(out, reference(a))


def test_unfused_chain_runs_in_place_without_intermediate() -> None:
    f = chain(64)
    for opts in ({"opt_level": 1}, {"opt_level": 3, "disabled": ["fuse-tensors"]}):
        low = lowered(f, **opts)
        assert len(allocates(low)) <= 1
        assert allocates(low) == []  # the whole chain lives in the output parameter
        assert _loops(low) == 8
        a = np.linspace(-4, 4, 64, dtype="float32")
        (out,) = run(f, [a], **opts)
        np.testing.assert_array_equal(out, reference(a))


def test_always_allocate_gives_same_result_with_intermediates() -> None:
    f = chain(64)
    a = np.linspace(-4, 4, 64, dtype="float32")
    low = lowered(f, opt_level=1, always=True)
    assert len(allocates(low)) == 7
    (out_on,) = run(f, [a], opt_level=1, always=False)
    (out_off,) = run(f, [a], opt_level=1, always=True)
    np.testing.assert_array_equal(out_on, out_off)
    with PassContext(config={"bufferize": {"always_allocate": True}}):
        text = explain_bufferization(f, opt_level=1)
    assert "always-allocate" in text and "allocations: 7" in text


def test_16m_chain_ir_has_no_intermediate_allocation() -> None:
    n = 16 * 1024 * 1024
    f = chain(n)
    # The late stage's streaming stores keep a 16-float staging head (stream_head); no
    # allocation comes from bufferization.
    for level in (2, 1):
        found = allocates(lowered(f, opt_level=level))
        assert [a for a in found if not a.buffer_var.name.startswith("stream_")] == []
    assert "allocations: 0" in explain_bufferization(f, opt_level=2)
    assert "allocations: 0" in explain_bufferization(f, opt_level=1)


def test_explain_chain_reports_fusion_and_in_place() -> None:
    f = chain(64)
    fused = explain_bufferization(f, opt_level=2)
    assert fused.count("inlined into") == 7
    assert "D7: output parameter" in fused and "allocations: 0" in fused
    assert "test_chain.py:" in fused and "T.compute" in fused  # source lines quoted
    unfused = explain_bufferization(f, opt_level=1)
    assert "D3: in output parameter 0" in unfused
    assert "in place in D2's buffer" in unfused


def test_symbolic_chain_output_shape_from_input() -> None:
    n = SizeVar("n", as_dtype("int32"))
    f = chain(n)
    low = lowered(f, opt_level=2)
    specs = output_specs(low)
    assert [s.name for s in specs] == ["D7"] and specs[0].dtype == "float32"
    assert specs[0].shape[0] is n
    a = np.arange(-5, 5, dtype="float32")
    assert output_shapes(low, [a]) == [(10,)]
    (out,) = run(f, [a], opt_level=2)
    np.testing.assert_array_equal(out, reference(a))
    assert analyze(f).decisions[-1].kind == "output"


def test_built_chain_matches_and_counts_no_allocation() -> None:
    f = chain(1000)
    k = built(f, opt_level=2)
    a = np.linspace(-4, 4, 1000, dtype="float32")
    out = call_built(k, [a])
    np.testing.assert_array_equal(out, reference(a))
    assert k.allocation_stats()["total"] == 0


@pytest.mark.parametrize("disabled", [(), ("fuse_tensors",)], ids=["fused", "fusion-off"])
def test_16m_chain_allocation_counter(disabled: tuple[str, ...]) -> None:
    # The acceptance case: 8 elementwise computes over 16M float32, the last one returned.
    from lowering import PassContext
    from tvmscript import build

    n = 1 << 24
    with PassContext(disabled_passes=frozenset(disabled)):
        k = build(chain(n), opt_level=2)
    a = np.linspace(-4, 4, n, dtype="float32")
    out = k(a)
    np.testing.assert_array_equal(out[:: 1 << 12], reference(a[:: 1 << 12]))
    stats = k.allocation_stats()
    assert stats["total"] <= (0 if not disabled else 1), stats
    assert stats["live"] == 0
