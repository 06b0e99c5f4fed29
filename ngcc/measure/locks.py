"""Locks that keep concurrent campaigns apart: one per trial CPU, one per run directory.

Two campaigns timing on one CPU would slow each other's calls without a trace in the
evidence; two on one run directory would race on its files. A campaign therefore
holds, for as long as it runs:

* the **run-directory lock**, ``<run dir>/.campaign.lock``;
* the **CPU lock** of its trial CPU, ``cpu<N>.lock`` in the lock folder
  (``$XDG_RUNTIME_DIR/ngcc``, else ``/tmp/ngcc-<uid>``).

Both are ``fcntl.flock`` locks on files that hold the holder's pid, run directory and
start time for the messages. The kernel releases a lock when its holder dies, even by
kill -9, so a lock left by a killed campaign is simply taken by the next one; the
files stay behind and mean nothing while unlocked. The locks are advisory: they keep
ngcc campaigns (of one user) apart, not other programs.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.clock import utc_now
from ngcc.base.errors import CpuBusyError, MeasurementWarning, RunDirBusyError
from ngcc.base.untrusted import load_json_file
from ngcc.evidence.model import HostWarning

#: The run-directory lock, inside the run directory.
RUN_DIR_LOCK = ".campaign.lock"
#: The file that tells a run directory (see ``evidence.records.CAMPAIGN_FILE``).
_CAMPAIGN_FILE = "campaign.json"
#: What ``ngcc evaluate`` writes before its campaign (see ``evidence.records.EVALUATION_NAMES``).
_EVALUATION_NAMES = frozenset({"evaluation.json", "builds"})
#: How long to wait for a holder that has just taken a lock to write its facts.
_FACTS_WAIT_SECONDS = 0.5
#: CPU -> the thread of this process that holds its lock now: what that thread measures
#: there itself (a campaign's leak tests) is its own work, not a second campaign's.
_HELD_BY_THREAD: dict[int, int] = {}


@dataclass(frozen=True)
class Holder:
    """The campaign that holds a lock, as it wrote itself into the lock file."""

    pid: int | None
    run_dir: str | None
    started: str | None

    def describe(self) -> str:
        """``pid 123, run directory /x/runs/a, since 2026-…Z`` (what is known of it)."""
        parts = ["pid %s" % (self.pid if self.pid is not None else "unknown")]
        if self.run_dir:
            parts.append("run directory %s" % self.run_dir)
        if self.started:
            parts.append("since %s" % self.started)
        return ", ".join(parts)


# ------------------------------------------------------------------ CPUs

def allowed_cpus() -> list[int]:
    """The CPUs this process may run on, in order."""
    return sorted(os.sched_getaffinity(0))


def check_cpu(cpu: int) -> int:
    """``cpu`` if this process may pin to it, else a ValueError that says why not."""
    allowed = allowed_cpus()
    if isinstance(cpu, bool) or not isinstance(cpu, int):
        raise TypeError("cpu must be an int, not %s" % type(cpu).__name__)
    if cpu in allowed:
        return cpu
    shown = ", ".join(map(str, allowed))
    count = os.cpu_count() or 0
    if cpu < 0 or cpu >= count:
        raise ValueError("CPU %d does not exist: this machine has CPUs 0-%d (allowed to this "
                         "process: %s); choose one with --cpu" % (cpu, count - 1, shown))
    raise ValueError("CPU %d is not allowed to this process (allowed: %s; see taskset or the "
                     "cgroup's cpuset); choose one of those with --cpu" % (cpu, shown))


def lock_dir() -> Path:
    """The folder of the CPU locks: ``$XDG_RUNTIME_DIR/ngcc``, else ``/tmp/ngcc-<uid>``.

    Raises:
        OSError: the folder cannot be made, or is not a private folder of this user.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base = (Path(runtime) / "ngcc" if runtime and Path(runtime).is_absolute()
            and Path(runtime).is_dir() else Path("/tmp") / ("ngcc-%d" % os.getuid()))
    with contextlib.suppress(FileExistsError):
        base.mkdir(mode=0o700)
    info = os.lstat(base)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise OSError("the ngcc lock folder %s is not a private folder of this user (it may "
                      "have been made by someone else); remove it and run again" % base)
    return base


def cpu_holder(cpu: int) -> Holder | None:
    """The campaign that holds ``cpu`` now, or None if it is free (nothing is held)."""
    with _locked(lock_dir() / ("cpu%d.lock" % cpu), {}) as holder:
        return holder


def cpu_issues(cpu: int) -> list[HostWarning]:
    """A host issue when another ngcc campaign holds ``cpu`` now (for ``ngcc check``)."""
    holder = cpu_holder(cpu)
    if holder is None:
        return []
    return [HostWarning("cpu_in_use", "CPU %d is in use by another ngcc campaign (%s): a "
                      "campaign there now would time alongside it; remedy: choose another "
                      "CPU with --cpu, or wait until it has finished"
                      % (cpu, holder.describe()))]


def default_cpu() -> int:
    """The CPU a campaign would take now: the last allowed one that no other ngcc campaign
    holds (CPU 0 takes most interrupts); the last allowed one if all are held."""
    allowed = allowed_cpus()
    return next((cpu for cpu in reversed(allowed) if cpu_holder(cpu) is None), allowed[-1])


#: How long every measurement waits for a CPU another ngcc measurement holds, unless
#: told otherwise: ``ngcc campaign``, ``evaluate`` and ``leak`` (``--wait SECONDS``),
#: ``ngcc.Campaign``, ``ngcc.evaluate`` and ``ngcc.leak`` (``wait=SECONDS``), local Dask
#: workers (``--workers``) alike; 0 refuses at once.
DEFAULT_WAIT_SECONDS = 3600.0
#: How often a waiting campaign looks whether the CPU is free.
POLL_SECONDS = 1.0
#: What a refusal says about waiting: the one rule, in both spellings.
HOW_TO_WAIT = ("to wait for it, give --wait SECONDS (command line) or wait=SECONDS "
               "(Python); both wait %g s by default, 0 refuses at once"
               % DEFAULT_WAIT_SECONDS)


def checked_wait(wait: object) -> float:
    """``wait`` in seconds (None: 0, refuse at once).

    Raises:
        ValueError: not a finite number of seconds >= 0.
    """
    if wait is None:
        return 0.0
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) \
            or not 0 <= wait < float("inf"):
        raise ValueError("wait must be a finite number of seconds >= 0 (0: refuse at once), "
                         "got %r" % (wait,))
    return float(wait)


def warn_waiting(message: str) -> None:
    """What a measurement in Python does by default while it waits for a CPU: one
    :class:`~ngcc.MeasurementWarning` naming the holder (the command line prints the
    line instead), so a notebook does not sit silent for up to an hour."""
    warnings.warn(message, MeasurementWarning, stacklevel=4)


def choose_cpu(cpu: int | None, resume_cpu: int | None = None) -> int:
    """The CPU a campaign will hold, chosen without holding it: ``cpu`` if asked for,
    else ``resume_cpu`` (where a resumed run was measured) if this process may use it,
    else the last allowed CPU no other campaign holds (the last allowed one if all are).

    Raises:
        ValueError: a CPU this process may not run on.
    """
    if cpu is not None:
        return check_cpu(cpu)
    if resume_cpu in allowed_cpus():
        assert resume_cpu is not None
        return resume_cpu
    return default_cpu()


@contextlib.contextmanager
def hold_cpu(cpu: int | None, run_dir: str | os.PathLike[str] | None,
             resume_cpu: int | None = None, wait: float | None = None,
             on_wait: Callable[[str], None] | None = None) -> Iterator[int]:
    """Hold a trial CPU for a campaign (or one measurement outside a run directory,
    ``run_dir`` None: ``ngcc leak``); yield its number.

    ``cpu`` is the CPU asked for; None takes ``resume_cpu`` (the CPU a resumed run was
    measured on) if given, else the last allowed CPU no other campaign holds. A CPU this
    thread holds already is yielded as it is (the campaign's own measurements there).
    ``wait``: seconds to wait for a CPU another campaign holds (None or 0: refuse at
    once; :func:`checked_wait`); ``on_wait`` is told once, in a line naming the holder,
    that it waits.

    Raises:
        CpuBusyError: the CPU asked for (or every allowed CPU) is held by another
            campaign (still, after ``wait``); the message names its pid and run
            directory, and how to wait (:data:`HOW_TO_WAIT`).
        ValueError: a CPU this process may not run on; a negative ``wait``.
    """
    wait = checked_wait(wait)
    facts = _facts(run_dir)
    if cpu is not None:
        candidates = [check_cpu(cpu)]
    elif resume_cpu in allowed_cpus():
        candidates = [resume_cpu]
    else:  # a new run, or one measured where this process may not run (the plan differs)
        resume_cpu = None
        candidates = list(reversed(allowed_cpus()))
    deadline = time.monotonic() + wait
    told = False
    me = threading.get_ident()
    while True:
        held: dict[int, Holder] = {}
        for candidate in candidates:
            if _HELD_BY_THREAD.get(candidate) == me:
                yield candidate
                return
            with _locked(lock_dir() / ("cpu%d.lock" % candidate), facts) as holder:
                if holder is None:
                    _HELD_BY_THREAD[candidate] = me
                    try:
                        yield candidate
                    finally:
                        del _HELD_BY_THREAD[candidate]
                    return
                held[candidate] = holder
        message = _busy_message(held, cpu, resume_cpu, run_dir)
        if time.monotonic() >= deadline:
            if wait:
                message += " (still, after waiting %s)" % _seconds(wait)
            raise CpuBusyError("%s; %s" % (message, HOW_TO_WAIT))
        if not told and on_wait is not None:
            on_wait("waiting up to %s for %s: %s" % (
                _seconds(wait), "CPU %d" % candidates[0] if len(candidates) == 1
                else "a free CPU", "; ".join("CPU %d is held by another ngcc measurement "
                                             "(%s)" % (n, h.describe())
                                             for n, h in sorted(held.items()))))
            told = True
        time.sleep(max(0.0, min(POLL_SECONDS, deadline - time.monotonic())))


def _seconds(value: float) -> str:
    return "%g s" % value


def _busy_message(held: dict[int, Holder], cpu: int | None, resume_cpu: int | None,
                  run_dir: str | os.PathLike[str] | None) -> str:
    if cpu is not None:
        [(number, holder)] = held.items()
        return ("CPU %d is in use by another ngcc campaign (%s): two campaigns on one CPU "
                "time each other; choose another CPU with --cpu, or wait until it has "
                "finished" % (number, holder.describe()))
    if resume_cpu is not None:
        [(number, holder)] = held.items()
        return ("CPU %d, the CPU of run directory %s, is in use by another ngcc "
                "campaign (%s); wait until it has finished (--wait SECONDS) to resume this "
                "run on the same CPU, or start a new --run-dir"
                % (number, run_dir, holder.describe()))
    return ("every CPU this process may use is in use by another ngcc campaign (%s): two "
            "campaigns on one CPU time each other; wait until one has finished"
            % "; ".join("CPU %d: %s" % (n, h.describe()) for n, h in sorted(held.items())))


# ------------------------------------------------------------ run directories

@contextlib.contextmanager
def hold_run_dir(run_dir: str | os.PathLike[str]) -> Iterator[None]:
    """Hold a run directory for a campaign (making the directory if it is new).

    A folder that is not a run directory and not empty is left untouched (the campaign
    refuses it with its own message, and nothing may be written there).

    Raises:
        RunDirBusyError: another campaign holds it; the message names its pid.
    """
    path = Path(run_dir)
    if path.exists() and not _may_hold(path):
        yield
        return
    created = not path.exists()
    path.mkdir(parents=True, exist_ok=True)
    with _locked(path / RUN_DIR_LOCK, _facts(None)) as holder:
        if holder is not None:
            raise RunDirBusyError(
                "run directory %s is in use by another ngcc campaign (%s); wait until it "
                "has finished (then run the same command to resume it), or choose another "
                "--run-dir" % (path, holder.describe()))
        try:
            yield
        except BaseException:
            if created and [p.name for p in path.iterdir()] == [RUN_DIR_LOCK]:
                (path / RUN_DIR_LOCK).unlink()  # refused before it began: leave nothing
                path.rmdir()
            raise


def _may_hold(path: Path) -> bool:
    """Whether a lock file may be made in ``path``: a run directory, or an empty folder
    (leftover temporary files of a killed writer aside)."""
    if not path.is_dir():
        return False
    if (path / _CAMPAIGN_FILE).exists():
        return True
    return all(p.name in _EVALUATION_NAMES or p.name == RUN_DIR_LOCK
               or (p.name.startswith(".") and ".tmp-" in p.name) for p in path.iterdir())


def stored_cpu(run_dir: str | os.PathLike[str]) -> int | None:
    """The trial CPU of the plan in ``run_dir``'s campaign.json, if it has a readable one
    (read as untrusted: a FIFO or a deeply nested file is no answer, never a wait or a
    RecursionError; the campaign then names the file)."""
    try:
        cpu = load_json_file(Path(run_dir) / _CAMPAIGN_FILE)["plan"]["cpu"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no run yet, or a damaged one: the campaign says what is wrong
    return cpu if isinstance(cpu, int) and not isinstance(cpu, bool) else None


@contextlib.contextmanager
def hold_campaign(run_dir: str | os.PathLike[str], cpu: int | None) -> Iterator[int]:
    """Both locks of one campaign: its run directory first (a second campaign on it is
    refused at once), then its trial CPU (see :func:`hold_cpu`); yield the CPU."""
    with hold_run_dir(run_dir):
        resume_cpu = stored_cpu(run_dir) if cpu is None else None
        with hold_cpu(cpu, run_dir, resume_cpu) as chosen:
            yield chosen


# ----------------------------------------------------------------- the lock

@contextlib.contextmanager
def _locked(path: Path, facts: dict[str, object]) -> Iterator[Holder | None]:
    """Try to take the lock ``path``; yield None while holding it (with ``facts`` written
    into it), or the current holder if another process has it (nothing is held then).

    An empty ``facts`` only probes: the lock is released at once."""
    try:  # never blocks (a FIFO, a device: refused just below)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                     | os.O_NONBLOCK | os.O_NOCTTY, 0o600)
    except OSError as exc:
        raise OSError(exc.errno, "cannot open the lock file %s: %s" % (path, exc.strerror)
                      ) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "the lock file %s is not a regular file (a FIFO, a "
                          "device or a socket): remove it, ngcc makes its own" % path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield _holder(fd)
            return
        if facts:
            _write_facts(fd, path, facts)
        yield None
    finally:
        os.close(fd)  # releases the lock


def _write_facts(fd: int, path: Path, facts: dict[str, object]) -> None:
    """Write who holds the lock into it; an OSError names the lock file."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(facts) + "\n").encode(), 0)
    except OSError as exc:
        raise OSError(exc.errno, "cannot write the lock file %s: %s" % (path, exc.strerror)
                      ) from None


def _holder(fd: int) -> Holder:
    """What the holder wrote into the lock; it may be writing it right now."""
    deadline = time.monotonic() + _FACTS_WAIT_SECONDS
    while True:
        try:
            facts = json.loads(os.pread(fd, 4096, 0))
            pid = int(facts["pid"])
            if _alive(pid) or time.monotonic() > deadline:
                return Holder(pid, facts.get("run_dir"), facts.get("started"))
        except (ValueError, KeyError, TypeError):
            if time.monotonic() > deadline:
                return Holder(None, None, None)
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _facts(run_dir: str | os.PathLike[str] | None) -> dict[str, object]:
    """What a holder writes into its lock: pid, start time, and the run directory of a
    CPU lock."""
    facts: dict[str, object] = {"pid": os.getpid(), "started": utc_now()}
    if run_dir is not None:
        facts["run_dir"] = str(Path(run_dir).resolve())
    return facts
