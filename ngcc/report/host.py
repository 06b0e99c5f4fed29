"""The host's fingerprint in words: the lines of ``ngcc info`` and ``ngcc check``, and
the host facts of the report pages (the processor, the clock, the counter, memory,
system, virtualization, software, the commit). The fingerprint itself is
``measure.host``."""

from __future__ import annotations

from ngcc.base.format import MISSING, duration, significant
from ngcc.driver import protocol as wire
from ngcc.evidence import figures as _figures
from ngcc.evidence.model import Counter, Environment

#: What a fact the host did not say reads as.
UNKNOWN = "unknown"


def processor_text(env: Environment) -> str:
    """``AMD EPYC (CPU 1, one core)``."""
    return "%s (CPU %d, one core)" % (env.cpu_model or UNKNOWN, env.cpu)


def clock_text(env: Environment) -> str:
    """``max 2.10 GHz, governor performance, turbo off, SMT off`` (the seeds' words)."""
    turbo = UNKNOWN if env.turbo is None else ("on" if env.turbo else "off")
    smt = "off" if len(env.smt_siblings) <= 1 else "on"
    maximum = "max %.2f GHz" % (env.cpu_max_mhz / 1000) if env.cpu_max_mhz else "max unknown"
    return "%s, governor %s, turbo %s, SMT %s" % (maximum, env.governor or UNKNOWN, turbo, smt)


GENERIC_TIMER = "timer-ticks"


def counter_unit(counter: Counter) -> str:
    """What a tick of ``counter`` is: the unit the C side recorded, else (a record made
    before it was stored) the one its name stands for in the driver's protocol."""
    if counter.unit:
        return counter.unit
    return {name: unit for name, unit in wire.COUNTERS.values()}.get(counter.name, "")


def _rate(counter: Counter) -> str:
    """``2.596 GHz`` (measured); the generic timer's ``19.2 MHz by cntfrq_el0, 52.1 ns a
    tick``: its stated rate (else the measured one) and how long one tick lasts."""
    hz = counter.frequency_hz
    if counter_unit(counter) != GENERIC_TIMER:
        return "%.3f GHz" % (hz / 1e9) if hz else "unknown rate"
    hz = counter.nominal_hz or hz
    if not hz:
        return "unknown rate"
    source = "by cntfrq_el0" if counter.nominal_hz else "measured"
    return "%s MHz %s, %s a tick" % (significant(hz / 1e6, 4), source, duration(1 / hz))


def counter_text(env: Environment) -> str:
    """``rdtsc, 2.596 GHz, overhead 26–52 cycles (min–median; recorded, not subtracted)``;
    the AArch64 generic timer as such: ``cntvct_el0 (ARM generic timer, not core
    cycles), 19.2 MHz by cntfrq_el0, 52.1 ns a tick (…), overhead 1–1 ticks (…)``; where
    the resolution was measured, the bracket beside it: ``rdtsc, 2.596 GHz, resolution
    26 ticks, bracket 26–52 ticks (1–2 steps; min–median; recorded, not subtracted)``."""
    counter = env.counter
    if counter is None:
        return "%s, unknown rate" % UNKNOWN
    unit, name, rate = counter_unit(counter), counter.name, _rate(counter)
    if unit == GENERIC_TIMER:
        name += " (ARM generic timer, not core cycles)"
        rate += " (a call on a short message lasts a few ticks: read its batch mean)"
    if counter.resolution is None:  # a run of an ngcc that did not measure it: as it read
        return ("%s, %s, overhead %s–%s %s (min–median; recorded, not subtracted)"
                % (name, rate, counter.overhead_min, counter.overhead_median,
                   _figures.unit_word([unit])))
    word = _figures.unit_word([unit])
    steps = "%.3g–%.3g steps" % (counter.overhead_min / counter.resolution,
                                 counter.overhead_median / counter.resolution)
    return ("%s, %s, resolution %d %s, bracket %s–%s %s (%s; min–median; recorded, not "
            "subtracted)" % (name, rate, counter.resolution,
                             word if counter.resolution != 1 or word != "ticks" else "tick",
                             counter.overhead_min, counter.overhead_median, word, steps))


def counter_brief(env: Environment) -> str:
    """The counter in a few words, for a page's system line: ``rdtsc, 2.596 GHz``,
    ``cntvct_el0 (ARM generic timer), 19.2 MHz by cntfrq_el0, 52.1 ns a tick``."""
    counter = env.counter
    if counter is None:
        return UNKNOWN
    timer = " (ARM generic timer)" if counter_unit(counter) == GENERIC_TIMER else ""
    return "%s%s, %s" % (counter.name, timer, _rate(counter))


def memory_text(env: Environment) -> str:
    """``24105 MiB`` (``—`` when the host does not say)."""
    return "%d MiB" % env.memory_mib if env.memory_mib else MISSING


def system_text(env: Environment) -> str:
    """``Debian GNU/Linux 12 (bookworm) / 6.1.0``: OS and kernel."""
    return "%s / %s" % (env.os or UNKNOWN, env.kernel or UNKNOWN)


def virtualization_text(env: Environment) -> str:
    """The hypervisor, or ``none detected``."""
    return env.virtualization or "none detected"


#: What a fingerprint says when ngcc does not run from a git checkout (e.g. installed).
NO_COMMIT = "git commit unknown (not a git checkout)"


def git_commit_text(env: Environment) -> str:
    """``git 38b161e0a2b4``, with ``, uncommitted changes`` when dirty, else
    :data:`NO_COMMIT`: the one wording of the commit in ``ngcc check`` and the reports."""
    if not env.git_commit:
        return NO_COMMIT
    return "git %s%s" % (env.git_commit[:12], ", uncommitted changes" if env.git_dirty else "")


def commit_text(env: Environment) -> str:
    """The commit after a version number: `` (git 38b161e0a2b4)``, or ``, git commit
    unknown (not a git checkout)``."""
    if not env.git_commit:
        return ", " + NO_COMMIT
    return " (%s)" % git_commit_text(env)


def software_text(env: Environment) -> str:
    """``Python 3.11.7, numpy 2.4.6, ngcc 0.1.0 (git …)``."""
    return "Python %s, numpy %s, ngcc %s%s" % (env.python, env.numpy, env.ngcc_version,
                                               commit_text(env))


def describe(env: Environment) -> list[tuple[str, str]]:
    """The fingerprint as (item, value) rows: ``ngcc check`` and ``ngcc info`` print
    them; report section 2 uses the same texts."""
    return [
        ("processor", processor_text(env)),
        ("clock", clock_text(env)),
        ("cycle counter", counter_text(env)),
        ("virtualization", virtualization_text(env)),
        ("perf_event_paranoid", UNKNOWN if env.perf_event_paranoid is None
         else str(env.perf_event_paranoid)),
        ("memory", memory_text(env)),
        ("load average", " ".join("%.2f" % x for x in env.load_average_start)),
        ("OS / kernel", system_text(env)),
        ("compiler", env.compiler or UNKNOWN),
        ("software", software_text(env)),
        ("python", env.executable or UNKNOWN),
        ("host", env.host or UNKNOWN),
    ]
