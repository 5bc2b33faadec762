"""The TVMScript printer: ``script(node)`` renders TIR as parseable TVMScript text."""

from .func import print_func, script
from .names import NameTable

__all__ = ["NameTable", "print_func", "script"]
