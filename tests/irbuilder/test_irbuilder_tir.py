"""Every T.* construct builds the expected node."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from irbuilder import IRBuilder, IRBuilderError
from irbuilder import tir as T
from irbuilder.ir import (
    EQ,
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    Broadcast,
    BufferLoad,
    BufferRegion,
    BufferStore,
    Call,
    CallKind,
    Cast,
    DeclBuffer,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterKind,
    Let,
    LetStmt,
    Max,
    Min,
    Mod,
    PointerType,
    PrimFunc,
    Ramp,
    Select,
    SeqStmt,
    Shuffle,
    SizeVar,
    Stmt,
    StringImm,
    Var,
    While,
    as_dtype,
    structural_equal,
)
from irbuilder.tir import func as func_module


@contextmanager
def kernel(result: list[PrimFunc]) -> Iterator[None]:
    """Open a builder and a prim_func; append the finished function to ``result``."""
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("k")
            yield
    f = b.get()
    assert isinstance(f, PrimFunc)
    result.append(f)


def body_of(build: Callable[[], Any]) -> Stmt:
    out: list[PrimFunc] = []
    with kernel(out):
        build()
    return out[0].body


# -- function level --------------------------------------------------------------------


def test_args_attrs_ret_and_match_buffer() -> None:
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("f")
            a = T.arg("A", T.Buffer[(16,), "float32"])
            n = T.arg("n", T.int32())
            h = T.arg("h", T.handle())
            B = T.match_buffer(h, (n, 4), "int8")
            T.func_attr({"tir.noalias": True})
            ret = T.func_ret(T.int32)
            T.evaluate(0)
    f = b.get()
    assert isinstance(f, PrimFunc)
    assert [p.name for p in f.params] == ["A", "n", "h"]
    assert f.buffer_map[f.params[0]] is a
    assert f.params[1] is n and f.params[0].dtype.is_handle
    assert f.buffer_map[h] is B and B.name == "h" and B.dtype == as_dtype("int8")
    assert B.shape[0] is n
    assert f.attrs == {"tir.noalias": True, "global_symbol": "f"}
    assert f.ret_type == ret == as_dtype("int32")


def test_private_function_has_no_global_symbol() -> None:
    with IRBuilder() as b:
        with T.prim_func(is_private=True):
            T.func_name("hidden")
            T.evaluate(0)
    assert "global_symbol" not in b.get().attrs


def test_prim_func_decorator_needs_parser() -> None:
    # In a fresh interpreter: once tvmscript is imported (as other tests do) the hook is set.
    code = (
        "from irbuilder import tir as T, IRBuilderError\n"
        "try:\n    T.prim_func(lambda: None)\nexcept IRBuilderError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert "needs the parser" in out.stdout


def test_prim_func_decorator_hook() -> None:
    seen: list[Any] = []

    def hook(fn: Any, **kwargs: Any) -> str:
        seen.append((fn, kwargs))
        return "parsed"

    previous = list(func_module._parser_hook)
    T.register_prim_func_parser(hook)
    try:

        def kern() -> None:
            pass

        assert T.prim_func(kern) == "parsed"
        assert T.prim_func(private=True)(kern) == "parsed"
        assert seen[1] == (kern, {"private": True})
    finally:
        func_module._parser_hook[:] = previous  # the real parser, when tvmscript is loaded


def test_buffer_factory_forms() -> None:
    with IRBuilder():
        a = T.Buffer((4, 8), "float16", scope="shared", align=16, offset_factor=2)
        b = T.Buffer[(4,), "int32"]
        c = T.Buffer(16)
        d = T.Buffer((4,), T.float32, data=a.data, strides=(1,), elem_offset=2)
    assert a.dtype == as_dtype("float16") and a.scope == "shared"
    assert a.data_alignment == 16 and a.offset_factor == 2
    assert a.data.type_annotation == PointerType(as_dtype("float16"), "shared")
    assert b.dtype == as_dtype("int32") and len(b.shape) == 1
    assert c.dtype == as_dtype("float32") and c.data_alignment == 64 and c.offset_factor == 1
    assert d.data is a.data and d.elem_offset.value == 2  # type: ignore[attr-defined]
    with pytest.raises(NotImplementedError, match="auto_broadcast"):
        T.Buffer((4,), buffer_type="auto_broadcast")


# -- scalar types ----------------------------------------------------------------------


def test_scalar_types_make_constants_vars_and_casts() -> None:
    c = T.float32(1.0)
    assert isinstance(c, FloatImm) and c.dtype == as_dtype("float32") and c.value == 1.0
    i = T.int64(3)
    assert isinstance(i, IntImm) and i.dtype == as_dtype("int64")
    v = T.int32()
    assert isinstance(v, Var) and v.dtype == as_dtype("int32")
    assert isinstance(T.int32(is_size_var=True), SizeVar)
    assert T.bool().dtype.is_bool and T.bool(True).value == 1  # type: ignore[attr-defined]
    h = T.handle()
    assert h.dtype.is_handle and h.type_annotation is None
    p = T.handle("float32", "global")
    assert p.type_annotation == PointerType(as_dtype("float32"), "global")
    cast = T.float32(v)
    assert isinstance(cast, Cast) and cast.dtype == as_dtype("float32")
    vec = T.float32x4(2.0)
    assert isinstance(vec, Broadcast) and vec.dtype == as_dtype("float32x4")
    assert T.uint8().dtype == as_dtype("uint8") and T.float16.dtype == as_dtype("float16")
    assert T.int8x16.dtype.lanes == 16
    with pytest.raises(TypeError, match="not an integer"):
        T.int32(1.5)


# -- loops -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("maker", "kind"),
    [
        (T.serial, ForKind.SERIAL),
        (T.parallel, ForKind.PARALLEL),
        (T.vectorized, ForKind.VECTORIZED),
        (T.unroll, ForKind.UNROLLED),
    ],
)
def test_loop_kinds(maker: Callable[..., Any], kind: ForKind) -> None:
    def build() -> None:
        with maker(2, 10, annotations={"pragma": 1}) as i:
            T.evaluate(i)

    loop = body_of(build)
    assert isinstance(loop, For) and loop.kind is kind
    assert loop.min.value == 2 and loop.extent.value == 8  # type: ignore[attr-defined]
    assert loop.annotations == {"pragma": 1}
    assert isinstance(loop.body, Evaluate) and loop.body.value is loop.loop_var


def test_loop_int64_bounds() -> None:
    def build() -> None:
        with T.serial(T.int64(4)) as i:
            T.evaluate(i)

    loop = body_of(build)
    assert isinstance(loop, For) and loop.loop_var.dtype == as_dtype("int64")


def test_grid_and_thread_binding() -> None:
    def build() -> None:
        with T.grid(2, 3) as (i, j):
            with T.thread_binding(8, thread="threadIdx.x") as t:
                T.evaluate(i + j + t)

    outer = body_of(build)
    assert isinstance(outer, For) and outer.extent.value == 2  # type: ignore[attr-defined]
    inner = outer.body
    assert isinstance(inner, For) and inner.extent.value == 3  # type: ignore[attr-defined]
    bound = inner.body
    assert isinstance(bound, For) and bound.kind is ForKind.THREAD_BINDING
    assert bound.thread_binding is not None
    assert bound.thread_binding.thread_tag == "threadIdx.x"
    assert bound.thread_binding.kind is IterKind.THREAD
    with IRBuilder(), pytest.raises(TypeError, match="thread tag"):
        T.thread_binding(8)


# -- control -----------------------------------------------------------------------------


def test_if_then_else_and_while() -> None:
    def build() -> None:
        n = T.int32()
        with T.If(n > 0):
            with T.Then():
                T.evaluate(1)
            with T.Else():
                T.evaluate(2)
        with T.While(n < 10):
            T.evaluate(3)
        with T.If(n == 1):
            with T.Then():
                T.evaluate(4)

    seq = body_of(build)
    assert isinstance(seq, SeqStmt)
    first, loop, second = seq.seq
    assert isinstance(first, IfThenElse)
    assert first.then_case.value.value == 1  # type: ignore[attr-defined]
    assert first.else_case.value.value == 2  # type: ignore[union-attr]
    assert isinstance(loop, While) and loop.body.value.value == 3  # type: ignore[attr-defined]
    assert isinstance(second, IfThenElse) and second.else_case is None
    assert isinstance(second.condition, EQ)


def test_if_without_then_and_non_bool_condition() -> None:
    with IRBuilder():
        with T.prim_func():
            with pytest.raises(IRBuilderError, match=r"T\.If frame closed without a T\.Then"):
                with T.If(T.int32() > 0):
                    pass
            with pytest.raises(TypeError, match="condition must be bool, got float32"):
                T.If(T.float32())


def test_assert_has_no_body() -> None:
    def build() -> None:
        n = T.int32()
        T.Assert(n > 0, "ValueError: n must be positive")
        T.evaluate(n)

    seq = body_of(build)
    assert isinstance(seq, SeqStmt)
    stmt = seq.seq[0]
    assert isinstance(stmt, AssertStmt)
    assert isinstance(stmt.message, StringImm)
    assert stmt.message.value == "ValueError: n must be positive"


def test_let_forms() -> None:
    def build() -> None:
        with T.LetStmt(T.int32(5) + 1) as x:
            T.evaluate(x)
        v = T.int32()
        with T.let(v, 3) as y:
            assert y is v
            T.evaluate(y)
        with T.LetStmt(T.float32(1.0), T.float32):
            pass

    seq = body_of(build)
    assert isinstance(seq, SeqStmt)
    first, second, third = seq.seq
    assert isinstance(first, LetStmt) and first.value.value == 6  # type: ignore[attr-defined]
    assert isinstance(second, LetStmt) and second.value.value == 3  # type: ignore[attr-defined]
    assert isinstance(third, LetStmt) and third.var.dtype == as_dtype("float32")
    v = T.int32()
    expr = T.let(v, 1, v + 1)
    assert isinstance(expr, Let) and expr.var is v
    with IRBuilder(), pytest.raises(TypeError, match="does not match annotation"):
        T.LetStmt(T.int32(1), "float32")


def test_attr_and_evaluate() -> None:
    def build() -> None:
        with T.attr(0, "pragma_x", 4):
            T.evaluate(T.call_extern("int32", "puts", "hi"))

    stmt = body_of(build)
    assert isinstance(stmt, AttrStmt) and stmt.attr_key == "pragma_x"
    assert stmt.value.value == 4  # type: ignore[attr-defined]
    call = stmt.body.value  # type: ignore[attr-defined]
    assert isinstance(call, Call) and call.kind is CallKind.EXTERN and call.op == "puts"
    assert isinstance(call.args[0], StringImm)


def test_buffer_store_checks() -> None:
    out: list[PrimFunc] = []
    with kernel(out):
        a = T.arg("A", T.Buffer((4, 4), "float32"))
        n = T.arg("N", T.Buffer((4,), "int32"))
        T.buffer_store(a, 1, [0, 1])
        T.buffer_store(n, 2, [0])
        T.buffer_store(a, T.float32(3.0), [1, 1])
        with pytest.raises(IndexError, match="'A' has 2 dimensions, stored with 1 indices"):
            T.buffer_store(a, 1.0, [0])
        # Another scalar type is cast, as TVM's BufferStore builder does; lanes must match.
        with pytest.raises(TypeError, match="cannot store a float32x4 value into buffer 'N'"):
            T.buffer_store(n, T.Broadcast(a[0, 0], 4), [0])
        T.buffer_store(a, T.Broadcast(1.0, 4), [0, T.Ramp(0, 1, 4)])
    seq = out[0].body
    assert isinstance(seq, SeqStmt)
    first, second, third, vec = seq.seq
    assert isinstance(first, BufferStore) and isinstance(first.value, FloatImm)
    assert isinstance(second, BufferStore) and second.value.dtype == as_dtype("int32")
    assert isinstance(third, BufferStore)
    assert isinstance(vec, BufferStore) and vec.value.dtype == as_dtype("float32x4")


# -- memory ------------------------------------------------------------------------------


def test_allocate_returns_data_var_with_1d_extent() -> None:
    def build() -> None:
        with T.allocate([4, 8], "float32", "global") as data:
            assert isinstance(data, Var) and data.dtype.is_handle
            with T.decl_buffer((4, 8), "float32", data=data) as buf:
                T.buffer_store(buf, 0.0, [0, 0])

    alloc = body_of(build)
    assert isinstance(alloc, Allocate)
    assert alloc.extent.value == 32 and alloc.dtype == as_dtype("float32")  # type: ignore[attr-defined]
    decl = alloc.body
    assert isinstance(decl, DeclBuffer) and decl.buffer.data is alloc.buffer_var
    assert isinstance(decl.body, BufferStore)


def test_decl_buffer_without_data_allocates_and_alias_does_not() -> None:
    out: list[PrimFunc] = []
    with kernel(out):
        a = T.arg("A", T.Buffer((16,), "float32"))
        with T.decl_buffer((2, 3), "int32") as tmp:
            T.buffer_store(tmp, 1, [0, 0])
        with T.decl_buffer((4, 4), "float32", data=a.data) as alias:
            T.buffer_store(alias, 1.0, [0, 0])
    seq = out[0].body
    assert isinstance(seq, SeqStmt)
    alloc, alias_decl = seq.seq
    assert isinstance(alloc, Allocate) and alloc.extent.value == 6  # type: ignore[attr-defined]
    assert isinstance(alloc.body, DeclBuffer) and alloc.body.buffer.data is alloc.buffer_var
    assert isinstance(alias_decl, DeclBuffer) and alias_decl.buffer.data is a.data


def test_alloc_buffer_in_block_and_at_function_scope() -> None:
    out: list[PrimFunc] = []
    with kernel(out):
        root_buf = T.alloc_buffer((4,), "float32")
        with T.block("b"):
            local = T.alloc_buffer((2,), "int32", scope="local")
            T.buffer_store(local, 0, [0])
            T.buffer_store(root_buf, 1.0, [0])
    realize = out[0].body
    assert isinstance(realize, BlockRealize) and realize.block.name_hint == "root"
    assert realize.block.alloc_buffers == (root_buf,)
    inner = realize.block.body
    assert isinstance(inner, BlockRealize)
    assert inner.block.alloc_buffers == (local,)
    # The block's own allocation is not an access region.
    assert [r.buffer for r in inner.block.writes] == [root_buf]


def _below_root(func: PrimFunc) -> Stmt:
    """The body inside the implicit root block a function holding blocks gets."""
    root = func.body
    assert isinstance(root, BlockRealize) and root.block.name_hint == "root"
    assert (root.block.reads, root.block.writes) == ((), ())
    return root.block.body


def test_match_buffer_in_block() -> None:
    out: list[PrimFunc] = []
    with kernel(out):
        a = T.arg("A", T.Buffer((8, 8), "float32"))
        with T.serial(1):  # not the root block, whose regions are never inferred
            with T.block("b"):
                sub = T.match_buffer(a[0:4, 4:8], (4, 4))
                T.buffer_store(sub, 0.0, [0, 0])
    block = _below_root(out[0]).body.block  # type: ignore[attr-defined]
    assert isinstance(block, Block)
    (match,) = block.match_buffers
    assert match.buffer is sub and match.source.buffer is a
    assert match.source.region[1].min.value == 4  # type: ignore[attr-defined]
    assert match.source.region[1].extent.value == 4  # type: ignore[attr-defined]
    # Writes through the matched buffer count as writes to its source region.
    assert block.writes[0].buffer is a


def test_match_buffer_errors() -> None:
    with IRBuilder():
        with T.prim_func():
            with pytest.raises(IRBuilderError, match=r"handle parameter added with T\.arg"):
                T.match_buffer(T.handle(), (4,))
            with T.serial(2):
                with pytest.raises(IRBuilderError, match=r"not inside T\.serial"):
                    T.match_buffer(T.handle(), (4,))


# -- blocks --------------------------------------------------------------------------------


def test_block_with_axes_reads_writes_where_init_attr() -> None:
    out: list[PrimFunc] = []
    with kernel(out):
        a = T.arg("A", T.Buffer((8, 8), "float32"))
        c = T.arg("C", T.Buffer((8,), "float32"))
        with T.grid(8, 8) as (i, k):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                vs = T.axis.S((0, 8), i)
                T.axis.scan(8, i)
                T.axis.opaque(8, i, dtype="int64")
                T.reads(a[vi, vk], [c[vi]])
                T.writes(c[vi : vi + 1])
                T.where(i < 7)
                T.block_attr({"meta": 1})
                with T.init():
                    T.buffer_store(c, 0.0, [vi])
                T.buffer_store(c, c[vi] + a[vi, vk], [vs])
    realize = _below_root(out[0]).body.body  # type: ignore[attr-defined]
    assert isinstance(realize, BlockRealize)
    block = realize.block
    kinds = [iv.kind for iv in block.iter_vars]
    assert kinds == [
        IterKind.SPATIAL,
        IterKind.REDUCE,
        IterKind.SPATIAL,
        IterKind.SCAN,
        IterKind.OPAQUE,
    ]
    assert block.iter_vars[4].var.dtype == as_dtype("int64")
    assert isinstance(realize.iter_values[4], Cast)
    assert [r.buffer.name for r in block.reads] == ["A", "C"]
    assert [r.buffer.name for r in block.writes] == ["C"]
    assert block.annotations == {"meta": 1}
    assert isinstance(block.init, BufferStore)
    assert not structural_equal(realize.predicate, IntImm(as_dtype("bool"), 1))
    with IRBuilder(), T.prim_func(), T.block("x"):
        with pytest.raises(IRBuilderError, match="is not the var of an enclosing loop"):
            T.axis.remap("S", [T.int32()])


def test_inferred_regions_points_and_inner_loops() -> None:
    out: list[PrimFunc] = []
    with kernel(out):
        a = T.arg("A", T.Buffer((16, 16), "float32"))
        b = T.arg("B", T.Buffer((16,), "float32"))
        with T.serial(4) as i:
            with T.block("b"):
                vi = T.axis.spatial(4, i)
                with T.serial(4) as j:
                    T.buffer_store(b, a[vi * 4 + j, 3] + a[vi * 4 + j, 5], [vi * 4 + j])
    block = _below_root(out[0]).body.block  # type: ignore[attr-defined]
    (read,) = block.reads
    assert read.buffer is a
    row, col = read.region
    assert row.extent.value == 4
    assert structural_equal(row.min, block.iter_vars[0].var * 4)
    assert col.min.value == 3 and col.extent.value == 3
    (write,) = block.writes
    assert write.region[0].extent.value == 4


def test_inferred_region_falls_back_to_full_dimension() -> None:
    out: list[PrimFunc] = []
    with kernel(out):
        a = T.arg("A", T.Buffer((16,), "float32"))
        idx = T.arg("I", T.Buffer((4,), "int32"))
        with T.serial(1):  # not the root block, whose regions are never inferred
            with T.block("gather"):
                with T.serial(4) as j:
                    T.buffer_store(a, 0.0, [idx[j]])
    block = _below_root(out[0]).body.block  # type: ignore[attr-defined]
    write = block.writes[0]
    assert write.region[0].min.value == 0 and write.region[0].extent.value == 16
    assert [r.buffer for r in block.reads] == [idx]


def test_block_regions_declared_twice() -> None:
    with IRBuilder(), T.prim_func():
        a = T.arg("A", T.Buffer((4,), "float32"))
        with T.block("b"):
            T.reads(a[0])
            with pytest.raises(IRBuilderError, match=r"T\.reads given twice"):
                T.reads(a[1])


# -- expressions ---------------------------------------------------------------------------


def test_min_max_and_divisions() -> None:
    x, y = T.int32(), T.int32()
    assert isinstance(T.min(x, y), Min) and isinstance(T.max(x, 1), Max)
    assert T.min(2, 3).value == 2  # type: ignore[attr-defined]
    assert isinstance(T.floordiv(x, y), FloorDiv) and isinstance(T.floormod(x, 4), FloorMod)
    assert isinstance(T.truncdiv(x, y), Div) and isinstance(T.truncmod(x, y), Mod)
    assert T.truncdiv(-7, 2).value == -3 and T.truncmod(-7, 2).value == -1  # type: ignore[attr-defined]
    assert T.floordiv(-7, 2).value == -4  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="integer operands"):
        T.truncdiv(T.float32(), 2.0)


def test_select_if_then_else_cast_reinterpret() -> None:
    c = T.bool()
    sel = T.Select(c, 1.0, T.float32())
    assert isinstance(sel, Select) and sel.dtype == as_dtype("float32")
    ite = T.if_then_else(c, 1, 2)
    assert isinstance(ite, Call) and ite.kind is CallKind.BUILTIN and ite.op == "if_then_else"
    assert isinstance(T.cast(T.int32(), "float32"), Cast)
    assert isinstance(T.cast(3, "float32"), FloatImm)
    assert isinstance(T.Cast("int64", T.int32()), Cast)
    rei = T.reinterpret("int32", T.float32())
    assert isinstance(rei, Call) and rei.op == "reinterpret" and rei.dtype == as_dtype("int32")
    with pytest.raises(TypeError, match="cannot reinterpret"):
        T.reinterpret("int64", T.float32())


def test_hints_vectors_and_calls() -> None:
    c = T.bool()
    lk = T.likely(c)
    assert isinstance(lk, Call) and lk.op == "likely" and lk.kind is CallKind.BUILTIN
    assume = T.assume(c)
    assert isinstance(assume, Call) and assume.op == "assume"
    ramp = T.Ramp(0, 2, 4)
    assert isinstance(ramp, Ramp) and ramp.dtype == as_dtype("int32x4")
    bc = T.Broadcast(1.0, 8)
    assert isinstance(bc, Broadcast) and bc.dtype == as_dtype("float32x8")
    sh = T.Shuffle([ramp, ramp], [0, 5])
    assert isinstance(sh, Shuffle) and sh.dtype == as_dtype("int32x2")
    pure = T.call_pure_extern("float32", "expf", 1.0)
    assert isinstance(pure, Call) and pure.kind is CallKind.PURE_EXTERN
    intrin = T.call_intrin("float32", "tir.exp", T.float32())
    assert isinstance(intrin, Call) and intrin.op == "exp" and intrin.kind is CallKind.INTRINSIC


UNARY_FLOAT = [
    "exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan",
    "tanh", "sigmoid", "erf", "fabs", "floor", "ceil", "round", "trunc",
]  # fmt: skip


@pytest.mark.parametrize("name", UNARY_FLOAT)
def test_float_math_intrinsics(name: str) -> None:
    fn = getattr(T, name)
    x = T.float64()
    call = fn(x)
    assert isinstance(call, Call) and call.op == name and call.kind is CallKind.INTRINSIC
    assert call.dtype == as_dtype("float64") and call.args == (x,)
    literal = fn(2.0)
    assert isinstance(literal, Call) and literal.dtype == as_dtype("float32")


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "erf"])
def test_float_math_rejects_integers(name: str) -> None:
    with pytest.raises(TypeError, match=rf"T\.{name} needs a float argument, got int32"):
        getattr(T, name)(T.int32())


def test_integer_rounding_abs_and_classification() -> None:
    i = T.int32()
    assert T.floor(i) is i and T.round(i) is i
    ab = T.abs(i)
    assert isinstance(ab, Call) and ab.op == "abs"
    u = T.uint8()
    assert T.abs(u) is u
    assert T.abs(-3).value == 3  # type: ignore[attr-defined]
    nan = T.isnan(T.float32())
    assert isinstance(nan, Call) and nan.dtype.is_bool and nan.op == "isnan"
    assert isinstance(T.isinf(T.float32()), Call)
    assert T.isnan(i).value == 0  # type: ignore[attr-defined]
    pw = T.pow(T.float32(), 2)
    assert isinstance(pw, Call) and pw.op == "pow" and pw.args[1].dtype == as_dtype("float32")
    with pytest.raises(TypeError, match=r"T\.pow needs float"):
        T.pow(i, 2)


def test_limits_and_bits() -> None:
    assert T.max_value("int8").value == 127  # type: ignore[attr-defined]
    assert T.min_value("int32").value == -(2**31)  # type: ignore[attr-defined]
    fmax = T.max_value("float32")
    assert isinstance(fmax, FloatImm) and math.isclose(fmax.value, 3.4028234663852886e38)
    x = T.int32()
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right"):
        call = getattr(T, name)(x, 3)
        assert isinstance(call, Call) and call.op == name and call.kind is CallKind.INTRINSIC
    bn = T.bitwise_not(x)
    assert isinstance(bn, Call) and bn.op == "bitwise_not"
    with pytest.raises(TypeError, match="integer operands"):
        T.bitwise_and(T.float32(), 1)


def test_logical_all_any_and_meta_var() -> None:
    a, b, c = T.bool(), T.bool(), T.bool()
    conj = T.all(a, b, c)
    assert type(conj).__name__ == "And"
    assert type(T.any(a, b)).__name__ == "Or"
    mv = T.meta_var([1, 2])
    assert isinstance(mv, T.MetaVar) and mv.value == [1, 2]


def test_buffer_load_through_subscript_is_a_load() -> None:
    with IRBuilder():
        a = T.Buffer((4,), "float32")
    assert isinstance(a[1], BufferLoad)
    assert isinstance(a[0:2], BufferRegion)


def test_type_object_string_argument_is_a_number() -> None:
    assert T.float32("inf").value == math.inf and T.int32("7").value == 7
    with pytest.raises(TypeError, match=r"T\.int32\('n'\): a string argument is a number .*"
                       r"a fresh variable is T\.int32\(\)"):
        T.int32("n")


@pytest.mark.parametrize(("value", "dtype", "folded"), [
    (T.int32(1), "float32", True),        # TVM's cast folds constants
    (T.int32(-7), "int8", True),
    (T.int64(255), "uint8", True),
    (T.int32(1 << 24), "float32", True),
    (T.int32((1 << 24) + 1), "float32", False),  # not exact in float32: the Cast rounds
    (T.int32(300), "int8", False),        # out of range: the Cast's wrap-around
    (T.int32(-1), "uint8", False),
    (T.int32(1), "bool", False),
])
def test_cast_of_an_exact_integer_constant_folds(value: Any, dtype: str, folded: bool) -> None:
    from irbuilder.ir import Cast, FloatImm, IntImm

    out = T.cast(value, dtype)
    assert str(out.dtype) == dtype
    if folded:
        assert isinstance(out, (IntImm, FloatImm)) and float(out.value) == float(value.value)
    else:
        assert isinstance(out, Cast)
