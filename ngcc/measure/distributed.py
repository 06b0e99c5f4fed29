"""Distributed campaigns on Dask distributed: ``--workers N`` and ``--scheduler ADDRESS``.

Dask is the engine — scheduler, queue, transfers, retries; ngcc adds no scheduler, queue
or RPC of its own. A job (one library × length, ``measure.job.JobOrder``) is one Dask task
that calibrates and measures the job from start to end on one worker
(``measure.worker.run_job``);
the campaign, in the client, checks each result and writes its record. What ngcc adds:

* **One CPU per worker.** Every worker offers one ``cpu`` resource and every job asks
  for it, so a worker runs one job at a time; the worker measures on the CPU named by
  ``$NGCC_CPU`` in its environment (else the one CPU its affinity allows, as under
  ``taskset -c N``), holding that CPU's lock (``measure.locks``) for the job. ``--workers N``
  starts a local cluster (``SpecCluster``, LocalCluster's base, so that each worker gets
  its own ``NGCC_CPU``): one worker process per CPU, the last N this process may use,
  whose locks the client holds for the whole run instead (waiting for them as every
  measurement waits for its CPU: ``wait``).
* **A local cluster no one else can reach.** Its scheduler lives in this process and
  runs what any client sends it, so it speaks TLS only, with a key made for this run
  (``Security.temporary()``, held in memory): its scheduler, its workers and the
  campaign's client share it, and a client without it (a library that found the
  listening socket) is refused before it can send anything. A scheduler given with
  ``--scheduler`` is the user's: its security is theirs (``tls://`` with their own
  certificates, Dask's ``distributed.comm.tls`` settings).
* **Libraries travel by content.** A worker plugin carries each library's bytes with
  its sha256 to every worker, once, including workers that join or restart later; the
  worker checks the bytes, keeps them in a private folder, and checks the sha256 of the
  file again before each job: a mismatch is refused (:class:`LibraryMismatchError`'s
  message, the job's error), never measured; the job engine then checks it before and
  after each trial (``measure.guard.check_library``), as on every executor.
* **A lost worker is said.** When a worker dies mid-job, Dask resubmits the job (its
  partial trials died with the worker: a job is measured from the start on one
  worker); the scheduler's ``remove-worker`` event names the jobs it was running, and
  the result says so (``JobResult.lost``), which the campaign warns about and records.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import dask
from distributed import Client, Nanny, Scheduler, SpecCluster, wait

from ngcc.base.errors import (
    CpuBusyError,
    DistributedError,
    SandboxUnavailableError,
)
from ngcc.base.version import __version__
from ngcc.driver.contract import TrialRunner
from ngcc.measure import locks as _locks
from ngcc.measure.job import JobOrder, JobResult, Lost
from ngcc.measure.waiting import CpuWait
from ngcc.measure.worker import CPU_ENV, HELD_ENV, LibraryPlugin, run_job, worker_version

#: The Dask worker resource every job asks one of (``dask worker --resources cpu=1``).
RESOURCE = "cpu"
#: Seconds to wait for a worker when a scheduler has none yet.
WORKER_WAIT_SECONDS = 60.0

_log = logging.getLogger(__name__)


class DaskExecutor:
    """A :class:`~ngcc.measure.job.JobExecutor` over a Dask client: one task per job, each
    asking for one ``cpu`` resource.

    Args:
        client: a connected ``distributed.Client``.
        description: what ``campaign.json`` records as the executor.
    """

    def __init__(self, client: Client, description: str):
        self.client = client
        self.description = description
        #: The CPUs whose locks this process holds for its local workers.
        self.held: tuple[int, ...] = ()

    def describe(self) -> str:
        """``dask LocalCluster: 2 workers, CPUs 0, 1`` or ``dask tcp://host:8786``."""
        return self.description

    def measure(self, orders: Sequence[JobOrder], runner: TrialRunner
                ) -> Iterator[JobResult]:
        """Submit every order, yield each result as it completes (with its lost attempts);
        cancel what is still out when the caller stops."""
        if not orders:
            return
        self._check_workers()
        plugin = LibraryPlugin("ngcc-libraries-" + uuid.uuid4().hex[:12], _payload(orders))
        self._register(plugin)
        futures = {self.client.submit(run_job, order, runner, key=order.key, pure=False,
                                      resources={RESOURCE: 1}): order for order in orders}
        try:
            while futures:
                for future in self._next_done(list(futures)):
                    order = futures.pop(future)
                    yield replace(self._result(order, future), lost=self._lost(order.key))
        finally:
            for future in futures:
                future.cancel()
            self._unregister(plugin.name)

    def _next_done(self, futures: list[Any]) -> list[Any]:
        """The futures done now, waiting for at least one; a cluster left without any
        worker that could take a job (for :data:`WORKER_WAIT_SECONDS` in a row) is an
        error, not a wait without end."""
        while True:
            try:
                return list(wait(futures, timeout=WORKER_WAIT_SECONDS,
                                 return_when="FIRST_COMPLETED").done)
            except (TimeoutError, asyncio.TimeoutError):
                if not self._cpu_workers():
                    raise DistributedError(
                        "no worker of the scheduler at %s that offers the %r resource is left "
                        "(none for %.0f s), so %d job(s) cannot be measured; start workers "
                        "(README, Distributed campaigns) and run the same command again to "
                        "resume" % (self.client.scheduler.address, RESOURCE,
                                    WORKER_WAIT_SECONDS, len(futures))) from None

    @staticmethod
    def _result(order: JobOrder, future: Any) -> JobResult:
        try:
            result: JobResult = future.result()
        except SandboxUnavailableError:  # the same on every job of that host: stop once
            raise
        except Exception as exc:  # KilledWorker, a lost scheduler, a bug on a worker
            result = JobResult(key=order.key, worker="dask", environment=None,
                               status="error", error="the job failed on the Dask cluster: "
                               "%s: %s" % (type(exc).__name__, exc))
        future.release()
        return result

    def _cpu_workers(self) -> list[str]:
        """The workers that offer the ``cpu`` resource now."""
        workers = self.client.scheduler_info()["workers"]
        return [address for address, facts in workers.items()
                if facts.get("resources", {}).get(RESOURCE)]

    def _check_workers(self) -> None:
        try:
            self.client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
        except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11 on
            raise DistributedError(
                "no Dask worker joined the scheduler at %s within %.0f s; start one per CPU "
                "(README, Distributed campaigns)" % (self.client.scheduler.address,
                                                     WORKER_WAIT_SECONDS)) from None
        other = {address: version for address, version in
                 self.client.run(worker_version).items() if version != __version__}
        if other:
            raise DistributedError(
                "worker(s) of the scheduler at %s run another ngcc than this client's %s "
                "(%s): install ngcc %s on them, so that jobs and results mean the same on "
                "both sides" % (self.client.scheduler.address, __version__, ", ".join(
                    "%s: %s" % item for item in sorted(other.items())), __version__))
        if not self._cpu_workers():
            raise DistributedError(
                "no worker of the scheduler at %s offers the %r resource, so no job would "
                "ever run: start each worker with --nthreads 1 --resources %s=1 and %s=<its "
                "CPU> (README, Distributed campaigns)" % (self.client.scheduler.address,
                                                          RESOURCE, RESOURCE, CPU_ENV))

    def _register(self, plugin: LibraryPlugin) -> None:
        register = getattr(self.client, "register_plugin", None)
        if register is not None:
            register(plugin, name=plugin.name)
        else:  # distributed before 2023.9 (newer ones dropped this name)
            self.client.register_worker_plugin(  # type: ignore[attr-defined, unused-ignore]
                plugin, name=plugin.name)

    def _unregister(self, name: str) -> None:
        with contextlib.suppress(Exception):  # a lost scheduler has forgotten it anyway
            self.client.unregister_worker_plugin(name)

    def _lost(self, key: str) -> tuple[Lost, ...]:
        """The attempts at job ``key`` that died with their worker (the scheduler's
        ``remove-worker`` events)."""
        lost = []
        for _, event in self.client.get_events("all"):
            if not isinstance(event, dict) or event.get("action") != "remove-worker":
                continue
            if key in event.get("processing-tasks", ()):
                lost.append(Lost(str(event.get("worker")), "the worker was lost while it "
                                 "measured the job"))
            elif key in event.get("lost-computed-tasks", ()):
                lost.append(Lost(str(event.get("worker")), "the worker was lost before the "
                                 "job's result reached the client"))
        return tuple(lost)


def _payload(orders: Sequence[JobOrder]) -> dict[str, tuple[str, bytes]]:
    """sha256 → (file name, bytes) of the orders' libraries, read once each (the sha256
    is the plan's: a file changed since is refused by the workers)."""
    payload: dict[str, tuple[str, bytes]] = {}
    for order in orders:
        if order.library_sha256 not in payload:
            path = order.instance.library
            payload[order.library_sha256] = (path.name, path.read_bytes())
    return payload


def local_cpus(workers: int) -> list[int]:
    """The CPUs of ``workers`` local workers: the last ones this process may use.

    Raises:
        DistributedError: fewer CPUs are allowed.
    """
    allowed = _locks.allowed_cpus()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise DistributedError("--workers must be a positive number of CPUs, got %r"
                               % (workers,))
    if workers > len(allowed):
        raise DistributedError(
            "--workers %d: this process may use only %d CPU(s) (%s), and each worker needs "
            "one of its own; use --workers %d or fewer" % (
                workers, len(allowed), ", ".join(map(str, allowed)), len(allowed)))
    return allowed[-workers:]


def _hold_local_cpus(stack: contextlib.ExitStack, cpus: Sequence[int],
                     run_dir: str | os.PathLike[str], wait: float | None,
                     on_wait: Callable[[CpuWait], None] | None) -> None:
    """Hold the lock of every CPU of a local cluster in ``stack``, waiting up to ``wait``
    seconds for all of them together (the one waiting rule, ``measure.locks``); the wait
    for each CPU is told ``of --workers N``.

    Raises:
        CpuBusyError: one is still held by another measurement (named), with how to
            wait or to use fewer workers.
    """
    wait = _locks.checked_wait(wait)
    deadline = time.monotonic() + wait

    def tell(waited_before: float, status: CpuWait) -> None:
        """With the whole wait (each CPU waits for what is left of it)."""
        if on_wait is not None:
            on_wait(replace(status, purpose="of --workers %d" % len(cpus), limit=wait,
                            waited=waited_before + status.waited))

    for cpu in cpus:
        try:
            left = max(0.0, deadline - time.monotonic())
            stack.enter_context(_locks.hold_cpu(
                cpu, run_dir, wait=left, on_wait=functools.partial(tell, wait - left)))
        except CpuBusyError as exc:
            holder = _locks.cpu_holder(cpu)
            raise CpuBusyError(
                "--workers %d needs CPU %d (the workers take the last %d CPUs this process "
                "may use), which another ngcc measurement holds (%s)%s; use fewer workers, "
                "or %s" % (len(cpus), cpu, len(cpus), holder.describe() if holder
                           else "it has just let it go", " (still, after waiting %g s)"
                           % wait if wait else "", _locks.HOW_TO_WAIT)) from exc


def local_security() -> Any:
    """A ``distributed.security.Security`` with a TLS key and certificate made now, in
    memory, for one local cluster: its scheduler, workers and client, and no one else.

    Raises:
        DistributedError: the ``cryptography`` package (which makes the key) is missing.
    """
    from distributed.security import Security

    try:
        return Security.temporary()
    except ImportError:
        raise DistributedError(
            "--workers needs the cryptography package for the TLS key of its local "
            "cluster, which is not installed in this Python: pip install "
            '"ngcc[distributed]"') from None


@contextlib.contextmanager
def local_executor(workers: int, run_dir: str | os.PathLike[str] = ".",
                   wait: float | None = None,
                   on_wait: Callable[[CpuWait], None] | None = None
                   ) -> Iterator[DaskExecutor]:
    """A local Dask cluster of ``workers`` worker processes, one per CPU
    (:func:`local_cpus`), each told its CPU in ``$NGCC_CPU``; closed afterwards.

    This process holds the lock of every one of those CPUs for as long as the cluster
    runs (naming ``run_dir``; waiting up to ``wait`` seconds for a CPU another
    measurement holds, ``on_wait`` told), so no other campaign starts on them
    meanwhile; its workers, told so in ``$NGCC_CPU_HELD``, take no lock of their own.
    Scheduler, workers and client speak TLS with a key of this cluster's
    (:func:`local_security`): a client without it is refused.

    Raises:
        DistributedError: see :func:`local_cpus` and :func:`local_security`.
        CpuBusyError: another measurement holds one of the CPUs (still, after ``wait``).
    """
    cpus = local_cpus(workers)
    with contextlib.ExitStack() as held:
        _hold_local_cpus(held, cpus, run_dir, wait, on_wait)
        security = local_security()
        # its HTTP server (no dashboard; Dask's info, proxy and metrics routes) serves no
        # route, on a port of its own: nothing there for a library, and no clash with a
        # cluster of someone else's on Dask's default 8787
        scheduler = {"cls": Scheduler, "options": {
            "host": "127.0.0.1", "port": 0, "dashboard": False, "protocol": "tls",
            "security": security, "dashboard_address": "127.0.0.1:0"}}
        specs = {"cpu%d" % cpu: {"cls": Nanny, "options": {
            "host": "127.0.0.1", "nthreads": 1, "resources": {RESOURCE: 1},
            "env": {CPU_ENV: str(cpu), HELD_ENV: "1"}, "silence_logs": logging.ERROR,
            "protocol": "tls", "security": security}} for cpu in cpus}
        with dask.config.set({"distributed.scheduler.http.routes": []}):
            cluster = SpecCluster(workers=specs, scheduler=scheduler,
                                  silence_logs=logging.ERROR, security=security)
        try:
            with Client(cluster, security=security) as client:
                client.wait_for_workers(len(cpus))
                executor = DaskExecutor(client, "dask LocalCluster: %d worker%s, CPU%s %s" % (
                    len(cpus), "s" if len(cpus) > 1 else "", "s" if len(cpus) > 1 else "",
                    ", ".join(map(str, cpus))))
                executor.held = tuple(cpus)
                yield executor
        finally:
            cluster.close()


@contextlib.contextmanager
def remote_executor(address: str, timeout: float = 10.0) -> Iterator[DaskExecutor]:
    """The Dask scheduler at ``address`` (``tcp://HOST:PORT``) and its workers. Its
    security is the user's: ``tls://HOST:PORT`` with their certificates in Dask's
    configuration (``distributed.comm.tls``); a ``tcp://`` scheduler runs what any
    client that reaches it sends (trusted networks only).

    Raises:
        DistributedError: the scheduler cannot be reached.
    """
    try:
        client = Client(address, timeout=timeout)
    except (OSError, asyncio.TimeoutError, ValueError) as exc:
        raise DistributedError(
            "cannot reach the Dask scheduler at %s (%s): start it with `dask scheduler "
            "--port PORT` and give its address as --scheduler tcp://HOST:PORT"
            % (address, exc)) from None
    with client:
        yield DaskExecutor(client, "dask %s" % address)
