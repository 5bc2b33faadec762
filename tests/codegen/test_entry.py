"""Kernels called through the runtime's METH_FASTCALL entry wrapper (the production path)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from cgkit import Kernel, loop

from backend.abi.pyentry import (
    BufferParam,
    EntrySpec,
    ScalarParam,
    entry_wrapper_ir,
    make_builtin,
)
from backend.codegen import codegen_module
from backend.runtime import compile_ir
from irbuilder.ir import (
    GT,
    AssertStmt,
    BufferLoad,
    BufferStore,
    Call,
    CallKind,
    FloorDiv,
    ForKind,
    Mul,
    SeqStmt,
    StringImm,
    as_dtype,
    const,
)


def _builtin(release_gil: bool) -> Any:
    n = 1000
    k = Kernel("scale")
    a, c = k.buffer("A", "float32", n), k.buffer("C", "int32", n)
    s = k.scalar("s", "int32")
    check = AssertStmt(GT(s, const(-100, "int32")), StringImm("ValueError: s too small"))
    value = Call(
        as_dtype("float32"), "exp", (BufferLoad(a, (const(0, "int64"),)),), CallKind.INTRINSIC
    )
    body = SeqStmt(
        (
            check,
            loop(
                n,
                lambda i: BufferStore(
                    c,
                    FloorDiv(
                        Call(
                            as_dtype("int32"),
                            "if_then_else",
                            (
                                GT(value, const(0.0, "float32")),
                                const(1000, "int32"),
                                const(0, "int32"),
                            ),
                            CallKind.BUILTIN,
                        ),
                        s,
                    ),
                    (i,),
                ),
                kind=ForKind.PARALLEL,
            ),
            BufferStore(c, Mul(BufferLoad(c, (const(1, "int64"),)), s), (const(0, "int64"),)),
        )
    )
    spec = EntrySpec(
        "scale",
        [BufferParam("A", "float32"), BufferParam("C", "int32"), ScalarParam("s", "int32")],
        release_gil=release_gil,
    )
    text = (
        codegen_module([k.func(body)]) + "\n" + entry_wrapper_ir(spec, "scale", with_prelude=False)
    )
    lib = compile_ir(text, cache=False, name="scale")
    return make_builtin(lib, spec, "scale")


@pytest.mark.parametrize("release_gil", [False, True])
def test_fastcall_entry_runs_kernel_and_raises(release_gil: bool) -> None:
    fn = _builtin(release_gil)
    a = np.ones(1000, np.float32)
    c = np.zeros(1000, np.int32)
    assert fn(a, c, 7) is None
    assert c[0] == (1000 // 7) * 7 and (c[1:] == 1000 // 7).all()
    with pytest.raises(ZeroDivisionError):
        fn(a, c, 0)
    with pytest.raises(ValueError, match="s too small"):
        fn(a, c, -200)
    fn(a, c, -3)
    assert c[5] == 1000 // -3
