"""build(): options, sources, in-process cache, modules calling each other, exports."""

from __future__ import annotations

import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from kits import add, buf, make

import tvmscript
from irbuilder import tir as T
from irbuilder.ir import IRModule, PrimFunc
from lowering import function_pass
from tvmscript.compiler.build import build_cache_info


def test_kernel_computes_and_reports_sources() -> None:
    k = tvmscript.build(add(16))
    a = np.arange(16, dtype="float32")
    c = np.empty_like(a)
    assert k(a, a, c) is None
    np.testing.assert_array_equal(c, 2 * a)
    tir = k.get_source("tir")
    assert "T.prim_func" in tir and "array_data" in tir
    ll = k.get_source("ll")
    assert "i32 @add(ptr" in ll
    assert "add__py" in ll
    asm = k.get_source("asm")
    assert "add__py" in asm and ("ret" in asm)
    with pytest.raises(ValueError, match="unknown source kind 'cuda'"):
        k.get_source("cuda")
    assert repr(k) == "<tvmscript.Kernel add(A, B, C)>"
    assert k.lowered is not None and k.func.name == "add"


def test_unknown_and_bad_options() -> None:
    f = add(4)
    with pytest.raises(TypeError, match="unknown option\\(s\\): bogus, fast_math"):
        tvmscript.build(f, fast_math=True, bogus=1)
    with pytest.raises(TypeError, match=r"num_threads.*TVMSCRIPT_NUM_THREADS"):
        tvmscript.build(f, num_threads=2)
    with pytest.raises(TypeError, match="fastmath must be a bool"):
        tvmscript.build(f, fastmath="yes")
    with pytest.raises(ValueError, match=r"opt_level must be 0\.\.3"):
        tvmscript.build(f, opt_level=4)
    with pytest.raises(TypeError, match="opt_level must be an int"):
        tvmscript.build(f, opt_level="3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown target 'cuda'"):
        tvmscript.build(f, target="cuda")
    with pytest.raises(TypeError, match="expects a PrimFunc or IRModule, got int"):
        tvmscript.build(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
@pytest.mark.parametrize("extra", [{}, {"fastmath": True}, {"verify": True},
                                   {"release_gil": True}, {"count_allocations": False}])
def test_every_option_builds_a_correct_kernel(opt_level: int, extra: dict[str, bool]) -> None:
    k = tvmscript.build(add(), "llvm", opt_level, **extra)
    a = np.linspace(0, 1, 33, dtype="float32")
    c = np.empty_like(a)
    k(a, a, c)
    np.testing.assert_allclose(c, 2 * a, rtol=1e-6)
    assert k.spec is not None and k.spec.release_gil == extra.get("release_gil", False)


def test_interp_target() -> None:
    k = tvmscript.build(add(8), target="interp")
    a = np.arange(8, dtype="float32")
    c = np.zeros_like(a)
    k(a, a, c)
    np.testing.assert_array_equal(c, 2 * a)


def test_in_process_cache_hits_equal_structures_and_separates_options() -> None:
    tvmscript.clear_build_cache()
    k1 = tvmscript.build(add(8))
    before = build_cache_info()
    k2 = tvmscript.build(add(8))  # a new, structurally equal PrimFunc
    assert k2 is k1
    assert build_cache_info()["memory_hits"] == before["memory_hits"] + 1
    k3 = tvmscript.build(add(8), fastmath=True)
    k4 = tvmscript.build(add(8), opt_level=2)
    k5 = tvmscript.build(add(9))
    assert len({id(k1), id(k3), id(k4), id(k5)}) == 4
    assert tvmscript.build(add(8), fastmath=True) is k3
    tvmscript.clear_build_cache()
    assert tvmscript.build(add(8)) is not k1


def test_bounds_check_option() -> None:
    try:
        import lowering.checks.bounds_check  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(NotImplementedError, match=r"lowering\.checks\.bounds_check"):
            tvmscript.build(add(4), bounds_check=True)
        return

    def body() -> None:
        A, B = buf("A", (8,)), buf("B", (8,))
        idx = T.arg("idx", T.int64())
        T.buffer_store(B, A[idx], [0])

    k = tvmscript.build(make("gather1", body), bounds_check=True)
    a, b = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    k(a, b, 3)
    assert b[0] == 3
    with pytest.raises(IndexError):
        k(a, b, 8)


def test_bounds_check_pass_is_inserted_where_the_module_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[bool] = []

    @function_pass("insert_bounds_checks")
    def fake(func: PrimFunc) -> PrimFunc:
        seen.append(bool(func.attrs.get("entry_checked")))
        return func

    for position, after_entry in (("before:flatten_buffer", False), ("end", True)):
        module = types.ModuleType("lowering.checks.bounds_check")
        module.insert_bounds_checks = fake  # type: ignore[attr-defined]
        module.PIPELINE_POSITION = position  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "lowering.checks.bounds_check", module)
        seen.clear()
        k = tvmscript.build(add(4, name=f"bc_{after_entry}"), bounds_check=True, verify=True)
        assert seen == [after_entry]
        a = np.ones(4, "float32")
        c = np.zeros(4, "float32")
        k(a, a, c)
        assert c.tolist() == [2.0] * 4


def _module() -> IRModule:
    def scale() -> None:
        a = T.arg("a", T.handle())
        A = T.match_buffer(a, (8,), "float32")
        s = T.arg("s", T.float32())
        T.Assert(s != T.float32(0), "ValueError: scale: s must be nonzero")
        with T.serial(8) as i:
            T.buffer_store(A, A[i] * s, [i])

    def caller() -> None:
        a = T.arg("a", T.handle())
        A = T.match_buffer(a, (8,), "float32")
        s = T.arg("s", T.float32())
        T.evaluate(T.call_extern("int32", "scale", a, s))
        with T.serial(8) as i:
            T.buffer_store(A, A[i] + T.float32(1), [i])

    return IRModule({"scale": make("scale", scale), "caller": make("caller", caller)})


def _calling_module(pass_on: str) -> IRModule:
    def scale() -> None:
        a = T.arg("a", T.handle())
        A = T.match_buffer(a, (8,), "float32")
        s = T.arg("s", T.float32())
        with T.serial(8) as i:
            T.buffer_store(A, A[i] * s, [i])

    def caller() -> None:
        a = T.arg("a", T.handle())
        A = T.match_buffer(a, (8,), "float32")
        first = A.data if pass_on == "data" else a
        second = T.float64(2) if pass_on == "float64" else T.float32(2)
        T.evaluate(T.call_extern("int32", "scale", first, second))

    return IRModule({"scale": make("scale", scale), "caller": make("caller", caller)})


def test_a_call_to_another_kernel_passes_buffer_parameters_and_matching_scalars() -> None:
    # The callee reads an ndarray object from a buffer argument: a data pointer would be
    # read as one. Both mistakes are refused when building, not at run time.
    from backend.codegen import CodegenError

    with pytest.raises(CodegenError, match="argument 1 must be a buffer parameter of 'caller'"):
        tvmscript.build(_calling_module("data"))
    with pytest.raises(CodegenError, match="argument 2 is float64, the parameter is float32"):
        tvmscript.build(_calling_module("float64"))
    x = np.ones(8, "float32")
    tvmscript.build(_calling_module("handle")).caller(x)
    np.testing.assert_array_equal(x, np.full(8, 2.0, "float32"))


def test_module_kernels_call_each_other() -> None:
    mod = tvmscript.build(_module())
    assert isinstance(mod, tvmscript.KernelModule)
    assert list(mod) == ["scale", "caller"] and len(mod) == 2 and "caller" in mod
    assert mod["caller"] is mod.caller
    x = np.ones(8, "float32")
    mod.caller(x, 2.0)
    np.testing.assert_array_equal(x, np.full(8, 3.0, "float32"))
    mod.scale(x, 0.5)
    np.testing.assert_array_equal(x, np.full(8, 1.5, "float32"))
    # The callee's failure propagates with its own exception and message.
    with pytest.raises(ValueError, match="s must be nonzero"):
        mod.caller(x, 0.0)
    # The callee's entry checks apply to what the caller passes on.
    with pytest.raises(ValueError, match="shape"):
        mod.caller(np.ones(9, "float32")[:8].copy().reshape(8)[:7], 1.0)
    ll = mod.get_source("ll")
    assert "scale__py" in ll and "caller__py" in ll
    assert "def scale" in mod.get_source("tir") and "def caller" in mod.get_source("tir")
    assert mod.caller.library is mod.scale.library


def test_disk_cache_roundtrip_in_fresh_processes(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        f"sys.path[:0] = [{str(Path(tvmscript.__file__).parent.parent)!r}, "
        f"{str(Path(__file__).parent)!r}]\n"
        "import numpy as np, tvmscript, kits\n"
        "from tvmscript.compiler.build import build_cache_info\n"
        "f = kits.add()\n"
        "t = time.perf_counter(); k = tvmscript.build(f, cache=True)\n"
        "dt = time.perf_counter() - t\n"
        "a = np.arange(5, dtype='float32'); c = np.empty_like(a); k(a, a, c)\n"
        "assert c.tolist() == [0, 2, 4, 6, 8]\n"
        "assert 'A_flat' in k.get_source('tir') or 'array_data' in k.get_source('tir')\n"
        "assert 'add__py' in k.get_source('ll')\n"
        "print(k.from_cache, build_cache_info()['disk_hits'], k.lowered is None, dt)\n"
    )
    env = {"TVMSCRIPT_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    outs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout.split())
    assert outs[0][:3] == ["False", "0", "False"]
    assert outs[1][:3] == ["True", "1", "True"]
    assert list(tmp_path.glob("b-*.tvmb"))
    # A corrupt entry is ignored (rebuilt), never loaded.
    for entry in tmp_path.glob("b-*.tvmb"):
        entry.write_bytes(entry.read_bytes()[:100])
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[1] == "0"


def test_export_object_and_library_with_header(tmp_path: Path) -> None:
    k = tvmscript.build(add(16))
    obj = k.export_object(tmp_path / "add.o")
    assert obj.read_bytes()[:4] == b"\x7fELF"
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to link a shared library")
    lib = k.export_library(tmp_path / "libadd.so")
    header = tmp_path / "libadd.h"
    text = header.read_text()
    assert "int32_t add(PyObject *A /* numpy.ndarray of float32 */" in text
    assert (
        "PyObject *add__py(PyObject *self, PyObject *const *args, intptr_t nargs, "
        "PyObject *kwnames);" in text
    )
    src = tmp_path / "use.c"
    src.write_text('#include "libadd.h"\nint (*p)(PyObject*, PyObject*, PyObject*) = add;\n')
    proc = subprocess.run(["cc", "-fsyntax-only", "-Wall", "-Werror", str(src)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    if shutil.which("nm"):
        syms = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True,
                              text=True, check=False).stdout
        assert " T add" in syms and " T add__py" in syms
    mod = tvmscript.build(_module())
    mod.export_library(tmp_path / "libmod.so")
    mtext = (tmp_path / "libmod.h").read_text()
    assert "int32_t scale(PyObject *a /* numpy.ndarray of float32 */, float s);" in mtext
    assert "int32_t caller(" in mtext
