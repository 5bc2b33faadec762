"""The kernel ABI at LLVM/runtime level: the CPython fast-call entry (``pyentry``), the
ndarray/exception layout it reads (``pyabi``), argument binding for calls (``call_args``),
the plain-C entry module (``c_entry``), its thread-local errors (``c_errors``) and the C
header of an exported library (``c_header``). The IR half is :mod:`lowering.abi`.
"""
