"""What makes this host unfit to publish, setting by setting, with the command that
fixes each (``ngcc host``); and the settings that may change at run time, applied as
root (``--tune``) and put back (``--reset``), as pyperf's ``system tune`` does.

Each :class:`Setting` says what it is now, whether it is fit, and how to fix it: the
measuring CPU's cpufreq governor and turbo/boost (tunable: a value written to a file
under ``/sys``), its SMT siblings, whether the kernel isolates it (``isolcpus``), the
load and a hypervisor (not tunable here: they take a reboot, other CPUs offline, or
another machine). ``--tune`` saves each value it changes in the lock folder
(:data:`STATE`) before it writes, so ``--reset`` restores what was there. Every path is
read under :data:`ROOT` (tests give a tree of their own).
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


@dataclass(frozen=True)
class Setting:
    """One setting of the host as a measurement sees it.

    Attributes:
        name: what it is (``governor of CPU 3``).
        now: its value now, in words.
        fit: whether it is as publishing needs it.
        fix: the command (or the step) that makes it fit; empty when fit.
        path: the file ``--tune`` writes (relative to :data:`ROOT`; None: not tunable).
        tuned: the value ``--tune`` writes there.
    """

    name: str
    now: str
    fit: bool
    fix: str = ""
    path: str | None = None
    tuned: str | None = None

    @property
    def tunable(self) -> bool:
        return not self.fit and self.path is not None


def _read(relative: str) -> str | None:
    try:
        return (ROOT / relative).read_text().strip()
    except OSError:
        return None


def settings(cpu: int) -> list[Setting]:
    """Every setting, for a measurement pinned to ``cpu``."""
    return [_governor(cpu), _boost(), _smt(cpu), _isolation(cpu), _load(), _virtual()]


def _governor(cpu: int) -> Setting:
    path = "%s/cpu%d/cpufreq/scaling_governor" % (_CPU, cpu)
    name = "governor of CPU %d" % cpu
    now = _read(path)
    if now is None:
        return Setting(name, "not exposed (no cpufreq: the clock is not set here)", True)
    return Setting(name, now, now == "performance",
                   "echo performance | sudo tee /%s" % path, path, "performance")


def _boost() -> Setting:
    for path, on, off in (("%s/intel_pstate/no_turbo" % _CPU, "0", "1"),
                          ("%s/cpufreq/boost" % _CPU, "1", "0")):
        now = _read(path)
        if now in (on, off):
            return Setting("turbo/boost", "on" if now == on else "off", now == off,
                           "echo %s | sudo tee /%s" % (off, path), path, off)
    return Setting("turbo/boost", "not exposed", True)


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
        assert setting.path is not None and setting.tuned is not None
        previous = _read(setting.path)
        if previous is not None:
            saved.setdefault(setting.path, previous)  # the value before the first --tune
            state_file.write_text(json.dumps(saved, indent=1) + "\n")
        _write(setting.path, setting.tuned)
        done.append("%s: was %s; wrote %s to /%s" % (setting.name, setting.now,
                                                     setting.tuned, setting.path))
    return done


def reset() -> list[str]:
    """Put back every value :func:`tune` changed (as root); return what was done."""
    _need_root("--reset")
    state_file = _locks.lock_dir() / STATE
    done = []
    for path, previous in _saved(state_file).items():
        _write(path, previous)
        done.append("/%s: %s" % (path, previous))
    with contextlib.suppress(FileNotFoundError):
        state_file.unlink()
    return done


def _need_root(option: str) -> None:
    if os.geteuid() != 0:
        raise PermissionError("%s writes kernel settings under /sys, which only root may "
                              "change: run `sudo ngcc host %s`" % (option, option))


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
