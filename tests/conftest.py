"""Suite-wide settings: property tests are derandomized so CI runs are reproducible.

Set ``TVMSCRIPT_HYPOTHESIS_RANDOM=1`` to explore with fresh random examples instead.
"""

import os

from hypothesis import settings

settings.register_profile("reproducible", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(
    "explore" if os.environ.get("TVMSCRIPT_HYPOTHESIS_RANDOM") else "reproducible"
)
