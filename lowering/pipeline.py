"""The default lowering pipeline and :func:`lower`.

Order (passes above the context's ``opt_level`` are skipped)::

    fuse_tensors            inline single-use elementwise tensors (opt_level 2)
    bufferize               tensors to buffers, returned tensors to output params
    lower_scalar_return     T.ret(value) to a store into a trailing ret_value output param
    lower_allocate_const    T.allocate_const allocations initialised by stores
    lower_blocks            blocks, init, predicates, alloc/match buffers, Reduce
    inline_padding          a padding stage read back without reuse (a depthwise
                            convolution's, a pool's) computed where it is read (opt 1)
    forward_tile_copies     tiles a GPU-style schedule copies at a reduction's chunks
                            (cache_read into "shared") read from their arrays (opt_level 1)
    distribute_tile_consumers
                            a consumer computed at a reduction's tiles (reverse_compute_at)
                            writes the reduction's result in place, and their shared loops
                            are distributed (opt_level 1)
    parallelize_loops       outermost serial loops made parallel when provably race-free
                            and worth it, under a run-time no-overlap test (opt_level 1)
    plan_allocation_location
                            every allocation at the LCA of its uses (TVM's rule): a
                            buffer used only in a T.parallel body is allocated in it
    check_parallel_races    refuse T.parallel loops whose iterations may conflict
                            (N-d indices; disabled by config {"check_parallel_races":
                            {"enabled": False}}, i.e. build(..., check_races=False))
    fuse_parallel_loops     consecutive loops over the same rows, one parallel, fused when
                            the race check proves the fused iterations independent
                            (opt_level 1)
    compact_buffer_allocation
                            allocations shrunk to the box their accesses use (TVM's
                            CompactBufferAllocation): a tile accumulator fits the stack
    simplify                bindings substituted by lower_blocks become simpler
    declare_buffers         implicit T.Buffer(..., data=...) views get their DeclBuffer
    flatten_buffer          1-d accesses through flat DeclBuffer aliases
    hoist_allocations       loop-invariant allocations out of serial loops (opt_level 1)
    reuse_memory            dead allocations' memory reused by later ones (opt_level 1)
    sink_reduction_loops    output loops a schedule put inside reduction loops (the GEMM
                            tutorial's m_1 between k_0 and k_1) moved outside them (opt 1)
    merge_split_loops       a fused loop split again (T.where) and read through divisions
                            is one loop again, for split_divided_loops to unfuse (opt 1)
    fuse_contiguous_loops   nested serial loops walking memory contiguously become one loop
                            (a declared reduction's too: its lanes need the trip count)
    unroll_loop             T.unroll loops (and small constant loops)
    simplify                fold the unrolled constants
    pack_transposed_operands
                            operands read across their rows (``B[j, k]`` of ``A @ B^T``)
                            copied transposed before the nest (opt_level 1)
    vectorize_reductions    declared (block) reductions accumulate in fixed lanes (opt 1;
                            config {"vectorize_reductions": {"enabled": False}} keeps order)
    vectorize_loop          T.vectorized loops become Ramp/Broadcast code
    simplify                clean the vector index arithmetic
    insert_entry_checks     argument checks, data/shape bindings
  late stage: machine-code rewrites (opt_level 1; after flattening and vectorize; each
  bit-exact; selected by the Target)
    interchange_divided_reductions
                            reduction nests whose output loop is read divided (a transposed
                            convolution's (t - k) // 2) interchanged and split by parity
                            (under a no-overlap test)
    split_divided_loops     loops whose variable is divided by 2..4 run the quotient;
                            loops fused by a schedule (f // c, f % c) unfused into rows
    partition_loops         loops split where comparisons of their variable change value
    branch_select_updates   select-kept accumulators (a tuple argmax) stored in a branch
    promote_index_reductions
                            an argmax's accumulators in registers, its index tie test
                            decided (under a no-overlap test)
    tabulate_bindings       costly bindings of an inner loop's variable alone computed
                            once into a table the nest reads (a resize's source columns)
    transpose_tiles         copy nests B[j, i] = A[i, j] in register-transposed tiles
    vectorize_streams       serial loops filling large write-only arrays become vector loops
    vectorize_remainders    constant remainders of vectorized loops become narrower vectors
    distribute_reductions   element-wise stores split from scalar reductions
    vectorize_row_reductions
                            parallel rows' scalar reduction chains run one row per vector
                            lane (as wide as the Target's vectors), each in source order
    jam_parallel_reductions parallel reduction chains interleaved
    tile_reduction_panels   row-by-row reduction nests computed in register tiles (under a
                            no-overlap test; the tile follows the Target's registers)
    interchange_reductions  strided reduction nests interchanged (under a no-overlap test)
    promote_accumulators    accumulators kept in registers (under a no-overlap test)
    vectorize_parallel_columns
                            a parallel loop over the contiguous dimension, around serial
                            loops, runs neighbouring iterations in vector lanes
    version_accumulator_nests
                            nests with short in-memory accumulations (a 3x3 pool) get a
                            no-alias fast path, where LLVM keeps the accumulator in a register
    version_gathers         gather loops get a no-alias fast path (AVX-512 targets only)
    privatize_scatter_adds  integer histogram loops run in parallel on private copies
    align_streams           stream-writing vector loops shifted onto cache lines
    mark_streams            large write-only arrays marked for non-temporal stores
    simplify                clean the rewrites' index arithmetic

The result is exactly what the code generator receives. :func:`lowering_passes` is the one
place the list is assembled (``lower``, ``build``, exports and ``bounds_check=True`` use it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

from irbuilder.ir import IRModule, PrimFunc
from irbuilder.ir.functor import room_for_deep_ir

from .abi.entry_checks import insert_entry_checks
from .checks.race_check import check_parallel_races
from .checks.verifier import verify_well_formed
from .late.alias_version import version_accumulator_nests, version_gathers
from .late.align_streams import align_streams, mark_streams
from .late.column_lanes import vectorize_parallel_columns
from .late.distribute import distribute_reductions
from .late.divided_loops import split_divided_loops
from .late.index_reductions import promote_index_reductions
from .late.interchange import interchange_divided_reductions, interchange_reductions
from .late.jam import jam_parallel_reductions
from .late.panel_tile import tile_reduction_panels
from .late.partition import partition_loops
from .late.privatize import privatize_scatter_adds
from .late.promote import promote_accumulators
from .late.row_vectorize import vectorize_row_reductions
from .late.select_branches import branch_select_updates
from .late.stream_vectorize import vectorize_streams
from .late.tabulate import tabulate_bindings
from .late.transpose_tiles import transpose_tiles
from .late.vector_remainder import vectorize_remainders
from .pass_infra import Pass, PassContext, PassInstrument, Sequential
from .target import Target, TargetLike, as_target
from .transforms.allocate_const import lower_allocate_const
from .transforms.auto_parallel import parallelize_loops
from .transforms.bufferize import bufferize
from .transforms.compact_buffer import compact_buffer_allocation
from .transforms.declare_buffers import declare_buffers
from .transforms.distribute_tiles import distribute_tile_consumers
from .transforms.flatten_buffer import flatten_buffer
from .transforms.forward_copies import forward_tile_copies
from .transforms.fuse_loops import fuse_contiguous_loops
from .transforms.fuse_parallel import fuse_parallel_loops
from .transforms.hoist_alloc import hoist_allocations
from .transforms.inline_pads import inline_padding
from .transforms.lower_blocks import lower_blocks
from .transforms.memory_reuse import reuse_memory
from .transforms.merge_split import merge_split_loops
from .transforms.pack_operands import pack_transposed_operands
from .transforms.plan_alloc import plan_allocation_location
from .transforms.reduce_vectorize import vectorize_reductions
from .transforms.scalar_calls import inline_scalar_calls
from .transforms.scalar_return import lower_scalar_return
from .transforms.simplify import simplify
from .transforms.sink_reductions import sink_reduction_loops
from .transforms.tensor_fusion import fuse_tensors
from .transforms.unroll import unroll_loop
from .transforms.vectorize import vectorize_loop

__all__ = [
    "LATE_STAGE",
    "PIPELINE_ORDER",
    "default_pipeline",
    "lower",
    "lowering_passes",
    "with_race_check",
]

PIPELINE_ORDER: tuple[str, ...] = (
    "fuse_tensors",
    "bufferize",
    "lower_scalar_return",
    "lower_allocate_const",
    "lower_blocks",
    "inline_padding",
    "forward_tile_copies",
    "distribute_tile_consumers",
    "parallelize_loops",
    "plan_allocation_location",
    "check_parallel_races",
    "fuse_parallel_loops",
    "compact_buffer_allocation",
    "simplify",
    "declare_buffers",
    "flatten_buffer",
    "hoist_allocations",
    "reuse_memory",
    "sink_reduction_loops",
    "merge_split_loops",
    "fuse_contiguous_loops",
    "unroll_loop",
    "simplify",
    "pack_transposed_operands",
    "vectorize_reductions",
    "vectorize_loop",
    "simplify",
    "insert_entry_checks",
    # the late stage (LATE_STAGE)
    "interchange_divided_reductions",
    "split_divided_loops",
    "partition_loops",
    "branch_select_updates",
    "promote_index_reductions",
    "tabulate_bindings",
    "transpose_tiles",
    "vectorize_streams",
    "vectorize_remainders",
    "distribute_reductions",
    "vectorize_row_reductions",
    "jam_parallel_reductions",
    "tile_reduction_panels",
    "interchange_reductions",
    "promote_accumulators",
    "vectorize_parallel_columns",
    "version_accumulator_nests",
    "version_gathers",
    "privatize_scatter_adds",
    "align_streams",
    "mark_streams",
    "simplify",
)
"""Names of the passes of :func:`default_pipeline`, in order."""

LATE_STAGE: tuple[str, ...] = PIPELINE_ORDER[PIPELINE_ORDER.index("insert_entry_checks") + 1 :]
"""The machine-code rewrites run after ``insert_entry_checks`` (each has opt_level 1)."""


def _selected_by_target(name: str, target: Target) -> bool:
    if name != "version_gathers":
        return True
    # Hardware gathers are what the no-alias fast path is for: on an AVX2 Zen 3 the
    # vectorized copy measured 10% slower than the scalar loop (15.0 vs 13.5 ms on the
    # suite's 16M-element gather). PassContext(config={"version_gathers": {"enabled": b}})
    # overrides the target's choice.
    forced = PassContext.current().option("version_gathers", "enabled")
    return target.has_feature("avx512f") if forced is None else bool(forced)


def default_pipeline(opt_level: int = 3, target: TargetLike | None = None) -> list[Pass]:
    """The passes of :data:`PIPELINE_ORDER` whose own opt_level is at most ``opt_level`` and
    that ``target`` (default: the host) selects."""
    return lowering_passes(opt_level, target)


def lowering_passes(
    opt_level: int = 3,
    target: TargetLike | None = None,
    extra: Sequence[tuple[Pass, str]] = (),
) -> list[Pass]:
    """The one place the pipeline is assembled: :data:`PIPELINE_ORDER` filtered by
    ``opt_level`` and ``target``, plus each ``(pass, position)`` of ``extra``, inserted
    ``"before:<pass name>"`` (or at the end for ``"end"`` or an absent pass)."""
    chosen = as_target(target)
    by_name: dict[str, Pass] = {
        "declare_buffers": declare_buffers,
        "fuse_tensors": fuse_tensors,
        "bufferize": bufferize,
        "lower_scalar_return": lower_scalar_return,
        "lower_allocate_const": lower_allocate_const,
        "hoist_allocations": hoist_allocations,
        "reuse_memory": reuse_memory,
        "merge_split_loops": merge_split_loops,
        "sink_reduction_loops": sink_reduction_loops,
        "lower_blocks": lower_blocks,
        "forward_tile_copies": forward_tile_copies,
        "inline_padding": inline_padding,
        "distribute_tile_consumers": distribute_tile_consumers,
        "plan_allocation_location": plan_allocation_location,
        "parallelize_loops": parallelize_loops,
        "check_parallel_races": check_parallel_races,
        "fuse_parallel_loops": fuse_parallel_loops,
        "compact_buffer_allocation": compact_buffer_allocation,
        "simplify": simplify,
        "flatten_buffer": flatten_buffer,
        "unroll_loop": unroll_loop,
        "pack_transposed_operands": pack_transposed_operands,
        "vectorize_reductions": vectorize_reductions,
        "vectorize_loop": vectorize_loop,
        "insert_entry_checks": insert_entry_checks,
        "partition_loops": partition_loops,
        "split_divided_loops": split_divided_loops,
        "interchange_divided_reductions": interchange_divided_reductions,
        "branch_select_updates": branch_select_updates,
        "promote_index_reductions": promote_index_reductions,
        "tabulate_bindings": tabulate_bindings,
        "fuse_contiguous_loops": fuse_contiguous_loops,
        "transpose_tiles": transpose_tiles,
        "vectorize_streams": vectorize_streams,
        "vectorize_remainders": vectorize_remainders,
        "distribute_reductions": distribute_reductions,
        "vectorize_row_reductions": vectorize_row_reductions,
        "jam_parallel_reductions": jam_parallel_reductions,
        "tile_reduction_panels": tile_reduction_panels,
        "interchange_reductions": interchange_reductions,
        "promote_accumulators": promote_accumulators,
        "vectorize_parallel_columns": vectorize_parallel_columns,
        "version_accumulator_nests": version_accumulator_nests,
        "version_gathers": version_gathers,
        "privatize_scatter_adds": privatize_scatter_adds,
        "align_streams": align_streams,
        "mark_streams": mark_streams,
    }
    late_from = len(PIPELINE_ORDER) - len(LATE_STAGE)
    passes = [
        by_name[name]
        for position, name in enumerate(PIPELINE_ORDER)
        if by_name[name].opt_level <= opt_level
        and _selected_by_target(name, chosen)
        and (position < late_from or opt_level >= 1)
    ]
    for extra_pass, position in extra:
        names = [p.name.replace("-", "_") for p in passes]
        anchor = position[len("before:") :].replace("-", "_")
        if position.startswith("before:") and anchor in names:
            passes.insert(names.index(anchor), extra_pass)
        else:
            passes.append(extra_pass)
    return passes


class _VerifyEach:
    """The verifier of one :func:`lower` run: 1-d accesses required once flattened."""

    def __init__(self) -> None:
        self.flattened = False

    def __call__(self, func: PrimFunc) -> None:
        pass_name = PassContext.current().current_pass or None
        if pass_name == "flatten_buffer":
            self.flattened = True
        verify_well_formed(func, lowered=self.flattened, pass_name=pass_name)


_IR = TypeVar("_IR", bound=PrimFunc | IRModule)


def with_race_check(
    config: Mapping[str, Mapping[str, Any]], check_races: bool | None
) -> Mapping[str, Mapping[str, Any]]:
    """``config`` with the race check's ``enabled`` option set (unchanged for None)."""
    if check_races is None:
        return config
    merged = {name: dict(options) for name, options in config.items()}
    merged.setdefault("check_parallel_races", {})["enabled"] = check_races
    return merged


def lower(
    ir: _IR,
    opt_level: int = 3,
    verify_each: bool = False,
    instruments: Sequence[PassInstrument] = (),
    target: TargetLike | None = None,
    extra_passes: Sequence[tuple[Pass, str]] = (),
    check_races: bool | None = None,
) -> _IR:
    """Run :func:`lowering_passes` on a PrimFunc or IRModule; returns the same kind.

    ``disabled_passes``, ``config`` and ``instruments`` are inherited from the active
    PassContext (``instruments`` run after the inherited ones). ``target`` (default: the
    host) selects the late stage's rewrites. With ``verify_each`` the input and the output
    of every pass are verified (1-d accesses required from ``flatten_buffer`` on), and the
    result with ``lowered=True``. ``check_races`` (when not None) sets the
    ``check_parallel_races`` pass's ``enabled`` option (:mod:`lowering.checks.race_check`; a refused
    loop raises ``RaceError``).
    """
    outer: PassContext = PassContext.current()
    ctx = PassContext(
        opt_level=opt_level,
        disabled_passes=outer.disabled_passes,
        config=with_race_check(outer.config, check_races),
        instruments=(*outer.instruments, *instruments),
        verify_each=verify_each,
        verifier=_VerifyEach(),
        target=as_target(target),
    )
    if isinstance(ir, IRModule):
        ir = cast(_IR, inline_scalar_calls(ir))
    funcs = [ir] if isinstance(ir, PrimFunc) else [f for _, f in ir.items()]
    if verify_each:
        for func in funcs:
            verify_well_formed(func, pass_name="<input>")
    room_for_deep_ir()
    with ctx:
        passes = lowering_passes(opt_level, target, extra_passes)
        pipeline = Sequential(passes, "default_pipeline")
        result: PrimFunc | IRModule
        if isinstance(ir, PrimFunc):  # one overload of Pass.__call__ each
            result = pipeline(ir)
        else:
            result = pipeline(ir)
    if verify_each:
        out = [result] if isinstance(result, PrimFunc) else [f for _, f in result.items()]
        for func in out:
            verify_well_formed(func, lowered=True, pass_name="default_pipeline")
    return result  # type: ignore[return-value]  # a pass keeps the kind of its input
