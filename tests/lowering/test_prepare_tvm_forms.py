"""TVM forms the CPU preparation rewrites before lowering, as TVM's own lowering does:
``T.Select`` guarding a load becomes ``if_then_else`` (TVM's RewriteUnsafeSelect), and a
variable bound again inside its own binding gets a fresh variable (TVM's ConvertSSA). Each
is run compiled (pinned target) and by the interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tvmscript
from irbuilder.ir import Call, LetStmt, PrimFunc, Select
from irbuilder.ir.functor import post_order_visit
from lowering.cpu.prepare import prepare_for_cpu
from lowering.target import Target

AVX2 = Target("llvm -mcpu=znver3")
runs_avx2 = pytest.mark.skipif(
    bool(AVX2.missing_on_host()),
    reason=f"the host lacks {', '.join(AVX2.missing_on_host())} (target znver3)",
)
TARGETS = [pytest.param(AVX2, id="znver3", marks=runs_avx2), pytest.param("interp", id="interp")]

SHIFT = """
from tvmscript import tir as T

@T.prim_func
def shift(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    for j in range(100):
        B[j] = T.Select(j > 0, A[j - 1], T.float32(-1))
"""

FAR_GUARD = """
from tvmscript import tir as T

@T.prim_func
def far(A: T.Buffer((100,), "float32"), C: T.Buffer((100,), "float32"),
        B: T.Buffer((100,), "float32")):
    for j in range(100):
        B[j] = T.Select(A[j] > T.float32(1000), C[j * 10000000], T.float32(1))
"""

ARGMIN = """
from tvmscript import tir as T

@T.prim_func
def argmin(A: T.Buffer((8, 16), "float32"), I: T.Buffer((8,), "int32")):
    for i in range(8):
        best = T.alloc_buffer((1,), "float32")
        idx = T.alloc_buffer((1,), "int32")
        best[0] = A[i, 0]
        idx[0] = 0
        for j in range(16):
            idx[0] = T.Select(A[i, j] < best[0], j, idx[0])
            best[0] = T.Select(A[i, j] < best[0], A[i, j], best[0])
        I[i] = idx[0]
"""


def _selects_and_guards(func: PrimFunc) -> tuple[int, int]:
    found = {"select": 0, "if_then_else": 0}

    def visit(node: object) -> None:
        if isinstance(node, Select):
            found["select"] += 1
        elif isinstance(node, Call) and node.op == "if_then_else":
            found["if_then_else"] += 1

    post_order_visit(func.body, visit)
    return found["select"], found["if_then_else"]


@pytest.mark.parametrize("target", TARGETS)
def test_select_guarding_a_load_reads_only_the_chosen_value(target: object) -> None:
    func = tvmscript.from_source(SHIFT)
    a = np.arange(1, 101, dtype="float32")
    b = np.zeros(100, "float32")
    tvmscript.build(func, target=target)(a, b)
    np.testing.assert_array_equal(b, np.concatenate([[-1.0], a[:-1]]).astype("float32"))


def test_unsafe_selects_become_guards_and_safe_ones_stay() -> None:
    shift = prepare_for_cpu(tvmscript.from_source(SHIFT))
    assert _selects_and_guards(shift) == (0, 1)  # A[j - 1] reads A[-1] at j = 0
    far = prepare_for_cpu(tvmscript.from_source(FAR_GUARD))
    assert _selects_and_guards(far) == (0, 1)
    argmin = prepare_for_cpu(tvmscript.from_source(ARGMIN))
    assert _selects_and_guards(argmin) == (2, 0)  # every load inside its buffer


def test_select_with_an_extern_call_becomes_a_guard() -> None:
    from tvmscript import tir as T

    @T.prim_func
    def calls(A: T.Buffer((4,), "int32")) -> None:
        for i in range(4):
            A[i] = T.Select(i > 1, T.call_extern("int32", "abs", i), 0)

    assert _selects_and_guards(prepare_for_cpu(calls)) == (0, 1)


@pytest.mark.parametrize("target", TARGETS)
def test_argmin_with_selects_is_exact(target: object) -> None:
    func = tvmscript.from_source(ARGMIN)
    a = np.random.default_rng(3).standard_normal((8, 16)).astype("float32")
    out = np.zeros(8, "int32")
    tvmscript.build(func, target=target)(a, out)
    np.testing.assert_array_equal(out, a.argmin(axis=1))


@runs_avx2
def test_far_out_of_bounds_guarded_load_does_not_crash() -> None:
    # In a child process: before the rewrite the compiled load faulted (SIGSEGV).
    code = textwrap.dedent(f"""
        import numpy as np, tvmscript
        f = tvmscript.from_source({FAR_GUARD!r})
        a = np.arange(100, dtype="float32"); b = np.zeros(100, "float32")
        tvmscript.build(f, target="llvm -mcpu=znver3")(a, np.zeros(100, "float32"), b)
        print(b.sum())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "100.0"


SHADOW = """
from tvmscript import tir as T

@T.prim_func
def shadow(A: T.Buffer((2,), "int32"), C: T.Buffer((5,), "int32")):
    x: T.int32 = 32
    C[0] = x
    with T.LetStmt(16, var=x):
        C[1] = x
        with T.LetStmt(A[0] + 1, var=x):
            C[2] = x
        C[3] = x
    C[4] = x
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_variable_bound_inside_its_own_binding_shadows_it(target: object) -> None:
    func = tvmscript.from_source(SHADOW)
    c = np.zeros(5, "int32")
    tvmscript.build(func, target=target)(np.array([7, 0], "int32"), c)
    assert c.tolist() == [32, 16, 8, 16, 32]


def test_rebindings_get_fresh_variables_and_single_ones_stay() -> None:
    func = tvmscript.from_source(SHADOW)
    lets: list[LetStmt] = []
    post_order_visit(prepare_for_cpu(func).body,
                     lambda n: lets.append(n) if isinstance(n, LetStmt) else None)
    assert len(lets) == 3 and len({id(let.var) for let in lets}) == 3
    assert {let.var.name for let in lets} == {"x"}
    argmin = tvmscript.from_source(ARGMIN)
    from lowering.cpu.single_definitions import rename_rebindings

    assert rename_rebindings(argmin) is argmin


LANES = """
from tvmscript import tir as T

@T.prim_func
def scale(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32x4")
    C = T.match_buffer(c, (n,), "float32x2")
    for i in T.parallel(n):
        C[i] = T.Shuffle([A[i]], [1, 3]) * T.Broadcast(T.float32(2), 2)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_vector_typed_parameters_take_the_lanes_as_last_dimension(target: object) -> None:
    func = tvmscript.from_source(LANES)
    kernel = tvmscript.build(func, target=target)
    a = np.arange(40, dtype="float32").reshape(10, 4)
    c = np.zeros((10, 2), "float32")
    kernel(a, c)
    np.testing.assert_array_equal(c, a[:, [1, 3]] * 2)
    with pytest.raises(ValueError, match=r"A: expected shape\[1\] == 4, got 3"):
        kernel(np.zeros((10, 3), "float32"), c)
    with pytest.raises(TypeError, match="A: expected ndim == 2, got 1"):
        kernel(np.zeros(40, "float32"), c)


VTHREAD_BOUND = """
from tvmscript import tir as T

@T.prim_func
def bound(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i_0 in T.thread_binding(2, "vthread.x"):
        for i_1, j in T.grid(4, 8):
            with T.block("C"):
                vi = T.axis.spatial(8, i_0 * 4 + i_1)
                vj = T.axis.spatial(8, j)
                C[vi, vj] = A[vi, vj] + T.float32(1)
"""

VTHREAD_LAUNCHED = """
from tvmscript import tir as T

@T.prim_func
def launched(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    vt = T.launch_thread("vthread", 2)
    t = T.alloc_buffer((4, 8), "float32")
    for i_1, j in T.grid(4, 8):
        t[i_1, j] = A[vt * 4 + i_1, j] * T.float32(2)
    for i_1, j in T.grid(4, 8):
        C[vt * 4 + i_1, j] = t[i_1, j] + T.float32(1)
"""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("source", [VTHREAD_BOUND, VTHREAD_LAUNCHED], ids=["bound", "launched"])
def test_virtual_threads_run_one_after_another(target: object, source: str) -> None:
    # the launched form's buffer t is private to each virtual thread
    func = tvmscript.from_source(source)
    a = np.arange(64, dtype="float32").reshape(8, 8)
    c = np.zeros_like(a)
    tvmscript.build(func, target=target)(a, c)
    np.testing.assert_array_equal(c, a + 1 if source is VTHREAD_BOUND else a * 2 + 1)


def test_gpu_threads_are_still_refused() -> None:
    from lowering.cpu.support import UnsupportedConstructError

    func = tvmscript.from_source(VTHREAD_BOUND.replace("vthread.x", "threadIdx.x"))
    with pytest.raises(UnsupportedConstructError, match="threadIdx.x"):
        tvmscript.build(func, target="interp")


VTHREAD_NESTED = """
from tvmscript import tir as T

@T.prim_func
def diagonal(B: T.Buffer((2, 2), "int32")):
    for i_0 in T.thread_binding(2, "vthread.x"):
        for j_0 in T.thread_binding(2, "vthread.x"):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i_0, j_0])
                B[vi, vj] = 1
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_virtual_thread_inside_its_own_tag_is_the_same_thread(target: object) -> None:
    # TVM unifies the bindings of one tag: j_0 is i_0, only the diagonal is written
    b = np.zeros((2, 2), "int32")
    tvmscript.build(tvmscript.from_source(VTHREAD_NESTED), target=target)(b)
    np.testing.assert_array_equal(b, np.eye(2, dtype="int32"))


def test_a_virtual_thread_of_another_extent_inside_its_tag_is_refused() -> None:
    from lowering.cpu.support import UnsupportedConstructError

    func = tvmscript.from_source(VTHREAD_NESTED.replace("for j_0 in T.thread_binding(2,",
                                                        "for j_0 in T.thread_binding(1,"))
    with pytest.raises(UnsupportedConstructError, match="vthread.x binding of extent 1"):
        tvmscript.build(func, target="interp")


SHADOWED_SHAPE = """
from tvmscript import tir as T

@T.prim_func
def views(A: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    n: T.int32 = 2
    C[63] = n
    with T.LetStmt(8, var=n):
        A2 = T.Buffer((n, n), "int32", data=A.data)
        C2 = T.Buffer((n, n), "int32", data=C.data)
        B = T.decl_buffer((n, n), "int32")
        for i, j in T.grid(n, n):
            B[i, j] = A2[i, j] + 1
        for i, j in T.grid(n, n):
            C2[i, j] = B[i, j]
"""


@pytest.mark.parametrize("target", TARGETS)
def test_buffers_shaped_by_a_rebound_variable_follow_the_inner_binding(target: object) -> None:
    func = tvmscript.from_source(SHADOWED_SHAPE)
    a = np.arange(64, dtype="int32")
    c = np.zeros(64, "int32")
    tvmscript.build(func, target=target)(a, c)
    np.testing.assert_array_equal(c, a + 1)
