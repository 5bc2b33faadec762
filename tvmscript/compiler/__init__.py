"""``tvmscript.build`` and what goes with it: options and the pass pipeline of a build
(``options``), the kernel objects (``build``), the on-disk build cache (``cache``), object
and library export with the C header (``export``), long-build progress (``progress``).

Not named ``build``: that is the user's function ``tvmscript.build``.
"""
