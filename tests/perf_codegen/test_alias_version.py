"""The version_gathers rewrite: gather loops get a no-overlap fast path with scoped metadata."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from pinned import AVX2, AVX512, lower_before_late_stage, lower_for, needs_host_features

import lowering
import tvmscript
from backend.codegen import CodegenOptions, generate
from backend.codegen.context import CodegenError
from irbuilder import IRBuilder
from irbuilder import tir as T
from irbuilder.ir import (
    AttrStmt,
    IfThenElse,
    IntImm,
    PrimFunc,
    StmtExprVisitor,
    as_dtype,
    structural_equal,
)
from lowering.late.alias_version import MIN_TRIP_COUNT, NOALIAS_ATTR, version_gathers


@contextmanager
def kernel(name: str, out: list[PrimFunc]) -> Iterator[None]:
    with IRBuilder() as ib:
        with T.prim_func():
            T.func_name(name)
            yield
    func = ib.get()
    assert isinstance(func, PrimFunc)
    out.append(func)


def _gather(n: int, table: int = 97) -> PrimFunc:
    out: list[PrimFunc] = []
    with kernel("gather", out):
        Tb = T.arg("Tb", T.Buffer((table,), "float32"))
        I = T.arg("I", T.Buffer((n,), "int32"))  # noqa: E741 - the suite's name
        O = T.arg("O", T.Buffer((n,), "float32"))  # noqa: E741
        with T.serial(n) as i:
            T.buffer_store(O, Tb[I[i]], [i])
    return out[0]


def _histogram(n: int) -> PrimFunc:
    out: list[PrimFunc] = []
    with kernel("histogram", out):
        D = T.arg("D", T.Buffer((n,), "int32"))
        H = T.arg("H", T.Buffer((16,), "int32"))
        with T.serial(n) as i:
            T.buffer_store(H, H[D[i]] + 1, [D[i]])
    return out[0]


def _vadd(n: int) -> PrimFunc:
    out: list[PrimFunc] = []
    with kernel("vadd", out):
        A = T.arg("A", T.Buffer((n,), "float32"))
        B = T.arg("B", T.Buffer((n,), "float32"))
        with T.serial(n) as i:
            T.buffer_store(B, A[i] + B[i], [i])
    return out[0]


def _ifs(func: PrimFunc) -> list[IfThenElse]:
    found: list[IfThenElse] = []

    class _Ifs(StmtExprVisitor):
        def visit_if_then_else_(self, node: IfThenElse) -> None:
            found.append(node)
            self.generic_visit(node)

    _Ifs().visit_stmt(func.body)
    return found


def _regions(func: PrimFunc) -> list[AttrStmt]:
    return [
        f.then_case
        for f in _ifs(func)
        if isinstance(f.then_case, AttrStmt) and f.then_case.attr_key == NOALIAS_ATTR
    ]


def test_gather_loop_gets_a_no_overlap_fast_path() -> None:
    prepared = lower_for(_gather(256), AVX512)
    (region,) = _regions(prepared)
    names = [v.name.removesuffix("_data") for v in region.node]
    assert names[0] == "O"  # written buffers first
    assert sorted(names[1:]) == ["I", "Tb"]
    assert isinstance(region.value, IntImm) and region.value.value == 1
    (branch,) = [f for f in _ifs(prepared) if f.then_case is region]
    assert branch.else_case is not None  # the original loop for overlapping arrays


def test_rewrite_is_idempotent() -> None:
    once = version_gathers(lower_before_late_stage(_gather(256)))
    twice = version_gathers(once)
    assert structural_equal(once, twice)
    assert len(_regions(twice)) == 1


@pytest.mark.parametrize(
    "func",
    [_gather(MIN_TRIP_COUNT - 1), _histogram(256), _vadd(256)],
    ids=["short", "scatter-store", "no-gather"],
)
def test_loops_that_are_not_versioned(func: PrimFunc) -> None:
    assert _regions(lower_for(func, AVX512)) == []


def test_fast_path_follows_the_target() -> None:
    assert len(_regions(lower_for(_gather(256), AVX512))) == 1
    assert _regions(lower_for(_gather(256), AVX2)) == []
    with lowering.PassContext(config={"version_gathers": {"enabled": True}}):
        assert len(_regions(lower_for(_gather(256), AVX2))) == 1
    with lowering.PassContext(config={"version_gathers": {"enabled": False}}):
        assert _regions(lower_for(_gather(256), AVX512)) == []


def test_llvm_ir_has_scoped_noalias_and_no_unroll() -> None:
    versioned = version_gathers(lower_before_late_stage(_gather(256)))
    text = generate([versioned], CodegenOptions(target=AVX2)).text
    loads = re.findall(r"load float, ptr [^\n]*", text)
    stores = re.findall(r"store float [^\n]*", text)
    assert any("!alias.scope" in x and "!noalias" in x for x in loads)
    assert any("!alias.scope" in x and "!noalias" in x for x in stores)
    assert any("!alias.scope" not in x for x in stores)  # the fallback loop has none
    assert '!"llvm.loop.unroll.disable"' in text


def test_machine_code_uses_a_hardware_gather(tmp_path: Path) -> None:
    # Compiled for an AVX-512 CPU whatever the host (nothing runs): an exported object.
    kernel = tvmscript.build(_gather(1024), target=AVX2)
    asm = _object_asm(kernel.export_object(tmp_path / "g.o", target=AVX512))
    assert re.search(r"\bv(p)?gatherd(ps|d)\b", asm) is not None


@needs_host_features(AVX512)
def test_hardware_gather_kernel_runs_on_an_avx512_host() -> None:
    kernel = tvmscript.build(_gather(1024), target=AVX512)
    assert NOALIAS_ATTR in kernel.get_source("tir")
    assert re.search(r"\bv(p)?gatherd(ps|d)\b", kernel.get_source("asm")) is not None
    rng = np.random.default_rng(9)
    table = rng.random(97, dtype=np.float32)
    idx = rng.integers(0, 97, 1024, dtype=np.int32)
    out = np.empty(1024, np.float32)
    kernel(table, idx, out)
    np.testing.assert_array_equal(out, table[idx])


def _object_asm(path: Path) -> str:
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("needs objdump to disassemble the exported object")
    return subprocess.run([objdump, "-d", str(path)], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture(params=[True, False], ids=["fast-path", "scalar"])
def gather_fast_path(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Run a test with the gather fast path forced on, then off (whatever the host)."""
    tvmscript.clear_build_cache()
    with lowering.PassContext(config={"version_gathers": {"enabled": request.param}}):
        yield request.param
    tvmscript.clear_build_cache()


@pytest.mark.parametrize("n", [64, 1000, 4099])
def test_gather_values(n: int, gather_fast_path: bool) -> None:
    rng = np.random.default_rng(n)
    table = rng.random(97, dtype=np.float32)
    idx = rng.integers(0, 97, n, dtype=np.int32)
    out = np.empty(n, np.float32)
    tvmscript.build(_gather(n))(table, idx, out)
    np.testing.assert_array_equal(out, table[idx])


def test_overlapping_output_and_table_keep_sequential_semantics(gather_fast_path: bool) -> None:
    n = 200
    rng = np.random.default_rng(3)
    base = rng.random(n, dtype=np.float32)
    idx = rng.integers(0, n, n, dtype=np.int32)
    data = base.copy()
    tvmscript.build(_gather(n, table=n))(data, idx, data)  # O is Tb
    ref = base.copy()
    for i in range(n):
        ref[i] = ref[idx[i]]
    np.testing.assert_array_equal(data, ref)


def test_overlapping_views_keep_sequential_semantics(gather_fast_path: bool) -> None:
    n = 128
    rng = np.random.default_rng(4)
    backing = rng.random(n + 64, dtype=np.float32)
    idx = rng.integers(0, n, n, dtype=np.int32)
    table, out = backing[:n], backing[32 : 32 + n]  # partly overlapping windows
    expect = backing.copy()
    for i in range(n):
        expect[32 + i] = expect[idx[i]]
    tvmscript.build(_gather(n, table=n))(table, idx, out)
    np.testing.assert_array_equal(backing, expect)


def test_malformed_region_is_a_codegen_error() -> None:
    lowered = lowering.lower(_gather(256))
    bad = lowered.with_body(AttrStmt((), NOALIAS_ATTR, IntImm(as_dtype("int32"), 1), lowered.body))
    with pytest.raises(CodegenError, match="malformed"):
        generate([bad], CodegenOptions(target=AVX2))
