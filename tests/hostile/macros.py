"""Recursive macros the corpus cases marked ``# capture: macros`` call (passed as capture)."""

from __future__ import annotations

from typing import Any

from tvmscript import tir as T


@T.macro
def m_self(x: Any) -> None:
    """Calls itself unconditionally."""
    m_self(x)


@T.macro
def m_ping(x: Any) -> None:
    """Mutual recursion with :func:`m_pong`."""
    m_pong(x)


@T.macro
def m_pong(x: Any) -> None:
    """Mutual recursion with :func:`m_ping`."""
    m_ping(x)


@T.macro
def m_loop(x: Any) -> None:
    """Recursion inside a loop body."""
    for _ in range(2):
        m_loop(x)


@T.macro
def m_count(x: Any, n: Any) -> None:
    """Recursion on a decreasing meta-value with no base case."""
    x[0] = x[0] + T.float32(1)
    m_count(x, n - 1)


MACROS = {"m_self": m_self, "m_ping": m_ping, "m_pong": m_pong, "m_loop": m_loop,
          "m_count": m_count}
"""Name -> macro, the capture of the macro cases."""
