"""TVM's runtime/device constructs parse, print and compare; the CPU build refuses those
without CPU meaning naming the construct at the statement's location, and builds the others
(profiling markers, undef, LLVM intrinsic calls, targets as attribute values)."""

from __future__ import annotations

import numpy as np
import pytest
from surface_kit import HEADER, round_trip, run_both

from irbuilder.ir import Target
from lowering.cpu.support import UnsupportedConstructError
from tvmscript import build, from_source
from tvmscript import tir as T

_REFUSED = {
    "T.launch_thread (thread_extent)": """
        tx = T.launch_thread("threadIdx.x", 8)
        A[tx] = T.float32(1)""",
    "T.tvm_storage_sync": """
        for i in range(8):
            T.evaluate(T.tvm_storage_sync("shared"))""",
    "T.call_packed": """
        T.evaluate(T.call_packed("f", A.data))""",
    "T.tvm_struct_get": """
        for i in range(8):
            A[i] = T.Cast("float32", T.tvm_struct_get(A.data, 0, 1, "int32"))""",
    "T.vscale": """
        for i in range(8):
            A[i] = T.Cast("float32", T.vscale() * 4)""",
    "T.realize": """
        with T.realize(A[0:8], "global"):
            A[0] = T.float32(1)""",
    "T.ptx_commit_group": """
        T.evaluate(T.ptx_commit_group())""",
}


@pytest.mark.parametrize("target", ["llvm", "interp"])
@pytest.mark.parametrize("construct", sorted(_REFUSED))
def test_cpu_build_refuses_device_constructs_at_their_line(construct: str, target: str) -> None:
    body = _REFUSED[construct]
    source = '@T.prim_func\ndef f(A: T.Buffer((8,), "float32")):' + body.replace(
        "\n        ", "\n    "
    )
    func = round_trip(source)
    with pytest.raises(UnsupportedConstructError) as info:
        build(func, target=target)
    message = str(info.value)
    assert f"{construct} is not supported by the CPU backend" in message
    first_line = 3 + 2  # header (2 lines) + decorator + def + first body line
    assert f":{first_line}:" in message or f":{first_line + 1}:" in message


def test_profiling_markers_undef_and_llvm_intrinsics_build() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            T.evaluate(T.start_profile_intrinsic(3))
            for i in range(8):
                B[i] = T.call_llvm_pure_intrin("float32", "llvm.sqrt", A[i]) + T.call_llvm_intrin(
                    "float32", "llvm.fabs.f32", A[i]) + T.Cast("float32", T.undef() * 0)
            T.evaluate(T.end_profile_intrinsic(3))
        """)
    a = np.linspace(0, 4, 8).astype("float32")
    _, b, _ = run_both(func, a, np.zeros(8, "float32"))
    np.testing.assert_allclose(b, np.sqrt(a) + a, rtol=1e-6)


def test_target_is_an_attribute_value_printed_back() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            T.func_attr({"target": T.target({"kind": "llvm", "mcpu": "skylake", "keys": ["cpu"]},
                                            host="llvm"), "tir.noalias": True})
            for i in range(4):
                A[i] = T.float32(1)
        """)
    target = func.attrs["target"]
    assert isinstance(target, Target) and target.kind == "llvm"
    assert target.host == Target.make("llvm")
    assert 'T.target({"kind": "llvm", "mcpu": "skylake", "keys": ["cpu"]}, host=T.target("llvm"))' in func.script()
    a = np.zeros(4, "float32")
    build(func)(a)
    assert (a == 1).all()
    with pytest.raises(ValueError, match="kind"):
        T.target({"mcpu": "x"})


def test_call_forms_with_dtype_keyword() -> None:
    x = T.float32()
    first = T.call_extern("float32", "sinf", x)
    keyword = T.call_extern("sinf", x, dtype="float32")
    assert first.op == keyword.op == "sinf" and first.dtype == keyword.dtype  # type: ignore[attr-defined]
    pure = T.call_pure_extern("cosf", x, dtype="float32")
    assert pure.op == "cosf"  # type: ignore[attr-defined]
    intrin = T.call_intrin("tir.exp", x, dtype="float32")
    assert intrin.op == "exp"  # type: ignore[attr-defined]
    bits = T.reinterpret(x, dtype="int32")
    assert str(bits.dtype) == "int32"
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
            for i in range(4):
                B[i] = T.reinterpret(A[i], dtype="int32") + T.shift_left(1, 2, dtype="int32")
                A[i] = T.call_pure_extern("sqrtf", A[i], dtype="float32")
        """)
    a = np.array([1, 4, 9, 16], "float32")
    run_both(func, a, np.zeros(4, "int32"))


def test_void_pointer_and_small_constructors() -> None:
    func = from_source(HEADER + '@T.prim_func\ndef f(p: T.handle("void"), n: T.boolean):\n'
                       "    T.evaluate(0)\n")
    assert func.params[0].type_annotation is None and func.params[1].dtype.is_bool
    v = T.var("int64")
    assert str(v.dtype) == "int64"
    pointer = T.ptr("float32", "shared")
    assert pointer.type_annotation is not None and pointer.type_annotation.scope == "shared"
    assert T.ramp(0, 1, 4).lanes == 4 and T.broadcast(T.float32(1), 8).lanes == 8  # type: ignore[attr-defined]
    assert str(T.infinity("float32")) != "" and T.infinity("float64").value == float("inf")  # type: ignore[attr-defined]


def test_prefetch_is_a_hint_built_on_cpu() -> None:
    func = round_trip("""
        @T.prim_func
        def f(A: T.Buffer((8, 8), "float32")):
            for i in range(8):
                T.prefetch(A, [T.Range(i, i + 1), T.Range(0, 8)])
                A[i, 0] = A[i, 1] + T.float32(1)
        """)
    assert "T.prefetch(A, [T.Range(i, i + 1), T.Range(0, 8)])" in func.script()
    a = np.arange(64, dtype="float32").reshape(8, 8)
    out = run_both(func, a)[0]
    assert (out[:, 0] == a[:, 1] + 1).all()


def test_launch_thread_keeps_an_int64_extent() -> None:
    # TVM: a thread launched by tag takes the extent's type; an env_thread var keeps its own.
    func = round_trip("""
        @T.prim_func
        def f():
            bx = T.launch_thread("blockIdx.x", T.int64(3))
            tx = T.env_thread("threadIdx.x")
            with T.launch_thread(tx, T.int64(2)):
                T.evaluate(bx + T.Cast("int64", tx))
        """)
    outer = func.body
    launched = outer.node  # type: ignore[attr-defined]
    assert str(launched.var.dtype) == "int64" and launched.thread_tag == "blockIdx.x"
    assert [str(e.dtype) for e in (launched.dom.min, launched.dom.extent, outer.value)] == [  # type: ignore[attr-defined]
        "int64"
    ] * 3
    assert launched.dom.min.value == 0 and launched.dom.extent.value == 3
    inner = outer.body.node  # type: ignore[attr-defined]
    assert str(inner.var.dtype) == "int32" and str(inner.dom.extent.dtype) == "int32"
    assert inner.dom.extent.value == 2
