"""Typed stubs for ngcc._core, the C extension (csrc/_core.c).

One section per C file behind the binding; add a section beside these for new
bindings rather than editing the others.
"""

from collections.abc import Callable
from typing import TypedDict, final

import numpy as np
import numpy.typing as npt

# ------------------------------------------------------------ Library (loader.c, bench.c)

#: The most timed or warm-up calls one ``Library.time_calls`` accepts (2**26).
MAX_CALLS: int

@final
class Library:
    """An ICCS instance library loaded with dlopen; raises LibraryError naming the
    file when it cannot be loaded or exports no ``CryptHash``."""

    def __init__(self, path: str | bytes) -> None: ...
    @property
    def path(self) -> str | None: ...
    def hash(self, digest_bits: int, data: object, bits: int) -> bytes:
        """One ``CryptHash`` call on the first ``bits`` bits of a buffer, no copy.

        Raises ValueError (bad digest_bits, bits < 0 or beyond the buffer),
        TypeError (not a buffer), HashError (nonzero return)."""
    def time_calls(
        self, digest_bits: int, message: object, calls: int, warmup: int = 0
    ) -> tuple[npt.NDArray[np.uint64], int, int]:
        """``warmup`` untimed calls, then ``calls`` timed calls on the whole message,
        with the GIL released. Returns (ticks per call, total ticks, total ns) where
        the totals span the timed loop. Raises ValueError (counts out of range),
        HashError naming the warm-up or timed call index of a nonzero return."""

# ------------------------------------------------------------------- counter (timer.c)

class _CounterCalibration(TypedDict):  # a dict at run time; named for type checkers only
    name: str
    unit: str
    nominal_hz: float
    frequency_hz: float
    overhead_min: int
    overhead_median: int
    resolution: int

#: The least time a trial's frequency measurement spans, in nanoseconds: from before its
#: calls to after them, sleeping where they end sooner (50 ms).
COUNTER_FREQUENCY_INTERVAL_NS: int

def counter_calibrate() -> _CounterCalibration:
    """Measure the counter afresh (about 50 ms): frequency against
    CLOCK_MONOTONIC_RAW, and the minimum and median ticks of an empty timed region;
    with its name, the unit of its ticks and the rate the architecture states
    (``nominal_hz``: cntfrq_el0 on AArch64, 0 elsewhere)."""

def counter_read() -> int:
    """One serialised counter read, in ticks."""

# ---------------------------------------------------------- CPU (cpu_features.c)

def cpu_features() -> frozenset[str]:
    """The instruction-set extensions this CPU and its OS offer, by the flag names of
    Linux /proc/cpuinfo (``"aes"``, ``"ssse3"``, ``"avx2"``, ...), read with cpuid
    (AVX-class flags only when the OS saves their registers). Only the names that
    csrc/cpu_features.c knows appear; empty on a CPU other than x86-64."""

# ------------------------------------------------------------- KAT, DRNG (drng.c, kat.c)

@final
class Drng:
    """The ICCS SM3 DRNG that makes the KAT messages (spec/drng.md), from a seed of
    any length."""

    def __init__(self, seed: bytes) -> None: ...
    def generate(self, bits: int) -> bytes:
        """The next ceil(bits/8) output bytes (unused low bits of a partial last byte
        zeroed), then the state update; a 0-bit call only updates the state."""
    def generate_into(self, buffer: object, bits: int) -> None:
        """Like generate, into a writable buffer; bytes after the output stay untouched."""
    @property
    def state(self) -> tuple[bytes, bytes, bytes]:
        """(V, C, reseed_counter): three 55-byte big-endian numbers."""

def kat_generate(
    library: Library,
    instance: str,
    digest_bits: int,
    kind: str,
    path: str | bytes,
    *,
    progress: Callable[[int, int], object] | None = None,
    blank_digests: bool = False,
) -> None:
    """Write the official KAT file ``kind`` ("2_12", "2_23", "2_33", "Loop") for an
    instance library to ``path``, byte for byte as the ICCS generator, with the GIL
    released. ``progress(done, total)`` is called now and then; an exception it raises
    (or Ctrl-C) stops generation. Raises KatMemoryError (message buffer), HashError
    (CryptHash returned nonzero), OSError (file), ValueError (instance name not 1..64
    of [A-Za-z0-9_-], digest_bits not a multiple of 8 in 8..8192). On error the file
    may be incomplete; the caller removes it."""
