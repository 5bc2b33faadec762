"""The TVMScript parser: the IR-agnostic :mod:`core` and the dialect handlers."""
