"""The host check and the environment fingerprint stored in every run.

:func:`fingerprint` reads what the operating system exposes about the measuring CPU
and the software (``/proc``, ``/sys``, ``uname``, the cycle counter's calibration);
:func:`host_warnings` turns the values that spoil cycle counts (frequency scaling,
turbo, an SMT sibling, a hypervisor, load) into warnings that quote the measured
value and the remedy. Nothing here changes the host.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from ngcc.base.format import MISSING, duration, significant
from ngcc.base.version import __version__
from ngcc.driver import protocol as wire
from ngcc.evidence.model import Counter, Environment, HostWarning
from ngcc.measure.locks import default_cpu

LOAD_LIMIT = 0.5   # 1-minute load average above which other work competes with a trial
_CPU_SYS = Path("/sys/devices/system/cpu")
_PACKAGE_DIR = Path(__file__).resolve().parents[1]


#: One reason the host is not fixed for measurement: a code and a message that quotes
#: the measured value and the remedy (stored in ``campaign.json`` as it is).
HostIssue = HostWarning


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


#: AArch64 cores by the ids /proc/cpuinfo gives (MIDR_EL1: implementer, part), as
#: ``lscpu`` names them; any other core is shown by its ids.
ARM_CORES = {
    (0x41, 0xd08): "ARM Cortex-A72", (0x41, 0xd0b): "ARM Cortex-A76",
    (0x41, 0xd0c): "ARM Neoverse-N1", (0x41, 0xd40): "ARM Neoverse-V1",
    (0x41, 0xd49): "ARM Neoverse-N2", (0x41, 0xd4f): "ARM Neoverse-V2",
    (0x41, 0xd84): "ARM Neoverse-V3", (0x46, 0x001): "Fujitsu A64FX",
    (0x48, 0xd01): "HiSilicon TaiShan-v110", (0xc0, 0xac3): "Ampere AmpereOne",
}


def cpu_model_of(cpuinfo: str) -> str | None:
    """The CPU model in ``/proc/cpuinfo``'s text: its ``model name`` (x86-64); on AArch64,
    whose kernel lists no name, the core its implementer and part ids stand for
    (``ARM Neoverse-N1 (implementer 0x41, part 0xd0c)``); else ``Model``/``Hardware``."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())  # the first CPU's
    if fields.get("model name"):
        return fields["model name"]
    try:
        ids = int(fields["CPU implementer"], 16), int(fields["CPU part"], 16)
    except (KeyError, ValueError):
        return fields.get("Model") or fields.get("Hardware") or None
    named = ARM_CORES.get(ids)
    return "%s(implementer %#x, part %#x)" % (named + " " if named else "AArch64 core ",
                                              *ids)


def _cpu_model() -> str | None:
    return cpu_model_of(_read(Path("/proc/cpuinfo")) or "") or platform.processor() or None


def _cpu_max_mhz(cpu: int) -> float | None:
    khz = _read(_CPU_SYS / ("cpu%d" % cpu) / "cpufreq" / "cpuinfo_max_freq")
    return int(khz) / 1000 if khz and khz.isdigit() else None


def _governor(cpu: int) -> str | None:
    return _read(_CPU_SYS / ("cpu%d" % cpu) / "cpufreq" / "scaling_governor")


def _turbo() -> bool | None:
    """True when turbo/boost is enabled, False when disabled, None when not exposed."""
    no_turbo = _read(_CPU_SYS / "intel_pstate" / "no_turbo")
    if no_turbo in ("0", "1"):
        return no_turbo == "0"
    boost = _read(_CPU_SYS / "cpufreq" / "boost")
    if boost in ("0", "1"):
        return boost == "1"
    return None


def parse_cpu_list(text: str) -> list[int]:
    """Parse a kernel CPU list such as ``"0-3,8,10-11"`` into sorted CPU numbers."""
    cpus: set[int] = set()
    for part in filter(None, text.strip().split(",")):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return sorted(cpus)


def _smt_siblings(cpu: int) -> list[int]:
    text = _read(_CPU_SYS / ("cpu%d" % cpu) / "topology" / "thread_siblings_list")
    if not text:
        return [cpu]
    online = _read(_CPU_SYS / "online")
    siblings = parse_cpu_list(text)
    return [c for c in siblings if c in parse_cpu_list(online)] if online else siblings


def _virtualization() -> str | None:
    """The hypervisor's name (``kvm``, ``xen`` …), or None on bare metal."""
    flags = _read(Path("/proc/cpuinfo")) or ""
    detect = shutil.which("systemd-detect-virt")
    if detect:
        out = subprocess.run([detect, "--vm"], capture_output=True, text=True, check=False)
        name = out.stdout.strip()
        if out.returncode == 0 and name and name != "none":
            return name
    hypervisor = _read(Path("/sys/hypervisor/type"))
    if hypervisor:
        return hypervisor
    return "unknown hypervisor" if " hypervisor" in flags else None


def _perf_event_paranoid() -> int | None:
    value = _read(Path("/proc/sys/kernel/perf_event_paranoid"))
    return int(value) if value and value.lstrip("-").isdigit() else None


def _memory_mib() -> int | None:
    for line in (_read(Path("/proc/meminfo")) or "").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return None


def _os_name() -> str | None:
    for line in (_read(Path("/etc/os-release")) or "").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.partition("=")[2].strip('"')
    return None


def _compiler() -> str | None:
    try:
        from ngcc.library.registry import instances
        built = instances()
    except Exception:  # the libraries may not be built; the fingerprint still works
        built = []
    return built[0].compiler if built else None


def _git() -> tuple[str | None, bool | None]:
    """The commit of the ngcc source tree and whether it has uncommitted changes."""
    root = _PACKAGE_DIR.parent
    if not (root / ".git").exists() or shutil.which("git") is None:
        return None, None
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=False)
    if head.returncode != 0:
        return None, None
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                             "--untracked-files=no"], capture_output=True, text=True,
                            check=False)
    return head.stdout.strip(), bool(status.stdout.strip())


def _counter() -> Counter | None:
    try:
        from ngcc.driver.timing import counter_info
    except ImportError:  # the timing engine is not built into this copy
        return None
    info = counter_info()
    return Counter(name=info.name, frequency_hz=float(info.frequency_hz),
                   overhead_min=int(info.overhead_min),
                   overhead_median=int(info.overhead_median), unit=info.unit or None,
                   nominal_hz=float(info.nominal_hz) or None,
                   resolution=int(info.resolution) or None)


def _load_average() -> tuple[float, float, float]:
    one, five, fifteen = (round(x, 2) for x in os.getloadavg())
    return one, five, fifteen


def fingerprint(cpu: int | None = None) -> Environment:
    """The environment fingerprint of this host for a campaign pinned to ``cpu``.

    The fields are listed in ``docs/evidence-format.md`` (Environment); a value the
    host does not expose is ``None``.
    """
    cpu = default_cpu() if cpu is None else cpu
    commit, dirty = _git()
    return Environment(
        cpu_model=_cpu_model(), machine=platform.machine(), cpu=cpu, cpu_count=os.cpu_count(),
        cpu_max_mhz=_cpu_max_mhz(cpu), governor=_governor(cpu), turbo=_turbo(),
        smt_siblings=tuple(_smt_siblings(cpu)), virtualization=_virtualization(),
        perf_event_paranoid=_perf_event_paranoid(), memory_mib=_memory_mib(),
        counter=_counter(), load_average_start=_load_average(), kernel=platform.release(),
        os=_os_name(), compiler=_compiler(), python=platform.python_version(),
        numpy=np.__version__, ngcc_version=__version__, git_commit=commit, git_dirty=dirty,
        executable=sys.executable, host=platform.node() or None)


def _frequency_warnings(env: Environment) -> list[HostIssue]:
    cpu, found = env.cpu, []
    if env.governor not in (None, "performance"):
        found.append(HostIssue("governor", (
            "CPU %d runs the %r cpufreq governor: its clock follows the load, so cycle "
            "counts drift between calls; remedy: `sudo cpupower -c %d frequency-set -g "
            "performance`" % (cpu, env.governor, cpu))))
    if env.turbo:
        found.append(HostIssue("turbo", (
            "turbo/boost is on: the clock rises and falls with temperature and load, so "
            "cycles per call vary; remedy: `echo 1 | sudo tee /sys/devices/system/cpu/"
            "intel_pstate/no_turbo` (Intel) or `echo 0 | sudo tee /sys/devices/system/"
            "cpu/cpufreq/boost` (AMD)")))
    if env.counter is None or not env.counter.frequency_hz:
        found.append(HostIssue("counter", (
            "the cycle counter's frequency is unknown (counter: %s): times and MB/s "
            "cannot be derived from cycles; rebuild ngcc (`python setup.py build_ext "
            "--inplace`)" % (env.counter.name if env.counter else "unknown",))))
    return found


def _sharing_warnings(env: Environment) -> list[HostIssue]:
    cpu, found = env.cpu, []
    others = [c for c in env.smt_siblings if c != cpu]
    if others:
        found.append(HostIssue("smt", (
            "CPU %d shares its core with CPU %s (SMT on): work on the sibling slows the "
            "timed calls; remedy: `echo off | sudo tee /sys/devices/system/cpu/smt/"
            "control`, or keep CPU %s idle" % (cpu, ",".join(map(str, others)),
                                               ",".join(map(str, others))))))
    if env.virtualization:
        found.append(HostIssue("virtualization", (
            "running under a hypervisor (%s): other guests share the physical cores and "
            "the cycle counter may be virtualised; measure on bare metal for reportable "
            "figures" % env.virtualization)))
    load = env.load_average_start[0]
    if load > LOAD_LIMIT:
        found.append(HostIssue("load", (
            "the 1-minute load average is %.2f (above %.1f) on %s CPUs: other processes "
            "compete with the trials; stop them, or wait until the machine is idle"
            % (load, LOAD_LIMIT, env.cpu_count))))
    return found


def host_warnings(env: Environment) -> list[HostIssue]:
    """Every way the host described by ``env`` (a :func:`fingerprint`) is not fixed."""
    return _frequency_warnings(env) + _sharing_warnings(env)


# ---------------------------------------------------------------- the one renderer
# How the fingerprint reads, in ``ngcc check``, ``ngcc info`` and report section 2.

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


#: What the overhead of each unit of ticks is called (the TSC's in the seeds' word).
_TICK_WORDS = {"tsc-ticks": "cycles", "timer-ticks": "ticks", "ns": "ns", "core-cycles": "cycles"}
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
                   _TICK_WORDS.get(unit, "ticks")))
    word = "ns" if unit == "ns" else "ticks"
    steps = "%.3g–%.3g steps" % (counter.overhead_min / counter.resolution,
                                 counter.overhead_median / counter.resolution)
    return ("%s, %s, resolution %d %s, bracket %s–%s %s (%s; min–median; recorded, not "
            "subtracted)" % (name, rate, counter.resolution,
                             word if counter.resolution != 1 or word == "ns" else "tick",
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
