"""The worker's side of a distributed campaign (:mod:`ngcc.measure.distributed`): the
library copies a :class:`LibraryPlugin` carries by content and checks, the CPU a worker
measures on (``$NGCC_CPU`` or its affinity), and :func:`run_job`, the Dask task of one
job."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin
from distributed import get_worker as _get_worker

from ngcc.base.errors import (
    CpuBusyError,
    DistributedError,
    LibraryMismatchError,
    SandboxUnavailableError,
)
from ngcc.base.files import sha256_file
from ngcc.driver.contract import TrialRunner
from ngcc.measure import locks as _locks
from ngcc.measure.job import JobOrder, JobResult, measure_job

#: The environment variable that tells a worker its CPU.
CPU_ENV = "NGCC_CPU"
#: Set to ``1`` by a local cluster: its client holds the lock of the worker's CPU.
HELD_ENV = "NGCC_CPU_HELD"
#: The start of the name of a worker's folder of library copies (in the temp folder).
COPIES_PREFIX = "ngcc-libraries-"

#: This worker process's copy of each library it was sent, by sha256.
_LIBRARIES: dict[str, Path] = {}
#: Why the bytes sent for a sha256 were refused, by sha256.
_REFUSED: dict[str, str] = {}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _where() -> str:
    """``worker tcp://10.0.0.5:40331 (host lab-3)``: this worker, for messages."""
    try:
        address = _get_worker().address
    except ValueError:  # not in a worker (the tests call the worker side directly)
        address = "pid %d" % os.getpid()
    return "worker %s (host %s)" % (address, os.uname().nodename)


class LibraryPlugin(WorkerPlugin):
    """Carries libraries by content to every worker (and to workers that join later).

    Args:
        name: the plugin's name on the cluster (one per campaign start).
        libraries: sha256 → (file name, bytes) of every library of the jobs.
    """

    def __init__(self, name: str, libraries: dict[str, tuple[str, bytes]]):
        self.name = name
        self.libraries = libraries
        self.folder: Path | None = None

    def setup(self, worker: Any = None) -> None:
        """Check each library's bytes against its sha256 and keep a private copy (in a
        folder named by this process, after removing those of dead worker processes)."""
        _remove_stale_copies()
        self.folder = Path(tempfile.mkdtemp(prefix="%s%d-" % (COPIES_PREFIX, os.getpid())))
        for sha, (file_name, data) in self.libraries.items():
            actual = _sha256(data)
            if actual != sha:
                _REFUSED[sha] = ("the bytes sent for %s have sha256 %s, not the plan's %s"
                                 % (file_name, actual, sha))
                continue
            path = self.folder / ("%s-%s" % (sha[:16], file_name))
            path.write_bytes(data)
            path.chmod(0o500)
            _LIBRARIES[sha] = path
            _REFUSED.pop(sha, None)

    def teardown(self, worker: Any = None) -> None:
        """Forget the libraries and remove the copies."""
        for sha in self.libraries:
            _LIBRARIES.pop(sha, None)
            _REFUSED.pop(sha, None)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _remove_stale_copies() -> None:
    """Remove the library folders of worker processes that died without their teardown
    (kill -9): ``ngcc-libraries-<pid>-*`` of a pid that no longer runs."""
    for folder in Path(tempfile.gettempdir()).glob(COPIES_PREFIX + "*-*"):
        pid = folder.name[len(COPIES_PREFIX):].partition("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def worker_library(order: JobOrder) -> Path:
    """This worker's copy of the order's library, its sha256 checked now.

    Raises:
        LibraryMismatchError: the bytes sent or the copy kept differ from the plan's.
        DistributedError: the library was never sent to this worker.
    """
    sha, name = order.library_sha256, order.instance.library.name
    remedy = ("the library changed after the campaign was planned, or was damaged on the "
              "way: restore the file the plan names (or rebuild it and start a new "
              "--run-dir)")
    if sha in _REFUSED:
        raise LibraryMismatchError("%s refused library %s of %s: %s; %s"
                                   % (_where(), name, order.label, _REFUSED[sha], remedy))
    path = _LIBRARIES.get(sha)
    if path is None:
        raise DistributedError("%s was not sent library %s of %s (sha256 %s): its library "
                               "plugin is missing; restart the worker" % (_where(), name,
                                                                          order.label, sha))
    actual = sha256_file(path)
    if actual != sha:
        raise LibraryMismatchError("%s refused library %s of %s: its copy %s has sha256 %s, "
                                   "not the plan's %s; %s" % (_where(), name, order.label,
                                                              path, actual, sha, remedy))
    return path


def worker_cpu() -> int:
    """The CPU this worker measures on: ``$NGCC_CPU``, else the one CPU its affinity
    allows (``taskset -c N dask worker ...``).

    Raises:
        DistributedError: neither says one CPU this process may use.
    """
    text = os.environ.get(CPU_ENV)
    allowed = _locks.allowed_cpus()
    if text is None:
        if len(allowed) == 1:
            return allowed[0]
        raise DistributedError(
            "%s was not told its CPU: start each worker with %s=<cpu> in its environment "
            "(one worker per CPU: %s=3 dask worker tcp://SCHEDULER:8786 --nworkers 1 "
            "--nthreads 1 --resources cpu=1), or pin it with taskset -c <cpu>"
            % (_where(), CPU_ENV, CPU_ENV))
    try:
        return _locks.check_cpu(int(text))
    except (ValueError, TypeError) as exc:
        raise DistributedError("%s: %s=%r is not a CPU it may use: %s"
                               % (_where(), CPU_ENV, text, exc)) from None


def worker_version() -> str:
    """The ngcc version of this worker (the client refuses workers of another one)."""
    from ngcc.base import version as _version

    return _version.__version__


def run_job(order: JobOrder, runner: TrialRunner) -> JobResult:
    """The Dask task of one job: this worker's CPU and copy of the library, the CPU's
    lock for the job (unless a local cluster's client holds it), then
    :func:`ngcc.measure.job.measure_job`. A refusal is the result's
    error (status ``error``), never an exception, except a kernel that refuses the
    driver's isolation: that stops the campaign once, naming the worker
    (:class:`~ngcc.base.errors.SandboxUnavailableError`)."""
    where = _where()
    try:
        cpu = worker_cpu()
        library = worker_library(order)
        held = os.environ.get(HELD_ENV) == "1"  # a local cluster's client holds the lock
        with contextlib.nullcontext() if held else _locks.hold_cpu(cpu, order.run_dir):
            return measure_job(order, runner, cpu, where, library, order.library_sha256)
    except (DistributedError, CpuBusyError) as exc:
        return JobResult(key=order.key, worker=where, environment=None, status="error",
                         error=str(exc))
    except SandboxUnavailableError as exc:
        raise SandboxUnavailableError("%s: %s" % (where, exc)) from None
