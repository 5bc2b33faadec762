"""The late stage: target-dependent, bit-exact loop rewrites run after ``insert_entry_checks``
(opt_level >= 1), and the run-time versioning helpers they share.
"""
