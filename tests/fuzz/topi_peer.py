"""Differential probe of TVM's TOPI operators: the PrimFuncs TVM 0.27 makes from them, run by
TVM and by us on the same inputs.

Not a pytest module (run it as a script, from the repository)::

    nice -n 10 python tests/fuzz/topi_peer.py --tvm-python /work/peers/bin/python \\
        --out /tmp/topi_peer

Real TVM users get most PrimFuncs from TOPI/TE (``te.create_prim_func``, what Relax's
legalisation produces). :mod:`topi_corpus` lists ~500 operators at small shapes (several
dtypes, symbolic dimensions for some). A worker process of the peer interpreter
(``--tvm-python``; this file is also the worker: ``--worker``) builds each one, prints its
script, compiles it for LLVM, runs it on random inputs and hands back the script, the inputs
and TVM's outputs. Our side:

* maps the 0.27 spelling to 0.16's (:func:`to_tvm016`) and parses it with
  ``tvmscript.from_source``; prints and parses it again (``structural_equal``);
* runs our interpreter with :class:`tvm_peer.UBWatch` (a run meeting an operation TVM leaves
  undefined is counted as such, not compared), builds it natively and runs it;
* compares both with TVM's outputs (:func:`tvm_peer.compare`: floats with a tolerance,
  integers exactly).

Each operator gets one line: ``agree``, ``TVM-undefined``, ``skipped`` (an extern/packed
call into TVM's runtime: sort, topk...), ``TVM refused`` (TOPI or TVM's build fails),
``we refuse`` (a user error of ours: parse or build), ``we crash`` (an internal error),
``round trip``, ``differ`` (which side: native, interpreter) or ``known difference`` (a
decision of ours: :data:`KNOWN_DIFFERENCES`). Every non-agreeing program is written to
``--out`` (our spelling of TVM's text, what differed, the inputs and TVM's outputs). Exits 0
when no TVM Python is given or importable; 1 when something differs or crashed.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------
# The worker (the peer's interpreter: numpy, tvm and topi_corpus only)
# ---------------------------------------------------------------------------------------------

_EXTERN = re.compile(r"T\.(call_packed|call_extern|tvm_call_packed|call_pure_extern|"
                     r"call_cpacked|tvm_stack_make_array)\(")


def _worker(mcpu: str) -> int:
    import tvm  # type: ignore[import-not-found]
    from topi_corpus import CORPUS, Op
    from tvm import te
    from tvm_peer import _first  # stdlib and numpy only: fine in the peer

    target = {"kind": "llvm", "mcpu": mcpu}
    entries = dict(CORPUS)
    print(json.dumps({"ready": tvm.__version__}), flush=True)

    # a dimension prints as a Python expression of its variables (T.int64(11) for a constant)
    names = {"T": type("T", (), {"int64": int, "int32": int})}

    def dims(tensor: Any, op: Op) -> tuple[int, ...]:
        return tuple(int(eval(str(d), names, dict(op.binds))) for d in tensor.shape)

    def values(tensor: Any, op: Op, rng: Any) -> Any:
        shape, dtype, name = dims(tensor, op), str(tensor.dtype), tensor.op.name
        lo, hi = op.ranges.get(name, (None, None))
        if dtype == "bool":
            return rng.integers(0, 2, shape).astype(bool)
        if dtype.startswith("float"):
            if lo is None:
                data = rng.standard_normal(shape)
            else:
                data = rng.uniform(lo, hi, shape)
            if name in op.special:
                pick = rng.integers(0, 12, shape)
                data = np.where(pick == 0, np.nan, np.where(pick == 1, np.inf, np.where(
                    pick == 2, -np.inf, data)))
            return data.astype(dtype)
        if lo is None or hi is None:
            lo, hi = (0, 15) if dtype.startswith("uint") else (-20, 20)
        return rng.integers(int(lo), int(hi), shape, endpoint=True).astype(dtype)

    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "list":
            print(json.dumps({"names": list(entries)}), flush=True)
            continue
        name = req["name"]
        try:
            op = entries[name]()
            func = te.create_prim_func(op.inputs + op.outputs)
            text = func.script()
        except Exception as exc:
            print(json.dumps({"error": f"topi: {type(exc).__name__}: {_first(exc)}"}),
                  flush=True)
            continue
        extern = _EXTERN.search(text)
        if extern:
            print(json.dumps({"skip": extern.group(1), "script": text}), flush=True)
            continue
        try:
            lib = tvm.compile(tvm.IRModule({"main": func}), target=target)
        except Exception as exc:
            print(json.dumps({"error": f"compile: {type(exc).__name__}: {_first(exc)}",
                              "script": text}), flush=True)
            continue
        try:
            rng = np.random.default_rng(req["seed"])
            arrays = [values(t, op, rng) for t in op.inputs]
            arrays += [np.zeros(dims(t, op), str(t.dtype)) for t in op.outputs]
            np.savez(req["inputs"], *arrays)
            args = [tvm.runtime.tensor(a) for a in arrays]
            lib["main"](*args)
        except Exception as exc:
            print(json.dumps({"error": f"run: {type(exc).__name__}: {_first(exc)}",
                              "script": text}), flush=True)
            continue
        np.savez(req["outputs"], *[a.numpy() for a in args])
        print(json.dumps({"script": text, "inexact": op.inexact}), flush=True)
    return 0


# ---------------------------------------------------------------------------------------------
# Our side
# ---------------------------------------------------------------------------------------------


def to_tvm016(text: str) -> str:
    """TVM 0.27's printed script (``tirx``, ``T.sblock``...) in TVM 0.16's spelling."""
    lines = [ln for ln in text.splitlines() if not ln.startswith("# from tvm.tirx.layout")]
    out = "\n".join(lines)
    out = out.replace("# from tvm.script import tirx as T", "from tvmscript import tir as T")
    out = re.sub(r"@T\.prim_func\(s_tir=True\)", "@T.prim_func", out)
    out = re.sub(r"\bT\.sblock_alloc_buffer\(", "T.alloc_buffer(", out)
    out = re.sub(r"\bT\.sblock_attr\(", "T.block_attr(", out)
    out = re.sub(r"\bT\.sblock\(", "T.block(", out)
    out = out.replace('"tirx.noalias"', '"tir.noalias"')
    # a let-bound variable's annotation: 0.27 marks it T.let[...]
    out = re.sub(r": T\.let\[(T\.\w+)\] = ", r": \1 = ", out)
    # a block's annotations as one dict argument (0.16: T.block_attr)
    out = re.sub(r"^(\s+)T\.attr\(\{", r"\1T.block_attr({", out, flags=re.M)
    return _symbolic_params(_scalar_locals(out)) + "\n"


def _scalar_locals(text: str) -> str:
    """0.27 prints a one-element local buffer as a scalar variable (``x: T.int64`` declares
    it, ``x = v`` stores, ``x`` loads); 0.16 spells it as a buffer of one element."""
    lines = text.splitlines()
    k = 0
    while k < len(lines):
        m = re.match(r"^(\s+)(\w+): T\.(\w+)$", lines[k])
        if not m:
            k += 1
            continue
        indent, name, dtype = m.groups()
        lines[k] = f'{indent}{name} = T.decl_buffer((1,), "{dtype}", scope="local")'
        use = re.compile(rf"(?<![\w.\"]){name}\b(?!\s*\[)")
        j = k + 1
        while j < len(lines) and (not lines[j].strip() or (lines[j].startswith(indent)
                                  and len(lines[j]) - len(lines[j].lstrip()) >= len(indent))):
            lines[j] = use.sub(f"{name}[0]", lines[j])
            j += 1
        k += 1
    return "\n".join(lines)


def _symbolic_params(text: str) -> str:
    """0.27 prints a buffer parameter of symbolic shape inline, its variables declared in
    the body (``A: T.Buffer(("n", 3))``, ``n = T.int32()``; an int64 one as a module-level
    ``TypeVar``), a dimension not yet declared as a string (``("n * m",)``) and strides as
    a ``layout=T.TileLayout(T.S[shape:strides])``; 0.16 (and we) spell it as a handle
    parameter and a ``T.match_buffer`` after the declarations, with ``strides=``."""
    int64 = re.findall(r'^(\w+) = TypeVar\("\1"\)$', text, re.M)
    lines = [ln for ln in text.splitlines()
             if ln != "# from typing import TypeVar" and not re.match(r"^\w+ = TypeVar\(", ln)]
    at = next((k for k, ln in enumerate(lines) if ln.startswith("def ")), None)
    if at is None:
        return text
    lines[at + 1:at + 1] = [f"    {name} = T.int64()" for name in int64]
    decls = []
    k = at + 1
    while k < len(lines) and re.match(r"^    \w+ = T\.int(32|64)\(\)$", lines[k]):
        decls.append(lines[k].split("=")[0].strip())
        k += 1
    head = ast.parse(lines[at] + "\n    pass").body[0]
    assert isinstance(head, ast.FunctionDef)
    params, matches = [], []
    for arg in head.args.args:
        ann = ast.unparse(_buffer_016(arg.annotation)) if arg.annotation else ""
        if any(re.search(rf"\b{name}\b", ann) for name in decls):
            call = re.sub(r"^T\.Buffer\(", f"T.match_buffer(var_{arg.arg}, ", ann)
            matches.append(f"    {arg.arg} = {call}")
            params.append(f"var_{arg.arg}: T.handle")
        else:
            params.append(f"{arg.arg}: {ann}")
    lines[at] = f"def {head.name}({', '.join(params)}):"
    return "\n".join(lines[:k] + matches + lines[k:])


def _buffer_016(ann: ast.expr) -> ast.expr:
    """A ``T.Buffer(...)`` annotation with its string dimensions as expressions and a
    ``layout=T.TileLayout(T.S[shape:strides])`` as ``strides=``."""
    if not isinstance(ann, ast.Call) or not ann.args:
        return ann
    shape = ann.args[0]
    if isinstance(shape, ast.Tuple):
        shape.elts = [ast.parse(e.value, mode="eval").body
                      if isinstance(e, ast.Constant) and isinstance(e.value, str) else e
                      for e in shape.elts]
    for kw in ann.keywords:
        value = kw.value
        if (kw.arg == "layout" and isinstance(value, ast.Call) and len(value.args) == 1
                and isinstance(value.args[0], ast.Subscript)
                and isinstance(value.args[0].slice, ast.Slice)
                and value.args[0].slice.upper is not None):
            kw.arg, kw.value = "strides", value.args[0].slice.upper
    return ann


class Outcome:
    """What happened to one operator on our side."""

    def __init__(self, key: str, detail: str = "") -> None:
        self.key, self.detail = key, detail


def _user_error(exc: BaseException) -> bool:
    from tvmscript.diagnostics import DiagnosticError

    return isinstance(exc, (DiagnosticError, TypeError, ValueError, NotImplementedError))


def _failure(stage: str, exc: BaseException) -> Outcome:
    from tvm_peer import _first

    message = _first(exc).replace("\n", " ")[:160]
    if _user_error(exc):
        return Outcome(f"we refuse ({stage}): {type(exc).__name__}: {message}")
    tb = traceback.extract_tb(exc.__traceback__)[-1]
    where = f"{Path(tb.filename).name}:{tb.lineno}"
    return Outcome(f"we crash ({stage}): {type(exc).__name__} at {where}: {message}",
                   traceback.format_exc())


def check_ours(text: str, args: list[Any], want: list[Any], inexact: bool,
               target: str, opt_level: int | None = None) -> Outcome:
    """Parse, round-trip, watch, build and run ``text`` on ``args``; compare with ``want``."""
    import tvm_peer

    import tvmscript
    from irbuilder.ir import PrimFunc

    try:
        func = tvmscript.from_source(to_tvm016(text))
        assert isinstance(func, PrimFunc)
    except Exception as exc:
        return _failure("parse", exc)
    try:
        again = tvmscript.from_source(func.script())
        if not tvmscript.ir.structural_equal(func, again):
            return Outcome("round trip: the printed function parses to a different one")
    except Exception as exc:
        return _failure("round trip", exc)
    watch = tvm_peer.UBWatch()
    interp_args = tvm_peer._copies(args)
    try:
        interp = tvmscript.build(func, target="interp")
        with watch.active(), np.errstate(all="ignore"):
            interp(*interp_args)
    except (ArithmeticError, AssertionError) as exc:
        return Outcome(f"TVM-undefined: our interpreter raised {type(exc).__name__}")
    except Exception as exc:
        return _failure("interpreter", exc)
    if watch.reasons:
        return Outcome(f"TVM-undefined: {watch.reasons[0].split(' of ')[0]}")
    native_args = tvm_peer._copies(args)
    try:
        options = {} if opt_level is None else {"opt_level": opt_level}
        kernel = tvmscript.build(func, target=target, **options)
    except Exception as exc:
        return _failure("build", exc)
    try:
        with np.errstate(all="ignore"):
            kernel(*native_args)
    except Exception as exc:
        return _failure("run", exc)
    native = tvm_peer.compare(want, native_args, inexact)
    interp_diff = tvm_peer.compare(want, interp_args, inexact)
    if native or interp_diff:
        sides = "+".join(s for s, d in (("native", native), ("interpreter", interp_diff)) if d)
        detail = "\n".join(
            f"arg {k}: tvm={w.tolist()}\n  native={g.tolist()}\n  interp={i.tolist()}"
            for k, (w, g, i) in enumerate(zip(want, native_args, interp_args))
            if not (np.array_equal(w, g, equal_nan=w.dtype.kind == "f")
                    and np.array_equal(w, i, equal_nan=w.dtype.kind == "f")))
        known = known_difference(text, args)
        if known:
            return Outcome(f"known difference: {known}", detail)
        return Outcome(f"differ ({sides}): {native or interp_diff}", detail)
    return Outcome("agree")


KNOWN_DIFFERENCES = {
    "nan-not-equal": "a float != with a NaN operand is true for us (IEEE, C, numpy: fcmp une) "
                     "and false in TVM (its LLVM codegen emits fcmp one for NE); "
                     "docs/tvm-compat.md",
}
"""Differences whose cause is a decision of ours (documented in docs/tvm-compat.md). A
program is tagged by its text and inputs, so a tagged one may hide another difference: its
saved outputs say."""


def known_difference(text: str, args: list[Any]) -> str | None:
    """The :data:`KNOWN_DIFFERENCES` entry a differing program meets, judged from its text
    and inputs."""
    has_nan = any(isinstance(a, np.ndarray) and a.dtype.kind == "f" and np.isnan(a).any()
                  for a in args)
    if has_nan and " != " in text:
        return KNOWN_DIFFERENCES["nan-not-equal"]
    return None


def _category(key: str) -> str:
    for name in ("agree", "TVM-undefined", "skipped", "TVM refused", "we refuse", "we crash",
                 "round trip", "differ", "known difference"):
        if key.startswith(name):
            return name
    return key


def _save(out: Path, name: str, outcome: Outcome, text: str, work: Path) -> None:
    folder = out / re.sub(r"[^A-Za-z0-9]+", "_", _category(outcome.key))
    folder.mkdir(parents=True, exist_ok=True)
    header = "\n".join(f"# {ln}" for ln in f"{outcome.key}\n{outcome.detail}".splitlines())
    (folder / f"{name}.py").write_text(f"# {name}\n{header}\n\n{to_tvm016(text)}")
    for suffix in ("in", "out"):
        if (work / f"{name}_{suffix}.npz").exists():
            shutil.copy(work / f"{name}_{suffix}.npz", folder / f"{name}_{suffix}.npz")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tvm-python", default=os.environ.get("TVMSCRIPT_TVM_PYTHON"))
    ap.add_argument("--out", default=None, help="folder for the non-agreeing programs")
    ap.add_argument("--only", default=None, help="a regular expression: run matching names")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", default="llvm -mcpu=znver3", help="our build's target")
    ap.add_argument("--opt-level", type=int, default=None,
                    help="our build's opt_level (default: build's)")
    ap.add_argument("--tvm-mcpu", default="host",
                    help="the CPU TVM compiles for (host: LLVM's name of this one; another "
                         "CPU's instructions may not run here: znver3's SSE4A traps on Intel, "
                         "and TVM does not leave them out as our Target does)")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--quiet", action="store_true", help="print only non-agreeing operators")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mcpu", help=argparse.SUPPRESS)  # the worker's: Peer passes --tvm-mcpu
    opts = ap.parse_args(argv)
    if opts.worker:
        sys.path.insert(0, str(HERE))
        return _worker(opts.mcpu)

    sys.path.insert(0, str(HERE))
    from tvm_peer import Peer, tvm_python_problem

    problem = tvm_python_problem(opts.tvm_python)
    if problem:
        print(f"skip: {problem}")
        return 0
    sys.path.insert(0, str(HERE.parent.parent))
    import faulthandler

    import tvmscript  # noqa: F401  (installs the printer)

    faulthandler.enable()
    work = Path(tempfile.mkdtemp(prefix="topi_peer_work_"))
    out = Path(opts.out or tempfile.mkdtemp(prefix="topi_peer_"))
    out.mkdir(parents=True, exist_ok=True)
    if opts.tvm_mcpu == "host":
        import llvmlite.binding as llvm

        opts.tvm_mcpu = llvm.get_host_cpu_name()
    peer = Peer(opts.tvm_python, opts.tvm_mcpu, opts.timeout, worker=Path(__file__).resolve())
    peer.start()
    names: list[str] = peer.run({"op": "list"})["names"]
    if opts.only:
        names = [n for n in names if re.search(opts.only, n)]
    print(f"peer TVM {peer.version} (-mcpu={opts.tvm_mcpu}), ours {opts.target!r}; "
          f"{len(names)} operators; non-agreeing programs go to {out}", flush=True)
    target = opts.target
    counts: collections.Counter[str] = collections.Counter()
    groups: collections.Counter[str] = collections.Counter()
    start = time.time()
    for k, name in enumerate(names):
        inputs, outputs = work / f"{name}_in.npz", work / f"{name}_out.npz"
        reply = peer.run({"op": "run", "name": name, "seed": opts.seed * 100_003 + k,
                          "inputs": str(inputs), "outputs": str(outputs)})
        text = reply.get("script", "")
        if "skip" in reply:
            outcome = Outcome(f"skipped: calls {reply['skip']}")
        elif "error" in reply:
            outcome = Outcome(f"TVM refused: {reply['error']}")
        else:
            args = [a for _, a in sorted(np.load(inputs).items(), key=_arg_order)]
            want = [a for _, a in sorted(np.load(outputs).items(), key=_arg_order)]
            outcome = check_ours(text, args, want, bool(reply.get("inexact")), target,
                                 opts.opt_level)
        category = _category(outcome.key)
        counts[category] += 1
        if category != "agree":
            groups[re.sub(r"\d+(\.\d+)?", "N", outcome.key)[:140]] += 1
            if category not in ("skipped",):
                _save(out, name, outcome, text, work)
        if category != "agree" or not opts.quiet:
            print(f"{name:40s} {outcome.key}", flush=True)
    peer.stop()
    print(f"FINAL {len(names)} operators in {time.time() - start:.0f}s: {dict(counts)}")
    for key, num in groups.most_common():
        print(f"{num:5d}  {key}")
    return 1 if counts["we crash"] or counts["differ"] or counts["round trip"] else 0


def _arg_order(item: tuple[str, Any]) -> int:
    return int(item[0].split("_")[1])  # np.savez names positional arrays arr_0, arr_1, ...


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
