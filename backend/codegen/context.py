"""Module-level code generation state: LLVM types, constants, declarations, strings, metadata."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np

from backend.abi.error_kinds import ErrorKind
from backend.llvm_types import CodegenError, llvm_type, mem_type, scalar_type
from backend.runtime.vecmath import MathLowering
from irbuilder.ir import Broadcast, DataType, IntImm, PrimExpr
from lowering.target import Target

__all__ = [
    "CodegenError",
    "CodegenOptions",
    "ErrorKind",
    "ModuleContext",
    "align_of",
    "const_int",
    "float_const",
    "intrinsic_suffix",
    "llvm_type",
    "mem_type",
    "sanitize",
    "scalar_type",
]


@dataclass(frozen=True)
class CodegenOptions:
    """Knobs of one code generation run."""

    fastmath: bool = False
    """Put the ``fast`` flag on floating-point instructions (lets reductions vectorize)."""
    fp_contract: bool = True
    """Put the ``contract`` flag on ``fadd``/``fsub``/``fmul`` so LLVM may fuse a multiply and
    an add into one FMA (one rounding instead of two), as C compilers do by default
    (``-ffp-contract=on``). Off gives IEEE rounding after every operation."""
    stack_limit: int = 4096
    """Constant-size allocations up to this many bytes go on the stack, larger ones on the heap."""
    libmvec: bool = True
    """Use glibc libmvec SIMD variants for exp/log/sin/... (else inline polynomials or libm)."""
    target: Target | None = None
    """The machine code target (triple, data layout, vector math variants); None: the host."""
    count_allocations: bool = False
    """Count heap allocations in the external globals ``tvms_cg_live_allocs`` (currently live)
    and ``tvms_cg_total_allocs`` (ever made); tests bind them with ``compile_ir(symbols=...)``."""
    error_abi: str = "python"
    """How errors leave a function: ``"python"`` sets a Python exception (native kernel ABI);
    ``"c"`` records code and message in thread-local storage (plain-C entry points,
    ``backend/abi/c_errors.py``) and never calls Python."""


def align_of(dtype: DataType) -> int:
    """Element alignment: safe on any numpy buffer (never more than one lane's size)."""
    if dtype.is_handle:
        return 8
    return max(dtype.bits, 8) // 8


def float_const(value: float, dtype: DataType) -> str:
    """An exact LLVM literal for a float constant of ``dtype`` (hex, so NaN/inf work)."""
    if dtype.bits == 16:
        (bits,) = struct.unpack("<H", np.float16(value).tobytes())
        return f"0xH{bits:04X}"
    if dtype.bits == 32:
        # LLVM spells float literals as the double with the same value.
        value = float(np.float32(value))
    (bits64,) = struct.unpack("<Q", struct.pack("<d", value))
    return f"0x{bits64:016X}"


def intrinsic_suffix(dtype: DataType) -> str:
    """The overload suffix of an LLVM intrinsic for ``dtype`` (``f32``, ``v8f32``, ``i64``)."""
    elem = dtype.element_of()
    if elem.is_float:
        base = f"f{elem.bits}"
    elif elem.is_bool:
        base = "i1"
    else:
        base = f"i{elem.bits}"
    return base if dtype.lanes == 1 else f"v{dtype.lanes}{base}"


def const_int(expr: PrimExpr) -> int | None:
    """The value of an integer constant or a broadcast of one, else None."""
    if isinstance(expr, IntImm):
        return expr.value
    if isinstance(expr, Broadcast) and isinstance(expr.value, IntImm):
        return expr.value.value
    return None


_IDENT_BAD = re.compile(r"[^A-Za-z0-9_.]")


def sanitize(name: str) -> str:
    """A name hint made safe for an unquoted LLVM local identifier."""
    cleaned = _IDENT_BAD.sub("_", name) or "v"
    return cleaned if not cleaned[0].isdigit() else "v" + cleaned


def _escape_bytes(data: bytes) -> str:
    out = []
    for byte in data:
        if 32 <= byte < 127 and byte not in (34, 92):
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:02X}")
    return "".join(out)


@dataclass
class ModuleContext:
    """What one LLVM module accumulates while its functions are generated."""

    options: CodegenOptions
    function_names: dict[str, tuple[DataType | None, ...]] = field(default_factory=dict)
    """Every kernel of the module: the dtype of each scalar parameter, None for a buffer."""
    """Names of the module's PrimFuncs (callable from each other) -> parameter count."""
    declarations: dict[str, str] = field(default_factory=dict)
    """Symbol -> ``declare`` line (one signature per symbol)."""
    signatures: dict[str, str] = field(default_factory=dict)
    globals: dict[str, str] = field(default_factory=dict)
    """Symbol -> global definition or external global declaration."""
    strings: dict[str, str] = field(default_factory=dict)
    """String contents -> global name."""
    metadata: list[str] = field(default_factory=list)
    definitions: list[str] = field(default_factory=list)
    """Function bodies, in emission order."""
    extern_symbols: set[str] = field(default_factory=set)
    """C symbols user code calls (EXTERN / PURE_EXTERN)."""
    helpers: set[str] = field(default_factory=set)
    _outlined: int = 0
    _math: MathLowering | None = None
    _shared_metadata: dict[str, str] = field(default_factory=dict)

    def shared_metadata(self, body: str) -> str:
        """One metadata node ``!{body}`` for the whole module (e.g. ``!nontemporal``'s)."""
        ident = self._shared_metadata.get(body)
        if ident is None:
            ident = self._shared_metadata[body] = self.add_metadata(body)
        return ident

    def vecmath(self) -> MathLowering:
        """The runtime's vectorisable math lowering for this module (created on first use)."""
        if self._math is None:
            target = self.options.target
            self._math = MathLowering(
                use_libmvec=None if self.options.libmvec else False,
                features=None if target is None else target.features,
            )
        return self._math

    def math_prelude(self) -> str:
        """Declarations/definitions the math calls need (empty when none were made)."""
        if self._math is None:
            return ""
        return self._math.module_prelude(skip_declarations=self.declarations.keys())

    def declare(self, name: str, ret: str, params: list[str], attrs: str = "") -> None:
        """Declare a function once; a second, different signature is an error."""
        signature = f"{ret} @{name}({', '.join(params)})"
        old = self.signatures.get(name)
        if old is not None:
            if old != signature:
                raise CodegenError(
                    f"conflicting declarations of external symbol {name!r}: "
                    f"{old!r} vs {signature!r}"
                )
            return  # same signature: the first declaration's attributes stay
        self.signatures[name] = signature
        self.declarations[name] = f"declare {signature}{(' ' + attrs) if attrs else ''}"

    def external_global(self, name: str, ty: str = "ptr") -> str:
        """Declare an external global (e.g. ``PyExc_ValueError``); return ``@name``."""
        self.globals.setdefault(name, f"@{name} = external global {ty}")
        return f"@{name}"

    def string(self, text: str) -> str:
        """A private NUL-terminated string constant; returns its ``@name``."""
        name = self.strings.get(text)
        if name is None:
            name = f"@.str.{len(self.strings)}"
            data = text.encode() + b"\0"
            self.globals[name] = (
                f"{name} = private unnamed_addr constant [{len(data)} x i8] "
                f'c"{_escape_bytes(data)}", align 1'
            )
            self.strings[text] = name
        return name

    def constant(self, ty: str, value: str) -> str:
        """A private constant global of LLVM type ``ty`` holding ``value``; returns its name."""
        name = f"@.const.{len(self.globals)}"
        while name in self.globals:
            name += "_"
        self.globals[name] = f"{name} = private unnamed_addr constant {ty} {value}, align 8"
        return name

    def add_metadata(self, body: str, *, distinct_self: bool = False) -> str:
        """Append a metadata node; ``distinct_self`` makes a loop ID (``distinct !{!N, ...}``)."""
        ident = f"!{len(self.metadata)}"
        if distinct_self:
            inner = f"{ident}, {body}" if body else ident
            self.metadata.append(f"{ident} = distinct !{{{inner}}}")
        else:
            self.metadata.append(f"{ident} = !{{{body}}}")
        return ident

    def loop_metadata(self, *properties: str) -> str:
        """A loop ID node carrying property nodes (``"llvm.loop.unroll.full"`` ...)."""
        props = [self.add_metadata(p) for p in properties]
        return self.add_metadata(", ".join(props), distinct_self=True)

    def outlined_name(self, base: str) -> str:
        """A fresh name for an outlined parallel body of function ``base``."""
        name = f"{base}__par_{self._outlined}"
        self._outlined += 1
        return name
