"""Random chains and DAGs of computes: numpy, analysis on/off, every opt_level, native build."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from buf_helpers import built, call_built, kernel, run
from hypothesis import given, settings
from hypothesis import strategies as st

from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import Buffer, PrimFunc

N, R = 6, 3  # vectors have N elements, matrices R x N

# An op: (name, arity, kinds in, kind out); kind "v" vector, "m" matrix.
OPS = ["scale", "add1", "relu", "add", "sub", "bcast", "rowsum", "shift", "outer"]


@dataclass
class Node:
    kind: str
    op: str
    args: tuple[int, ...]


@st.composite
def programs(draw: Any) -> tuple[list[Node], list[int]]:
    nodes = [Node("v", "input", ()), Node("m", "input", ())]
    for _ in range(draw(st.integers(1, 7))):
        op = draw(st.sampled_from(OPS))
        vs = [i for i, n in enumerate(nodes) if n.kind == "v"]
        ms = [i for i, n in enumerate(nodes) if n.kind == "m"]
        # Prefer the latest value to get chains; any earlier one gives DAGs.
        pick_v = st.one_of(st.just(vs[-1]), st.sampled_from(vs))
        pick_m = st.one_of(st.just(ms[-1]), st.sampled_from(ms))
        if op in ("scale", "add1", "relu", "shift"):
            x = draw(st.one_of(pick_v, pick_m)) if op != "shift" else draw(pick_v)
            nodes.append(Node(nodes[x].kind, op, (x,)))
        elif op in ("add", "sub"):
            kind = draw(st.sampled_from("vm"))
            pick = pick_v if kind == "v" else pick_m
            nodes.append(Node(kind, op, (draw(pick), draw(pick))))
        elif op == "bcast":
            nodes.append(Node("m", op, (draw(pick_m), draw(pick_v))))
        elif op == "rowsum":
            nodes.append(Node("v", op, (draw(pick_m),)))
        else:  # outer: matrix from a vector, broadcast along rows
            nodes.append(Node("m", op, (draw(pick_v),)))
    computed = list(range(2, len(nodes)))
    extra = draw(st.lists(st.sampled_from(computed), max_size=2, unique=True))
    returns = [computed[-1], *[e for e in extra if e != computed[-1]]]
    return nodes, returns


def _expr(node: Node, bufs: list[Buffer]) -> Any:
    a = [bufs[i] for i in node.args]
    vec = node.kind == "v"
    if node.op == "rowsum":
        k = T.reduce_axis(0, R)
        return lambda j: T.sum(a[0][k, j], axis=k)
    if node.op == "shift":
        return lambda j: a[0][T.min(j + 1, N - 1)] - a[0][T.max(j - 1, 0)]
    if node.op == "outer":
        return lambda i, j: a[0][j] * 2.0
    if node.op == "bcast":
        return lambda i, j: a[0][i, j] + a[1][j]
    unary: dict[str, Any] = {
        "scale": lambda x: x * 2.0,
        "add1": lambda x: x + 1.0,
        "relu": lambda x: T.max(x, 0.0),
    }
    if node.op in unary:
        f = unary[node.op]
        return (lambda j: f(a[0][j])) if vec else (lambda i, j: f(a[0][i, j]))
    if node.op == "add":
        return (lambda j: a[0][j] + a[1][j]) if vec else (lambda i, j: a[0][i, j] + a[1][i, j])
    return (lambda j: a[0][j] - a[1][j]) if vec else (lambda i, j: a[0][i, j] - a[1][i, j])


def build_program(nodes: list[Node], returns: list[int]) -> PrimFunc:
    def body(b: IRBuilder) -> None:
        bufs = [T.arg("V", T.Buffer((N,), "float32")), T.arg("M", T.Buffer((R, N), "float32"))]
        for i, node in enumerate(nodes[2:], start=2):
            shape = (N,) if node.kind == "v" else (R, N)
            bufs.append(T.compute(shape, _expr(node, bufs), name=f"t{i}"))
        T.return_tensors(*[bufs[r] for r in returns])

    return kernel("rand", body)


def reference(nodes: list[Node], returns: list[int], v: Any, m: Any) -> list[Any]:
    vals: list[Any] = [v, m]
    for node in nodes[2:]:
        a = [vals[i] for i in node.args]
        op = node.op
        if op == "scale":
            r = a[0] * np.float32(2)
        elif op == "add1":
            r = a[0] + np.float32(1)
        elif op == "relu":
            r = np.maximum(a[0], np.float32(0))
        elif op == "add":
            r = a[0] + a[1]
        elif op == "sub":
            r = a[0] - a[1]
        elif op == "bcast":
            r = a[0] + a[1][None, :]
        elif op == "rowsum":
            r = a[0].sum(axis=0, dtype=np.float32)
        elif op == "shift":
            r = a[0][np.minimum(np.arange(N) + 1, N - 1)] - a[0][np.maximum(np.arange(N) - 1, 0)]
        else:
            r = np.broadcast_to(a[0] * np.float32(2), (R, N)).copy()
        vals.append(r.astype(np.float32))
    return [vals[r] for r in returns]


@settings(max_examples=40, deadline=None)
@given(programs(), st.integers(0, 2**31 - 1))
def test_random_programs_match_numpy_with_analysis_on_and_off(
    prog: tuple[list[Node], list[int]], seed: int
) -> None:
    nodes, returns = prog
    rng = np.random.default_rng(seed)
    v = rng.integers(-3, 4, N).astype("float32")
    m = rng.integers(-3, 4, (R, N)).astype("float32")
    f = build_program(nodes, returns)
    expected = reference(nodes, returns, v, m)
    for opt in (0, 1, 2, 3):
        for always in (False, True):
            outs = run(f, [v, m], opt_level=opt, always=always)
            assert len(outs) == len(expected)
            for got, want in zip(outs, expected):
                np.testing.assert_array_equal(got, want)


@settings(max_examples=8, deadline=None)
@given(programs())
def test_random_programs_native_build(prog: tuple[list[Node], list[int]]) -> None:
    nodes, returns = prog
    v = np.arange(-3, N - 3, dtype="float32")
    m = np.arange(R * N, dtype="float32").reshape(R, N) - 8
    f = build_program(nodes, returns)
    k = built(f)
    got = call_built(k, [v, m])
    assert k.allocation_stats()["live"] == 0  # every intermediate freed
    got = got if isinstance(got, tuple) else (got,)
    for g, want in zip(got, reference(nodes, returns, v, m)):
        np.testing.assert_array_equal(g, want)
