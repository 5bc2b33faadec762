"""A 0-d buffer's default ``elem_offset`` is an int64 0, TVM's default index type for a
buffer without a first dimension to take it from; rfactor keeps the reduced buffer's
offset type in its rf buffer, as TVM (which copies the node), so a 0-d sum's rf buffer
prints ``elem_offset=T.int64(0)``."""

from __future__ import annotations

import numpy as np
from sched_checks import assert_schedule, scheduled

from irbuilder.ir import IntImm
from tvmscript import build, from_source
from tvmscript import tir as T

TARGET = "llvm -mcpu=znver3"


@T.prim_func
def total(A: T.Buffer((64,), "float32"), C: T.Buffer((), "float32")):
    for k0, k1 in T.grid(4, 16):
        with T.block("C"):
            vk = T.axis.reduce(64, k0 * 16 + k1)
            with T.init():
                C[()] = T.float32(0)
            C[()] = C[()] + A[vk]


@T.prim_func
def total_rf(A: T.Buffer((64,), "float32"), C: T.Buffer((), "float32")):
    C_rf = T.alloc_buffer((16,), elem_offset=T.int64(0))
    for k0, k1 in T.grid(4, 16):
        with T.block("C_rf"):
            vk1, vk0 = T.axis.remap("SR", [k1, k0])
            with T.init():
                C_rf[vk1] = T.float32(0)
            C_rf[vk1] = C_rf[vk1] + A[vk0 * 16 + vk1]
    for k1 in range(16):
        with T.block("C"):
            vk1 = T.axis.reduce(16, k1)
            with T.init():
                C[()] = T.float32(0)
            C[()] = C[()] + C_rf[vk1]


def test_a_0d_buffer_defaults_to_an_int64_offset():
    out = total.buffer_map[total.params[1]]
    assert isinstance(out.elem_offset, IntImm) and str(out.elem_offset.dtype) == "int64"
    vec = total.buffer_map[total.params[0]]
    assert str(vec.elem_offset.dtype) == "int32"
    # the default is not printed, and an explicit int32 0 of a 0-d buffer is
    assert "elem_offset" not in total.script()
    explicit = 'T.Buffer((), "float32", elem_offset=0)'
    text = total.script().replace('T.Buffer((), "float32")', explicit)
    assert "elem_offset=0" in from_source(text).script()


def test_rfactor_of_a_0d_sum_keeps_the_offset_type():
    sch = T.Schedule(total, debug_mask="all")
    _, k1 = sch.get_loops(sch.get_block("C"))
    sch.rfactor(k1, 0)
    assert_schedule(total, sch, total_rf)
    rf_alloc = 'C_rf = T.alloc_buffer((16,), "float32", elem_offset=T.int64(0))'
    assert rf_alloc in scheduled(sch).script()
    a = np.arange(64, dtype="float32")
    c = np.zeros((), "float32")
    build(scheduled(sch), target=TARGET)(a, c)
    assert float(c) == float(a.sum())
