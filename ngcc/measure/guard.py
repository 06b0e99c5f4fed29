"""What a job's trials are held to, on every executor: a trial's deadline and its cap
(:func:`trial_deadline`, :class:`Deadline`), and the library file held to the plan's
sha256 before and after each trial (:func:`check_library`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ngcc.base.errors import ChildError, LibraryChangedError
from ngcc.base.files import sha256_file
from ngcc.driver import child as _child
from ngcc.library.registry import Instance

if TYPE_CHECKING:
    from ngcc.measure.job import JobOrder


@dataclass(frozen=True)
class Deadline:
    """Seconds a trial's child may take, and whether the cap set them.

    Attributes:
        seconds: the deadline.
        estimate: the deadline the cold call alone would have allowed, when the cap
            (``JobOrder.max_trial_timeout``) cut it down to ``seconds``; else None.
    """

    seconds: float
    estimate: float | None = None

    def explained(self, error: ChildError) -> ChildError | None:
        """A trial's timeout at a capped deadline, said so with how to allow more (None:
        ``error`` needs nothing added)."""
        if error.status != "timeout" or self.estimate is None:
            return None
        return ChildError("timeout", "%s; its deadline was the cap of %g s on a deadline "
                          "from the cold call (which alone would have allowed %.0f s): if "
                          "the library is this slow, allow it more with --trial-timeout "
                          "SECONDS or --max-trial-timeout SECONDS (trial_timeout= or "
                          "max_trial_timeout= in Python)" % (error.message, self.seconds,
                                                             self.estimate))


def trial_deadline(order: JobOrder, t1: float, calls: int, warmup: int) -> Deadline:
    """The deadline of a trial of ``calls`` calls after ``warmup``: ``order.trial_timeout``
    when given, else :func:`ngcc.driver.child.uncapped_trial_timeout` of the cold call
    ``t1``, at most ``order.max_trial_timeout`` (the cold call is the library's own: a
    slow one must not buy its trials a long deadline)."""
    if order.trial_timeout:
        return Deadline(order.trial_timeout)
    estimate = _child.uncapped_trial_timeout(t1, calls, warmup)
    if estimate <= order.max_trial_timeout:
        return Deadline(estimate)
    return Deadline(order.max_trial_timeout, estimate)


def check_library(order: JobOrder, instance: Instance, before: str) -> None:
    """Refuse to run (or to keep what ran) unless ``instance``'s library file still has
    the sha256 the plan names (``order.library_sha256``): a file renamed over it or
    rewritten since the KAT gate must not be timed under the gated library's name.
    Hashing a library is cheap next to a trial, so it is hashed every time.

    Raises:
        LibraryChangedError: the file's sha256 differs, or it cannot be read (the
            message names the file, ``before`` and both digests).
    """
    path = instance.library
    try:
        actual = sha256_file(path)
    except OSError as exc:
        actual = "unreadable (%s)" % (exc.strerror or exc)
    if actual == order.library_sha256:
        return
    raise LibraryChangedError(
        "the library file %s of %s changed %s: its sha256 is %s, not the plan's %s; the "
        "job keeps nothing timed from the changed file: restore the file the plan names "
        "(or rebuild it and start a new --run-dir)" % (
            path, order.label, before, _short(actual), _short(order.library_sha256)))


def _short(digest: str) -> str:
    """The first 16 hex digits of a sha256 (a message's), the whole of anything else."""
    return digest[:16] + "…" if len(digest) == 64 else digest
