"""Importing this module starts :func:`backend.runtime.engine.prewarm`.

``tvmscript`` imports it before anything else, so the JIT is created on a background thread
while the rest of the package (and the program) imports and parses: the LLVM set-up is off
the first build's path by the time a kernel is built (``TVMSCRIPT_PREWARM=0`` disables it).
"""

from __future__ import annotations

from .engine import prewarm

prewarm()
