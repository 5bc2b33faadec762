"""Matching a block's body against a tensor intrinsic's description (TVM's
``TensorizeComparator``).

The block to tensorize (the *scope*: the outer block ``blockize`` made, or the block given)
is compared with the description's root block: their iter vars and bindings are not
compared (the scope stays where it is), everything below is, node by node: loops (extent,
kind, annotations), blocks (iter vars and their kinds and extents, init), bindings,
stores, loads and expressions. Variables defined on the way (loop vars, iter vars, lets)
are mapped to the description's as they are met; a buffer of the block is mapped to the
description's buffer at the first access (same dtype and scope, one to one).

Buffer indices are compared *relative to the region the scope accesses*: for each matched
buffer the minimum of the scope's region is the *base*, and ``index - base`` must equal the
description's index (after the variable mapping), so ``C[vi_o * 16 + vi_i, ...]`` matches
``C[vii, ...]``. The block's buffer may have more dimensions than the description's (a
batch dimension in front): the leading ones must then be a single element of the region.
The description's region of a buffer must have the extents of the scope's region. A
mismatch raises :class:`Mismatch` with what does not match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from irbuilder.ir import (
    BinaryOp,
    Block,
    BlockRealize,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Call,
    Cast,
    Evaluate,
    FloatImm,
    For,
    IfThenElse,
    IntImm,
    Let,
    LetStmt,
    Not,
    PrimExpr,
    Ramp,
    Select,
    SeqStmt,
    Stmt,
    StringImm,
    Var,
    const,
    structural_equal,
)
from irbuilder.ir.expr_text import expr_text
from lowering.analysis.substitute import substitute_expr
from lowering.arith import simplify_expr

__all__ = ["Mismatch", "TensorizeMatch", "match_description"]


class Mismatch(Exception):
    """The block does not match the description; the message says where."""


@dataclass
class TensorizeMatch:
    """What a successful match found: the block's buffer for each description buffer and,
    per block buffer, the base indices of the region the scope accesses."""

    buffers: dict[Buffer, Buffer] = field(default_factory=dict)
    """Description buffer -> the block's buffer."""
    bases: dict[Buffer, list[PrimExpr]] = field(default_factory=dict)
    """The block's buffer -> the minimum of its region in the scope, per dimension."""


def _kind(node: object) -> str:
    return type(node).__name__


def _stmt_text(stmt: Stmt) -> str:
    if isinstance(stmt, For):
        return f"loop {stmt.loop_var.name}"
    if isinstance(stmt, BlockRealize):
        return f"block {stmt.block.name_hint!r}"
    if isinstance(stmt, Block):
        return f"block {stmt.name_hint!r}"
    return _kind(stmt)


def prove_equal(a: PrimExpr, b: PrimExpr) -> bool:
    """Whether ``a == b`` for all values of their variables (as far as simplification
    shows): their difference simplifies to 0."""
    if not (a.dtype.is_integer and b.dtype.is_integer):
        # conditions (predicates): the same after simplification
        return structural_equal(simplify_expr(a), simplify_expr(b))
    if a.dtype != b.dtype:
        wide = a.dtype if a.dtype.bits >= b.dtype.bits else b.dtype
        a, b = Cast(wide, a) if a.dtype != wide else a, Cast(wide, b) if b.dtype != wide else b
    diff = simplify_expr(a - b)
    return isinstance(diff, IntImm) and diff.value == 0


class _Matcher:
    """One comparison of a scope block with a description's root block."""

    def __init__(self) -> None:
        self.vars: dict[Var, Var] = {}
        """Block variable -> description variable."""
        self.subst: dict[Var, PrimExpr] = {}
        """Block variable -> the description's, cast to the block variable's type (TVM lets
        the indices of the block and of the description differ in width)."""
        self.to_lhs: dict[Buffer, Buffer] = {}
        self.to_desc: dict[Buffer, Buffer] = {}
        self.accesses: list[tuple[Buffer, tuple[PrimExpr, ...], tuple[PrimExpr, ...]]] = []
        self.allocated: set[Buffer] = set()
        """Buffers the compared subtrees allocate themselves (indices compared as they are)."""

    # -- definitions --------------------------------------------------------------------
    def define(self, lhs: Var, desc: Var) -> None:
        if lhs.dtype.code != desc.dtype.code:
            raise Mismatch(
                f"variable {lhs.name} is {lhs.dtype} where the description's {desc.name} is "
                f"{desc.dtype}"
            )
        self.vars[lhs] = desc
        self.subst[lhs] = desc if desc.dtype == lhs.dtype else Cast(lhs.dtype, desc)

    def buffer(self, lhs: Buffer, desc: Buffer) -> None:
        mapped = self.to_lhs.get(desc)
        if mapped is not None:
            if mapped is not lhs:
                raise Mismatch(
                    f"buffer {lhs.name} is accessed where the description accesses "
                    f"{desc.name}, which matched {mapped.name} before"
                )
            return
        other = self.to_desc.get(lhs)
        if other is not None:
            raise Mismatch(
                f"buffer {lhs.name} matched the description's {other.name} before and is now "
                f"accessed where the description accesses {desc.name}"
            )
        if lhs.dtype != desc.dtype:
            raise Mismatch(
                f"buffer {lhs.name} holds {lhs.dtype} where the description's {desc.name} "
                f"holds {desc.dtype}"
            )
        if lhs.scope != desc.scope:
            raise Mismatch(
                f"buffer {lhs.name} is in scope {lhs.scope!r} where the description's "
                f"{desc.name} is in {desc.scope!r}"
            )
        self.to_lhs[desc] = lhs
        self.to_desc[lhs] = desc

    def access(
        self, lhs: Buffer, lhs_indices: Sequence[PrimExpr], desc: Buffer,
        desc_indices: Sequence[PrimExpr],
    ) -> None:
        self.buffer(lhs, desc)
        if len(lhs_indices) < len(desc_indices):
            raise Mismatch(
                f"{lhs.name} is accessed with {len(lhs_indices)} indices where the "
                f"description's {desc.name} has {len(desc_indices)}"
            )
        # the base of the access is known once the scope's regions are (see finish)
        self.accesses.append((lhs, tuple(lhs_indices), tuple(desc_indices)))

    # -- statements ---------------------------------------------------------------------
    def stmt(self, lhs: Stmt, desc: Stmt) -> None:
        if type(lhs) is not type(desc):
            raise Mismatch(
                f"the block has a {_stmt_text(lhs)} where the description has a "
                f"{_stmt_text(desc)}"
            )
        if isinstance(lhs, For):
            assert isinstance(desc, For)
            self.loop(lhs, desc)
        elif isinstance(lhs, SeqStmt):
            assert isinstance(desc, SeqStmt)
            if len(lhs.seq) != len(desc.seq):
                raise Mismatch(
                    f"a sequence of {len(lhs.seq)} statements where the description has "
                    f"{len(desc.seq)}"
                )
            for a, b in zip(lhs.seq, desc.seq):
                self.stmt(a, b)
        elif isinstance(lhs, BlockRealize):
            assert isinstance(desc, BlockRealize)
            self.realize(lhs, desc)
        elif isinstance(lhs, BufferStore):
            assert isinstance(desc, BufferStore)
            self.access(lhs.buffer, lhs.indices, desc.buffer, desc.indices)
            self.expr(lhs.value, desc.value)
        elif isinstance(lhs, Evaluate):
            assert isinstance(desc, Evaluate)
            self.expr(lhs.value, desc.value)
        elif isinstance(lhs, IfThenElse):
            assert isinstance(desc, IfThenElse)
            self.expr(lhs.condition, desc.condition)
            self.stmt(lhs.then_case, desc.then_case)
            if (lhs.else_case is None) != (desc.else_case is None):
                raise Mismatch("an if with and one without an else branch")
            if lhs.else_case is not None and desc.else_case is not None:
                self.stmt(lhs.else_case, desc.else_case)
        elif isinstance(lhs, LetStmt):
            assert isinstance(desc, LetStmt)
            self.expr(lhs.value, desc.value)
            self.define(lhs.var, desc.var)
            self.stmt(lhs.body, desc.body)
        else:
            raise Mismatch(f"a {_kind(lhs)} statement, which tensorize does not compare")

    def loop(self, lhs: For, desc: For) -> None:
        self.expr(lhs.min, desc.min, index=True)
        if not self._same(lhs.extent, desc.extent):
            raise Mismatch(
                f"loop {lhs.loop_var.name} has extent {expr_text(lhs.extent)} where the "
                f"description's loop {desc.loop_var.name} has {expr_text(desc.extent)}"
            )
        if lhs.kind != desc.kind:
            raise Mismatch(
                f"loop {lhs.loop_var.name} is {lhs.kind.value} where the description's loop "
                f"{desc.loop_var.name} is {desc.kind.value}"
            )
        if (lhs.thread_binding is None) != (desc.thread_binding is None):
            raise Mismatch(f"loop {lhs.loop_var.name}: one of the loops is bound to a thread")
        if dict(lhs.annotations) != dict(desc.annotations):
            raise Mismatch(
                f"loop {lhs.loop_var.name} has annotations {dict(lhs.annotations)} where the "
                f"description's loop {desc.loop_var.name} has {dict(desc.annotations)}"
            )
        self.define(lhs.loop_var, desc.loop_var)
        self.stmt(lhs.body, desc.body)

    def realize(self, lhs: BlockRealize, desc: BlockRealize) -> None:
        a, b = lhs.block, desc.block
        if len(a.iter_vars) != len(b.iter_vars):
            raise Mismatch(
                f"block {a.name_hint!r} has {len(a.iter_vars)} iter vars where the "
                f"description's block {b.name_hint!r} has {len(b.iter_vars)}"
            )
        for value, other in zip(lhs.iter_values, desc.iter_values):
            if not self._same(value, other):
                raise Mismatch(
                    f"block {a.name_hint!r} binds {expr_text(value)} where the description's "
                    f"block {b.name_hint!r} binds {expr_text(other)}"
                )
        if not self._same(lhs.predicate, desc.predicate):
            raise Mismatch(
                f"block {a.name_hint!r} has the predicate {expr_text(lhs.predicate)} where "
                f"the description's has {expr_text(desc.predicate)}"
            )
        for iv, other_iv in zip(a.iter_vars, b.iter_vars):
            if iv.kind != other_iv.kind:
                raise Mismatch(
                    f"iter var {iv.var.name} of block {a.name_hint!r} is {iv.kind.name.lower()} "
                    f"where the description's {other_iv.var.name} is "
                    f"{other_iv.kind.name.lower()}"
                )
            if not self._same(iv.dom.extent, other_iv.dom.extent):
                raise Mismatch(
                    f"iter var {iv.var.name} ranges over {expr_text(iv.dom.extent)} values "
                    f"where the description's {other_iv.var.name} ranges over "
                    f"{expr_text(other_iv.dom.extent)}"
                )
            self.define(iv.var, other_iv.var)
        if a.match_buffers or b.match_buffers:
            raise Mismatch(f"block {a.name_hint!r}: T.match_buffer views are not compared")
        if len(a.alloc_buffers) != len(b.alloc_buffers):
            raise Mismatch(
                f"block {a.name_hint!r} allocates {len(a.alloc_buffers)} buffers where the "
                f"description's block allocates {len(b.alloc_buffers)}"
            )
        for mine, theirs in zip(a.alloc_buffers, b.alloc_buffers):
            if len(mine.shape) != len(theirs.shape) or not all(
                self._same(x, y) for x, y in zip(mine.shape, theirs.shape)
            ):
                raise Mismatch(f"allocated buffer {mine.name} differs in shape")
            self.buffer(mine, theirs)
            self.allocated.add(mine)
        if (a.init is None) != (b.init is None):
            which = "has" if a.init is not None else "has no"
            raise Mismatch(
                f"block {a.name_hint!r} {which} init where the description's block "
                f"{b.name_hint!r} does not agree"
            )
        if a.init is not None and b.init is not None:
            self.stmt(a.init, b.init)
        self.stmt(a.body, b.body)

    # -- expressions --------------------------------------------------------------------
    def _same(self, lhs: PrimExpr, desc: PrimExpr) -> bool:
        """Index-like expressions (extents, bindings): equal after the variable mapping."""
        return prove_equal(substitute_expr(lhs, self.subst), desc)

    def expr(self, lhs: PrimExpr, desc: PrimExpr, index: bool = False) -> None:
        if index:
            if not self._same(lhs, desc):
                raise Mismatch(f"{expr_text(lhs)} does not match {expr_text(desc)}")
            return
        if type(lhs) is not type(desc):
            raise Mismatch(
                f"expression {expr_text(lhs)} does not match the description's "
                f"{expr_text(desc)}"
            )
        if lhs.dtype != desc.dtype:
            raise Mismatch(
                f"{expr_text(lhs)} is {lhs.dtype} where the description's "
                f"{expr_text(desc)} is {desc.dtype}"
            )
        if isinstance(lhs, Var):
            if lhs is not desc and self.vars.get(lhs) is not desc:
                raise Mismatch(
                    f"variable {lhs.name} is used where the description uses "
                    f"{expr_text(desc)}"
                )
        elif isinstance(lhs, (IntImm, FloatImm, StringImm)):
            assert isinstance(desc, (IntImm, FloatImm, StringImm))
            if lhs.value != desc.value:
                raise Mismatch(
                    f"constant {expr_text(lhs)} where the description has {expr_text(desc)}"
                )
        elif isinstance(lhs, BufferLoad):
            assert isinstance(desc, BufferLoad)
            self.access(lhs.buffer, lhs.indices, desc.buffer, desc.indices)
        elif isinstance(lhs, BinaryOp):
            assert isinstance(desc, BinaryOp)
            self.expr(lhs.a, desc.a)
            self.expr(lhs.b, desc.b)
        elif isinstance(lhs, Cast):
            assert isinstance(desc, Cast)
            self.expr(lhs.value, desc.value)
        elif isinstance(lhs, Not):
            assert isinstance(desc, Not)
            self.expr(lhs.a, desc.a)
        elif isinstance(lhs, Select):
            assert isinstance(desc, Select)
            self.expr(lhs.condition, desc.condition)
            self.expr(lhs.true_value, desc.true_value)
            self.expr(lhs.false_value, desc.false_value)
        elif isinstance(lhs, Call):
            assert isinstance(desc, Call)
            if lhs.op != desc.op or lhs.kind != desc.kind or len(lhs.args) != len(desc.args):
                raise Mismatch(
                    f"call {expr_text(lhs)} does not match the description's {expr_text(desc)}"
                )
            for x, y in zip(lhs.args, desc.args):
                self.expr(x, y)
        elif isinstance(lhs, Ramp):
            assert isinstance(desc, Ramp)  # the lanes are in the dtype, compared above
            self.expr(lhs.base, desc.base)
            self.expr(lhs.stride, desc.stride)
        elif isinstance(lhs, Broadcast):
            assert isinstance(desc, Broadcast)
            self.expr(lhs.value, desc.value)
        elif isinstance(lhs, Let):
            assert isinstance(desc, Let)
            self.expr(lhs.value, desc.value)
            self.define(lhs.var, desc.var)
            self.expr(lhs.body, desc.body)
        else:
            raise Mismatch(f"a {_kind(lhs)} expression, which tensorize does not compare")

    # -- regions and indices ------------------------------------------------------------
    def finish(
        self, scope: Block, desc_root: Block, desc_params: Sequence[Buffer]
    ) -> TensorizeMatch:
        result = TensorizeMatch()
        for lhs_region in (*scope.writes, *scope.reads):
            if lhs_region.buffer not in self.to_desc:
                raise Mismatch(
                    f"the block accesses {lhs_region.buffer.name}, which the description does "
                    "not"
                )
        for desc in desc_params:
            lhs = self.to_lhs.get(desc)
            if lhs is None:
                raise Mismatch(f"the description's buffer {desc.name} is never accessed")
            result.buffers[desc] = lhs
            result.bases[lhs] = self._base(scope, desc_root, lhs, desc)
        for buffer in self.allocated:
            result.bases[buffer] = [const(0, "int32")] * len(buffer.shape)
        for lhs, lhs_indices, desc_indices in self.accesses:
            base = result.bases.get(lhs)
            if base is None:
                raise Mismatch(f"buffer {lhs.name} is not a parameter of the description")
            self._check_indices(lhs, lhs_indices, desc_indices, base)
        return result

    def _base(self, scope: Block, desc_root: Block, lhs: Buffer, desc: Buffer) -> list[PrimExpr]:
        lhs_regions = [r for r in (*scope.writes, *scope.reads) if r.buffer is lhs]
        desc_regions = [r for r in (*desc_root.writes, *desc_root.reads) if r.buffer is desc]
        if not lhs_regions:
            raise Mismatch(f"the block's regions do not name {lhs.name}")
        desc_region = desc_regions[0] if desc_regions else desc.full_region()
        base = [rng.min for rng in lhs_regions[0].region]
        for region in lhs_regions:
            self._check_region(region, desc_region, base)
        return base

    def _check_region(
        self, lhs: BufferRegion, desc: BufferRegion, base: Sequence[PrimExpr]
    ) -> None:
        name = lhs.buffer.name
        offset = len(lhs.region) - len(desc.region)
        if offset < 0:
            raise Mismatch(
                f"{name} has {len(lhs.region)} dimensions where the description's "
                f"{desc.buffer.name} has {len(desc.region)}"
            )
        for axis in range(offset):
            extent = lhs.region[axis].extent
            if not (isinstance(extent, IntImm) and extent.value == 1):
                raise Mismatch(
                    f"the block accesses {expr_text(extent)} elements of {name} on axis "
                    f"{axis}, which the description's {desc.buffer.name} does not have (a "
                    "leading axis must be a single element)"
                )
        for axis, (mine, theirs) in enumerate(zip(lhs.region[offset:], desc.region)):
            if not self._same(mine.extent, theirs.extent):
                raise Mismatch(
                    f"the block accesses {expr_text(mine.extent)} elements of {name} on axis "
                    f"{axis + offset} where the description accesses "
                    f"{expr_text(theirs.extent)} of {desc.buffer.name}"
                )
            if not self._same(mine.min - base[axis + offset], theirs.min):
                raise Mismatch(
                    f"the block's regions of {name} start at different places on axis "
                    f"{axis + offset} than the description's"
                )

    def _check_indices(
        self,
        lhs: Buffer,
        lhs_indices: Sequence[PrimExpr],
        desc_indices: Sequence[PrimExpr],
        base: Sequence[PrimExpr],
    ) -> None:
        offset = len(lhs_indices) - len(desc_indices)
        for axis in range(offset):
            if not prove_equal(lhs_indices[axis], base[axis]):
                raise Mismatch(
                    f"{lhs.name}[{', '.join(map(expr_text, lhs_indices))}] varies on axis "
                    f"{axis}, which the description's buffer does not have"
                )
        for axis, (mine, theirs) in enumerate(zip(lhs_indices[offset:], desc_indices)):
            if not self._same(mine - base[axis + offset], theirs):
                shown = ", ".join(map(expr_text, lhs_indices))
                raise Mismatch(
                    f"the access {lhs.name}[{shown}] does not match the description's "
                    f"index {expr_text(theirs)} on axis {axis + offset} (relative to the "
                    f"region's start {expr_text(base[axis + offset])})"
                )


def match_description(
    scope: BlockRealize, desc_root: BlockRealize, desc_params: Sequence[Buffer]
) -> TensorizeMatch:
    """Compare the scope block ``scope`` with the description's root; raises
    :class:`Mismatch`."""
    matcher = _Matcher()
    if not structural_equal(scope.predicate, desc_root.predicate):
        raise Mismatch(
            f"the block has the predicate {expr_text(scope.predicate)} where the "
            f"description has {expr_text(desc_root.predicate)}"
        )
    matcher.stmt(scope.block.body, desc_root.block.body)
    return matcher.finish(scope.block, desc_root.block, desc_params)
