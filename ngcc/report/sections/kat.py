"""Section 3 of a candidate page (functional testing): what each library's KAT verdict
was checked against, its build flags and verdict, and what ⚠ means for a verdict timed
under ``--allow-kat-fail``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.evidence.model import BuildEntry, KatFacts
from ngcc.report.sections.common import SECTION_TITLES, WARNING, code, kat_cell
from ngcc.report.tables import markdown_table

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

KAT_COLUMNS = ("instance", "build flags", "KAT")

KAT_BASIS_WORDS = {
    "shipped manifest": "against the official KAT vectors of the SHA-256 manifest {ref} in "
                        "ngcc",
    "manifest": "against the SHA-256 manifest {ref} given with --manifest",
    "official files": "against the official KAT files given with --official (no manifest "
                      "line)",
    "submission files": "against the KAT files shipped with the submission (no manifest "
                        "line)",
    "none": "not checked (no reference)",
}
"""What section 3 says each KAT basis (``ngcc.kat.BASES``) was checked against."""

GUIDE_CFLAGS = frozenset({"-std=c99", "-Wpedantic", "-Wall", "-Wextra", "-O2", "-fPIC"})
"""The NGCC guide's reference compiler flags; a build adding only what a shared library
needs (:data:`LIBRARY_CFLAGS`) is shown as ``guide``, as on the seed pages."""
LIBRARY_CFLAGS = frozenset({"-fvisibility=hidden", "-shared"})


def build_flags(cflags: Sequence[str]) -> str:
    """``guide`` for the guide's reference flags, else the flags themselves."""
    flags = set(cflags)
    if GUIDE_CFLAGS.issubset(flags) and (flags - GUIDE_CFLAGS).issubset(LIBRARY_CFLAGS):
        return "guide"
    return code(" ".join(cflags)) if cflags else _format.MISSING


def kat_basis(kat: KatFacts) -> str:
    """What a library's KAT verdict rests on (``ngcc.kat.BASES``); for a run of an ngcc
    that did not record it, the shipped manifest, or none for a NOKAT."""
    return kat.basis or ("none" if kat.verdict == "NOKAT" else "shipped manifest")


def basis_words(candidate: str, kat: KatFacts) -> str:
    """Section 3's words for what one library was checked against."""
    words = []
    for basis in kat_basis(kat).split(", "):
        ref = (code(f"kat/{candidate}.sha256") if basis == "shipped manifest"
               else code(Path(kat.reference or "").name) if basis == "manifest" else "")
        words.append(KAT_BASIS_WORDS[basis].format(ref=ref))
    if kat.by_content:  # its instance name is no manifest label
        words.append("by content: " + kat.by_content)
    return "; ".join(words)


def functional_testing(run: Run, candidate: str, builds: Sequence[BuildEntry]) -> list[str]:
    files = ", ".join(run.plan.kat_files) or "none"
    said = list(dict.fromkeys(basis_words(candidate, b.kat) for b in builds))
    if said == [KAT_BASIS_WORDS["none"]]:
        lines = ["## " + SECTION_TITLES[2], "",
                 f"The KAT files ({files}) were generated but not checked (no reference): no "
                 "manifest line, official file or submission KAT file covers them."
                 + (" The ICCS baseline functions have no official KAT; ngcc's test suite "
                    "checks their test vectors." if candidate == "baseline" else ""), ""]
    elif len(said) <= 1:
        against = said[0] if said else KAT_BASIS_WORDS["shipped manifest"].format(
            ref=code(f"kat/{candidate}.sha256"))
        lines = ["## " + SECTION_TITLES[2], "", f"Each library was checked {against} (KAT "
                 f"files checked: {files}) before timing.", ""]
    else:
        lines = ["## " + SECTION_TITLES[2], "",
                 f"The libraries were checked before timing (KAT files: {files}):", ""]
        lines += [f"- {code(b.label)}: {basis_words(candidate, b.kat)}" for b in builds]
        lines += [""]
    rows = [(code(b.label), build_flags(b.implementation.cflags), kat_cell(b.kat))
            for b in builds]
    lines += markdown_table(KAT_COLUMNS, rows) + [""]
    return lines + override_notes([b.kat for b in builds])


def override_notes(kats: Sequence[KatFacts]) -> list[str]:
    """What ⚠ means for the verdicts timed under ``--allow-kat-fail``: a MISMATCH is
    not the candidate's hash; a NOKAT was not checked; a file that could not be made
    is not shown to be the candidate's hash."""
    verdicts = {k.verdict for k in kats if k.timed_without_pass}
    lines = []
    if "MISMATCH" in verdicts:
        lines += [f"{WARNING} with MISMATCH marks an instance timed although its KAT "
                  "verdict is not PASS (explicit override): its figures measure a "
                  "function that does not compute the candidate's hash.", ""]
    if "NOKAT" in verdicts:
        lines += [f"{WARNING} with NOKAT marks an instance timed unchecked "
                  "(--allow-kat-fail): not checked (no reference), so its figures are of a "
                  "function not shown to compute the candidate's hash.", ""]
    failed = sorted(verdicts - {"MISMATCH", "NOKAT"})
    if failed:
        lines += [f"{WARNING} with {' or '.join(failed)} marks an instance timed although "
                  "its KAT files could not be generated and checked (explicit override): "
                  "its figures are of a function not shown to compute the candidate's "
                  "hash.", ""]
    return lines
