"""Safety checks: the well-formedness verifier, the static race check of ``T.parallel``
loops, and the ``bounds_check=True`` asserts with their per-nest hoisting.
"""
