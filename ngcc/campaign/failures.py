"""When a campaign stops early: its first failures all alike, and nothing succeeded."""

from __future__ import annotations

from ngcc.base.errors import CampaignFailedError, ChildError

#: A campaign stops when its first this many failures share one cause and nothing
#: succeeded yet: the rest would most likely fail the same way.
STOP_AFTER_FAILURES = 3


def failure_cause(error: ChildError) -> str:
    """``crash: SIGSEGV``: a failure without the job's name, so that the failures of
    several jobs can be told alike (the driver's own words where it gave them)."""
    return "%s: %s" % (error.status, getattr(error, "detail", "") or error.message)


class FailureWatch:
    """Stops a campaign whose first failures all share one cause, before it works
    through every job to fail the same way (a library that cannot start, a broken
    driver): :data:`STOP_AFTER_FAILURES` consecutive failures alike and no job done."""

    def __init__(self) -> None:
        self.succeeded = False
        self.causes: list[str] = []

    def success(self, done: bool = True) -> None:
        """A child delivered: a job ``done``, or only its calibration (which breaks a
        run of failures, but a library may still fail every trial)."""
        self.succeeded = self.succeeded or done
        self.causes = []

    def failure(self, error: ChildError, pending: int) -> None:
        """Count one failure; raise when the campaign should stop.

        Raises:
            CampaignFailedError: the last failures share one cause, nothing succeeded.
        """
        cause = failure_cause(error)
        self.causes = [*self.causes, cause] if self.causes[-1:] == [cause] else [cause]
        if self.succeeded or len(self.causes) < STOP_AFTER_FAILURES:
            return
        raise CampaignFailedError(
            "the first %d jobs tried all failed with the same cause and none succeeded, so "
            "the campaign stopped (%d job(s) not measured): %s; fix that and run the same "
            "command again to resume" % (len(self.causes), pending, cause),
            cause, len(self.causes), pending)
