"""The one form of a time that ngcc writes: UTC to the second, ``2026-09-25T10:02:21Z``
(records, ``campaign.json``, the build sidecar, KAT logs, leak evidence, lock files;
``evidence.model`` checks it on read), and its compact form in a new run directory's name."""

from __future__ import annotations

import datetime

#: The ``strftime`` form of every time ngcc writes.
UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
#: The same time without separators: the name of a run directory (``runs/<id>``).
RUN_ID_FORMAT = "%Y%m%dT%H%M%SZ"


def utc_now() -> str:
    """Now, as ngcc states times (``2026-09-25T10:02:21Z``)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime(UTC_FORMAT)


def run_id_now() -> str:
    """Now, as the run id of a new run directory (``20260925T100221Z``)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime(RUN_ID_FORMAT)
