"""A variable used only inside a compound buffer shape (``(n * 32,)``) is defined by nothing:
both targets refuse the function by name at build time (TVM refuses it too), instead of a code
generator error or a NameError on the first call."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from tvmscript import tir as T


@T.prim_func
def compound_only(a: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n * 32,), "float32")
    A[T.min(T.int64(0), n)] = T.float32(0)


@T.prim_func
def compound_and_plain(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n * 2,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        A[i * 2] = B[i]
        A[i * 2 + 1] = B[i]


@pytest.mark.parametrize("target", [tvmscript.Target("llvm -mcpu=znver3"), "interp"], ids=str)
def test_variable_only_in_compound_shape_is_refused(target: object) -> None:
    with pytest.raises(ValueError, match=r"shape\[0\] = \(n \* 32\) uses 'n', which no parameter"):
        tvmscript.build(compound_only, target=target)


@pytest.mark.parametrize("target", [tvmscript.Target("llvm -mcpu=znver3"), "interp"], ids=str)
def test_variable_defined_by_another_buffer_is_fine(target: object) -> None:
    a = np.zeros(6, "float32")
    tvmscript.build(compound_and_plain, target=target)(a, np.array([1, 2, 3], "float32"))
    np.testing.assert_array_equal(a, [1, 1, 2, 2, 3, 3])
    kernel = tvmscript.build(compound_and_plain, target=target)
    with pytest.raises(ValueError, match="A"):
        kernel(np.zeros(5, "float32"), np.zeros(3, "float32"))
