"""The run object: one campaign's evidence, loaded from its run directory.

:class:`Run` is what :class:`ngcc.Campaign` returns and what :func:`load_run` reads
back. It only reads (through ``_records``); reports, data frames and plots build
on it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc import _records
from ngcc._errors import ForeignRunDirError
from ngcc._records import Record

if TYPE_CHECKING:  # pandas and matplotlib load only when a frame or a plot is asked for
    import pandas as pd
    from matplotlib.figure import Figure


class Run:
    """A campaign's run directory: plan, environment, job status, records.

    Attributes:
        path: the run directory.
        campaign: the parsed ``campaign.json``.
        build: the parsed ``build.json`` (empty dict if the KAT phase did not finish).
        records: every complete job's :class:`~ngcc._records.Record`, in plan order
            (instance, then message length).
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        if not (self.path / _records.CAMPAIGN_FILE).is_file():
            raise ForeignRunDirError(
                "%s is not an ngcc run directory (no %s); give the directory a campaign "
                "wrote, e.g. runs/<run-id>" % (self.path, _records.CAMPAIGN_FILE))
        self.campaign: dict[str, Any] = _records.load_campaign(self.path)
        build_file = self.path / _records.BUILD_FILE
        self.build: dict[str, Any] = (_records.load_build(self.path)
                                      if build_file.is_file() else {})
        self.records: list[Record] = self._load_records()

    def _load_records(self) -> list[Record]:
        records = []
        for job in self.campaign["jobs"]:
            if job.get("status") == "done" and job.get("record"):
                records.append(_records.load_record(self.path / job["record"], self.path))
        return records

    @property
    def run_id(self) -> str:
        """The run's id (its UTC start time unless named otherwise)."""
        return str(self.campaign["run_id"])

    @property
    def plan(self) -> dict[str, Any]:
        """The settings the run was started with (``campaign.json`` ``plan``)."""
        return dict(self.campaign["plan"])

    @property
    def environment(self) -> dict[str, Any]:
        """The host fingerprint taken when the campaign started."""
        return dict(self.campaign["environment"])

    @property
    def jobs(self) -> list[dict[str, Any]]:
        """Every job (instance × length) with its status, in plan order."""
        return [dict(job) for job in self.campaign["jobs"]]

    @property
    def failed_jobs(self) -> list[dict[str, Any]]:
        """Jobs that ended in ``crash``, ``timeout``, ``error`` or were ``refused``."""
        return [job for job in self.jobs if job["status"] not in ("done", "pending")]

    @property
    def complete(self) -> bool:
        """True when no job is pending (failed jobs count as finished)."""
        return all(job["status"] != "pending" for job in self.campaign["jobs"])

    @property
    def host_warnings(self) -> list[str]:
        """The host check's warnings at the start of the campaign."""
        return [w["message"] for w in self.campaign.get("host_warnings", [])]

    def record(self, instance: str, message_bytes: int) -> Record:
        """The record of one instance at one length.

        ``instance`` is the instance name or its stem: where a run holds two instances
        of one name (a built-in one and an external library, ``Wish512.external``), the
        bare name means the one whose stem it is.

        Raises:
            KeyError: that job has no record in this run.
        """
        at_length = [rec for rec in self.records if rec.message_bytes == message_bytes]
        for rec in at_length:
            if rec.stem == instance:
                return rec
        for rec in at_length:
            if rec.instance == instance:
                return rec
        raise KeyError("no record for %s at %d bytes in %s" % (instance, message_bytes,
                                                               self.path))

    def __repr__(self) -> str:
        done = sum(job["status"] == "done" for job in self.campaign["jobs"])
        return "<Run %s: %d/%d jobs done, %d failed>" % (
            self.path, done, len(self.campaign["jobs"]), len(self.failed_jobs))

    # ---------------------------------------------------------------------------
    # Analysis, plots and reports (issue 8): thin doors into _frames, _plot, _report.

    def to_dataframe(self, per_call: bool = False) -> pd.DataFrame:
        """The run as a tidy pandas DataFrame.

        Args:
            per_call: False (default): one row per instance × message length × trial
                with that trial's statistics. True: one row per timed call with its
                raw ``cycles`` (uint64), read from the raw files.
        """
        from ngcc import _frames

        if per_call:
            return _frames.call_frame(self.records)
        return _frames.trial_frame(self.records)

    def summary(self) -> pd.DataFrame:
        """One row per instance × message length: the records' aggregate statistics,
        cycles/byte with its 95 % CI, the KAT verdict and the ratio to pseudoXOF."""
        from ngcc import _frames

        return _frames.summary_frame(self)

    def plot_cpb(self, candidate: str | None = None) -> Figure:
        """Cycles/byte against message length, one line per instance, CI error bars
        (all instances, or those of one ``candidate``)."""
        from ngcc import _plot

        points = self.summary()
        if candidate is not None:
            points = points[points["candidate"] == candidate]
        return _plot.cycles_per_byte(points, f"{candidate or 'Run ' + self.run_id}: "
                                             "cycles/byte")

    def plot_distribution(self, instance: str, message_bytes: int) -> Figure:
        """The per-call cycle distribution of one instance at one length, per trial."""
        from ngcc import _plot

        record = self.record(instance, message_bytes)
        return _plot.distribution(record.cycles(), f"{instance}, {message_bytes} B: "
                                                   "cycles per call")

    def report(self, out_dir: str | os.PathLike[str] | None = None,
               plots: bool = True) -> list[Path]:
        """Write the report pages (and plots) to ``out_dir`` (default: ``report/``)."""
        from ngcc import _report

        return _report.write_report(self, out_dir, plots=plots)

    def _repr_html_(self) -> str:
        from ngcc import _report

        return _report.run_html(self)


def load_run(path: str | os.PathLike[str]) -> Run:
    """Load a run directory written by a campaign.

    Raises:
        ForeignRunDirError: ``path`` has no ``campaign.json``.
        CorruptRecordError: an evidence file is corrupt (the message names it).
    """
    return Run(path)
