"""Install the printer for ``PrimFunc.script()`` in these tests."""

from irbuilder.ir import set_script_printer
from tvmscript.printer import script

set_script_printer(script)
