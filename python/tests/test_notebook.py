"""examples/analysis.ipynb executed headless (Debian's python3-nbclient and python3-ipykernel), as
a user runs it: any cell error fails the test."""

import os
import sys

import pytest

from conftest import BINARY_DIR, SOURCE_DIR


def test_analysis_notebook_runs(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    if not (BINARY_DIR / "opscope").exists():
        pytest.skip(f"{BINARY_DIR / 'opscope'} not built")
    nb = nbformat.read(SOURCE_DIR / "examples" / "analysis.ipynb", as_version=4)
    # The kernel imports the built module and finds the CLI of the same build.
    os.environ["OPSCOPE_BINARY_DIR"] = str(BINARY_DIR.resolve())
    os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    os.environ.setdefault("MPLBACKEND", "Agg")
    client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError naming the cell on any error
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the plots were drawn"
