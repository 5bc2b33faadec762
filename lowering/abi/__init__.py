"""The kernel's calling convention at IR level: entry checks (numpy arguments to data
pointers and shapes), the function boundary (output parameters and their shapes), and
the plain-C entry variant. The LLVM/runtime half is :mod:`backend.abi`.
"""
