"""The notebooks: stored without outputs, and executed end to end on a quick campaign."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
ORDER = ("quickstart.ipynb", "analysis.ipynb",  # analysis reads the quick start's run
         "compare.ipynb")


@pytest.mark.parametrize("name", ORDER)
def test_stored_without_outputs(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:40]


#: The tests of executed notebooks (each runs a campaign in a kernel): the end-to-end tier.
e2e = pytest.mark.e2e


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The notebooks run in order, in a scratch folder (the first two on one quick
    campaign; compare.ipynb builds a library and runs its own)."""
    work = tmp_path_factory.mktemp("notebooks")
    run_dir = work / "run"
    saved = {key: os.environ.get(key) for key in ("NGCC_NOTEBOOK_RUN_DIR", "PYTHONPATH")}
    os.environ["NGCC_NOTEBOOK_RUN_DIR"] = str(run_dir)  # the kernel inherits both
    # the kernel runs in the scratch folder: let it import this tree's ngcc, installed or not
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(NOTEBOOKS.parent), *filter(None, [saved["PYTHONPATH"]])])
    try:
        done = {}
        for name in ORDER:
            notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
            nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                    resources={"metadata": {"path": str(work)}}).execute()
            done[name] = notebook
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return {"notebooks": done, "run_dir": run_dir}


def outputs(notebook: Any) -> list[dict[str, Any]]:
    return [output for cell in notebook.cells if cell.cell_type == "code"
            for output in cell.outputs]


@e2e
@pytest.mark.parametrize("name", ORDER)
def test_notebook_runs_without_error(executed: dict[str, Any], name: str) -> None:
    found = outputs(executed["notebooks"][name])
    assert not [o for o in found if o["output_type"] == "error"]
    images = [o for o in found if "image/png" in o.get("data", {})]
    assert len(images) >= 1  # the plots show inline


@e2e
@pytest.mark.parametrize("name", ORDER)
def test_warnings_print_as_one_line_without_source_lines(executed: dict[str, Any],
                                                         name: str) -> None:
    text = "".join(o.get("text", "") for o in outputs(executed["notebooks"][name])
                   if o["output_type"] == "stream")
    assert "warnings.warn(" not in text and "ngcc/_" not in text


@e2e
def test_quickstart_made_a_valid_run_and_report(executed: dict[str, Any]) -> None:
    from ngcc.report.validate import validate

    run_dir = executed["run_dir"]
    assert (run_dir / "report" / "summary.md").is_file()
    result = validate(run_dir)
    assert result.ok, result.differences
    assert result.records_checked == 9
    html = [o for o in outputs(executed["notebooks"]["quickstart.ipynb"])
            if "text/html" in o.get("data", {})]
    assert any("<caption>run " in o["data"]["text/html"] for o in html)


@e2e
def test_compare_notebook_compared_theirs_with_ours(executed: dict[str, Any]) -> None:
    found = outputs(executed["notebooks"]["compare.ipynb"])
    frames = [o["data"]["text/plain"] for o in found if "text/html" in o.get("data", {})
              and "label_a" in o["data"]["text/plain"]]
    assert frames and "WChain-V1-512@theirs" in frames[0]
    table = "".join(o.get("text", "") for o in found if o["output_type"] == "stream"
                    and o.get("name") == "stdout")
    assert "geometric mean over lengths" in table
    # a verdict: a speed-up, or none (within the margin a host of several speeds widens,
    # or too few trials where a quick job kept one fast-state trial)
    assert re.search(r"× faster|× slower|not significant|within [0-9.]+ %|too few trials",
                     table), table
