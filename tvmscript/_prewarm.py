"""Create the JIT on a background thread while the program goes on after ``import tvmscript``.

The thread imports the native runtime (llvmlite, ``backend.runtime``) and then creates the
LLJIT (LLVM initialisation, host target query, one probe link): neither is on the importing
thread, so ``import tvmscript`` stays short, and by the time a first kernel is parsed and
lowered the JIT is ready; then it imports the compiler (passes, code generation) so that the
first build does not. A build that starts before the thread is done stops it after the
module it is importing (:func:`stop_imports`) and imports what it needs itself: one thread
imports at a time, and a build served from the disk cache needs neither code generation nor
the passes.
``TVMSCRIPT_PREWARM=0`` disables it. A ``fork()`` waits for the thread (the child must not
inherit a half-done import or a half-initialised LLVM); interpreter exit waits for it too
(it is not a daemon: LLVM is not torn down under it).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading

__all__ = ["start", "started", "stop_imports", "wait_for_imports"]

_thread: threading.Thread | None = None
_lock = threading.Lock()


def _disabled() -> bool:
    flag = os.environ.get("TVMSCRIPT_PREWARM", "1").strip().lower()
    return flag in ("0", "false", "no", "off")


# The compiler a first build imports (``tvmscript.compiler.build`` brings codegen and the
# passes' infrastructure, ``lowering.lower`` the pipeline's passes): about 35 ms of CPU that
# the thread spends while the program parses, instead of the first build. After them the
# thread compiles a small kernel and drops it (``tvmscript.compiler.warmup``: lazy imports,
# first-use caches, LLVM's pipelines and tables), stopping between its steps when a build
# starts: a small static kernel built 1 s after the import, 55-57 -> 41-45 ms on the Zen 2
# host (a second build: 30-33 ms).
_COMPILER = (("tvmscript.compiler.build", None), ("lowering", "lower"))
_stop = threading.Event()
_imports_done = threading.Event()


def _run() -> None:
    with contextlib.suppress(Exception):  # the build that needs the JIT reports any failure
        from backend.runtime import engine

        engine.warm_now()
    try:
        with contextlib.suppress(Exception):  # the first build imports whatever is left
            # Waits until `import tvmscript` has finished: the compiler's imports never run
            # beside the package's own (two threads importing halfway into each other's
            # modules).
            importlib.import_module("tvmscript")
            for module, attr in _COMPILER:
                if _stop.is_set():
                    return
                imported = importlib.import_module(module)
                if attr is not None:
                    getattr(imported, attr)
            # Then a throwaway compilation warms what a first build fills on first use.
            from .compiler import warmup

            for _ in warmup.steps():
                if _stop.is_set():
                    return
    finally:
        _imports_done.set()


def wait_for_imports(timeout: float = 5.0) -> None:
    """Let the thread finish the compiler's imports before this thread imports more of the
    package (``tir.Schedule`` loads the schedule library on first use).

    Two threads importing overlapping module graphs can fail in CPython 3.11 with a
    ``_DeadlockError`` (seen once in CI: the schedule library and the compiler, both reaching
    ``lowering.analysis``). Not from the thread itself, nor while ``import tvmscript`` is
    still running (the thread waits for that import to end); bounded by ``timeout``."""
    if _may_wait():
        _imports_done.wait(timeout)


def stop_imports(timeout: float = 5.0) -> None:
    """Stop the thread after the module it is importing (its JIT work, when still running,
    is finished first) and wait for it: the first build imports what it needs itself, and
    a build served from the disk cache needs neither code generation nor the passes. Not
    from the thread itself, nor while ``import tvmscript`` is still running; bounded by
    ``timeout``."""
    if _may_wait():
        _stop.set()
        _imports_done.wait(timeout)


def _may_wait() -> bool:
    """Whether the calling thread may wait for the thread's imports: it runs, it is another
    thread, and ``import tvmscript`` has finished (which the thread's imports wait for)."""
    thread = _thread
    if thread is None or thread is threading.current_thread() or not thread.is_alive():
        return False
    package = sys.modules.get("tvmscript")
    spec = getattr(package, "__spec__", None)
    return package is not None and not getattr(spec, "_initializing", False)


def _join() -> None:
    _stop.set()  # the compiler imports are not worth waiting for: a child imports on demand
    thread = _thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def start() -> None:
    """Start the thread once per process (no-op when disabled)."""
    global _thread
    if _disabled():
        return
    with _lock:
        if _thread is not None:
            return
        _thread = threading.Thread(target=_run, name="tvmscript-jit-prewarm")
        os.register_at_fork(before=_join)
        # Interpreter exit joins the thread: a short program must not wait for the compiler's
        # imports (it waits only for the module being imported when it ends).
        register = getattr(threading, "_register_atexit", None)
        if register is not None:
            register(_stop.set)
        _thread.start()


def started() -> bool:
    """Whether the prewarm thread was started in this process."""
    return _thread is not None
