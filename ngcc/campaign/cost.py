"""What a campaign is about to measure, and how long it should take: the plan the command
line prints before any trial."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ngcc.base.errors import ChildError, NgccError
from ngcc.campaign import conditions as _conditions
from ngcc.campaign.conditions import (
    CHILD_STARTUP_SECONDS,
    CpuShare,
    SlowProbe,
    StartCost,
    slow_chance,
)
from ngcc.campaign.settings import CampaignSettings
from ngcc.driver.contract import TrialRunner
from ngcc.evidence.model import Job
from ngcc.library.registry import Instance, instance
from ngcc.measure.job import Calibration, replacement_budget
from ngcc.measure.plan import MAX_CALLS, calls_per_trial


def _duration(seconds: float) -> str:
    """``40 s``, ``3 min 10 s``, ``2 h 05 min``."""
    whole = round(seconds)
    if whole < 60:
        return "%.0f s" % seconds if seconds >= 1 else "%.1f s" % seconds
    if whole < 3600:
        return "%d min %02d s" % divmod(whole, 60)
    return "%d h %02d min" % divmod(whole // 60, 60)


#: What the plan's calls take without the warm plan (:func:`warm_call_estimates`).
COLD_WORDS = "cold call less what its library's first call pays"


def expected_replacements(trials: int, chance: float) -> float:
    """The trials a job of ``trials`` planned ones is expected to add in place of slow-state
    ones where each trial falls in the slow state with ``chance``
    (``conditions.slow_chance``): ``trials`` fast ones take ``trials / (1 - chance)``,
    within the replacement budget (``measure.job``)."""
    slow = min(0.95, max(0.0, chance))
    return min(float(replacement_budget(trials)), trials / (1.0 - slow) - trials)


@dataclass(frozen=True)
class CostEstimate:
    """What a campaign is about to measure, from its calibration (each job's cold
    call and plan), before it measures: the plan the command line prints.

    Attributes:
        jobs: jobs to measure (library × length).
        libraries, lengths: how many of each have a job to measure.
        trials: trials per job (the minimum with ``target_ci``).
        max_trials: the cap on trials with ``target_ci`` (None without).
        calls: timed calls of all planned trials (warm-up and the uninstrumented batch
            not counted).
        seconds: the estimated time of those trials and of the replacements expected,
            on a CPU of its own, each call a warm one estimated from the library's cold
            calls (:func:`warm_call_estimates`),
            the uninstrumented batch, the start of each trial process and each job's
            reference run and record (``start``) included.
        max_seconds: the estimate at ``max_trials`` (None without ``target_ci``).
        leak_seconds: the most time the leak tests may take (0 without ``leak``).
        kept: jobs already done in the run directory, kept.
        failed: jobs that failed their calibration or were refused by the KAT gate.
        calibration: what each job's time per call came from (:data:`COLD_WORDS`, or
            ``warm calls`` under ``calls_rule="warm"``).
        executor: what measures the jobs whole, when not this process
            (``--workers``/``--scheduler``): each job is then calibrated where it is
            measured, so ``calls`` and ``seconds`` count only jobs calibrated before.
        replacements: the trials a job may add in place of slow-speed-state ones
            (``measure.job.replacement_budget``), and ``replacement_seconds`` what all of
            them would take if every job used its budget.
        expected_replacements: the trials all jobs are expected to add in place of
            slow-state ones at the CPU share (:func:`expected_replacements`), counted in
            ``seconds``.
        start: what each trial costs beyond its calls (:class:`StartCost`), counted in
            ``seconds`` with each job's reference run.
        share: the CPU share the trials can expect on this host now (None: all of it);
            :attr:`wall_seconds` is ``seconds`` at that share.
        ct_libraries: the libraries ``ngcc evaluate``'s constant-time step analyses after
            the trials (``campaign.ct_step``; 0 in a campaign of its own, with
            ``--no-ct``, or when each library's analysis is kept), and ``ct_seconds``
            about how long that takes.
    """

    jobs: int
    libraries: int
    lengths: int
    trials: int
    max_trials: int | None
    calls: int
    seconds: float
    max_seconds: float | None
    leak_seconds: float
    kept: int
    failed: int
    calibration: str = "cold call"
    executor: str | None = None
    replacements: int = 0
    replacement_seconds: float = 0.0
    ct_libraries: int = 0
    ct_seconds: float = 0.0
    share: CpuShare | None = None
    expected_replacements: float = 0.0
    start: StartCost = StartCost()

    @property
    def wall_seconds(self) -> float:
        """The trials' estimated wall time at the CPU share of this host now."""
        return self.seconds / self._share

    @property
    def _share(self) -> float:
        return self.share.share if self.share is not None else 1.0

    def _share_words(self) -> str:
        """What the figure assumes: ``, about 27 trials in place of slow-state ones
        expected, each trial's start 0.075 s as measured now (…), at this host's CPU share
        0.50 (load 2.00 on 2 CPUs) now; 20 s if its CPU were the campaign's alone``."""
        words = ", %s" % self.start
        if self.expected_replacements >= 0.5:
            words = ", about %d trials in place of slow-state ones expected (%s)%s" % (
                round(self.expected_replacements), self.start.slow_words(), words)
        if self._share >= 1.0 or self.share is None:
            return words
        return words + ", at this host's %s now; %s if its CPU were the campaign's alone" % (
            self.share, _duration(self.seconds))

    def __str__(self) -> str:
        trials = ("%d-%d trials each (--target-ci)" % (self.trials, self.max_trials)
                  if self.max_trials else "%d trial(s) each" % self.trials)
        seconds = ("%s (%d trials each) to %s (%d each, if no job reaches --target-ci "
                   "sooner)" % (_duration(self.wall_seconds), self.trials,
                                _duration(self.max_seconds / self._share),
                                self.max_trials or 0)
                   if self.max_seconds else _duration(self.wall_seconds))
        text = ("plan: %d job(s) to measure (%d librar%s × %d length(s)), %s, %d timed "
                "calls: about %s of trials (estimated from each job's %s%s)"
                % (self.jobs, self.libraries, "y" if self.libraries == 1 else "ies",
                   self.lengths, trials, self.calls, seconds, self.calibration,
                   self._share_words())) \
            if self.jobs else \
            "plan: nothing to measure"
        if self.executor and self.jobs:  # the workers calibrate: no time estimate here
            text = ("plan: %d job(s) to measure (%d librar%s × %d length(s)), %s, whole "
                    "jobs on %s (each calibrated and timed where it is measured)"
                    % (self.jobs, self.libraries, "y" if self.libraries == 1 else "ies",
                       self.lengths, trials, self.executor))
        if self.replacements and self.jobs and not self.executor:
            text += ("; up to %d more trial(s) per job in place of trials a slow speed "
                     "state of the host took (at most %s more)" % (
                         self.replacements,
                         _duration(self.replacement_seconds / self._share)))
        if self.leak_seconds:
            text += ", and at most %s of leak tests" % _duration(self.leak_seconds)
        if self.kept:
            text += "; %d job(s) done earlier are kept" % self.kept
        if self.failed:
            text += "; %d job(s) failed or refused" % self.failed
        if self.ct_libraries:
            text += "; then constant time (ngcc ct) of %d librar%s: about %s (%s a library)" % (
                self.ct_libraries, "y" if self.ct_libraries == 1 else "ies",
                _duration(self.ct_seconds), _duration(self.ct_seconds / self.ct_libraries))
        return text


def trial_cost(job: Job, start: float = CHILD_STARTUP_SECONDS, call: float | None = None,
               overlap: float = 0.0) -> float:
    """A trial's estimated seconds on a CPU of its own: the process start (``start``),
    then what the warm-up, the timed calls and the uninstrumented batch of as many calls
    take beyond the ``overlap`` of the start they run within (``StartCost.overlap``),
    each call taking the warm call with the warm plan, else ``call``
    (:func:`warm_call_estimates`), else t1."""
    calls = job.calls_per_trial or 0
    each = job.warm_call_seconds or (call if call is not None else job.t1_seconds or 0.0)
    return _started(start, (2 * calls + (job.warmup_calls or 0)) * each, overlap)


def _started(start: float, calls: float, overlap: float) -> float:
    """A trial's seconds: its ``start`` and what its ``calls`` take beyond the
    ``overlap`` of the start they run within."""
    return start + max(0.0, calls - overlap)


def warm_call_estimates(jobs: Sequence[Job]) -> dict[tuple[str, int], float]:
    """Each calibrated job's warm call, estimated from its library's cold calls: a cold
    call pays, at every length, what loading the code and tables into the caches costs
    (the intercept of the line through the library's (message bytes, t1), fitted by
    medians, Theil-Sen, so one cold call slowed by another task moves it little; within
    0 and 0.95 of the least t1), and a long one may be slowed by another task: the
    estimate is t1 less the intercept or the line's cost per byte times the length,
    whichever is less (t1 where the library has one length calibrated)."""
    points: dict[str, list[tuple[int, float]]] = {}
    for job in jobs:
        if job.t1_seconds is not None:
            points.setdefault(job.label, []).append((job.message_bytes, job.t1_seconds))
    warm = {}
    for label, pairs in points.items():
        slopes = [(y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(pairs)
                  for x2, y2 in pairs[i + 1:] if x2 != x1]
        slope = max(0.0, statistics.median(slopes)) if slopes else 0.0
        first = min(max(0.0, statistics.median(y - slope * x for x, y in pairs)),
                    0.95 * min(y for _, y in pairs)) if slopes else 0.0
        for n, t1 in pairs:
            warm[label, n] = min(t1 - first, slope * n) if slope > 0 else t1 - first
    return warm


def estimate(jobs: Sequence[Job], settings: CampaignSettings, leak_tests: int,
             executor: str | None, share: CpuShare | None = None,
             start: StartCost = StartCost()) -> CostEstimate:
    """The cost of the pending ``jobs``, from their calibration (jobs not yet calibrated
    count no time) and ``start`` (``conditions.start_cost``), with the replacements each
    library is expected to make (``conditions.slow_chance``: its slow-state probe in
    ``start``, else the rule of the load at ``share``), at ``share`` (default: the one
    measured with ``start``, else this host's from its load, the campaign's own
    calibration aside), and of ``leak_tests`` leak tests; ``executor`` measures them
    whole."""
    s, todo = settings, [job for job in jobs if job.status == "pending"]
    target = s.target_ci is not None and s.max_trials > s.trials
    if share is None and executor is None:  # measured with the start, else from the load
        share = start.share if start.share is not None else _conditions.host_share(own=1.0)
    extra = {label: expected_replacements(s.trials, slow_chance(start, label, share))
             for label in {job.label for job in todo}}
    warm = warm_call_estimates(jobs)

    def cost(job: Job, trials: float) -> float:  # its trials, its reference run and record
        call = warm.get((job.label, job.message_bytes))
        return trials * trial_cost(job, start.trial, call, start.overlap) + start.job
    return CostEstimate(
        jobs=len(todo), libraries=len({job.label for job in todo}),
        lengths=len({job.message_bytes for job in todo}), trials=s.trials,
        max_trials=s.max_trials if target else None,
        calls=sum(job.trials_planned * (job.calls_per_trial or 0) for job in todo),
        seconds=sum(cost(job, job.trials_planned + extra[job.label]) for job in todo),
        max_seconds=sum(cost(job, s.max_trials) for job in todo) if target else None,
        leak_seconds=s.leak_seconds * leak_tests,
        kept=sum(job.status == "done" for job in jobs),
        failed=sum(job.status not in ("done", "pending") for job in jobs),
        calibration="warm calls" if s.calls_rule == "warm" else COLD_WORDS, executor=executor,
        replacements=replacement_budget(s.trials),
        replacement_seconds=sum(cost(job, replacement_budget(s.trials)) - start.job
                                for job in todo),
        share=share, expected_replacements=sum(extra[job.label] for job in todo),
        start=start)


#: The length whose job a library's slow-state probe times (``conditions.SlowProbe``),
#: or the nearest one calibrated.
SLOW_PROBE_BYTES = 1024
#: A library whose planned trials take less (seconds, on a CPU of its own) is not probed
#: for the slow state: the probe (four trial processes, about 0.35 s here) would cost a
#: third of what the replacements it sizes could; the load's rule stands for it.
SLOW_PROBE_WORTH_SECONDS = 1.0


def slow_probes(jobs: Sequence[Job], instances: Mapping[str, Instance]
                ) -> dict[str, SlowProbe]:
    """What to probe for the slow speed state before the plan: each library (label) with
    calibrated jobs pending whose planned trials take at least
    :data:`SLOW_PROBE_WORTH_SECONDS`, at its job's length nearest :data:`SLOW_PROBE_BYTES`."""
    nearest: dict[str, Job] = {}
    seconds: dict[str, float] = {}
    for job in jobs:
        if job.status == "pending" and job.t1_seconds is not None and job.label in instances:
            seconds[job.label] = seconds.get(job.label, 0.0) + \
                job.trials_planned * trial_cost(job)
            best = nearest.get(job.label)
            if best is None or abs(job.message_bytes - SLOW_PROBE_BYTES) < \
                    abs(best.message_bytes - SLOW_PROBE_BYTES):
                nearest[job.label] = job
    return {label: SlowProbe(instances[label], job.message_bytes,
                             job.warm_call_seconds or job.t1_seconds or 0.0)
            for label, job in nearest.items() if seconds[label] >= SLOW_PROBE_WORTH_SECONDS}


#: The built-in instance, and the lengths, whose calls stand for those of libraries not
#: built yet (``evaluate --dry-run``): a line through its least call at each.
REFERENCE_INSTANCE = "SM3"
REFERENCE_LENGTHS = (32, 65536)


@dataclass(frozen=True)
class ReferenceCalls:
    """The seconds of one call of the built-in :data:`REFERENCE_INSTANCE` on this CPU now,
    at any length: a line through its least warm call at each of
    :data:`REFERENCE_LENGTHS` (SM3's work grows with its 64-byte blocks); and what its
    first call in a fresh process pays more, which the plan's rule counts in the cold
    call that sets a trial's calls."""

    at_shortest: float
    at_longest: float
    first_call: float = 0.0

    def __call__(self, message_bytes: int) -> float:
        (short, long), (low, high) = REFERENCE_LENGTHS, (self.at_shortest, self.at_longest)
        return max(low, low + (high - low) * (message_bytes - short) / (long - short))

    def __str__(self) -> str:
        return ("each call as long as the built-in %s's here now (%.2f µs at %d B, %.0f µs "
                "at %d KiB, its first call %.0f µs more; a submission's own speed is "
                "unknown before its build)" % (
                    REFERENCE_INSTANCE, self.at_shortest * 1e6, REFERENCE_LENGTHS[0],
                    self.at_longest * 1e6, REFERENCE_LENGTHS[1] // 1024,
                    self.first_call * 1e6))


def _on_line(points: Sequence[tuple[int, float]], message_bytes: int) -> float:
    """The value at ``message_bytes`` on the broken line through ``points`` (at least two,
    sorted by length): straight between the two around it, along the end segment beyond."""
    i = min(max(1, sum(n <= message_bytes for n, _ in points)), len(points) - 1)
    (n0, y0), (n1, y1) = points[i - 1], points[i]
    return max(0.0, y0 + (y1 - y0) * (message_bytes - n0) / (n1 - n0))


@dataclass(frozen=True)
class PublishedCalls:
    """A library's calls as long as the harness published its instance's, at this host's
    rate now: the instance's published mean cycles per call (``published``, at a few
    lengths, a line between them) times what the built-in :data:`REFERENCE_INSTANCE`'s
    call takes here (``reference``) per cycle the harness published for its ICCS helper
    sm3hash-256 at the same length (``reference_published``)."""

    instance: str
    published: tuple[tuple[int, float], ...]
    reference_published: tuple[tuple[int, float], ...]
    reference: ReferenceCalls

    def __call__(self, message_bytes: int) -> float:
        return (_on_line(self.published, message_bytes) * self.reference(message_bytes)
                / _on_line(self.reference_published, message_bytes))


def reference_calls(runner: TrialRunner | None = None, cpu: int = 0,
                    batches: int = 3) -> ReferenceCalls | None:
    """:class:`ReferenceCalls` timed in this process (the built-in library, about 20 ms:
    the least of ``batches`` batches at each length) and, where a ``runner`` is given, its
    cold call at the shortest length in a fresh process on ``cpu``; None where the
    calls cannot be timed (no first call's cost where the runner fails)."""
    from ngcc.driver.child import COLD_TIMEOUT
    from ngcc.driver.timing import time_calls_in_process

    try:
        sm3 = instance(REFERENCE_INSTANCE)
        least = [min(time_calls_in_process(sm3, length, calls, warmup=1).total_seconds
                     / calls for _ in range(batches))
                 for length, calls in zip(REFERENCE_LENGTHS, (200, 20), strict=True)]
    except (NgccError, OSError):
        return None
    calls = ReferenceCalls(*least)
    if runner is None:
        return calls
    try:
        cold = runner.cold_call(sm3, REFERENCE_LENGTHS[0], cpu, COLD_TIMEOUT)
    except ChildError:
        return calls
    return replace(calls, first_call=max(0.0, cold - calls.at_shortest))


def reference_probe(calls: ReferenceCalls | None) -> dict[str, SlowProbe]:
    """The slow-state probe of the built-in :data:`REFERENCE_INSTANCE`, whose calls stand
    for those of libraries not built yet (none where its calls could not be timed)."""
    if calls is None:
        return {}
    return {REFERENCE_INSTANCE: SlowProbe(instance(REFERENCE_INSTANCE), SLOW_PROBE_BYTES,
                                          calls(SLOW_PROBE_BYTES))}


def plan_only(libraries: Sequence[Callable[[int], float] | None], settings: CampaignSettings,
              start: StartCost, share: CpuShare, calls: ReferenceCalls | None = None,
              published: str = "") -> str:
    """The trials' time of ``libraries`` not built yet (``evaluate --dry-run``), from the
    plan alone, with what it assumes: each job's planned trials, each trial's calls as
    many as the plan's rule gives for calls as long as its library's own entry says (a
    :class:`PublishedCalls`, the figures of ``published``), else as ``calls`` says (None:
    calls that fill the plan's target T, at most the budget's share), its uninstrumented
    batch as many; ``start`` and each job's reference run. A library's speed state is as
    unknown as its speed before its build: the time with the trials expected in place of
    slow-state ones where each library's fall into it as the built-in
    :data:`REFERENCE_INSTANCE`'s do now (``conditions.slow_chance``, probed in ``start``
    by :func:`reference_probe`, else at ``share``) is the upper figure."""
    s = settings
    target = min(float(s.trial_target), float(s.op_budget) / s.trials)

    def work(length: int, own: Callable[[int], float] | None) -> float:  # a trial's calls
        timing = own or calls
        if timing is None:
            return 2 * target
        call = timing(length)  # the plan's rule counts the cold call, the trial the warm
        first = calls.first_call if calls is not None else 0.0
        return 2 * call * calls_per_trial(call + first, s.trial_target, s.op_budget, s.trials)

    def alone(extra: float) -> float:  # on a CPU of its own
        return sum((s.trials + extra) * _started(start.trial, work(n, own), start.overlap)
                   + start.job for own in libraries for n in s.lengths)

    count, known = len(libraries), sum(own is not None for own in libraries)
    extra = expected_replacements(s.trials, slow_chance(start, REFERENCE_INSTANCE, share))
    per_call = (str(calls) + ", as many as the plan's rule gives (T = %g s, at most %d)"
                % (target, MAX_CALLS) if calls is not None else
                "each trial's calls take T = %g s, high where %d calls take less"
                % (target, MAX_CALLS))
    if known:
        per_call = ("each call of %d librar%s as long as its instance's published %s "
                    "figure, at this host's rate of the built-in %s against the published "
                    "sm3hash-256; otherwise %s" % (known, "y" if known == 1 else "ies",
                                                   published, REFERENCE_INSTANCE, per_call))
    return ("the trials: about %s (%d librar%s × %d length(s) × %d trial(s), if each builds "
            "and is timed), up to %s if they fall into the host's slow speed state as often "
            "as the built-in %s's (%s: about %d more trials), from the plan alone since "
            "nothing is calibrated before a build: %s, %s, at this host's %s now; %s if its "
            "CPU were the campaign's alone; the plan line before the trials estimates it "
            "again from each job's calibration and slow-state probe" % (
                _duration(alone(0.0) / share.share), count,
                "y" if count == 1 else "ies", len(s.lengths), s.trials,
                _duration(alone(extra) / share.share), REFERENCE_INSTANCE, start.slow_words(),
                round(extra * count * len(s.lengths)), per_call, start, share,
                _duration(alone(0.0))))


def planned_job(job: Job, calibration: Calibration, trials: int) -> Job:
    """The job with its calibration, its plan and the plan's estimated seconds."""
    c = calibration
    return replace(job, t1_seconds=c.t1_seconds, warm_call_seconds=c.warm_call_seconds,
                   calls_per_trial=c.calls_per_trial, warmup_calls=c.warmup_calls,
                   estimated_seconds=trials * (c.calls_per_trial + c.warmup_calls)
                   * (c.warm_call_seconds or c.t1_seconds))
