"""ngcc: measure cryptographic hash functions the way a competition evaluator does.

Every hash instance is an ICCS ``CryptHash`` shared library; ngcc checks it
against the official known-answer tests, times it per call with the CPU's
cycle counter, and turns the counts into statistics, evidence and reports.
"""

import importlib as _importlib
import sys as _sys
from importlib.machinery import EXTENSION_SUFFIXES as _EXTENSION_SUFFIXES
from pathlib import Path as _Path
from typing import TYPE_CHECKING, Any


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


#: Where each public name other than the exceptions lives. ``import ngcc`` loads none of
#: them (numpy, the C core, the campaign and the reports): :func:`__getattr__` imports a
#: name's module when the name is first used, so a script or a short command pays only
#: for what it uses. The type checker sees them imported (``TYPE_CHECKING``).
_HOMES = {
    "kat": "ngcc.kat",
    "EvaluationResult": "ngcc.app.evaluate", "evaluate": "ngcc.app.evaluate",
    "Campaign": "ngcc.campaign.campaign",
    "CostEstimate": "ngcc.campaign.cost",
    "CampaignSettings": "ngcc.campaign.settings",
    "hash": "ngcc.driver.hashing",
    "CounterInfo": "ngcc.driver.timing", "TimingResult": "ngcc.driver.timing",
    "counter_info": "ngcc.driver.timing", "default_message": "ngcc.driver.timing",
    "time_calls": "ngcc.driver.timing",
    "Run": "ngcc.evidence.run", "load_run": "ngcc.evidence.run",
    "BuildResult": "ngcc.library.build", "build": "ngcc.library.build",
    "Instance": "ngcc.library.registry", "instance": "ngcc.library.registry",
    "instances": "ngcc.library.registry",
    "LeakResult": "ngcc.measure.leak_measurement", "leak": "ngcc.measure.leak_measurement",
    "Validation": "ngcc.report.validate", "validate": "ngcc.report.validate",
}

_check_built()
try:
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
        SettingError,
        TrialFlagWarning,
        UnitMismatchError,
        UnknownHostError,
        UnknownInstanceError,
        UnknownLabelError,
        UnknownSettingError,
        ValidationError,
    )
    from ngcc.base.version import __version__
except KeyboardInterrupt:
    _interrupted_while_starting()
    raise

_errors.show_measurement_warnings_as_one_line()

if TYPE_CHECKING:
    from ngcc import kat
    from ngcc.app.evaluate import EvaluationResult, evaluate
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
else:
    def __getattr__(name: str) -> Any:
        """A public name's value, its module imported on first use (``_HOMES``); a
        stage's folder (``ngcc.stats``) is its package, imported as well."""
        home = _HOMES.get(name)
        if home is None and name.isidentifier() and not name.startswith("_") \
                and (_Path(__file__).parent / name / "__init__.py").is_file():
            home = "ngcc." + name
        if home is None:
            raise AttributeError("module 'ngcc' has no attribute %r" % name)
        module = _importlib.import_module(home)
        value = module if home == "ngcc." + name else getattr(module, name)
        globals()[name] = value  # the next use is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})

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
    "SettingError",
    "TimingResult",
    "TrialFlagWarning",
    "UnitMismatchError",
    "UnknownHostError",
    "UnknownInstanceError",
    "UnknownLabelError",
    "UnknownSettingError",
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
