"""The exceptions ngcc raises. Every one derives from :class:`NgccError`."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass


class NgccError(Exception):
    """Base class of every error ngcc raises on purpose."""


class UsageError(NgccError):
    """A command line that asks for nothing, for a value out of range, for a name that does
    not exist or for two options that exclude each other: ``ngcc`` says what in one line
    ``ngcc: error: ...`` and exits with status 2 (a failure of the work itself keeps its
    own status)."""


class ChildError(NgccError):
    """A child process that did not deliver: ``status`` is ``crash``, ``timeout``,
    ``error`` or ``protocol``; the message names instance, length, phase and trial.

    Part of the ``TrialRunner`` contract (``driver.contract``): a runner raises nothing else for a
    trial that failed."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class LibraryChangedError(ChildError):
    """A library file whose sha256 is no longer the plan's when a trial is to run it (or
    once it has run): renamed over or rewritten since the KAT gate. The job fails with
    status ``error`` and keeps nothing timed from the changed file; the message names
    the file and both digests."""

    def __init__(self, message: str):
        super().__init__("error", message)


class UnknownInstanceError(NgccError, LookupError):
    """An instance name that is neither built in nor a library path."""

    def __init__(self, name: str, close_matches: list[str]):
        self.name = name
        self.close_matches = close_matches
        hint = (" Did you mean: %s?" % ", ".join(close_matches)) if close_matches else ""
        super().__init__("unknown instance %r.%s Run `ngcc list` to see every instance."
                         % (name, hint))

    def __str__(self) -> str:  # LookupError would otherwise repr() the message
        return self.args[0]


class LibraryNotFoundError(UnknownInstanceError):
    """A library path (``built/X.so``) where there is no file."""

    def __init__(self, path: str):
        self.name, self.close_matches = path, []
        NgccError.__init__(self, "no such file: %s (a library path names an instance "
                                 "library built with `ngcc build`)" % path)


class LibraryError(NgccError, OSError):
    """An instance library that cannot be loaded or lacks ``CryptHash``."""


class HashError(NgccError, RuntimeError):
    """``CryptHash`` returned nonzero (the message names instance and call)."""


class InvalidNameError(NgccError, ValueError):
    """A name (instance, label, candidate id) that breaks the name rule of ``base.names``,
    or a path built from names that would leave its directory."""


@dataclass(frozen=True)
class BuildFix:
    """A change of the build options that the build's own diagnosis is certain would
    remove one cause of a failed build (``ngcc evaluate`` applies it and says so).

    Attributes:
        option: ``"extra_cflags"`` (a flag added) or ``"define"`` (a macro defined).
        value: the flag (``-maes``) or the define (``WCHAIN_NO_MAIN``).
        reason: why, with the file and line (``_mm_aesenc_si128 at aes.c:12``).
    """

    option: str
    value: str
    reason: str

    def __str__(self) -> str:
        flag = ("--extra-cflags=%s" if self.option == "extra_cflags" else "--define %s")
        return "%s (%s)" % (flag % self.value, self.reason)


class BuildError(NgccError):
    """``ngcc build`` could not make an instance library from a source folder.

    ``fixes``: the option changes the diagnosis is certain of (a missing ``-m`` flag,
    the define that leaves out a guarded ``main``); empty when it knows of none."""

    def __init__(self, message: str, fixes: tuple[BuildFix, ...] = ()):
        super().__init__(message)
        self.fixes = fixes


class NothingToMeasureError(NgccError, ValueError):
    """A campaign whose instances, ``candidate`` and ``all_instances`` select no library
    (a candidate without a built-in instance, nothing named)."""


class SandboxUnavailableError(NgccError):
    """The kernel refused the isolation submitted code runs in (``base.sandbox``); the
    message names what failed and the remedy, ``--no-sandbox`` among them."""


class InstanceCrashError(NgccError):
    """An instance library killed the child process it ran in (signal or abort)."""


class InstanceProtocolError(InstanceCrashError):
    """The child process a foreign library ran in answered with something the request
    cannot produce (the library wrote to, or forged frames on, the result channel)."""


class InstanceTimeoutError(NgccError, TimeoutError):
    """An instance library did not return within the time allowed."""


# --- campaigns and evidence (campaign/campaign.py, evidence/records.py, measure/host.py) ---


class RunDirError(NgccError):
    """A run directory that a campaign cannot use; the message says what to do."""


class ForeignRunDirError(RunDirError):
    """A non-empty directory that is not an ngcc run directory (no ``campaign.json``)."""


class PlanMismatchError(RunDirError):
    """A run directory started with another plan than the one asked for now."""


class RunDirBusyError(RunDirError):
    """Another running ngcc campaign holds the run directory; the message names its pid."""


class CpuBusyError(NgccError):
    """The trial CPU asked for (or every allowed CPU) is held by another running ngcc
    campaign (still, after the wait asked for); the message names the holder's pid and
    run directory, and how to wait (``--wait SECONDS``, ``wait=SECONDS``)."""


class CorruptRecordError(RunDirError):
    """An evidence file that is unreadable, of unknown schema, incomplete or tampered."""

    RECORD_REMEDY = "Delete it to measure that job again (or start a new --run-dir)."

    def __init__(self, path: object, defect: str, remedy: str = RECORD_REMEDY):
        self.path = path
        self.defect = defect
        super().__init__("corrupt evidence file %s: %s. %s" % (path, defect, remedy))


class HostError(NgccError):
    """Under ``--strict``: the host is not fixed for measurement (governor, turbo, …)."""


class KatGateError(NgccError):
    """Every instance asked for was refused by the KAT gate; nothing would be timed."""


class CampaignFailedError(NgccError):
    """A campaign stopped early: its first jobs all failed with one cause and none
    succeeded, so the rest would most likely fail the same way.

    Attributes:
        cause: the common cause (``crash: library setup failed``).
        failed: how many jobs failed with it before the campaign stopped.
        pending: how many jobs were left unmeasured (a rerun resumes them).
    """

    def __init__(self, message: str, cause: str, failed: int, pending: int):
        super().__init__(message)
        self.cause, self.failed, self.pending = cause, failed, pending


# --- KAT generation (ngcc.kat) -------------------------------------------------


class KatError(NgccError):
    """The KAT generator or check could not run (not a verdict on the instance)."""


class KatMemoryError(KatError, MemoryError):
    """The message buffer of a KAT file (1 GiB for KAT_2_33) could not be allocated."""


class MeasurementWarning(UserWarning):
    """A host or a trial that makes figures less trustworthy (not fixed, disturbed)."""


class TrialFlagWarning(MeasurementWarning):
    """The flagged trials of one job of one kind (``code``: ``preempted``,
    ``slow_trial`` …), so that a reader can group them across a run."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


#: ``warnings.formatwarning``'s signature (its ``line`` is optional).
_Formatter = Callable[..., str]


def _one_line_for_ngcc(previous: _Formatter) -> _Formatter:
    def formatwarning(message: Warning | str, category: type[Warning], filename: str,
                      lineno: int, line: str | None = None) -> str:
        if issubclass(category, MeasurementWarning):
            return "ngcc: %s: %s\n" % (category.__name__, message)
        return previous(message, category, filename, lineno, line)
    formatwarning.ngcc_one_line = True  # type: ignore[attr-defined]
    return formatwarning


def show_measurement_warnings_as_one_line() -> None:
    """Format ngcc's own warnings (a :class:`MeasurementWarning` and its kinds) as one
    line, ``ngcc: TrialFlagWarning: ...``, wherever Python shows them (a Jupyter
    session, a script); every other warning keeps the format it had. ``ngcc`` calls
    it on import (idempotent).

    Why the format and not ``stacklevel``: a measurement warning is about the host or a
    trial, not about a line of code, so neither ngcc's source line nor the caller's
    helps the reader; and wrapping ``formatwarning`` (not ``showwarning``) leaves where
    warnings go, and any ``showwarning`` a user or a test installs, untouched."""
    if not getattr(warnings.formatwarning, "ngcc_one_line", False):
        warnings.formatwarning = _one_line_for_ngcc(warnings.formatwarning)


# --- reports and validation (ngcc/report/pages.py, ngcc/report/validate.py) ---


class ValidationError(NgccError):
    """``ngcc validate``: a record or page differs from what its evidence gives."""

    def __init__(self, run_dir: object, differences: list[str]):
        self.run_dir = run_dir
        self.differences = differences
        super().__init__("%s does not validate (%d difference(s)):\n  %s" % (
            run_dir, len(differences), "\n  ".join(differences)))


class NoRecordError(NgccError, KeyError):
    """A run holds no record of that library at that length (``Run.record``)."""

    def __str__(self) -> str:  # KeyError's own would quote the message
        return str(self.args[0]) if self.args else ""


class ReportError(NgccError, LookupError):
    """A report asked for something the run does not hold (e.g. a distribution of a job
    that was not measured); the message lists what the run has."""

    def __str__(self) -> str:  # LookupError would otherwise repr() the message
        return str(self.args[0])


class PlotDataError(NgccError, ValueError):
    """Data a plot cannot draw honestly (two series with one label, columns of unequal
    length, a ratio that is not positive); the message names the series."""


# --- comparisons (ngcc compare, ngcc/report/compare.py) ---


class CompareError(NgccError):
    """``ngcc compare`` cannot compare what was asked; the message says why and what to do."""


class UnknownLabelError(CompareError, LookupError):
    """A label given to ``--instance`` that names no library of its run; the message
    lists the run's labels."""

    def __str__(self) -> str:  # LookupError would otherwise repr() the message
        return str(self.args[0])


class NothingToCompareError(CompareError):
    """Two runs (or two labels) that share no library × length measured on both sides."""


class UnitMismatchError(CompareError):
    """Figures in different units (TSC ticks, timer ticks, ns, ticks of another rate) and
    no core-cycles-per-tick estimate in every trial to convert them."""


# --- distributed campaigns (--workers, --scheduler) --------------------------------


class DistributedError(NgccError):
    """A distributed campaign cannot run: Dask is not installed (the message says
    ``pip install "ngcc[distributed]"``), the scheduler cannot be reached, or no worker
    offers a ``cpu`` resource."""


class LibraryMismatchError(DistributedError):
    """A worker refused a library: the bytes it holds do not have the sha256 the plan
    names (the message names worker, host, library and both digests)."""


class UnknownHostError(CompareError, LookupError):
    """A host given to ``ngcc compare --host`` that measured no record of its run; the
    message lists the run's hosts."""

    def __str__(self) -> str:  # LookupError would otherwise repr() the message
        return str(self.args[0])


class ArchiveError(NgccError):
    """A submission archive that is not a folder, or holds no implementation folder."""


class PublishedError(NgccError):
    """An unknown published system, or published figures that cannot be read or
    compared with a run."""


class UnknownPublishedError(PublishedError, LookupError):
    """An instance name given to ``--instance MINE=THEIRS`` that has no published figure;
    the message names close ones."""

    def __str__(self) -> str:  # LookupError would otherwise repr() the message
        return str(self.args[0])
