"""Kernels in IPython cells: parsing from the cell cache, diagnostics naming the cell,
highlighted display (terminal and notebook HTML)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("IPython")

from IPython.core.interactiveshell import InteractiveShell

import tvmscript
from tvmscript import display, notebook

CELL_KERNEL = '''
import numpy as np
import tvmscript
from tvmscript import tir as T

OFFSET = 2.5

@T.prim_func
def shift(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")) -> None:
    for i in range(8):
        B[i] = A[i] + T.float32(OFFSET)

a = np.arange(8, dtype="float32")
b = np.zeros(8, "float32")
tvmscript.build(shift)(a, b)
'''

CELL_BROKEN = '''@T.prim_func
def broken(A: T.Buffer((8,), "float32")) -> None:
    for i in range(8):
        A[i] = no_such_name + T.float32(1)
'''


@pytest.fixture(scope="module")
def shell() -> Any:
    shell = InteractiveShell.instance()
    # tvmscript was imported before this shell existed (a real notebook imports it in a cell:
    # see test_importing_inside_ipython_installs_the_handler).
    notebook.install(shell)
    result = shell.run_cell(CELL_KERNEL, store_history=True)
    assert result.success, result.error_in_exec
    return shell


def test_kernel_defined_in_a_cell_parses_builds_and_runs(shell: Any) -> None:
    ns = shell.user_ns
    np.testing.assert_array_equal(ns["b"], ns["a"] + np.float32(2.5))
    assert "T.float32(2.5)" in ns["shift"].script()  # the captured cell variable


def test_diagnostic_names_the_cell_and_line_without_a_traceback(
    shell: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    count = shell.execution_count
    result = shell.run_cell(CELL_BROKEN, store_history=True)
    assert isinstance(result.error_in_exec, tvmscript.DiagnosticError)
    err = capsys.readouterr()
    text = err.out + err.err
    assert "error: name 'no_such_name' is not defined" in text
    assert f"--> Cell In[{count}]:4:16" in text  # line 4 of the cell
    assert "A[i] = no_such_name + T.float32(1)" in text and "^^^^^^^^^^^^" in text
    assert "Traceback" not in text and "parse_prim_func" not in text


def test_cell_label_is_none_for_real_files() -> None:
    assert notebook.cell_label(__file__) is None


def test_notebook_html_is_highlighted(shell: Any) -> None:
    pytest.importorskip("pygments")
    html = shell.user_ns["shift"]._repr_html_()
    assert html.startswith('<div class="tvmscript">') and "<span style=" in html
    assert "prim_func" in html and "shift" in html


def test_html_without_pygments_is_escaped_plain_text(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(display, "_pygments", lambda: None)
    html = shell.user_ns["shift"]._repr_html_()
    assert html.startswith('<pre class="tvmscript">') and "<span" not in html
    assert "T.Buffer((8,), &quot;float32&quot;)" in html


def test_show_colours_a_terminal_only(
    shell: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pygments")
    func = shell.user_ns["shift"]
    plain = func.script()
    func.show()  # captured output is no terminal: plain text
    assert capsys.readouterr().out.strip() == plain.strip()
    monkeypatch.setattr(display, "_terminal", lambda: True)
    func.show()
    coloured = capsys.readouterr().out
    assert "\x1b[" in coloured and "prim_func" in coloured
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.undo()
    monkeypatch.setenv("NO_COLOR", "1")
    assert display._terminal() is False


def test_importing_inside_ipython_installs_the_handler(tmp_path: Any) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "session.py"
    script.write_text(
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_cell('import tvmscript\\nfrom tvmscript import tir as T', store_history=True)\n"
        f"shell.run_cell({CELL_BROKEN!r}, store_history=True)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)}, timeout=120, check=False)
    text = done.stdout + done.stderr
    assert "--> Cell In[2]:4:16" in text and "Traceback" not in text, text


def test_load_ext_installs_the_handler(shell: Any) -> None:
    shell.run_line_magic("load_ext", "tvmscript")
    assert tvmscript.DiagnosticError in shell.custom_exceptions
