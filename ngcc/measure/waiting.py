"""A wait for a CPU, as every entry point shows it: who holds the CPU, since when, when
it expects to end, how many wait before this one (``measure.locks`` waits, in the
order of ``measure.tickets``).

:func:`ngcc.measure.locks.hold_cpu` tells its ``on_wait`` a :class:`CpuWait` when the
wait begins, about once a second while it lasts, and once when it is over.
:class:`ShowWait` shows those on a :class:`~ngcc.base.progress.Progress`: a bar on a
terminal (how long it has waited, how long the holder expects to go on), else one
line each time the holder or the queue changes, and one when the CPU is taken. The
command line, ``ngcc.Campaign``, ``ngcc.evaluate``, ``ngcc.leak`` and ``--workers``
(each of its CPUs) all show it so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ngcc.base.clock import UTC_FORMAT
from ngcc.base.progress import Progress, Task, clock

if TYPE_CHECKING:
    from ngcc.measure.locks import Holder


@dataclass(frozen=True)
class CpuWait:
    """Where a wait for a CPU stands.

    Attributes:
        cpus: the CPUs it waits for (one of them: the first free one).
        holders: who holds each of them now (a CPU that is free, but promised to an
            earlier waiter, is not there).
        ahead: the waiters that came earlier and want one of those CPUs.
        waited: seconds waited so far.
        limit: the most seconds it waits (``wait``).
        purpose: what the CPU is for, when the caller says (``of --workers 2``).
        over: the wait has ended (the CPU taken, or the wait refused).
        taken: the CPU it took (None: not yet, or refused).
    """

    cpus: tuple[int, ...]
    holders: dict[int, Holder] = field(default_factory=dict)
    ahead: int = 0
    waited: float = 0.0
    limit: float = 0.0
    purpose: str = ""
    over: bool = False
    taken: int | None = None

    @property
    def what(self) -> str:
        """``CPU 3``, ``CPU 3 of --workers 2`` or ``a free CPU``."""
        name = "CPU %d" % self.cpus[0] if len(self.cpus) == 1 else "a free CPU"
        return "%s %s" % (name, self.purpose) if self.purpose else name

    def ends_in(self) -> float | None:
        """Seconds until the first holder expects to end, by its own estimate (None: no
        holder made one)."""
        left = [h.ends_in() for h in self.holders.values()]
        known = [s for s in left if s is not None]
        return min(known) if known else None

    def headline(self) -> str:
        """The wait without its running time: what a new line is printed for."""
        held = "; ".join("CPU %d is held by another ngcc measurement (%s)" % (cpu, h.describe())
                         for cpu, h in sorted(self.holders.items()))
        queued = ("%d waiting before this one" % self.ahead) if self.ahead else ""
        return "waiting up to %g s for %s: %s" % (
            self.limit, self.what, "; ".join(part for part in (held, queued) if part)
            or "it is free, for the waiter before this one")

    def __str__(self) -> str:
        return self.headline()


def expected_end(seconds_left: float) -> str:
    """The UTC time ``seconds_left`` from now, as a holder writes it into its lock."""
    moment = datetime.fromtimestamp(time.time() + max(0.0, seconds_left), timezone.utc)
    return moment.strftime(UTC_FORMAT)


def seconds_until(moment: str | None) -> float | None:
    """Seconds from now until a UTC time written by :func:`expected_end` (None: none or
    unreadable)."""
    if not moment:
        return None
    try:
        then = datetime.strptime(moment, UTC_FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return then.timestamp() - time.time()


#: How long every measurement waits for a CPU another ngcc measurement holds, unless
#: told otherwise: ``ngcc campaign``, ``evaluate`` and ``leak`` (``--wait SECONDS``),
#: ``ngcc.Campaign``, ``ngcc.evaluate`` and ``ngcc.leak`` (``wait=SECONDS``), local Dask
#: workers (``--workers``) alike; 0 refuses at once.
DEFAULT_WAIT_SECONDS = 3600.0
#: How often a waiting campaign looks whether the CPU is free.
POLL_SECONDS = 1.0
#: What a refusal says about waiting: the one rule, in both spellings.
HOW_TO_WAIT = ("to wait for it, give --wait SECONDS (command line) or wait=SECONDS "
               "(Python); both wait %g s by default, 0 refuses at once"
               % DEFAULT_WAIT_SECONDS)


def checked_wait(wait: object) -> float:
    """``wait`` in seconds (None: 0, refuse at once).

    Raises:
        ValueError: not a finite number of seconds >= 0.
    """
    if wait is None:
        return 0.0
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) \
            or not 0 <= wait < float("inf"):
        raise ValueError("wait must be a finite number of seconds >= 0 (0: refuse at once), "
                         "got %r" % (wait,))
    return float(wait)


def show_waiting() -> ShowWait:
    """What a measurement in Python does by default while it waits for a CPU: shows the
    wait as progress on stderr (:class:`~ngcc.measure.waiting.ShowWait`), as the
    command line does, so a notebook does not sit silent for up to an hour."""
    return ShowWait()


class ShowWait:
    """``on_wait`` that shows each wait on a :class:`~ngcc.base.progress.Progress`
    (default: a new ``auto`` one, on stderr, for each wait): a bar on a terminal, else
    a line when the wait begins, when its holder or queue changes, and when the CPU is
    taken."""

    def __init__(self, progress: Progress | None = None):
        self.given = progress
        self.progress: Progress | None = None
        self.task: Task | None = None
        self.shown = ""

    def __call__(self, wait: CpuWait) -> None:
        if self.progress is None:
            self.progress = self.given if self.given is not None else Progress()
        if wait.over:
            self._end(wait)
            return
        headline = wait.headline()
        if self.progress.bars:
            self._bar(wait, headline)
        elif headline != self.shown:
            self.progress.line("ngcc: " + headline)
        self.shown = headline

    def _bar(self, wait: CpuWait, headline: str) -> None:
        left = wait.ends_in()
        total = wait.waited + left if left is not None and left > 0 else wait.limit
        if self.task is None:
            self.task = self.progress.task("waiting for %s" % wait.what, total)  # type: ignore[union-attr]
        self.task.set_total(max(total, wait.waited))
        self.task.update_to(wait.waited)
        self.task.status(headline.partition(": ")[2])

    def _end(self, wait: CpuWait) -> None:
        if self.task is not None:
            self.task.close()
        if wait.taken is not None and self.shown and self.progress is not None:
            self.progress.line("ngcc: took CPU %d after waiting %s" % (wait.taken,
                                                                       clock(wait.waited)))
        self.task, self.shown = None, ""
        if self.given is None:
            self.progress = None
