"""Make ``buf_helpers`` importable and install the printer for ``script()``."""

import sys
from pathlib import Path

from irbuilder.ir import set_script_printer
from tvmscript.printer import script

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

set_script_printer(script)
