"""What the two sides of a comparison are compared by: each record's per-trial figures
(the statistic asked for, the leading figure by default), in one unit (converted to core
cycles where the counters differ and every trial estimated the conversion), and how the
hosts of two records differ. Used by :mod:`ngcc.stats.pairing`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from ngcc.base.errors import UnitMismatchError
from ngcc.evidence.figures import CPU_TIME

if TYPE_CHECKING:
    from ngcc.evidence.model import Environment, Record

#: Two counter rates within this relative distance are one unit (calibration noise).
RATE_TOLERANCE = 0.01
#: The unit of figures converted with each trial's core-cycles-per-tick estimate.
CORE_CYCLES = "core-cycles"
#: Host fingerprint fields whose difference makes two records "from different hosts".
HOST_FIELDS: tuple[tuple[str, Callable[[Environment], object]], ...] = (
    ("CPU model", lambda env: env.cpu_model),
    ("machine", lambda env: env.machine),
    ("CPU count", lambda env: env.cpu_count),
    ("max frequency (MHz)", lambda env: env.cpu_max_mhz),
    ("governor", lambda env: env.governor),
    ("turbo", lambda env: env.turbo),
    ("virtualization", lambda env: env.virtualization),
    ("memory (MiB)", lambda env: env.memory_mib),
    ("counter", lambda env: env.counter.name if env.counter else None),
    ("kernel", lambda env: env.kernel),
    ("OS", lambda env: env.os),
)


def rate_text(hz: float) -> str:
    for unit, scale in (("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3)):
        if hz >= scale:
            return "%.3g %s" % (hz / scale, unit)
    return "%.3g Hz" % hz


def _unit_text(record: Record) -> str:
    units = sorted({trial.unit for trial in record.trials})
    if units == ["ns"]:
        return "ns"
    rate = float(np.median([trial.frequency_hz for trial in record.trials]))
    return "%s at %s" % ("/".join(units), rate_text(rate))


def _common_unit(a: Record, b: Record) -> str | None:
    """The unit both records' figures are in, or None when they are not one unit."""
    units = {trial.unit for trial in (*a.trials, *b.trials)}
    if len(units) != 1:
        return None
    unit = units.pop()
    if unit == "ns":
        return unit
    rates = [trial.frequency_hz for trial in (*a.trials, *b.trials)]
    return unit if max(rates) <= min(rates) * (1 + RATE_TOLERANCE) else None


def _core_cycles_per_tick(record: Record) -> np.ndarray | None:
    factors = [trial.core_cycles_per_tick for trial in record.trials]
    if any(f is None or not f > 0 for f in factors):
        return None
    return np.asarray(factors, dtype=np.float64)


def trial_figures(record: Record, statistic: str = "figure") -> np.ndarray:
    """Each trial's ``statistic``: for ``figure``, its value of the figure its record
    leads with (``evidence.figures``), the trials of the slow speed state left out, as
    the record's own figure leaves them out."""
    if statistic == "figure":
        lead = record.statistics.figure.figure
        left_out = record.statistics.left_out_trials or ()
        name = "cpu_time_ticks" if lead is CPU_TIME else "mean_cycles"
        return np.asarray([getattr(t.statistics, name) for t in record.trials
                           if t.index not in left_out], dtype=np.float64)
    name = statistic + "_cycles"
    return np.asarray([getattr(trial.statistics, name) for trial in record.trials],
                      dtype=np.float64)


def speed_state_spread(records: Iterable[Record]) -> tuple[float, Record | None]:
    """The widest a job's trials spread: over ``records``, the largest ratio of a record's
    slowest to its fastest trial CPU-time figure, every trial counted (the slow speed
    state's too), and the record it is of; ``(1.0, None)`` where no record has two
    trials with the figure. On a host that runs the same code at several speeds this is
    how far apart they were while these records were measured: a whole run can fall in
    one of them, so two runs' figures may differ by as much."""
    widest, where = 1.0, None
    for record in records:
        figures = [t.statistics.cpu_time_ticks for t in record.trials]
        values = [float(f) for f in figures if f is not None and f > 0]
        if len(values) < 2 or len(values) < len(figures):
            continue
        if max(values) / min(values) > widest:
            widest, where = max(values) / min(values), record
    return widest, where


def _statistic_of(a: Record, b: Record, statistic: str) -> tuple[str, str | None]:
    """The statistic both sides are compared by: ``figure`` only where both lead with
    one figure (else their per-call means, with a note)."""
    if statistic != "figure" or a.statistics.figure.code == b.statistics.figure.code:
        return statistic, None
    return "mean", ("%s at %d B: A leads with the %s, B with the %s (a record of another "
                    "ngcc version); compared by their per-call means" % (
                        a.label, a.message_bytes, a.statistics.figure.name,
                        b.statistics.figure.name))


def comparable(pair: str, length: int, a: Record, b: Record, statistic: str
                ) -> tuple[np.ndarray, np.ndarray, str, str | None]:
    """Both sides' per-trial figures in one unit, the unit, and a note if converted.

    Raises:
        UnitMismatchError: different units and no conversion on both sides.
    """
    statistic, mixed = _statistic_of(a, b, statistic)
    values_a, values_b = trial_figures(a, statistic), trial_figures(b, statistic)
    unit = _common_unit(a, b)
    if unit is not None:
        return values_a, values_b, unit, mixed
    factors_a, factors_b = _core_cycles_per_tick(a), _core_cycles_per_tick(b)
    units = "A is in %s, B in %s" % (_unit_text(a), _unit_text(b))
    if factors_a is None or factors_b is None:
        lacking = " and ".join(side for side, f in (("A", factors_a), ("B", factors_b))
                               if f is None)
        raise UnitMismatchError(
            "%s at %d B: %s, and a ratio of two units means nothing; converting to core "
            "cycles needs each trial's core-cycles-per-tick estimate, which %s lack%s. "
            "Compare runs measured with the same counter, or measure again with the C "
            "trial driver, which estimates core cycles per tick on x86"
            % (pair, length, units, lacking, "" if " and " in lacking else "s"))
    note = ("%s: %s; compared in core cycles (each trial's figure × that trial's "
            "core-cycles-per-tick estimate)" % (pair, units))
    return values_a * factors_a, values_b * factors_b, CORE_CYCLES, note


def _show(value: object) -> str:
    return "unknown" if value is None else str(value)


def host_differences(env_a: Environment, env_b: Environment) -> tuple[str, ...]:
    """The fingerprint fields in which two hosts differ: ``CPU model: X vs Y`` …

    Counter rates count as equal within :data:`RATE_TOLERANCE` (each run calibrates
    its own).
    """
    out = ["%s: %s vs %s" % (name, _show(get(env_a)), _show(get(env_b)))
           for name, get in HOST_FIELDS if get(env_a) != get(env_b)]
    if env_a.host and env_b.host and env_a.host != env_b.host:  # None: a record before hosts
        out.insert(0, "host: %s vs %s" % (env_a.host, env_b.host))
    rate_a = env_a.counter.frequency_hz if env_a.counter else None
    rate_b = env_b.counter.frequency_hz if env_b.counter else None
    if rate_a and rate_b and abs(rate_a / rate_b - 1) > RATE_TOLERANCE:
        out.append("counter rate: %s vs %s" % (rate_text(rate_a), rate_text(rate_b)))
    return tuple(out)
