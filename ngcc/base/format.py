"""How numbers look on a report page.

The rules reproduce the independent NGCC performance pages (``docs/spec/seeds/``) so a
page made by ngcc reads the same as those:

=================  ===============================================  ======================
column             rule                                             examples
=================  ===============================================  ======================
mean cycles        below 10 000: integer; below 1 000 k: thousands  ``2099``, ``37.8 k``,
                   with one decimal and `` k``; else millions with  ``1.60 M``
                   two decimals and `` M``
cycles/byte        one decimal                                      ``1180.9``, ``6.6``
mean time          three significant digits, trailing zeros         ``987 ns``, ``1 µs``,
                   dropped, in the largest unit (ns, µs, ms, s)     ``18.1 µs``, ``1.3 ms``
                   that keeps the number at or above 1
MB/s               decimal megabytes (10⁶ B) per second, one        ``1.8``, ``316.4``
                   decimal
n                  total calls, then trials × calls per trial       ``100000 (5 × 20000)``
=================  ===============================================  ======================

Every function returns :data:`MISSING` for a value that was not measured (``None``
or NaN), so a page never shows ``nan``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

MISSING = "—"
"""What a page shows for a value that was not measured."""

_TIME_UNITS = (("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0))


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros dropped, no exponent
    for numbers at or above 1 (``1180`` stays ``1180``, not ``1.18e+03``)."""
    text = f"{value:.{digits}g}"
    if "e" in text and abs(value) >= 1:
        text = f"{value:.0f}"
    return text


def cycles(value: float | None) -> str:
    """Mean cycles per call: ``2099``, ``37.8 k``, ``1.60 M``."""
    if value is None or math.isnan(value):
        return MISSING
    if round(value) < 10_000:
        return f"{value:.0f}"
    if round(value / 1e3, 1) < 1000:
        return f"{value / 1e3:.1f} k"
    return f"{value / 1e6:.2f} M"


def cycles_per_byte(value: float | None) -> str:
    """Cycles per message byte, one decimal: ``1180.9``."""
    return MISSING if value is None or math.isnan(value) else f"{value:.1f}"


def duration(seconds: float | None) -> str:
    """A time per call with three significant digits: ``987 ns``, ``18.1 µs``, ``18 ms``."""
    if seconds is None or math.isnan(seconds):
        return MISSING
    for unit, scale in _TIME_UNITS[:-1]:
        scaled = seconds / scale
        if float(f"{scaled:.3g}") < 1000:
            return f"{significant(scaled)} {unit}"
    return f"{significant(seconds)} s"


def megabytes_per_second(value: float | None) -> str:
    """Throughput in decimal MB/s, one decimal: ``1.8``."""
    return MISSING if value is None or math.isnan(value) else f"{value:.1f}"


def call_count(calls_per_trial: Sequence[int]) -> str:
    """Calls measured in total and how they split into trials: ``100000 (5 × 20000)``.

    Trials of unequal length (a ``--target-ci`` campaign may add trials of another
    size) are listed one by one: ``30 (10 + 20)``.
    """
    if not calls_per_trial:
        return MISSING
    total = sum(calls_per_trial)
    if len(set(calls_per_trial)) == 1:
        return f"{total} ({len(calls_per_trial)} × {calls_per_trial[0]})"
    return f"{total} ({' + '.join(str(calls) for calls in calls_per_trial)})"


def message(message_bytes: int) -> str:
    """A message length in the performance table: ``32 B``."""
    return f"{message_bytes} B"


def operation(message_bytes: int) -> str:
    """The operation name of a timing job: ``hash_32``."""
    return f"hash_{message_bytes}"


def kibibytes(value: float | None) -> str:
    """A memory size given in KiB: ``1664 KiB``."""
    return MISSING if value is None or math.isnan(value) else f"{value:.0f} KiB"


def byte_count(value: int | None) -> str:
    """A size in bytes, as a plain integer: ``15905``."""
    return MISSING if value is None else str(int(value))


def percent(value: float | None) -> str:
    """A relative quantity (a fraction) as a percentage with two decimals: ``0.42 %``."""
    if value is None or math.isnan(value):
        return MISSING
    return f"{100.0 * value:.2f} %"


def ratio(value: float | None) -> str:
    """A speed ratio, three significant digits: ``1.23``, ``45.6``, ``1180``."""
    return MISSING if value is None or math.isnan(value) else significant(value)
