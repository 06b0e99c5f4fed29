"""ngcc: measure cryptographic hash functions the way a competition evaluator does.

Every hash instance is an ICCS ``CryptHash`` shared library; ngcc checks it
against the official known-answer tests, times it per call with the CPU's
cycle counter, and turns the counts into statistics, evidence and reports.
"""

import sys as _sys
from importlib.machinery import EXTENSION_SUFFIXES as _EXTENSION_SUFFIXES
from pathlib import Path as _Path


def _check_built() -> None:
    """Refuse, in one line that says what to do, a source tree without its C core: from
    a checkout's root ``import ngcc`` finds ``./ngcc`` before the installed package, and
    the import would fail later as a misleading "circular import"."""
    package = _Path(__file__).resolve().parent
    if not any((package / ("_core" + suffix)).is_file() for suffix in _EXTENSION_SUFFIXES):
        raise ImportError(
            "ngcc is imported from the source tree at %s, which has no built C core "
            "(ngcc/_core*.so): run `pip install -e .` there, or run from another folder"
            % package.parent)


def _interrupted_while_starting() -> None:
    """``python -m ngcc`` interrupted while the package imports (most of its first
    second): one line and exit status 130, as the ``ngcc`` script says it. Anywhere else
    (``import ngcc`` in a session) the KeyboardInterrupt stays the caller's."""
    if _sys.argv[:1] == ["-m"]:  # runpy is importing the package of `python -m ngcc`
        print("ngcc: interrupted while starting; nothing was done", file=_sys.stderr)
        raise SystemExit(130)


_check_built()
try:
    from ngcc import kat
    from ngcc.app.evaluate import EvaluationResult, evaluate
    from ngcc.base import errors as _errors
    from ngcc.base.errors import (
        ArchiveError,
        BuildError,
        CampaignFailedError,
        ChildError,
        CompareError,
        CorruptRecordError,
        CpuBusyError,
        DistributedError,
        ForeignRunDirError,
        HashError,
        HostError,
        InstanceCrashError,
        InstanceProtocolError,
        InstanceTimeoutError,
        KatError,
        KatGateError,
        KatMemoryError,
        LibraryError,
        LibraryMismatchError,
        LibraryNotFoundError,
        MeasurementWarning,
        NgccError,
        NothingToCompareError,
    NothingToMeasureError,
        PlanMismatchError,
        ReportError,
        RunDirBusyError,
        RunDirError,
        SandboxUnavailableError,
        TrialFlagWarning,
        UnitMismatchError,
        UnknownHostError,
        UnknownInstanceError,
        UnknownLabelError,
        ValidationError,
    )
    from ngcc.base.version import __version__
    from ngcc.campaign.campaign import Campaign
    from ngcc.campaign.cost import CostEstimate
    from ngcc.campaign.settings import CampaignSettings
    from ngcc.driver.hashing import hash
    from ngcc.driver.timing import (
        CounterInfo,
        TimingResult,
        counter_info,
        default_message,
        time_calls,
    )
    from ngcc.evidence.run import Run, load_run
    from ngcc.library.build import BuildResult, build
    from ngcc.library.registry import Instance, instance, instances
    from ngcc.measure.leak_measurement import LeakResult, leak
    from ngcc.report.validate import Validation, validate
except KeyboardInterrupt:
    _interrupted_while_starting()
    raise

_errors.show_measurement_warnings_as_one_line()

__all__ = [
    "ArchiveError",
    "BuildError",
    "BuildResult",
    "Campaign",
    "CampaignFailedError",
    "CampaignSettings",
    "ChildError",
    "CompareError",
    "CorruptRecordError",
    "CostEstimate",
    "CounterInfo",
    "CpuBusyError",
    "DistributedError",
    "EvaluationResult",
    "ForeignRunDirError",
    "HashError",
    "HostError",
    "Instance",
    "InstanceCrashError",
    "InstanceProtocolError",
    "InstanceTimeoutError",
    "KatError",
    "KatGateError",
    "KatMemoryError",
    "LeakResult",
    "LibraryError",
    "LibraryMismatchError",
    "LibraryNotFoundError",
    "MeasurementWarning",
    "NgccError",
    "NothingToCompareError",
    "NothingToMeasureError",
    "PlanMismatchError",
    "ReportError",
    "Run",
    "RunDirBusyError",
    "RunDirError",
    "SandboxUnavailableError",
    "TimingResult",
    "TrialFlagWarning",
    "UnitMismatchError",
    "UnknownHostError",
    "UnknownInstanceError",
    "UnknownLabelError",
    "Validation",
    "ValidationError",
    "__version__",
    "build",
    "counter_info",
    "default_message",
    "evaluate",
    "hash",
    "instance",
    "instances",
    "kat",
    "leak",
    "load_run",
    "time_calls",
    "validate",
]
