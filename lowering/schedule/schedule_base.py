"""The core of :class:`~lowering.schedule.schedule.Schedule`: functions and their states,
handles (random variables) and the nodes they stand for, applying a primitive (all or
nothing, recorded in the trace, checked under ``debug_mask``), and the queries.

The primitives are methods of mixins over :class:`ScheduleBase` (``schedule_loops.py``,
``schedule_data.py``); ``schedule.py`` puts them together.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from typing_extensions import Self

from irbuilder.ir import Block, For, IRModule, PrimFunc, Stmt
from lowering.checks.verifier import Problem, well_formed_problems

from .error import ScheduleError, render_error
from .instruction import Instruction, InstructionKind
from .record import KIND_OF
from .rv import RV, BlockRV, ExprRV, LoopRV
from .sampling import TvmRandom
from .state import ScheduleState, with_root_block
from .trace import Trace

__all__ = [
    "ScheduleBase",
    "ScheduleStateView",
    "StmtSRef",
    "equivalence_checker",
    "set_equivalence_checker",
]


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

    def __init__(self, sch: ScheduleBase) -> None:
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


def equivalence_checker() -> EquivalenceChecker | None:
    """The checker ``set_equivalence_checker`` installed (None before)."""
    return _CHECKER[0] if _CHECKER else None


def _debug_enabled(mask: str | int) -> bool:
    if isinstance(mask, str):
        if mask not in ("all", "none"):
            raise ValueError(f"debug_mask must be 'all', 'none' or an int, got {mask!r}")
        return mask == "all"
    return bool(mask)


_RENDER_LEVELS = ("detail", "fast", "none")


def new_problems(func: PrimFunc, before: PrimFunc) -> list[Problem]:
    """What makes ``func`` not well formed that did not already make ``before`` so: a
    function scheduled as given (a shape variable no parameter defines, which the build
    refuses) is not the primitive's doing."""
    problems = well_formed_problems(func)
    if not problems:
        return problems
    known = {p.message for p in well_formed_problems(before)}
    return [p for p in problems if p.message not in known]


class ScheduleBase:
    """A user-directed schedule of a PrimFunc or of the functions of an IRModule: the state
    and handles, without the primitives."""
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
            if rv not in self._table:
                # as for a block or loop handle: TVM's lookup of an unknown RV
                raise IndexError(f"get: {rv!r} does not belong to this schedule")
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

    def copy(self) -> Self:
        """An independent schedule in the same state; its RVs are the same handles."""
        other = object.__new__(type(self))
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
        # the same class (a BufferArgumentError stays one at every render level)
        if self._render_level == "none":
            return type(err)(err.primitive, "(not rendered)")
        return type(err)(err.primitive, err.fast or err.reason)

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
        problems = new_problems(func, before)
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
        if node is self._state.root:
            # no scope holds the root block: it has no siblings to depend on
            raise self._error(
                ScheduleError(
                    kind,
                    f"block {node.name_hint!r} is the function's root block, which has no "
                    "producers or consumers",
                )
            )
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
