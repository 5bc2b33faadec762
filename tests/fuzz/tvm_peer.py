"""Differential fuzz against real TVM: our native build vs TVM's on the same programs and inputs.

Not a pytest module (run it as a script)::

    nice -n 5 python tests/fuzz/tvm_peer.py --tvm-python /work/peers/bin/python \\
        --count 500 --seed 1 --kind both --out /tmp/tvm_peer

``tests/fuzz/differential.py`` compares our native build with our own interpreter, so a
semantic mistake both share is invisible there. Here the reference is TVM itself (0.27 is
what is installed; blocks are ``T.sblock`` there and the scripts are parsed with
``check_well_formed=False``), run by a worker process of the peer's own interpreter
(``--tvm-python``; this file is also the worker: ``--worker``, which imports nothing of
ours). Without a peer interpreter, or one that cannot ``import tvm``, the script prints a
message and exits 0.

Programs come from two generators:

* ``progen``: :mod:`progen`'s hypothesis programs, printed as TVMScript;
* ``expr``: :func:`expr_program` below, written as TVMScript text: the expression semantics
  a TVM user relies on, where TVM 0.16 and 0.27 agree (floordiv/floormod and
  truncdiv/truncmod on negative values, shifts, bitwise operators, casts between integer
  widths and float<->int, ``T.if_then_else``/``T.Select``, min/max/abs, the float math
  intrinsics, comparisons and boolean operators, mixed-dtype operands, ``T.let``-style
  bindings, block reductions with ``T.init`` and ``T.where``, ``T.alloc_buffer`` inside loops,
  parallel/vectorized/unrolled loops starting away from 0, ``T.match_buffer`` views with
  ``elem_offset`` and ``strides``).

**Excluded: undefined behaviour on TVM's side.** TVM leaves these to LLVM, where they are
poison or undefined (we define them: ARCHITECTURE.md, "Semantics decided here"), so a
difference there says nothing. Each program first runs in our interpreter with checks
patched in (:class:`UBWatch`); a program whose run meets any of them is skipped and counted:

* signed integer ``+ - *`` leaving the type's range (TVM emits ``nsw``; its simplifier also
  assumes no overflow), ``T.abs`` of the signed minimum;
* unsigned ``+ - *`` that wraps: LLVM defines it, but TVM's simplifier bounds an unsigned
  result by the type's range as if it could not wrap (``T.uint32(0) - (x - T.uint32(7))``
  for ``x < 7`` folds to 0 in TVM 0.27), so TVM's answer is not a semantics to compare with;
* an integer cast whose value does not fit the target type (a narrowing or sign-changing
  cast that wraps): LLVM defines it, but TVM's analyzer bounds a cast by the target type as
  if the value fit (``T.Cast("int16", u) // T.int16(5)`` for a uint16 ``u`` of 33670 is
  computed as a truncating division, -6373 instead of -6374);
* a shift by an amount outside ``[0, bits)``;
* an integer division or modulo by zero, or ``INT_MIN / -1`` (TVM's kernel traps or is UB;
  ours raises);
* a float -> int cast of NaN, an infinity or a value whose truncation is out of range
  (``fptosi``/``fptoui`` poison; ours saturates).

Floats are compared with a tolerance (1e-5 relative for float32, 1e-12 for float64; ten
times wider after a transcendental intrinsic): a multiply-add may be fused differently, and
our declared block reductions may sum in lane order (docs/performance.md). Integers are
compared exactly. Differences are grouped by a key (which side failed, or which output
dtype differed) and every program of a group is written to ``--out``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import select
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------
# The worker (runs under the peer's interpreter: numpy and tvm only)
# ---------------------------------------------------------------------------------------------


def _worker(target_mcpu: str) -> int:
    import importlib.util

    import tvm  # type: ignore[import-not-found]
    from tvm.script import tirx as T  # type: ignore[import-not-found]  # noqa: F401

    target = {"kind": "llvm", "mcpu": target_mcpu}
    print(json.dumps({"ready": tvm.__version__}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            spec = importlib.util.spec_from_file_location(f"prog_{req['id']}", req["src"])
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            func = getattr(module, req["name"])
        except Exception as exc:
            print(json.dumps({"error": f"parse: {type(exc).__name__}: {_first(exc)}"}),
                  flush=True)
            continue
        try:
            lib = tvm.compile(tvm.IRModule({"main": func}), target=target)
        except Exception as exc:
            print(json.dumps({"error": f"compile: {type(exc).__name__}: {_first(exc)}"}),
                  flush=True)
            continue
        data = np.load(req["inputs"])
        arrays = [data[f"a{k}"] for k in range(len(data.files))]
        args = [tvm.runtime.tensor(a) if a.ndim or a.dtype.kind == "f" or req["kinds"][k] == "b"
                else int(a) for k, a in enumerate(arrays)]
        try:
            lib["main"](*args)
        except Exception as exc:
            print(json.dumps({"error": f"run: {type(exc).__name__}: {_first(exc)}"}),
                  flush=True)
            continue
        outs = {f"a{k}": (a.numpy() if hasattr(a, "numpy") else np.array(a))
                for k, a in enumerate(args)}
        np.savez(req["outputs"], **outs)  # type: ignore[arg-type]
        print(json.dumps({"ok": True}), flush=True)
    return 0


def _first(exc: BaseException) -> str:
    """The line of an error message that says what went wrong."""
    text = str(exc).strip().splitlines()
    said = [ln for ln in text if ln.lstrip().startswith(("error:", "Check failed"))]
    return (said[0].strip() if said else text[-1] if text else "")[:200]


class Peer:
    """A TVM worker process; restarted after a crash (a trap in a TVM kernel kills it).

    ``worker`` is the script the peer's interpreter runs with ``--worker --mcpu M`` (this
    file by default; ``topi_peer.py`` has its own): it prints ``{"ready": version}``, then
    answers each JSON request line with one JSON reply line."""

    def __init__(self, python: str, mcpu: str, timeout: float,
                 worker: Path | None = None) -> None:
        self.python, self.mcpu, self.timeout = python, mcpu, timeout
        self.worker = worker or Path(__file__).resolve()
        self.proc: subprocess.Popen[bytes] | None = None
        self.version = ""
        self.pending = b""

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.python, str(self.worker), "--worker", "--mcpu", self.mcpu],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": ""})
        self.pending = b""
        reply = self._read(120.0)
        if reply is None or "ready" not in reply:
            raise RuntimeError(f"the TVM worker did not start: {reply}")
        self.version = reply["ready"]

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def _read(self, timeout: float) -> dict[str, Any] | None:
        """The worker's next reply line; None on timeout or when the worker died."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.time() + timeout
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.time()))
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        return reply

    def run(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        reply = self._read(self.timeout)
        if reply is None:
            try:  # died (a trap, a signal) or still running (a hang)
                code = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            self.stop()
            return {"error": f"crash (exit {code})" if code is not None else "timeout"}
        return reply


# ---------------------------------------------------------------------------------------------
# Undefined behaviour on TVM's side, detected by running our interpreter
# ---------------------------------------------------------------------------------------------


class UBWatch:
    """Patches our interpreter's scalar operations to record TVM-undefined operations."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    @contextmanager
    def active(self) -> Iterator[UBWatch]:
        from backend.interp import calls as C
        from backend.interp import values as V

        saved = (V._scalar_binary, V.scalar_binary, V._cast_scalar, C.__dict__["call_intrinsic"])
        orig_bin, orig_cast, orig_intr = saved[0], saved[2], saved[3]
        reasons = self.reasons

        def binop(op: str, a: Any, b: Any, element: Any, quiet: bool = False) -> Any:
            if element.is_int or element.is_uint:
                x, y = int(a), int(b)
                bits = element.bits
                if op in ("add", "sub", "mul"):
                    exact = x + y if op == "add" else (x - y if op == "sub" else x * y)
                    lo = -(1 << (bits - 1)) if element.is_int else 0
                    if not lo <= exact < lo + (1 << bits):
                        sign = "signed" if element.is_int else "unsigned"
                        reasons.append(f"{sign} {op} overflow in {element}")
                elif op in ("shift_left", "shift_right") and not 0 <= y < bits:
                    reasons.append(f"shift by {y} in {element}")
                elif op in ("div", "mod", "floordiv", "floormod") and (
                        y == 0 or (element.is_int and y == -1 and x == -(1 << (bits - 1)))):
                    reasons.append(f"{op} by {y} in {element}")
            return orig_bin(op, a, b, element, quiet)

        def cast(value: Any, src: Any, dst: Any) -> Any:
            if src.is_float and (dst.is_int or dst.is_uint):
                f = float(value)
                if not np.isfinite(f) or not (int(dst.min_value) <= int(f) <= int(dst.max_value)):
                    reasons.append(f"{src}->{dst} cast of {f}")
            elif (src.is_int or src.is_uint) and (dst.is_int or dst.is_uint):
                if not int(dst.min_value) <= int(value) <= int(dst.max_value):
                    reasons.append(f"{src}->{dst} cast wraps")
            return orig_cast(value, src, dst)

        def intrinsic(name: str, args: Any, arg_types: Any, result: Any) -> Any:
            el = arg_types[0].element_of() if arg_types else None
            if el is not None and (el.is_int or el.is_uint):
                from backend.interp.values import to_lanes
                cols = [to_lanes(a, t) for a, t in zip(args, arg_types)]
                if name in ("shift_left", "shift_right"):
                    for y in cols[1]:
                        if not 0 <= int(y) < el.bits:
                            reasons.append(f"shift by {int(y)} in {el}")
                if name == "abs" and el.is_int:
                    if any(int(x) == -(1 << (el.bits - 1)) for x in cols[0]):
                        reasons.append(f"abs of the minimum {el}")
            return orig_intr(name, args, arg_types, result)

        V._scalar_binary = binop
        V.scalar_binary = binop
        V._cast_scalar = cast
        setattr(C, "call_intrinsic", intrinsic)  # noqa: B010  (not re-exported by calls)
        try:
            yield self
        finally:
            V._scalar_binary, V.scalar_binary, V._cast_scalar = saved[:3]
            setattr(C, "call_intrinsic", saved[3])  # noqa: B010


# ---------------------------------------------------------------------------------------------
# Translation to TVM 0.27's spelling
# ---------------------------------------------------------------------------------------------


def to_tvm027(text: str) -> str:
    """Our TVMScript (TVM 0.16's spelling) as TVM 0.27 parses it."""
    lines = [ln for ln in text.splitlines() if not ln.startswith(("# from", "from tvmscript",
                                                                   "import tvmscript"))]
    body = "\n".join(_decl_buffer_statements(lines))
    body = re.sub(r"\bT\.block\(", "T.sblock(", body)
    body = re.sub(r"@T\.prim_func\b(\(\))?", "@T.prim_func(check_well_formed=False)", body)
    return "import tvm\nfrom tvm.script import tirx as T\n\n" + body + "\n"


def _decl_buffer_statements(lines: list[str]) -> list[str]:
    """``with T.decl_buffer(...) as x:`` and its body as ``x = T.decl_buffer(...)`` and the
    body one level out (0.27 parses only the statement form; 0.16 both); ``with
    T.LetStmt(v) as x:`` likewise as ``x = T.Bind(v)`` (0.27's name of the binding)."""
    out: list[str] = []
    dedent: list[int] = []  # the indent of each open with-statement being removed
    for line in lines:
        indent = len(line) - len(line.lstrip())
        while dedent and line.strip() and indent <= dedent[-1]:
            dedent.pop()
        shift = 4 * len(dedent)
        m = re.match(r"^(\s*)with (T\.decl_buffer\(.*\)|T\.LetStmt\(.*\)) as (\w+):$", line)
        if m:
            value = re.sub(r"^T\.LetStmt\(", "T.Bind(", m.group(2))
            out.append(f"{m.group(1)[shift:]}{m.group(3)} = {value}")
            dedent.append(indent)
            continue
        out.append(line[shift:] if line[:shift].strip() == "" else line)
    return out


# ---------------------------------------------------------------------------------------------
# The expression generator (TVMScript text)
# ---------------------------------------------------------------------------------------------

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint32")
FLOATS = ("float32", "float64")
HALF = "float16"  # arithmetic, min/max, selects and casts only (no math intrinsics)
_TRANSCENDENTAL = ("exp", "log", "sqrt", "tanh", "sigmoid", "erf", "pow")


class ExprGen:
    """Random typed TVMScript expressions over the loads ``IN_<dtype>[<index>]``."""

    def __init__(self, rng: random.Random, index: str, n: int, lets: list[tuple[str, str]]):
        self.r = rng
        self.index = index  # the element index expression, in [0, n)
        self.n = n
        self.inexact = False
        self.exact = 0  # > 0: no transcendental (a float->int cast will see the value)
        self.lets = lets  # (name, dtype) bound so far

    def const(self, dt: str) -> str:
        r = self.r
        if dt in FLOATS or dt == HALF:
            return f"T.{dt}({r.choice([0.0, 1.0, -2.5, 0.5, 3.0, -7.0, 1.5, -0.5, 2.5])})"
        if dt == "bool":
            return r.choice(["True", "False"])
        if dt.startswith("uint"):
            return f"T.{dt}({r.choice([0, 1, 2, 3, 7, 200 if dt == 'uint8' else 4000000000])})"
        lim = {"int8": 127, "int16": 32767, "int32": 2**31 - 1, "int64": 2**63 - 1}[dt]
        big = [lim, -lim - 1] if r.randrange(4) == 0 else [2, -2]
        return f"T.{dt}({r.choice([0, 1, -1, 3, -7, 5, *big])})"

    def load(self, dt: str) -> str:
        r = self.r
        k = r.randrange(4)
        if k == 0:
            idx = self.index
        elif k == 1:
            idx = f"({self.index} + {r.randrange(1, self.n + 3)}) % {self.n}"
        elif k == 2:
            idx = f"({self.index} * {r.choice([2, 3, 5])} + {r.randrange(0, 9)}) % {self.n}"
        else:  # not (n - 1 - index) // d: KNOWN_TVM_BUGS
            idx = f"{self.index} // {r.choice([1, 2, 3])}"
        return f"IN_{dt}[{idx}]"

    def leaf(self, dt: str) -> str:
        r = self.r
        k = r.randrange(6)
        if dt == "bool":
            return self.cond(0)
        if k == 0:
            return self.const(dt)
        lets = [name for name, t in self.lets if t == dt]
        if k == 1 and lets:
            return r.choice(lets)
        if k == 2:
            return f"T.Cast(\"{dt}\", {self.index})"
        return self.load(dt)

    def expr(self, dt: str, depth: int) -> str:
        r = self.r
        if depth <= 0 or r.randrange(5) == 0:
            return self.leaf(dt)
        if dt == "bool":
            return self.cond(depth)
        s = depth - 1
        ops = ["arith", "arith", "minmax", "select", "ite", "cast", "cast", "abs", "pyconst"]
        if dt == HALF:
            ops = ["arith", "minmax", "select", "cast", "cast", "abs"]
        elif dt in FLOATS:
            ops += ["fmath", "fmath", "fdiv", "mixed"]
        else:
            ops += ["div", "div", "bits", "shift", "mixed"]
        op = r.choice(ops)
        a = self.expr(dt, s)
        if op == "mixed":  # operands of two dtypes: TVM's BinaryOpMatchTypes promotes one
            other = r.choice([*INTS, *FLOATS, "bool"] if dt in FLOATS else [*INTS, "bool"])
            b = self.expr(other, s) if other != "bool" else self.cond(s)
            sym = r.choice(["+", "-", "*", "T.min", "T.max"] if other != "bool" else ["+", "*"])
            pair = (a, b) if r.randrange(2) else (b, a)
            value = f"T.{sym[2:]}({pair[0]}, {pair[1]})" if sym.startswith("T.") else \
                f"({pair[0]} {sym} {pair[1]})"
            return f"T.Cast(\"{dt}\", {value})"
        if op == "arith":
            return f"({a} {r.choice('+-*')} {self.expr(dt, s)})"
        if op == "pyconst":  # a Python literal takes the other operand's dtype
            c = r.choice([1, 2, 3, -1, 0]) if dt in INTS else r.choice([0.5, 2.0, -1.25])
            if dt.startswith("uint") and isinstance(c, int) and c < 0:
                c = 1
            sym = r.choice("+-*")
            return f"({a} {sym} {c})" if r.randrange(2) else f"({c} {sym} {a})"
        if op == "minmax":
            return f"T.{r.choice(['min', 'max'])}({a}, {self.expr(dt, s)})"
        if op == "abs":
            return f"T.abs({a})"
        if op in ("select", "ite"):
            fn = "T.Select" if op == "select" else "T.if_then_else"
            return f"{fn}({self.cond(s)}, {a}, {self.expr(dt, s)})"
        if op == "cast":
            src = r.choice([*INTS, *FLOATS, "bool", HALF])
            if src in (*FLOATS, HALF) and dt not in (*FLOATS, HALF):
                self.exact += 1
                inner = self.expr(src, s)
                self.exact -= 1
                if r.randrange(2):
                    rounding = r.choice(["floor", "ceil", "round", "nearbyint", "trunc"])
                    inner = f"T.{rounding}({inner})"
                return f"T.Cast(\"{dt}\", {inner})"
            return f"T.Cast(\"{dt}\", {self.expr(src, s)})"
        if op == "div":
            b = self.expr(dt, s)
            k = r.randrange(3)
            if k == 0:
                b = self.const(dt) if r.randrange(3) else str(r.choice([2, 3, 7, 16]))
                if b.endswith("(0)"):
                    b = "3"
            elif k == 1:
                b = f"T.max({b}, {self.const(dt).replace('(0)', '(1)')})"
                if "(-" in b:
                    b = f"({b} | T.{dt}(1))"
            else:
                b = f"({b} | T.{dt}(1))"
            fn = r.choice(["//", "%", "T.truncdiv", "T.truncmod", "T.floordiv", "T.floormod"])
            return f"({a} {fn} {b})" if fn in ("//", "%") else f"{fn}({a}, {b})"
        if op == "bits":
            k = r.randrange(4)
            if k == 3:
                return f"T.bitwise_not({a})" if r.randrange(2) else f"(~{a})"
            return f"({a} {'&|^'[k]} {self.expr(dt, s)})"
        if op == "shift":
            bits = int(re.sub(r"\D", "", dt))
            if r.randrange(2):
                amount = f"T.{dt}({r.randrange(bits)})"
            else:  # a data-dependent amount, in range
                amount = f"({self.expr(dt, s)} & T.{dt}({bits - 1}))"
            if r.randrange(2):
                return f"({a} {'<<' if r.randrange(2) else '>>'} {amount})"
            return f"T.{r.choice(['shift_left', 'shift_right'])}({a}, {amount})"
        if op == "fdiv":
            b = self.expr(dt, s)
            # not T.fmod (TVM 0.27's LLVM backend has no lowering for it) nor a float
            # floordiv (0.27's parser refuses ``//`` on floats)
            return f"({a} / (T.abs({b}) + T.{dt}(1)))"
        # fmath
        names = ["floor", "ceil", "round", "nearbyint", "trunc"]
        if not self.exact:
            names += list(_TRANSCENDENTAL)
        name = r.choice(names)
        if name in _TRANSCENDENTAL:
            self.inexact = True
        if name == "exp":
            return f"T.exp(T.min(T.max({a}, T.{dt}(-20)), T.{dt}(20)))"
        if name in ("log", "sqrt"):
            return f"T.{name}(T.abs({a}) + T.{dt}(0.25))"
        if name == "pow":
            return (f"T.pow(T.abs({a}) + T.{dt}(0.5), "
                    f"T.min(T.max({self.expr(dt, s)}, T.{dt}(-3)), T.{dt}(3)))")
        return f"T.{name}({a})"

    def cond(self, depth: int) -> str:
        r = self.r
        k = r.randrange(6)
        if k == 0 and depth > 0:
            return f"{r.choice(['T.And', 'T.Or'])}({self.cond(depth - 1)}, {self.cond(depth - 1)})"
        if k == 1 and depth > 0:
            return f"({self.cond(depth - 1)} {r.choice(['and', 'or'])} {self.cond(depth - 1)})"
        if k == 2 and depth > 0:
            return f"(not {self.cond(depth - 1)})"
        dt = r.choice([*INTS, *FLOATS])
        self.exact += 1
        a, b = self.expr(dt, min(depth, 2)), self.expr(dt, min(depth, 2))
        if r.randrange(4) == 0:  # a comparison of two dtypes
            b = self.expr(r.choice([*INTS, *FLOATS]), min(depth, 2))
        self.exact -= 1
        return f"({a} {r.choice(['<', '<=', '==', '!=', '>', '>='])} {b})"


def expr_program(seed: int) -> tuple[str, bool, list[str]]:
    """(TVMScript text in our spelling, whether floats need a wider tolerance, notes)."""
    r = random.Random(seed)
    n = r.choice([4, 7, 8, 16, 17])
    outs = [r.choice([*INTS, *FLOATS, HALF]) for _ in range(r.randrange(1, 3))]
    params = [f"IN_{dt}: T.Buffer(({n},), \"{dt}\")" for dt in (*INTS, *FLOATS, HALF)]
    params += [f"OUT{k}: T.Buffer(({n},), \"{dt}\")" for k, dt in enumerate(outs)]
    body: list[str] = []
    notes: list[str] = []
    inexact = False
    for k, dt in enumerate(outs):
        shape = r.choice(["loop", "loop", "let", "block", "reduce", "alloc", "view", "match"])
        if dt == HALF and shape == "reduce":
            shape = "loop"
        notes.append(shape)
        lo = r.choice([0, 0, 2, -3])
        kind = r.choice(["range", "T.serial", "T.parallel", "T.vectorized", "T.unroll"])
        head = f"for i in {kind}({lo}, {lo + n}):" if lo else f"for i in {kind}({n}):"
        idx = f"(i - {lo})" if lo > 0 else (f"(i + {-lo})" if lo < 0 else "i")
        lets: list[tuple[str, str]] = []
        g = ExprGen(r, idx, n, lets)
        if shape in ("loop", "let"):
            body.append(head)
            if shape == "let":
                for j in range(r.randrange(1, 3)):
                    ldt = r.choice([*INTS, *FLOATS])
                    body.append(f"    x{j}: T.{ldt} = {g.expr(ldt, 2)}")
                    lets.append((f"x{j}", ldt))
            value = g.expr(dt, r.randrange(1, 5))
            if r.randrange(5) == 0:
                body.append(f"    if {g.cond(1)}:")
                body.append(f"        OUT{k}[{idx}] = {value}")
                body.append("    else:")
                body.append(f"        OUT{k}[{idx}] = {g.const(dt)}")
            else:
                body.append(f"    OUT{k}[{idx}] = {value}")
        elif shape == "block":
            body.append(head)
            body.append(f"    with T.block(\"b{k}\"):")
            body.append(f"        v = T.axis.spatial({n}, {idx})")
            g.index = "v"
            if r.randrange(2):
                body.append(f"        T.where({idx} < {r.randrange(1, n + 1)})")
            body.append(f"        OUT{k}[v] = {g.expr(dt, r.randrange(1, 4))}")
        elif shape == "reduce":
            kext = r.choice([1, 3, 5, 8])
            body.append(f"for i, kk in T.grid({n}, {kext}):")
            body.append(f"    with T.block(\"r{k}\"):")
            body.append("        v, vk = T.axis.remap(\"SR\", [i, kk])")
            pred = r.randrange(4)
            if pred == 1:
                body.append(f"        T.where(i * {kext} + kk < {r.randrange(1, n * kext + 1)})")
            elif pred == 2:  # the first reduction step skipped: no init for those rows
                body.append(f"        T.where(kk >= {r.randrange(0, kext)} or i % 3 == 0)")
            elif pred == 3:
                body.append(f"        T.where((i + kk) % {r.choice([2, 3])} != 0)")
            g.index = "v"
            body.append("        with T.init():")
            body.append(f"            OUT{k}[v] = {g.const(dt)}")
            g.index = f"(v + vk) % {n}"
            comb = r.choice(["add", "max", "min"]) if dt in FLOATS else \
                r.choice(["add", "max", "min", "mul"])
            term = g.expr(dt, r.randrange(0, 3))
            new = {"add": f"OUT{k}[v] + {term}", "max": f"T.max(OUT{k}[v], {term})",
                   "min": f"T.min(OUT{k}[v], {term})", "mul": f"OUT{k}[v] * {term}"}[comb]
            body.append(f"        OUT{k}[v] = {new}")
        elif shape == "alloc":
            m = r.choice([1, 3, 4])
            sdt = r.choice([*INTS, *FLOATS])
            if "vectorized" in head:  # an inner serial loop: KNOWN_TVM_BUGS
                head = head.replace("T.vectorized", "T.serial")
            body.append(head)
            body.append(f"    tmp{k} = T.alloc_buffer(({m},), \"{sdt}\")")
            body.append(f"    for j in range({m}):")
            g.index = f"({idx} + j) % {n}"
            body.append(f"        tmp{k}[j] = {g.expr(sdt, 2)}")
            g.index = idx
            acc = " + ".join(f"T.Cast(\"{dt}\", tmp{k}[{j}])" for j in range(m))
            body.append(f"    OUT{k}[{idx}] = {acc}")
        elif shape == "match":  # a block's match_buffer of a two-element window of an input
            mdt = r.choice([*INTS, *FLOATS])
            rows = n // 2
            body.append(f"for i in {kind}({rows}):".replace("T.vectorized", "T.serial"))
            body.append(f"    with T.block(\"m{k}\"):")
            body.append(f"        vi = T.axis.spatial({rows}, i)")
            body.append(f"        T.reads(IN_{mdt}[vi * 2:vi * 2 + 2])")
            body.append(f"        T.writes(OUT{k}[vi])")
            body.append(f"        S{k} = T.match_buffer(IN_{mdt}[vi * 2:vi * 2 + 2], (2,), "
                        f"\"{mdt}\", offset_factor=1)")
            g.index = "vi"
            window = f"T.Cast(\"{dt}\", S{k}[1]) - T.Cast(\"{dt}\", S{k}[0])"
            body.append(f"        OUT{k}[vi] = {window} + {g.expr(dt, 2)}")
        else:  # view: a decl_buffer with elem_offset and strides over an input
            vdt = r.choice([*INTS, *FLOATS])
            rows = r.choice([1, 2])
            stride = r.choice([1, 2])
            off = r.randrange(0, 2)
            cols = (n - off) // (rows * stride) if rows == 2 else (n - off) // stride
            cols = max(1, min(cols, n))
            if rows == 2:
                cols = max(1, (n - off - cols * stride) // stride)
                cols = max(1, min(cols, (n - off) // (2 * stride)))
            body.append(f"V{k} = T.decl_buffer(({rows}, {cols}), \"{vdt}\", data=IN_{vdt}.data, "
                        f"strides=({cols * stride}, {stride}), elem_offset={off})")
            body.append(head)
            body.append(f"    OUT{k}[{idx}] = T.Cast(\"{dt}\", V{k}[{idx} % {rows}, "
                        f"{idx} // {rows} % {cols}]) + {g.expr(dt, 2)}")
        inexact = inexact or g.inexact
    text = "# from tvmscript import tir as T\n\n@T.prim_func\ndef kern(" + ", ".join(params) + \
        "):\n" + "\n".join("    " + ln for ln in body) + "\n"
    return text, inexact, notes


def expr_args(seed: int, n_by_name: dict[str, tuple[tuple[int, ...], str]],
              wide_share: float = 0.2) -> list[np.ndarray]:
    """Inputs: small values mostly (so arithmetic stays in range), extremes sometimes."""
    rng = np.random.default_rng(seed)
    out = []
    for shape, dt in n_by_name.values():
        d = np.dtype(dt)
        if d.kind == "f":
            vals = rng.integers(-8, 9, shape).astype(d)
            frac = (rng.standard_normal(shape) * 4).astype(d)
            halves = (rng.integers(-8, 9, shape) + 0.5).astype(d)
            pick = rng.integers(0, 3, shape)
            out.append(np.where(pick == 0, vals, np.where(pick == 1, frac, halves)).astype(d))
        else:
            info = np.iinfo(d)
            small = rng.integers(max(info.min, -9), min(info.max, 9) + 1, shape)
            wide = rng.integers(info.min, info.max, shape, dtype=d, endpoint=True)
            use = rng.random(shape) >= wide_share
            out.append(np.where(use, small.astype(d), wide).astype(d))
    return out


KNOWN_TVM_BUGS = {
    "index-floordiv": "TVM 0.27 computes floordiv/floormod of a decreasing loop expression, or "
                      "by a negative constant, wrong inside a buffer index: B[v] = A[(16 - v) "
                      "// 3] reads A[4] at v = 1, A[(-i - 6) % 7] reads A[0] at i = 0 (the "
                      "same value stored, or bound by a let in a serial loop, is right: the "
                      "control run of bind_indices confirms each one)",
    "vectorized-inner-loop": "TVM 0.27 vectorizes a T.vectorized loop whose body runs a serial "
                             "loop filling a scratch buffer as if every lane saw the last lane's "
                             "scratch (B[i] = tmp[0] + tmp[1] is 15 for every i)",
    "negative-divisor": "TVM 0.27 folds a floordiv by a negative constant of a value it bounds "
                        "in [0, |c|) to 0: (x % 2) // -2 is 0 for odd x (floor(1 / -2) = -1)",
    "vectorized-let": "TVM 0.27 gives every lane of a T.vectorized loop the last lane's value "
                      "of a variable bound in its body (x: T.float32 = A[i] + 1; B[i] = x "
                      "stores 8.0 at every i of 8)",
}
"""Differences whose TVM side is a TVM bug (minimised by hand); :func:`known_bug` tags them."""


def _subscripts(text: str) -> Iterator[str]:
    for m in re.finditer(r"\w\[", text):
        depth, k = 1, m.end()
        while k < len(text) and depth:
            depth += {"[": 1, "]": -1}.get(text[k], 0)
            k += 1
        yield text[m.end():k - 1]


def known_bug(text: str) -> str | None:
    """The :data:`KNOWN_TVM_BUGS` keys a program may meet, judged from its text (joined by
    ``+``; the control run decides whether they explain a difference)."""
    found: list[str] = []
    if any(("//" in sub or "%" in sub) and "-" in sub for sub in _subscripts(text)):
        found.append("index-floordiv")
    if re.search(r"(//|%) -\d|T\.floor(div|mod)\([^()]*, -\d", text):
        found.append("negative-divisor")
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if "T.vectorized(" in line and line.lstrip().startswith("for "):
            indent = len(line) - len(line.lstrip())
            for inner in lines[k + 1:]:
                if inner.strip() and len(inner) - len(inner.lstrip()) <= indent:
                    break
                if inner.lstrip().startswith("for ") and "vectorized-inner-loop" not in found:
                    found.append("vectorized-inner-loop")
                if re.match(r"^\s*\w+: T\.\w+ = ", inner) and "vectorized-let" not in found:
                    found.append("vectorized-let")
    return "+".join(found) or None


def bind_indices(func: Any) -> Any:
    """``func`` with every buffer index that holds a floordiv or floormod bound by a
    ``LetStmt`` just before its store, vectorized loops serial and divisions by a negative
    constant by its absolute value (``a // -c`` as ``(0 - a) // c``): the same program,
    which TVM 0.27 computes right (the control run that confirms a difference tagged
    with one of :data:`KNOWN_TVM_BUGS`). Indices are in
    bounds whatever the guards (progen and :func:`expr_program` reduce them modulo the
    extent), so evaluating one before its store changes no value."""
    from irbuilder.ir import (
        BufferLoad,
        BufferStore,
        FloorDiv,
        FloorMod,
        IntImm,
        LetStmt,
        PrimExpr,
        Stmt,
        Var,
        post_order_visit,
    )
    from irbuilder.ir.functor import StmtExprMutator, rebuild
    from irbuilder.ir.stmt import Block, For, ForKind

    def has_division(expr: PrimExpr) -> bool:
        found: list[bool] = []
        post_order_visit(expr, lambda n: found.append(isinstance(n, (FloorDiv, FloorMod))))
        return any(found)

    class Bind(StmtExprMutator):
        def __init__(self) -> None:
            self.bound: list[tuple[Var, PrimExpr]] = []
            self.count = 0
            self.in_regions = False  # a block's own fields: its regions stay as they are

        def index(self, expr: PrimExpr) -> PrimExpr:
            expr = self.visit_expr(expr)
            if self.in_regions or isinstance(expr, (Var, IntImm)) or not has_division(expr):
                return expr
            var = Var(f"ix{self.count}", expr.dtype)
            self.count += 1
            self.bound.append((var, expr))
            return var

        def visit_buffer_load_(self, node: BufferLoad) -> PrimExpr:
            return BufferLoad(node.buffer, tuple(self.index(i) for i in node.indices))

        def visit_buffer_store_(self, stmt: BufferStore) -> Stmt:
            value = self.visit_expr(stmt.value)
            return BufferStore(stmt.buffer, value, tuple(self.index(i) for i in stmt.indices))

        def visit_stmt(self, stmt: Stmt) -> Stmt:
            # the bindings a statement's own expressions made go just before it (each
            # statement inside it keeps its own); a block's regions are left alone (they
            # use its iter vars, and a BlockRealize must hold the block itself)
            if isinstance(stmt, Block):
                regions, self.in_regions = self.in_regions, True
                block = super().visit_stmt(stmt)
                self.in_regions = regions
                return block
            outer, self.bound = self.bound, []
            regions, self.in_regions = self.in_regions, False
            new = super().visit_stmt(stmt)
            for var, expr in reversed(self.bound):
                new = LetStmt(var, expr, new)
            self.bound, self.in_regions = outer, regions
            return new

        def visit_floor_div_(self, node: FloorDiv) -> PrimExpr:
            # a // -c as (-a) // c: TVM 0.27 folds (x % 2) // -2 to 0
            a, b = self.visit_expr(node.a), self.visit_expr(node.b)
            if isinstance(b, IntImm) and b.value < 0:
                return FloorDiv(IntImm(a.dtype, 0) - a, IntImm(b.dtype, -b.value))
            return FloorDiv(a, b)

        def visit_floor_mod_(self, node: FloorMod) -> PrimExpr:
            # a % -c as -((-a) % c)
            a, b = self.visit_expr(node.a), self.visit_expr(node.b)
            if isinstance(b, IntImm) and b.value < 0:
                zero = IntImm(a.dtype, 0)
                return zero - FloorMod(zero - a, IntImm(b.dtype, -b.value))
            return FloorMod(a, b)

        def visit_for_(self, loop: For) -> Stmt:
            # TVM's vectorizer puts the bound index back into the vector index: serial
            # (the same values: a vectorized loop's iterations are independent)
            new = self.generic_mutate(loop)
            if new.kind == ForKind.VECTORIZED:
                new = rebuild(new, {"kind": ForKind.SERIAL})
            return new

    return Bind().visit_func(func)


# ---------------------------------------------------------------------------------------------
# Running both sides
# ---------------------------------------------------------------------------------------------


class Case:
    """One program: our PrimFunc, its text, its arguments, and how to compare."""

    def __init__(self, func: Any, text: str, args: list[Any], inexact: bool, origin: str):
        self.func, self.text, self.args = func, text, args
        self.inexact, self.origin = inexact, origin


def _copies(args: list[Any]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def ub_reasons(case: Case) -> tuple[list[str], str | None]:
    """What TVM-undefined operations our interpreter's run meets, and its error if any."""
    import tvmscript

    watch = UBWatch()
    err = None
    kernel = tvmscript.build(case.func, target="interp")
    with watch.active():
        try:
            with np.errstate(all="ignore"):
                kernel(*_copies(case.args))
        except (ArithmeticError, AssertionError) as exc:
            err = type(exc).__name__
    return watch.reasons, err


MCPU = ["host"]
"""The CPU both sides compile for (resolved from ``--mcpu``; ``host``: LLVM's name of this one)."""


def ours(case: Case, opt_level: int) -> tuple[list[Any] | None, str | None]:
    import tvmscript

    args = _copies(case.args)
    try:
        kernel = tvmscript.build(case.func, opt_level=opt_level, target=f"llvm -mcpu={MCPU[0]}")
    except Exception as exc:
        return None, f"build {type(exc).__name__}: {_first(exc)[:120]}"
    try:
        with np.errstate(all="ignore"):
            kernel(*args)
    except Exception as exc:
        return None, f"run {type(exc).__name__}"
    return args, None


def compare(want: list[Any], got: list[Any], inexact: bool) -> str | None:
    """None when equal; else the key of the first difference."""
    for w, g in zip(want, got):
        if not isinstance(w, np.ndarray) or w.size == 0:
            continue
        if w.dtype.kind == "f":
            rtol = {2: 1e-3, 4: 1e-5, 8: 1e-12}[w.dtype.itemsize]
            if inexact:
                rtol = max(rtol * 10, 1e-4 if w.dtype.itemsize == 4 else 1e-6)
            if not np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=rtol,
                               equal_nan=True):
                return f"float mismatch ({w.dtype})"
        elif not np.array_equal(g, w):
            return f"int mismatch ({w.dtype})"
    return None


def _case_files(case: Case, work: Path, ident: int) -> dict[str, Any]:
    src = work / f"p{ident}.py"
    src.write_text(to_tvm027(case.text))
    inp = work / f"p{ident}_in.npz"
    arrays = {f"a{k}": np.asarray(a) for k, a in enumerate(case.args)}
    np.savez(inp, **arrays)  # type: ignore[arg-type]
    kinds = ["b" if isinstance(a, np.ndarray) else "s" for a in case.args]
    name = re.search(r"^def (\w+)\(", case.text, re.M)
    return {"id": ident, "src": str(src), "inputs": str(inp), "kinds": kinds,
            "outputs": str(work / f"p{ident}_out.npz"), "name": name.group(1) if name else "main"}


def progen_cases(count: int, seed: int, parallel: bool = False) -> Iterator[Case]:
    """Programs of :mod:`progen` (or :mod:`progen_parallel`'s race-free ones: a planted race
    is refused by our build and runs racily in TVM's), hypothesis-seeded, as cases."""
    import queue
    import threading

    sys.path.insert(0, str(HERE))
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed
    from progen import programs
    from progen_parallel import parallel_programs

    q: queue.Queue[Case | None] = queue.Queue(maxsize=1)

    @hseed(seed)
    @settings(max_examples=count, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(parallel_programs() if parallel else programs())
    def gen(prog: Any) -> None:
        if getattr(prog, "racy", False):
            return
        # progen's own inputs are 40% full-range integers, so that most programs would wrap
        # a cast or overflow somewhere (TVM-undefined: skipped); 5% here
        shapes: dict[str, tuple[tuple[int, ...], str]] = {}
        for param in prog.func.params:
            buf = prog.func.buffer_map.get(param)
            if buf is None:  # a scalar parameter: progen's own arguments
                shapes = {}
                break
            shapes[buf.name] = (tuple(int(d) for d in buf.shape), str(buf.dtype))
        args = expr_args(prog.arg_seed, shapes, 0.05) if shapes else prog.args()
        q.put(Case(prog.func, prog.func.script(), args, prog.inexact,
                   ("progen_parallel " if parallel else "progen ") + "+".join(prog.notes)))

    def produce() -> None:
        try:
            gen()
        finally:
            q.put(None)

    # hypothesis drives the loop: run it on a thread and hand cases over one by one
    threading.Thread(target=produce, daemon=True).start()
    while (item := q.get()) is not None:
        yield item


def expr_cases(count: int, seed: int) -> Iterator[Case]:
    import tvmscript
    from irbuilder.ir import PrimFunc

    for k in range(count):
        s = seed * 1_000_003 + k
        text, inexact, notes = expr_program(s)
        try:
            func = tvmscript.from_source(text.replace("# from", "from"))
        except Exception as exc:
            yield Case(None, text, [], inexact, f"expr parse {type(exc).__name__}: {_first(exc)}")
            continue
        assert isinstance(func, PrimFunc)
        shapes = {}
        for p in func.params:
            b = func.buffer_map[p]
            shapes[b.name] = (tuple(int(d) for d in b.shape), str(b.dtype))
        yield Case(func, func.script(), expr_args(s, shapes), inexact, "expr " + "+".join(notes))


def load_saved(path: Path) -> Case:
    """A program :func:`_save` wrote (its inputs in ``# in`` lines), as a case."""
    import tvmscript
    from irbuilder.ir import PrimFunc

    text = path.read_text()
    args: list[Any] = []
    for _, dt, values in re.findall(r"^# in (\d+): (\w+) (.*)$", text, re.M):
        arr = np.array(json.loads(values), dtype=dt)
        args.append(arr if arr.ndim else int(arr))
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("# "))
    func = tvmscript.from_source("from tvmscript import tir as T\n" + body)
    assert isinstance(func, PrimFunc)
    origin = text.splitlines()[0][2:]
    return Case(func, func.script(), args, "transcendental" in origin or "inexact" in text, origin)


def replay(path: Path, peer: Peer, work: Path) -> int:
    """Run one saved program on both sides and print every output."""
    case = load_saved(path)
    print("TVM-undefined:", ub_reasons(case))
    for opt in (0, 3):
        got, err = ours(case, opt)
        print(f"ours opt_level {opt}:", err or [a.tolist() for a in got or []
                                                 if isinstance(a, np.ndarray)])
    reply = peer.run(_case_files(case, work, 0))
    if "error" in reply:
        print("TVM:", reply["error"])
        return 1
    data = np.load(_case_files_out(work, 0))
    print("TVM:", [data[f"a{k}"].tolist() for k in range(len(data.files))])
    return 0


def tvm_python_problem(python: str | None) -> str | None:
    """Why ``python`` cannot be the peer (None when it can ``import tvm``)."""
    if not python or not Path(python).exists():
        return "no TVM python given (--tvm-python PATH or TVMSCRIPT_TVM_PYTHON)"
    probe = subprocess.run([python, "-c", "import tvm; print(tvm.__version__)"],
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    return f"{python} cannot import tvm" if probe.returncode != 0 else None


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tvm-python", default=os.environ.get("TVMSCRIPT_TVM_PYTHON"))
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kind", choices=["progen", "parallel", "expr", "both"], default="both",
                    help="progen's programs, progen_parallel's race-free ones, this file's "
                         "expression programs, or progen and expr alternately")
    ap.add_argument("--out", default=None, help="folder for the differing programs")
    ap.add_argument("--mcpu", default="host",
                    help="the CPU both sides compile for (another CPU's instructions may "
                         "not run here: znver3's SSE4A traps on Intel)")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--replay", default=None, help="run one saved program on both sides")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    opts = ap.parse_args(argv)
    if opts.worker:
        return _worker(opts.mcpu)
    problem = tvm_python_problem(opts.tvm_python)
    if problem:
        print(f"skip: {problem}")
        return 0
    sys.path.insert(0, str(HERE.parent.parent))
    import faulthandler

    if opts.mcpu == "host":
        import llvmlite.binding as llvm

        opts.mcpu = llvm.get_host_cpu_name()
    MCPU[0] = opts.mcpu

    import tvmscript  # noqa: F401  (installs the printer)

    faulthandler.enable()  # a fatal signal in our kernel: the traceback goes to stderr

    work = Path(tempfile.mkdtemp(prefix="tvm_peer_work_"))
    peer = Peer(opts.tvm_python, opts.mcpu, opts.timeout)
    peer.start()
    if opts.replay:
        try:
            return replay(Path(opts.replay), peer, work)
        finally:
            peer.stop()
    out = Path(opts.out or tempfile.mkdtemp(prefix="tvm_peer_"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"peer TVM {peer.version}, -mcpu={opts.mcpu}; differing programs go to {out}",
          flush=True)

    def cases() -> Iterator[Case]:
        if opts.kind in ("progen", "parallel"):
            yield from progen_cases(opts.count, opts.seed, opts.kind == "parallel")
        elif opts.kind == "expr":
            yield from expr_cases(opts.count, opts.seed)
        else:  # alternately
            for pair in zip(progen_cases(opts.count // 2, opts.seed),
                            expr_cases(opts.count // 2, opts.seed)):
                yield from pair

    stats: collections.Counter[str] = collections.Counter()
    groups: collections.Counter[str] = collections.Counter()
    ub: collections.Counter[str] = collections.Counter()
    start = time.time()
    for ident, case in enumerate(cases()):
        stats["programs"] += 1
        if stats["programs"] % 100 == 0:
            print(f"... {dict(stats)} {time.time() - start:.0f}s", flush=True)
        if case.func is None:
            groups[case.origin.split(":")[0] + ": " + case.origin[-80:]] += 1
            _save(out, "generator", ident, case, case.origin)
            continue
        try:
            reasons, err = ub_reasons(case)
        except Exception as exc:
            reasons, err = [], f"interp {type(exc).__name__}"
        if reasons or err:
            stats["skipped (TVM-undefined)"] += 1
            ub[(reasons[0] if reasons else err or "").split(" of ")[0]] += 1
            continue
        opt = (ident % 4) if ident % 3 == 0 else 3
        # kept until the next program: what was running if our own build or kernel dies
        _save(out, "_current", 0, case, f"running with opt_level {opt}")
        got, our_err = ours(case, opt)
        reply = peer.run(_case_files(case, work, ident))
        if "error" in reply:
            key = f"TVM {reply['error'][:100]}"
            if not key.startswith(("TVM parse", "TVM compile")) and known_bug(case.text):
                key += f" (meets known TVM bug {known_bug(case.text)})"
        elif our_err:
            key = f"ours {our_err}"
        else:
            data = np.load(reply_path := _case_files_out(work, ident))
            want = [data[f"a{k}"] for k in range(len(data.files))]
            os.unlink(reply_path)
            assert got is not None
            problem = compare(want, got, case.inexact)
            if problem is None:
                stats["agree"] += 1
                continue
            bug = known_bug(case.text)
            if bug is not None:  # confirmed when TVM agrees with the control program
                control = _control(case, bind_indices(case.func), peer, work, ident)
                bug = bug if control is not None and compare(control, got, case.inexact) is None \
                    else None
            key = f"known TVM bug {bug}: {problem}" if bug else problem
            detail = "\n".join(f"# arg {k}: tvm={w.tolist()}\n#        ours={g.tolist()}"
                               for k, (w, g) in enumerate(zip(want, got))
                               if isinstance(w, np.ndarray) and not np.array_equal(w, g))
            key_detail = detail
            _save(out, _slug(key), ident, case, f"{key} (opt_level {opt})\n{key_detail}")
            groups[key] += 1
            stats["known TVM bug" if bug else "differ"] += 1
            continue
        if key.startswith(("TVM parse", "TVM compile")):
            stats["peer refused"] += 1  # TVM 0.27 cannot parse or compile it: not compared
        else:
            stats["differ" if not key.startswith("TVM") else "peer crashed"] += 1
        groups[key] += 1
        _save(out, _slug(key), ident, case, key)

    peer.stop()
    print(f"FINAL {dict(stats)} in {time.time() - start:.0f}s")
    print("skipped for TVM-undefined behaviour:", dict(ub.most_common()))
    for key, num in groups.most_common():
        print(f"{num:6d}  {key}")
    for key, text in KNOWN_TVM_BUGS.items():
        print(f"known TVM bug {key}: {text}")
    return 1 if stats["differ"] or stats["peer crashed"] else 0


def _control(case: Case, func: Any, peer: Peer, work: Path, ident: int) -> list[Any] | None:
    """TVM's outputs for ``func`` on ``case``'s inputs (None when it fails)."""
    try:
        text = func.script()
    except Exception:
        return None
    other = Case(func, text, case.args, case.inexact, case.origin)
    reply = peer.run(_case_files(other, work, ident + 10_000_000))
    if "error" in reply:
        return None
    path = _case_files_out(work, ident + 10_000_000)
    data = np.load(path)
    outs = [data[f"a{k}"] for k in range(len(data.files))]
    os.unlink(path)
    return outs


def _case_files_out(work: Path, ident: int) -> Path:
    return work / f"p{ident}_out.npz"


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", key)[:60].strip("_")


def _save(out: Path, group: str, ident: int, case: Case, header: str) -> None:
    folder = out / group
    folder.mkdir(parents=True, exist_ok=True)
    args = "\n".join(f"# in {k}: {np.asarray(a).dtype} {np.asarray(a).tolist()}"
                     for k, a in enumerate(case.args))
    (folder / f"p{ident}.py").write_text(
        f"# {case.origin}\n# {header.replace(chr(10), chr(10) + '# ')}\n{args}\n{case.text}\n")


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        traceback.print_exc()
        sys.exit(130)
