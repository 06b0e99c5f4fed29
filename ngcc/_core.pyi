"""Typed stubs for ngcc._core, the C extension (csrc/_core.c).

One section per C file behind the binding; add a section beside these for new
bindings rather than editing the others.
"""

from typing import TypedDict

import numpy as np
import numpy.typing as npt

# ------------------------------------------------------------ Library (loader.c, bench.c)

#: The most timed or warm-up calls one ``Library.time_calls`` accepts (2**26).
MAX_CALLS: int

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

class CounterCalibration(TypedDict):
    name: str
    frequency_hz: float
    overhead_min: int
    overhead_median: int

def counter_calibrate() -> CounterCalibration:
    """Measure the counter afresh (about 50 ms): frequency against
    CLOCK_MONOTONIC_RAW, and the minimum and median ticks of an empty timed region."""

def counter_read() -> int:
    """One serialised counter read, in ticks."""
