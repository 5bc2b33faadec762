"""Forms found failing when measuring TVM v0.16 programs (docs/tvm-compat.md,
"Measured compatibility"): each parses as TVM builds it and round-trips."""

from __future__ import annotations

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import AssertStmt, Evaluate, IntImm, LetStmt, SeqStmt
from lowering.target import Target
from tvmscript import ir as I
from tvmscript.diagnostics import DiagnosticError


def _roundtrip(src: str) -> object:
    func = tvmscript.from_source(src)
    again = tvmscript.from_source(func.script())
    assert I.structural_equal(func, again, map_free_vars=True), func.script()
    return func


def test_bare_letstmt_binds_for_the_rest_of_the_body() -> None:
    func = _roundtrip(
        """
@T.prim_func
def scale(n: T.int32, out: T.Buffer((4,), "int32")):
    k = T.int32()
    T.LetStmt(n * 3, var=k)
    out[0] = k
    out[1] = k + 1
"""
    )
    body = func.body
    assert isinstance(body, LetStmt)
    assert body.var.name == "k"
    assert isinstance(body.body, SeqStmt) and len(body.body.seq) == 2


def test_constant_assert_conditions_stay_in_the_ir() -> None:
    func = _roundtrip(
        """
@T.prim_func
def guarded(x: T.int32):
    assert T.bool(False), "unreachable"
    assert T.bool(True), "fine"
    T.evaluate(x)
"""
    )
    assert isinstance(func.body, SeqStmt)
    first, second, last = func.body.seq
    assert isinstance(first, AssertStmt) and isinstance(second, AssertStmt)
    assert isinstance(first.condition, IntImm) and first.condition.value == 0
    assert isinstance(second.condition, IntImm) and second.condition.value == 1
    assert isinstance(last, Evaluate)


def test_a_list_or_tuple_value_indexes_a_buffer() -> None:
    func = _roundtrip(
        """
@T.prim_func
def row_sums(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4, 6, 8), "int32")
    B = T.match_buffer(b, (4, 6), "int32")
    for *outer, k in T.grid(*A.shape):
        with T.block("sum"):
            with T.init():
                B[outer] = 0
            B[outer] = B[outer] + A[(*outer, k)]
"""
    )
    explicit = tvmscript.from_source(
        """
@T.prim_func
def row_sums(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4, 6, 8), "int32")
    B = T.match_buffer(b, (4, 6), "int32")
    for i, j, k in T.grid(4, 6, 8):
        with T.block("sum"):
            with T.init():
                B[i, j] = 0
            B[i, j] = B[i, j] + A[i, j, k]
"""
    )
    assert I.structural_equal(func, explicit)


def test_a_macro_of_a_text_sees_the_texts_capture_values() -> None:
    func = tvmscript.from_source(
        """
@T.macro
def copy_at(A, B):
    B[()] = A[offset]

@T.prim_func(private=True)
def pick(A: T.Buffer((64,), "int32"), B: T.Buffer((), "int32")):
    for offset in T.serial(4):
        copy_at(A, B)
""",
        capture={"offset": 17},
    )
    expected = tvmscript.from_source(
        """
@T.prim_func(private=True)
def pick(A: T.Buffer((64,), "int32"), B: T.Buffer((), "int32")):
    for offset in T.serial(4):
        B[()] = A[17]
"""
    )
    assert I.structural_equal(func, expected)


def test_t_call_with_a_tir_op_name_is_the_intrinsic_call() -> None:
    func = _roundtrip(
        """
@T.prim_func(private=True)
def check(ptr: T.handle("float32")):
    if T.isnullptr(ptr):
        T.Call("int32", "tir.tvm_throw_last_error", [])
"""
    )
    expected = tvmscript.from_source(
        """
@T.prim_func(private=True)
def check(ptr: T.handle("float32")):
    if T.isnullptr(ptr):
        T.evaluate(T.call_intrin("int32", "tir.tvm_throw_last_error"))
"""
    )
    assert I.structural_equal(func, expected)


def test_t_call_outside_the_tir_namespace_is_a_located_error() -> None:
    with pytest.raises(DiagnosticError, match="a string op must be a TIR op"):
        tvmscript.from_source(
            """
@T.prim_func(private=True)
def bad():
    T.evaluate(T.Call("int32", "my_func", []))
"""
        )


def test_store_slices_follow_tvms_buffer_store() -> None:
    func = _roundtrip(
        """
@T.prim_func
def strided(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        A[i : i + 1 : 1] = T.float32(0)
    for i in range(4):
        B[i : i + 64 : 4] = A[T.Ramp(i, 4, 16)]
"""
    )
    explicit = tvmscript.from_source(
        """
@T.prim_func
def strided(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        A[i] = T.float32(0)
    for i in range(4):
        B[T.Ramp(i, 4, 16)] = A[T.Ramp(i, 4, 16)]
"""
    )
    assert I.structural_equal(func, explicit)


def test_a_scalar_stored_into_a_wide_slice_is_a_located_error() -> None:
    with pytest.raises(DiagnosticError, match="cannot store into a region of buffer 'A'"):
        tvmscript.from_source(
            """
@T.prim_func
def wide(A: T.Buffer((64,), "float32")):
    A[0:8] = T.float32(0)
"""
        )


def test_llvm_lookup_intrinsic_id_names_the_intrinsic_it_calls() -> None:
    func = _roundtrip(
        """
@T.prim_func
def popcount(A: T.Buffer((16,), "uint8"), B: T.Buffer((16,), "uint8")):
    for i in range(16):
        B[i] = T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.ctpop.i8"), A[i], dtype="uint8"
        )
"""
    )
    a = np.arange(16, dtype="uint8") * 17
    b = np.zeros(16, "uint8")
    tvmscript.build(func, target="interp")(a, b)
    c = np.zeros(16, "uint8")
    tvmscript.build(func)(a, c)
    np.testing.assert_array_equal(b, c)
    np.testing.assert_array_equal(c, [bin(int(v)).count("1") for v in a])


def test_llvm_intrinsic_calls_take_tvm_016s_signature_count() -> None:
    # TVM v0.16 spells (intrinsic, num_signature, *operands): the uint32 count is no operand
    func = _roundtrip(
        """
@T.prim_func
def popcount(A: T.Buffer((16,), "uint8"), B: T.Buffer((16,), "uint8")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id("llvm.ctpop.i8"), T.uint32(1), A[vi], dtype="uint8"
            )
            B[vi] = B[vi] + T.Cast("uint8", T.call_llvm_pure_intrin(
                "float32", "llvm.copysign.f32", T.uint32(2), T.float32(3), T.Cast("float32", A[vi]) - 100
            ) + T.float32(3))
"""
    )
    a = np.arange(16, dtype="uint8") * 17
    # copysign(3, a - 100) + 3: 0 below 100, 6 from there
    want = [bin(int(v)).count("1") + (6 if v >= 100 else 0) for v in a]
    for target in ("interp", "llvm -mcpu=znver3"):
        if target != "interp" and Target(target).missing_on_host():
            continue
        b = np.zeros(16, "uint8")
        tvmscript.build(func, target=target)(a, b)
        np.testing.assert_array_equal(b, want)


def test_address_of_accepts_the_printed_dtype_keyword() -> None:
    func = _roundtrip(
        """
@T.prim_func
def addr(A: T.Buffer((16,), "int32")):
    p: T.handle("int32") = T.address_of(A[3], dtype="handle")
    T.evaluate(T.call_extern("int32", "use", p))
"""
    )
    plain = tvmscript.from_source(
        """
@T.prim_func
def addr(A: T.Buffer((16,), "int32")):
    p: T.handle("int32") = T.address_of(A[3])
    T.evaluate(T.call_extern("int32", "use", p))
"""
    )
    assert I.structural_equal(func, plain)


def test_ops_tvm_wraps_accept_and_drop_a_dtype_keyword() -> None:
    with_dtype = _roundtrip(
        """
@T.prim_func
def packed(A: T.Buffer((16,), "float32"), n: T.int32):
    T.evaluate(
        T.tvm_call_packed(
            "my_func",
            T.tvm_stack_make_shape(16, dtype="handle"),
            T.floordiv(n, 4, dtype="int32"),
            dtype="int32",
        )
    )
"""
    )
    without = tvmscript.from_source(
        """
@T.prim_func
def packed(A: T.Buffer((16,), "float32"), n: T.int32):
    T.evaluate(T.tvm_call_packed("my_func", T.tvm_stack_make_shape(16), T.floordiv(n, 4)))
"""
    )
    assert I.structural_equal(with_dtype, without)


def test_a_void_result_dtype_of_an_extern_call_is_a_handle() -> None:
    func = _roundtrip(
        """
@T.prim_func
def notify(A: T.Buffer((4,), "int32")):
    T.evaluate(T.call_extern("notify", A.data, dtype=""))
    T.evaluate(T.call_extern("void", "notify", A.data))
"""
    )
    first, second = func.body.seq
    assert str(first.value.dtype) == "handle" and str(second.value.dtype) == "handle"
    assert first.value.op == second.value.op == "notify"


def test_a_point_index_in_a_region_has_a_unit_extent_of_its_type() -> None:
    func = _roundtrip(
        """
@T.prim_func
def narrow(A: T.Buffer((T.int64(16), T.int64(4)), "float32")):
    for i in T.grid(T.int64(16)):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi, T.int64(0) : T.int64(1)])
            T.evaluate(0)
"""
    )
    region = func.body.block.body.body.block.reads[0].region  # below the implicit root
    assert [str(r.extent.dtype) for r in region] == ["int64", "int64"]


@pytest.mark.parametrize("symbol", ["3", '""', "None"])
def test_a_global_symbol_that_is_not_a_name_is_a_located_error(symbol: str) -> None:
    with pytest.raises(DiagnosticError, match="'global_symbol' names the function") as info:
        tvmscript.from_source(
            f"""
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    T.func_attr({{"global_symbol": {symbol}}})
    A[0] = T.float32(1)
"""
        )
    assert info.value.span is not None and info.value.span.line == 4
