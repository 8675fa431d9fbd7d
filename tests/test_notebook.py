"""The example notebook runs from top to bottom (in a kernel of its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "examples" / "quickstart.ipynb"


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_example_notebook_runs(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("altair")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.get("output_type") == "error"]
    # the tables show as HTML and the charts as SVG drawn offline
    kinds = [kind for output in outputs for kind in output.get("data", {})]
    assert kinds.count("text/html") >= 3
    assert kinds.count("image/svg+xml") == 3
    assert (tmp_path / "example_report.html").stat().st_size > 0
