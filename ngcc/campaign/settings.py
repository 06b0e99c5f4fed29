"""The settings of a campaign: one frozen object, every value checked and every default
resolved once (the quick plan's among them), before anything is measured or written.

The command line and ``ngcc evaluate`` build a :class:`CampaignSettings` and hand it
to :class:`~ngcc.Campaign`; Python callers may pass the same fields as keyword
arguments of ``Campaign`` instead. What runs code (the trial runner, the KAT checker,
the leak tester, an executor) and what listens (progress, ``on_plan``, ``on_wait``)
are not settings: ``Campaign`` takes them beside.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc.base.clock import run_id_now
from ngcc.base.errors import DistributedError, ForeignRunDirError, SettingError
from ngcc.campaign import schema as _schema
from ngcc.driver import limits as _limits
from ngcc.evidence.choices import CALLS_RULES, COUNTER_CHOICES, ORDERS, STATISTICS
from ngcc.evidence.figures import CONFIDENCE
from ngcc.library import katfile as _katfile
from ngcc.measure import plan as _plan
from ngcc.measure import waiting as _waiting

# The options of the command line are built from these settings, so this module loads
# only what their declarations state (no numpy, no code that runs libraries); what
# the methods use loads when they are called.
if TYPE_CHECKING:
    from ngcc.evidence.model import Job, Plan, PlanLibrary
    from ngcc.library.registry import Instance
    from ngcc.measure.job import JobExecutor, JobOrder


def default_run_dir() -> Path:
    """The run directory of a campaign or evaluation not given one: ``runs/<UTC start
    time>`` (the one default, for ``CampaignSettings``, the command line and
    ``ngcc.evaluate`` alike)."""
    return Path("runs") / run_id_now()


def _lengths(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(",") if part.strip())


LENGTHS = _schema.Kind(
    "positive whole numbers of bytes up to %d" % _limits.MAX_MESSAGE_BYTES,
    lambda v: isinstance(v, tuple) and bool(v) and all(
        _schema.is_whole(n) and 1 <= n <= _limits.MAX_MESSAGE_BYTES for n in v), _lengths)
WAIT = _schema.Kind("a finite number of seconds >= 0",
                    lambda v: _schema.is_number(v) and v >= 0, float)

_TIMEOUT_FACTS = {"factor": _limits.TRIAL_TIMEOUT_FACTOR, "slack": _limits.TRIAL_TIMEOUT_SLACK,
                  "kat_short": _limits.KAT_TIMEOUTS["2_12"],
                  "kat_long": _limits.KAT_TIMEOUTS["2_33"]}


@dataclass(frozen=True)
class CampaignSettings:
    """Every setting of a campaign, checked whenever it is made (:meth:`make` resolves
    the defaults, ``quick``'s among them)."""

    candidate: str | None = _schema.setting(
        None, kind=_schema.TEXT, flag="--candidate", metavar="ID",
        help="every built-in instance of this candidate (any id of `ngcc list "
             "--candidates`), or the id of the libraries named")
    all_instances: bool = _schema.setting(False, kind=_schema.FLAG, flag="--all",
                                          help="every built-in instance")
    labels: tuple[str | None, ...] = _schema.setting(
        (), kind=_schema.LABELS, flag="--label", metavar="NAME",
        help="the label of a library path in file names, tables and plots (repeatable, in "
             "the order of the library paths; default: the instance name, with @<folder> "
             "when two builds clash); the instance name still selects the KAT manifest line")
    lengths: tuple[int, ...] = _schema.setting(
        tuple(_plan.DEFAULT_LENGTHS), kind=LENGTHS, flag="--lengths", metavar="LIST",
        help="message lengths in bytes (default: the guide lengths {default})")
    trials: int = _schema.setting(
        _plan.DEFAULT_TRIALS, kind=_schema.POSITIVE_WHOLE, flag="--trials", metavar="N",
        quick=_plan.QUICK_TRIALS,
        help="trials per library x length (default {default}; {quick} with --quick)")
    trial_target: float = _schema.setting(
        _plan.DEFAULT_TRIAL_TARGET, kind=_schema.POSITIVE_SECONDS, flag="--trial-target",
        metavar="SECONDS", quick=_plan.QUICK_TRIAL_TARGET,
        help="seconds of calls per trial, T of the plan rule (default {default}; {quick} "
             "with --quick)")
    op_budget: float = _schema.setting(
        _plan.DEFAULT_OP_BUDGET, kind=_schema.POSITIVE_SECONDS, flag="--op-budget",
        metavar="SECONDS", quick=_plan.QUICK_OP_BUDGET,
        help="seconds for all trials of one library x length (default {default}; {quick} "
             "with --quick)")
    cpu: int | None = _schema.setting(
        None, kind=_schema.WHOLE, flag="--cpu", metavar="N",
        help="pin every trial to CPU N (default: the last CPU allowed that no other running "
             "ngcc campaign holds; a resumed run keeps its CPU); with --workers or "
             "--scheduler each worker pins to its own, and this is the CPU of the leak tests")
    run_dir: Path = _schema.setting(
        factory=default_run_dir, kind=_schema.PATH, flag="--run-dir", metavar="DIR",
        help="run directory (default: runs/<UTC start time>); an existing one with the same "
             "plan is resumed")
    quick: bool = _schema.setting(
        False, kind=_schema.FLAG, flag="--quick",
        help="a small plan for smoke tests: T = {quicks[trial_target]} s, "
             "{quicks[trials]} trials, {quicks[op_budget]} s budget")
    strict: bool = _schema.setting(
        False, kind=_schema.FLAG, flag="--strict", facts={"attempts": _plan.STRICT_ATTEMPTS},
        help="refuse to measure on an unfixed host (see `ngcc check`), and repeat a trial "
             "that was preempted, whose counter ran off its rate or whose process ran slow "
             "(at most {attempts} attempts; the record lists the rejected)")
    target_ci: float | None = _schema.setting(
        None, kind=_schema.POSITIVE_PERCENT, flag="--target-ci", metavar="PCT",
        facts={"confidence": round(100 * CONFIDENCE)},
        help="add trials until the {confidence}% CI of --statistic is within PCT % (up to "
             "--max-trials; a job that stops short of it is said in a warning and its "
             "record); with several libraries only the jobs not yet precise enough get "
             "extra rounds")
    max_trials: int = _schema.setting(
        _plan.DEFAULT_TRIALS, kind=_schema.POSITIVE_WHOLE, flag="--max-trials", metavar="N",
        facts={"cap": _plan.TARGET_CI_MAX_TRIALS},
        help="the cap on trials with --target-ci (default {cap}; else --trials)")
    allow_kat_fail: bool = _schema.setting(
        False, kind=_schema.FLAG, flag="--allow-kat-fail",
        help="time libraries whose KAT verdict is not PASS; their records are marked "
             "timed_without_pass and reports show a warning sign")
    kat_files: tuple[str, ...] = _schema.setting(
        tuple(_plan.KAT_FILES), kind=_schema.NAMES, flag="--kat-files", metavar="LIST",
        help="KAT files the gate checks (default: {default})")
    kat_timeout: float | None = _schema.setting(
        None, kind=_schema.POSITIVE_SECONDS, flag="--kat-timeout", metavar="SECONDS",
        facts=_TIMEOUT_FACTS,
        help="time allowed per KAT file before its verdict is TIMEOUT (default: {kat_short} "
             "s for 2_12 and 2_23, {kat_long} s for 2_33 and loop)")
    kat_manifest: str | os.PathLike[str] | None = _schema.setting(
        None, kind=_schema.PATH, flag="--manifest", metavar="FILE",
        help="a kat.sha256 manifest ngcc does not ship, checked instead of the candidate's "
             "(a line matches a KAT file by its name, whatever folder it names)")
    kat_official: str | os.PathLike[str] | None = _schema.setting(
        None, kind=_schema.PATH, flag="--official", metavar="DIR",
        help="your copy of the official KAT files (DIR/<candidate>/<folder>/KAT_*.txt, "
             "DIR/<folder>/KAT_*.txt or flat): the reference of a file no manifest line "
             "covers (PASS or MISMATCH with the first differing record), and where a "
             "MISMATCH names that record")
    trial_timeout: float | None = _schema.setting(
        None, kind=_schema.POSITIVE_SECONDS, flag="--trial-timeout", metavar="SECONDS",
        facts=_TIMEOUT_FACTS,
        help="kill a trial or calibration after this long (default: {factor} times its "
             "estimate from the cold call + {slack} s, at most --max-trial-timeout)")
    max_trial_timeout: float = _schema.setting(
        _limits.MAX_TRIAL_TIMEOUT, kind=_schema.POSITIVE_SECONDS, flag="--max-trial-timeout",
        metavar="SECONDS",
        help="the cap on a trial deadline derived from the cold call, which is the "
             "library's own, so a slow one cannot buy its trials a long deadline (default: "
             "{default}); --trial-timeout is not capped")
    statistic: str = _schema.setting(
        "mean", kind=_schema.TEXT, flag="--statistic", choices=STATISTICS,
        help="what --target-ci aims at: the mean (t interval of the trial means) or the "
             "per-call median (log-scale interval of the trial medians, robust to "
             "preemptions); default: {default}")
    calls_rule: str = _schema.setting(
        "harness", kind=_schema.TEXT, flag="--plan", choices=CALLS_RULES,
        help="calls per trial: the NGCC harness's rule from one cold call (comparable with "
             "its figures), or warm: calibrated with warm calls so that each trial holds "
             "about --trial-target seconds of timed loop; default: {default}")
    order: str | None = _schema.setting(
        None, kind=_schema.TEXT, flag="--order", choices=ORDERS,
        help="run trial k of every job before the next trial of any (interleaved: drift "
             "hits every library alike; the default with more than one library) or job "
             "after job (sequential; the default with --workers or --scheduler)")
    counter: str | None = _schema.setting(
        None, kind=_schema.TEXT, flag="--counter", choices=COUNTER_CHOICES,
        help="what times the calls: perf (core cycles of the thread in user mode, "
             "perf_event_open; RDPMC per call where the kernel allows it), tsc (the "
             "time-stamp counter: ticks, not core cycles), clock (clock_gettime, ns), or "
             "auto (perf where RDPMC is allowed, else tsc); default: tsc. Each trial "
             "records the counter it got")
    leak: int | None = _schema.setting(
        None, kind=_schema.WHOLE, flag="--leak",
        help="after the KAT gate, test every library it lets through for timing leakage "
             "(ngcc leak) at --leak-length bytes; evidence in RUN_DIR/leak/, a section in "
             "the report")
    leak_calls: int = _schema.setting(
        _plan.LEAK_CALLS, kind=_schema.WHOLE, flag="--leak-calls", metavar="N",
        help="the most calls of each leak test (default {default})")
    leak_seconds: float = _schema.setting(
        _plan.LEAK_SECONDS, kind=_schema.POSITIVE_SECONDS, flag="--leak-seconds",
        metavar="S", help="the most seconds of each leak test (default {default})")
    workers: int | None = _schema.setting(
        None, kind=_schema.POSITIVE_WHOLE, flag="--workers", metavar="N",
        help="measure whole jobs on a local Dask cluster of N worker processes, one per CPU "
             "(the last N allowed, their locks waited for as --wait says), each pinning its "
             "trials to its own CPU; the cluster speaks TLS with a key of this run's (pip "
             "install \"ngcc[distributed]\")")
    scheduler: str | None = _schema.setting(
        None, kind=_schema.TEXT, flag="--scheduler", metavar="tcp://HOST:PORT",
        help="measure whole jobs on the workers of this Dask scheduler, each started with "
             "--resources cpu=1 and NGCC_CPU=<its CPU> (README, Distributed campaigns); its "
             "security is yours: tls://HOST:PORT with your certificates in Dask's "
             "configuration. A worker refuses a CPU another measurement holds at once (the "
             "job's error): --wait is for this process's own CPU (--leak)")
    wait: float | None = _schema.setting(
        _waiting.DEFAULT_WAIT_SECONDS, kind=WAIT, flag="--wait", metavar="SECONDS",
        optional=True, facts={"at_once": 0},
        help="seconds to wait for the trial CPU (with --workers: every CPU of the local "
             "cluster) when another ngcc measurement holds it (default {default}; "
             "{at_once} or None: refuse at once)")
    command: tuple[str, ...] = _schema.setting(
        ("ngcc.Campaign(...)",), kind=_schema.NAMES,
        help="the command line recorded as provenance")

    def __post_init__(self) -> None:
        for name, value in self._normalised().items():
            object.__setattr__(self, name, value)
        for name in _schema.fields(type(self)):
            _schema.checked(type(self), name, getattr(self, name))
        self._check()

    def _normalised(self) -> dict[str, object]:
        """The fields given in another form than their own: a path as text, a list (or
        any iterable) for a tuple, numpy integers for lengths."""
        found: dict[str, object] = {}
        if isinstance(self.run_dir, str):
            found["run_dir"] = Path(self.run_dir)
        for name in ("lengths", "labels", "kat_files", "command"):
            value = getattr(self, name)
            if isinstance(value, Iterable) and not isinstance(value, (str, tuple)):
                found[name] = value = tuple(value)
            if name == "lengths" and isinstance(value, tuple):
                found[name] = tuple(int(n) if _schema.is_whole(n) else n for n in value)
        return found

    @classmethod
    def make(cls, *, quick: bool = False, **given: Any) -> CampaignSettings:
        """The settings with every default resolved: a setting not given, or given as
        None, takes its default (``quick``'s where ``quick``; ``wait=None`` is no wait,
        and ``max_trials`` defaults to ``trials``, or the cap with ``target_ci``).

        Raises:
            SettingError: a value out of range or not one of its choices (named).
            UnknownSettingError: a keyword that is no setting (the nearest named).
            ForeignRunDirError: ``run_dir`` is a symbolic link to nothing.
            DistributedError: ``workers``/``scheduler`` without Dask installed.
        """
        _schema.unknown(cls, given)
        for name, value in given.items():  # before a bad one is used to resolve another
            if name in ("trials", "max_trials", "target_ci") and value is not None:
                _schema.checked(cls, name, value)
        resolved = {name: _schema.default(cls, name, quick) for name in
                    ("trials", "trial_target", "op_budget")}
        resolved.update({name: value for name, value in given.items()
                         if value is not None or name == "wait"})
        if given.get("max_trials") is None:
            resolved["max_trials"] = max(resolved["trials"], _plan.TARGET_CI_MAX_TRIALS
                                         if given.get("target_ci") else 0)
        return cls(quick=quick, **resolved)

    @property
    def target_ci_percent(self) -> float | None:
        """``target_ci`` as the plan records it."""
        return None if self.target_ci is None else float(self.target_ci)

    def plan(self, libraries: tuple[PlanLibrary, ...], cpu: int) -> Plan:
        """The plan of these settings for ``libraries`` on ``cpu``, as the run directory
        records it (a resumed run must have the same)."""
        from ngcc.evidence.model import Plan

        return Plan(libraries=libraries, lengths=self.lengths, trials=self.trials,
                    trial_target_seconds=float(self.trial_target),
                    op_budget_seconds=float(self.op_budget), max_calls=_plan.MAX_CALLS,
                    min_calls=_plan.MIN_CALLS, cpu=cpu, quick=self.quick,
                    target_ci_percent=self.target_ci_percent, max_trials=self.max_trials,
                    kat_files=self.kat_files, kat_override=self.allow_kat_fail,
                    statistic=self.statistic, calls_rule=self.calls_rule)

    def job_order(self, job: Job, instance: Instance, library_sha256: str, key: str,
                  run_dir: Path, calibrated: bool) -> JobOrder:
        """``job`` as an executor takes it, under these settings (``calibrated``: with
        the calibration the campaign made and recorded in the job)."""
        from ngcc.measure.job import Calibration, JobOrder

        calibration = Calibration(job.t1_seconds or 0.0, job.warm_call_seconds,
                                  job.calls_per_trial or 1, job.warmup_calls or 0) \
            if calibrated else None
        return JobOrder(
            key=key, label=job.label, instance=instance, library_sha256=library_sha256,
            message_bytes=job.message_bytes, trials=self.trials, max_trials=self.max_trials,
            target_ci=self.target_ci, trial_target=float(self.trial_target),
            op_budget=float(self.op_budget), trial_timeout=self.trial_timeout,
            run_dir=str(run_dir.resolve()), calls_rule=self.calls_rule,
            statistic=self.statistic, attempts=_plan.STRICT_ATTEMPTS if self.strict else 1,
            calibration=calibration, max_trial_timeout=float(self.max_trial_timeout))

    def executor_name(self, executor: JobExecutor | None) -> str | None:
        """What measures whole jobs, as ``campaign.json`` records it (None: this
        process's own executor)."""
        if executor is not None:
            return executor.describe()
        if self.workers is not None:
            return "dask LocalCluster: %d workers" % self.workers
        return None if self.scheduler is None else "dask %s" % self.scheduler

    def trial_order(self, executor: JobExecutor | None, libraries: int) -> str:
        """The order of the trials: ``interleaved`` (round k runs trial k of every job
        before trial k + 1 of any; the default with more than one library) or
        ``sequential`` (job after job; whole jobs, each on one worker, with an executor)."""
        if self.order is not None:
            return self.order
        if (self.workers, self.scheduler, executor) != (None, None, None):
            return "sequential"
        return "interleaved" if libraries > 1 else "sequential"

    def _check(self) -> None:
        """The checks that join settings or ask this host (kind and choices are the
        schema's)."""
        from ngcc.measure import leak_measurement as _leak
        from ngcc.measure import locks as _locks

        if self.max_trials < self.trials:
            raise SettingError("max_trials", "max_trials (%r) is fewer than the %d trials "
                               "planned; raise it or lower trials" % (self.max_trials,
                                                                       self.trials))
        if self.order == "interleaved" and (self.workers, self.scheduler) != (None, None):
            raise SettingError("order", INTERLEAVED_WHOLE_JOBS)
        for name, check in (("cpu", lambda: self.cpu is None or _locks.check_cpu(self.cpu)),
                            ("wait", lambda: _locks.checked_wait(self.wait)),
                            ("kat_files", lambda: _katfile.normalise_files(self.kat_files)),
                            ("leak", lambda: _leak.checked_limits(  # its limits, always
                                _plan.LEAK_LENGTH if self.leak is None else self.leak,
                                self.leak_calls, self.leak_seconds, "leak_"))):
            try:
                check()
            except (ValueError, TypeError) as exc:  # a typo is refused before the run dir
                text = str(exc)  # the setting it names (leak_calls), else the one checked
                named = max((n for n in _schema.fields(type(self)) if text.startswith(n)),
                            key=len, default=None)
                raise SettingError(named or name, text if named else "%s: %s" % (
                    name, text)) from None
        if self.run_dir.is_symlink() and not self.run_dir.exists():
            raise ForeignRunDirError("%s is a symbolic link to %s, which does not exist; "
                                     "choose another --run-dir" % (self.run_dir,
                                                                   os.readlink(self.run_dir)))
        _check_distribution(self.workers, self.scheduler)


CampaignSettings.__doc__ = _schema.documented(CampaignSettings, """Every setting of a
campaign, checked whenever it is made, by :meth:`make` (which resolves the defaults,
``quick``'s among them) or directly (every field as given), and each setting's default,
quick default, choices, help and command-line flag written once, beside its field
(``campaign.schema``).""")


#: Why ``order="interleaved"`` cannot go with workers, a scheduler or an executor.
INTERLEAVED_WHOLE_JOBS = ("order='interleaved' is the trial loop of one process; with "
                          "workers, scheduler or executor every job is measured whole, its "
                          "trials in a row")


def _check_distribution(workers: int | None, scheduler: str | None) -> None:
    """``workers`` and ``scheduler``: at most one, a positive number of workers, a
    ``tcp://`` address, and Dask installed for either."""
    if workers is not None and scheduler is not None:
        raise ValueError("give at most one of workers, scheduler and executor")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError("workers must be a positive number of CPUs, got %r" % (workers,))
    if scheduler is not None and "://" not in scheduler:
        raise ValueError("scheduler must be a Dask scheduler address such as "
                         "tcp://HOST:8786, got %r" % scheduler)
    if workers is not None or scheduler is not None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise DistributedError(
                "%s needs Dask distributed, which is not installed in this Python (%s): "
                'pip install "ngcc[distributed]"' % (
                    "--workers" if workers is not None else "--scheduler", sys.executable)
            ) from None
