"""``Schedule``: TVM v0.16's ``tir.Schedule`` API over this project's IR.

Every primitive either applies completely or raises :class:`ScheduleError` and leaves the
function unchanged. With ``debug_mask="all"`` each applied primitive is followed by the
verifier and, when an equivalence checker is installed (``tvmscript`` installs one that runs
the reference interpreter on random inputs), by a comparison with the original function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from irbuilder.ir import Block, Buffer, For, ForKind, IRModule, PrimFunc, Stmt, rebuild
from lowering.checks.verifier import well_formed_problems

from . import (
    blockize,
    cache,
    cache_write,
    compute_at,
    inline,
    layout,
    layout_transform,
    reduction,
    reindex,
    reindex_cache,
)
from . import loops as loop_prims
from .error import ScheduleError, render_error
from .instruction import Instruction, InstructionKind, plain
from .record import KIND_OF, buffer_slot, region_position
from .rv import RV, BlockRV, ExprRV, LoopRV
from .sampling import TvmRandom
from .state import ScheduleState, with_root_block
from .trace import Trace

__all__ = ["Schedule", "StmtSRef", "set_equivalence_checker"]


class StmtSRef:
    """A schedule's reference to one of its blocks or loops (TVM's ``StmtSRef``)."""

    def __init__(self, stmt: Stmt) -> None:
        self.stmt = stmt

    def same_as(self, other: object) -> bool:
        return self is other

    def __repr__(self) -> str:
        return f"StmtSRef({type(self.stmt).__name__})"

class ScheduleStateView:
    """What TVM's ``ScheduleState`` offers to read: the module and the srefs."""

    def __init__(self, sch: Schedule) -> None:
        self._sch = sch

    @property
    def mod(self) -> IRModule:
        return self._sch.mod

    def get_sref(self, stmt: Stmt) -> StmtSRef:
        return self._sch.get_sref(stmt)


EquivalenceChecker = Callable[..., "str | None"]
_CHECKER: list[EquivalenceChecker] = []


def set_equivalence_checker(checker: EquivalenceChecker) -> None:
    """Install ``checker(original, scheduled) -> None | what differs`` for ``debug_mask``."""
    _CHECKER[:] = [checker]


def _debug_enabled(mask: str | int) -> bool:
    if isinstance(mask, str):
        if mask not in ("all", "none"):
            raise ValueError(f"debug_mask must be 'all', 'none' or an int, got {mask!r}")
        return mask == "all"
    return bool(mask)


_RENDER_LEVELS = ("detail", "fast", "none")


class Schedule:
    """A user-directed schedule of a PrimFunc or of the functions of an IRModule."""

    def __init__(
        self,
        mod: PrimFunc | IRModule,
        *,
        seed: int | None = None,
        debug_mask: str | int = "none",
        error_render_level: str = "detail",
        enable_check: bool = True,
    ) -> None:
        if error_render_level not in _RENDER_LEVELS:
            raise ValueError(
                f"error_render_level must be one of {_RENDER_LEVELS}, got {error_render_level!r}"
            )
        if isinstance(mod, PrimFunc):
            functions: dict[str, PrimFunc] = {"main": mod}
        elif isinstance(mod, IRModule):
            functions = dict(mod.functions)
        else:
            raise TypeError(f"Schedule expects a PrimFunc or IRModule, got {type(mod).__name__}")
        if not functions:
            raise ValueError("Schedule: the module has no function")
        self._states: dict[str, ScheduleState] = {}
        self._originals: dict[str, PrimFunc] = {}
        self._normalized: dict[str, PrimFunc] = {}
        for name, func in functions.items():
            normalized, had_root = with_root_block(func)
            self._states[name] = ScheduleState(normalized, had_root)
            self._originals[name] = func
            self._normalized[name] = normalized
        self._module_attrs = dict(mod.attrs) if isinstance(mod, IRModule) else {}
        self._func_name: str | None = next(iter(functions)) if len(functions) == 1 else None
        self._table: dict[RV, Any] = {}
        self._owner: dict[RV, str] = {}
        self._trace = Trace()
        self._debug = _debug_enabled(debug_mask)
        self._debug_mask = debug_mask
        self._render_level = error_render_level
        self._srefs: dict[int, StmtSRef] = {}
        self._enable_check = enable_check
        self._rand = TvmRandom(seed)
        self._seed = seed

    # -- module, handles, copies ----------------------------------------------------
    @property
    def mod(self) -> IRModule:
        """The scheduled module (functions in their printable form)."""
        functions = {
            # an unscheduled function is the given one itself (TVM: ``same_as`` holds)
            name: self._originals[name] if st.func is self._normalized[name] else st.output()
            for name, st in self._states.items()
        }
        return IRModule(functions, self._module_attrs)

    @property
    def state(self) -> ScheduleStateView:
        """TVM's ``sch.state``, read side: ``.mod`` and ``.get_sref(block_or_loop)``."""
        return ScheduleStateView(self)

    @property
    def func_working_on(self) -> str | None:
        return self._func_name

    @property
    def trace(self) -> Trace:
        return self._trace

    def work_on(self, func_name: str) -> None:
        """Make ``func_name`` the function that ``get_block`` looks in by default."""
        if func_name not in self._states:
            raise ValueError(
                f"work_on: no function {func_name!r}; the module has {sorted(self._states)}"
            )
        self._func_name = func_name

    def get(self, rv: RV) -> Any:
        """The Block, For or integer that ``rv`` stands for now."""
        if isinstance(rv, ExprRV):
            return self._table[rv]
        return self._node(rv, "get")

    def get_sref(self, rv_or_stmt: RV | Stmt) -> StmtSRef:
        """TVM's ``get_sref``: a reference to the block or loop an RV (or the node itself)
        stands for, with ``.stmt``; one per node per schedule (copies have their own)."""
        node = rv_or_stmt if isinstance(rv_or_stmt, Stmt) else self._node(rv_or_stmt, "get_sref")
        ref = self._srefs.get(id(node))
        if ref is None or ref.stmt is not node:
            ref = StmtSRef(node)
            self._srefs[id(node)] = ref
        return ref

    def copy(self) -> Schedule:
        """An independent schedule in the same state; its RVs are the same handles."""
        other = object.__new__(Schedule)
        other.__dict__.update(self.__dict__)
        other._states = {
            n: ScheduleState(st.func, st.had_root, param_layouts=list(st.param_layouts))
            for n, st in self._states.items()
        }
        other._table = dict(self._table)
        other._srefs = {}
        other._owner = dict(self._owner)
        other._trace = self._trace.copy()
        other._rand = TvmRandom()
        other._rand.setstate(self._rand.getstate())
        return other

    def remove_rv(self, rand_var: RV) -> None:
        """Forget a handle (later uses of it raise)."""
        self._table.pop(rand_var, None)
        self._owner.pop(rand_var, None)

    def seed(self, seed: int) -> None:
        self._rand.seed(seed)

    def fork_seed(self) -> int:
        return self._rand.randrange(1, 2**31)

    def show(self, *args: Any, **kwargs: Any) -> None:
        """Print the scheduled module as TVMScript."""
        print(self.mod.script())

    def __repr__(self) -> str:
        return f"Schedule({', '.join(self._states)})"

    # -- internals ----------------------------------------------------------------------
    @property
    def _state(self) -> ScheduleState:
        if self._func_name is None:
            raise ValueError(
                "the schedule does not know which function to be working on: the module has "
                "several functions; call sch.work_on(name) first or pass func_name"
            )
        return self._states[self._func_name]

    def _node(self, rv: RV, primitive: str) -> Any:
        if not isinstance(rv, RV):
            raise TypeError(f"{primitive}: expected a BlockRV or LoopRV, got {type(rv).__name__}")
        if rv not in self._table:
            # TVM: a lookup of an unknown (removed, or another schedule's) RV is an IndexError
            raise IndexError(f"{primitive}: {rv!r} does not belong to this schedule")
        node = self._table[rv]
        if node is None:
            kind = "block" if isinstance(rv, BlockRV) else "loop"
            raise ScheduleError(
                primitive,
                f"the {kind} this {type(rv).__name__} referred to no longer exists (an "
                "earlier primitive removed or replaced it)",
            )
        owner = self._owner.get(rv)
        if owner is not None and owner != self._func_name:
            self._func_name = owner
        return node

    def _block(self, rv: Any, primitive: str) -> Block:
        if isinstance(rv, str):  # TVM v0.16 accepts a block's name for its handle
            rv = self.get_block(rv)
        if not isinstance(rv, BlockRV):
            raise TypeError(f"{primitive}: expected a BlockRV, got {type(rv).__name__}")
        node = self._node(rv, primitive)
        assert isinstance(node, Block)
        return node

    def _loop(self, rv: Any, primitive: str) -> For:
        if not isinstance(rv, LoopRV):
            raise TypeError(f"{primitive}: expected a LoopRV, got {type(rv).__name__}")
        node = self._node(rv, primitive)
        assert isinstance(node, For)
        return node

    def _block_or_loop(self, rv: Any, primitive: str) -> Block | For:
        if isinstance(rv, (BlockRV, str)):
            return self._block(rv, primitive)
        if isinstance(rv, LoopRV):
            return self._loop(rv, primitive)
        raise TypeError(f"{primitive}: expected a BlockRV or LoopRV, got {type(rv).__name__}")

    def _wrap(self, node: Stmt) -> RV:
        rv: RV = BlockRV() if isinstance(node, Block) else LoopRV()
        self._table[rv] = node
        if self._func_name is not None:
            self._owner[rv] = self._func_name
        return rv

    def _refresh(self, state: ScheduleState) -> None:
        for rv, node in self._table.items():
            if isinstance(node, (Block, For)) and self._owner.get(rv) == self._func_name:
                self._table[rv] = state.resolve(node)

    def _error(self, err: ScheduleError) -> ScheduleError:
        if self._render_level == "detail":
            return err
        if self._render_level == "none":
            return ScheduleError(err.primitive, "(not rendered)")
        return ScheduleError(err.primitive, err.fast or err.reason)

    def _record(
        self, method: str, inputs: list[Any], attrs: list[Any], outputs: list[Any],
        decision: Any = None,
    ) -> None:
        """Append the instruction ``method`` was, under its TVM kind name."""
        inst = Instruction(InstructionKind.get(KIND_OF[method]), inputs, attrs, outputs)
        self._trace.append(inst, decision)

    def _as_rv(self, value: Any) -> Any:
        """A block's name (TVM v0.16 accepts one for a BlockRV) as the handle ``get_block``
        gives, so the trace records the handle after the lookup, as TVM's does."""
        return self.get_block(value) if isinstance(value, str) else value

    def _apply(
        self,
        kind: str,
        inputs: list[Any],
        attrs: list[Any],
        action: Callable[[ScheduleState], Any],
    ) -> Any:
        state = self._state
        before = state.func
        layouts = len(state.param_layouts)
        state.begin()
        try:
            produced = action(state)
        except ScheduleError as err:
            state.set_func(before)
            del state.param_layouts[layouts:]
            raise self._error(err) from None
        self._refresh(state)
        if self._debug:
            try:
                self._debug_check(kind, state, before)
            except ScheduleError:
                del state.param_layouts[layouts:]
                raise
        result = self._outputs(produced)
        outputs = result if isinstance(result, list) else [] if result is None else [result]
        self._record(kind, inputs, attrs, list(outputs))
        return result

    def _outputs(self, produced: Any) -> Any:
        if produced is None:
            return None
        if isinstance(produced, (Block, For)):
            return self._wrap(produced)
        if isinstance(produced, list):
            return [self._wrap(p) if isinstance(p, (Block, For)) else p for p in produced]
        return produced

    def _debug_check(self, kind: str, state: ScheduleState, before: PrimFunc) -> None:
        func = state.output()
        problems = well_formed_problems(func)
        failure = None
        if problems:
            failure = "the result is not well formed: " + "; ".join(p.message for p in problems)
        elif _CHECKER:
            assert self._func_name is not None
            original = self._originals[self._func_name]
            # parameters transform_layout moved: the check moves its inputs likewise
            layouts = state.param_layouts
            failure = _CHECKER[0](original, func, *([layouts] if layouts else []))
        if failure is not None:
            state.set_func(before)
            self._refresh_after_rollback(state)
            raise ScheduleError(
                kind,
                f"internal check failed, the primitive was not applied ({failure}); "
                "this is a bug in the schedule library, please report it",
            )

    def _refresh_after_rollback(self, state: ScheduleState) -> None:
        for rv, node in list(self._table.items()):
            if isinstance(node, (Block, For)) and not state.index.contains(node):
                self._table[rv] = None

    # -- queries -------------------------------------------------------------------------
    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block called ``name`` (it must be unique in the function)."""
        if func_name is not None:
            self.work_on(func_name)
        state = self._state
        found = [
            n for n in state.index.nodes.values() if isinstance(n, Block) and n.name_hint == name
        ]
        if not found:
            names = sorted(
                {
                    n.name_hint
                    for n in state.index.nodes.values()
                    if isinstance(n, Block) and n is not state.root
                }
            )
            raise self._error(
                ScheduleError(
                    "get_block",
                    f"Cannot find a block with the name: {name} (no block named {name!r}; "
                    f"the blocks are {names})",
                    fast="Cannot find a block with the specified name",
                )
            )
        if len(found) > 1:
            raise self._error(
                ScheduleError(
                    "get_block",
                    f"{len(found)} blocks are named {name!r}",
                    render_error(state.output(), found),
                )
            )
        rv = self._wrap(found[0])
        assert isinstance(rv, BlockRV)
        self._record("get_block", [], [name, self._func_name], [rv])
        return rv

    def get_loops(self, block: BlockRV | LoopRV) -> list[LoopRV]:
        """The loops above ``block`` up to its scope block, outermost first."""
        block = self._as_rv(block)
        node = self._block_or_loop(block, "get_loops")
        index = self._state.index
        if isinstance(node, Block):
            found = index.loops_above(node)
        else:
            found = []
            for anc in index.ancestors(node):
                if isinstance(anc, Block):
                    break
                if isinstance(anc, For):
                    found.append(anc)
            found.reverse()
        rvs = [self._wrap(lp) for lp in found]
        self._record("get_loops", [block], [], list(rvs))
        return rvs  # type: ignore[return-value]

    def get_child_blocks(self, block_or_loop: BlockRV | LoopRV) -> list[BlockRV]:
        block_or_loop = self._as_rv(block_or_loop)
        node = self._block_or_loop(block_or_loop, "get_child_blocks")
        blocks = self._state.index.blocks_below(node)
        rvs = [self._wrap(b) for b in blocks]
        self._record("get_child_blocks", [block_or_loop], [], list(rvs))
        return rvs  # type: ignore[return-value]

    def get_output_blocks(self, scope_block: BlockRV | str) -> list[BlockRV]:
        """The blocks under ``scope_block`` (at any depth, in execution order) that write a
        buffer of the function's parameters."""
        from .analysis import block_access

        scope_block = self._as_rv(scope_block)
        node = self._block(scope_block, "get_output_blocks")
        outputs = set(map(id, self._state.func.buffer_map.values()))
        blocks = [
            b
            for b in self._state.index.blocks_below(node, direct=False)
            if any(id(w) in outputs for w in block_access(b).write_buffers)
        ]
        rvs = [self._wrap(b) for b in blocks]
        self._record("get_output_blocks", [scope_block], [], list(rvs))
        return rvs  # type: ignore[return-value]

    def _neighbours(self, block: BlockRV, producers: bool) -> list[BlockRV]:
        from .analysis import block_access

        kind = "get_producers" if producers else "get_consumers"
        block = self._as_rv(block)
        node = self._block(block, kind)
        index = self._state.index
        scope = index.scope_block(index.realize_of(node))
        siblings = index.child_blocks(scope)
        mine = block_access(node)
        position = next(k for k, b in enumerate(siblings) if b is node)
        found: list[Block] = []
        for k, other in enumerate(siblings):
            if other is node:
                continue
            theirs = block_access(other)
            if producers and k < position:
                hit = {id(b) for b in theirs.write_buffers} & {id(b) for b in mine.read_buffers}
            elif not producers and k > position:
                hit = {id(b) for b in mine.write_buffers} & {id(b) for b in theirs.read_buffers}
            else:
                hit = set()
            if hit:
                found.append(other)
        rvs = [self._wrap(b) for b in found]
        self._record(kind, [block], [], list(rvs))
        return rvs  # type: ignore[return-value]

    def get_producers(self, block: BlockRV) -> list[BlockRV]:
        """Blocks of the same scope, earlier in program order, writing what ``block`` reads."""
        return self._neighbours(block, producers=True)

    def get_consumers(self, block: BlockRV) -> list[BlockRV]:
        """Blocks of the same scope, later in program order, reading what ``block`` writes."""
        return self._neighbours(block, producers=False)

    # -- loops ---------------------------------------------------------------------------
    def split(
        self,
        loop: LoopRV,
        factors: Sequence[int | ExprRV | None],
        preserve_unit_iters: bool = True,
        disable_predication: bool = False,
    ) -> list[LoopRV]:
        """Split ``loop`` into ``len(factors)`` nested loops (one factor may be None).

        ``disable_predication=True`` is TVM's promise that the factors divide the extent;
        here it is accepted where that holds and refused where a guard would be needed."""
        node = self._loop(loop, "split")
        values: list[int | None] = []
        factors = [plain(f) for f in factors]
        for f in factors:
            if isinstance(f, ExprRV):
                values.append(int(self._table[f]))
            elif f is None:
                values.append(None)
            else:
                values.append(int(getattr(f, "value", f)))
        return self._apply(  # type: ignore[no-any-return]
            "split",
            [loop, *factors],
            [bool(preserve_unit_iters), bool(disable_predication)],
            lambda st: loop_prims.split(
                st, node, values, preserve_unit_iters, bool(disable_predication)
            ),
        )

    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse perfectly nested consecutive loops into one."""
        nodes = [self._loop(lp, "fuse") for lp in loops]
        return self._apply(  # type: ignore[no-any-return]
            "fuse",
            list(loops),
            [bool(preserve_unit_iters)],
            lambda st: loop_prims.fuse(st, nodes, preserve_unit_iters),
        )

    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Put the loops in the given order (they must form one chain)."""
        nodes = [self._loop(lp, "reorder") for lp in ordered_loops]
        self._apply(
            "reorder",
            list(ordered_loops),
            [],
            lambda st: loop_prims.reorder(st, nodes) and None,
        )

    def add_unit_loop(self, block_or_loop: BlockRV | LoopRV) -> LoopRV:
        """Wrap ``block_or_loop`` in a new loop of extent 1."""
        block_or_loop = self._as_rv(block_or_loop)
        node = self._block_or_loop(block_or_loop, "add_unit_loop")
        return self._apply(  # type: ignore[no-any-return]
            "add_unit_loop",
            [block_or_loop],
            [],
            lambda st: loop_prims.add_unit_loop(st, node),
        )

    def _kind(self, name: str, loop: LoopRV, kind: ForKind, thread_axis: str | None = None) -> None:
        node = self._loop(loop, name)
        self._apply(
            name,
            [loop],
            [] if thread_axis is None else [thread_axis],
            lambda st: loop_prims.set_loop_kind(st, node, kind, name, thread_axis) and None,
        )

    def parallel(self, loop: LoopRV) -> None:
        """Run the loop's iterations on several threads."""
        self._kind("parallel", loop, ForKind.PARALLEL)

    def vectorize(self, loop: LoopRV) -> None:
        """Run the loop's iterations as vector lanes."""
        self._kind("vectorize", loop, ForKind.VECTORIZED)

    def unroll(self, loop: LoopRV) -> None:
        """Unroll the loop."""
        self._kind("unroll", loop, ForKind.UNROLLED)

    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        """Bind the loop to a GPU thread axis (IR only: CPU builds refuse such loops)."""
        self._kind("bind", loop, ForKind.THREAD_BINDING, thread_axis)

    # -- compute location ----------------------------------------------------------------
    def compute_at(
        self,
        block: BlockRV,
        loop: LoopRV,
        preserve_unit_loops: bool = False,
        index: int = -1,
    ) -> None:
        """Move the producer block under ``loop``, computing what each iteration needs."""
        block = self._as_rv(block)
        inputs, attrs = [block, loop], [bool(preserve_unit_loops), int(index)]
        b = self._block(block, "compute_at")
        if self._marked(loop, "compute_at", b, inputs, attrs, inline.compute_inline):
            return
        lp = self._loop(loop, "compute_at")
        self._apply(
            "compute_at",
            inputs,
            attrs,
            lambda st: compute_at.compute_at(st, b, lp, preserve_unit_loops, index),
        )

    def reverse_compute_at(
        self,
        block: BlockRV,
        loop: LoopRV,
        preserve_unit_loops: bool = False,
        index: int = -1,
    ) -> None:
        """Move the consumer block under ``loop``, consuming what each iteration produced."""
        block = self._as_rv(block)
        inputs, attrs = [block, loop], [bool(preserve_unit_loops), int(index)]
        b = self._block(block, "reverse_compute_at")
        if self._marked(loop, "reverse_compute_at", b, inputs, attrs,
                        inline.reverse_compute_inline):
            return
        lp = self._loop(loop, "reverse_compute_at")
        self._apply(
            "reverse_compute_at",
            inputs,
            attrs,
            lambda st: compute_at.reverse_compute_at(st, b, lp, preserve_unit_loops, index),
        )

    def _marked(
        self,
        loop: LoopRV,
        kind: str,
        block: Block,
        inputs: list[Any],
        attrs: list[Any],
        inline_action: Callable[[ScheduleState, Block], None],
    ) -> bool:
        """compute_at at a location ``sample_compute_location`` chose that is not a loop, as
        TVM: the root mark leaves the block where it is, the inline mark inlines it."""
        from .compute_location import INLINE, ROOT

        mark = self._table.get(loop) if isinstance(loop, LoopRV) else None
        if mark is ROOT:
            self._apply(kind, inputs, attrs, lambda st: None)
            return True
        if mark is INLINE:
            self._apply(kind, inputs, attrs, lambda st: inline_action(st, block))
            return True
        return False

    def compute_inline(self, block: BlockRV) -> None:
        """Inline the block's value into its consumers and remove it."""
        block = self._as_rv(block)
        node = self._block(block, "compute_inline")
        self._apply("compute_inline", [block], [], lambda st: inline.compute_inline(st, node))

    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Fold the consumer block into its producer and remove it."""
        block = self._as_rv(block)
        node = self._block(block, "reverse_compute_inline")
        self._apply(
            "reverse_compute_inline",
            [block],
            [],
            lambda st: inline.reverse_compute_inline(st, node),
        )

    # -- reductions ----------------------------------------------------------------------
    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Move the block's init into a block of its own right before ``loop``."""
        block = self._as_rv(block)
        b, lp = self._block(block, "decompose_reduction"), self._loop(loop, "decompose_reduction")
        return self._apply(  # type: ignore[no-any-return]
            "decompose_reduction",
            [block, loop],
            [],
            lambda st: reduction.decompose_reduction(st, b, lp),
        )

    def rfactor(self, loop: LoopRV, factor_axis: int) -> BlockRV:
        """Factor the reduction over ``loop`` into an intermediate ``*_rf`` buffer."""
        lp = self._loop(loop, "rfactor")
        return self._apply(  # type: ignore[no-any-return]
            "rfactor",
            [loop],
            [int(factor_axis)],
            lambda st: reduction.rfactor(st, lp, factor_axis),
        )

    # -- caching and layout --------------------------------------------------------------
    def cache_read(
        self,
        block: BlockRV,
        read_buffer_index: int | str | Buffer,
        storage_scope: str,
        consumer_blocks: Sequence[BlockRV] | None = None,
    ) -> BlockRV:
        """Copy a buffer the block reads into ``storage_scope`` before its consumers."""
        return self._cache(
            cache.cache_read, "cache_read", "read_buffer_index",
            block, read_buffer_index, storage_scope, consumer_blocks,
        )

    def cache_write(
        self,
        block: BlockRV,
        write_buffer_index: int | str | Buffer,
        storage_scope: str,
        consumer_blocks: Sequence[BlockRV] | None = None,
    ) -> BlockRV:
        """Make the block write a ``storage_scope`` cache, copied back right after it."""
        return self._cache(
            cache_write.cache_write, "cache_write", "write_buffer_index",
            block, write_buffer_index, storage_scope, consumer_blocks,
        )

    def cache_inplace(
        self, block: BlockRV | str, read_buffer_index: int | str | Buffer, storage_scope: str
    ) -> list[BlockRV]:
        """A block reading and writing a buffer works on a ``storage_scope`` cache, copied
        in right before it and back right after it; returns the two copy blocks."""
        from .cache_inplace import cache_inplace

        block = self._as_rv(block)
        node = self._block(block, "cache_inplace")
        index = plain(read_buffer_index)
        return self._apply(  # type: ignore[no-any-return]
            "cache_inplace",
            [block],
            [region_position(node.reads, index), storage_scope],
            lambda st: cache_inplace(st, node, index, storage_scope),
        )

    def _cache(
        self,
        primitive: Any,
        name: str,
        index_name: str,
        block: BlockRV,
        index: int | str | Buffer,
        storage_scope: str,
        consumer_blocks: Sequence[BlockRV] | None,
    ) -> BlockRV:
        """cache_read/cache_write: the same handles, trace record and application."""
        block = self._as_rv(block)
        node = self._block(block, name)
        consumers = None if consumer_blocks is None else [self._as_rv(b) for b in consumer_blocks]
        others = None if consumers is None else [self._block(b, name) for b in consumers]
        index = plain(index)
        regions = node.reads if name == "cache_read" else node.writes
        return self._apply(  # type: ignore[no-any-return]
            name,
            [block, consumers or []],
            [region_position(regions, index), storage_scope],
            lambda st: primitive(st, node, index, storage_scope, others),
        )

    def reindex_cache_read(
        self,
        block: BlockRV,
        read_buffer_index: int | str | Buffer,
        storage_scope: str,
        index_map: Any,
    ) -> BlockRV:
        """Copy what the block reads of a buffer into a cache laid out by ``index_map`` of
        its iter vars, before it."""
        return self._reindex_cache(
            reindex_cache.reindex_cache_read, "reindex_cache_read", "read_buffer_index",
            block, read_buffer_index, storage_scope, index_map,
        )

    def reindex_cache_write(
        self,
        block: BlockRV,
        write_buffer_index: int | str | Buffer,
        storage_scope: str,
        index_map: Any,
    ) -> BlockRV:
        """Make the block write a cache laid out by ``index_map`` of its iter vars, copied
        back after it."""
        return self._reindex_cache(
            reindex_cache.reindex_cache_write, "reindex_cache_write", "write_buffer_index",
            block, write_buffer_index, storage_scope, index_map,
        )

    def _reindex_cache(
        self,
        primitive: Any,
        name: str,
        index_name: str,
        block: BlockRV,
        index: int | str | Buffer,
        storage_scope: str,
        index_map: Any,
    ) -> BlockRV:
        block = self._as_rv(block)
        node = self._block(block, name)
        ndim = len(node.iter_vars) if layout.takes_varargs(index_map) else 0
        mapping = layout.as_index_map(index_map, ndim)
        index = plain(index)
        regions = node.reads if name == "reindex_cache_read" else node.writes
        return self._apply(  # type: ignore[no-any-return]
            name,
            [block, mapping],
            [region_position(regions, index), storage_scope],
            lambda st: primitive(st, node, index, storage_scope, mapping),
        )

    def set_scope(
        self, block: BlockRV | str, buffer_index: int | str | Buffer, storage_scope: str
    ) -> None:
        """Change the storage scope of an allocated buffer the block writes."""
        block = self._as_rv(block)
        node = self._block(block, "set_scope")
        buffer_index = plain(buffer_index)
        self._apply(
            "set_scope",
            [block],
            [region_position(node.writes, buffer_index), storage_scope],
            lambda st: cache.set_scope(st, node, buffer_index, storage_scope),
        )

    def transform_layout(
        self,
        block: BlockRV,
        buffer: Any,
        index_map: Any,
        pad_value: Any = None,
        *,
        assume_injective_transform: bool = False,
    ) -> None:
        """Store the buffer in the layout ``index_map`` gives (injective on its indices).

        A map that pads needs ``pad_value`` (a value, a function of the new indices or an
        ``IndexMap``) unless ``assume_injective_transform`` leaves the padding unwritten;
        ``IndexMap.AXIS_SEPARATOR`` among the outputs sets the new buffer's separators."""
        block = self._as_rv(block)
        node = self._block(block, "transform_layout")
        target = layout.resolve_buffer(self._state, node, buffer, "transform_layout")
        ndim = len(target.shape)
        dtype = str(target.shape[0].dtype) if target.shape else "int32"
        separators: list[int] = []
        if isinstance(index_map, layout.IndexMap):
            mapping = index_map.legalized(dtype)  # a replayed map has int32 indices
        elif callable(index_map):
            mapping, separators = layout.IndexMap.from_func_with_separators(
                index_map, ndim if layout.takes_varargs(index_map) else None, dtype
            )
        else:
            raise TypeError("transform_layout: index_map must be an IndexMap or a function")
        recorded_pad = (  # a function is recorded as its IndexMap (printable)
            layout.IndexMap.from_func(pad_value, None, dtype)
            if callable(pad_value) and not isinstance(pad_value, layout.IndexMap)
            else pad_value
        )
        slot = buffer_slot(node, buffer)
        state = self._state

        def act(st: ScheduleState) -> None:
            moved = layout_transform.transform_layout(
                st, node, buffer, mapping, pad_value, assume_injective_transform
            )
            if moved is not None:
                state.param_layouts.append(moved)

        self._apply(
            "transform_layout",
            [block],
            [*slot, mapping, recorded_pad, bool(assume_injective_transform)],
            act,
        )
        if separators:  # a second instruction, as in TVM's trace
            side = "read" if slot[1] == 0 else "write"
            self.set_axis_separator(block, (side, slot[0]), separators)

    def set_axis_separator(self, block: BlockRV, buffer: Any, axis_separators: Any) -> None:
        """Set where the buffer's axes split when flattened (TVM's ``axis_separators``)."""
        block = self._as_rv(block)
        node = self._block(block, "set_axis_separator")
        separators = [int(s) for s in axis_separators]
        self._apply(
            "set_axis_separator",
            [block],
            [*buffer_slot(node, buffer), separators],
            lambda st: layout_transform.set_axis_separator(st, node, buffer, separators),
        )

    def reindex(self, block: BlockRV, buffer: Any) -> BlockRV:
        """Give the block a copy of the buffer indexed by its iter vars."""
        block = self._as_rv(block)
        node = self._block(block, "reindex")
        return self._apply(  # type: ignore[no-any-return]
            "reindex",
            [block],
            list(buffer_slot(node, buffer)),
            lambda st: reindex.reindex(st, node, buffer),
        )

    def transform_block_layout(self, block: BlockRV, index_map: Any) -> None:
        """Re-index the block's iteration space with ``index_map`` (a bijection)."""
        block = self._as_rv(block)
        node = self._block(block, "transform_block_layout")
        # the map's indices take the iter vars' dtype (int64 domains get int64 indices)
        dtype = str(node.iter_vars[0].var.dtype) if node.iter_vars else "int32"
        mapping = layout.as_index_map(index_map, 0, dtype)
        self._apply(
            "transform_block_layout",
            [block],
            [mapping],
            lambda st: reindex.transform_block_layout(st, node, mapping),
        )

    def storage_align(
        self, block: BlockRV, buffer_index: int, axis: int, factor: int, offset: int
    ) -> None:
        """Record TVM's ``buffer_dim_align`` annotation (not yet used by the lowering)."""
        block = self._as_rv(block)
        node = self._block(block, "storage_align")
        self._apply(
            "storage_align",
            [block],
            [int(plain(v)) for v in (buffer_index, axis, factor, offset)],
            lambda st: layout.storage_align(st, node, buffer_index, axis, factor, offset),
        )

    # -- blocks ------------------------------------------------------------------------
    def blockize(
        self, target: LoopRV | Sequence[BlockRV], preserve_unit_iters: bool = True
    ) -> BlockRV:
        """Wrap the loop's subtree in an outer block ``<name>_o``, or consecutive sibling
        blocks (a list) in one block ``outer_<names>_``."""
        if isinstance(target, (list, tuple)):
            from .blockize_blocks import blockize_blocks

            blocks = [self._as_rv(b) for b in target]
            nodes = [self._block(b, "blockize") for b in blocks]
            return self._apply(  # type: ignore[no-any-return]
                "blockize",
                [blocks],
                [bool(preserve_unit_iters)],
                lambda st: blockize_blocks(st, nodes, preserve_unit_iters),
            )
        loop = self._loop(target, "blockize")
        return self._apply(  # type: ignore[no-any-return]
            "blockize",
            [target],
            [bool(preserve_unit_iters)],
            lambda st: blockize.blockize(st, loop, preserve_unit_iters),
        )

    # -- annotations ---------------------------------------------------------------------
    def annotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str, ann_val: Any) -> None:
        """Set annotation ``ann_key`` of a block or loop."""
        block_or_loop = self._as_rv(block_or_loop)
        node = self._block_or_loop(block_or_loop, "annotate")
        if not isinstance(ann_key, str):
            raise TypeError(f"annotate: ann_key must be a str, got {type(ann_key).__name__}")
        recorded = ann_val  # the trace keeps a sampled value's handle, so replay re-reads it
        if isinstance(ann_val, ExprRV):
            ann_val = self._table[ann_val]

        def action(st: ScheduleState) -> None:
            merged = dict(node.annotations)
            merged[ann_key] = ann_val
            self._replace_same(st, node, rebuild(node, {"annotations": merged}))

        self._apply(
            "annotate",
            [block_or_loop, recorded],
            [ann_key],
            action,
        )

    def unannotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str) -> None:
        """Remove annotation ``ann_key`` of a block or loop."""
        block_or_loop = self._as_rv(block_or_loop)
        node = self._block_or_loop(block_or_loop, "unannotate")

        def action(st: ScheduleState) -> None:
            if ann_key not in node.annotations:
                raise ScheduleError(
                    "unannotate",
                    f"there is no annotation {ann_key!r}",
                    render_error(st.output(), [node]),
                )
            merged = {k: v for k, v in node.annotations.items() if k != ann_key}
            self._replace_same(st, node, rebuild(node, {"annotations": merged}))

        self._apply("unannotate", [block_or_loop], [ann_key], action)

    @staticmethod
    def _replace_same(st: ScheduleState, old: Block | For, new: Block | For) -> None:
        if isinstance(old, Block):
            realize = st.index.realize_of(old)
            assert isinstance(new, Block)
            st.replace(realize, rebuild(realize, {"block": new}), {old: new})
        else:
            st.replace(old, new, {old: new})

    # -- sampling ------------------------------------------------------------------------
    def sample_perfect_tile(
        self,
        loop: LoopRV,
        n: int,
        max_innermost_factor: int = 16,
        decision: Sequence[int] | None = None,
    ) -> list[ExprRV]:
        """``n`` factors whose product is the loop's extent, chosen at random (or given)."""
        from .sampling import perfect_tile

        node = self._loop(loop, "sample_perfect_tile")
        chosen = perfect_tile(node, n, max_innermost_factor, decision, self._rand)
        rvs = [ExprRV() for _ in chosen]
        for rv, value in zip(rvs, chosen):
            self._table[rv] = value
        self._record(
            "sample_perfect_tile", [loop], [int(n), int(max_innermost_factor)], list(rvs),
            list(chosen),
        )
        return rvs

    def sample_compute_location(self, block: BlockRV | str, decision: int | None = None) -> LoopRV:
        """A place to ``compute_at`` the block, drawn uniformly from TVM's candidates: a loop
        of its first consumer, or the root mark (decision -1, stay) or the inline mark (-2)."""
        from .compute_location import sample_location

        block = self._as_rv(block)
        node = self._block(block, "sample_compute_location")
        chosen, location = sample_location(self._state, node, decision, self._rand)
        rv = LoopRV()
        self._table[rv] = location
        if self._func_name is not None:
            self._owner[rv] = self._func_name
        self._record("sample_compute_location", [block], [], [rv], chosen)
        return rv

    def sample_categorical(
        self,
        candidates: Sequence[int],
        probs: Sequence[float],
        decision: int | None = None,
    ) -> ExprRV:
        """One of ``candidates`` drawn with ``probs`` (or the index ``decision``)."""
        from .sampling import categorical

        index = categorical(candidates, probs, decision, self._rand)
        rv = ExprRV()
        self._table[rv] = int(candidates[index])
        self._record(
            "sample_categorical",
            [],
            [[int(c) for c in plain(list(candidates))], [float(p) for p in plain(list(probs))]],
            [rv],
            index,
        )
        return rv

    def enter_postproc(self) -> None:
        """Mark the start of postprocessing in the trace (TVM's ``EnterPostproc``: what
        follows is dropped by ``remove_postproc=True``); the function is unchanged."""
        self._record("enter_postproc", [], [], [])
