"""The run object: one campaign's evidence, loaded from its run directory.

:class:`Run` is what :class:`ngcc.Campaign` returns and what :func:`load_run` reads
back. It only reads (through ``_records``); reports, data frames and plots build
on it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ngcc import _records
from ngcc._errors import ForeignRunDirError
from ngcc._records import Record


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

        Raises:
            KeyError: that job has no record in this run.
        """
        for rec in self.records:
            if rec.instance == instance and rec.message_bytes == message_bytes:
                return rec
        raise KeyError("no record for %s at %d bytes in %s" % (instance, message_bytes,
                                                               self.path))

    def __repr__(self) -> str:
        done = sum(job["status"] == "done" for job in self.campaign["jobs"])
        return "<Run %s: %d/%d jobs done, %d failed>" % (
            self.path, done, len(self.campaign["jobs"]), len(self.failed_jobs))


def load_run(path: str | os.PathLike[str]) -> Run:
    """Load a run directory written by a campaign.

    Raises:
        ForeignRunDirError: ``path`` has no ``campaign.json``.
        CorruptRecordError: an evidence file is corrupt (the message names it).
    """
    return Run(path)
