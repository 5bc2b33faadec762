"""Plain-C entry points of exported kernels (``<kernel>_c``): header, IR, C programs, ctypes."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from c_export_kernels import KERN_MODULE, PAIR_MODULE, doubled, gather, rowsum, saxpy

import tvmscript
from irbuilder.ir import For, ForKind, post_order_visit
from backend.abi.c_header import header_text
from tvmscript.compiler.export import plan_export

CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler (cc/gcc) on PATH")


def _loops(func: Any) -> list[For]:
    loops: list[For] = []
    post_order_visit(func.body, lambda n: loops.append(n) if isinstance(n, For) else None)
    return loops


def test_c_entry_signature_checks_and_serial_loops() -> None:
    plan = plan_export([tvmscript.build(saxpy)])
    (entry,) = plan.c_entries
    assert entry.name == "saxpy_c"
    assert [(p.name, p.role, p.dtype) for p in entry.params] == [
        ("A", "buffer", "float32"),
        ("n", "extent", "int64"),
        ("B", "buffer", "float32"),
        ("alpha", "scalar", "float32"),
        ("d", "scalar", "int32"),
    ]
    assert [p.writes for p in entry.params if p.role == "buffer"] == [False, True]
    assert entry.params[1].doc == "extent of A.shape[0], B.shape[0]; must be >= 0"
    # The C entry never uses the thread pool (it is driven from Python).
    loops = _loops(entry.func)
    assert loops and all(loop.kind is not ForKind.PARALLEL for loop in loops)
    assert [str(p.dtype) for p in entry.func.params] == [
        "handle", "int64", "handle", "float32", "int32",
    ]


def test_int32_shape_variable_is_passed_as_checked_int64() -> None:
    (entry,) = plan_export([tvmscript.build(rowsum)]).c_entries
    assert [p.name for p in entry.params] == ["A", "m", "S", "limit"]
    assert entry.params[1].doc == (
        "extent of A.shape[0], S.shape[0] (int32 in the kernel); must be in [0, 2147483647]"
    )


def test_header_declares_c_entry_with_a_comment_per_parameter() -> None:
    kernel = tvmscript.build(saxpy)
    assert kernel.spec is not None
    plan = plan_export([kernel])
    text = header_text("libsaxpy", [("saxpy", kernel.spec)], plan.c_entries, plan.skipped)
    assert "int32_t saxpy(PyObject *A /* numpy.ndarray of float32 */" in text
    assert "int32_t saxpy_c(\n" in text
    assert "    const float *A, /* float32[n][4], C-contiguous, row-major; read only */" in text
    assert "    int64_t n,      /* extent of A.shape[0], B.shape[0]; must be >= 0 */" in text
    assert "    float *B,       /* float32[n][4], C-contiguous, row-major; written */" in text
    assert "    int32_t d       /* scalar int32 */\n);" in text
    assert "const char *saxpy_c_last_error(void);" in text
    assert "#define TVMS_ERR_ZERO_DIVISION 5" in text
    assert "#define TVMS_ERR_ASSERTION 1" in text


def test_kernel_calling_a_kernel_has_no_c_entry_and_header_says_why() -> None:
    mod = tvmscript.build(PAIR_MODULE)
    plan = plan_export([mod[name] for name in mod])
    assert [e.name for e in plan.c_entries] == ["scale_c"]
    assert "calls kernel(s) 'scale' with ndarray handles" in plan.skipped["caller"]
    specs = [(name, mod[name].spec) for name in mod]
    text = header_text("libpair", specs, plan.c_entries, plan.skipped)
    assert "/* caller: no C entry: kernel 'caller' calls kernel(s) 'scale'" in text


def test_export_object_holds_both_entry_points(tmp_path: Path) -> None:
    obj = tvmscript.build(saxpy).export_object(tmp_path / "saxpy.o").read_bytes()
    assert obj[:4] == b"\x7fELF"
    for symbol in (b"saxpy\0", b"saxpy__py\0", b"saxpy_c\0", b"saxpy_c_last_error\0"):
        assert symbol in obj


_MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "libkern.h"

int main(void) {
    float A[12], B[12];
    double R[6], S[2];
    for (int i = 0; i < 12; i++) A[i] = 0.5f * (float)i - 2.0f;
    for (int i = 0; i < 6; i++) R[i] = (double)(i * i);
    int32_t rc = saxpy_c(A, 3, B, 1.5f, 2);
    printf("ok %d", rc);
    for (int i = 0; i < 12; i++) printf(" %.9g", B[i]);
    printf("\n");
    rc = rowsum_c(R, 2, S, 100.0);
    printf("ok %d %.17g %.17g\n", rc, S[0], S[1]);
    rc = saxpy_c(A, 3, B, 1.5f, 0);
    printf("err %d %s\n", rc, saxpy_c_last_error());
    rc = rowsum_c(R, 2, S, -1.0);
    printf("err %d %s\n", rc, rowsum_c_last_error());
    rc = saxpy_c(A, -1, B, 1.5f, 1);
    printf("err %d %s\n", rc, saxpy_c_last_error());
    rc = rowsum_c(R, 4294967296LL, S, 1.0);
    printf("err %d %s\n", rc, rowsum_c_last_error());
    rc = scale_c(A, 0.0f);
    printf("err %d %s\n", rc, scale_c_last_error());
    rc = saxpy_c(A, 0, B, 1.5f, 1);  /* an empty problem succeeds; the message stays */
    printf("ok %d %s\n", rc, saxpy_c_last_error());
    return 0;
}
"""


@pytest.fixture(scope="module")
def kern_library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    if CC is None:
        pytest.skip("no C compiler (cc/gcc) on PATH")
    mod = tvmscript.build(KERN_MODULE)
    so = mod.export_library(tmp_path_factory.mktemp("cexport") / "libkern.so")
    return mod, so


@needs_cc
def test_c_program_computes_and_reports_errors(kern_library: tuple[Any, Path]) -> None:
    mod, so = kern_library
    src = so.parent / "main.c"
    src.write_text(_MAIN)
    exe = so.parent / "main"
    assert CC is not None
    build = subprocess.run(
        [CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", str(exe), str(src),
         f"-L{so.parent}", "-lkern", f"-Wl,-rpath,{so.parent}"],
        capture_output=True, text=True, check=False,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    A = (0.5 * np.arange(12, dtype=np.float32) - 2).reshape(3, 4)
    expected_b = np.empty_like(A)
    mod.saxpy(A, expected_b, np.float32(1.5), 2)  # the JIT'd Python-ABI kernel
    ok, rc, *values = lines[0].split()
    assert (ok, rc) == ("ok", "0")
    np.testing.assert_array_equal(np.array(values, dtype=np.float32), expected_b.ravel())
    assert np.allclose(expected_b, A * 1.5 + 3)
    R = np.arange(6, dtype=np.float64).reshape(2, 3) ** 2
    ok, rc, *sums = lines[1].split()
    assert (ok, rc) == ("ok", "0") and [float(v) for v in sums] == R.sum(axis=1).tolist()
    assert lines[2] == "err 5 integer division by zero"
    assert lines[3] == "err 1 limit must be positive"
    assert lines[4] == "err 3 saxpy: n must be >= 0, got -1"
    assert lines[5] == "err 3 rowsum: m must be in [0, 2147483647], got 4294967296"
    assert lines[6] == "err 3 scale: s must be nonzero"
    assert lines[7] == "ok 0 scale: s must be nonzero"


@needs_cc
@pytest.mark.skipif(shutil.which("nm") is None, reason="no nm to list symbols")
def test_library_needs_no_python_symbols_strongly(kern_library: tuple[Any, Path]) -> None:
    _, so = kern_library
    out = subprocess.run(["nm", "-D", "--undefined-only", str(so)], capture_output=True,
                         text=True, check=True).stdout
    strong = [line.split()[-1] for line in out.splitlines() if line.split()[0] == "U"]
    assert strong and not [s for s in strong if s.startswith(("Py", "_Py", "tvms_"))], strong
    # The error helpers a JIT build shares with the process are defined in the library.
    undefined = [line.split()[-1] for line in out.splitlines()]
    assert not [s for s in undefined if s.lstrip("_").startswith(("tvms_raise", "tvms_arg_"))]
    defined = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True,
                             text=True, check=True).stdout
    for symbol in ("saxpy", "saxpy__py", "saxpy_c", "saxpy_c_last_error", "rowsum_c"):
        assert f" T {symbol}\n" in defined


def _c_entry(so: Path, name: str, argtypes: list[Any]) -> tuple[Any, Any]:
    lib = ctypes.CDLL(str(so))
    func = getattr(lib, name)
    func.restype, func.argtypes = ctypes.c_int32, argtypes
    last = getattr(lib, name + "_last_error")
    last.restype, last.argtypes = ctypes.c_char_p, []
    return func, last


_SAXPY_ARGS = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_float, ctypes.c_int32]


@needs_cc
def test_ctypes_calls_c_entry_in_process(kern_library: tuple[Any, Path]) -> None:
    mod, so = kern_library
    saxpy_c, last_error = _c_entry(so, "saxpy_c", _SAXPY_ARGS)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((37, 4)).astype(np.float32)
    B = np.zeros_like(A)
    assert saxpy_c(A.ctypes.data, 37, B.ctypes.data, -0.25, 3) == 0
    expected = np.empty_like(A)
    mod.saxpy(A, expected, np.float32(-0.25), 3)
    np.testing.assert_array_equal(B, expected)
    assert saxpy_c(A.ctypes.data, 37, B.ctypes.data, 1.0, 0) == 5
    assert last_error() == b"integer division by zero"


@needs_cc
def test_error_messages_are_per_thread(kern_library: tuple[Any, Path]) -> None:
    _, so = kern_library
    saxpy_c, last_error = _c_entry(so, "saxpy_c", _SAXPY_ARGS)
    A = np.ones((4, 4), np.float32)
    B = np.empty_like(A)
    mismatches: list[bytes] = []

    def hammer(n: int, d: int, code: int, message: bytes) -> None:
        for _ in range(300):  # ctypes releases the GIL: the calls really overlap
            if saxpy_c(A.ctypes.data, n, B.ctypes.data, 1.0, d) != code or last_error() != message:
                mismatches.append(last_error())

    threads = [
        threading.Thread(target=hammer, args=(4, 0, 5, b"integer division by zero")),
        threading.Thread(target=hammer, args=(-7, 1, 3, b"saxpy: n must be >= 0, got -7")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []


def test_returned_tensor_is_a_trailing_output_pointer() -> None:
    (entry,) = plan_export([tvmscript.build(doubled)]).c_entries
    assert [(p.name, p.writes) for p in entry.params] == [("A", False), ("D", True)]
    assert entry.params[1].doc.endswith("written; the returned tensor (caller allocates)")


@needs_cc
def test_bounds_checked_kernel_formats_the_index_in_c(tmp_path: Path) -> None:
    kernel = tvmscript.build(gather, bounds_check=True)
    so = kernel.export_library(tmp_path / "libgather.so")
    args = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
    gather_c, last_error = _c_entry(so, "gather_c", args)
    A = np.arange(5, dtype=np.float32)
    out = np.zeros(3, np.float32)
    good = np.array([4, 0, 2], np.int32)
    assert gather_c(A.ctypes.data, 5, good.ctypes.data, 3, out.ctypes.data) == 0
    assert out.tolist() == [4.0, 0.0, 2.0]
    bad = np.array([4, 0, 7], np.int32)
    assert gather_c(A.ctypes.data, 5, bad.ctypes.data, 3, out.ctypes.data) == 4  # IndexError
    message = last_error().decode()
    with pytest.raises(IndexError) as info:
        kernel(A, bad, out)
    assert message == str(info.value) and "= 7 out of bounds" in message


def test_disk_cached_kernel_exports_its_c_entry(tmp_path: Path) -> None:
    tvmscript.build(saxpy, cache=True, opt_level=2)
    tvmscript.clear_build_cache()
    kernel = tvmscript.build(saxpy, cache=True, opt_level=2)
    assert kernel.from_cache
    obj = kernel.export_object(tmp_path / "cached.o").read_bytes()
    assert b"saxpy_c_last_error\0" in obj and b"saxpy__py\0" in obj
