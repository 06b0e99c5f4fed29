"""Locks that keep concurrent campaigns apart: one per trial CPU, one per run directory.

Two campaigns timing on one CPU would slow each other's calls without a trace in the
evidence; two on one run directory would race on its files. A campaign therefore
holds, for as long as it runs:

* the **run-directory lock**, ``<run dir>/.campaign.lock``;
* the **CPU lock** of its trial CPU, ``cpu<N>.lock`` in the lock folder
  (``$XDG_RUNTIME_DIR/ngcc``, else ``/tmp/ngcc-<uid>``).

Both are ``fcntl.flock`` locks on files that hold the holder's pid, command, run
directory and start time for the messages (and, for a campaign's CPU, when it expects
to end: :func:`expect_end`). The kernel releases a lock when its holder dies, even by
kill -9, so a lock left by a killed campaign is simply taken by the next one; the
files stay behind and mean nothing while unlocked. The locks are advisory: they keep
ngcc campaigns (of one user) apart, not other programs.

Measurements that wait for a CPU queue for it, first come, first served
(``measure.tickets``), and tell their ``on_wait`` where the wait stands
(``measure.waiting``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shlex
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ngcc.base.clock import utc_now
from ngcc.base.errors import CpuBusyError, RunDirBusyError
from ngcc.base.progress import clock
from ngcc.base.untrusted import load_json_file
from ngcc.evidence.model import HostWarning
from ngcc.measure import tickets as _tickets
from ngcc.measure.waiting import DEFAULT_WAIT_SECONDS as DEFAULT_WAIT_SECONDS  # the rule's
from ngcc.measure.waiting import HOW_TO_WAIT as HOW_TO_WAIT  # home is measure.waiting;
from ngcc.measure.waiting import POLL_SECONDS as POLL_SECONDS  # its callers name it here
from ngcc.measure.waiting import CpuWait, expected_end, seconds_until
from ngcc.measure.waiting import checked_wait as checked_wait
from ngcc.measure.waiting import show_waiting as show_waiting

#: The run-directory lock, inside the run directory.
RUN_DIR_LOCK = ".campaign.lock"
#: The file that tells a run directory (see ``evidence.records.CAMPAIGN_FILE``).
_CAMPAIGN_FILE = "campaign.json"
#: What ``ngcc evaluate`` writes before its campaign (see ``evidence.records.EVALUATION_NAMES``).
_EVALUATION_NAMES = frozenset({"evaluation.json", "builds"})
#: How long to wait for a holder that has just taken a lock to write its facts.
_FACTS_WAIT_SECONDS = 0.5
_DEAD_HOLDER_SECONDS = 2.0  # a dead holder's lock may stay with a child it was forking
#: CPU -> the thread of this process that holds its lock now: what that thread measures
#: there itself (a campaign's leak tests) is its own work, not a second campaign's.
_HELD_BY_THREAD: dict[int, int] = {}
#: CPU -> the descriptor of its lock file and the facts written there, while this
#: process holds it: :func:`expect_end` writes the campaign's estimate into them.
_HELD_FILES: dict[int, tuple[int, dict[str, object]]] = {}
#: The longest command a lock file keeps (a campaign of many libraries is long).
_COMMAND_CHARS = 160


@dataclass(frozen=True)
class Holder:
    """The campaign that holds a lock, as it wrote itself into the lock file."""

    pid: int | None
    run_dir: str | None
    started: str | None
    command: str | None = None
    ends: str | None = None

    def describe(self) -> str:
        """``pid 123, run directory /x/runs/a, since 2026-…Z, command `ngcc campaign …`,
        expects to end in about 3:10`` (what is known of it)."""
        parts = ["pid %s" % (self.pid if self.pid is not None else "unknown")]
        if self.run_dir:
            parts.append("run directory %s" % self.run_dir)
        if self.started:
            parts.append("since %s" % self.started)
        if self.command:
            parts.append("command `%s`" % self.command)
        left = self.ends_in()
        if left is not None:
            parts.append("expects to end in about %s" % clock(max(0.0, left)))
        return ", ".join(parts)

    def ends_in(self) -> float | None:
        """Seconds until the holder expects to end, by its own estimate (None: none)."""
        return seconds_until(self.ends)


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


def expect_end(seconds_left: float | None) -> None:
    """Write into the lock of every CPU this process holds that its work should end
    ``seconds_left`` from now (a campaign's own estimate): what a measurement waiting
    for one of them shows. None (no estimate yet) writes nothing."""
    if seconds_left is None:
        return
    for fd, facts in list(_HELD_FILES.values()):
        facts["ends"] = expected_end(seconds_left)
        _write_facts(fd, facts)


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
             on_wait: Callable[[CpuWait], None] | None = None) -> Iterator[int]:
    """Hold a trial CPU for a campaign (or one measurement outside a run directory,
    ``run_dir`` None: ``ngcc leak``); yield its number.

    ``cpu`` is the CPU asked for; None takes ``resume_cpu`` (the CPU a resumed run was
    measured on) if given, else the last allowed CPU no other campaign holds. A CPU this
    thread holds already is yielded as it is (the campaign's own measurements there).
    ``wait``: seconds to wait for a CPU another campaign holds (None or 0: refuse at
    once; :func:`checked_wait`). Waiters queue: a free CPU goes to the one that came
    first (``measure.tickets``), across processes. ``on_wait`` is told where the wait
    stands (a :class:`~ngcc.measure.waiting.CpuWait`: who holds the CPU, since when,
    when it expects to end, how many wait before): when it begins, about once a second
    while it lasts, and once when it is over.

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
    me = threading.get_ident()
    own = next((c for c in candidates if _HELD_BY_THREAD.get(c) == me), None)
    if own is not None:
        yield own
        return

    def refusal(held: dict[int, Holder]) -> str:
        message = _busy_message(held, cpu, resume_cpu, run_dir)
        if wait:
            message += " (still, after waiting %s)" % _seconds(wait)
        return "%s; %s" % (message, HOW_TO_WAIT)

    taken, fd = _take(candidates, facts, wait, on_wait, refusal)
    _HELD_BY_THREAD[taken], _HELD_FILES[taken] = me, (fd, facts)
    try:
        yield taken
    finally:
        del _HELD_BY_THREAD[taken], _HELD_FILES[taken]
        os.close(fd)  # releases the lock


def _take(candidates: list[int], facts: dict[str, object], wait: float,
          on_wait: Callable[[CpuWait], None] | None,
          refusal: Callable[[dict[int, Holder]], str]) -> tuple[int, int]:
    """The first of ``candidates`` that is free and promised to no earlier waiter, and
    the descriptor that holds its lock; queued for up to ``wait`` seconds (a ticket
    from the first pass that finds none).

    Raises:
        CpuBusyError: none came free for this waiter within ``wait`` (``refusal``).
    """
    folder = lock_dir()
    started = time.monotonic()
    shown: CpuWait | None = None
    with contextlib.ExitStack() as queue:
        number: int | None = None  # the ticket, once this waiter has one
        try:
            while True:
                held: dict[int, Holder] = {}
                ahead: set[int] = set()
                for candidate in candidates:
                    before = _tickets.ahead(folder, candidate, number)
                    ahead.update(t.number for t in before)
                    state = _try_lock(folder / ("cpu%d.lock" % candidate),
                                      None if before else facts)
                    if isinstance(state, int):
                        shown = shown and CpuWait(shown.cpus, waited=_since(started),
                                                  limit=wait, over=True, taken=candidate)
                        return candidate, state
                    if state is None:  # free, but promised to the first waiter before
                        state = _promised(before[0])
                    held[candidate] = state
                waited = _since(started)
                if waited >= wait:
                    raise CpuBusyError(refusal(held))
                if number is None:
                    number = queue.enter_context(_tickets.ticket(folder, candidates, facts))
                shown = CpuWait(tuple(candidates), held, len(ahead), waited, wait)
                if on_wait is not None:
                    on_wait(shown)
                time.sleep(max(0.0, min(POLL_SECONDS, wait - _since(started))))
        finally:
            if shown is not None and on_wait is not None:
                on_wait(shown if shown.over else CpuWait(
                    shown.cpus, waited=_since(started), limit=wait, over=True))


def _since(started: float) -> float:
    return time.monotonic() - started


def _promised(first: _tickets.Ticket) -> Holder:
    """The waiter a free CPU is promised to, as its holder-to-be."""
    return Holder(first.pid, first.run_dir, first.arrived, first.command)


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
    state = _try_lock(path, facts or None)
    if not isinstance(state, int):
        yield state
        return
    try:
        yield None
    finally:
        os.close(state)  # releases the lock


def _try_lock(path: Path, facts: dict[str, object] | None) -> int | Holder | None:
    """Take the lock ``path`` with ``facts`` written into it: its descriptor (closing it
    releases the lock); or the current holder if another process has it; ``facts``
    None only probes: None if it is free (nothing is held)."""
    try:  # never blocks (a FIFO, a device: refused just below)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                     | os.O_NONBLOCK | os.O_NOCTTY, 0o600)
    except OSError as exc:
        raise OSError(exc.errno, "cannot open the lock file %s: %s" % (path, exc.strerror)
                      ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "the lock file %s is not a regular file (a FIFO, a "
                      "device or a socket): remove it, ngcc makes its own" % path)
    # A holder killed while forking leaves the lock to its child until that child execs
    # (O_CLOEXEC) or exits: a moment, after which the lock is free.
    deadline = time.monotonic() + _DEAD_HOLDER_SECONDS
    while not _flock(fd):
        holder = _holder(fd)  # waits a moment for a live holder's facts
        if holder.pid is None or _alive(holder.pid) or time.monotonic() > deadline:
            os.close(fd)
            return holder
    if facts is None:
        os.close(fd)
        return None
    try:
        _write_facts(fd, facts)
    except OSError as exc:
        os.close(fd)
        raise OSError(exc.errno, "cannot write the lock file %s: %s" % (path, exc.strerror)
                      ) from None
    return fd


def _flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _write_facts(fd: int, facts: dict[str, object]) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(facts) + "\n").encode(), 0)


def _holder(fd: int) -> Holder:
    """What the holder wrote into the lock; it may be writing it right now."""
    deadline = time.monotonic() + _FACTS_WAIT_SECONDS
    while True:
        try:
            facts = json.loads(os.pread(fd, 4096, 0))
            pid = int(facts["pid"])
            if _alive(pid) or time.monotonic() > deadline:
                return Holder(pid, _text(facts.get("run_dir")), _text(facts.get("started")),
                              _text(facts.get("command")), _text(facts.get("ends")))
        except (ValueError, KeyError, TypeError):
            if time.monotonic() > deadline:
                return Holder(None, None, None)
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError as exc:  # PermissionError: another user's process, alive
        return not isinstance(exc, ProcessLookupError)
    return True


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _facts(run_dir: str | os.PathLike[str] | None) -> dict[str, object]:
    """What a holder writes into its lock: pid, start time, command, and the run
    directory of a CPU lock."""
    facts: dict[str, object] = {"pid": os.getpid(), "started": utc_now(),
                                "command": _command()}
    if run_dir is not None:
        facts["run_dir"] = str(Path(run_dir).resolve())
    return facts


def _command() -> str:
    """This process's command line, shortened (``python3 -m ngcc campaign SM3 …``)."""
    try:
        words = Path("/proc/self/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        text = " ".join(shlex.join(os.fsdecode(word) for word in words).split())  # one line
    except OSError:
        text = "pid %d" % os.getpid()
    return text if len(text) <= _COMMAND_CHARS else text[:_COMMAND_CHARS - 1] + "…"
