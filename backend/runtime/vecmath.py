"""Vectorisable math functions for generated kernels (glibc libmvec, or inline polynomials).

llvmlite 0.50 has no ``-vector-library`` switch, so a loop calling ``llvm.exp.f32`` is vectorised
into 8 scalar ``expf`` calls per vector (slower than numpy).  Instead a kernel calls a *renamed*
scalar function, e.g. ``tvms_expf`` (bound at load time to libm's ``expf``), declared
``memory(none)`` and carrying a ``vector-function-abi-variant`` attribute naming libmvec's SIMD
variants (``_ZGVbN4v_expf`` SSE 4 lanes, ``_ZGVdN8v_expf`` AVX2 8 lanes, ...).  The loop
vectoriser then calls the SIMD variant.  The rename matters: a ``readnone`` function named
``expf`` is canonicalised to ``llvm.exp.f32`` and the attribute is lost.

Usage by the code generator::

    math = MathLowering()
    sym = math.call("exp", "float")          # -> "tvms_expf"
    ... "%y = call float @" + sym + "(float %x)" ...
    module_text = math.module_prelude() + kernel_text

``module_prelude()`` defines ``@llvm.compiler.used`` (it keeps the SIMD declarations alive until
the vectoriser runs), so the rest of the module must not define it; pass further entries with
``module_prelude(extra_used=[...])``.  Without libmvec, ``exp``/``log`` (float) and the
functions built on ``exp`` use inline polynomials (vectorisable, no library); everything else
falls back to scalar libm.
"""

from __future__ import annotations

import re
import struct
import threading
from collections.abc import Iterable

import llvmlite.binding as llvm

from irbuilder.ir import INTRINSICS, Lowering

from .target import ensure_initialized, host_target

__all__ = [
    "LIBM_FUNCTIONS",
    "MathLowering",
    "libmvec_available",
    "libmvec_variants",
    "vecmath_symbol_address",
]

#: libm functions (double-precision names) -> arity: the intrinsic table's VECMATH entries.
#: The float variants add an ``f`` suffix.
LIBM_FUNCTIONS: dict[str, int] = {
    spec.symbol: spec.arity for spec in INTRINSICS.values() if spec.lowering is Lowering.VECMATH
}
#: Functions LLVM lowers inline (no library call): returned as intrinsic names.
_INTRINSICS = {
    "sqrt",
    "fabs",
    "floor",
    "ceil",
    "trunc",
    "round",
    "rint",
    "fma",
    "minnum",
    "maxnum",
    "copysign",
}
_INTRINSIC_ARITY = {"fma": 3, "minnum": 2, "maxnum": 2, "copysign": 2}
#: Built from exp (vectorises whenever exp does).
_DERIVED = {"sigmoid"}

_TYPES = {"float": ("f", "f32"), "double": ("", "f64")}
# SIMD ISA letters (x86 vector function ABI) -> (host feature, lanes for float, for double).
_ISAS = [("b", "+sse2", 4, 2), ("d", "+avx2", 8, 4), ("e", "+avx512f", 16, 8)]

_lock = threading.Lock()
_loaded: bool | None = None


def _load_libraries() -> bool:
    """Load libm and libmvec permanently (once); True when libmvec is available."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                ensure_initialized()
                try:
                    llvm.load_library_permanently("libm.so.6")
                except RuntimeError:
                    pass
                try:
                    llvm.load_library_permanently("libmvec.so.1")
                    _loaded = host_target().triple.startswith("x86_64")
                except RuntimeError:
                    _loaded = False
    return bool(_loaded)


def libmvec_available() -> bool:
    """True when glibc's libmvec was loaded and can be used on this host."""
    return _load_libraries()


def _variant_name(isa: str, lanes: int, arity: int, scalar: str) -> str:
    return f"_ZGV{isa}N{lanes}{'v' * arity}_{scalar}"


_variants_cache: dict[tuple[str, str, frozenset[str] | None], list[tuple[str, str, int]]] = {}


def libmvec_variants(
    name: str, ty: str, features: frozenset[str] | None = None
) -> list[tuple[str, str, int]]:
    """SIMD variants ``[(symbol, isa, lanes)]`` of libm *name* for *ty* usable on the target.

    Only ISAs the target has (``features``: names like ``"avx2"``, a ``Target.features``;
    None: the host's) and symbols libmvec actually exports are listed (``b``: SSE,
    4 x f32 / 2 x f64; ``d``: AVX2, 8 x f32 / 4 x f64; ``e``: AVX-512, 16 x f32 / 8 x f64).
    """
    key = (name, ty, features)
    if key in _variants_cache:
        return _variants_cache[key]
    found: list[tuple[str, str, int]] = []
    if name in LIBM_FUNCTIONS and ty in _TYPES and _load_libraries():
        suffix = _TYPES[ty][0]
        if features is None:
            feats = set(host_target().features.split(","))
        else:
            feats = {"+" + f for f in features}
        for isa, feat, lanes_f, lanes_d in _ISAS:
            lanes = lanes_f if ty == "float" else lanes_d
            sym = _variant_name(isa, lanes, LIBM_FUNCTIONS[name], name + suffix)
            if feat in feats and llvm.address_of_symbol(sym) is not None:
                found.append((sym, isa, lanes))
    _variants_cache[key] = found
    return found


def vecmath_symbol_address(name: str) -> int | None:
    """Engine symbol provider: ``tvms_<libm name>`` aliases and libmvec ``_ZGV*`` variants."""
    if name.startswith("_ZGV"):
        if not _load_libraries():
            return None
        addr = llvm.address_of_symbol(name)
        return int(addr) if addr else None
    if name.startswith("tvms_"):
        base = name[len("tvms_") :]
        plain = base[:-1] if base.endswith("f") and base[:-1] in LIBM_FUNCTIONS else base
        if plain not in LIBM_FUNCTIONS:
            return None
        _load_libraries()
        addr = llvm.address_of_symbol(base)
        return int(addr) if addr else None
    return None


def _f32(value: float) -> str:
    """LLVM hex literal of *value* rounded to float (IR float constants must be exact)."""
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', single))[0]:016X}"


def _poly_expf() -> str:
    # Cephes-style expf: x = n*ln2 + r (Cody-Waite split), e^r by a degree-6 polynomial, and
    # 2^n applied as two exponent-field scalings so results reaching the subnormal range are
    # rounded once (instead of flushing below e^-87.3).  NaN passes through.
    c = [
        1.9875691500e-4,
        1.3981999507e-3,
        8.3334519073e-3,
        4.1665795894e-2,
        1.6666665459e-1,
        5.0000001201e-1,
    ]
    return f"""\
define internal float @tvms_poly_expf(float %x) alwaysinline nounwind {{
  %hi = call float @llvm.minnum.f32(float %x, float {_f32(89.0)})
  %xc = call float @llvm.maxnum.f32(float %hi, float {_f32(-104.0)})
  %t = call float @llvm.fma.f32(float %xc, float {_f32(1.44269504088896341)}, float 0.5)
  %fn = call float @llvm.floor.f32(float %t)
  %r1 = call float @llvm.fma.f32(float %fn, float {_f32(-0.693359375)}, float %xc)
  %r = call float @llvm.fma.f32(float %fn, float {_f32(2.12194440e-4)}, float %r1)
  %z = fmul float %r, %r
  %p1 = call float @llvm.fma.f32(float {_f32(c[0])}, float %r, float {_f32(c[1])})
  %p2 = call float @llvm.fma.f32(float %p1, float %r, float {_f32(c[2])})
  %p3 = call float @llvm.fma.f32(float %p2, float %r, float {_f32(c[3])})
  %p4 = call float @llvm.fma.f32(float %p3, float %r, float {_f32(c[4])})
  %p5 = call float @llvm.fma.f32(float %p4, float %r, float {_f32(c[5])})
  %p6 = call float @llvm.fma.f32(float %p5, float %z, float %r)
  %y = fadd float %p6, 1.0
  %n = fptosi float %fn to i32
  %n1 = ashr i32 %n, 1
  %n2 = sub i32 %n, %n1
  %b1 = add i32 %n1, 127
  %b2 = add i32 %n2, 127
  %e1 = shl i32 %b1, 23
  %e2 = shl i32 %b2, 23
  %s1 = bitcast i32 %e1 to float
  %s2 = bitcast i32 %e2 to float
  %y1 = fmul float %y, %s1
  %y2 = fmul float %y1, %s2
  %nan = fcmp uno float %x, 0.0
  %res = select i1 %nan, float %x, float %y2
  ret float %res
}}
"""


def _poly_logf() -> str:
    # Cephes logf: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log(1+f) by a degree-9
    # polynomial, e*ln2 added in two parts.  Subnormals are pre-scaled by 2^23; x<0/NaN -> NaN,
    # 0 -> -inf, +inf -> +inf.
    c = [
        7.0376836292e-2,
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    ]
    poly = [f"  %q1 = call float @llvm.fma.f32(float {_f32(c[0])}, float %f, float {_f32(c[1])})"]
    for k in range(2, 9):
        poly.append(
            f"  %q{k} = call float @llvm.fma.f32(float %q{k - 1}, float %f, float {_f32(c[k])})"
        )
    body = "\n".join(poly)
    return f"""\
define internal float @tvms_poly_logf(float %x) alwaysinline nounwind {{
  %sub = fcmp olt float %x, {_f32(1.1754943508222875e-38)}
  %xs0 = fmul float %x, {_f32(8388608.0)}
  %xs = select i1 %sub, float %xs0, float %x
  %eadj = select i1 %sub, i32 -23, i32 0
  %bits = bitcast float %xs to i32
  %ex = lshr i32 %bits, 23
  %ex1 = add i32 %ex, -126
  %e0 = add i32 %ex1, %eadj
  %mb0 = and i32 %bits, 8388607
  %mb = or i32 %mb0, 1056964608
  %m = bitcast i32 %mb to float
  %small = fcmp olt float %m, {_f32(0.707106781186547524)}
  %e = select i1 %small, i32 -1, i32 0
  %ee = add i32 %e0, %e
  %m2 = fadd float %m, %m
  %mm = select i1 %small, float %m2, float %m
  %f = fadd float %mm, -1.0
  %z = fmul float %f, %f
{body}
  %y0 = fmul float %q8, %f
  %y1 = fmul float %y0, %z
  %fe = sitofp i32 %ee to float
  %y2 = call float @llvm.fma.f32(float %fe, float {_f32(-2.12194440e-4)}, float %y1)
  %y3 = call float @llvm.fma.f32(float %z, float -0.5, float %y2)
  %r0 = fadd float %f, %y3
  %r = call float @llvm.fma.f32(float %fe, float {_f32(0.693359375)}, float %r0)
  %neg = fcmp ult float %x, 0.0
  %zero = fcmp oeq float %x, 0.0
  %inf = fcmp oeq float %x, 0x7FF0000000000000
  %a1 = select i1 %inf, float %x, float %r
  %a2 = select i1 %zero, float 0xFFF0000000000000, float %a1
  %a3 = select i1 %neg, float 0x7FF8000000000000, float %a2
  ret float %a3
}}
"""


class MathLowering:
    """Chooses the symbol for each math call and accumulates the IR it needs.

    One instance per generated module.  ``use_libmvec=None`` uses libmvec when available;
    ``False`` forces the portable fallback (inline polynomials for float exp/log, scalar libm).
    """

    def __init__(
        self, *, use_libmvec: bool | None = None, features: frozenset[str] | None = None
    ) -> None:
        avail = libmvec_available()
        self.use_libmvec = avail if use_libmvec is None else (bool(use_libmvec) and avail)
        self.features = features
        """The target's features (``Target.features``) choosing libmvec variants; None: the
        host's."""
        self._decls: dict[str, str] = {}
        self._used: list[str] = []
        self._intrinsics: set[str] = set()

    def _libm(self, name: str, ty: str) -> str:
        suffix, _ = _TYPES[ty]
        scalar = f"tvms_{name}{suffix}"
        if scalar in self._decls:
            return scalar
        arity = LIBM_FUNCTIONS[name]
        args = ", ".join([ty] * arity)
        attrs = "memory(none) nounwind willreturn"
        variants = libmvec_variants(name, ty, self.features) if self.use_libmvec else []
        if variants:
            mapping = ",".join(
                f"{_variant_name(isa, lanes, arity, scalar)}({sym})" for sym, isa, lanes in variants
            )
            attrs += f' "vector-function-abi-variant"="{mapping}"'
        decl = [f"declare {ty} @{scalar}({args}) {attrs}\n"]
        for sym, _isa, lanes in variants:
            vty = f"<{lanes} x {ty}>"
            decl.append(f"declare {vty} @{sym}({', '.join([vty] * arity)}) nounwind\n")
            self._used.append(sym)
        self._decls[scalar] = "".join(decl)
        return scalar

    def _intrinsic(self, name: str, ty: str) -> str:
        sym = f"llvm.{name}.{_TYPES[ty][1]}"
        if sym not in self._intrinsics:
            self._intrinsics.add(sym)
            args = ", ".join([ty] * _INTRINSIC_ARITY.get(name, 1))
            self._decls[sym] = f"declare {ty} @{sym}({args})\n"
        return sym

    def _poly(self, name: str) -> str:
        sym = f"tvms_poly_{name}f"
        if sym not in self._decls:
            for intr in ("minnum", "maxnum", "fma", "floor"):
                self._intrinsic(intr, "float")
            self._decls[sym] = _poly_expf() if name == "exp" else _poly_logf()
        return sym

    def _sigmoid(self, ty: str) -> str:
        suffix = _TYPES[ty][0]
        sym = f"tvms_sigmoid{suffix}"
        if sym not in self._decls:
            exp = self.call("exp", ty)
            self._decls[sym] = (
                f"define internal {ty} @{sym}({ty} %x) alwaysinline nounwind {{\n"
                f"  %n = fneg {ty} %x\n  %e = call {ty} @{exp}({ty} %n)\n"
                f"  %d = fadd {ty} %e, 1.0\n  %r = fdiv {ty} 1.0, %d\n  ret {ty} %r\n}}\n"
            )
        return sym

    def call(self, name: str, ty: str) -> str:
        """Return the symbol (without ``@``) to call for math function *name* on *ty*.

        *ty* is ``"float"`` or ``"double"``; the callee takes and returns *ty* (two arguments
        for ``pow``/``atan2``/``hypot``/``fmod``/``minnum``/``maxnum``/``copysign``, three for
        ``fma``).  Raises ``ValueError`` for unknown functions or types.
        """
        if ty not in _TYPES:
            raise ValueError(f"math type must be 'float' or 'double', got {ty!r}")
        if name in _INTRINSICS:
            return self._intrinsic(name, ty)
        if name in _DERIVED:
            return self._sigmoid(ty)
        if name not in LIBM_FUNCTIONS:
            known = sorted(set(LIBM_FUNCTIONS) | _INTRINSICS | _DERIVED)
            raise ValueError(f"unknown math function {name!r}; known: {', '.join(known)}")
        vectorizable = self.use_libmvec and libmvec_variants(name, ty, self.features)
        if not vectorizable and ty == "float" and name in ("exp", "log"):
            return self._poly(name)
        return self._libm(name, ty)

    def call_ir(self, result: str, name: str, ty: str, *args: str) -> str:
        """A complete call instruction, e.g. ``%y = call float @tvms_expf(float %x)``."""
        sym = self.call(name, ty)
        operands = ", ".join(f"{ty} {a}" for a in args)
        return f"  %{result} = call {ty} @{sym}({operands})\n"

    def compiler_used_symbols(self) -> list[str]:
        """SIMD variant symbols that must appear in ``@llvm.compiler.used``."""
        return list(self._used)

    def declared_symbols(self) -> frozenset[str]:
        """Symbols :meth:`module_prelude` will declare or define (for the calls made so far)."""
        names = set(self._decls)
        for text in self._decls.values():
            names.update(re.findall(r"^(?:declare|define)\b[^@\n]*@([\w.$]+)\(", text, re.M))
        return frozenset(names)

    def module_prelude(
        self,
        extra_used: Iterable[str] = (),
        skip_declarations: Iterable[str] = (),
    ) -> str:
        """Declarations, helper definitions and ``@llvm.compiler.used`` for the calls so far.

        ``skip_declarations`` names functions the rest of the module already declares (e.g. an
        ``llvm.fma.f32`` the code generator emits itself): their ``declare`` lines are left out,
        because LLVM rejects a second declaration of the same name.
        """
        skip = set(skip_declarations)
        out = ["; ---- tvmscript math prelude (backend.runtime.vecmath) ----\n"]
        for text in self._decls.values():
            for line in text.splitlines(keepends=True):
                m = re.match(r"declare\b[^@]*@([\w.$]+)\(", line)
                if m is None or m.group(1) not in skip:
                    out.append(line)
        used = list(dict.fromkeys([*self._used, *extra_used]))
        if used:
            items = ", ".join(f"ptr @{s}" for s in used)
            out.append(
                f"@llvm.compiler.used = appending global [{len(used)} x ptr] [{items}], "
                f'section "llvm.metadata"\n'
            )
        return "".join(out)
