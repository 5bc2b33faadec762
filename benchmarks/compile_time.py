"""Source-to-callable time of a simple kernel: ours cold, ours warm (disk cache), TVM 0.27.

Every measurement runs in a fresh process (imports excluded, reported separately):

* ``cold``: build the IR (parser when ``@T.prim_func`` works, else the IRBuilder) and
  ``tvmscript.build(f, cache=False)``, with a per-phase breakdown (lowering passes, LLVM IR
  generation, LLVM parse+verify+optimise, machine code, JIT link, entry wrapper);
* ``warm``: the same with ``cache=True`` against a primed cache directory (timed without
  the phase wrappers; a second set of runs gives the warm breakdown);
* ``tvm``: TVMScript parse + ``tvm.compile(target="llvm")`` of the same kernel with
  ``/work/peers/bin/python`` (skipped when it is absent).

Run: ``python benchmarks/compile_time.py [repeats]``. Goals: cold <= TVM (~60 ms), warm <= 5 ms.

``python benchmarks/compile_time.py --suite`` reports the split for every kernel of the
suite (``benchmarks/kernels.py``), one fresh process per side:

* ours: parse (the ``@T.prim_func`` decorator, timed by wrapping it while
  ``benchmarks.kernels`` is imported), lowering (the pipeline's passes through
  ``lowering.PassContext(instruments=[TimePasses()])``; the three slowest passes are named),
  LLVM IR generation, LLVM parse + verify, LLVM optimisation (the ``default<O3>`` pipeline),
  machine code (``emit_object``), JIT link, and the Python entry (builtin + kernel objects).
  The LLVM phases are timed by wrapping the functions ``tvmscript.build`` and
  ``backend.runtime.engine`` call (the compiler is not changed); ``cache=False``.
* TVM 0.27 (``/work/peers/bin/python``): parse (its parser's ``parse`` call under
  ``@T.prim_func``, wrapped, for the same-nest twins of ``benchmarks/_tvm_suite.py``) and ``tvm.compile`` (TIR passes, LLVM
  optimisation and code generation together: 0.27 exposes no split of its LLVM phases to
  Python).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEER_PYTHON = Path("/work/peers/bin/python")

_OURS = textwrap.dedent('''
    import json, sys, time
    sys.path.insert(0, {root!r})
    t0 = time.perf_counter()
    import numpy as np
    import tvmscript
    from irbuilder import IRBuilder, tir as T
    t1 = time.perf_counter()

    def make_ir():
        try:
            from tvmscript import tir as TS

            @TS.prim_func
            def add(a: TS.handle, b: TS.handle, c: TS.handle):
                n = TS.int64()
                A = TS.match_buffer(a, (n,), "float32")
                B = TS.match_buffer(b, (n,), "float32")
                C = TS.match_buffer(c, (n,), "float32")
                for i in range(n):
                    C[i] = A[i] + B[i]
            return add, "parser"
        except Exception:
            with IRBuilder() as ib:
                with T.prim_func():
                    T.func_name("add")
                    n = T.int64()
                    A = T.arg("A", T.Buffer((n,), "float32"))
                    B = T.arg("B", T.Buffer((n,), "float32"))
                    C = T.arg("C", T.Buffer((n,), "float32"))
                    with T.serial(n) as i:
                        T.buffer_store(C, A[i] + B[i], [i])
            return ib.get(), "irbuilder"

    phases = {{}}
    if {profile}:
        # Wrap the phases of build() to time them (same calls as tvmscript.build).
        import lowering, backend.codegen as cg, backend.runtime.engine as eng
        import importlib
        tb = importlib.import_module("tvmscript.compiler.build")
        def timed(name, fn):
            def wrapper(*a, **k):
                s = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    phases[name] = phases.get(name, 0.0) + time.perf_counter() - s
            return wrapper
        tb.lower_for_build = timed("lowering passes", tb.lower_for_build)
        tb.generate = timed("LLVM IR generation", tb.generate)
        tb.entry_wrapper_ir = timed("entry wrapper IR", tb.entry_wrapper_ir)
        eng.optimize = timed("LLVM optimise (O3)", eng.optimize)
        eng._link = timed("JIT link (incl. JIT creation)", eng._link)
        tb.make_builtin = timed("make builtin", tb.make_builtin)
        tb.structural_hash = timed("structural hash", tb.structural_hash)
        tb.build_cache_path = timed("cache key (host target, paths)", tb.build_cache_path)
        tb.load_build = timed("read cache entry", tb.load_build)
        eng._get_jit = timed("JIT creation (in link)", eng._get_jit)
        tb._assemble = timed("kernel objects (assemble)", tb._assemble)
        import llvmlite.binding as llvm
        orig_parse = llvm.parse_assembly
        eng.llvm.parse_assembly = timed("LLVM parse", orig_parse)
        orig_emit = llvm.TargetMachine.emit_object
        llvm.TargetMachine.emit_object = timed("machine code (emit_object)", orig_emit)
    t2 = time.perf_counter()
    f, how = make_ir()
    t3 = time.perf_counter()
    k = tvmscript.build(f, cache={cache})
    t4 = time.perf_counter()
    a = np.arange(8, dtype="float32"); c = np.empty_like(a); k(a, a, c)
    assert (c == 2 * a).all()
    print(json.dumps({{"import": t1 - t0, "ir": t3 - t2, "build": t4 - t3, "how": how,
                      "from_cache": k.from_cache, "phases": phases}}))
''')

_TVM = textwrap.dedent('''
    import json, time
    t0 = time.perf_counter()
    import tvm
    from tvm.script import tirx as T
    t1 = time.perf_counter()

    @T.prim_func
    def add(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for i in range(n):
            C[i] = A[i] + B[i]
    t2 = time.perf_counter()
    lib = tvm.compile(add, target="llvm")
    fn = lib["add"]
    t3 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "ir": t2 - t1, "build": t3 - t2}))
''')


def _run(python: str, code: str, env: dict[str, str]) -> dict[str, object]:
    # A real file: TVMScript parsers read the kernel's source with inspect.
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(code)
    try:
        proc = subprocess.run([python, script.name], capture_output=True, text=True,
                              timeout=300, env={**os.environ, **env}, check=False)
    finally:
        os.unlink(script.name)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed")
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _ms(values: list[float]) -> str:
    return f"{1e3 * statistics.median(values):8.2f} ms (min {1e3 * min(values):.2f})"


def main(repeats: int = 9) -> None:
    """Measure and print the table (medians over ``repeats`` fresh processes)."""
    rows: dict[str, list[dict[str, object]]] = {"cold": [], "warm": [], "tvm": []}
    warm_profiled: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tvms-ct-") as tmp:
        env = {"TVMSCRIPT_CACHE_DIR": tmp}
        for _ in range(repeats):
            rows["cold"].append(_run(sys.executable, _OURS.format(
                root=str(ROOT), cache=False, profile=True), env))
        _run(sys.executable, _OURS.format(root=str(ROOT), cache=True, profile=False), env)
        for _ in range(repeats):
            rows["warm"].append(_run(sys.executable, _OURS.format(
                root=str(ROOT), cache=True, profile=False), env))
        for _ in range(repeats):
            warm_profiled.append(_run(sys.executable, _OURS.format(
                root=str(ROOT), cache=True, profile=True), env))
    if PEER_PYTHON.exists():
        for _ in range(repeats):
            try:
                rows["tvm"].append(_run(str(PEER_PYTHON), _TVM, {}))
            except RuntimeError as exc:
                print(f"tvm: {exc}")
                break
    how = rows["cold"][0]["how"]
    print(f"source-to-callable, simple add kernel (IR built with the {how}), "
          f"median of {repeats} fresh processes")
    print(f"{'':6} {'IR/parse':>26} {'build':>26} {'import':>26}")
    for name, results in rows.items():
        if not results:
            print(f"{name:6} (not available)")
            continue
        cols = [_ms([float(r[key]) for r in results])  # type: ignore[arg-type]
                for key in ("ir", "build", "import")]
        print(f"{name:6} " + " ".join(f"{c:>26}" for c in cols))
    if all(r.get("from_cache") for r in rows["warm"]):
        print("warm builds were all served from the disk cache")
    for title, runs in (("cold", rows["cold"]), ("warm", warm_profiled)):
        phases: dict[str, list[float]] = {}
        for r in runs:
            timings = r["phases"]
            assert isinstance(timings, dict)
            for key, value in timings.items():
                phases.setdefault(key, []).append(float(value))
        print(f"\n{title} build phases (median):")
        for key, values in sorted(phases.items(), key=lambda kv: -statistics.median(kv[1])):
            print(f"  {key:<32} {1e3 * statistics.median(values):7.2f} ms")


_OURS_SUITE = textwrap.dedent('''
    import json, sys, time
    sys.path.insert(0, {root!r})
    import tvmscript, tvmscript.tir
    parse = {{}}
    real_prim_func = tvmscript.tir.prim_func
    def timed_prim_func(*a, **k):
        if a and callable(a[0]) and not k:
            s = time.perf_counter()
            f = real_prim_func(*a, **k)
            parse[a[0].__name__] = time.perf_counter() - s
            return f
        inner = real_prim_func(*a, **k)
        def deco(fn):
            s = time.perf_counter()
            f = inner(fn)
            parse[fn.__name__] = time.perf_counter() - s
            return f
        return deco
    tvmscript.tir.prim_func = timed_prim_func
    from benchmarks.kernels import KERNELS
    tvmscript.tir.prim_func = real_prim_func
    from lowering import PassContext, TimePasses
    import backend.runtime.engine as eng
    import llvmlite.binding as llvm
    import importlib
    tb = importlib.import_module("tvmscript.compiler.build")
    phases = {{}}
    def timed(name, fn):
        def wrapper(*a, **k):
            s = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                phases[name] = phases.get(name, 0.0) + time.perf_counter() - s
        return wrapper
    tb.lower_for_build = timed("lower", tb.lower_for_build)
    tb.generate = timed("llvm_ir", tb.generate)
    tb.entry_wrapper_ir = timed("llvm_ir", tb.entry_wrapper_ir)
    eng.llvm.parse_assembly = timed("llvm_parse", llvm.parse_assembly)
    eng.optimize = timed("llvm_opt", eng.optimize)
    llvm.TargetMachine.emit_object = timed("machine_code", llvm.TargetMachine.emit_object)
    eng._link = timed("link", eng._link)
    tb._assemble = timed("entry", tb._assemble)
    # one throwaway build: LLVM initialisation and the JIT's creation are not per kernel
    from tvmscript import tir as T
    @T.prim_func
    def warm_up(A: T.Buffer((64,), "float32")):
        for i in range(64):
            A[i] = A[i] * T.float32(2)
    tvmscript.build(warm_up, cache=False)
    out = {{}}
    for name, f in KERNELS.items():
        phases.clear()
        tp = TimePasses()
        s = time.perf_counter()
        with PassContext(instruments=[tp]):
            tvmscript.build(f, cache=False)
        total = time.perf_counter() - s
        passes = sorted(((p, t) for p, t in tp.seconds.items() if p != "default_pipeline"),
                        key=lambda kv: -kv[1])[:3]
        out[name] = {{"parse": parse.get(name, parse.get("_" + name + "_in_place", parse.get(
            "_" + name + "_packed", float("nan")))), "total": total, **dict(phases),
            "top_passes": passes}}
    print(json.dumps(out))
''')

_TVM_SUITE = textwrap.dedent('''
    import json, sys, time
    sys.path.insert(0, {root!r})
    import tvm
    from tvm.script import tirx as T
    from benchmarks._tvm_suite import build_tvm_suite
    from benchmarks.peers import make_inputs
    import importlib
    parse, build = {{}}, {{}}
    entry = importlib.import_module("tvm.tirx.script.parser.entry")
    real_parse = entry.parse
    def timed_parse(func, *a, **k):
        s = time.perf_counter()
        try:
            return real_parse(func, *a, **k)
        finally:
            parse[getattr(func, "__name__", "?")] = time.perf_counter() - s
    entry.parse = timed_parse
    class TimedTVM:
        def __getattr__(self, name):
            return getattr(tvm, name)
        @staticmethod
        def compile(mod, target):
            s = time.perf_counter()
            lib = tvm.compile(mod, target=target)
            build[current[0]] = time.perf_counter() - s
            return lib
    current = [""]
    inputs = make_inputs()
    names = list(inputs)
    for name in names:
        current[0] = name
        build_tvm_suite(TimedTVM(), T, inputs, names={{name}})
    print(json.dumps({{"parse": parse, "build": build}}))
''')

SPLIT = ("parse", "lower", "llvm_ir", "llvm_parse", "llvm_opt", "machine_code", "link", "entry")


def suite_split() -> None:
    """Print the per-phase split of source-to-callable for the suite's kernels, ours and
    TVM's (one fresh process each)."""
    ours = _run(sys.executable, _OURS_SUITE.format(root=str(ROOT)), {})
    tvm: dict[str, object] = {}
    if PEER_PYTHON.exists():
        try:
            tvm = _run(str(PEER_PYTHON), _TVM_SUITE.format(root=str(ROOT)), {})
        except RuntimeError as exc:
            print(f"tvm: {exc}")
    print("source-to-callable of the suite's kernels (ms; ours: cache=False, after one "
          "throwaway build; TVM 0.27: same-nest twins)")
    head = " ".join(f"{p:>8}" for p in SPLIT)
    print(f"{'kernel':<14} {head} {'ours':>8} {'tvm parse':>9} {'tvm build':>9}  slowest passes")
    tvm_parse = tvm.get("parse", {})
    tvm_build = tvm.get("build", {})
    assert isinstance(tvm_parse, dict) and isinstance(tvm_build, dict)
    for name, row in ours.items():
        assert isinstance(row, dict)
        cells = " ".join(f"{1e3 * float(row.get(p, 0.0)):>8.1f}" for p in SPLIT)
        total = 1e3 * (float(row["total"]) + float(row["parse"]))
        tp = 1e3 * float(tvm_parse.get(name, tvm_parse.get(name + "_in_place", float("nan"))))
        tb = 1e3 * float(tvm_build.get(name, float("nan")))
        passes = ", ".join(f"{p} {1e3 * s:.0f}" for p, s in row["top_passes"])
        print(f"{name:<14} {cells} {total:>8.1f} {tp:>9.1f} {tb:>9.1f}  {passes}")
    print("ours = parse + build; the phases do not add up to it exactly: the rest is the "
          "build's own bookkeeping (hashing, signature checks)")


if __name__ == "__main__":
    if "--suite" in sys.argv:
        suite_split()
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
