"""The interface of whatever runs trials (whose one error is ``base.errors.ChildError``).

A campaign never starts processes itself: it asks a :class:`TrialRunner` for the
cold-call time of a job (the plan's t1) and for trials, and gets back the evidence
model's ``TrialMeasurement`` facts. The real runner executes each trial in a fresh
process pinned to one CPU; tests hand the campaign a fake runner, so plan, gate,
resume and ``--target-ci`` logic run in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the driver's modes import this module; they need neither at run time
    from ngcc.evidence.model import TrialMeasurement
    from ngcc.library.registry import Instance


@dataclass(frozen=True)
class StartProbe:
    """What a job costs beyond its calls on this host now, in wall seconds, measured by
    starting the driver as a campaign does: the reference hash run each job makes once,
    then each trial of one call, a fresh process as every trial is (the load of the
    moment included). A runner with a ``start_probe(cpu)`` method returns one; the plan's
    estimate then uses it instead of a constant. A runner may also have
    ``slow_probe(instance, message_bytes, calls, cpu, trials)``, each trial's CPU
    nanoseconds per call, which tells how many trial processes run in the host's slow
    speed state now (``campaign.conditions.slow_state``). ``overlap``: the wall seconds of
    each trial's start its calls run within (the real driver times its counter's
    frequency over at least 50 ms from before the calls to after them, sleeping where
    they end sooner), so a trial of fewer calls costs no more than its start."""

    reference: float
    trials: tuple[float, ...]
    overlap: float = 0.0


class TrialRunner(Protocol):
    """Runs the trials of a campaign; every failure is a ``ChildError``."""

    def cold_call(self, instance: Instance, message_bytes: int, cpu: int,
                  timeout: float) -> float:
        """Seconds of the first call of a freshly loaded library (the plan's t1)."""
        ...

    def trial(self, instance: Instance, message_bytes: int, calls: int, warmup: int,
              cpu: int, index: int, timeout: float) -> TrialMeasurement:
        """One trial: ``warmup`` untimed calls, then ``calls`` timed ones."""
        ...
