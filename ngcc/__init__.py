"""ngcc: measure cryptographic hash functions the way a competition evaluator does.

Every hash instance is an ICCS ``CryptHash`` shared library; ngcc checks it
against the official known-answer tests, times it per call with the CPU's
cycle counter, and turns the counts into statistics, evidence and reports.
"""

from ngcc import kat
from ngcc._errors import (
    HashError,
    KatError,
    KatMemoryError,
    LibraryError,
    NgccError,
    UnknownInstanceError,
)
from ngcc._hashing import hash
from ngcc._registry import Instance, instance, instances
from ngcc._timing import CounterInfo, TimingResult, counter_info, default_message, time_calls

__version__ = "0.1.0"

__all__ = [
    "CounterInfo",
    "HashError",
    "Instance",
    "KatError",
    "KatMemoryError",
    "LibraryError",
    "NgccError",
    "TimingResult",
    "UnknownInstanceError",
    "__version__",
    "counter_info",
    "default_message",
    "hash",
    "instance",
    "instances",
    "kat",
    "time_calls",
]
