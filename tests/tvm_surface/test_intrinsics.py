"""The intrinsic table drives T.<name>, the printer, the interpreter and the code generator:
every scripted intrinsic parses, prints back, re-parses equal and builds to the interpreter's
numbers; the T namespace holds every intrinsic and type constructor of TVM v0.16."""

from __future__ import annotations

import numpy as np
import pytest
from surface_kit import round_trip, run_both

from irbuilder.ir import INTRINSICS, Call, CallKind, Lowering, Operands, Result, StringImm
from tvmscript import tir as T

_POSITIVE = (0.1, 3.0)
_DOMAIN = {"acosh": (1.1, 3.0), "log": _POSITIVE, "log2": _POSITIVE, "log10": _POSITIVE,
           "sqrt": _POSITIVE, "rsqrt": _POSITIVE}
_FLOAT_UNARY = sorted(
    s.name
    for s in INTRINSICS.values()
    if s.script and s.arity == 1 and s.operands in (Operands.FLOAT, Operands.ROUNDING)
)
_FLOAT_BINARY = sorted(
    s.name for s in INTRINSICS.values() if s.script and s.arity == 2 and s.operands is Operands.FLOAT
)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", _FLOAT_UNARY)
def test_float_unary_intrinsic_round_trips_and_builds(name: str, dtype: str) -> None:
    func = round_trip(f"""
        @T.prim_func
        def f(A: T.Buffer((16,), "{dtype}"), B: T.Buffer((16,), "{dtype}")):
            for i in range(16):
                B[i] = T.{name}(A[i])
        """)
    lo, hi = _DOMAIN.get(name, (-0.9, 0.9))
    a = np.linspace(lo, hi, 16).astype(dtype)
    _, b, _ = run_both(func, a, np.zeros(16, dtype))
    assert np.isfinite(b).all()


@pytest.mark.parametrize("name", _FLOAT_BINARY)
def test_float_binary_intrinsic_round_trips_and_builds(name: str) -> None:
    func = round_trip(f"""
        @T.prim_func
        def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
            for i in range(16):
                B[i] = T.{name}(A[i], A[15 - i] + T.float32(2))
        """)
    run_both(func, np.linspace(0.1, 3.0, 16).astype("float32"), np.zeros(16, "float32"))


def test_classification_and_integer_intrinsics_build() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "int32"), D: T.Buffer((8,), "int32")):
            for i in range(8):
                D[i] = (T.popcount(C[i]) + T.clz(C[i]) * 100 + T.Cast("int32", T.isfinite(A[i]))
                        + T.ceildiv(C[i], 7) * 1000)
        """)
    a = np.array([0, 1, np.inf, -np.inf, np.nan, 2, 3, 4], "float32")
    c = np.array([0, 1, -1, 255, 1 << 30, -(1 << 31), 12345, 7], "int32")
    _, _, d, _ = run_both(func, a, c, np.zeros(8, "int32"))
    want = []
    for x, v in zip(a, c):
        bits = int(v) & 0xFFFFFFFF
        total = bits.bit_count() + (32 - bits.bit_length()) * 100 + int(np.isfinite(x))
        total += -(-int(v) // 7) * 1000  # ceildiv
        want.append((total + 2**31) % 2**32 - 2**31)
    assert d.tolist() == want


def test_q_multiply_shift_follows_tvm_legalisation() -> None:
    func = round_trip("""
        @T.prim_func
        def f(C: T.Buffer((6,), "int32"), D: T.Buffer((6,), "int32"), s: T.int32):
            for i in range(6):
                D[i] = T.q_multiply_shift(C[i], 1 << 30, 31, s)
        """)
    c = np.array([0, 1000, -1000, 12345, 1 << 20, -(1 << 20)], "int32")
    for shift in (-2, 0, 3):
        _, d, _, _ = run_both(func, c, np.zeros(6, "int32"), shift)
        # (x << max(s, 0)) * 2**30, rounded, shifted right by 31 + max(-s, 0): x * 2**(s-1).
        left, right = max(shift, 0), 31 + max(-shift, 0)
        want = [((int(x) << left) * (1 << 30) + (1 << (right - 1))) >> right for x in c]
        assert d.tolist() == want


def test_intrinsics_accept_and_ignore_dtype_keyword() -> None:
    x = T.float32()
    call = T.exp(x, dtype="float32")
    assert isinstance(call, Call) and call.op == "exp" and call.dtype == x.dtype
    assert isinstance(T.likely(x > 0, dtype="bool"), Call)
    shifted = T.shift_left(T.int32(), 2, dtype="int32")
    assert isinstance(shifted, Call) and shifted.op == "shift_left"
    n = T.int32()
    for name in ("floordiv", "floormod", "truncdiv", "truncmod", "ceildiv"):
        with_kw, plain = getattr(T, name)(n, 3, dtype="int32"), getattr(T, name)(n, 3)
        assert type(with_kw) is type(plain) and with_kw.dtype == plain.dtype


def test_every_table_entry_has_an_evaluation_and_a_lowering() -> None:
    for spec in INTRINSICS.values():
        has_impl = spec.float_impl is not None or spec.int_impl is not None
        expanded = spec.lowering is Lowering.EXPANDED
        assert has_impl or expanded, spec.name
        assert spec.symbol or expanded, spec.name
        if spec.script:
            doc = getattr(T, spec.name).__doc__ or ""
            assert doc.startswith(spec.doc + "\n") and "Parameters" in doc, spec.name
        if spec.result is Result.BOOL:
            assert spec.operands is Operands.CLASSIFY


def test_unscripted_entries_print_as_call_intrin() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                B[i] = T.call_intrin("float32", "cbrt", A[i]) + T.call_intrin("float32", "tir.expm1", A[i])
        """)
    assert 'T.call_intrin("float32", "cbrt"' in func.script()
    run_both(func, np.array([1, 8, 27, 0.5], "float32"), np.zeros(4, "float32"))


# TVM v0.16, python/tvm/script/ir_builder/tir/ir.py __all__: its intrinsics, type constructors
# and builder functions (the vector type objects are checked by pattern below; float8 types
# are spelled e4m3_float8/e5m2_float8 in v0.16).
TVM_V016_NAMES = """
buffer buffer_decl prim_func arg func_name func_attr func_ret match_buffer block init where
reads writes block_attr alloc_buffer axis serial parallel vectorized unroll thread_binding grid
Assert realize allocate allocate_const attr While If Then Else decl_buffer launch_thread
env_thread buffer_store prefetch evaluate boolean handle void var ptr min max iter_var
comm_reducer index_map target buffer_var abs fabs acos acosh address_of asin asinh atan atan2
atanh bitwise_and bitwise_not bitwise_or bitwise_xor ceil clz copysign cos cosh erf exp exp2
exp10 floor ceildiv floordiv floormod fmod hypot if_then_else infinity isfinite isinf isnan
isnullptr ldexp likely log log1p log2 log10 lookup_param max_value min_value nearbyint nextafter
popcount pow q_multiply_shift q_multiply_shift_per_axis ret reinterpret round rsqrt shift_left
shift_right sigmoid sin sinh sqrt tan tanh trunc truncdiv truncmod tvm_access_ptr
tvm_throw_last_error tvm_stack_alloca tvm_stack_make_shape tvm_stack_make_array
tvm_check_return call_packed call_cpacked call_packed_lowered call_cpacked_lowered call_extern
call_intrin call_llvm_intrin call_llvm_pure_intrin call_pure_extern tvm_tuple tvm_struct_set
tvm_struct_get tvm_thread_invariant tvm_thread_allreduce tvm_load_matrix_sync tvm_mma_sync
tvm_bmma_sync tvm_fill_fragment tvm_store_matrix_sync tvm_storage_sync tvm_warp_shuffle
tvm_warp_shuffle_up tvm_warp_shuffle_down tvm_warp_activemask ptx_mma ptx_mma_sp ptx_ldmatrix
ptx_cp_async ptx_cp_async_bulk ptx_wait_group ptx_commit_group ptx_cp_async_barrier
ptx_init_barrier_thread_count ptx_arrive_barrier ptx_arrive_barrier_expect_tx ptx_wait_barrier
create_barriers mma_store mma_fill vectorlow vectorhigh vectorcombine dp4a assume undef
tvm_call_packed tvm_call_cpacked tvm_call_packed_lowered tvm_call_cpacked_lowered
TVMBackendAllocWorkspace TVMBackendFreeWorkspace start_profile_intrinsic end_profile_intrinsic
meta_var anylist_getitem anylist_resetitem anylist_setitem_call_packed
anylist_setitem_call_cpacked type_annotation broadcast ramp cast vscale llvm_lookup_intrinsic_id
Var SizeVar Reduce FloatImm IntImm StringImm Cast Add Sub Mul Div Mod FloorDiv FloorMod Min Max
EQ NE LT LE GT GE And Or Not Select BufferLoad Ramp Broadcast Shuffle Let LetStmt Range
int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 bool
bfloat16 e4m3_float8 e5m2_float8 e4m3_float8x4 e5m2_float8x8 bfloat16x4
""".split()

# Known absences, each with its reason (documented in docs/tvm-compat.md): none left.
MISSING_ON_PURPOSE: dict[str, str] = {}


def test_namespace_covers_tvm_v016() -> None:
    missing = sorted(n for n in TVM_V016_NAMES if not hasattr(T, n))
    assert missing == sorted(MISSING_ON_PURPOSE), missing
    for base in ("int8", "int32", "uint16", "float16", "float32", "float64"):
        for lanes in (4, 8, 16, 32, 64):
            assert hasattr(T, f"{base}x{lanes}"), f"{base}x{lanes}"


def test_index_map_and_llvm_intrinsic_names() -> None:
    mapping = T.index_map(lambda i, j: (j, i * 4))
    i, j = T.int32(), T.int32()
    swapped = mapping.map_indices([i, j])
    assert swapped[0] is j and str(swapped[1].dtype) == "int32"
    ident = T.llvm_lookup_intrinsic_id("llvm.sqrt")
    assert isinstance(ident, StringImm) and ident.value == "llvm.sqrt"
    with pytest.raises(ValueError, match="llvm"):
        T.llvm_lookup_intrinsic_id("sqrt")


def test_runtime_builtins_build_as_calls() -> None:
    x = T.int32()
    call = T.tvm_struct_get(T.handle(), 0, 1, "int32")
    assert isinstance(call, Call) and call.kind is CallKind.BUILTIN and str(call.dtype) == "int32"
    mma = T.ptx_mma("float32", "m16n8k16", "row", "col", x)
    assert isinstance(mma, Call) and str(mma.dtype) == "float32" and len(mma.args) == 4
    shuffled = T.tvm_warp_shuffle(T.uint32(), T.float16(), x, 32, 32)
    assert isinstance(shuffled, Call) and str(shuffled.dtype) == "float16"


@pytest.mark.parametrize("name", ["log1p", "atan", "sinh", "exp10", "asinh"])
def test_vectorized_loops_of_new_intrinsics_match_the_interpreter(name: str) -> None:
    func = round_trip(f"""
        @T.prim_func
        def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
            for i in T.vectorized(64):
                B[i] = T.{name}(A[i])
        """)
    run_both(func, np.linspace(0.05, 1.5, 64).astype("float32"), np.zeros(64, "float32"))


@pytest.mark.parametrize("name", ["atan2", "hypot", "fmod", "copysign"])
def test_vectorized_binary_intrinsics_match_the_interpreter(name: str) -> None:
    func = round_trip(f"""
        @T.prim_func
        def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
            for i in T.vectorized(64):
                B[i] = T.{name}(A[i], A[63 - i] - T.float32(0.7))
        """)
    run_both(func, np.linspace(-2, 2, 64).astype("float32"), np.zeros(64, "float32"))


def test_typed_intrinsic_functions_are_exactly_the_tables() -> None:
    # The typed T.<intrinsic> functions (what mypy checks calls against) forward to the
    # table; their names and positional arities must be the table's scripted entries.
    import inspect

    from irbuilder.ir import INTRINSICS
    from irbuilder.tir import intrin_api

    scripted = {name: spec.arity for name, spec in INTRINSICS.items() if spec.script}
    typed = {
        name: sum(p.kind is p.POSITIONAL_ONLY
                  for p in inspect.signature(getattr(intrin_api, name)).parameters.values())
        for name in intrin_api.__all__
    }
    assert typed == scripted
    assert all(getattr(T, name) is getattr(intrin_api, name) for name in scripted)
    assert (T.exp.__doc__ or "").startswith(INTRINSICS["exp"].doc + "\n")
