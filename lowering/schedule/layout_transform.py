"""transform_layout: a buffer stored in the layout an index map gives.

Every access ``B[i, j]`` becomes ``B[f(i, j)]`` and the buffer takes the map's shape. The
map must be injective on the buffer's index box (no two elements collide): either an affine
bijection (no padding), or, for constant shapes, an affine map padded at the ends of its
indices whose padding, inverse and injectivity are checked by enumeration
(``layout_pad_map.py``). Padding needs ``pad_value`` (then ``layout_padding.py`` plans who
writes it) unless ``assume_injective_transform=True``, which leaves it unwritten: every
access of the program lands on the map's image, so padding is never read.

A parameter may be transformed too, as in TVM: the function then takes the array in the new
layout (the caller's contract; with ``pad_value`` its padding must hold that value, which
the function assumes). The schedule records the change so that the proof by execution
moves its random inputs into the new layout before comparing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    FloatImm,
    For,
    IntImm,
    PrimExpr,
    SeqStmt,
    Stmt,
    StmtExprMutator,
    Var,
    convert,
    make_data_var,
    post_order_visit,
    rebuild,
)
from irbuilder.ir.expr_text import expr_text, strip_parens
from lowering.analysis.vars import free_vars

from .analysis import uses_pointer
from .error import fail
from .layout import IndexMap, ViewRegionError, _Remap, bijection_sums, resolve_buffer
from .layout_pad_map import Padding, analyze_padding, check_exhaustively, symbolic_row_major
from .layout_padding import PadPlan, ParamLayout, flatten_seq, plan_padding
from .state import ScheduleState

__all__ = ["normalize_pad_value", "set_axis_separator", "transform_layout"]

NAME = "transform_layout"


def normalize_pad_value(pad_value: Any, buffer: Buffer, ndim: int) -> IndexMap | None:
    """TVM's forms: None, an IndexMap, a function of the new indices, or a value (a Python
    int for an integer buffer, a float for a float buffer, or an expression)."""
    if pad_value is None or isinstance(pad_value, IndexMap):
        return pad_value
    dtype = buffer.shape[0].dtype if buffer.shape else convert(0).dtype
    if callable(pad_value):
        return IndexMap.from_func(pad_value, ndim, index_dtype=str(dtype))
    value = pad_value
    kind = str(buffer.dtype)
    if isinstance(value, int) and not isinstance(value, bool) and "int" in kind:
        value = IntImm(buffer.dtype, value)
    elif isinstance(value, float) and "float" in kind:
        value = FloatImm(buffer.dtype, value)
    variables = [Var(f"i{k}", dtype) for k in range(ndim)]
    return IndexMap(variables, [convert(value)])


def _check_pad_value(state: ScheduleState, block: Block, buffer: Buffer, pad: IndexMap) -> None:
    if len(pad.final_indices) != 1:
        raise fail(
            state,
            NAME,
            f"pad_value {pad!r} has {len(pad.final_indices)} outputs, should have one",
            block,
        )
    value = pad.final_indices[0]
    if value.dtype != buffer.dtype:
        raise fail(
            state,
            NAME,
            f"Type mismatch {buffer.dtype} vs {value.dtype}: {buffer.name!r} holds "
            f"{buffer.dtype}, the padding value is {value.dtype}",
            block,
        )
    loads: list[BufferLoad] = []
    post_order_visit(value, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    if loads:
        raise fail(
            state,
            NAME,
            f"pad_value may not read a buffer (it reads {loads[0].buffer.name!r}); a padding "
            "defined by other elements of the buffer is not supported",
            block,
        )


def _defining_site(state: ScheduleState, buffer: Buffer) -> str:
    if any(b is buffer for b in state.func.buffer_map.values()):
        return "param"
    for node in state.index.nodes.values():
        if isinstance(node, Block):
            if any(b is buffer for b in node.alloc_buffers):
                return "alloc"
            if any(m.buffer is buffer for m in node.match_buffers):
                return "match"
    return "unknown"


def _layout(
    state: ScheduleState, block: Block, buffer: Buffer, index_map: IndexMap, dims: list[int]
) -> Padding:
    sums = bijection_sums(index_map, dims)
    if sums is not None:
        return Padding([s.extent for s in sums], [], [], None)
    found = analyze_padding(index_map.initial_indices, index_map.final_indices, dims)
    problem = "it is not an affine map padded at the ends of the indices"
    if found is not None:
        try:
            checked = check_exhaustively(
                index_map.initial_indices, index_map.final_indices, dims, found
            )
        except ValueError as err:  # a free variable, a division by zero
            checked = str(err)
        if checked is None:
            return found
        problem = checked
    raise fail(
        state,
        NAME,
        f"the index map {index_map!r} is not an injective layout of {buffer.name!r} "
        f"(shape {tuple(dims)}): {problem}",
        block,
    )


def _check_symbols(state: ScheduleState, block: Block, index_map: IndexMap) -> None:
    """The map's symbols must be the function's (its parameters and their shapes' vars)."""
    known = {id(v) for v in index_map.initial_indices} | {id(p) for p in state.func.params}
    for buffer in state.func.buffer_map.values():
        for dim in buffer.shape:
            known.update(id(v) for v in free_vars(dim))
    for expr in index_map.final_indices:
        for var in free_vars(expr):
            if id(var) not in known:
                raise fail(
                    state, NAME, f"the index map uses {var.name!r}, unknown to the function", block
                )


class _Rewrite(_Remap):
    def __init__(self, old: Buffer, new: Buffer, index_map: IndexMap, plan: PadPlan) -> None:
        super().__init__(old, new, index_map)
        self.plan = plan

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        replaced = self.plan.replacements.get(id(stmt))
        if replaced is not None:
            return replaced
        out = super().visit_stmt(stmt)
        if stmt is self.plan.epilogue_after and self.plan.epilogue is not None:
            return SeqStmt((out, self.plan.epilogue))
        return out

    def visit_seq_stmt_(self, stmt: SeqStmt) -> Stmt:
        return flatten_seq(self.generic_mutate(stmt))


def _pointer_user(state: ScheduleState, buffer: Buffer) -> Block | None:
    """The innermost block whose body uses ``buffer``'s data pointer in an expression (an
    opaque access), or None."""
    found: list[Block] = []

    def visit(node: object) -> None:
        if isinstance(node, Block) and not found and uses_pointer(node, buffer):
            found.append(node)

    post_order_visit(state.func.body, visit)
    return found[0] if found else None


def transform_layout(
    state: ScheduleState,
    block: Block,
    buffer_arg: Any,
    index_map: IndexMap,
    pad_value: Any = None,
    assume_injective: bool = False,
) -> ParamLayout | None:
    """Apply the layout; returns the parameter's new layout when a parameter changed."""
    buffer = resolve_buffer(state, block, buffer_arg, NAME)
    site = _defining_site(state, buffer)
    if site == "match":
        raise fail(
            state,
            NAME,
            f"{buffer.name!r} is defined by a block's match_buffer; it must be a parameter "
            "or allocated by a block",
            block,
        )
    pointer_user = _pointer_user(state, buffer)
    if pointer_user is not None:
        raise fail(
            state,
            NAME,
            f"{buffer.name!r} is accessed through its data pointer in block "
            f"{pointer_user.name_hint!r} (T.tvm_access_ptr, .data or .access_ptr): that access "
            "assumes the present layout, which a new one would silently change",
            pointer_user,
        )
    if len(index_map.initial_indices) != len(buffer.shape):
        raise fail(
            state,
            NAME,
            f"the index map takes {len(index_map.initial_indices)} indices, {buffer.name!r} "
            f"has {len(buffer.shape)} dimensions",
            block,
        )
    if any(v.dtype != d.dtype for v, d in zip(index_map.initial_indices, buffer.shape)):
        raise fail(
            state,
            NAME,
            f"the index map's indices are not of {buffer.name!r}'s index type "
            f"{buffer.shape[0].dtype}",
            block,
        )
    index_dtype = buffer.shape[0].dtype if buffer.shape else convert(0).dtype
    if all(isinstance(d, IntImm) for d in buffer.shape):
        dims = [d.value for d in buffer.shape]  # type: ignore[attr-defined]
        found = _layout(state, block, buffer, index_map, dims)
        shape: tuple[PrimExpr, ...] = tuple(IntImm(index_dtype, n) for n in found.shape)
    else:
        _check_symbols(state, block, index_map)
        # symbolic extents: only a row-major linearization, a bijection for any values
        linear = symbolic_row_major(
            index_map.initial_indices, index_map.final_indices, buffer.shape
        )
        if linear is None:
            raise fail(
                state,
                NAME,
                f"{buffer.name!r} has a symbolic shape; only a map linearizing its indices "
                "in row-major order (one output) can be proven a bijection",
                block,
            )
        dims, found, shape = [], Padding([], [], [], None), tuple(linear)
    pad = normalize_pad_value(pad_value, buffer, len(shape))
    if pad is not None:
        _check_pad_value(state, block, buffer, pad)
    padded = found.predicate is not None and not assume_injective
    if found.predicate is not None and padded and pad is None:
        raise fail(
            state,
            NAME,
            f"the transformation would introduce padding where "
            f"{strip_parens(expr_text(found.predicate))} (shape "
            f"{tuple(dims)} becomes {tuple(found.shape)}); give pad_value, or "
            "assume_injective_transform=True to leave the padding unwritten",
            block,
        )
    # a parameter keeps its data var (TVM's copy-on-write buffer); an allocation gets its own
    data = (
        buffer.data if site == "param" else make_data_var(buffer.name, buffer.dtype, buffer.scope)
    )
    new_buffer = Buffer(
        buffer.name,
        data,
        shape,
        buffer.dtype,
        scope=buffer.scope,
    )
    root_realize = state.func.body
    assert isinstance(root_realize, BlockRealize)
    root = root_realize.block
    plan = PadPlan()
    if padded:
        assert pad is not None
        made = plan_padding(root, buffer, new_buffer, index_map, found, pad, dims)
        if isinstance(made, str):
            raise fail(state, NAME, made, block)
        plan = made
    rewrite = _Rewrite(buffer, new_buffer, index_map, plan)
    try:
        new_root = rewrite.visit_stmt(root)
    except ViewRegionError as err:
        raise fail(state, NAME, str(err), block) from None
    assert isinstance(new_root, Block)
    if plan.prologue is not None:
        new_root = rebuild(new_root, {"body": flatten_seq(SeqStmt((plan.prologue, new_root.body)))})
    reuse = dict(rewrite.reuse)
    reuse.update(plan.reuse)
    reuse[root] = new_root
    state.replace(root_realize, rebuild(root_realize, {"block": new_root}), reuse)
    state.keep.extend(plan.keep)
    if site != "param":
        return None
    params = list(state.func.params)
    buffer_map = dict(state.func.buffer_map)
    position = 0
    for k, param in enumerate(params):
        if buffer_map.get(param) is buffer:
            buffer_map[param] = new_buffer
            position = k
    state.set_func(rebuild(state.func, {"buffer_map": buffer_map}))
    return ParamLayout(
        position, tuple(dims), index_map, tuple(found.shape), pad if padded else None
    )


class _Rename(StmtExprMutator):
    """Every reference to ``old`` made to ``new``, blocks and loops rebuilt on the way
    recorded (their handles follow them)."""

    def __init__(self, old: Buffer, new: Buffer) -> None:
        self.old, self.new = old, new
        self.reuse: dict[Stmt, Stmt] = {}
        # views of the buffer (or of its views) get its separators, as in TVM
        self.views: dict[Buffer, Buffer] = {old: new}

    def visit_buffer(self, buffer: Buffer) -> Buffer:
        return self.views.get(buffer, buffer)

    def visit_block_(self, block: Block) -> Stmt:
        for match in block.match_buffers:  # before the body, which uses the views
            source = self.views.get(match.source.buffer)
            if source is not None:
                self.views[match.buffer] = rebuild(
                    match.buffer, {"axis_separators": source.axis_separators}
                )
        new = self.generic_mutate(block)
        if new is not block:
            self.reuse[block] = new
        return new

    def visit_for_(self, loop: For) -> Stmt:
        new = self.generic_mutate(loop)
        if new is not loop:
            self.reuse[loop] = new
        return new


def set_axis_separator(
    state: ScheduleState, block: Block, buffer_arg: Any, axis_separators: Sequence[int]
) -> None:
    """TVM's set_axis_separator: where the buffer's axes split when flattened. On this
    project's CPU targets every buffer is flat memory, so results do not change."""
    name = "set_axis_separator"
    buffer = resolve_buffer(state, block, buffer_arg, name)
    site = _defining_site(state, buffer)
    if site == "match":
        raise fail(
            state,
            name,
            f"{buffer.name!r} is defined by a block's match_buffer; it must be a parameter "
            "or allocated by a block",
            block,
        )
    separators = [int(s) for s in axis_separators]
    if any(not 0 < s < len(buffer.shape) for s in separators) or separators != sorted(
        set(separators)
    ):
        raise fail(
            state,
            name,
            f"axis separators {separators} must increase strictly within 1..{len(buffer.shape) - 1}"
            f" for the {len(buffer.shape)}-d {buffer.name!r}",
            block,
        )
    new_buffer = rebuild(buffer, {"axis_separators": tuple(separators)})
    root_realize = state.func.body
    assert isinstance(root_realize, BlockRealize)
    rename = _Rename(buffer, new_buffer)
    new_root = rename.visit_stmt(root_realize.block)
    rename.reuse[root_realize.block] = new_root
    state.replace(root_realize, rebuild(root_realize, {"block": new_root}), rename.reuse)
    if site == "param":
        buffer_map = {
            param: new_buffer if buf is buffer else buf
            for param, buf in state.func.buffer_map.items()
        }
        state.set_func(rebuild(state.func, {"buffer_map": buffer_map}))
