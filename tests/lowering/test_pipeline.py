"""The default pipeline: order, verify_each on ~10 functions, and values of lowered code.

Lowered functions are run by a small numpy interpreter (below) that implements the
lowered-IR contract: entry builtins over ndarrays, 1-d accesses, AssertStmt prefixes.
"""

# The IR constructors convert Python ints and dtype strings at run time; their
# annotations name the converted types, so literal shapes/dtypes are fine here.
# mypy: disable-error-code=arg-type

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lowering
from irbuilder.ir import (
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IRModule,
    IterKind,
    IterVar,
    LetStmt,
    MatchBufferRegion,
    PrimFunc,
    Range,
    Reduce,
    ReduceKind,
    SeqStmt,
    Stmt,
    Var,
    as_dtype,
    assert_structural_equal,
    const,
    make_data_var,
)
from lowering import (
    PassContext,
    TimePasses,
    WellFormedError,
    default_pipeline,
    function_pass,
    lower,
)
from lowering.checks.race_check import check_parallel_races
from lowering.late.alias_version import version_accumulator_nests
from lowering.late.align_streams import align_streams, mark_streams
from lowering.late.column_lanes import vectorize_parallel_columns
from lowering.late.distribute import distribute_reductions
from lowering.late.divided_loops import split_divided_loops
from lowering.late.interchange import interchange_divided_reductions
from lowering.late.select_branches import branch_select_updates
from lowering.late.index_reductions import promote_index_reductions
from lowering.transforms.distribute_tiles import distribute_tile_consumers
from lowering.transforms.forward_copies import forward_tile_copies
from lowering.transforms.inline_pads import inline_padding
from lowering.transforms.merge_split import merge_split_loops
from lowering.transforms.sink_reductions import sink_reduction_loops
from lowering.late.interchange import interchange_reductions
from lowering.late.jam import jam_parallel_reductions
from lowering.late.panel_tile import tile_reduction_panels
from lowering.late.partition import partition_loops
from lowering.late.privatize import privatize_scatter_adds
from lowering.late.promote import promote_accumulators
from lowering.late.row_vectorize import vectorize_row_reductions
from lowering.late.stream_vectorize import vectorize_streams
from lowering.late.tabulate import tabulate_bindings
from lowering.late.transpose_tiles import transpose_tiles
from lowering.late.vector_remainder import vectorize_remainders
from lowering.pipeline import LATE_STAGE
from lowering.target import Target
from lowering.transforms.auto_parallel import parallelize_loops
from lowering.transforms.compact_buffer import compact_buffer_allocation
from lowering.transforms.fuse_loops import fuse_contiguous_loops
from lowering.transforms.fuse_parallel import fuse_parallel_loops
from lowering.transforms.hoist_alloc import hoist_allocations
from lowering.transforms.memory_reuse import reuse_memory

F32 = as_dtype("float32")

# --------------------------------------------------------------------------- interpreter

_BIN: dict[str, Callable[[Any, Any], Any]] = {
    "Add": operator.add,
    "Sub": operator.sub,
    "Mul": operator.mul,
    "FloorDiv": operator.floordiv,
    "FloorMod": operator.mod,
    "Min": np.minimum,
    "Max": np.maximum,
    "EQ": operator.eq,
    "NE": operator.ne,
    "LT": operator.lt,
    "LE": operator.le,
    "GT": operator.gt,
    "GE": operator.ge,
    "And": np.logical_and,
    "Or": np.logical_or,
}


class Interp:
    """Runs lowered IR over numpy arrays (handles are the arrays themselves)."""

    def __init__(self) -> None:
        self.env: dict[Var, Any] = {}

    def expr(self, e: Any) -> Any:
        name = type(e).__name__
        if name in ("IntImm", "FloatImm"):
            return e.value
        if name == "StringImm":
            return e.value
        if isinstance(e, Var):
            return self.env[e]
        if name in _BIN:
            return _BIN[name](self.expr(e.a), self.expr(e.b))
        if name == "Div":
            a, b = self.expr(e.a), self.expr(e.b)
            return a / b if e.dtype.is_float else int(a / b)
        if name == "Not":
            return np.logical_not(self.expr(e.a))
        if name == "Cast":
            v = self.expr(e.value)
            if e.value.dtype.is_handle:  # an array's address (no-overlap tests)
                return np.uint64(v.ctypes.data)
            return np.asarray(v).astype(e.dtype.element_of().numpy_dtype)[()]
        if name == "Select":
            return np.where(
                self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
            )
        if name == "Ramp":
            base, stride = self.expr(e.base), self.expr(e.stride)
            return base + stride * np.arange(e.lanes)
        if name == "Broadcast":
            return np.full(e.lanes, self.expr(e.value))
        if name == "Let":
            self.env[e.var] = self.expr(e.value)
            return self.expr(e.body)
        if isinstance(e, BufferLoad):
            (index,) = e.indices
            return self.env[e.buffer.data][self.expr(index)]
        if name == "Call":
            return self.call(e)
        raise NotImplementedError(name)

    def call(self, e: Any) -> Any:
        args = [self.expr(a) for a in e.args]
        op = e.op
        if op == "array_ndim":
            return args[0].ndim
        if op == "array_dtype_is":
            return args[0].dtype == np.dtype(args[1])
        if op == "array_shape":
            return args[0].shape[args[1]]
        if op == "array_stride":
            return args[0].strides[args[1]]
        if op == "array_flags":
            return 0x400 if args[0].flags.writeable else 0
        if op == "array_data":
            return args[0].reshape(-1)
        if op == "bitwise_and":
            return args[0] & args[1]
        if op == "likely":
            return args[0]
        if op == "array_descr":
            return args[0].dtype
        if op == "format_message":
            return args[0].format(*args[1:])
        if op in ("exp", "sqrt"):
            return getattr(np, op)(args[0])
        raise NotImplementedError(op)

    def stmt(self, s: Stmt) -> None:
        if isinstance(s, SeqStmt):
            for x in s.seq:
                self.stmt(x)
        elif isinstance(s, For):
            lo, n = self.expr(s.min), self.expr(s.extent)
            for v in range(lo, lo + n):
                self.env[s.loop_var] = v
                self.stmt(s.body)
        elif isinstance(s, LetStmt):
            self.env[s.var] = self.expr(s.value)
            self.stmt(s.body)
        elif isinstance(s, IfThenElse):
            if self.expr(s.condition):
                self.stmt(s.then_case)
            elif s.else_case is not None:
                self.stmt(s.else_case)
        elif isinstance(s, BufferStore):
            (index,) = s.indices
            self.env[s.buffer.data][self.expr(index)] = self.expr(s.value)
        elif isinstance(s, Allocate):
            self.env[s.buffer_var] = np.zeros(self.expr(s.extent), s.dtype.numpy_dtype)
            self.stmt(s.body)
        elif isinstance(s, (DeclBuffer, AttrStmt)):
            self.stmt(s.body)
        elif isinstance(s, AssertStmt):
            if not self.expr(s.condition):
                message = self.expr(s.message)
                kind, _, text = message.partition(": ")
                exc = {"TypeError": TypeError, "ValueError": ValueError}.get(kind)
                raise exc(text) if exc else AssertionError(message)
        elif isinstance(s, Evaluate):
            self.expr(s.value)
        else:
            raise NotImplementedError(type(s).__name__)


def run(f: PrimFunc, *args: Any) -> None:
    interp = Interp()
    for param, arg in zip(f.params, args):
        interp.env[param] = arg
    interp.stmt(f.body)


# --------------------------------------------------------------------------- programs


def buf(name: str, shape: tuple[object, ...], dtype: str = "float32", **kw: Any) -> Buffer:
    return Buffer(name, make_data_var(f"{name}_data", as_dtype(dtype)), shape, dtype, **kw)


def loop(var: Var, extent: object, body: Stmt, kind: ForKind = ForKind.SERIAL) -> For:
    ext = const(extent) if isinstance(extent, int) else extent
    return For(var, const(0), ext, kind, body)


def func(body: Stmt, *buffers: Buffer, name: str = "f") -> PrimFunc:
    handles = [Var(b.name.lower(), "handle") for b in buffers]
    return PrimFunc(
        tuple(handles), body, buffer_map=dict(zip(handles, buffers)), attrs={"global_symbol": name}
    )


def iv(name: str, extent: int, kind: IterKind = IterKind.SPATIAL) -> IterVar:
    return IterVar(Var(name), Range(const(0), const(extent)), kind)


def elemwise() -> PrimFunc:
    a, c = buf("A", (16, 16)), buf("C", (16, 16))
    i, j = Var("i"), Var("j")
    return func(
        loop(i, 16, loop(j, 16, BufferStore(c, a[i, j] * 2.0, (i, j)))), a, c, name="elemwise"
    )


def matmul() -> PrimFunc:
    a, b, c = buf("A", (8, 8)), buf("B", (8, 8)), buf("C", (8, 8))
    i, j, k = Var("i"), Var("j"), Var("k")
    vi, vj, vk = iv("vi", 8), iv("vj", 8), iv("vk", 8, IterKind.REDUCE)
    update = BufferStore(
        c, c[vi.var, vj.var] + a[vi.var, vk.var] * b[vk.var, vj.var], (vi.var, vj.var)
    )
    block = Block(
        (vi, vj, vk), (), (), "C", update, init=BufferStore(c, const(0.0), (vi.var, vj.var))
    )
    body = loop(i, 8, loop(j, 8, loop(k, 8, BlockRealize((i, j, k), const(True), block))))
    return func(body, a, b, c, name="matmul")


def where() -> PrimFunc:
    a = buf("A", (10,))
    o, t = Var("o"), Var("t")
    vi = iv("vi", 10)
    block = Block((vi,), (), (), "B", BufferStore(a, a[vi.var] + 1.0, (vi.var,)))
    body = loop(o, 3, loop(t, 4, BlockRealize((o * 4 + t,), o * 4 + t < 10, block)))
    return func(body, a, name="where")


def two_stage() -> PrimFunc:
    a, c = buf("A", (4, 4)), buf("C", (4, 4))
    tmp = buf("T", (4, 4))
    i, j, x, y = Var("i"), Var("j"), Var("x"), Var("y")
    produce = loop(i, 4, loop(j, 4, BufferStore(tmp, a[i, j] + 1.0, (i, j))))
    consume = loop(x, 4, loop(y, 4, BufferStore(c, tmp[y, x] * 3.0, (x, y))))
    root = Block((), (), (), "root", SeqStmt((produce, consume)), alloc_buffers=(tmp,))
    return func(BlockRealize((), const(True), root), a, c, name="two_stage")


def tiles() -> PrimFunc:
    a = buf("A", (8, 8))
    m = buf("M", (2, 8))
    t, r, c = Var("t"), Var("r"), Var("c")
    vt = iv("vt", 4)
    region = BufferRegion(a, (Range(vt.var * 2, const(2)), Range(const(0), const(8))))
    store = loop(
        r, 2, loop(c, 8, BufferStore(m, m[r, c] + (vt.var * 10).astype("float32"), (r, c)))
    )
    block = Block((vt,), (), (), "tile", store, match_buffers=(MatchBufferRegion(m, region),))
    return func(loop(t, 4, BlockRealize((t,), const(True), block)), a, name="tiles")


def row_sum() -> PrimFunc:
    a, s = buf("A", (4, 6)), buf("S", (4,))
    i = Var("i")
    k = IterVar(Var("k"), Range(const(0), const(6)), IterKind.REDUCE)
    return func(
        loop(i, 4, BufferStore(s, Reduce(ReduceKind.SUM, a[i, k.var], (k,)), (i,))),
        a,
        s,
        name="row_sum",
    )


def row_max_block() -> PrimFunc:
    a, s = buf("A", (4, 6)), buf("S", (4,))
    i, k = Var("i"), Var("k")
    vi, vk = iv("vi", 4), iv("vk", 6, IterKind.REDUCE)
    from irbuilder.ir import Max

    update = BufferStore(s, Max(s[vi.var], a[vi.var, vk.var]), (vi.var,))
    block = Block(
        (vi, vk), (), (), "max", update, init=BufferStore(s, const(float("-inf")), (vi.var,))
    )
    return func(
        loop(i, 4, loop(k, 6, BlockRealize((i, k), const(True), block))), a, s, name="row_max"
    )


def symbolic_add() -> PrimFunc:
    n = Var("n")
    a, b, c = buf("A", (n,)), buf("B", (n,)), buf("C", (n,))
    i = Var("i")
    return func(loop(i, n, BufferStore(c, a[i] + b[i], (i,))), a, b, c, name="vadd")


def vectorized() -> PrimFunc:
    a, c = buf("A", (4, 8)), buf("C", (4, 8))
    i, j = Var("i"), Var("j")
    body = loop(i, 4, loop(j, 8, BufferStore(c, a[i, j] + 1.0, (i, j)), ForKind.VECTORIZED))
    return func(body, a, c, name="vec")


def unrolled() -> PrimFunc:
    a, c = buf("A", (4, 4)), buf("C", (4, 4))
    i, j = Var("i"), Var("j")
    body = loop(i, 4, loop(j, 4, BufferStore(c, a[j, i], (i, j)), ForKind.UNROLLED))
    return func(body, a, c, name="transpose")


def offset_local() -> PrimFunc:
    a, c = buf("A", (3, 3)), buf("C", (3, 3))
    tmp = Buffer("T", make_data_var("T_data", F32), (3, 3), F32, elem_offset=const(2))
    i, j = Var("i"), Var("j")
    fill = loop(i, 3, loop(j, 3, BufferStore(tmp, a[i, j] - 1.0, (i, j))))
    x, y = Var("x2"), Var("y2")
    copy = loop(x, 3, loop(y, 3, BufferStore(c, tmp[x, y], (x, y))))
    body = Allocate(tmp.data, F32, const(11), const(True), DeclBuffer(tmp, SeqStmt((fill, copy))))
    return func(body, a, c, name="offset_local")


PROGRAMS: dict[str, Callable[[], PrimFunc]] = {
    "elemwise": elemwise,
    "matmul": matmul,
    "where": where,
    "two_stage": two_stage,
    "tiles": tiles,
    "row_sum": row_sum,
    "row_max": row_max_block,
    "vadd": symbolic_add,
    "vec": vectorized,
    "transpose": unrolled,
    "offset_local": offset_local,
}


def rand(*shape: int) -> np.ndarray[Any, Any]:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype("float32")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("opt_level", [0, 3])
def test_pipeline_with_verify_each(name: str, opt_level: int) -> None:
    f = PROGRAMS[name]()
    out = lower(f, opt_level=opt_level, verify_each=True)
    lowering.verify_well_formed(out, lowered=True)


def _lowered(name: str) -> PrimFunc:
    return lower(PROGRAMS[name](), verify_each=True)


def test_values_elemwise() -> None:
    a, c = rand(16, 16), np.zeros((16, 16), "float32")
    run(_lowered("elemwise"), a, c)
    np.testing.assert_allclose(c, a * 2)


def test_values_matmul_with_init() -> None:
    a, b = rand(8, 8), rand(8, 8) + 1
    c = np.full((8, 8), 99.0, "float32")  # init must overwrite the garbage
    run(_lowered("matmul"), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_values_where() -> None:
    a = np.zeros(10, "float32")
    run(_lowered("where"), a)
    np.testing.assert_array_equal(a, np.ones(10))


def test_values_two_stage_and_tiles_and_reductions() -> None:
    a, c = rand(4, 4), np.zeros((4, 4), "float32")
    run(_lowered("two_stage"), a, c)
    np.testing.assert_allclose(c, (a.T + 1) * 3, rtol=1e-6)

    t = np.zeros((8, 8), "float32")
    run(_lowered("tiles"), t)
    np.testing.assert_array_equal(t, np.repeat(np.arange(4) * 10, 2)[:, None].repeat(8, 1))

    a, s = rand(4, 6), np.zeros(4, "float32")
    run(_lowered("row_sum"), a, s)
    np.testing.assert_allclose(s, a.sum(1), rtol=1e-5)
    run(_lowered("row_max"), a, s)
    np.testing.assert_allclose(s, a.max(1))


def test_vectorized_loop_is_lowered_to_ramps() -> None:
    from irbuilder.ir import Ramp, post_order_visit

    ramps: list[Ramp] = []
    post_order_visit(
        _lowered("vec").body, lambda n: ramps.append(n) if isinstance(n, Ramp) else None
    )
    assert ramps and all(r.lanes == 8 for r in ramps)


def test_opt_level_zero_still_lowers_fully() -> None:
    out = lower(matmul(), opt_level=0)
    lowering.verify_well_formed(out, lowered=True)
    a, b, c = rand(8, 8), rand(8, 8), np.zeros((8, 8), "float32")
    run(out, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_values_symbolic_vectorized_unrolled_offset() -> None:
    a, b, c = rand(5), rand(5) + 1, np.zeros(5, "float32")
    run(_lowered("vadd"), a, b, c)
    np.testing.assert_allclose(c, a + b)

    a, c = rand(4, 8), np.zeros((4, 8), "float32")
    run(_lowered("vec"), a, c)
    np.testing.assert_allclose(c, a + 1)

    a, c = rand(4, 4), np.zeros((4, 4), "float32")
    run(_lowered("transpose"), a, c)
    np.testing.assert_array_equal(c, a.T)

    a, c = rand(3, 3), np.zeros((3, 3), "float32")
    run(_lowered("offset_local"), a, c)
    np.testing.assert_allclose(c, a - 1)


def test_entry_checks_reject_bad_arguments() -> None:
    f = _lowered("vadd")
    ok = np.zeros(4, "float32")
    with pytest.raises(ValueError, match="B: expected shape\\[0\\] == n = 4, got 5$"):
        run(f, ok, np.zeros(5, "float32"), ok.copy())
    with pytest.raises(TypeError, match="A: expected dtype float32, got float64$"):
        run(f, np.zeros(4, "float64"), ok, ok.copy())
    with pytest.raises(TypeError, match="C: expected ndim == 1, got 2$"):
        run(f, ok, ok, np.zeros((4, 1), "float32"))
    with pytest.raises(ValueError, match="A: expected a C-contiguous array .*got strides.0. == 8$"):
        run(f, np.zeros(8, "float32")[::2], ok, ok.copy())
    frozen = ok.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="C: expected a writable array"):
        run(f, ok, ok, frozen)
    # a read-only input is fine
    run(f, frozen, ok, ok.copy())


def test_default_pipeline_order() -> None:
    from lowering.transforms.pack_operands import pack_transposed_operands
    from lowering.transforms.reduce_vectorize import vectorize_reductions

    avx2, avx512 = Target("llvm -mcpu=znver3"), Target("llvm -mcpu=znver4")
    names = [p.name for p in default_pipeline(target=avx2)]
    assert names[:5] == [
        "fuse_tensors",
        "bufferize",
        "lower_scalar_return",
        "lower_allocate_const",
        "lower_blocks",
    ]
    late = [p.name.replace("-", "_") for p in default_pipeline(target=avx512)]
    assert late[late.index("insert_entry_checks") + 1 :] == list(LATE_STAGE)
    assert "version_gathers" not in names  # no hardware gathers: no gather fast path
    assert default_pipeline(target=avx2)[4:] == [
        lowering.lower_blocks,
        inline_padding,
        forward_tile_copies,
        distribute_tile_consumers,
        parallelize_loops,
        lowering.plan_allocation_location,
        check_parallel_races,
        fuse_parallel_loops,
        compact_buffer_allocation,
        lowering.simplify,
        lowering.declare_buffers,
        lowering.flatten_buffer,
        hoist_allocations,
        reuse_memory,
        sink_reduction_loops,
        merge_split_loops,
        fuse_contiguous_loops,
        lowering.unroll_loop,
        lowering.simplify,
        pack_transposed_operands,
        vectorize_reductions,
        lowering.vectorize_loop,
        lowering.simplify,
        lowering.insert_entry_checks,
        interchange_divided_reductions,
        split_divided_loops,
        partition_loops,
        branch_select_updates,
        promote_index_reductions,
        tabulate_bindings,
        transpose_tiles,
        vectorize_streams,
        vectorize_remainders,
        distribute_reductions,
        vectorize_row_reductions,
        jam_parallel_reductions,
        tile_reduction_panels,
        interchange_reductions,
        promote_accumulators,
        vectorize_parallel_columns,
        version_accumulator_nests,
        privatize_scatter_adds,
        align_streams,
        mark_streams,
        lowering.simplify,
    ]
    # opt_level 0: the straightforward translation, no late stage at all
    assert [p.name for p in default_pipeline(0, avx512)][-1] == "insert_entry_checks"


def test_lower_accepts_module_and_records_pass_times() -> None:
    mod = IRModule({"elemwise": elemwise(), "matmul": matmul()})
    timer = TimePasses()
    out = lower(mod, verify_each=True, instruments=[timer])
    assert isinstance(out, IRModule) and sorted(out.functions) == ["elemwise", "matmul"]
    assert timer.calls["lower_blocks"] == 1 and timer.calls["insert_entry_checks"] == 1
    assert "flatten_buffer" in timer.report()


def test_tvm_style_instruments_see_every_pass_and_can_skip_one() -> None:
    """An instrument written for TVM (run_before_pass(mod, info), should_run, enter/exit)."""
    events: list[str] = []

    class TVMStyle:
        def enter_pass_ctx(self) -> None:
            events.append("enter")

        def exit_pass_ctx(self) -> None:
            events.append("exit")

        def should_run(self, mod: Any, info: Any) -> bool:
            return bool(info.name != "unroll_loop")

        def run_before_pass(self, mod: Any, info: Any) -> None:
            events.append(f"before {info.name} {info.opt_level}")

        def run_after_pass(self, mod: Any, info: Any) -> None:
            events.append(f"after {info.name}")

    with PassContext(instruments=[TVMStyle()]):
        lower(elemwise())
        lower(elemwise())
    assert events[0] == "enter" and events[-1] == "exit" and events.count("enter") == 1
    assert "before lower_blocks 0" in events and "after insert_entry_checks" in events
    assert "before hoist_allocations 1" in events
    assert not any("unroll_loop" in e for e in events)
    assert events.count("before flatten_buffer 0") == 2


def test_an_instrument_may_define_one_hook() -> None:
    seen: list[str] = []

    class AfterOnly:
        def after_pass(self, name: str, ir: Any, seconds: float) -> None:
            seen.append(name)

    lower(elemwise(), instruments=[AfterOnly()])
    assert "flatten_buffer" in seen and "insert_entry_checks" in seen
    assert seen[-1] == "default_pipeline"  # the Sequential itself, after its passes


def test_tvm_spelling_disabled_pass() -> None:
    with PassContext(disabled_pass=["insert_entry_checks"]):
        out = lower(elemwise())
    assert lowering.ENTRY_CHECKED_ATTR not in out.attrs
    with pytest.raises(TypeError, match="a collection of pass names, not a str"):
        PassContext(disabled_passes="unroll_loop")  # type: ignore[arg-type]


def test_an_object_without_instrument_methods_is_refused() -> None:
    with pytest.raises(TypeError, match=r"PassContext: instrument 42 has none of the instrument"):
        PassContext(instruments=[42])  # type: ignore[list-item]


def test_verify_each_names_the_breaking_pass() -> None:
    @function_pass("break_scope")
    def break_scope(f: PrimFunc) -> PrimFunc:
        return f.with_body(BufferStore(f.buffer_map[f.params[0]], const(0.0), (Var("ghost"),)))

    ctx = PassContext(
        verify_each=True,
        verifier=lambda f: lowering.verify_well_formed(
            f, pass_name=PassContext.current().current_pass
        ),
    )
    with (
        ctx,
        pytest.raises(
            WellFormedError, match="after pass 'break_scope': variable 'ghost' is not defined"
        ),
    ):
        break_scope(symbolic_add())


def test_verify_each_rejects_bad_input() -> None:
    a = buf("A", (4,))
    bad = func(BufferStore(a, const(0.0), (Var("ghost"),)), a)
    with pytest.raises(WellFormedError, match="after pass '<input>'"):
        lower(bad, verify_each=True)


def test_disabled_passes_are_inherited() -> None:
    with PassContext(disabled_passes=frozenset({"insert_entry_checks"})):
        out = lower(elemwise())
    assert lowering.ENTRY_CHECKED_ATTR not in out.attrs


def test_elemwise_full_pipeline_keeps_the_design_form() -> None:
    """Through lower_blocks, simplify, unroll and vectorize the elemwise form is unchanged
    (but for the fusion of its two loops, tested on its own)."""
    a, c = buf("A", (16, 16)), buf("C", (16, 16))
    i, j = Var("i"), Var("j")
    f = func(loop(i, 16, loop(j, 16, BufferStore(c, a[i, j], (i, j)))), a, c)
    skipped = frozenset({"insert_entry_checks", "fuse_contiguous_loops"})
    with PassContext(disabled_passes=skipped):
        out = lower(f, verify_each=True)
    a_flat = Buffer("A_flat", a.data, (256,), "float32")
    c_flat = Buffer("C_flat", c.data, (256,), "float32")
    body = loop(i, 16, loop(j, 16, BufferStore(c_flat, a_flat[i * 16 + j], (i * 16 + j,))))
    assert_structural_equal(out.body, DeclBuffer(a_flat, DeclBuffer(c_flat, body)))


def test_pass_names_match_with_either_separator() -> None:
    ctx = PassContext(
        disabled_passes=frozenset({"unroll_loop", "insert-entry-checks"}),
        config={"vectorize_loop": {"max_width": 4}},
    )
    assert not ctx.enabled(lowering.unroll_loop)
    assert not ctx.enabled(lowering.insert_entry_checks)
    assert ctx.enabled(lowering.flatten_buffer)
    assert ctx.option("vectorize_loop", "max_width") == 4
    assert ctx.option("vectorize_loop", "other", 7) == 7


def _compute_matmul() -> PrimFunc:
    """A T.compute reduction built with the IRBuilder (skipped while it is unavailable)."""
    try:
        from irbuilder import IRBuilder
        from irbuilder import tir as T

        with IRBuilder() as ib:
            with T.prim_func():
                T.func_name("mm2")
                a, b, c = (T.arg(n, T.handle()) for n in "abc")
                A = T.match_buffer(a, (4, 5), "float32")
                B = T.match_buffer(b, (5, 3), "float32")
                C = T.match_buffer(c, (4, 3), "float32")
                k = T.reduce_axis(0, 5)
                tmp = T.compute((4, 3), lambda i, j: T.sum(A[i, k] * B[k, j], axis=k))
                T.compute((4, 3), lambda i, j: tmp[i, j] * 2.0, out=C)
        built = ib.get()
    except (ImportError, AttributeError) as err:  # the builder is written concurrently
        pytest.skip(f"IRBuilder T.compute unavailable: {err}")
    assert isinstance(built, PrimFunc)
    return built


def test_compute_generated_blocks_lower_and_run() -> None:
    out = lower(_compute_matmul(), verify_each=True)
    a, b, c = rand(4, 5), rand(5, 3), np.zeros((4, 3), "float32")
    run(out, a, b, c)
    np.testing.assert_allclose(c, 2 * (a @ b), rtol=1e-5)
