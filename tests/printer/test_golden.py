"""Golden text of whole functions and modules."""

from __future__ import annotations

from textwrap import dedent

import pytest

from tvmscript.printer import script

from .corpus import CORPUS, MODULES

HEADER = "# from tvmscript import tir as T\n\n"

GOLDEN = {
    "elemwise": """
        @T.prim_func
        def elemwise(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
            for i, j in T.grid(16, 16):
                C[i, j] = A[i, j] * T.float32(2) + T.float32(1)
        """,
    "matmul": """
        @T.prim_func
        def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
            for i, j, k in T.grid(16, 16, 16):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        """,  # noqa: E501
    "alloc_alias": """
        @T.prim_func
        def alloc_alias(A: T.Buffer((16, 16), "float32")):
            B = T.decl_buffer((16, 16), "float32")
            B_flat = T.decl_buffer((256,), "float32", data=B.data)
            for i in range(256):
                B_flat[i] = T.float32(1)
            A[0, 0] = B[0, 0]
        """,
    "allocate_explicit": """
        @T.prim_func
        def allocate_explicit(A: T.Buffer((8,), "float32")):
            T_data = T.allocate([9], "float32", "global")
            tmp = T.decl_buffer((2, 4), "float32", data=T_data)
            for i in range(8):
                tmp[i // 4, i % 4] = A[i]
            for i in range(8):
                A[i] = tmp[i // 4, i % 4]
        """,
    "flattened": """
        @T.prim_func
        def flattened(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
            A_flat = T.decl_buffer((256,), "float32", data=A.data)
            C_flat = T.decl_buffer((256,), "float32", data=C.data)
            for i, j in T.grid(16, 16):
                C_flat[i * 16 + j] = A_flat[i * 16 + j]
        """,
    "symbolic_shape": """
        @T.prim_func
        def symbolic_shape(a: T.handle, b: T.handle):
            n = T.int32()
            A = T.match_buffer(a, (n,), "float32")
            B = T.match_buffer(b, (n,), "float32")
            for i in range(n):
                B[i] = A[i]
        """,
    "scalar_param_shape": """
        @T.prim_func
        def scalar_param_shape(n: T.int32, A: T.Buffer((n, 4), "float32")):
            for i, j in T.grid(n, 4):
                A[i, j] = T.Cast("float32", i + j)
        """,
    "strided_param": """
        @T.prim_func
        def strided_param(a: T.handle):
            s = T.int32()
            A = T.match_buffer(a, (4, 4), "float32", strides=(s, 1), elem_offset=2)
            for i in range(4):
                A[i, i] = T.float32(0)
        """,
    "ret_type_and_attrs": """
        @T.prim_func
        def ret_type_and_attrs(A: T.Buffer((4,), "float32")) -> T.int32:
            T.func_attr({"tir.noalias": True, "note": "x"})
            T.evaluate(0)
        """,
    "block_alloc_match_attr": """
        @T.prim_func
        def block_alloc_match_attr(A: T.Buffer((8, 8), "float32")):
            for i in range(2):
                with T.block("blk"):
                    vi = T.axis.spatial(2, i)
                    T.reads(A[vi * 4:vi * 4 + 4, 0:8])
                    T.writes(A[vi * 4:vi * 4 + 4, 0:8])
                    T.block_attr({"meta_schedule.tiling": "SSR", "level": T.int32(2)})
                    tmp = T.alloc_buffer((4,), "float32", scope="local")
                    sub = T.match_buffer(A[vi * 4:vi * 4 + 4, 0:8], (4, 8), "float32")
                    tmp[0] = sub[0, 0]
                    sub[1, 1] = tmp[0]
        """,
    "lowered_entry": """
        @T.prim_func
        def lowered_entry(a: T.handle):
            assert T.array_ndim(a) == 1, "ValueError: a: expected 1 dimension"
            assert T.array_dtype_is(a, "float32"), "TypeError: a: expected float32"
            A_data: T.handle("float32", "global") = T.array_data(a)
            n: T.int64 = T.array_shape(a, 0)
            A_flat = T.decl_buffer((n,), "float32", data=A_data)
            for i in range(n):
                A_flat[i] = T.float32(0)
        """,
    "let_expr": """
        @T.prim_func
        def let_expr(A: T.Buffer((4,), "float32")):
            x = T.int32()
            for i in range(4):
                A[i] = T.Let(T.Cast("float32", x * x), where={x: i * 2})
        """,
    "reduce_sum": """
        @T.prim_func
        def reduce_sum(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
            k = T.int32()
            for i in range(4):
                B[i] = T.reduce("sum", A[i, k], axis=[T.iter_var(k, T.Range(0, 8), "CommReduce", "")])
        """,  # noqa: E501
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_function(name: str) -> None:
    assert script(CORPUS[name]()) == HEADER + dedent(GOLDEN[name]).lstrip("\n")


def test_golden_module() -> None:
    expected = dedent("""
        # from tvmscript import ir as I
        # from tvmscript import tir as T

        @I.ir_module
        class Module:
            I.module_attrs({"target": "llvm"})

            @T.prim_func
            def main(A: T.Buffer((64,), "float32")):
                T.func_attr({"global_symbol": "loop_parallel"})
                for i in T.parallel(64):
                    A[i] = T.float32(0)
        """).lstrip("\n")
    assert script(MODULES["module_attrs"]()) == expected


def test_module_methods_are_separated_and_named_by_key() -> None:
    text = script(MODULES["two_funcs"]())
    assert "class Module:\n    @T.prim_func\n    def elemwise(" in text
    assert "\n\n    @T.prim_func\n    def matmul(" in text
    assert "func_attr" not in text  # global_symbol equals the key


def test_script_and_show_methods(capsys: pytest.CaptureFixture[str]) -> None:
    func = CORPUS["elemwise"]()
    assert func.script() == script(func)
    func.show()
    assert capsys.readouterr().out == script(func) + "\n"
    mod = MODULES["two_funcs"]()
    assert mod.script().startswith("# from tvmscript import ir as I\n")
