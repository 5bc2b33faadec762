import pytest

import irbuilder.ir as ir
from irbuilder.ir import PROMOTION_RULES, IntImm, Var, as_dtype, binary_dtype, const

i32, i64, u32, u8 = (as_dtype(t) for t in ("int32", "int64", "uint32", "uint8"))
f16, f32, f64, b = (as_dtype(t) for t in ("float16", "float32", "float64", "bool"))


def test_operators_build_nodes() -> None:
    i, j = Var("i"), Var("j")
    cases = [
        (i + j, ir.Add), (i - j, ir.Sub), (i * j, ir.Mul), (i / j, ir.Div),
        (i // j, ir.FloorDiv), (i % j, ir.FloorMod), (i == j, ir.EQ), (i != j, ir.NE),
        (i < j, ir.LT), (i <= j, ir.LE), (i > j, ir.GT), (i >= j, ir.GE),
    ]
    for node, cls in cases:
        assert type(node) is cls
        assert node.a is i and node.b is j
    assert (i < j).dtype == b
    bit = i & j
    assert isinstance(bit, ir.Call) and bit.op == "bitwise_and"
    assert (i << 2).op == "shift_left" and (~i).op == "bitwise_not"  # type: ignore[attr-defined]
    c = (i < j) & (j < i)
    assert isinstance(c, ir.And)
    assert isinstance(~(i < j), ir.Not)
    neg = -i
    assert isinstance(neg, ir.Mul) and isinstance(neg.b, IntImm) and neg.b.value == -1


def test_reflected_operators_wrap_python_numbers() -> None:
    i = Var("i", "int64")
    node = 3 - i
    assert isinstance(node, ir.Sub) and isinstance(node.a, IntImm)
    assert node.a.dtype == i64 and node.a.value == 3


# (lhs dtype, rhs dtype or python value, result dtype)
PROMOTION_CASES = [
    ("int32", "int32", "int32"),
    ("int32", "int64", "int64"),
    ("int64", "int32", "int64"),
    ("int8", "int16", "int16"),
    ("uint32", "int32", "uint32"),
    ("int32", "uint32", "uint32"),
    ("int8", "uint8", "uint8"),
    ("uint16", "int32", "int32"),
    ("uint64", "int32", "uint64"),
    ("uint8", "uint16", "uint16"),
    ("int32", "float32", "float32"),
    ("int64", "float16", "float16"),
    ("float16", "float32", "float32"),
    ("float32", "float64", "float64"),
    ("bool", "int32", "int32"),
    ("bool", "float32", "float32"),
    ("int64", 1, "int64"),
    ("uint8", 1, "uint8"),
    ("float64", 1, "float64"),
    ("float16", 2.5, "float16"),
    ("int32", 2.5, "float32"),
    ("int64", 2.5, "float32"),
    ("float32x8", "float32", "float32x8"),
    ("float32", "float32x4", "float32x4"),
    ("int32x4", 1, "int32x4"),
]


@pytest.mark.parametrize("lhs,rhs,expected", PROMOTION_CASES)
def test_promotion_table(lhs: str, rhs: object, expected: str) -> None:
    a = Var("a", lhs)
    other = Var("b", rhs) if isinstance(rhs, str) else rhs
    result = a + other  # type: ignore[operator]
    assert str(result.dtype) == expected
    assert result.a.dtype == result.b.dtype  # type: ignore[attr-defined]
    if isinstance(rhs, str):
        assert str(binary_dtype(as_dtype(lhs), as_dtype(rhs))) == expected


def test_promotion_rules_documented() -> None:
    assert len(PROMOTION_RULES) >= 8
    assert all(isinstance(r, tuple) and len(r) == 2 for r in PROMOTION_RULES)


def test_promotion_inserts_casts_and_broadcasts() -> None:
    i, x = Var("i", "int32"), Var("x", "float32")
    node = i * x
    assert isinstance(node.a, ir.Cast) and node.a.dtype == f32
    v = Var("v", "float32x4")
    node = v + x
    assert isinstance(node.b, ir.Broadcast) and node.b.lanes == 4


def test_integer_constant_folding() -> None:
    assert isinstance(const(3) + 4, IntImm) and (const(3) + 4).value == 7  # type: ignore[attr-defined]
    assert (const(7) // -2).value == -4  # type: ignore[attr-defined]
    assert (const(7) % -2).value == -1  # type: ignore[attr-defined]
    assert (ir.const(-7) / 2).value == -3  # type: ignore[attr-defined]
    assert (const(127, "int8") + 1).value == -128  # type: ignore[attr-defined]
    assert (const(3) < 4).dtype == b and (const(3) < 4).value == 1  # type: ignore[attr-defined]
    # division by zero is left for run time
    assert isinstance(const(1) // 0, ir.FloorDiv)


def test_bool_of_symbolic_raises() -> None:
    i = Var("i")
    with pytest.raises(TypeError, match="symbolic expression as a Python bool"):
        bool(i < 3)
    with pytest.raises(TypeError, match="symbolic expression"):
        if i == 1:
            pass
    assert bool(const(3) > 2) is True


def test_constants() -> None:
    assert const(True).dtype == b
    assert const(2**40).dtype == i64
    assert const(1.5).dtype == f32
    assert const(1, "float64").value == 1.0  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="does not fit"):
        IntImm(u8, 256)
    with pytest.raises(TypeError):
        const(1.5, "int32")


def test_node_type_checks() -> None:
    i, x = Var("i"), Var("x", "float32")
    with pytest.raises(TypeError, match="different types"):
        ir.Add(i, x)
    with pytest.raises(TypeError, match="bool"):
        ir.Select(i, x, x)
    with pytest.raises(TypeError, match="lanes"):
        ir.Cast(as_dtype("float32x4"), i)
    with pytest.raises(ValueError):
        ir.Shuffle((Var("v", "float32x4"),), (0, 7))
    r = ir.Ramp(i, const(1), 8)
    assert r.dtype == as_dtype("int32x8")
    assert ir.Broadcast(x, 4).dtype == as_dtype("float32x4")
    sh = ir.Shuffle((Var("v", "float32x4"), Var("w", "float32x4")), (0, 5, 7))
    assert sh.dtype == as_dtype("float32x3")


def test_nodes_are_immutable_and_identity_hashed() -> None:
    i = Var("i")
    with pytest.raises(AttributeError):
        i.name = "j"  # type: ignore[misc]
    i.set_name_hint("j")
    assert i.name == "j"
    d = {i: 1}
    assert d[i] == 1
    assert hash(Var("i")) != hash(i) or Var("i") is not i


@pytest.mark.parametrize(
    "kind,dtype,expected",
    [
        (ir.ReduceKind.SUM, "float32", 0.0),
        (ir.ReduceKind.PROD, "float32", 1.0),
        (ir.ReduceKind.MAX, "float32", float("-inf")),
        (ir.ReduceKind.MIN, "float32", float("inf")),
        (ir.ReduceKind.SUM, "int32", 0),
        (ir.ReduceKind.PROD, "int32", 1),
        (ir.ReduceKind.MAX, "int32", -(2**31)),
        (ir.ReduceKind.MIN, "int32", 2**31 - 1),
        (ir.ReduceKind.ALL, "bool", 1),
        (ir.ReduceKind.ANY, "bool", 0),
    ],
)
def test_reduce_init_follows_kind_and_dtype(
    kind: ir.ReduceKind, dtype: str, expected: float
) -> None:
    k = ir.IterVar(Var("k"), ir.Range(const(0), const(8)), ir.IterKind.REDUCE)
    red = ir.Reduce(kind, Var("x", dtype), (k,))
    assert red.dtype == as_dtype(dtype)
    assert red.init.value == expected  # type: ignore[attr-defined]
