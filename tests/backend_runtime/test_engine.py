"""compile_ir: parsing/verification errors, symbol binding, artefacts, lifetime."""

from __future__ import annotations

import ctypes
import gc
import shutil
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

from backend.runtime import (
    CompileError,
    compile_ir,
    host_target,
    optimize_count,
)

TWICE = "define i64 @twice(i64 %x) {\n  %y = shl i64 %x, 1\n  ret i64 %y\n}\n"
I64_I64 = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)

SUM_F32 = r"""
define float @sum(ptr %a, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %s = phi float [ 0.0, %entry ], [ %s1, %loop ]
  %p = getelementptr inbounds float, ptr %a, i64 %i
  %v = load float, ptr %p, align 4
  %s1 = fadd float %s, %v
  %i1 = add nsw i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %exit
exit:
  ret float %s1
}
"""


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_compile_and_call(level: int) -> None:
    lib = compile_ir(TWICE, opt_level=level, name="twice", cache=False)
    assert I64_I64(lib.address("twice"))(21) == 42
    assert not lib.from_cache
    assert lib.object_bytes[:4] == b"\x7fELF"
    assert "define" in lib.llvm_ir and "@twice" in lib.llvm_ir
    assert "twice" in lib.asm
    assert lib.symbols == ("twice",)


def test_parse_error_is_compile_error() -> None:
    with pytest.raises(CompileError, match="does not parse") as info:
        compile_ir("define i64 @f( {", cache=False)
    assert isinstance(info.value, RuntimeError)


def test_verifier_error_is_compile_error() -> None:
    bad = "define i32 @f() {\n  %a = add i32 %b, 1\n  %b = add i32 1, 1\n  ret i32 %a\n}\n"
    with pytest.raises(CompileError, match="invalid"):
        compile_ir(bad, cache=False)


def test_unresolved_symbol_is_compile_error_not_crash() -> None:
    ir = "declare void @tvms_does_not_exist()\ndefine void @f() {\n" \
         "  call void @tvms_does_not_exist()\n  ret void\n}\n"
    with pytest.raises(CompileError, match="tvms_does_not_exist"):
        compile_ir(ir, cache=False)


def test_missing_symbol_lookup_is_key_error() -> None:
    lib = compile_ir(TWICE, cache=False)
    with pytest.raises(KeyError, match="nope"):
        lib.address("nope")


def test_custom_symbols_and_process_symbols() -> None:
    cell = ctypes.c_int64(1000)
    ir = ("@my_global = external global i64\ndeclare i64 @labs(i64)\n"
          "define i64 @f(i64 %x) {\n  %g = load i64, ptr @my_global\n"
          "  %s = add i64 %x, %g\n  %r = call i64 @labs(i64 %s)\n  ret i64 %r\n}\n")
    lib = compile_ir(ir, cache=False, symbols={"my_global": ctypes.addressof(cell)})
    f = I64_I64(lib.address("f"))
    assert f(-3000) == 2000
    cell.value = 5  # bound by address, not value
    assert f(-3000) == 2995


def test_same_symbol_names_in_two_libraries() -> None:
    a = compile_ir(TWICE, cache=False)
    b = compile_ir(TWICE.replace("shl i64 %x, 1", "mul i64 %x, 3"), cache=False)
    assert I64_I64(a.address("twice"))(5) == 10
    assert I64_I64(b.address("twice"))(5) == 15


def test_fastmath_vectorizes_reduction() -> None:
    strict = compile_ir(SUM_F32, cache=False)
    fast = compile_ir(SUM_F32, cache=False, fastmath=True)
    assert "x float>" not in strict.llvm_ir
    assert "fadd fast <" in fast.llvm_ir or "reduce.fadd" in fast.llvm_ir
    arr = (ctypes.c_float * 100)(*range(100))
    fn = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_void_p, ctypes.c_int64)
    assert fn(fast.address("sum"))(ctypes.addressof(arr), 100) == 4950.0
    assert fn(strict.address("sum"))(ctypes.addressof(arr), 100) == 4950.0


def test_host_target_description() -> None:
    host = host_target()
    assert host.cpu and host.triple
    assert host.features.startswith("+") or host.features.startswith("-")


def test_library_memory_released_when_unreferenced() -> None:
    lib = compile_ir(TWICE, cache=False)
    ref = weakref.ref(lib)
    del lib
    gc.collect()
    assert ref() is None


def test_optimize_counter_increments() -> None:
    before = optimize_count()
    compile_ir(TWICE, cache=False)
    assert optimize_count() == before + 1


def test_export_object(tmp_path: Path) -> None:
    lib = compile_ir(TWICE, cache=False)
    path = lib.export_object(tmp_path / "k.o")
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF"


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_export_library_loads_with_ctypes(tmp_path: Path) -> None:
    lib = compile_ir(TWICE, cache=False)
    so = lib.export_library(tmp_path / "libtwice.so")
    # Load in a fresh interpreter: no JIT involved at all.
    code = ("import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).twice; "
            "f.restype = ctypes.c_int64; f.argtypes = [ctypes.c_int64]; print(f(21))")
    out = subprocess.run([sys.executable, "-c", code, str(so)], capture_output=True,
                         text=True, timeout=60, check=True)
    assert out.stdout.strip() == "42"


def test_export_library_without_cc_is_clear_error(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    lib = compile_ir(TWICE, cache=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(CompileError, match="needs a C compiler"):
        lib.export_library(tmp_path / "x.so")


def test_half_precision_libcalls_are_provided() -> None:
    ir = ("define i16 @t(double %x) {\n  %h = fptrunc double %x to half\n"
          "  %b = bitcast half %h to i16\n  ret i16 %b\n}\n")
    lib = compile_ir(ir, cache=False)
    f = ctypes.CFUNCTYPE(ctypes.c_uint16, ctypes.c_double)(lib.address("t"))
    for v in [1.0, 0.1, 65504.0, 1e-7, -2.5, 70000.0, float("inf")]:
        with np.errstate(over="ignore"):
            want = int(np.float16(v).view(np.uint16))
        assert f(v) == want, v
