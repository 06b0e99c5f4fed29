"""A job's result as it comes back from an executor: the attempts lost with their
worker said and recorded, and why a result cannot be the job's record (a failed child,
or a result from another executor that breaks the plan: ``measure.job.result_defects``).
"""

from __future__ import annotations

import warnings

from ngcc.base.errors import ChildError, MeasurementWarning
from ngcc.evidence.model import Job, Resubmitted
from ngcc.measure.job import JobOrder, JobResult, result_defects

#: How far up a result's warnings point: past this module, the campaign's steps that
#: take a result, to the caller of ``Campaign.run``.
_STACKLEVEL = 6


def lost_attempts(job: Job, result: JobResult) -> list[Resubmitted]:
    """Each attempt at ``job`` that died with its worker, warned about, as
    ``campaign.json`` records it (``resubmitted``)."""
    for lost in result.lost:
        warnings.warn("%s at %d B: %s %s; its partial trials were discarded and the job "
                      "was measured again from the start" % (
                          job.label, job.message_bytes, lost.worker, lost.reason),
                      MeasurementWarning, stacklevel=_STACKLEVEL)
    return [Resubmitted(record=job.record, worker=lost.worker, reason=lost.reason)
            for lost in result.lost]


def refusal(job: Job, order: JobOrder, result: JobResult, checked: bool) -> ChildError | None:
    """Why ``result`` cannot be written as ``job``'s record (None: it can): its child
    failed, or (``checked``: it came from another executor than the campaign's own) it
    does not hold to the plan, which is warned about."""
    if result.status != "done":
        return ChildError(result.status, result.error or result.status)
    defects = result_defects(order, result) if checked else []
    if not defects and result.environment is not None:
        return None
    message = "the result from %s was refused: %s" % (result.worker, "; ".join(defects))
    warnings.warn("%s at %d B: %s" % (job.label, job.message_bytes, message),
                  MeasurementWarning, stacklevel=_STACKLEVEL)
    return ChildError("error", message)
