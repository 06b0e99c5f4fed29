"""Section 7 of a candidate page (raw evidence index): per library its KAT log, its
records and raw samples, and the scripts that made them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ngcc.base import format as _format
from ngcc.evidence.model import BuildEntry, Record
from ngcc.report import host as _host_words
from ngcc.report.sections.common import SECTION_TITLES, code
from ngcc.report.tables import markdown_table
from ngcc.stats import groups as _analysis

if TYPE_CHECKING:
    from ngcc.evidence.run import Run

EVIDENCE_COLUMNS = ("instance", "item", "file")


def evidence_rows(records: Sequence[Record], builds: Sequence[BuildEntry]
                  ) -> list[tuple[str, str, str]]:
    """Section 7's rows, as on the seed pages: per library its KAT log, then a row per
    record (sorted by file name) with the record and, beside it, its raw samples."""
    logs = {b.label: b.kat for b in builds}
    rows: list[tuple[str, str, str]] = []
    for label in _analysis.labels(records, builds):
        kat = logs.get(label)
        if kat is not None:
            digest = (kat.log_sha256 or "")[:16]
            rows.append((code(label), f"KAT log (sha256 {code(digest + '…')})", code(kat.log)))
        timing = sorted((r for r in records if r.label == label),
                        key=lambda r: _format.operation(r.message_bytes))
        rows += [(code(label), f"timing {_format.operation(r.message_bytes)}",
                  f"{code(r.relpath)}, {code(r.raw.path)}") for r in timing]
    return rows


def evidence_index(run: Run, records: Sequence[Record],
                   builds: Sequence[BuildEntry]) -> list[str]:
    return ["## " + SECTION_TITLES[5], "",
            "Paths are relative to the run directory; each JSON file records its plan, "
            "environment, trials and every statistic, and the sha256 of its raw samples "
            f"(the per-call cycles, the `.npz` of the same row; format: "
            f"{code('docs/evidence-format.md')}).", ""] + markdown_table(
        EVIDENCE_COLUMNS, evidence_rows(records, builds)) + [
        "", f"Scripts: {', '.join(code(s) for s in scripts(records))} in ngcc "
            f"{run.environment.ngcc_version}{_host_words.commit_text(run.environment)}."]

#: The campaign module that ran a run's jobs, by the version of the layout.
CAMPAIGN_SCRIPT = "ngcc/campaign/campaign.py"
#: Before the stage folders, the campaign and the driver runner lay at the package root
#: (their records name the runner ``ngcc._child.DriverRunner``).
_FLAT_LAYOUT = tuple("ngcc/%s.py" % name for name in ("_campaign", "_child"))
#: The source files that ran a runner's trials, by the runner a record names (each
#: layout's own paths, so that an old run's pages still regenerate as they were).
RUNNER_SCRIPTS = {
    "ngcc.driver.child.DriverRunner": (CAMPAIGN_SCRIPT, "ngcc/driver/child.py",
                                       "csrc/driver/"),
    "ngcc._child.DriverRunner": (*_FLAT_LAYOUT, "csrc/driver/driver.c"),
    "python -m ngcc._isolate → ngcc._worker.trial": (_FLAT_LAYOUT[0], "ngcc/_worker.py",
                                                      "csrc/bench.c"),
}


def scripts(records: Sequence[Record]) -> list[str]:
    """The campaign and the sources of the runners that timed ``records`` (a runner
    ngcc does not know is named as the record names it)."""
    found: list[str] = []
    runners = [r.provenance.runner for r in records] or ["ngcc.driver.child.DriverRunner"]
    for runner in runners:
        for script in RUNNER_SCRIPTS.get(runner, (CAMPAIGN_SCRIPT, runner)):
            if script not in found:
                found.append(script)
    return found
