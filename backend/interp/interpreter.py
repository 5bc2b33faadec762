"""The reference interpreter: runs a PrimFunc, lowered or not, on numpy arrays.

Slow and literal on purpose: it is the oracle of the differential tests. Value
semantics are in :mod:`.values` and :mod:`.intrinsics`, memory in :mod:`.memory`;
this module walks the IR. What it defines beyond TIR's letter:

- serial execution of every loop kind (parallel, vectorized, unrolled, thread binding);
- a ``BlockRealize`` skips its block when the predicate is false; the block's ``init``
  runs when every reduce iter var sits at its domain minimum (always, when there is
  none); ``alloc_buffers`` get fresh garbage-filled memory; ``match_buffers`` view
  the source region in place;
- ``Select`` evaluates both sides, ``if_then_else`` only the chosen one;
- an ``AssertStmt`` whose message starts with ``"TypeError: "``, ``"ValueError: "`` or
  ``"IndexError: "`` raises that exception with the rest of the message; others raise
  ``AssertionError`` with the whole message;
- accesses outside the memory of the data var raise ``IndexError``; indices are not
  checked against a buffer's logical shape (compiled code does not either).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from irbuilder.ir import (
    BINARY_OP_NAMES,
    REDUCE_COMBINERS,
    Allocate,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    DeclBuffer,
    Evaluate,
    FloatImm,
    For,
    IfThenElse,
    IntImm,
    IterKind,
    Let,
    LetStmt,
    MatchBufferRegion,
    Not,
    PrimExpr,
    PrimFunc,
    Ramp,
    Reduce,
    Select,
    SeqStmt,
    Shuffle,
    SizeVar,
    Stmt,
    StringImm,
    Var,
    While,
    as_dtype,
    message_parts,
    render_message,
)
from irbuilder.tir.memory import ALLOCATE_CONST_DATA

from . import values as V
from .arguments import ArrayArg, bind_arguments
from .calls import FunctionReturn, evaluate_call
from .memory import Pointer, allocate

__all__ = ["Interpreter", "interpret"]

_INT32 = as_dtype("int32")

_ASSERT_PREFIXES: dict[str, type[Exception]] = {
    "TypeError: ": TypeError,
    "ValueError: ": ValueError,
    "IndexError: ": IndexError,
}


def assertion_error(message: str) -> Exception:
    """The exception an ``AssertStmt`` with ``message`` raises (see ARCHITECTURE.md)."""
    for prefix, exc_type in _ASSERT_PREFIXES.items():
        if message.startswith(prefix):
            return exc_type(message[len(prefix) :])
    return AssertionError(message)


class Interpreter:
    """Runs one PrimFunc; :meth:`run` may be called any number of times."""

    _expr_dispatch: ClassVar[dict[type, Callable[[Interpreter, Any], V.Value]]] = {}
    _stmt_dispatch: ClassVar[dict[type, Callable[[Interpreter, Any], None]]] = {}

    def __init__(self, func: PrimFunc, module: Mapping[str, PrimFunc] | None = None) -> None:
        if not isinstance(func, PrimFunc):
            raise TypeError(f"interpret needs a PrimFunc, got {type(func).__name__}")
        self.func = func
        self.module: Mapping[str, PrimFunc] = module or {}
        self._env: dict[int, tuple[Var, Any]] = {}
        self._const_strides: dict[int, list[int]] = {}
        self._view_strides: dict[int, list[int]] = {}
        self._buffer_infos: dict[int, _BufferInfo] = {}
        self._quiet = False  # inside run(): numpy's floating-point errors are ignored

    # -- entry -----------------------------------------------------------------
    def run(self, args: Sequence[Any], *, check_args: bool = True) -> Any:
        """Run the function on ``args`` (arrays for buffer params, numbers for scalars).

        With ``check_args`` the argument count, dtypes, ranks, shapes, strides and
        scalar ranges are checked first (``TypeError``/``ValueError``
        naming the parameter). Without it only the bindings are made, so a lowered
        function's own entry assertions do the checking. Returns the value of ``T.ret``
        (a Python scalar), or None.
        """
        self._env = {}
        result: Any = None
        with np.errstate(all="ignore"):
            self._quiet = True
            try:
                bind_arguments(
                    self.func, list(args), self._bind, self._lookup_opt, self.eval,
                    check=check_args,
                )
                try:
                    self.exec(self.func.body)
                except FunctionReturn as returned:
                    value = returned.value
                    result = value.item() if isinstance(value, np.generic) else value
                    if self.func.ret_type is not None and self.func.ret_type.is_bool:
                        result = bool(result)
            finally:
                self._quiet = False
        self._env = {}
        return result

    def call_function(self, name: str, args: tuple[PrimExpr, ...]) -> V.Value | None:
        """Run the module's function ``name`` (a call between kernels): arrays, data
        pointers and scalars are passed as the compiled code passes them; the callee's
        argument checks run, and its failure propagates."""
        callee = self.module.get(name)
        if callee is None:
            return None
        values = []
        for arg in args:
            value = self.eval(arg)
            values.append(value.array if isinstance(value, ArrayArg) else value)
        returned = Interpreter(callee, self.module).run(values)
        ret = callee.ret_type
        if ret is not None and not ret.is_handle and returned is not None:
            return V.from_python(returned, ret)  # a scalar function called for its value
        return V.from_python(0, _INT32)

    # -- environment -------------------------------------------------------------
    def _bind(self, var: Var, value: Any) -> None:
        self._env[id(var)] = (var, value)

    def _lookup_opt(self, var: Var) -> Any:
        entry = self._env.get(id(var))
        return None if entry is None else entry[1]

    def lookup(self, var: Var) -> Any:
        """The value bound to ``var``; ``NameError`` if it is not in scope."""
        entry = self._env.get(id(var))
        if entry is None:
            raise NameError(f"variable {var.name!r} ({var.dtype}) is used outside its scope")
        return entry[1]

    # -- expressions ---------------------------------------------------------------
    def eval(self, expr: PrimExpr) -> V.Value:
        """The value of ``expr`` in the current environment."""
        cls = type(expr)
        # The leaves, inline (what _eval_var and _eval_int_imm do): most nodes evaluated.
        if cls is Var or cls is SizeVar:
            entry = self._env.get(id(expr))
            if entry is not None:
                return entry[1]
            assert isinstance(expr, Var)
            return self.lookup(expr)  # raises the NameError
        if cls is IntImm:
            return expr.value  # type: ignore[attr-defined]
        handler = self._expr_dispatch.get(cls)
        if handler is None:
            handler = _find_handler(cls, self._expr_dispatch, "eval")
        return handler(self, expr)

    def eval_int(self, expr: PrimExpr, what: str) -> int:
        """The value of a scalar integer (or bool) expression as a Python int."""
        if type(expr) is IntImm:
            return expr.value
        if expr.dtype.is_vector or not (expr.dtype.is_integer or expr.dtype.is_bool):
            raise TypeError(f"{what} must be a scalar integer, got {expr.dtype}")
        return int(self.eval(expr))

    def _eval_var(self, expr: Var) -> V.Value:
        return self.lookup(expr)

    def _eval_int_imm(self, expr: IntImm) -> V.Value:
        return expr.value

    def _eval_float_imm(self, expr: FloatImm) -> V.Value:
        return V.from_python(expr.value, expr.dtype)

    def _eval_string_imm(self, expr: StringImm) -> V.Value:
        return expr.value

    def _eval_cast(self, expr: Cast) -> V.Value:
        return V.cast(self.eval(expr.value), expr.value.dtype, expr.dtype)

    def _eval_binary(self, expr: Any) -> V.Value:
        name = BINARY_OP_NAMES[type(expr)]
        a = expr.a
        operand = a.dtype
        if operand.lanes == 1:
            # quiet: run() evaluates everything under np.errstate(all="ignore")
            return V.scalar_binary(name, self.eval(a), self.eval(expr.b), operand, self._quiet)
        return V.binary(name, self.eval(a), self.eval(expr.b), operand)

    def _eval_not(self, expr: Not) -> V.Value:
        return V.logical_not(self.eval(expr.a), expr.dtype)

    def _eval_select(self, expr: Select) -> V.Value:
        cond = self.eval(expr.condition)
        a = self.eval(expr.true_value)
        b = self.eval(expr.false_value)
        return V.select(cond, expr.condition.dtype, a, b, expr.dtype)

    def _eval_let(self, expr: Let) -> V.Value:
        var = expr.var
        value = self.eval(expr.value)
        env = self._env
        key = id(var)
        saved = env.get(key)
        env[key] = (var, value)
        try:
            return self.eval(expr.body)
        finally:
            _restore(env, key, saved)

    def _eval_ramp(self, expr: Ramp) -> V.Value:
        base = self.eval(expr.base)
        stride = self.eval(expr.stride)
        element = expr.base.dtype
        lanes = [
            V.binary(
                "add", base, V.binary("mul", stride, V.from_python(i, element), element), element
            )
            for i in range(expr.lanes)
        ]
        return V.pack(lanes, expr.dtype)

    def _eval_broadcast(self, expr: Broadcast) -> V.Value:
        value = self.eval(expr.value)
        return V.pack([value] * expr.lanes, expr.dtype)

    def _eval_shuffle(self, expr: Shuffle) -> V.Value:
        lanes: list[V.Scalar] = []
        for vector in expr.vectors:
            lanes.extend(V.to_lanes(self.eval(vector), vector.dtype))
        return V.pack([lanes[i] for i in expr.indices], expr.dtype)

    def _eval_buffer_load(self, expr: BufferLoad) -> V.Value:
        buffer = expr.buffer
        info = self._buffer_info(buffer)
        pointer, offsets = self._locate(buffer, expr.indices, info)
        if len(offsets) == 1:
            if info.view_dtype is not None:  # one plain scalar: Pointer.load's fast path
                view, index = _typed_view(pointer, offsets[0], info)
                if view is not None:
                    item = view[index]
                    return item if info.is_float else int(item)
            return pointer.load(offsets[0], buffer.dtype, info.load_what)
        what = f"load from buffer {buffer.name!r}"
        lanes: list[V.Scalar] = []
        for offset in offsets:
            lanes.extend(V.to_lanes(pointer.load(offset, buffer.dtype, what), buffer.dtype))
        return V.pack(lanes, expr.dtype)

    def _eval_reduce(self, expr: Reduce) -> V.Value:
        op = BINARY_OP_NAMES[REDUCE_COMBINERS[expr.kind]]
        acc = self.eval(expr.init)
        domains = [
            (
                axis.var,
                self.eval_int(axis.dom.min, "reduce axis min"),
                self.eval_int(axis.dom.extent, "reduce axis extent"),
            )
            for axis in expr.axes
        ]

        def loop(depth: int) -> None:
            nonlocal acc
            if depth == len(domains):
                if expr.condition is None or V.truthy(self.eval(expr.condition)):
                    acc = V.binary(op, acc, self.eval(expr.source), expr.dtype)
                return
            var, start, extent = domains[depth]
            if extent <= 0:
                return
            env = self._env
            key = id(var)
            saved = env.get(key)
            try:
                for k in range(start, start + extent):
                    env[key] = (var, V.wrap_int(k, var.dtype))
                    loop(depth + 1)
            finally:
                _restore(env, key, saved)

        loop(0)
        return acc

    def _eval_call(self, expr: Call) -> V.Value:
        return evaluate_call(self, expr)

    # -- buffers ---------------------------------------------------------------------
    def _strides(self, buffer: Buffer) -> list[int]:
        view = self._view_strides.get(id(buffer))
        if view is not None:
            return view
        cached = self._const_strides.get(id(buffer))
        if cached is not None:
            return cached
        info = self._buffer_info(buffer)
        if info.constant:
            strides = self._compute_strides(buffer)
            self._const_strides[id(buffer)] = strides  # the IR keeps the buffer alive
            return strides
        keys = info.stride_vars
        if keys is None:
            return self._compute_strides(buffer)
        # Shape (or strides) of constants and variables: the strides last computed while
        # each variable had the very binding it has now (bindings are fresh tuples, held
        # by the memo) are the strides.
        env = self._env
        entries = [env.get(id(var)) for var in keys]
        memo = info.strides_memo
        if memo is not None:
            for old, new in zip(memo[0], entries):
                if old is not new:
                    break
            else:
                return memo[1]
        strides = self._compute_strides(buffer)
        info.strides_memo = (entries, strides)
        return strides

    def _compute_strides(self, buffer: Buffer) -> list[int]:
        if buffer.strides:
            return [self.eval_int(s, f"stride of buffer {buffer.name!r}") for s in buffer.strides]
        shape = [self.eval_int(s, f"shape of buffer {buffer.name!r}") for s in buffer.shape]
        strides = [1] * len(shape)
        for k in range(len(shape) - 2, -1, -1):
            strides[k] = strides[k + 1] * shape[k + 1]
        return strides

    def _pointer(self, buffer: Buffer) -> Pointer:
        pointer = self.lookup(buffer.data)
        if not isinstance(pointer, Pointer):
            raise TypeError(f"data of buffer {buffer.name!r} is not a pointer: {pointer!r}")
        return pointer

    def _buffer_info(self, buffer: Buffer) -> _BufferInfo:
        entry = self._buffer_infos.get(id(buffer))
        if entry is None or entry.buffer is not buffer:
            entry = _BufferInfo(buffer)
            self._buffer_infos[id(buffer)] = entry  # holds the buffer: its id stays its own
        return entry

    def _addresses(self, buffer: Buffer, indices: Sequence[PrimExpr]) -> tuple[Pointer, list[int]]:
        """The data pointer and the byte offset of every lane of an access."""
        return self._locate(buffer, indices, self._buffer_info(buffer))

    def _locate(
        self, buffer: Buffer, indices: Sequence[PrimExpr], info: _BufferInfo
    ) -> tuple[Pointer, list[int]]:
        if len(indices) != info.ndim:
            raise IndexError(
                f"buffer {buffer.name!r} has {buffer.ndim} dimensions, "
                f"accessed with {len(indices)} indices"
            )
        pointer = self._pointer(buffer)
        strides = self._strides(buffer)
        elem_offset = buffer.elem_offset
        if type(elem_offset) is IntImm:
            base = elem_offset.value
        else:
            base = self.eval_int(elem_offset, info.offset_what)
        lanes = 1
        for index in indices:
            if index.dtype.lanes > lanes:
                lanes = index.dtype.lanes
        if lanes == 1:  # every index a scalar: the common case, without lane columns
            scalars: list[int] = []
            for index in indices:
                dtype = index.dtype
                if not (dtype.is_integer or dtype.is_bool):
                    raise TypeError(f"buffer {buffer.name!r} indexed with a {dtype} value")
                scalars.append(int(self.eval(index)))
            element = base
            for scalar, stride in zip(scalars, strides):
                element += scalar * stride
            return pointer, [element * info.itemsize]
        columns: list[list[int]] = []
        for index in indices:
            if not (index.dtype.is_integer or index.dtype.is_bool):
                raise TypeError(f"buffer {buffer.name!r} indexed with a {index.dtype} value")
            if index.dtype.lanes == 1:
                columns.append([int(self.eval(index))] * lanes)
                continue
            value = [int(x) for x in V.to_lanes(self.eval(index), index.dtype)]
            if len(value) == 1:
                value = value * lanes
            elif len(value) != lanes:
                raise TypeError(f"buffer {buffer.name!r}: indices have different lane counts")
            columns.append(value)
        itemsize = buffer.dtype.itemsize
        offsets = []
        for lane in range(lanes):
            element = base + sum(col[lane] * s for col, s in zip(columns, strides))
            offsets.append(element * itemsize)
        return pointer, offsets

    def _alloc_buffer(self, buffer: Buffer) -> Pointer:
        shape = [self.eval_int(s, f"shape of buffer {buffer.name!r}") for s in buffer.shape]
        if any(n < 0 for n in shape):
            raise ValueError(f"buffer {buffer.name!r} has a negative extent: {shape}")
        if isinstance(buffer.elem_offset, Var) and self._lookup_opt(buffer.elem_offset) is None:
            self._bind(buffer.elem_offset, 0)
        offset = self.eval_int(buffer.elem_offset, f"elem_offset of buffer {buffer.name!r}")
        strides = self._strides(buffer)
        count = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        return allocate(max(count, 0) * buffer.dtype.itemsize, buffer.dtype, buffer.name)

    def _match_buffer(self, match: MatchBufferRegion) -> list[Var]:
        """Bind a match_buffer to view its source region; returns the vars it bound."""
        buffer, source = match.buffer, match.source
        src = source.buffer
        bound: list[Var] = []

        def bind(var: Var, value: int) -> None:
            self._bind(var, V.wrap_int(value, var.dtype))
            bound.append(var)

        src_strides = self._strides(src)
        mins = [self.eval_int(r.min, "match_buffer region min") for r in source.region]
        extents = [self.eval_int(r.extent, "match_buffer region extent") for r in source.region]
        start = self.eval_int(src.elem_offset, f"elem_offset of buffer {src.name!r}")
        start += sum(m * s for m, s in zip(mins, src_strides))
        ndim = buffer.ndim
        if ndim > len(extents):
            raise ValueError(
                f"match_buffer {buffer.name!r} has {ndim} dims, its region has {len(extents)}"
            )
        for dim, extent in zip(buffer.shape, extents[len(extents) - ndim :]):
            if isinstance(dim, Var) and self._lookup_opt(dim) is None:
                bind(dim, extent)
        used_strides = src_strides[len(src_strides) - ndim :]
        if not buffer.strides:
            # TVM's LowerMatchBuffer: a match buffer declared without strides indexes
            # its source region (each index added to the region's start), whatever
            # the source's strides; the view walks the source with them.
            self._view_strides[id(buffer)] = list(used_strides)
        for stride, actual in zip(buffer.strides, used_strides):
            if isinstance(stride, Var) and self._lookup_opt(stride) is None:
                bind(stride, actual)
        wanted = self._strides(buffer)
        shape = [self.eval_int(s, f"shape of buffer {buffer.name!r}") for s in buffer.shape]
        for k, (want, have, n) in enumerate(zip(wanted, used_strides, shape)):
            if n != 1 and want != have:
                raise ValueError(
                    f"match_buffer {buffer.name!r}: stride {want} of dim {k} does not match "
                    f"the source buffer {src.name!r} stride {have}"
                )
        pointer = self._pointer(src)
        if isinstance(buffer.elem_offset, Var) and self._lookup_opt(buffer.elem_offset) is None:
            bind(buffer.elem_offset, start)
            shift = 0
        else:
            shift = start - self.eval_int(buffer.elem_offset, "match_buffer elem_offset")
        self._bind(buffer.data, pointer + shift * src.dtype.itemsize)
        bound.append(buffer.data)
        return bound

    # -- statements --------------------------------------------------------------------
    def exec(self, stmt: Stmt) -> None:
        """Execute ``stmt`` for its effects on memory."""
        handler = self._stmt_dispatch.get(type(stmt))
        if handler is None:
            handler = _find_handler(type(stmt), self._stmt_dispatch, "exec")
        handler(self, stmt)

    def _exec_seq_stmt(self, stmt: SeqStmt) -> None:
        exec_ = self.exec
        for item in stmt.seq:
            exec_(item)

    def _exec_evaluate(self, stmt: Evaluate) -> None:
        self.eval(stmt.value)

    def _exec_buffer_store(self, stmt: BufferStore) -> None:
        buffer = stmt.buffer
        value = self.eval(stmt.value)
        info = self._buffer_info(buffer)
        pointer, offsets = self._locate(buffer, stmt.indices, info)
        expected = buffer.dtype.with_lanes(buffer.dtype.lanes * len(offsets))
        if stmt.value.dtype != expected:
            raise TypeError(
                f"store to buffer {buffer.name!r}: value of type {stmt.value.dtype}, "
                f"the location holds {expected}"
            )
        if len(offsets) == 1:
            if info.view_dtype is not None:  # one plain scalar: Pointer.store's fast path
                view, index = _typed_view(pointer, offsets[0], info)
                if view is not None and view.flags.writeable:
                    view[index] = value
                    return
            pointer.store(offsets[0], buffer.dtype, value, info.store_what)
            return
        what = f"store to buffer {buffer.name!r}"
        lanes = V.to_lanes(value, expected)
        width = buffer.dtype.lanes
        for k, offset in enumerate(offsets):
            chunk = V.pack(lanes[k * width : (k + 1) * width], buffer.dtype)
            pointer.store(offset, buffer.dtype, chunk, what)

    def _exec_let_stmt(self, stmt: LetStmt) -> None:
        var = stmt.var
        value = self.eval(stmt.value)
        env = self._env
        key = id(var)
        saved = env.get(key)
        env[key] = (var, value)
        try:
            self.exec(stmt.body)
        finally:
            _restore(env, key, saved)

    def _exec_attr_stmt(self, stmt: AttrStmt) -> None:
        self.exec(stmt.body)

    def _exec_assert_stmt(self, stmt: AssertStmt) -> None:
        if V.truthy(self.eval(stmt.condition), "assert condition"):
            return
        pieces, values = message_parts(stmt.message)
        texts = []
        for value in values:
            result = self.eval(value)
            texts.append(str(result) if value.dtype.is_handle else str(int(result)))
        raise assertion_error(render_message(pieces, texts))

    def _exec_for(self, stmt: For) -> None:
        start = self.eval_int(stmt.min, "loop min")
        extent = self.eval_int(stmt.extent, "loop extent")
        if extent <= 0:
            return
        var = stmt.loop_var
        dtype = var.dtype
        body = stmt.body
        handler = self._stmt_dispatch.get(type(body))
        if handler is None:
            handler = _find_handler(type(body), self._stmt_dispatch, "exec")
        # wrap_int is the identity on a range inside the type's (the usual case).
        wraps = not (
            dtype.lanes == 1
            and dtype.is_integer
            and dtype.min_value <= start
            and start + extent - 1 <= dtype.max_value
        )
        env = self._env  # blocks restore it in place (_run_block)
        key = id(var)
        saved = env.get(key)
        try:
            if wraps:
                for k in range(start, start + extent):
                    env[key] = (var, V.wrap_int(k, dtype))
                    handler(self, body)
            else:
                for k in range(start, start + extent):
                    env[key] = (var, k)
                    handler(self, body)
        finally:
            _restore(env, key, saved)

    def _exec_while(self, stmt: While) -> None:
        while V.truthy(self.eval(stmt.condition), "while condition"):
            self.exec(stmt.body)

    def _exec_if_then_else(self, stmt: IfThenElse) -> None:
        if V.truthy(self.eval(stmt.condition), "if condition"):
            self.exec(stmt.then_case)
        elif stmt.else_case is not None:
            self.exec(stmt.else_case)

    def _exec_allocate(self, stmt: Allocate) -> None:
        extent = self.eval_int(stmt.extent, "allocation extent")
        pointer = allocate(extent * stmt.dtype.itemsize, stmt.dtype, stmt.buffer_var.name)
        constants = stmt.annotations.get(ALLOCATE_CONST_DATA)
        if constants is not None:  # T.allocate_const
            for i, value in enumerate(constants):
                pointer.store(
                    i * stmt.dtype.itemsize, stmt.dtype, V.from_python(value, stmt.dtype), "const"
                )
        var = stmt.buffer_var
        env = self._env
        key = id(var)
        saved = env.get(key)
        env[key] = (var, pointer)
        try:
            self.exec(stmt.body)
        finally:
            _restore(env, key, saved)

    def _exec_decl_buffer(self, stmt: DeclBuffer) -> None:
        # A view: accesses find the data var in the environment; nothing to allocate.
        self._pointer(stmt.buffer)
        self.exec(stmt.body)

    def _exec_block_realize(self, stmt: BlockRealize) -> None:
        block = stmt.block
        if len(stmt.iter_values) != len(block.iter_vars):
            raise ValueError(
                f"block {block.name_hint!r}: {len(stmt.iter_values)} iter values for "
                f"{len(block.iter_vars)} iter vars"
            )
        # The predicate guards the bindings too (they may divide by a padded extent).
        predicate = stmt.predicate
        if type(predicate) is IntImm:
            if not predicate.value:
                return
        elif not V.truthy(self.eval(predicate), "block predicate"):
            return
        eval_ = self.eval
        bindings = [eval_(v) for v in stmt.iter_values]
        env = self._env
        iter_vars = [iv.var for iv in block.iter_vars]
        saved = [(id(var), env.get(id(var))) for var in iter_vars]
        try:
            for var, value in zip(iter_vars, bindings):
                env[id(var)] = (var, value)
            self._run_block(block)
        finally:
            for key, entry in saved:
                if entry is None:
                    env.pop(key, None)
                else:
                    env[key] = entry

    def _exec_block(self, stmt: Block) -> None:
        self._run_block(stmt)

    def _run_block(self, block: Block) -> None:
        if not block.alloc_buffers and not block.match_buffers:
            # Nothing to drop: init and body restore whatever they bind themselves.
            if block.init is not None and self._at_reduction_start(block):
                self.exec(block.init)
            self.exec(block.body)
            return
        env = self._env
        before = dict(env)
        try:
            for buffer in block.alloc_buffers:
                self._bind(buffer.data, self._alloc_buffer(buffer))
            for match in block.match_buffers:
                self._match_buffer(match)
            if block.init is not None and self._at_reduction_start(block):
                self.exec(block.init)
            self.exec(block.body)
        finally:
            # Drop what the block defined (buffers, matched vars) and restore shadowed names,
            # in place: enclosing loops hold the environment.
            env.clear()
            env.update(before)

    def _at_reduction_start(self, block: Block) -> bool:
        for iv in block.iter_vars:
            if iv.kind is IterKind.REDUCE:
                if int(self.lookup(iv.var)) != self.eval_int(iv.dom.min, "iter var domain min"):
                    return False
        return True


def _restore(env: dict[int, tuple[Var, Any]], key: int, saved: tuple[Var, Any] | None) -> None:
    """Undo a scoped binding of ``key`` (``saved``: what it was bound to before, or None)."""
    if saved is None:
        del env[key]
    else:
        env[key] = saved


class _BufferInfo:
    """What every scalar access of one buffer needs, computed once per interpreter."""

    __slots__ = (
        "buffer",
        "constant",
        "is_float",
        "itemsize",
        "load_what",
        "ndim",
        "offset_what",
        "store_what",
        "stride_vars",
        "strides_memo",
        "view_dtype",
    )

    def __init__(self, buffer: Buffer) -> None:
        dtype = buffer.dtype
        self.buffer = buffer
        self.ndim = buffer.ndim
        self.load_what = f"load from buffer {buffer.name!r}"
        self.store_what = f"store to buffer {buffer.name!r}"
        self.offset_what = f"elem_offset of buffer {buffer.name!r}"
        self.constant = all(type(e) is IntImm for e in (*buffer.shape, *buffer.strides))
        # The variables the strides are computed from, when those expressions are constants
        # and variables only (None: anything else, computed at every access).
        exprs = buffer.strides or buffer.shape
        self.stride_vars: list[Var] | None = None
        if all(type(e) in (IntImm, Var, SizeVar) for e in exprs):
            self.stride_vars = [e for e in exprs if isinstance(e, Var)]
        self.strides_memo: tuple[list[Any], list[int]] | None = None
        self.itemsize = dtype.itemsize
        self.is_float = dtype.is_float
        # A scalar of a type numpy holds as itself (bool is read as != 0, stored as a byte;
        # handles have no numpy type): read and written through a typed view of the storage.
        plain = dtype.is_scalar and not (dtype.is_bool or dtype.is_handle)
        self.view_dtype: np.dtype[Any] | None = V.element_numpy_dtype(dtype) if plain else None


def _typed_view(
    pointer: Pointer, byte_offset: int, info: _BufferInfo
) -> tuple[np.ndarray[Any, Any], int] | tuple[None, int]:
    """The storage of ``pointer`` viewed as ``info``'s element type, in the phase of the
    access, and the element index of the access; (None, 0) when it is out of bounds (the
    slow path raises the error)."""
    storage = pointer.storage
    start = pointer.offset + byte_offset
    itemsize = info.itemsize
    if start < 0 or start + itemsize > storage.bytes.size:
        return None, 0
    assert info.view_dtype is not None
    phase = start % itemsize
    return storage.typed_view(info.view_dtype, itemsize, phase), (start - phase) // itemsize


# -- dispatch tables ----------------------------------------------------------------------


def _find_handler(cls: type, table: dict[type, Any], kind: str) -> Any:
    for klass in cls.__mro__:
        if klass in table:
            table[cls] = table[klass]
            return table[klass]
    raise NotImplementedError(f"the interpreter cannot {kind} a {cls.__name__} node")


def _register() -> None:
    exprs: dict[type, Callable[[Interpreter, Any], V.Value]] = {
        Var: Interpreter._eval_var,
        IntImm: Interpreter._eval_int_imm,
        FloatImm: Interpreter._eval_float_imm,
        StringImm: Interpreter._eval_string_imm,
        Cast: Interpreter._eval_cast,
        Not: Interpreter._eval_not,
        Select: Interpreter._eval_select,
        Let: Interpreter._eval_let,
        Ramp: Interpreter._eval_ramp,
        Broadcast: Interpreter._eval_broadcast,
        Shuffle: Interpreter._eval_shuffle,
        BufferLoad: Interpreter._eval_buffer_load,
        Reduce: Interpreter._eval_reduce,
        Call: Interpreter._eval_call,
    }
    for cls in BINARY_OP_NAMES:
        exprs[cls] = Interpreter._eval_binary
    Interpreter._expr_dispatch.update(exprs)
    stmts: dict[type, Callable[[Interpreter, Any], None]] = {
        SeqStmt: Interpreter._exec_seq_stmt,
        Evaluate: Interpreter._exec_evaluate,
        BufferStore: Interpreter._exec_buffer_store,
        LetStmt: Interpreter._exec_let_stmt,
        AttrStmt: Interpreter._exec_attr_stmt,
        AssertStmt: Interpreter._exec_assert_stmt,
        For: Interpreter._exec_for,
        While: Interpreter._exec_while,
        IfThenElse: Interpreter._exec_if_then_else,
        Allocate: Interpreter._exec_allocate,
        DeclBuffer: Interpreter._exec_decl_buffer,
        BlockRealize: Interpreter._exec_block_realize,
        Block: Interpreter._exec_block,
    }
    Interpreter._stmt_dispatch.update(stmts)


_register()


def interpret(func: PrimFunc, args: Sequence[Any], *, check_args: bool = True) -> None:
    """Run ``func`` on ``args`` (numpy arrays for buffer params, numbers for scalars).

    Arrays are modified in place. See :meth:`Interpreter.run` for ``check_args``.
    """
    Interpreter(func).run(args, check_args=check_args)
