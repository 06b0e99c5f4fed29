"""A library ``ngcc build`` could not place (its instance name in no manifest) takes
its submission's candidate in ``ngcc evaluate`` (``tests/fixtures/inherit``: code of
our own)."""

from __future__ import annotations

import shutil
from pathlib import Path


def test_a_library_no_manifest_names_takes_its_submissions_candidate(tmp_path):
    """``tests/fixtures/inherit``: code of our own, one folder named after a Round 1
    instance (so ``ngcc build`` places it), the other not: within the submission, the
    second is built as the first one's candidate, so its KAT files are checked against
    that candidate's manifest lines by content."""
    from ngcc.app import evaluate as _evaluate

    archive = Path(__file__).parent / "fixtures" / "inherit"
    evaluation = _evaluate.build_all([archive], tmp_path / "run")
    candidates = {Path(row.folder).name: row.candidate for row in evaluation.folders}
    placed = candidates["WChain-V1-512"]
    assert placed not in (None, "external")
    assert candidates == {"WChain-V1-512": placed, "WChain_SIMD512": placed}
    alone = tmp_path / "alone" / "Inherit Sub" / "Optimized_Implementation"
    alone.mkdir(parents=True)
    shutil.copytree(archive / "Inherit Sub" / "Optimized_Implementation" / "WChain_SIMD512",
                    alone / "WChain_SIMD512")
    [row] = _evaluate.build_all([tmp_path / "alone"], tmp_path / "run2").folders
    assert row.candidate == "external"  # nothing in its submission names one
