"""What makes this host unfit to publish, setting by setting, with the command that
fixes each (``ngcc host``); and the settings that may change at run time, applied as
root (``--tune``) and put back (``--reset``), as pyperf's ``system tune`` does.

Each :class:`Setting` says what it is now, whether it is fit, and how to fix it: the
measuring CPU's cpufreq governor and turbo/boost (tunable: a value written to a file
under ``/sys``), the interrupts the kernel may deliver to it (tunable: each IRQ's
affinity under ``/proc/irq`` written without it), its SMT siblings, whether the kernel
isolates it (``isolcpus``), the load and a hypervisor (not tunable here: they take a
reboot, other CPUs offline, or another machine). ``--tune`` saves each value it changes
in the lock folder (:data:`STATE`) before it writes, so ``--reset`` restores what was
there. Every path is read under :data:`ROOT` (tests give a tree of their own).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ngcc.measure import host as _host
from ngcc.measure import locks as _locks

#: Where ``/sys`` and ``/proc`` are read and written (a test's tree instead).
ROOT = Path("/")
#: The file, in the lock folder, of the values ``--tune`` changed (``--reset`` reads it).
STATE = "host-tune.json"
_CPU = "sys/devices/system/cpu"
_IRQ = "proc/irq"


@dataclass(frozen=True)
class Setting:
    """One setting of the host as a measurement sees it.

    Attributes:
        name: what it is (``governor of CPU 3``).
        now: its value now, in words.
        fit: whether it is as publishing needs it.
        fix: the command (or the step) that makes it fit; empty when fit.
        writes: what ``--tune`` writes, (file relative to :data:`ROOT`, value) each;
            empty: not tunable.
        best_effort: a write the kernel refuses is reported and the others go on (some
            interrupts are bound to their CPU and cannot move).
    """

    name: str
    now: str
    fit: bool
    fix: str = ""
    writes: tuple[tuple[str, str], ...] = ()
    best_effort: bool = False

    @property
    def tunable(self) -> bool:
        return not self.fit and bool(self.writes)


def _read(relative: str) -> str | None:
    try:
        return (ROOT / relative).read_text().strip()
    except OSError:
        return None


def settings(cpu: int) -> list[Setting]:
    """Every setting, for a measurement pinned to ``cpu``."""
    return [_governor(cpu), _boost(), _interrupts(cpu), _smt(cpu), _isolation(cpu), _load(),
            _virtual()]


def _governor(cpu: int) -> Setting:
    path = "%s/cpu%d/cpufreq/scaling_governor" % (_CPU, cpu)
    name = "governor of CPU %d" % cpu
    now = _read(path)
    if now is None:
        return Setting(name, "not exposed (no cpufreq: the clock is not set here)", True)
    return Setting(name, now, now == "performance",
                   "echo performance | sudo tee /%s" % path, ((path, "performance"),))


def _boost() -> Setting:
    for path, on, off in (("%s/intel_pstate/no_turbo" % _CPU, "0", "1"),
                          ("%s/cpufreq/boost" % _CPU, "1", "0")):
        now = _read(path)
        if now in (on, off):
            return Setting("turbo/boost", "on" if now == on else "off", now == off,
                           "echo %s | sudo tee /%s" % (off, path), ((path, off),))
    return Setting("turbo/boost", "not exposed", True)


def _interrupts(cpu: int) -> Setting:
    """The interrupts whose affinity lets the kernel deliver them to ``cpu``: each one
    taken there stops the timed code. Tuning writes each affinity without ``cpu`` (and
    the default of new interrupts); irqbalance, where it runs, moves them back."""
    name = "interrupts on CPU %d" % cpu
    online = _host.parse_cpu_list(_read("%s/online" % _CPU) or "")
    others = [c for c in online if c != cpu]
    allowed = {}
    for path in sorted((ROOT / _IRQ).glob("*/smp_affinity_list")):
        relative = path.relative_to(ROOT).as_posix()
        text = _read(relative)
        if text:
            allowed[relative] = _host.parse_cpu_list(text)
    if not allowed:
        return Setting(name, "not exposed (no /proc/irq)", True)
    on_cpu = {path: cpus for path, cpus in allowed.items() if cpu in cpus}
    if not on_cpu or not others:
        return Setting(name, "none of %d may run there" % len(allowed) if not on_cpu
                       else "it is the only CPU online", True)
    writes = tuple((path, _cpu_list([c for c in cpus if c != cpu] or others))
                   for path, cpus in on_cpu.items())
    default = _read("%s/default_smp_affinity" % _IRQ)
    if default and _mask_has(default, cpu):
        writes += (("%s/default_smp_affinity" % _IRQ, _mask_without(default, cpu)),)
    balancer = " (irqbalance runs: it moves them back)" if _irqbalance_runs() else ""
    return Setting(name, "%d of %d may run there%s" % (len(on_cpu), len(allowed), balancer),
                   False, "`sudo ngcc host --tune` moves them to CPU %s%s" % (
                       _cpu_list(others), "; stop irqbalance first (`sudo systemctl stop "
                       "irqbalance`)" if balancer else ""), writes, best_effort=True)


def _cpu_list(cpus: list[int]) -> str:
    return ",".join(map(str, cpus))


def _mask_has(mask: str, cpu: int) -> bool:
    return bool(int(mask.replace(",", ""), 16) >> cpu & 1)


def _mask_without(mask: str, cpu: int) -> str:
    """The kernel's hex CPU mask (``ffffffff,ffffffff``) with ``cpu`` cleared."""
    return "%x" % (int(mask.replace(",", ""), 16) & ~(1 << cpu))


def _irqbalance_runs() -> bool:
    for comm in (ROOT / "proc").glob("[0-9]*/comm"):
        with contextlib.suppress(OSError):
            if comm.read_text().strip() == "irqbalance":
                return True
    return False


def _smt(cpu: int) -> Setting:
    text = _read("%s/cpu%d/topology/thread_siblings_list" % (_CPU, cpu))
    others = [c for c in _host.parse_cpu_list(text) if c != cpu] if text else []
    if not others:
        return Setting("SMT siblings of CPU %d" % cpu, "none", True)
    shown = ",".join(map(str, others))
    return Setting("SMT siblings of CPU %d" % cpu, "CPU %s" % shown, False,
                   "keep CPU %s idle, or `echo off | sudo tee /%s/smt/control` (takes "
                   "the siblings of every core offline)" % (shown, _CPU))


def _isolation(cpu: int) -> Setting:
    text = _read("%s/isolated" % _CPU) or ""
    isolated = _host.parse_cpu_list(text) if text else []
    name = "isolation of CPU %d" % cpu
    if cpu in isolated:
        return Setting(name, "isolated (isolcpus)", True)
    return Setting(name, "shared with the scheduler's other work", False,
                   "add `isolcpus=%d nohz_full=%d rcu_nocbs=%d` to the kernel command line "
                   "(GRUB_CMDLINE_LINUX in /etc/default/grub, then `sudo update-grub`) and "
                   "reboot" % (cpu, cpu, cpu))


def _load() -> Setting:
    one = os.getloadavg()[0]
    return Setting("1-minute load average", "%.2f" % one, one <= _host.LOAD_LIMIT,
                   "stop the other work (`top` shows it), or wait until the machine is "
                   "idle (at most %.1f)" % _host.LOAD_LIMIT)


def _virtual() -> Setting:
    name = _host.hypervisor()
    if name is None:
        return Setting("virtual machine", "no (bare metal)", True)
    return Setting("virtual machine", "yes (%s)" % name, False,
                   "measure on bare metal: other guests share the physical cores")


def unfit(found: list[Setting]) -> list[Setting]:
    """The settings that make the host unfit to publish."""
    return [s for s in found if not s.fit]


def tune(found: list[Setting]) -> list[str]:
    """Write each tunable setting's value (as root), saving the value it had first for
    :func:`reset`; return what was done, a line each.

    Raises:
        PermissionError: not root (the files under ``/sys`` are root's).
        OSError: a file could not be written (the message names it).
    """
    _need_root("--tune")
    state_file = _locks.lock_dir() / STATE
    saved = _saved(state_file)
    done = []
    for setting in found:
        if not setting.tunable:
            continue
        refused = []
        for path, value in setting.writes:
            previous = _read(path)
            if previous is not None:
                saved.setdefault(path, previous)  # the value before the first --tune
                state_file.write_text(json.dumps(saved, indent=1) + "\n")
            try:
                _write(path, value)
            except OSError as exc:
                if not setting.best_effort:
                    raise
                saved.pop(path, None)
                refused.append(exc.strerror or str(exc))
        done.append(_what_was_written(setting, refused))
    return done


def _what_was_written(setting: Setting, refused: list[str]) -> str:
    if len(setting.writes) == 1 and not refused:
        [(path, value)] = setting.writes
        return "%s: was %s; wrote %s to /%s" % (setting.name, setting.now, value, path)
    line = "%s: was %s; wrote %d of %d files" % (
        setting.name, setting.now, len(setting.writes) - len(refused), len(setting.writes))
    return line + ("; the kernel refused %d (%s)" % (len(refused), refused[0]) if refused
                   else "")


def reset() -> list[str]:
    """Put back every value :func:`tune` changed (as root); return what was done. A file
    the kernel no longer takes (an interrupt gone since) is reported, kept in the saved
    state, and the others are put back."""
    _need_root("--reset")
    state_file = _locks.lock_dir() / STATE
    done, kept = [], {}
    for path, previous in _saved(state_file).items():
        try:
            _write(path, previous)
        except OSError as exc:
            kept[path] = previous
            done.append("/%s: not put back (%s)" % (path, exc.strerror or exc))
            continue
        done.append("/%s: %s" % (path, previous))
    if kept:
        state_file.write_text(json.dumps(kept, indent=1) + "\n")
    else:
        with contextlib.suppress(FileNotFoundError):
            state_file.unlink()
    return done


def _need_root(option: str) -> None:
    if os.geteuid() != 0:
        raise PermissionError("%s writes kernel settings under /sys and /proc, which only "
                              "root may change: run `sudo ngcc host %s`" % (option, option))


def _saved(state_file: Path) -> dict[str, str]:
    try:
        saved = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in saved.items()} if isinstance(saved, dict) else {}


def _write(relative: str, value: str) -> None:
    try:
        (ROOT / relative).write_text(value + "\n")
    except OSError as exc:
        raise OSError(exc.errno, "cannot write %s to /%s: %s"
                      % (value, relative, exc.strerror)) from None
