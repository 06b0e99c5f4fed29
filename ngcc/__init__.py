"""ngcc: measure cryptographic hash functions the way a competition evaluator does.

Every hash instance is an ICCS ``CryptHash`` shared library; ngcc checks it
against the official known-answer tests, times it per call with the CPU's
cycle counter, and turns the counts into statistics, evidence and reports.
"""

from ngcc import kat
from ngcc.app.evaluate import EvaluationResult, evaluate
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
    UsageError,
    ValidationError,
)
from ngcc.base.version import __version__
from ngcc.campaign.campaign import Campaign
from ngcc.campaign.cost import CostEstimate
from ngcc.campaign.settings import CampaignSettings
from ngcc.driver.hashing import hash
from ngcc.driver.timing import CounterInfo, TimingResult, counter_info, default_message, time_calls
from ngcc.evidence.run import Run, load_run
from ngcc.library.build import BuildResult, build
from ngcc.library.registry import Instance, instance, instances
from ngcc.measure.leak import LeakResult, leak
from ngcc.report.validate import Validation, validate

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
    "UsageError",
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
