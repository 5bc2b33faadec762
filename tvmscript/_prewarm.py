"""Create the JIT on a background thread while the program goes on after ``import tvmscript``.

The thread imports the native runtime (llvmlite, ``backend.runtime``) and then creates the
LLJIT (LLVM initialisation, host target query, one probe link): neither is on the importing
thread, so ``import tvmscript`` stays short, and by the time a first kernel is parsed and
lowered the JIT is ready. ``TVMSCRIPT_PREWARM=0`` disables it. A ``fork()`` waits for the
thread (the child must not inherit a half-done import or a half-initialised LLVM); interpreter
exit waits for it too (it is not a daemon: LLVM is not torn down under it).
"""

from __future__ import annotations

import contextlib
import os
import threading

__all__ = ["start", "started"]

_thread: threading.Thread | None = None
_lock = threading.Lock()


def _disabled() -> bool:
    flag = os.environ.get("TVMSCRIPT_PREWARM", "1").strip().lower()
    return flag in ("0", "false", "no", "off")


def _run() -> None:
    with contextlib.suppress(Exception):  # the build that needs the JIT reports any failure
        from backend.runtime import engine

        engine.warm_now()


def _join() -> None:
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
        _thread.start()


def started() -> bool:
    """Whether the prewarm thread was started in this process."""
    return _thread is not None
