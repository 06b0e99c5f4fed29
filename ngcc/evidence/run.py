"""The run object: one campaign's evidence, loaded from its run directory.

:class:`Run` is what :class:`ngcc.Campaign` returns and what :func:`load_run` reads
back: the evidence model's objects (``evidence.model``) as the store (``evidence.records``) loads
them, each record as a :class:`RunRecord` that also knows where its files are.
Reports, data frames and plots build on it; its methods that show them (frames,
plots, comparisons, reports, Jupyter tables) import those modules when called, so
loading a run (or running a campaign) loads no renderer.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ngcc.base.errors import ForeignRunDirError, NoRecordError, ReportError
from ngcc.evidence import analyses as _analyses
from ngcc.evidence import evaluation as _evaluation
from ngcc.evidence import records as _records
from ngcc.evidence.evaluation import Evaluation
from ngcc.evidence.model import (
    BuildEntry,
    BuildState,
    CampaignState,
    Environment,
    Job,
    Plan,
    Record,
)

if TYPE_CHECKING:  # pandas and matplotlib load only when a frame or a plot is asked for
    import pandas as pd
    from matplotlib.figure import Figure


@dataclass(frozen=True, repr=False)
class RunRecord(Record):
    """A record of a run: every field of :class:`~ngcc.evidence.model.Record`, plus its file and
    run directory, so it can load its raw samples."""

    path: Path = field(kw_only=True, compare=False, metadata={"json": False})
    run_dir: Path = field(kw_only=True, compare=False, metadata={"json": False})

    @classmethod
    def located(cls, record: Record, path: Path, run_dir: Path) -> RunRecord:
        """``record`` as found at ``path`` in ``run_dir``."""
        values = {f.name: getattr(record, f.name) for f in fields(Record)}
        return cls(**values, path=Path(path), run_dir=Path(run_dir))

    def cycles(self) -> list[np.ndarray]:
        """The per-call cycles of every trial (uint64 arrays), checked against the sha256."""
        return _records.load_raw(_records.path_in(self.run_dir, self.raw.path,
                                                  _records.RAW_REMEDY), self.raw.sha256)

    def _repr_html_(self) -> str:  # Jupyter shows a record as a table
        from ngcc.report import jupyter as _jupyter

        return _jupyter.record_html(self)


class Run:
    """A campaign's run directory: plan, environment, job status, records.

    Attributes:
        path: the run directory.
        campaign: ``campaign.json`` (:class:`~ngcc.evidence.model.CampaignState`).
        build: ``build.json`` (:class:`~ngcc.evidence.model.BuildState`), None if the KAT
            phase did not finish.
        records: every complete job's :class:`RunRecord`, in plan order (library,
            then message length).
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        if not self.path.exists():
            raise ForeignRunDirError("%s does not exist; give the directory a campaign wrote, "
                                     "e.g. runs/<run-id>" % self.path)
        if not (self.path / _records.CAMPAIGN_FILE).exists():
            raise ForeignRunDirError(
                "%s is not an ngcc run directory (no %s); give the directory a campaign "
                "wrote, e.g. runs/<run-id>" % (self.path, _records.CAMPAIGN_FILE))
        self.campaign: CampaignState = _records.load_campaign(self.path)
        self.build: BuildState | None = (_records.load_build(self.path) if
                                         (self.path / _records.BUILD_FILE).exists() else None)
        self.records: list[RunRecord] = [
            RunRecord.located(_records.load_job_record(self.path, job),
                              self.path / job.record, self.path)
            for job in self.campaign.jobs if job.status == "done"]

    @property
    def run_id(self) -> str:
        """The run's id (its UTC start time unless named otherwise)."""
        return self.campaign.run_id

    @property
    def plan(self) -> Plan:
        """The settings the run was started with."""
        return self.campaign.plan

    @property
    def environment(self) -> Environment:
        """The host fingerprint taken when the campaign started."""
        return self.campaign.environment

    @property
    def jobs(self) -> tuple[Job, ...]:
        """Every job (library × length) with its status, in plan order."""
        return self.campaign.jobs

    @property
    def failed_jobs(self) -> list[Job]:
        """Jobs that ended in ``crash``, ``timeout``, ``error`` or were ``refused``."""
        return [job for job in self.jobs if job.status not in ("done", "pending")]

    @property
    def complete(self) -> bool:
        """True when no job is pending (failed jobs count as finished)."""
        return all(job.status != "pending" for job in self.jobs)

    @property
    def host_warnings(self) -> list[str]:
        """The host check's warnings at the start of the campaign."""
        return [w.message for w in self.campaign.starts[0].host_warnings]

    @property
    def evaluation(self) -> Evaluation | None:
        """What ``ngcc evaluate`` made of each submission folder (``evaluation.json``),
        or None for a run it did not make.

        Raises:
            CorruptRecordError: an ``evaluation.json`` that is not sound.
        """
        return _evaluation.load(self.path)

    def analysis_evidence(self, name: str) -> list[dict[str, Any]]:
        """The evidence files of the analysis ``name`` (``ngcc.evidence.analyses``) in
        this run, each read, checked and with its ``relpath``; empty where it ran none.

        Raises:
            KeyError: no analysis of that name.
            CorruptRecordError: an evidence file that is not sound.
        """
        found = [analysis for analysis in _analyses.ANALYSES if analysis.name == name]
        if not found:
            raise KeyError("no analysis %r (there are %s)" % (
                name, ", ".join(a.name for a in _analyses.ANALYSES)))
        evidence = importlib.import_module(found[0].module("evidence"))
        found_evidence: list[dict[str, Any]] = evidence.run_evidence(self.path)
        return found_evidence

    @property
    def leak_tests(self) -> list[dict[str, Any]]:
        """The campaign's timing-leakage results (``leak/*/*.json``, ``--leak``), each
        with its ``relpath``; empty when it ran none.

        Raises:
            CorruptRecordError: a leak evidence file that is not sound.
        """
        return self.analysis_evidence("leak")

    @property
    def constant_time(self) -> pd.DataFrame:
        """The sites of the constant-time analysis (``ct/*/*.json``, ``ngcc ct``), one
        row per site of each library, with the library's verdict; a library without a
        site is one row with an empty site (a DataFrame without rows where none ran).

        Raises:
            CorruptRecordError: an evidence file that is not sound.
        """
        from ngcc.evidence.ct_evidence import sites_frame

        return sites_frame(self.analysis_evidence("ct"))

    @property
    def build_entries(self) -> tuple[BuildEntry, ...]:
        """The ``build.json`` entries (none if the KAT phase did not finish)."""
        return self.build.libraries if self.build is not None else ()

    def record(self, name: str, message_bytes: int) -> RunRecord:
        """The record of one library at one length.

        ``name`` is a label or an instance name: where a run holds two libraries of
        one instance (``Pavelor-512`` and ``Pavelor-512@perf``), the bare name means
        the one whose label it is.

        Raises:
            NoRecordError: (a KeyError) that job has no record in this run.
        """
        at_length = [rec for rec in self.records if rec.message_bytes == message_bytes]
        for rec in at_length:
            if rec.label == name:
                return rec
        for rec in at_length:
            if rec.instance == name:
                return rec
        raise NoRecordError("no record for %s at %d bytes in %s" % (name, message_bytes,
                                                                    self.path))

    def __repr__(self) -> str:
        done = sum(job.status == "done" for job in self.jobs)
        return "<Run %s: %d/%d jobs done, %d failed>" % (
            self.path, done, len(self.jobs), len(self.failed_jobs))

    # ---------------------------------------------------------------------------
    # Analysis, plots and reports: thin doors into stats.tables, report.plots, report.write.

    def to_dataframe(self, per_call: bool = False) -> pd.DataFrame:
        """The run as a tidy pandas DataFrame.

        Args:
            per_call: False (default): one row per library × message length × trial
                with that trial's facts and statistics. True: one row per timed call
                with its raw ``cycles`` (uint64), read from the raw files.
        """
        from ngcc.stats import tables as _frames

        if per_call:
            return _frames.call_frame(self.records)
        return _frames.trial_frame(self.records)

    def summary(self) -> pd.DataFrame:
        """One row per library × message length: the records' aggregate statistics,
        cycles/byte with its 95 % CI, the KAT verdict and the ratio to pseudoXOF."""
        from ngcc.stats import tables as _frames

        return _frames.summary_frame(self.records)

    def ranking(self, target: int = 512, build: str = "reference",
                host: str | None = None) -> pd.DataFrame:
        """The candidates ranked at a security target of ``target`` bits (their
        2 × target-bit instances), the harness's rule with each rank's 95 % interval
        and the ties in the noise (``stats.ranking``): one row per candidate, best
        first. ``build``: ``reference`` (as the harness ranks) or ``optimized``;
        ``host``: one host's records, in a run measured on several."""
        from ngcc.stats import tables as _frames

        return _frames.ranking_frame(self.records, target, build, host)

    def plot_cpb(self, candidate: str | None = None) -> Figure:
        """Cycles/byte against message length, one line per library, CI error bars
        (all libraries, or those of one ``candidate``)."""
        from ngcc.report.plots.cycles import cycles_per_byte

        points = self.summary()
        if candidate is not None:
            points = points[points["candidate"] == candidate]
        return cycles_per_byte(points, f"{candidate or 'Run ' + self.run_id}: cycles/byte")

    def plot_distribution(self, name: str, message_bytes: int) -> Figure:
        """The per-call cycle distribution of one library at one length, per trial."""
        from ngcc.report.plots.distribution import distribution

        record = self.record(name, message_bytes)
        return distribution(record.cycles(), f"{record.label}, {message_bytes} B: "
                                             "cycles per call")

    def compare(self, other: Run | None = None, instances: Iterable[str] = (),
                statistic: str = "figure", alpha: float = 0.05) -> pd.DataFrame:
        """Is this run's library faster than ``other``'s, and is the difference real?

        One row per pair × message length (then one geometric-mean row per pair, with
        ``message_bytes`` <NA>): both figures, the ratio self/other with its 1 − alpha
        CI, Welch's p-value and the verdict words; ``frame.attrs["notes"]`` says what
        differs between the hosts, what was converted and what was skipped.

        Args:
            other: the run to compare with, or its run directory (None: pairs of
                labels of this run).
            instances: pairs ``"A=B"`` (label in this run = label in ``other``) or
                ``"NAME"`` (that label on both sides); default: every common label.
            statistic: the per-trial figure: ``figure`` (each trial's value of the figure
                its record leads with, as every view shows it), ``median`` or ``mean``
                cycles per call. Ratios within 1 ± 5 % are not called significant (two
                runs of the same code on a busy host differ by that much).
            alpha: the significance level.

        Raises:
            CompareError: an unknown label, nothing in common, or units that cannot be
                converted (the message says which and why).
        """
        from ngcc.report import compare as _compare_runs

        return _compare_runs.compare_runs(self, _other_run(other), instances, statistic,
                                          alpha).to_frame()

    def plot_compare(self, other: Run | None = None, instances: Iterable[str] = (),
                     statistic: str = "figure", alpha: float = 0.05) -> Figure:
        """The ratio of :meth:`compare` and its CI against message length, one series
        per pair (not significant points hollow, the geometric mean dashed)."""
        from ngcc.report import compare as _compare_runs

        return _compare_runs.ratio_figure(
            _compare_runs.compare_runs(self, _other_run(other), instances, statistic, alpha))

    def report(self, out_dir: str | os.PathLike[str] | None = None, plots: bool = True,
               formats: Iterable[str] = ("markdown",)) -> list[Path]:
        """Write the report pages (and plots) to ``out_dir`` (default: ``report/``), in
        ``formats``: any of ``markdown``, ``html`` (self-contained pages), ``csv`` and
        ``json`` (the statistics table)."""
        from ngcc.report import write as _report

        if out_dir is not None and Path(out_dir).exists() and not Path(out_dir).is_dir():
            raise ReportError("%s is a file, not a folder for the report" % out_dir)
        return _report.write_report(self, out_dir, plots=plots, formats=tuple(formats))

    def _repr_html_(self) -> str:  # Jupyter shows a run as a table
        from ngcc.report import jupyter as _jupyter

        return _jupyter.run_html(self)


def _other_run(other: object) -> Run | None:
    """The other side of a comparison: a Run, a run directory, or None."""
    if other is None or isinstance(other, Run):
        return other
    if isinstance(other, (str, os.PathLike)):
        return load_run(other)
    raise TypeError("compare with a Run or a run directory, not %s" % type(other).__name__)


def load_run(path: str | os.PathLike[str]) -> Run:
    """Load a run directory written by a campaign.

    Raises:
        ForeignRunDirError: ``path`` has no ``campaign.json``.
        CorruptRecordError: an evidence file is corrupt (the message names it).
    """
    return Run(path)
