"""``sch.state`` (TVM's read side: ``mod``, ``get_sref``) and the identity of an unscheduled
function."""

from __future__ import annotations

from irbuilder.ir import IRModule
from tvmscript import tir as T


@T.prim_func
def scale(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * 2.0


def test_an_unscheduled_function_is_the_given_one():
    one = T.Schedule(scale)
    two = T.Schedule(IRModule({"main": scale}))
    assert one.mod["main"].same_as(scale)
    assert one.mod["main"].same_as(two.mod["main"])
    assert one.state.mod["main"].same_as(two.state.mod["main"])
    (i,) = one.get_loops(one.get_block("B"))
    one.split(i, [2, 4])
    assert not one.mod["main"].same_as(scale)


def test_state_gives_the_schedules_srefs():
    sch = T.Schedule(scale)
    rv = sch.get_block("B")
    sref = sch.get_sref(rv)
    assert sref.stmt.same_as(sch.get(rv))
    assert sch.state.get_sref(sch.get(rv)).same_as(sref)
