"""Shared fixtures for the native runtime tests (and ``rt_kernels`` made importable)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:  # works with --import-mode=importlib too
    sys.path.insert(0, _HERE)

from rt_kernels import echo_ir, raising_ir, saxpy_ir  # noqa: E402

from backend.abi.pyentry import make_builtin  # noqa: E402
from backend.runtime import compile_ir  # noqa: E402


@pytest.fixture(autouse=True)
def _no_ambient_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never touch the user's cache unless they opt in with their own directory."""
    monkeypatch.delenv("TVMSCRIPT_CACHE", raising=False)
    monkeypatch.delenv("TVMSCRIPT_CACHE_DIR", raising=False)


@pytest.fixture(scope="session")
def saxpy() -> Callable[..., Any]:
    ir, spec = saxpy_ir()
    lib = compile_ir(ir, name="saxpy", cache=False)
    return make_builtin(lib, spec, "saxpy_kernel")


@pytest.fixture(scope="session")
def echo() -> dict[str, Callable[..., Any]]:
    ir, specs = echo_ir()
    lib = compile_ir(ir, name="echo", cache=False)
    return {dt: make_builtin(lib, spec, f"echo_{dt}_kernel") for dt, spec in specs.items()}


@pytest.fixture(scope="session")
def failing() -> dict[str, Callable[..., Any]]:
    ir, specs = raising_ir()
    lib = compile_ir(ir, name="failing", cache=False)
    return {k: make_builtin(lib, spec, f"{k}_kernel") for k, spec in specs.items()}
