"""The parts of ``topi_peer.py`` (the TOPI probe against real TVM) that need no TVM: the
0.27 spellings it maps to 0.16's, and the tag of a known difference."""

from __future__ import annotations

import numpy as np
from topi_peer import check_ours, known_difference, to_tvm016

import tvmscript
from irbuilder.ir import PrimFunc

# 0.27's spellings, written by hand: an int64 shape variable as a module-level TypeVar, an
# int32 one declared in the body and named by a string in a parameter, an output dimension
# as a string expression, strides as a TileLayout, an annotated let, a scalar local, a
# block's annotations as T.attr
_TEXT_027 = '''# from typing import TypeVar
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis

m = TypeVar("m")
@T.prim_func(s_tir=True)
def main(A: T.Buffer(("n", m), "float32"), B: T.Buffer(("n * m",), "float32", layout=T.TileLayout(T.S[(n * m,):(T.int64(1),)]))):
    n = T.int32()
    T.func_attr({"tirx.noalias": True})
    with T.sblock("root"):
        T.reads()
        T.writes()
        T.attr({"pragma_scope": "seq"})
        for i in range(T.Cast("int64", n) * m):
            acc: T.float32
            acc = T.float32(0.0)
            x: T.let[T.float32] = A[i // m, i % m]
            acc = acc + x * T.float32(2.0)
            B[i] = acc
'''


def test_the_027_spellings_parse_as_016() -> None:
    text = to_tvm016(_TEXT_027)
    assert "TypeVar" not in text and "sblock" not in text and "tirx" not in text
    func = tvmscript.from_source(text)
    assert isinstance(func, PrimFunc)
    a = np.arange(6, dtype="float32").reshape(2, 3)
    b = np.zeros(6, "float32")
    tvmscript.build(func, target="interp")(a, b)
    np.testing.assert_array_equal(b, 2 * a.reshape(-1))


def test_check_ours_agrees_and_tags_a_nan_not_equal() -> None:
    text = '''# from tvm.script import tirx as T

@T.prim_func(s_tir=True)
def main(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "bool")):
    for i in range(3):
        with T.sblock("ne"):
            v = T.axis.spatial(3, i)
            B[v] = A[v] != T.float32(1.0)
'''
    a = np.array([1.0, np.nan, 2.0], "float32")
    tvm_says = [a, np.array([False, False, True])]  # TVM's fcmp one: NaN != 1 is false
    outcome = check_ours(text, [a, np.zeros(3, bool)], tvm_says, False, "llvm -mcpu=znver3")
    assert outcome.key.startswith("known difference")
    assert known_difference(text, [a]) is not None
    ours = [a, np.array([False, True, True])]
    assert check_ours(text, [a, np.zeros(3, bool)], ours, False, "interp").key == "agree"
