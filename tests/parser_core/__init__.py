"""Tests of the IR-agnostic parser core (``tvmscript.parser.core``) and diagnostics."""
