"""The ``T`` namespace of the IRBuilder: ``from irbuilder import tir as T``.

Every ``T.*`` construct of TVMScript's TIR dialect (TVM 0.13-0.16 spellings):
frames are used with ``with`` (``with T.prim_func():``, ``with T.grid(4, 4) as
(i, j):``), statements append to the innermost frame, expression builders
return nodes. ``tvmscript.tir`` re-exports this namespace and adds the
``@T.prim_func`` decorator through :func:`register_prim_func_parser`.
"""

from ..ir import FloatImm, IntImm, StringImm
from . import intrin_api as _intrin_api
from . import types as _types
from .arith import (
    ceildiv,
    floordiv,
    floormod,
    infinity,
    max,
    max_value,
    min,
    min_value,
    truncdiv,
    truncmod,
)
from .block import axis, block, block_attr, init, reads, where, writes
from .compute import (
    ReduceAxis,
    all,
    any,
    compute,
    prod,
    reduce_axis,
    reduce_max,
    reduce_min,
    sum,
)
from .control import (
    Assert,
    Else,
    If,
    LetStmt,
    Then,
    While,
    attr,
    bind,
    buffer_store,
    evaluate,
    let,
    realize,
)
from .exprs import (
    Broadcast_ as Broadcast,
)
from .exprs import (
    Cast_ as Cast,
)
from .exprs import (
    MetaVar,
    assume,
    call_extern,
    call_intrin,
    call_pure_extern,
    cast,
    if_then_else,
    likely,
    meta_var,
    reinterpret,
)
from .exprs import (
    Ramp_ as Ramp,
)
from .exprs import (
    Select_ as Select,
)
from .exprs import (
    Shuffle_ as Shuffle,
)
from .func import arg, func_attr, func_name, func_ret, prim_func, register_prim_func_parser, ret
from .intrin_api import *  # noqa: F403  (typed T.<intrinsic> functions)
from .loops import grid, parallel, serial, thread_binding, unroll, vectorized
from .memory import Buffer_ as Buffer
from .memory import Ptr, alloc_buffer, allocate, allocate_const, decl_buffer, match_buffer
from .runtime import (
    address_of,
    call_cpacked,
    call_packed,
    env_thread,
    launch_thread,
    llvm_lookup_intrinsic_id,
    prefetch,
    tvm_access_ptr,
    tvm_stack_alloca,
    tvm_stack_make_array,
    tvm_stack_make_shape,
    tvm_storage_sync,
    tvm_thread_allreduce,
    type_annotation,
)
from .tensor import return_tensors
from .tvm_ops import TVM_OP_BUILDERS as _TVM_OP_BUILDERS
from .types import *  # noqa: F403 - the scalar and vector type objects
from .types import bool_ as bool

__all__ = [
    "Assert",
    "Broadcast",
    "Buffer",
    "Cast",
    "Else",
    "FloatImm",
    "If",
    "IntImm",
    "LetStmt",
    "MetaVar",
    "Ptr",
    "Ramp",
    "ReduceAxis",
    "Select",
    "Shuffle",
    "StringImm",
    "Then",
    "While",
    "all",
    "alloc_buffer",
    "allocate",
    "allocate_const",
    "any",
    "arg",
    "assume",
    "attr",
    "axis",
    "bind",
    "block",
    "block_attr",
    "bool",
    "buffer_store",
    "call_extern",
    "call_intrin",
    "call_pure_extern",
    "cast",
    "ceildiv",
    "infinity",
    "compute",
    "decl_buffer",
    "evaluate",
    "floordiv",
    "floormod",
    "func_attr",
    "func_name",
    "func_ret",
    "grid",
    "if_then_else",
    "init",
    "let",
    "likely",
    "match_buffer",
    "max",
    "max_value",
    "meta_var",
    "min",
    "min_value",
    "parallel",
    "prim_func",
    "prod",
    "reads",
    "realize",
    "reduce_axis",
    "reduce_max",
    "reduce_min",
    "register_prim_func_parser",
    "reinterpret",
    "ret",
    "return_tensors",
    "serial",
    "sum",
    "thread_binding",
    "truncdiv",
    "truncmod",
    "unroll",
    "vectorized",
    "where",
    "writes",
    "address_of",
    "llvm_lookup_intrinsic_id",
    "call_cpacked",
    "call_packed",
    "env_thread",
    "launch_thread",
    "prefetch",
    "tvm_access_ptr",
    "tvm_stack_alloca",
    "tvm_stack_make_array",
    "tvm_stack_make_shape",
    "tvm_storage_sync",
    "tvm_thread_allreduce",
    "type_annotation",
]
__all__ += _intrin_api.__all__
__all__ += sorted(_TVM_OP_BUILDERS)
globals().update(_TVM_OP_BUILDERS)
# In this form (not a generator inside the list) type checkers see the type objects as
# exported too; bool_ comes along (it is T.bool).
__all__ += _types.__all__
