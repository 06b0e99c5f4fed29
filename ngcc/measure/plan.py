"""The plan of a campaign: which libraries, under which labels, and how many calls.

The calls per trial follow the independent NGCC harness's rule, so the figures are
comparable:

    calls  = min(20000, max(ceil(T / t1), 20))
    if trials · calls · t1 > budget:  calls = max(1, floor(budget / (trials · t1)))
    warm-up = 3 if t1 < 50 ms, 1 if t1 < 5 s, else 0

The warm plan (``--plan warm``) calibrates with a short trial of warm calls instead
(after the cold call, which sizes it) and plans enough calls for T seconds of timed
loop by the same rule with the median warm call for t1 and at most
:data:`WARM_MAX_CALLS` calls.

The libraries are resolved from names, paths and ``--candidate``/``--all``, each under
a label unique in the run (:func:`ngcc.library.registry.run_labels`); the resulting
:class:`~ngcc.evidence.model.Plan` is what a run directory must keep to be resumed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngcc.base.errors import NothingToMeasureError
from ngcc.library.registry import (
    Instance,
    check_candidate,
    external_instance,
    instance,
    instances,
    is_library_path,
    run_labels,
)

if TYPE_CHECKING:  # the model loads when a plan is compared: the command line's options
    from ngcc.evidence.model import Plan  # read this module's defaults without it

#: The eight message lengths of the NGCC guide (S1–S8), in bytes.
DEFAULT_LENGTHS = (32, 128, 512, 1024, 4096, 8192, 16384, 65536)
MAX_CALLS = 20000
MIN_CALLS = 20
DEFAULT_TRIALS = 5
DEFAULT_TRIAL_TARGET = 1.0     # seconds of calls per trial (T)
DEFAULT_OP_BUDGET = 900.0      # seconds for all trials of one instance × length
QUICK_TRIALS = 3
QUICK_TRIAL_TARGET = 0.02
QUICK_OP_BUDGET = 5.0
TARGET_CI_MAX_TRIALS = 20      # the cap on trials in --target-ci mode
#: The warm plan (``--plan warm``): at most this many calls per trial (8 MB of raw
#: ticks per trial), and its calibration trial times about this many seconds of calls.
WARM_MAX_CALLS = 1_000_000
WARM_CALIBRATION_SECONDS = 0.05
WARM_CALIBRATION_CALLS = (5, 20000)  # fewest and most calls of the calibration trial
KAT_FILES = ("2_12", "2_23")
#: With ``--strict``, a disturbed trial is run at most this many times in all.
STRICT_ATTEMPTS = 3
#: A leak test's message length, most calls and most seconds unless given (``ngcc leak``,
#: ``campaign --leak``), its longest message and the most calls it may be given (the
#: driver's leak mode's cap).
LEAK_LENGTH = 64
LEAK_CALLS = 1_000_000
LEAK_SECONDS = 60.0
LEAK_MAX_LENGTH = 1 << 20
LEAK_MAX_CALLS = 1 << 26


# ---------------------------------------------------------------- the plan rule

def calls_per_trial(t1: float, trial_target: float = DEFAULT_TRIAL_TARGET,
                    op_budget: float = DEFAULT_OP_BUDGET, trials: int = DEFAULT_TRIALS,
                    max_calls: int = MAX_CALLS, min_calls: int = MIN_CALLS) -> int:
    """Calls per trial for a cold-call time ``t1`` (seconds), by the harness's rule.

    Enough calls to fill ``trial_target`` seconds, at least ``min_calls`` and at most
    ``max_calls``; then, if all trials together would exceed ``op_budget``, as many as
    the budget allows (at least one).
    """
    if t1 <= 0:
        return max_calls
    calls = min(max_calls, max(math.ceil(trial_target / t1), min_calls))
    if trials * calls * t1 > op_budget:
        calls = max(1, math.floor(op_budget / (trials * t1)))
    return calls


def warm_calls_per_trial(call_seconds: float, trial_target: float = DEFAULT_TRIAL_TARGET,
                         op_budget: float = DEFAULT_OP_BUDGET, trials: int = DEFAULT_TRIALS,
                         max_calls: int = WARM_MAX_CALLS, min_calls: int = MIN_CALLS) -> int:
    """Calls per trial of the warm plan: enough warm calls of ``call_seconds`` each (the
    median call of a calibration trial) for ``trial_target`` seconds of timed loop, at
    least ``min_calls`` and at most ``max_calls``; then, as in the harness's rule, no
    more than ``op_budget`` allows for all trials (at least one)."""
    return calls_per_trial(call_seconds, trial_target, op_budget, trials, max_calls, min_calls)


def calibration_calls(t1: float) -> int:
    """Calls of the warm plan's calibration trial: about
    :data:`WARM_CALIBRATION_SECONDS` of calls at the cold call's ``t1`` (a cold call is
    slower than a warm one, so the trial tends to be shorter), within
    :data:`WARM_CALIBRATION_CALLS`."""
    fewest, most = WARM_CALIBRATION_CALLS
    return min(most, max(fewest, math.ceil(WARM_CALIBRATION_SECONDS / t1) if t1 > 0 else most))


def warmup_calls(t1: float) -> int:
    """Untimed warm-up calls before a trial: 3 if t1 < 50 ms, 1 if t1 < 5 s, else 0."""
    if t1 < 0.05:
        return 3
    return 1 if t1 < 5.0 else 0


def resolve_libraries(names: Sequence[str | os.PathLike[str] | Instance],
                       candidate: str | None, all_instances: bool,
                       labels: Sequence[str | None] = ()) -> tuple[list[Instance], list[str]]:
    """The libraries a campaign measures and their labels: with ``all_instances`` every
    built-in instance; with ``candidate`` the built-in instances of that candidate
    (unless library paths are named: ``candidate`` is then their id); then the named
    ones, ``labels[i]`` (if given) labelling ``names[i]``. A library named twice with
    the same label is measured once; different libraries are never merged: each gets
    its own label (:func:`ngcc.library.registry.run_labels`)."""
    if len(labels) > len(names):
        raise ValueError("%d labels given for %d libraries named; give at most one label "
                         "per library, in their order" % (len(labels), len(names)))
    chosen: list[tuple[Instance, str | None]] = []
    if candidate is not None:
        check_candidate(candidate, "--candidate")  # any id of the registry, else refused
    if all_instances:
        chosen.extend((i, None) for i in instances())
    elif candidate and not any(is_library_path(name) for name in names):
        chosen.extend((i, None) for i in instances() if i.candidate == candidate)
        if not chosen:
            raise NothingToMeasureError(
                "candidate %s has no built-in instance (those of %s have): name its "
                "libraries, built with `ngcc build`, with --candidate %s"
                % (candidate, ", ".join(sorted({i.candidate for i in instances()})), candidate))
    for index, name in enumerate(names):
        wanted = labels[index] if index < len(labels) else None
        if candidate and is_library_path(name):
            chosen.append((external_instance(Path(name), candidate), wanted))  # type: ignore[arg-type]
        else:
            chosen.append((instance(name), wanted))
    unique = list(dict.fromkeys(chosen))
    if not unique:
        raise NothingToMeasureError("no instance to measure: name instances, or use "
                                    "--candidate ID or --all (see `ngcc list`)")
    libraries = [inst for inst, _ in unique]
    return libraries, run_labels(libraries, [wanted for _, wanted in unique])


def plan_differences(stored: Plan, asked: Plan) -> list[str]:
    """``key: <stored> in the run, <asked> asked`` for every key of the plan that differs
    (a run directory is resumed only with the plan it was started with); where the same
    libraries (labels and sha256) differ in another field, each such field by label."""
    from ngcc.evidence.model import Plan, PlanLibrary

    def show(value: Any) -> str:
        if isinstance(value, tuple) and value and isinstance(value[0], PlanLibrary):
            return ", ".join("%s(%s)" % (v.label, v.library_sha256[:12]) for v in value)
        return repr(list(value) if isinstance(value, tuple) else value)

    def differs(name: str) -> str:
        before, after = getattr(stored, name), getattr(asked, name)
        if name == "libraries" and [(v.label, v.library_sha256) for v in before] == \
                [(v.label, v.library_sha256) for v in after]:
            return "; ".join("libraries: %s's %s %r in the run, %r asked" % (
                old.label, f.name, getattr(old, f.name), getattr(new, f.name))
                for old, new in zip(before, after, strict=True) for f in fields(PlanLibrary)
                if getattr(old, f.name) != getattr(new, f.name))
        return "%s: %s in the run, %s asked" % (name, show(before), show(after))
    return [differs(f.name) for f in fields(Plan)
            if getattr(stored, f.name) != getattr(asked, f.name)]
