"""Persistent thread pool written in LLVM IR: ``tvms_parallel_for``.

Kernel ABI::

    declare void @tvms_parallel_for(ptr %body, ptr %ctx, i64 %n)
    ; body: void (ptr %ctx, i64 %begin, i64 %end), called on disjoint chunks covering [0, n)

The engine binds ``tvms_parallel_for`` for any module declaring it (see
:func:`parallel_runtime_symbols`).  Design (measured in the project's notes, 0.26 us/region):

* T-1 worker pthreads are created lazily by the first parallel region and kept; the caller works
  too (thread 0).  ``[0, n)`` is split into T contiguous ranges, thread ``t`` owning the
  ``t``-th; each range is cut into chunks of ``ceil(n / (T * CHUNKS_PER_THREAD))`` iterations
  claimed from the range's own atomic counter (one cache line per thread).  A thread runs
  the chunks of its own range first, then takes what is left of the others' ranges (from
  ``t + 1`` on): every thread reads the same part of the data on every call unless a busy
  neighbour slowed it down, when it simply runs fewer chunks.
* A region is published by storing body/ctx/n, setting ``pending = T-1`` and bumping a 32-bit
  generation word.  Workers spin on it with ``pause`` for about 3000 iterations (50-100 us) and
  then sleep in ``futex(FUTEX_WAIT_PRIVATE)``; the caller wakes sleepers only if there are any.
* A ``cmpxchg`` busy flag makes nested regions (a body calling ``tvms_parallel_for``) and regions
  started concurrently from another thread run serially instead of corrupting the pool.  Regions
  with ``n < 2`` or a thread count of 1 also run serially on the caller.
* After ``fork()`` the child's copy of the pool has no worker threads: an
  ``os.register_at_fork(after_in_child=...)`` hook calls a JIT'd reset function (``pthread_atfork``
  is not exported by glibc and must never be referenced from IR); the child restarts workers
  lazily.  At interpreter exit the workers are stopped and the pool stays serial.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import threading
import warnings
from typing import Any

from .engine import CompiledLibrary, compile_ir, jit_lock

__all__ = [
    "MAX_THREADS",
    "default_num_threads",
    "get_num_threads",
    "parallel_for",
    "parallel_runtime_symbols",
    "pool_library",
    "region_overhead_ns",
    "set_num_threads",
    "threadpool_symbol_address",
]

MAX_THREADS = 256
_SPIN = 3000  # pause iterations before sleeping (~24-40 ns each)
CHUNKS_PER_THREAD = 4
"""A region of n iterations is cut into about threads x this many chunks, claimed one at a
time: a thread slowed down (a busy neighbour on a shared core) takes fewer of them."""

_POOL_IR = r"""
; ---- tvmscript persistent thread pool (backend.runtime.threadpool) ----
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_join(i64, ptr)
declare i32 @sched_yield()
declare i64 @syscall(i64, ...)
declare void @llvm.x86.sse2.pause()

@pool_want = internal global i64 1, align 8
@pool_nt = internal global i64 0, align 8          ; running threads incl. caller; 0 = not started
@pool_busy = internal global i32 0, align 4
@pool_fn = internal global ptr null, align 8
@pool_ctx = internal global ptr null, align 8
@pool_n = internal global i64 0, align 8
@pool_grain = internal global i64 1, align 8
; One cache line per thread: {next unclaimed iteration, end} of the range it owns.
@pool_ranges = internal global [MAXT x [8 x i64]] zeroinitializer, align 64
@pool_gen = internal global i32 0, align 64        ; own cache lines: hot words of the protocol
@pool_pending = internal global i32 0, align 64
@pool_sleepers = internal global i32 0, align 64
@pool_main_waiting = internal global i32 0, align 4
@pool_quit = internal global i32 0, align 4
@pool_start_gen = internal global i32 0, align 4
@pool_tids = internal global [MAXT x i64] zeroinitializer, align 8

define internal void @futex_wait(ptr %addr, i32 %val) {
  %v = zext i32 %val to i64
  %r = call i64 (i64, ...) @syscall(i64 202, ptr %addr, i64 128, i64 %v, ptr null, ptr null, i64 0)
  ret void
}
define internal void @futex_wake(ptr %addr, i32 %cnt) {
  %v = zext i32 %cnt to i64
  %r = call i64 (i64, ...) @syscall(i64 202, ptr %addr, i64 129, i64 %v, ptr null, ptr null, i64 0)
  ret void
}

; Thread %self runs the chunks of the range it owns, then takes what is left of the others'
; ranges (in turn from %self + 1): each thread reads the same part of the data on every
; region unless a busy neighbour slowed it down.
define internal void @run_chunk(i64 %self) {
entry:
  %fn = load ptr, ptr @pool_fn, align 8
  %ctx = load ptr, ptr @pool_ctx, align 8
  %nt = load i64, ptr @pool_nt, align 8
  %grain = load i64, ptr @pool_grain, align 8
  br label %owner
owner:
  %k = phi i64 [ 0, %entry ], [ %k1, %drained ]
  %more_owners = icmp ult i64 %k, %nt
  br i1 %more_owners, label %pick, label %done
pick:
  %su = add i64 %self, %k
  %wrap = icmp uge i64 %su, %nt
  %sw = sub i64 %su, %nt
  %u = select i1 %wrap, i64 %sw, i64 %su
  %next = getelementptr [MAXT x [8 x i64]], ptr @pool_ranges, i64 0, i64 %u, i64 0
  %endp = getelementptr [MAXT x [8 x i64]], ptr @pool_ranges, i64 0, i64 %u, i64 1
  %end = load i64, ptr %endp, align 8
  br label %claim
claim:
  %b = atomicrmw add ptr %next, i64 %grain monotonic
  %more = icmp ult i64 %b, %end
  br i1 %more, label %run, label %drained
run:
  %e0 = add i64 %b, %grain
  %past = icmp ugt i64 %e0, %end
  %e = select i1 %past, i64 %end, i64 %e0
  call void %fn(ptr %ctx, i64 %b, i64 %e)
  br label %claim
drained:
  %k1 = add i64 %k, 1
  br label %owner
done:
  ret void
}

define internal ptr @pool_worker(ptr %arg) {
entry:
  %g0 = load atomic i32, ptr @pool_start_gen acquire, align 4
  br label %wait
wait:
  %seen = phi i32 [ %g0, %entry ], [ %g, %finished ]
  br label %spin
spin:
  %k = phi i32 [ 0, %wait ], [ %k1, %pause ], [ 0, %slept ]
  %g = load atomic i32, ptr @pool_gen acquire, align 4
  %changed = icmp ne i32 %g, %seen
  br i1 %changed, label %go, label %notyet
notyet:
  %k1 = add i32 %k, 1
  %toolong = icmp sgt i32 %k1, SPIN
  br i1 %toolong, label %sleep, label %pause
pause:
  call void @llvm.x86.sse2.pause()
  br label %spin
sleep:
  %s0 = atomicrmw add ptr @pool_sleepers, i32 1 seq_cst
  call void @futex_wait(ptr @pool_gen, i32 %seen)
  %s1 = atomicrmw sub ptr @pool_sleepers, i32 1 seq_cst
  br label %slept
slept:
  br label %spin
go:
  %quit = load atomic i32, ptr @pool_quit acquire, align 4
  %stop = icmp ne i32 %quit, 0
  br i1 %stop, label %exit, label %work
work:
  %self = ptrtoint ptr %arg to i64
  call void @run_chunk(i64 %self)
  %old = atomicrmw sub ptr @pool_pending, i32 1 seq_cst
  %last = icmp eq i32 %old, 1
  br i1 %last, label %maybe_wake, label %finished
maybe_wake:
  %mw = load atomic i32, ptr @pool_main_waiting seq_cst, align 4
  %sleeping = icmp ne i32 %mw, 0
  br i1 %sleeping, label %wake, label %finished
wake:
  call void @futex_wake(ptr @pool_pending, i32 1)
  br label %finished
finished:
  br label %wait
exit:
  ret ptr null
}

; Start want-1 workers; on pthread_create failure keep the ones created so far.
define internal void @pool_start(i64 %want) optnone noinline {
entry:
  %g = load atomic i32, ptr @pool_gen seq_cst, align 4
  store atomic i32 %g, ptr @pool_start_gen seq_cst, align 4
  store atomic i32 0, ptr @pool_quit seq_cst, align 4
  br label %loop
loop:
  %t = phi i64 [ 1, %entry ], [ %t1, %created ]
  %more = icmp slt i64 %t, %want
  br i1 %more, label %body, label %done
body:
  %tid = getelementptr [MAXT x i64], ptr @pool_tids, i64 0, i64 %t
  %arg = inttoptr i64 %t to ptr
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @pool_worker, ptr %arg)
  %ok = icmp eq i32 %rc, 0
  %t1 = add i64 %t, 1
  br i1 %ok, label %created, label %done
created:
  br label %loop
done:
  %nt = phi i64 [ %t, %loop ], [ %t, %body ]
  store i64 %nt, ptr @pool_nt, align 8
  ret void
}

; Publish the region in pool_fn/ctx/n to the workers, run chunk 0, wait for the others.
define internal void @pool_dispatch() {
entry:
  %nt = load i64, ptr @pool_nt, align 8
  %n = load i64, ptr @pool_n, align 8
  %parts = mul i64 %nt, CHUNKS_PER_THREAD
  %parts1 = sub i64 %parts, 1
  %nup = add i64 %n, %parts1
  %g = udiv i64 %nup, %parts
  %small = icmp ult i64 %g, 1
  %grain = select i1 %small, i64 1, i64 %g
  store i64 %grain, ptr @pool_grain, align 8
  ; thread u owns [u * q + min(u, r), (u + 1) * q + min(u + 1, r)) with n = q * nt + r
  %q = udiv i64 %n, %nt
  %r = urem i64 %n, %nt
  br label %split
split:
  %u = phi i64 [ 0, %entry ], [ %u1, %split ]
  %uq = mul i64 %u, %q
  %ur_small = icmp ult i64 %u, %r
  %ur = select i1 %ur_small, i64 %u, i64 %r
  %lo = add i64 %uq, %ur
  %u1 = add i64 %u, 1
  %u1q = mul i64 %u1, %q
  %u1r_small = icmp ult i64 %u1, %r
  %u1r = select i1 %u1r_small, i64 %u1, i64 %r
  %hi = add i64 %u1q, %u1r
  %nextp = getelementptr [MAXT x [8 x i64]], ptr @pool_ranges, i64 0, i64 %u, i64 0
  %endp = getelementptr [MAXT x [8 x i64]], ptr @pool_ranges, i64 0, i64 %u, i64 1
  store atomic i64 %lo, ptr %nextp monotonic, align 64
  store i64 %hi, ptr %endp, align 8
  %more_threads = icmp ult i64 %u1, %nt
  br i1 %more_threads, label %split, label %publish
publish:
  %nw64 = sub i64 %nt, 1
  %nw = trunc i64 %nw64 to i32
  store atomic i32 %nw, ptr @pool_pending seq_cst, align 4
  %g0 = atomicrmw add ptr @pool_gen, i32 1 seq_cst
  %sl = load atomic i32, ptr @pool_sleepers seq_cst, align 4
  %anysl = icmp ne i32 %sl, 0
  br i1 %anysl, label %wake, label %self
wake:
  call void @futex_wake(ptr @pool_gen, i32 2147483647)
  br label %self
self:
  %quit = load atomic i32, ptr @pool_quit monotonic, align 4
  %stopping = icmp ne i32 %quit, 0
  br i1 %stopping, label %ret, label %runself
runself:
  call void @run_chunk(i64 0)
  br label %waitloop
waitloop:
  %k = phi i32 [ 0, %runself ], [ %k1, %pause ], [ 0, %woke ]
  %p = load atomic i32, ptr @pool_pending acquire, align 4
  %done = icmp eq i32 %p, 0
  br i1 %done, label %ret, label %notdone
notdone:
  %k1 = add i32 %k, 1
  %toolong = icmp sgt i32 %k1, SPIN
  br i1 %toolong, label %sleep, label %pause
pause:
  call void @llvm.x86.sse2.pause()
  br label %waitloop
sleep:
  store atomic i32 1, ptr @pool_main_waiting seq_cst, align 4
  %p2 = load atomic i32, ptr @pool_pending seq_cst, align 4
  %still = icmp ne i32 %p2, 0
  br i1 %still, label %dosleep, label %woke
dosleep:
  call void @futex_wait(ptr @pool_pending, i32 %p2)
  br label %woke
woke:
  store atomic i32 0, ptr @pool_main_waiting seq_cst, align 4
  br label %waitloop
ret:
  ret void
}

; Stop and join all workers (caller holds the busy flag).
define internal void @pool_stop() optnone noinline {
entry:
  %nt = load i64, ptr @pool_nt, align 8
  %running = icmp sgt i64 %nt, 1
  br i1 %running, label %signal, label %reset
signal:
  store atomic i32 1, ptr @pool_quit seq_cst, align 4
  call void @pool_dispatch()
  br label %loop
loop:
  %t = phi i64 [ 1, %signal ], [ %t1, %body ]
  %more = icmp slt i64 %t, %nt
  br i1 %more, label %body, label %reset
body:
  %tid = getelementptr [MAXT x i64], ptr @pool_tids, i64 0, i64 %t
  %tv = load i64, ptr %tid, align 8
  %jr = call i32 @pthread_join(i64 %tv, ptr null)
  %t1 = add i64 %t, 1
  br label %loop
reset:
  store i64 0, ptr @pool_nt, align 8
  store atomic i32 0, ptr @pool_quit seq_cst, align 4
  ret void
}

define internal void @acquire_busy() {
entry:
  br label %try
try:
  %pair = cmpxchg ptr @pool_busy, i32 0, i32 1 acquire monotonic
  %got = extractvalue { i32, i1 } %pair, 1
  br i1 %got, label %done, label %yield
yield:
  %y = call i32 @sched_yield()
  br label %try
done:
  ret void
}

define void @tvms_parallel_for(ptr %fn, ptr %ctx, i64 %n) {
entry:
  %empty = icmp slt i64 %n, 1
  br i1 %empty, label %ret, label %size
size:
  %small = icmp slt i64 %n, 2
  %want = load i64, ptr @pool_want, align 8
  %single = icmp sle i64 %want, 1
  %ser = or i1 %small, %single
  br i1 %ser, label %serial, label %trylock
trylock:
  %pair = cmpxchg ptr @pool_busy, i32 0, i32 1 acquire monotonic
  %got = extractvalue { i32, i1 } %pair, 1
  br i1 %got, label %locked, label %serial   ; nested or concurrent region -> serial
locked:
  %nt0 = load i64, ptr @pool_nt, align 8
  %started = icmp ne i64 %nt0, 0
  br i1 %started, label %ready, label %start
start:
  call void @pool_start(i64 %want)
  br label %ready
ready:
  %nt = load i64, ptr @pool_nt, align 8
  %alone = icmp sle i64 %nt, 1
  br i1 %alone, label %unlock_serial, label %par
par:
  store ptr %fn, ptr @pool_fn, align 8
  store ptr %ctx, ptr @pool_ctx, align 8
  store i64 %n, ptr @pool_n, align 8
  call void @pool_dispatch()
  store atomic i32 0, ptr @pool_busy release, align 4
  br label %ret
unlock_serial:
  store atomic i32 0, ptr @pool_busy release, align 4
  br label %serial
serial:
  call void %fn(ptr %ctx, i64 0, i64 %n)
  br label %ret
ret:
  ret void
}

define void @tvms_pool_set_threads(i64 %n) optnone noinline {
entry:
  call void @acquire_busy()
  %nt = load i64, ptr @pool_nt, align 8
  %differs = icmp ne i64 %nt, %n
  br i1 %differs, label %stop, label %set
stop:
  call void @pool_stop()
  br label %set
set:
  store i64 %n, ptr @pool_want, align 8
  store atomic i32 0, ptr @pool_busy release, align 4
  ret void
}

define i64 @tvms_pool_get_threads() optnone noinline {
  %w = load i64, ptr @pool_want, align 8
  ret i64 %w
}

define i64 @tvms_pool_running_threads() optnone noinline {
  %nt = load i64, ptr @pool_nt, align 8
  ret i64 %nt
}

; Stop the workers for good: keeps the busy flag, so every later region runs serially.
define void @tvms_pool_shutdown() optnone noinline {
  call void @acquire_busy()
  call void @pool_stop()
  ret void
}

; In a fork()ed child the workers do not exist: forget them (restarted lazily).
define void @tvms_pool_reset_after_fork() optnone noinline {
  store i64 0, ptr @pool_nt, align 8
  store i32 0, ptr @pool_pending, align 4
  store i32 0, ptr @pool_sleepers, align 4
  store i32 0, ptr @pool_main_waiting, align 4
  store i32 0, ptr @pool_quit, align 4
  store i32 0, ptr @pool_busy, align 4
  ret void
}

define internal void @empty_body(ptr %ctx, i64 %b, i64 %e) {
  ret void
}

; Benchmark helper: `iters` back-to-back empty regions of size n from native code.
define void @tvms_pool_bench_empty(i64 %iters, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  call void @tvms_parallel_for(ptr @empty_body, ptr null, i64 %n)
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %iters
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
""".replace("MAXT", str(MAX_THREADS)).replace("SPIN", str(_SPIN)).replace(
    "CHUNKS_PER_THREAD", str(CHUNKS_PER_THREAD)
)

_lock = threading.Lock()
_library: CompiledLibrary | None = None
_funcs: dict[str, Any] = {}

_VOID_I64 = ctypes.CFUNCTYPE(None, ctypes.c_int64)
_I64_VOID = ctypes.CFUNCTYPE(ctypes.c_int64)
_VOID_VOID = ctypes.CFUNCTYPE(None)
_PFOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_BENCH = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64)


def default_num_threads() -> int:
    """``$TVMSCRIPT_NUM_THREADS`` if valid, else the number of CPUs this process may run on."""
    env = os.environ.get("TVMSCRIPT_NUM_THREADS", "").strip()
    if env:
        try:
            n = int(env)
            if n < 1:
                raise ValueError
            return min(n, MAX_THREADS)
        except ValueError:
            warnings.warn(f"ignoring invalid TVMSCRIPT_NUM_THREADS={env!r}", RuntimeWarning,
                          stacklevel=2)
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, MAX_THREADS))


def pool_library() -> CompiledLibrary:
    """Compile (once per process, lazily) and return the pool's library."""
    global _library
    if _library is not None:
        return _library
    # The JIT's lock first: a compile binding ``tvms_parallel_for`` calls this holding it,
    # and a thread compiling the pool ahead of time must not hold _lock while it waits.
    with jit_lock(), _lock:
        if _library is None:
            # Level 0 throughout: 6 ms of the first parallel build instead of 27-30 ms at
            # opt_level 2 (12-17 ms more with machine code at level 2 too), and an empty
            # parallel region measured the same (0.20-0.23 us either way, znver5).
            lib = compile_ir(
                _POOL_IR, opt_level=0, codegen_opt_level=0, name="tvms_threadpool", cache=None
            )
            _funcs["set"] = _VOID_I64(lib.address("tvms_pool_set_threads"))
            _funcs["get"] = _I64_VOID(lib.address("tvms_pool_get_threads"))
            _funcs["running"] = _I64_VOID(lib.address("tvms_pool_running_threads"))
            _funcs["shutdown"] = _VOID_VOID(lib.address("tvms_pool_shutdown"))
            _funcs["reset"] = _VOID_VOID(lib.address("tvms_pool_reset_after_fork"))
            _funcs["pfor"] = _PFOR(lib.address("tvms_parallel_for"))
            _funcs["bench"] = _BENCH(lib.address("tvms_pool_bench_empty"))
            _funcs["set"](default_num_threads())
            # Workers execute code of this library until the process ends: never free it.
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(lib))
            os.register_at_fork(after_in_child=_funcs["reset"])
            atexit.register(_funcs["shutdown"])
            _library = lib
    return _library


def threadpool_symbol_address(name: str) -> int | None:
    """Engine symbol provider: the address of ``tvms_parallel_for`` (compiles the pool)."""
    if name == "tvms_parallel_for":
        return pool_library().address(name)
    return None


def parallel_runtime_symbols() -> dict[str, int]:
    """Symbols a kernel module may declare for parallel loops, with their addresses."""
    return {"tvms_parallel_for": pool_library().address("tvms_parallel_for")}


def set_num_threads(n: int) -> None:
    """Set the pool size (including the calling thread); 1 makes every region serial.

    Running workers are stopped (after any region in flight finishes) and restarted lazily.
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"number of threads must be an int, got {type(n).__name__}")
    if not 1 <= n <= MAX_THREADS:
        raise ValueError(f"number of threads must be in 1..{MAX_THREADS}, got {n}")
    pool_library()
    _funcs["set"](n)


def get_num_threads() -> int:
    """The configured pool size."""
    pool_library()
    return int(_funcs["get"]())


def running_threads() -> int:
    """Threads currently started (0 before the first parallel region or after a reset)."""
    pool_library()
    return int(_funcs["running"]())


def parallel_for(body: int, ctx: int, n: int) -> None:
    """Run ``body(ctx, begin, end)`` over ``[0, n)`` on the pool (GIL released meanwhile).

    *body* is the address of a JIT'd ``void(ptr, i64, i64)`` function and *ctx* an address
    passed to it unchanged; both must stay valid for the duration of the call.
    """
    pool_library()
    _funcs["pfor"](body, ctx, n)


def region_overhead_ns(iters: int = 20000, n: int = 1 << 20) -> float:
    """Mean cost in ns of an empty parallel region, measured from native code."""
    import time

    pool_library()
    _funcs["bench"](100, n)  # warm up: start workers
    t0 = time.perf_counter()
    _funcs["bench"](iters, n)
    return (time.perf_counter() - t0) / iters * 1e9
