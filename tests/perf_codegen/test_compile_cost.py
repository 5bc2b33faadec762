"""Which functions of a module LLVM optimises (docs/compile-time.md): the kernel and its
parallel bodies get the full pipeline; the Python entry, the cold error helpers and the thread
pool's rarely called functions are ``optnone`` (cheaper builds), and still behave."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tvmscript
from backend.runtime import threadpool
from tvmscript import tir as T


@T.prim_func
def rowsum(A: T.Buffer((64, 48), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(48):
            acc[0] = acc[0] + A[i, j]
        B[i] = acc[0]


def _attributes(ll: str) -> dict[str, set[str]]:
    """Function name -> its attribute words (inline ones and those of its ``#N`` groups)."""
    groups = {m[1]: set(m[2].split()) for m in re.finditer(r"^attributes (#\d+) = \{(.*)\}", ll,
                                                              re.M)}
    out: dict[str, set[str]] = {}
    for m in re.finditer(r'^define [^@]*@"?([\w.$]+)"?\(.*\)(.*)\{\s*$', ll, re.M):
        words = set(m[2].split())
        for word in list(words):
            words |= groups.get(word, set())
        out[m[1]] = words
    return out


@pytest.fixture(scope="module")
def built() -> tvmscript.Kernel:
    return tvmscript.build(rowsum, cache=False)


def test_entry_and_error_helpers_are_optnone_kernel_is_not(built: tvmscript.Kernel) -> None:
    attrs = _attributes(built.get_source("ll"))
    assert "optnone" in attrs["rowsum__py"]
    for helper in ("tvms_raise", "tvms_raise_fmt", "__tvms_raise", "__tvms_raise_fmt"):
        if helper in attrs:
            assert "optnone" in attrs[helper], helper
    for kernel in ("rowsum", "rowsum__par_0"):
        assert "optnone" not in attrs[kernel], kernel
    # The parallel error recorder stays optimised: its inferred memory effects keep the
    # parallel body's loop optimisable around the (cold) call.
    assert "optnone" not in attrs.get("__tvms_par_error", set())


def test_optnone_entry_still_checks_and_computes(built: tvmscript.Kernel) -> None:
    reference = tvmscript.build(rowsum, target="interp")
    a = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
    out, expected = (np.zeros(64, np.float32) for _ in range(2))
    built(a, out)
    reference(a, expected)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        built(a)
    with pytest.raises((TypeError, ValueError), match="B"):
        built(a, out.astype(np.float64))


def test_thread_pool_hot_functions_stay_optimised() -> None:
    attrs = _attributes(threadpool.pool_library().llvm_ir)
    for cold in ("pool_start", "tvms_pool_set_threads", "tvms_pool_shutdown",
                 "tvms_pool_reset_after_fork"):
        assert "optnone" in attrs[cold], cold
    for hot in ("tvms_parallel_for", "pool_dispatch", "pool_worker"):
        assert "optnone" not in attrs[hot], hot


def test_error_helpers_come_from_one_shared_library(built: tvmscript.Kernel) -> None:
    from backend.abi.shared_helpers import SHARED_HELPERS, shared_helpers_library

    ll = built.get_source("ll")
    defined = set(_attributes(ll))
    declared = set(re.findall(r'^declare [^@]*@"?([\w.$]+)"?\(', ll, re.M))
    # The kernel module calls the raise helpers and the entry's binder, defining none of them.
    assert {"__tvms_raise", "tvms_py_bind_call", "tvms_py_kernel_failed"} <= declared
    assert not defined & SHARED_HELPERS
    shared = _attributes(shared_helpers_library().llvm_ir)
    assert SHARED_HELPERS <= set(shared)
    for cold in ("tvms_raise", "tvms_raise_fmt", "__tvms_raise", "__tvms_raise_fmt"):
        assert "optnone" in shared[cold], cold
    # ... and the errors they raise still reach Python from the kernel and from its entry.
    a = np.zeros((64, 48), np.float32)
    with pytest.raises(ValueError, match="B: expected shape"):
        built(a, np.zeros(63, np.float32))
    with pytest.raises(TypeError, match=r"rowsum\(\) takes 2 arguments \(3 given\)"):
        built(a, a, a)
