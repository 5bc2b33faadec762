"""Error helpers of plain-C entry points: record the error in thread-local storage, no Python.

Selected by ``CodegenOptions(error_abi="c")`` (``builder.ensure_helpers`` calls
:func:`add_c_error_helpers` instead of defining the Python-raising helpers). The helpers keep
the names and signatures the emitters call, so statement/expression code generation is
shared between the two ABIs:

* ``__tvms_raise(i32 kind, ptr msg)`` stores ``kind`` (an :class:`ErrorKind` code, never 0)
  and copies ``msg`` into the calling thread's message buffer;
* ``__tvms_raise_fmt(i32 kind, ptr fmt, i64 a, b, c, d)`` does the same with
  ``snprintf(buffer, fmt, a, b, c, d)`` (``%lld``/``%llu`` conversions only: a C entry never
  formats Python objects);
* ``__tvms_par_error``, the ABI-neutral parallel-region recorder, is ``builder``'s for both.

The thread-local globals :data:`ERROR_KIND` and :data:`ERROR_MESSAGE` are internal to the
module: the C entry returns the kind from its failure exit and ``<entry>_last_error()``
returns the message buffer (messages longer than :data:`MESSAGE_CAPACITY` - 1 bytes are
truncated). Thread-local storage makes concurrent calls from several threads safe.
"""

from __future__ import annotations

from ..codegen.context import ModuleContext

__all__ = [
    "ERROR_KIND",
    "ERROR_MESSAGE",
    "MESSAGE_CAPACITY",
    "add_c_error_helpers",
    "thread_local_address",
]

ERROR_KIND = "@__tvms_c_err_kind"
"""Thread-local ``i32``: the code of the calling thread's last error."""

ERROR_MESSAGE = "@__tvms_c_err_msg"
"""Thread-local ``[MESSAGE_CAPACITY x i8]``: the calling thread's last error message."""

MESSAGE_CAPACITY = 512
"""Size of the message buffer, including the terminating NUL."""

_TLS_ADDRESS = "llvm.threadlocal.address.p0"

_HELPERS = """\
define internal void @__tvms_raise(i32 %kind, ptr %msg) cold noinline {{
entry:
  %k = call ptr @{tls}(ptr {kind_slot})
  store i32 %kind, ptr %k, align 4
  %buf = call ptr @{tls}(ptr {msg_slot})
  %r = call i32 (ptr, i64, ptr, ...) @snprintf(ptr %buf, i64 {cap}, ptr {pct_s}, ptr %msg)
  ret void
}}

define internal void @__tvms_raise_fmt(i32 %kind, ptr %fmt, i64 %a, i64 %b, i64 %c, i64 %d)
    cold noinline {{
entry:
  %k = call ptr @{tls}(ptr {kind_slot})
  store i32 %kind, ptr %k, align 4
  %buf = call ptr @{tls}(ptr {msg_slot})
  %r = call i32 (ptr, i64, ptr, ...) @snprintf(ptr %buf, i64 {cap}, ptr %fmt, i64 %a, i64 %b,
                                              i64 %c, i64 %d)
  ret void
}}"""


def thread_local_address(ctx: ModuleContext) -> str:
    """Declare ``llvm.threadlocal.address`` (the address of a TLS global on this thread)."""
    ctx.declare(_TLS_ADDRESS, "ptr", ["ptr"])
    return f"@{_TLS_ADDRESS}"


def add_c_error_helpers(ctx: ModuleContext) -> None:
    """Define the C-ABI ``__tvms_raise``/``__tvms_raise_fmt``/``__tvms_par_error`` and their
    thread-local error slots in ``ctx`` (the caller has marked the helpers as present)."""
    thread_local_address(ctx)
    ctx.declare("snprintf", "i32", ["ptr", "i64", "ptr", "..."])
    ctx.globals.setdefault(
        ERROR_KIND, f"{ERROR_KIND} = internal thread_local global i32 0, align 4"
    )
    ctx.globals.setdefault(
        ERROR_MESSAGE,
        f"{ERROR_MESSAGE} = internal thread_local global [{MESSAGE_CAPACITY} x i8] "
        "zeroinitializer, align 16",
    )
    ctx.definitions.append(
        _HELPERS.format(
            tls=_TLS_ADDRESS,
            kind_slot=ERROR_KIND,
            msg_slot=ERROR_MESSAGE,
            cap=MESSAGE_CAPACITY,
            pct_s=ctx.string("%s"),
        )
    )
