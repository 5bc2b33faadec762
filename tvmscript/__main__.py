"""``python -m tvmscript``: the command line (:mod:`tvmscript.cli`)."""

import sys

from .cli import main

sys.exit(main())
