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

from ngcc.base.version import __version__
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


def hypervisor() -> str | None:
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
        smt_siblings=tuple(_smt_siblings(cpu)), virtualization=hypervisor(),
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
