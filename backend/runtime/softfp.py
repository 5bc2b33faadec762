"""Half-precision conversion helpers that LLVM's x86 code generator calls as libcalls.

Without AVX512-FP16, ``fptrunc double -> half`` becomes a call to ``__truncdfhf2`` (and, without
F16C, ``float <-> half`` becomes ``__truncsfhf2`` / ``__extendhfsf2``).  These compiler-rt/libgcc
builtins are not exported by any library a Python process has loaded, so an object using them
fails to link.  This module provides them, written in LLVM IR with integer operations only
(round to nearest even, NaN/Inf/subnormals handled), compiled once per process on demand.  The
engine detects the names in emitted object code and binds them through
:func:`softfp_symbol_address`.
"""

from __future__ import annotations

import ctypes
import threading

from .engine import CompiledLibrary, compile_ir

__all__ = ["LIBCALLS", "softfp_symbol_address"]

#: Libcall names this module implements.
LIBCALLS = ("__truncdfhf2", "__truncsfhf2", "__extendhfsf2")

# Conversion to half (Giesen's float_to_half_fast3_rtne, generalised to double): subnormal
# results come from one FP addition of a magic constant whose ulp is 2^-24 (the half subnormal
# step), normal ones from rounding the mantissa with an integer add.
_IR = r"""
define half @__truncsfhf2(float %f) nounwind {
  %x0 = bitcast float %f to i32
  %sign32 = lshr i32 %x0, 16
  %sign = and i32 %sign32, 32768
  %x = and i32 %x0, 2147483647
  %isnan = icmp ugt i32 %x, 2139095040
  %nanm0 = lshr i32 %x, 13
  %nanm1 = and i32 %nanm0, 1023
  %nanm = or i32 %nanm1, 32256
  %ovf = icmp uge i32 %x, 1199566848            ; 65520.0 and above (incl. inf) -> inf
  %sub = icmp ult i32 %x, 947912704             ; below 2^-14: half subnormal or zero
  %xf = bitcast i32 %x to float
  %sf = fadd float %xf, 5.000000e-01
  %sb = bitcast float %sf to i32
  %subv = sub i32 %sb, 1056964608
  %odd0 = lshr i32 %x, 13
  %odd = and i32 %odd0, 1
  %n0 = add i32 %x, -939520001                  ; rebias exponent (15-127)<<23, + 0xfff
  %n1 = add i32 %n0, %odd
  %normv = lshr i32 %n1, 13
  %v1 = select i1 %sub, i32 %subv, i32 %normv
  %v2 = select i1 %ovf, i32 31744, i32 %v1
  %v3 = select i1 %isnan, i32 %nanm, i32 %v2
  %v4 = or i32 %v3, %sign
  %h16 = trunc i32 %v4 to i16
  %h = bitcast i16 %h16 to half
  ret half %h
}

define half @__truncdfhf2(double %d) nounwind {
  %x0 = bitcast double %d to i64
  %sign64 = lshr i64 %x0, 48
  %sign = and i64 %sign64, 32768
  %x = and i64 %x0, 9223372036854775807
  %isnan = icmp ugt i64 %x, 9218868437227405312
  %nanm0 = lshr i64 %x, 42
  %nanm1 = and i64 %nanm0, 1023
  %nanm = or i64 %nanm1, 32256
  %ovf = icmp uge i64 %x, 4679237813814689792     ; 65520.0
  %sub = icmp ult i64 %x, 4544132024016830464     ; 2^-14
  %xf = bitcast i64 %x to double
  %sf = fadd double %xf, 0x41B0000000000000       ; + 2^28 (ulp 2^-24)
  %sb = bitcast double %sf to i64
  %subv = sub i64 %sb, 4733283208366391296
  %odd0 = lshr i64 %x, 42
  %odd = and i64 %odd0, 1
  %n0 = add i64 %x, -4539626225366204417          ; (15-1023)<<52, + (2^41 - 1)
  %n1 = add i64 %n0, %odd
  %normv = lshr i64 %n1, 42
  %v1 = select i1 %sub, i64 %subv, i64 %normv
  %v2 = select i1 %ovf, i64 31744, i64 %v1
  %v3 = select i1 %isnan, i64 %nanm, i64 %v2
  %v4 = or i64 %v3, %sign
  %h16 = trunc i64 %v4 to i16
  %h = bitcast i16 %h16 to half
  ret half %h
}

define float @__extendhfsf2(half %h) nounwind {
  %b16 = bitcast half %h to i16
  %b = zext i16 %b16 to i32
  %s0 = and i32 %b, 32768
  %sign = shl i32 %s0, 16
  %e0 = lshr i32 %b, 10
  %e = and i32 %e0, 31
  %m = and i32 %b, 1023
  %mshift = shl i32 %m, 13
  %isspecial = icmp eq i32 %e, 31
  %iszero = icmp eq i32 %e, 0
  %ne0 = add i32 %e, 112
  %ne = shl i32 %ne0, 23
  %normal = or i32 %ne, %mshift
  %special = or i32 %mshift, 2139095040
  %mf = uitofp i32 %m to float
  %subf = fmul float %mf, 0x3E70000000000000      ; m * 2^-24
  %subb = bitcast float %subf to i32
  %v1 = select i1 %iszero, i32 %subb, i32 %normal
  %v2 = select i1 %isspecial, i32 %special, i32 %v1
  %v3 = or i32 %v2, %sign
  %f = bitcast i32 %v3 to float
  ret float %f
}
"""

_lock = threading.Lock()
_library: CompiledLibrary | None = None


def _get_library() -> CompiledLibrary:
    global _library
    if _library is None:
        with _lock:
            if _library is None:
                lib = compile_ir(_IR, opt_level=2, name="tvms_softfp", cache=False)
                # Kernels keep only raw addresses into this library: never free it.
                ctypes.pythonapi.Py_IncRef(ctypes.py_object(lib))
                _library = lib
    return _library


def softfp_symbol_address(name: str) -> int | None:
    """Engine symbol provider for the half-precision libcalls in :data:`LIBCALLS`."""
    if name in LIBCALLS:
        return _get_library().address(name)
    return None
