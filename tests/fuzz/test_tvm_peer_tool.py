"""The parts of ``tvm_peer.py`` (the differential fuzz against real TVM) that need no TVM:
its generator, the 0.27 spelling, the undefined-behaviour watch and the control program."""

from __future__ import annotations

import numpy as np
import pytest
from tvm_peer import (
    Case,
    UBWatch,
    _copies,
    bind_indices,
    expr_args,
    expr_program,
    known_bug,
    to_tvm027,
    ub_reasons,
)

import tvmscript
from irbuilder.ir import PrimFunc
from tvmscript import tir as T


@pytest.mark.parametrize("seed", range(12))
def test_generated_programs_parse_and_run(seed: int) -> None:
    text, _, _ = expr_program(seed)
    func = tvmscript.from_source(text.replace("# from", "from"))
    assert isinstance(func, PrimFunc)
    shapes = {b.name: (tuple(int(d) for d in b.shape), str(b.dtype))
              for b in (func.buffer_map[p] for p in func.params)}
    reasons, err = ub_reasons(Case(func, func.script(), expr_args(seed, shapes), False, "t"))
    assert err is None or reasons or err in ("ZeroDivisionError", "OverflowError")


def test_spelling_for_tvm_027() -> None:
    text = """# from tvmscript import tir as T

@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    with T.block("root"):
        with T.decl_buffer((4,), "int32") as tmp:
            with T.LetStmt(A[0] + 1) as x:
                tmp[0] = x
            A[1] = tmp[0]
"""
    out = to_tvm027(text)
    assert "from tvm.script import tirx as T" in out
    assert "@T.prim_func(check_well_formed=False)" in out
    assert 'with T.sblock("root"):' in out
    assert '        tmp = T.decl_buffer((4,), "int32")\n        x = T.Bind(A[0] + 1)\n' \
        '        tmp[0] = x\n        A[1] = tmp[0]' in out


def test_known_bug_tags() -> None:
    assert known_bug("    B[v] = A[(16 - v) // 3]") == "index-floordiv"
    assert known_bug("    B[v] = A[(v + 1) // 3]") is None
    assert known_bug("    B[i] = A[i] % 2 // -2") == "negative-divisor"
    vectorized_let = ("    for i in T.vectorized(8):\n        x: T.float32 = A[i]\n"
                      "        B[i] = x\n")
    assert known_bug(vectorized_let) == "vectorized-let"


def test_ub_watch_flags_what_tvm_leaves_undefined() -> None:
    @T.prim_func
    def wraps(A: T.Buffer((2,), "int32"), U: T.Buffer((2,), "uint8"),
              B: T.Buffer((2,), "int32"), C: T.Buffer((2,), "int8")):
        for i in range(2):
            B[i] = A[i] * 2
            C[i] = T.Cast("int8", U[i])

    kernel = tvmscript.build(wraps, target="interp")
    watch = UBWatch()
    with watch.active():
        kernel(np.array([1, 2**30], "int32"), np.array([3, 200], "uint8"),
               np.zeros(2, "int32"), np.zeros(2, "int8"))
    assert watch.reasons == ["signed mul overflow in int32", "uint8->int8 cast wraps"]
    # the watch is gone afterwards
    kernel(np.array([1, 2**30], "int32"), np.array([3, 200], "uint8"),
           np.zeros(2, "int32"), np.zeros(2, "int8"))
    assert len(watch.reasons) == 2


def test_control_program_computes_the_same() -> None:
    @T.prim_func
    def decreasing(A: T.Buffer((17,), "int32"), B: T.Buffer((17,), "int32")):
        for v in T.vectorized(17):
            x: T.int32 = A[(16 - v) // 3] + A[(-v - 6) % 7]
            B[v] = x + A[(v * -2 + 30) % 17] + A[v] % 2 // -2 + A[v] % -3

    control = bind_indices(decreasing)
    script = control.script()
    assert "T.vectorized" not in script and "ix0" in script and "// -2" not in script
    args = [np.arange(17, dtype="int32") * 7, np.zeros(17, "int32")]
    want, got = _copies(args), _copies(args)
    tvmscript.build(decreasing, target="interp")(*want)
    tvmscript.build(control, target="interp")(*got)
    np.testing.assert_array_equal(got[1], want[1])
