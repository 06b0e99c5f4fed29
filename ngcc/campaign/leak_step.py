"""A campaign's timing-leakage tests (``--leak``): one per library the KAT gate let
through, at one message length, into ``RUN_DIR/leak/``; a result made with the same
limits is kept, and a test that fails is a warning (the campaign goes on)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ngcc.base.errors import MeasurementWarning, NgccError
from ngcc.base.progress import Task
from ngcc.campaign.settings import CampaignSettings
from ngcc.evidence import leak_evidence as _leak_evidence
from ngcc.evidence.model import BuildEntry
from ngcc.library.registry import Instance
from ngcc.measure.leak_measurement import LeakResult


def todo(settings: CampaignSettings, run_dir: Path, build: Mapping[str, BuildEntry]
         ) -> list[str]:
    """The labels whose leak test is still to run (none without ``leak``)."""
    if settings.leak is None:
        return []
    out = run_dir / _leak_evidence.LEAK_DIR
    return [label for label, entry in build.items() if entry.kat.gate != "refused"
            and not _leak_evidence.kept(out, entry.candidate, label, settings.leak,
                                        settings.leak_calls, settings.leak_seconds)]


def run(labels: Sequence[str], settings: CampaignSettings, run_dir: Path,
        libraries: Mapping[str, Instance], tester: Callable[..., LeakResult], cpu: int,
        bar: Task) -> None:
    """Test each of ``labels`` on ``cpu`` and write its evidence; ``bar`` moves."""
    length, out = settings.leak, run_dir / _leak_evidence.LEAK_DIR
    if length is None:
        return
    for label in labels:
        bar.status("%s %d B" % (label, length))
        try:
            result = tester(libraries[label], length, calls=settings.leak_calls,
                            seconds=settings.leak_seconds, cpu=cpu, label=label)
        except NgccError as exc:
            warnings.warn("%s: the leak test at %d B failed: %s" % (label, length, exc),
                          MeasurementWarning, stacklevel=4)
            outcome = "failed"
        else:
            _leak_evidence.write_evidence(result.evidence(), out)
            outcome = "%s, max |t| %.2f" % (result.verdict, result.max_t)
        bar.advance(1)
        bar.item_done("%s %d B" % (label, length), outcome)
