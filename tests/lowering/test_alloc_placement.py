"""plan_allocation_location: every allocation lands at the LCA of its uses (TVM's rule).

Each test lowers a parsed kernel and looks at the loops enclosing each ``Allocate``:
inside a ``T.parallel`` body means one allocation per iteration (private to the
thread running it); above it means shared by all iterations.
"""

from __future__ import annotations

from typing import Any

import pytest

import lowering
from irbuilder.ir import Allocate, DeclBuffer, For, ForKind, PrimFunc, Stmt
from lowering.transforms.flatten_buffer import flatten_buffer
from lowering.transforms.hoist_alloc import hoist_allocations
from lowering.transforms.lower_blocks import lower_blocks
from lowering.transforms.memory_reuse import reuse_memory
from lowering.transforms.plan_alloc import plan_allocation_location
from tvmscript import tir as T


def _alloc_name(node: Allocate) -> str:
    """The name of the first buffer declared over the allocation (else its data var's)."""
    for stmt in _walk(node.body):
        if isinstance(stmt, DeclBuffer) and stmt.buffer.data is node.buffer_var:
            return stmt.buffer.name
    return node.buffer_var.name


def enclosing_loops(func: PrimFunc) -> dict[str, list[tuple[str, ForKind]]]:
    """For each allocation (by buffer name): the loops around it, outermost first."""
    found: dict[str, list[tuple[str, ForKind]]] = {}

    def walk(node: Any, loops: list[tuple[str, ForKind]]) -> None:
        if isinstance(node, Allocate):
            found[_alloc_name(node)] = list(loops)
        if isinstance(node, For):
            loops = [*loops, (node.loop_var.name, node.kind)]
        if isinstance(node, Stmt):
            for child in _children(node):
                walk(child, loops)

    walk(func.body, [])
    return found


def _children(node: Stmt) -> list[Stmt]:
    out: list[Stmt] = []
    for name in ("body", "then_case", "else_case"):
        child = getattr(node, name, None)
        if isinstance(child, Stmt):
            out.append(child)
    out.extend(getattr(node, "seq", ()))
    return out


def placed(func: PrimFunc) -> dict[str, list[str]]:
    """Loop var names around each allocation right after the placement pass."""
    planned = plan_allocation_location(lower_blocks(func))
    return {k: [name for name, _ in v] for k, v in enclosing_loops(planned).items()}


def lowered_loops(func: PrimFunc, opt_level: int) -> dict[str, list[str]]:
    """The same, after the whole pipeline at ``opt_level``, verified after every pass (the
    late stage's jam of a parallel reduction loop renames ``i`` to ``i_jam`` and gives each
    jammed iteration its own copy of the allocation: the copies are named after the
    original; ``vectorize_row_reductions`` turns ``i`` into ``i_rows`` with one lane buffer
    ``<name>_rows`` for the rows it computes together)."""
    result = lowering.lower(func, opt_level=opt_level, verify_each=True)
    return {k.removesuffix("_rows"): [name.removesuffix("_jam").removesuffix("_rows")
                                      for name, _ in v]
            for k, v in enclosing_loops(result).items()}


@T.prim_func
def row_sums(A: T.Buffer((1024, 64), "float32"), B: T.Buffer((1024,), "float32")):
    for i in T.parallel(1024):
        t = T.alloc_buffer((1,), "float32")
        t[0] = T.float32(0)
        for j in range(64):
            t[0] = t[0] + A[i, j]
        B[i] = t[0]


def test_root_alloc_used_in_parallel_body_lands_inside_it() -> None:
    # The parser puts t in the root block's alloc_buffers, as TVM does.
    assert [b.name for b in row_sums.body.block.alloc_buffers] == ["t"]  # type: ignore[attr-defined]
    assert placed(row_sums) == {"t": ["i"]}


@pytest.mark.parametrize("opt_level", [0, 1, 3])
def test_parallel_private_buffer_stays_inside_at_every_opt_level(opt_level: int) -> None:
    assert lowered_loops(row_sums, opt_level)["t"] == ["i"]


def test_get_source_shows_the_allocation_inside_the_parallel_loop() -> None:
    import tvmscript

    text = tvmscript.build(row_sums).get_source("tir")
    lines = text.splitlines()
    # The late stage computes 8 rows per iteration (T.parallel(128)) at opt_level 3.
    loop = next(n for n, line in enumerate(lines) if "in T.parallel(" in line)
    decl = next(n for n, line in enumerate(lines)
                if line.lstrip().startswith(("t = T.decl_buffer", "t_rows = T.decl_buffer")))
    assert decl > loop
    indent = len(lines[decl]) - len(lines[decl].lstrip())
    assert indent > len(lines[loop]) - len(lines[loop].lstrip())


@T.prim_func
def nested_serial(A: T.Buffer((8, 4, 16), "float32"), B: T.Buffer((8, 4), "float32")):
    acc = T.alloc_buffer((2,), "float32")
    for i in range(8):
        for j in range(4):
            acc[0] = T.float32(0)
            for k in range(16):
                acc[0] = acc[0] + A[i, j, k]
            B[i, j] = acc[0]


def test_lca_in_serial_loops_allocates_once_around_them() -> None:
    # The LCA is j's body; with no parallel loop on the way the allocation stays around
    # the outer serial loop, at every opt_level.
    assert placed(nested_serial) == {"acc": []}
    assert lowered_loops(nested_serial, 0)["acc"] == []
    assert lowered_loops(nested_serial, 3)["acc"] == []


@T.prim_func
def parallel_nested_serial(A: T.Buffer((8, 4, 16), "float32"), B: T.Buffer((8, 4), "float32")):
    acc = T.alloc_buffer((2,), "float32")
    for p in T.parallel(2):
        for i in range(4):
            for j in range(4):
                acc[0] = T.float32(0)
                for k in range(16):
                    acc[0] = acc[0] + A[p * 4 + i, j, k]
                B[p * 4 + i, j] = acc[0]


def test_lca_in_serial_loops_below_a_parallel_loop_lands_in_its_body() -> None:
    assert placed(parallel_nested_serial) == {"acc": ["p"]}
    for opt_level in (0, 3):
        assert lowered_loops(parallel_nested_serial, opt_level)["acc"] == ["p"]


@T.prim_func
def serial_then_parallel(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    t = T.alloc_buffer((1,), "float32")
    for i in range(4):
        for j in T.parallel(8):
            t[0] = A[i, j] * T.float32(2)
            B[i, j] = t[0] + T.float32(1)


def test_serial_loop_entered_on_the_way_to_a_parallel_one() -> None:
    assert placed(serial_then_parallel) == {"t": ["i", "j"]}


@T.prim_func
def two_siblings(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    tmp = T.alloc_buffer((16,), "float32")
    for i in T.parallel(16):
        tmp[i] = A[i] * T.float32(2)
    for i in T.parallel(16):
        B[i] = tmp[15 - i]


def test_root_alloc_used_in_two_sibling_loops_stays_at_their_parent() -> None:
    assert placed(two_siblings) == {"tmp": []}
    planned = plan_allocation_location(lower_blocks(two_siblings))
    alloc = _find_alloc(planned.body, "tmp")
    # The allocation covers both loops: the parent of the two siblings.
    loops = [s for s in _walk(alloc) if isinstance(s, For)]
    assert [loop.kind for loop in loops] == [ForKind.PARALLEL, ForKind.PARALLEL]


def _walk(node: Stmt) -> list[Stmt]:
    out = [node]
    for child in _children(node):
        out.extend(_walk(child))
    return out


def _find_alloc(node: Stmt, name: str) -> Allocate:
    for stmt in _walk(node):
        if isinstance(stmt, Allocate) and _alloc_name(stmt) == name:
            return stmt
    raise AssertionError(f"no allocation of {name}")


@T.prim_func
def parallel_then_inner_serial(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8, 4), "float32")):
    for i in T.parallel(8):
        for jo in range(4):
            s = T.alloc_buffer((1,), "float32")
            s[0] = T.float32(0)
            for ji in range(8):
                s[0] = s[0] + A[i, jo * 8 + ji]
            B[i, jo] = s[0]


def test_allocation_written_in_a_serial_loop_stays_in_the_parallel_body() -> None:
    # Declared (by the user) in jo's body; the parser moves it to the root block; it
    # lands back in the parallel body, around the serial jo loop.
    assert placed(parallel_then_inner_serial) == {"s": ["i"]}
    for opt_level in (0, 3):
        assert lowered_loops(parallel_then_inner_serial, opt_level)["s"] == ["i"]


@T.prim_func
def block_alloc(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
    with T.block("outer"):
        T.reads(A[0:4, 0:16])
        T.writes(B[0:4])
        row = T.alloc_buffer((16,), "float32")
        for i in T.parallel(4):
            for j in range(16):
                row[j] = A[i, j] * A[i, j]
            B[i] = row[0] + row[15]


def test_block_alloc_buffer_moves_into_the_parallel_body() -> None:
    assert placed(block_alloc) == {"row": ["i"]}


@T.prim_func
def allocate_and_decl(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    p = T.allocate([8], "float32", "global")
    q = T.decl_buffer((8,), "float32")
    pb = T.decl_buffer((8,), "float32", data=p)
    for i in T.parallel(4):
        for j in range(8):
            pb[j] = A[i, j]
        for j in range(8):
            q[j] = pb[7 - j]
        for j in range(8):
            B[i, j] = q[j]


def test_t_allocate_and_decl_buffer_move_into_the_parallel_body() -> None:
    where = placed(allocate_and_decl)
    assert where["q"] == ["i"]
    # The T.allocate carries no DeclBuffer of its own: its data var names it.
    (p_name,) = [k for k in where if k != "q"]
    assert where[p_name] == ["i"]
    for opt_level in (0, 3):
        loops = lowered_loops(allocate_and_decl, opt_level)
        assert all(v == ["i"] for v in loops.values()), loops


@T.prim_func
def vector_body(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    t = T.alloc_buffer((16,), "float32")
    for i in T.parallel(4):
        for j in T.vectorized(16):
            t[j] = A[i, j] + T.float32(1)
            B[i, j] = t[j] * T.float32(2)


def test_allocation_never_enters_a_vectorized_loop() -> None:
    assert placed(vector_body) == {"t": ["i"]}


@T.prim_func
def unused(A: T.Buffer((4,), "float32")):
    t = T.alloc_buffer((4,), "float32")  # noqa: F841 - the parser names the buffer after it
    for i in T.parallel(4):
        A[i] = A[i] + T.float32(1)


def test_unused_allocation_stays_where_declared() -> None:
    assert placed(unused) == {"t": []}


@T.prim_func
def allocate_in_serial_in_parallel(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8, 4), "float32")):
    for i in T.parallel(8):
        for jo in range(4):
            s = T.decl_buffer((1,), "float32")
            s[0] = T.float32(0)
            for ji in range(8):
                s[0] = s[0] + A[i, jo * 8 + ji]
            B[i, jo] = s[0]


def test_hoist_leaves_serial_loops_but_never_crosses_a_parallel_loop() -> None:
    # A T.decl_buffer inside the serial loop is already there: placement never lifts it.
    planned = plan_allocation_location(lower_blocks(allocate_in_serial_in_parallel))
    assert {k: [n for n, _ in v] for k, v in enclosing_loops(planned).items()} == {
        "s": ["i", "jo"]
    }
    hoisted = hoist_allocations(flatten_buffer(planned))
    assert {k: [n for n, _ in v] for k, v in enclosing_loops(hoisted).items()} == {"s": ["i"]}
    assert lowered_loops(allocate_in_serial_in_parallel, 0)["s"] == ["i", "jo"]


@T.prim_func
def reuse_candidates(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    outside = T.alloc_buffer((8,), "float32")
    for j in range(8):
        outside[j] = A[0, j]
    for j in range(8):
        B[0, j] = outside[j]
    for i in T.parallel(4):
        first = T.alloc_buffer((8,), "float32")
        second = T.alloc_buffer((8,), "float32")
        for j in range(8):
            first[j] = A[i, j]
        for j in range(8):
            B[i, j] = first[j]
        for j in range(8):
            second[j] = B[i, j] + T.float32(1)
        for j in range(8):
            B[i, j] = second[j]


def test_memory_reuse_never_shares_storage_with_a_parallel_body() -> None:
    planned = plan_allocation_location(lower_blocks(reuse_candidates))
    flat = flatten_buffer(planned)
    reused = reuse_memory(hoist_allocations(flat))
    loops = {k: [n for n, _ in v] for k, v in enclosing_loops(reused).items()}
    # `outside` keeps its own storage above the loop; the two per-iteration buffers
    # share one allocation, still inside the parallel body.
    assert loops["outside"] == []
    inside = [k for k, v in loops.items() if v == ["i"]]
    assert len(inside) == 1, loops
