"""Vector math: libmvec through VFABI, and the inline polynomial fallback, vs numpy."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from backend.abi.pyabi import runtime_prelude_ir, runtime_prelude_symbols
from backend.runtime import (
    CompiledLibrary,
    MathLowering,
    compile_ir,
    host_target,
    libmvec_available,
    libmvec_variants,
)
from lowering.target import Target

needs_libmvec = pytest.mark.skipif(not libmvec_available(), reason="glibc libmvec not available")

Array = np.ndarray[Any, Any]


def _loop_ir(math: MathLowering, name: str, ty: str) -> str:
    align = 4 if ty == "float" else 8
    return math.module_prelude() + f"""
define void @k(ptr noalias %a, ptr noalias %c, i64 %n) {{
entry:
  %pos = icmp sgt i64 %n, 0
  br i1 %pos, label %loop, label %exit
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pa = getelementptr inbounds {ty}, ptr %a, i64 %i
  %x = load {ty}, ptr %pa, align {align}
{math.call_ir("r", name, ty, "%x")}
  %pc = getelementptr inbounds {ty}, ptr %c, i64 %i
  store {ty} %r, ptr %pc, align {align}
  %i1 = add nsw i64 %i, 1
  %cond = icmp slt i64 %i1, %n
  br i1 %cond, label %loop, label %exit
exit:
  ret void
}}
"""


def _build(name: str, ty: str = "float", *, use_libmvec: bool | None = None
           ) -> tuple[CompiledLibrary, Callable[[Array], Array]]:
    math = MathLowering(use_libmvec=use_libmvec)
    _loop_ir(math, name, ty)  # first pass registers the calls; the prelude needs them
    ir = _loop_ir(math, name, ty)
    lib = compile_ir(ir, name=f"vm_{name}", cache=False)
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
        lib.address("k"))

    def run(a: Array) -> Array:
        a = np.ascontiguousarray(a)
        c = np.empty_like(a)
        fn(a.ctypes.data, c.ctypes.data, a.size)
        return c

    return lib, run


def ulp_error(got: Array, ref64: Array) -> Array:
    """|got - correctly rounded ref| in float32 ulps (monotone integer mapping)."""
    want = ref64.astype(np.float32)

    def key(v: Array) -> Array:
        i = v.view(np.int32).astype(np.int64)
        out: Array = np.where(i < 0, -(i & 0x7FFFFFFF), i)
        return out

    err: Array = np.abs(key(got.astype(np.float32)) - key(want))
    return err


def _exp_inputs() -> Array:
    rng = np.random.default_rng(1)
    return np.concatenate([
        rng.uniform(-103.0, 88.7, 200_000), rng.uniform(-1, 1, 50_000),
        np.linspace(-87.5, -85, 1000), [0.0, -0.0, 88.72, -87.33, 1e-8, -1e-8],
    ]).astype(np.float32)


def _log_inputs() -> Array:
    rng = np.random.default_rng(2)
    return np.concatenate([
        np.exp(rng.uniform(-103, 88.7, 200_000)), rng.uniform(0.5, 2.0, 50_000),
        [1.0, 2.0, 0.70710677, 1.4142135, 1e-45, 3e-39, 1.1754944e-38, 3.4e38],
    ]).astype(np.float32)


def _check(name: str, run: Callable[[Array], Array], max_ulp: int) -> int:
    a = _exp_inputs() if name == "exp" else _log_inputs()
    ref = np.exp(a.astype(np.float64)) if name == "exp" else np.log(a.astype(np.float64))
    err = ulp_error(run(a), ref)
    worst = int(err.max())
    print(f"{name}: max error {worst} ulp over {a.size} inputs")
    assert worst <= max_ulp
    # numpy's own float32 result, for the record
    np_err = int(ulp_error(np.exp(a) if name == "exp" else np.log(a), ref).max())
    print(f"{name}: numpy float32 max error {np_err} ulp")
    return worst


SPECIALS_EXP = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1000.0, -1000.0], np.float32)
SPECIALS_LOG = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, -1.0, 1.0], np.float32)


@needs_libmvec
def test_libmvec_exp_is_vectorized_and_accurate() -> None:
    lib, run = _build("exp")
    ir, asm = lib.llvm_ir, lib.asm
    if host_target().has_avx2:
        assert re.search(r"call <8 x float> @_ZGVdN8v_expf", ir), "AVX2 variant not used"
        assert "_ZGVdN8v_expf" in asm
    assert re.search(r"call <\d+ x float> @_ZGV[bde]N\d+v_expf", ir)
    _check("exp", run, 4)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(run(SPECIALS_EXP), np.exp(SPECIALS_EXP))


@needs_libmvec
def test_libmvec_variants_detected() -> None:
    avx2 = Target("llvm -mcpu=znver3").features
    avx512 = Target("llvm -mcpu=znver4").features
    variants = libmvec_variants("exp", "float", avx2)
    assert ("_ZGVbN4v_expf", "b", 4) in variants
    assert ("_ZGVdN8v_expf", "d", 8) in variants
    assert not [v for v in variants if v[1] == "e"]  # the target, not the host, decides
    assert ("_ZGVeN16v_expf", "e", 16) in libmvec_variants("exp", "float", avx512)
    assert libmvec_variants("exp", "float", Target("llvm -mcpu=x86-64").features) == [
        ("_ZGVbN4v_expf", "b", 4)
    ]
    assert libmvec_variants("pow", "double", avx2)[0][0] == "_ZGVbN2vv_pow"


@needs_libmvec
@pytest.mark.parametrize("name,np_fn", [("log", np.log), ("sin", np.sin), ("tanh", np.tanh),
                                        ("log1p", np.log1p), ("atan", np.arctan)])
def test_libmvec_other_functions(name: str, np_fn: Callable[[Array], Array]) -> None:
    lib, run = _build(name)
    assert re.search(rf"call <\d+ x float> @_ZGV[bde]N\d+v_{name}f", lib.llvm_ir)
    a = np.random.default_rng(3).uniform(0.01, 10, 100_000).astype(np.float32)
    err = ulp_error(run(a), np_fn(a.astype(np.float64)))
    print(f"{name}: max error {int(err.max())} ulp")
    assert err.max() <= 4


@needs_libmvec
def test_libmvec_double_exp() -> None:
    lib, run = _build("exp", "double")
    assert re.search(r"call <\d+ x double> @_ZGV[bde]N\d+v_exp\(", lib.llvm_ir)
    a = np.linspace(-700, 700, 10_001)
    np.testing.assert_array_max_ulp(run(a), np.exp(a), maxulp=4)


def test_polynomial_exp_fallback_accuracy() -> None:
    lib, run = _build("exp", use_libmvec=False)
    assert "_ZGV" not in lib.llvm_ir and "expf" not in lib.llvm_ir
    assert re.search(r"<\d+ x float>", lib.llvm_ir), "polynomial exp did not vectorize"
    _check("exp", run, 2)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(run(SPECIALS_EXP), np.exp(SPECIALS_EXP))
    # subnormal results are produced (not flushed to zero)
    tiny = run(np.array([-100.0, -103.0], np.float32))
    assert (tiny > 0).all()


def test_polynomial_log_fallback_accuracy() -> None:
    lib, run = _build("log", use_libmvec=False)
    assert "logf" not in lib.llvm_ir
    assert re.search(r"<\d+ x float>", lib.llvm_ir)
    _check("log", run, 2)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(run(SPECIALS_LOG), np.log(SPECIALS_LOG))


@pytest.mark.parametrize("use_libmvec", [None, False])
def test_sigmoid(use_libmvec: bool | None) -> None:
    _, run = _build("sigmoid", use_libmvec=use_libmvec)
    a = np.linspace(-100, 100, 20_001).astype(np.float32)
    ref = 1.0 / (1.0 + np.exp(-a.astype(np.float64)))
    np.testing.assert_allclose(run(a), ref, rtol=3e-7, atol=1e-38)


def test_scalar_libm_fallback_for_other_functions() -> None:
    lib, run = _build("tanh", use_libmvec=False)
    assert "_ZGV" not in lib.llvm_ir
    a = np.linspace(-5, 5, 1001).astype(np.float32)
    np.testing.assert_allclose(run(a), np.tanh(a), rtol=2e-7, atol=1e-7)


def test_intrinsics_and_errors() -> None:
    math = MathLowering()
    assert math.call("sqrt", "float") == "llvm.sqrt.f32"
    assert math.call("fabs", "double") == "llvm.fabs.f64"
    assert math.call("pow", "double") == "tvms_pow"
    assert "declare double @tvms_pow(double, double)" in math.module_prelude()
    with pytest.raises(ValueError, match="unknown math function"):
        math.call("frobnicate", "float")
    with pytest.raises(ValueError, match="'float' or 'double'"):
        math.call("exp", "half")


def test_preludes_compose_with_codegen_declarations() -> None:
    """Runtime prelude + math prelude + the code generator's own intrinsic declarations."""
    math = MathLowering()
    fma = math.call("fma", "float")
    exp = math.call("exp", "float")
    fabs = math.call("fabs", "double")
    assert not (math.declared_symbols() & runtime_prelude_symbols())
    own = "declare float @llvm.fma.f32(float, float, float)\n"  # emitted by the codegen too
    ir = runtime_prelude_ir() + math.module_prelude(skip_declarations=[fma]) + own + f"""
define float @f(float %x, double %y) {{
  %e = call float @{exp}(float %x)
  %a = call double @{fabs}(double %y)
  %t = fptrunc double %a to float
  %r = call float @{fma}(float %e, float %t, float 1.0)
  ret float %r
}}
"""
    lib = compile_ir(ir, cache=False)
    f = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float, ctypes.c_double)(lib.address("f"))
    assert f(0.0, -2.0) == 3.0
