"""The one definition of each reduction kind (irbuilder.ir.reducer)."""

import numpy as np
import pytest

from backend.interp import values as V
from irbuilder.ir import (
    BINARY_OP_NAMES,
    REDUCE_COMBINERS,
    Add,
    And,
    IntImm,
    Max,
    Min,
    Mul,
    Or,
    ReduceKind,
    Var,
    as_dtype,
    reduce_combine,
    reduce_identity,
)

ARITH = [ReduceKind.SUM, ReduceKind.PROD, ReduceKind.MAX, ReduceKind.MIN]


def test_every_kind_has_a_combiner() -> None:
    assert set(REDUCE_COMBINERS) == set(ReduceKind)
    expected = {ReduceKind.SUM: Add, ReduceKind.PROD: Mul, ReduceKind.MAX: Max,
                ReduceKind.MIN: Min, ReduceKind.ALL: And, ReduceKind.ANY: Or}
    for kind, cls in expected.items():
        acc = Var("acc", as_dtype("bool" if kind in (ReduceKind.ALL, ReduceKind.ANY) else "int32"))
        combined = reduce_combine(kind, acc, acc)
        assert type(combined) is cls and combined.a is acc


@pytest.mark.parametrize("name", ["int8", "int32", "int64", "uint8", "uint64"])
@pytest.mark.parametrize("kind", ARITH)
def test_identity_is_neutral_for_integers(kind: ReduceKind, name: str) -> None:
    dtype = as_dtype(name)
    info = np.iinfo(name)
    for x in {info.min, 0, 1, 7, info.max}:
        combined = reduce_combine(kind, reduce_identity(kind, dtype), IntImm(dtype, int(x)))
        assert isinstance(combined, IntImm) and combined.value == x


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
@pytest.mark.parametrize("kind", ARITH)
def test_identity_is_neutral_for_floats_in_the_interpreter(kind: ReduceKind, name: str) -> None:
    dtype = as_dtype(name)
    op = BINARY_OP_NAMES[REDUCE_COMBINERS[kind]]
    identity = reduce_identity(kind, dtype).value  # type: ignore[attr-defined]
    for x in (-np.inf, -2.5, 0.0, 3.0, np.inf):
        got = V.binary(op, V.from_python(identity, dtype), V.from_python(x, dtype), dtype)
        assert float(got) == x


@pytest.mark.parametrize("kind", [ReduceKind.ALL, ReduceKind.ANY])
def test_logical_kinds_on_bool(kind: ReduceKind) -> None:
    dtype = as_dtype("bool")
    for x in (0, 1):
        combined = reduce_combine(kind, reduce_identity(kind, dtype), IntImm(dtype, x))
        assert isinstance(combined, IntImm) and combined.value == x
