"""A kernel whose LLVM O3 output held non-power-of-two vectors aborted the process in
instruction selection (LLVM 22: a stride-6 interleave group over a small stack buffer, then
SROA and SLP's masked loads); such modules are optimised again without interleave groups
(backend/runtime/target.py: has_odd_vectors, without_interleaving)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import tvmscript
from backend.runtime.engine import compile_stats
from backend.runtime.target import has_odd_vectors

TARGET = "llvm -mcpu=znver3"

SOURCE = textwrap.dedent('''
    from tvmscript import tir as T

    @T.prim_func
    def three_stages(A: T.Buffer((8, 6), "int32"), OUT: T.Buffer((8, 6), "int32")):
        S0 = T.alloc_buffer((8, 6), "int32")
        S1 = T.alloc_buffer((8, 6), "int32")
        for i, j in T.grid(8, 6):
            with T.block("b0"):
                vi, vj = T.axis.remap("SS", [i, j])
                S0[7 - vi, vj] = A[vi, vj] * 2 - vj
        for i, j, r in T.grid(8, 6, 6):
            with T.block("b1"):
                vi, vj, vr = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    S1[vi, vj] = 0
                S1[vi, vj] = S1[vi, vj] + S0[vi, vr] * (vj + 1)
        for i, j in T.grid(8, 6):
            with T.block("b2"):
                vi, vj = T.axis.remap("SS", [i, j])
                OUT[vi, vj] = S1[vi, vj] + S1[vi, T.min(vj + 1, 5)]
''')


def test_odd_masked_widths_are_recognised() -> None:
    assert has_odd_vectors("call <12 x i32> @llvm.masked.load.v12i32.p0(ptr %p, <12 x i1> %m")
    assert has_odd_vectors("call void @llvm.masked.store.v6f32.p0(<6 x float> %v, ptr %p")
    assert not has_odd_vectors("call <8 x float> @llvm.masked.load.v8f32.p0(ptr %p")
    # interleave groups without masks compile: a stride-3 slice keeps them
    assert not has_odd_vectors("%w = load <24 x float>, ptr %p\nshufflevector <48 x i32> %a")


def _expected(a: np.ndarray) -> np.ndarray:
    s0 = np.empty_like(a)
    s0[::-1, :] = a * 2 - np.arange(6)
    s1 = (s0[:, None, :] * (np.arange(6)[None, :, None] + 1)).sum(axis=2)
    return s1 + s1[:, np.minimum(np.arange(6) + 1, 5)]


def test_the_kernel_that_aborted_builds_and_computes_in_a_child_process(tmp_path: Path) -> None:
    # a child process: were the guard to regress, the abort must fail this test, not the run
    script = SOURCE + textwrap.dedent(f'''
        import numpy as np, tvmscript
        a = np.arange(48, dtype="int32").reshape(8, 6) - 20
        out = np.zeros((8, 6), "int32")
        tvmscript.build(three_stages, target="{TARGET}", cache=False)(a, out)
        print(out.tolist())
    ''')
    path = tmp_path / "three_stages.py"  # TVMScript reads a kernel's source from its file
    path.write_text(script)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    a = np.arange(48, dtype="int32").reshape(8, 6) - 20
    assert np.array_equal(np.array(eval(done.stdout.strip().splitlines()[-1])), _expected(a))


def test_the_module_is_optimised_again_without_interleave_groups() -> None:
    func = tvmscript.from_source(SOURCE)
    before = compile_stats()["relaxed_optimizations"]
    kernel = tvmscript.build(func, target=TARGET, cache=False)
    assert compile_stats()["relaxed_optimizations"] == before + 1
    a = np.random.default_rng(3).integers(-50, 50, (8, 6)).astype("int32")
    out = np.zeros((8, 6), "int32")
    kernel(a, out)
    assert np.array_equal(out, _expected(a))
