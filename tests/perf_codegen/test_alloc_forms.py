"""The benchmark's T.alloc_buffer accumulator forms lower to the locals forms' code.

``benchmarks/alloc_placement.py`` times both forms; they only run equally fast because
allocation placement makes them one program: the same loops and stores, and each
allocation inside the same loops. (Where exactly in a loop body an allocation and the
``DeclBuffer`` naming it sit may differ: neither emits code there, a stack buffer is an
``alloca`` of the function's entry block.)
Checked for both matmul schedules (AVX-512 in place, AVX2 packed), whatever the host.
"""

from __future__ import annotations

import re

import pytest

import lowering
import tvmscript
from benchmarks import alloc_kernels, kernels
from irbuilder.ir import (
    Allocate,
    DeclBuffer,
    For,
    PrimFunc,
    Stmt,
    StmtExprMutator,
    assert_structural_equal,
)


class _Strip(StmtExprMutator):
    """Drops allocations and declarations, recording the loops around each allocation."""

    def __init__(self) -> None:
        self.loops: list[str] = []
        self.allocations: list[tuple[str, tuple[str, ...]]] = []

    def visit_decl_buffer_(self, node: DeclBuffer) -> Stmt:
        return self.visit_stmt(node.body)

    def visit_allocate_(self, node: Allocate) -> Stmt:
        name = node.buffer_var.name.split("_data")[0]
        self.allocations.append((name, tuple(self.loops)))
        return self.visit_stmt(node.body)

    def visit_for_(self, node: For) -> Stmt:
        self.loops.append(node.loop_var.name)
        try:
            return self.generic_mutate(node)
        finally:
            self.loops.pop()


def _code(func: PrimFunc) -> tuple[Stmt, list[tuple[str, tuple[str, ...]]]]:
    strip = _Strip()
    body = strip.visit_stmt(lowering.lower(func).body)
    return body, sorted(strip.allocations)


@pytest.mark.parametrize(
    "local, alloc",
    [
        (kernels._matmul_tiled_in_place, alloc_kernels._matmul_tiled_in_place_alloc),
        (kernels._matmul_tiled_packed, alloc_kernels._matmul_tiled_packed_alloc),
        (kernels.conv2d, alloc_kernels.conv2d_alloc),
    ],
    ids=["matmul_in_place", "matmul_packed", "conv2d"],
)
def test_alloc_buffer_form_lowers_like_the_locals_form(local: PrimFunc, alloc: PrimFunc) -> None:
    alloc_code, alloc_places = _code(alloc)
    local_code, local_places = _code(local)
    assert alloc_places == local_places
    assert_structural_equal(alloc_code, local_code, map_free_vars=True)


def _machine_code(func: PrimFunc) -> str:
    kernel = tvmscript.build(func)
    text = kernel.get_source("ll").replace(kernel.name, "F")
    return re.sub(r"\[\d+ x i8\]", "[N x i8]", text)  # messages quoting the name


@pytest.mark.parametrize("name", ["matmul_tiled", "conv2d"])
def test_alloc_buffer_form_compiles_to_the_same_llvm_ir(name: str) -> None:
    local = kernels.KERNELS[name]
    alloc = alloc_kernels.ALLOC_KERNELS[name]
    assert _machine_code(alloc) == _machine_code(local)
