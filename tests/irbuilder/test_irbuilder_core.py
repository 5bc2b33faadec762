"""The IRBuilder itself: the seed example, threads, nesting, spans, def_ and misuse errors."""

from __future__ import annotations

import threading

import pytest

from irbuilder import IRBuilder, IRBuilderError, def_, def_many, with_span
from irbuilder import ir_module as I
from irbuilder import tir as T
from irbuilder.ir import (
    Block,
    BlockRealize,
    Buffer,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IRModule,
    IterKind,
    IterVar,
    LetStmt,
    PrimFunc,
    Range,
    SeqStmt,
    Span,
    Var,
    as_dtype,
    assert_structural_equal,
    const,
    make_data_var,
)


def _seed_example() -> PrimFunc:
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name("main")
            buffer_a = T.Buffer((128, 128, 128), "float32")
            buffer_b = T.Buffer((128, 128, 128), "float32")
            T.arg("A", buffer_a)
            T.arg("B", buffer_b)
            with T.grid(128, 128, 128) as (i, j, k):
                def_many(["i", "j", "k"], [i, j, k])
                with T.block(name="block"):
                    def_("vi", T.axis.spatial(128, i))
                    def_("vj", T.axis.spatial(128, j))
                    def_("vk", T.axis.reduce(128, k))
    f = b.get()
    assert isinstance(f, PrimFunc)
    return f


def _seed_by_hand() -> PrimFunc:
    f32 = as_dtype("float32")

    def buf(name: str) -> Buffer:
        return Buffer(name, make_data_var(f"{name}_data", f32), (const(128),) * 3, f32)

    a, b = buf("A"), buf("B")
    handle = as_dtype("handle")
    ha, hb = Var("A", handle), Var("B", handle)
    loops = [Var(n) for n in "ijk"]
    vs = [Var("v" + n) for n in "ijk"]
    kinds = [IterKind.SPATIAL, IterKind.SPATIAL, IterKind.REDUCE]
    ivs = tuple(IterVar(v, Range(const(0), const(128)), kd) for v, kd in zip(vs, kinds))
    block = Block(ivs, (), (), "block", Evaluate(const(0)))
    body: object = BlockRealize(tuple(loops), const(True), block)
    for lv in reversed(loops):
        body = For(lv, const(0), const(128), ForKind.SERIAL, body)  # type: ignore[arg-type]
    return PrimFunc((ha, hb), body, None, {ha: a, hb: b}, {"global_symbol": "main"})  # type: ignore[arg-type]


def test_seed_example_matches_hand_built_ir() -> None:
    f = _seed_example()
    assert f.name == "main"
    assert [p.name for p in f.params] == ["A", "B"]
    assert all(p.dtype.is_handle for p in f.params)
    assert f.buffer_map[f.params[0]].name == "A"
    assert f.buffer_map[f.params[0]].data.name == "A_data"
    root = f.body
    # A body holding blocks gets TVM's implicit root block.
    assert isinstance(root, BlockRealize) and root.block.name_hint == "root"
    assert (root.block.reads, root.block.writes, root.block.alloc_buffers) == ((), (), ())
    loop = root.block.body
    assert isinstance(loop, For) and loop.loop_var.name == "i"
    realize = loop.body.body.body  # type: ignore[attr-defined]
    assert isinstance(realize, BlockRealize)
    assert [iv.var.name for iv in realize.block.iter_vars] == ["vi", "vj", "vk"]
    assert [iv.kind for iv in realize.block.iter_vars] == [
        IterKind.SPATIAL,
        IterKind.SPATIAL,
        IterKind.REDUCE,
    ]
    assert all(v is lv for v, lv in zip(realize.iter_values, (loop.loop_var,), strict=False))
    assert_structural_equal(f, _seed_by_hand())


def _build_scaled(factor: float, n: int, barrier: threading.Barrier) -> PrimFunc:
    with IRBuilder() as b:
        with T.prim_func():
            T.func_name(f"scale_{n}")
            a = T.arg("A", T.Buffer((n,), "float32"))
            barrier.wait()  # interleave the two builders
            with T.serial(n) as i:
                barrier.wait()
                T.buffer_store(a, a[i] * factor, [i])
    f = b.get()
    assert isinstance(f, PrimFunc)
    return f


def test_two_threads_build_independent_functions() -> None:
    barrier = threading.Barrier(2)
    results: dict[int, PrimFunc] = {}
    errors: list[BaseException] = []

    def work(n: int, factor: float) -> None:
        try:
            results[n] = _build_scaled(factor, n, barrier)
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(n, fac)) for n, fac in ((4, 2.0), (8, 3.0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for n, factor in ((4, 2.0), (8, 3.0)):
        f = results[n]
        assert f.name == f"scale_{n}"
        loop = f.body
        assert isinstance(loop, For) and loop.extent.value == n  # type: ignore[attr-defined]
        store = loop.body
        assert isinstance(store, BufferStore)
        assert store.value.b.value == factor  # type: ignore[attr-defined]
    assert not IRBuilder.is_in_scope()


def test_builders_nest() -> None:
    with IRBuilder() as outer:
        with T.prim_func():
            T.func_name("outer")
            with IRBuilder() as inner:
                assert IRBuilder.current() is inner
                with T.prim_func():
                    T.func_name("inner")
            assert IRBuilder.current() is outer
    assert outer.get().name == "outer"  # type: ignore[union-attr]
    assert inner.get().name == "inner"  # type: ignore[union-attr]


def test_ir_module_holds_several_functions() -> None:
    with IRBuilder() as b:
        with I.ir_module():
            for name in ("f", "g"):
                with T.prim_func():
                    T.func_name(name)
                    T.evaluate(0)
    mod = b.get()
    assert isinstance(mod, IRModule)
    assert sorted(mod.functions) == ["f", "g"]
    assert mod["g"].name == "g"


def test_with_span_stamps_statements_and_frames() -> None:
    span = Span("k.py", 3, 5, 3, 20)
    with IRBuilder() as b:
        with T.prim_func():
            with b.with_span(span):
                loop = T.serial(4)
            with loop as i:
                with with_span(span):
                    T.evaluate(i)
                T.evaluate(1)
    f = b.get()
    assert isinstance(f, PrimFunc)
    assert f.body.span is span
    body = f.body.body  # type: ignore[attr-defined]
    assert isinstance(body, SeqStmt)
    assert body.seq[0].span is span
    assert body.seq[1].span is None


def test_def_names_vars_and_buffers_and_passes_others() -> None:
    v = Var("v")
    f32 = as_dtype("float32")
    buf = Buffer("buffer", make_data_var("buffer_data", f32), (const(4),), f32)
    assert def_("x", v) is v and v.name == "x"
    assert def_("A", buf) is buf and buf.name == "A" and buf.data.name == "A_data"
    assert def_("n", 3) == 3
    assert def_many(["a", "b"], [Var(), 7])[1] == 7
    with pytest.raises(ValueError, match="2 names for 1 values"):
        def_many(["a", "b"], [v])


def test_bind_frame_closes_with_its_parent() -> None:
    with IRBuilder() as b:
        with T.prim_func():
            a = T.arg("A", T.Buffer((4,), "int32"))
            with T.serial(4) as i:
                x = T.bind(i * 2)
                T.buffer_store(a, x, [i])
    f = b.get()
    loop = f.body  # type: ignore[union-attr]
    assert isinstance(loop, For)
    assert isinstance(loop.body, LetStmt) and loop.body.var is x
    assert isinstance(loop.body.body, BufferStore)


def test_exception_inside_frame_pops_without_finalizing() -> None:
    with IRBuilder() as b:
        with pytest.raises(KeyError):
            with T.prim_func():
                with T.serial(4):
                    raise KeyError("boom")
        assert b.frames == []
        with pytest.raises(IRBuilderError, match="nothing was built"):
            b.get()


# -- misuse ----------------------------------------------------------------------------


def test_statement_without_builder() -> None:
    with pytest.raises(IRBuilderError, match=r"T\.evaluate needs an active IRBuilder"):
        T.evaluate(0)
    with pytest.raises(IRBuilderError, match=r"T\.serial needs an active IRBuilder"):
        T.serial(4)


def test_get_before_frames_closed() -> None:
    with IRBuilder() as b:
        with T.prim_func():
            with T.serial(4):
                with pytest.raises(
                    IRBuilderError, match=r"frames are still open: T\.prim_func, T\.serial"
                ):
                    b.get()


def test_axis_outside_block() -> None:
    with IRBuilder():
        with T.prim_func():
            with T.serial(4) as i:
                with pytest.raises(
                    IRBuilderError,
                    match=r"T\.axis\.spatial must be called directly inside a T\.block frame, "
                    r"not inside T\.serial",
                ):
                    T.axis.spatial(4, i)


def test_store_at_module_level() -> None:
    a = None
    with IRBuilder():
        with I.ir_module():
            with T.prim_func():
                T.func_name("f")
                a = T.arg("A", T.Buffer((4,), "float32"))
            with pytest.raises(
                IRBuilderError, match=r"T\.buffer_store cannot appear directly inside I\.ir_module"
            ):
                T.buffer_store(a, 1.0, [0])
            with pytest.raises(
                IRBuilderError, match=r"T\.serial cannot appear directly inside I\.ir_module"
            ):
                with T.serial(4):
                    pass


def test_statement_with_no_frame_is_a_fragment() -> None:
    # As in TVM, a statement written with no frame open is the builder's result.
    with IRBuilder() as b:
        T.evaluate(0)
    assert isinstance(b.get(), Evaluate)


def test_two_functions_without_module() -> None:
    with IRBuilder():
        with T.prim_func():
            T.evaluate(0)
        with pytest.raises(
            IRBuilderError, match=r"already holds its result \(a finished PrimFunc\).*I\.ir_module"
        ):
            with T.prim_func():
                T.evaluate(0)


def test_frame_closed_twice() -> None:
    with IRBuilder():
        with T.prim_func():
            frame = T.serial(4)
            with frame:
                pass
            with pytest.raises(IRBuilderError, match=r"T\.serial frame closed twice"):
                frame.__exit__(None, None, None)


def test_frame_entered_twice() -> None:
    with IRBuilder():
        with T.prim_func():
            frame = T.serial(4)
            with frame:
                pass
            with pytest.raises(IRBuilderError, match=r"T\.serial frame entered twice"):
                frame.__enter__()


def test_closing_outer_frame_with_inner_open() -> None:
    with IRBuilder() as b:
        func = T.prim_func()
        func.__enter__()
        T.serial(4).__enter__()
        with pytest.raises(
            IRBuilderError, match=r"cannot close T\.prim_func: the inner frame T\.serial"
        ):
            func.__exit__(None, None, None)
        assert [f.kind for f in b.frames] == ["T.prim_func", "T.serial"]


def test_unnamed_function_in_module() -> None:
    with IRBuilder():
        with pytest.raises(IRBuilderError, match=r"needs a name: call T\.func_name"):
            with I.ir_module():
                with T.prim_func():
                    T.evaluate(0)


def test_nested_prim_func() -> None:
    with IRBuilder():
        with T.prim_func():
            with pytest.raises(
                IRBuilderError, match=r"T\.prim_func cannot be nested inside T\.prim_func"
            ):
                with T.prim_func():
                    pass


def test_arg_outside_function() -> None:
    with IRBuilder():
        with T.prim_func():
            with T.serial(2):
                with pytest.raises(
                    IRBuilderError, match=r"T\.arg must be called directly inside T\.prim_func"
                ):
                    T.arg("n", T.int32())


def test_then_outside_if() -> None:
    with IRBuilder():
        with T.prim_func():
            with pytest.raises(
                IRBuilderError, match=r"T\.Then must be directly inside T\.If, not T\.prim_func"
            ):
                with T.Then():
                    pass


def test_init_outside_block() -> None:
    with IRBuilder():
        with T.prim_func():
            with pytest.raises(IRBuilderError, match=r"T\.init must be directly inside T\.block"):
                with T.init():
                    pass
