"""Campaigns by whole jobs: the executor seam (``_jobs``) and Dask (``_distributed``).

The seam is tested in process with the fakes (``SerialExecutor``); the Dask tests start a
local cluster of two worker processes (``--workers 2``) and need ``ngcc[distributed]``
(CI installs it: ``.ci/run``); without Dask only they are skipped, and say so.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
from _fakes import FakeKat, FakeRunner, KillingRunner, fixed_host

import ngcc
from ngcc.base.errors import DistributedError, LibraryMismatchError
from ngcc.cli import main as _cli
from ngcc.measure import executors as _executors
from ngcc.measure import job as _jobs
from ngcc.measure import locks as _locks
from ngcc.measure import plan as _plan

HAVE_DASK = importlib.util.find_spec("distributed") is not None
needs_dask = pytest.mark.skipif(
    not HAVE_DASK, reason='Dask distributed is not installed here (pip install '
    '"ngcc[distributed]"; CI installs it), so no local cluster can be started')

#: A real local cluster: worker processes, real pinned trials or a real Dask scheduler
#: (the end-to-end tier). The campaign runs on the test host as it is, so its warnings
#: (load, hypervisor, preempted trials) say how busy the host is, not what the test checks.
real_cluster = pytest.mark.e2e


def on_this_host(test):
    """A test whose campaign warns about the host it runs on (expected, not checked)."""
    return pytest.mark.filterwarnings("ignore::ngcc.MeasurementWarning")(test)


TESTS = Path(__file__).resolve().parent
INSTANCES = ["pseudoXOF-512", "SM3"]
LENGTHS = [64, 1024]
#: Where an in-process test cluster's HTTP server listens: any free port, so a cluster of
#: someone else's on Dask's default 8787 (a shared host) does not fail the test.
HTTP_ANY_PORT = "127.0.0.1:0"
#: The CPUs of a local cluster of two workers.
CPUS = sorted(os.sched_getaffinity(0))[-2:]


def _campaign(run_dir: Path, **settings) -> ngcc.Campaign:
    settings.setdefault("kat_checker", FakeKat())
    settings.setdefault("runner", FakeRunner())
    return ngcc.Campaign(INSTANCES, lengths=LENGTHS, quick=True, run_dir=run_dir,
                         progress=False, **settings)


def _valid(run_dir: Path) -> list[str]:
    ngcc.load_run(run_dir).report(plots=False)
    return [str(d) for d in ngcc.validate(run_dir).differences]


def _jobs_of(run_dir: Path) -> dict[tuple[str, int], dict]:
    state = json.loads((run_dir / "campaign.json").read_text())
    return {(job["label"], job["message_bytes"]): job for job in state["jobs"]}


def _without_times(record: dict) -> dict:
    """A record's JSON without what differs between two measurements of one job in one
    process: times, ids and the host's changing facts."""
    record = json.loads(json.dumps(record))
    record["run_id"] = None
    record["provenance"]["created"] = None
    record["environment"]["load_average_start"] = None
    for trial in record["trials"] + record["rejected_trials"]:
        trial["started"] = None
        trial["position"] = None  # the loop counts over the start, an executor per job
    return record


# ------------------------------------------------------------ the seam, in process

def test_serial_executor_writes_the_records_of_the_trial_loop(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    loop = _campaign(tmp_path / "loop", order="sequential").run()
    plans = []
    jobs = _campaign(tmp_path / "jobs", executor=_executors.SerialExecutor(),
                     on_plan=plans.append).run()
    assert [str(plan) for plan in plans] == [
        "plan: 4 job(s) to measure (2 libraries × 2 length(s)), 3 trial(s) each, whole jobs "
        "on serial (each calibrated and timed where it is measured)"]
    assert [j.status for j in jobs.jobs] == ["done"] * 4
    assert ([_without_times(r.to_json()) for r in jobs.records]
            == [_without_times(r.to_json()) for r in loop.records])
    state = json.loads((tmp_path / "jobs" / "campaign.json").read_text())
    assert state["starts"][0]["settings"]["executor"] == "serial"
    assert state["starts"][0]["settings"]["order"] == "sequential"
    assert "executor" not in json.loads((tmp_path / "loop" / "campaign.json").read_text()
                                        )["starts"][0]["settings"]
    assert _valid(tmp_path / "jobs") == []


@pytest.mark.parametrize("settings", [
    {"calls_rule": "warm"},
    {"strict": True, "runner": lambda: FakeRunner(preempt={("SM3", 64, 1): 1})},
    {"target_ci": 2.0, "max_trials": 6, "statistic": "median",
     "runner": lambda: FakeRunner(spikes=50.0)},
], ids=["warm-plan", "strict", "target-ci-median"])
def test_an_executor_follows_the_plan_settings_as_the_loop_does(tmp_path, monkeypatch,
                                                                 settings):
    fixed_host(monkeypatch)
    runner = settings.pop("runner", FakeRunner)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loop = _campaign(tmp_path / "loop", order="sequential", runner=runner(),
                         **settings).run()
        jobs = _campaign(tmp_path / "jobs", executor=_executors.SerialExecutor(),
                         runner=runner(), **settings).run()
    assert ([_without_times(r.to_json()) for r in jobs.records]
            == [_without_times(r.to_json()) for r in loop.records])
    if "strict" in settings:
        [rejected] = jobs.record("SM3", 64).rejected_trials
        assert (rejected.trial, rejected.position, rejected.code) == (1, 1, "preempted")
        assert [t.position for t in jobs.record("SM3", 64).trials] == [0, 2, 3]
    if "calls_rule" in settings:
        assert all(r.plan.warm_call_seconds for r in jobs.records)
    assert _valid(tmp_path / "jobs") == []


def test_interleaving_is_for_the_trial_loop_of_one_process(tmp_path):
    with pytest.raises(ValueError, match="every job is measured whole"):
        _campaign(tmp_path / "run", order="interleaved", executor=_executors.SerialExecutor())


class _Tampering(_executors.SerialExecutor):
    """Changes the result of SM3 at 1024 B on its way back, as a broken worker might."""

    def __init__(self, change):
        super().__init__()
        self.change = change

    def measure(self, orders, runner):
        for result in super().measure(orders, runner):
            yield self.change(result) if " SM3 1024 B " in result.key else result


@pytest.mark.parametrize(("change", "defect"), [
    (lambda r: replace(r, trials=tuple(replace(t, measured=replace(t.measured,
                                                                   cpu=t.measured.cpu + 1))
                                       for t in r.trials)), "ran on CPU"),
    (lambda r: replace(r, calls_per_trial=(r.calls_per_trial or 0) + 1), "plan rule"),
    (lambda r: replace(r, library_sha256="0" * 64), "loaded a library of sha256"),
    (lambda r: replace(r, trials=r.trials[:1]), "it has 1 trials, not 3 to 6"),
    # 3 planned, up to 3 more in place of slow-speed-state ones: 7 is one too many
    (lambda r: replace(r, trials=r.trials * 3), "it has 9 trials, not 3 to 6"),
    (lambda r: replace(r, environment=replace(r.environment, host=None)), "host"),
], ids=["cpu", "plan", "library", "few trials", "many trials", "host"])
def test_a_result_that_breaks_the_plan_is_refused(tmp_path, monkeypatch, change, defect):
    fixed_host(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = _campaign(tmp_path / "run", executor=_Tampering(change)).run()
    assert [(r.label, r.message_bytes) for r in run.records] == [
        ("pseudoXOF-512", 64), ("pseudoXOF-512", 1024), ("SM3", 64)]
    [job] = run.failed_jobs
    assert (job.label, job.message_bytes, job.status) == ("SM3", 1024, "error")
    assert job.error.startswith("the result from serial was refused: ") and defect in job.error
    assert sum("was refused" in str(w.message) for w in caught) == 1
    assert not (tmp_path / "run" / job.record).exists()


def test_a_result_with_replacement_trials_is_accepted(tmp_path, monkeypatch):
    """A worker's job that measured trials in place of slow-speed-state ones (up to as
    many as planned) is written like any other."""
    fixed_host(monkeypatch)

    def two_more(result):
        extra = tuple(replace(t, position=t.position + 100,
                              trial=replace(t.trial, index=len(result.trials) + i,
                                            position=None))
                      for i, t in enumerate(result.trials[:2]))
        return replace(result, trials=result.trials + extra)

    run = _campaign(tmp_path / "run", executor=_Tampering(two_more)).run()
    assert not run.failed_jobs
    assert len(run.record("SM3", 1024).trials) == 5


def test_a_failed_child_fails_its_job_only(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    from ngcc.base.errors import ChildError

    runner = FakeRunner(fail={("SM3", 64, 1): ChildError("crash", "SM3 at 64 B crashed")})
    run = _campaign(tmp_path / "run", runner=runner, executor=_executors.SerialExecutor()).run()
    statuses = {(j.label, j.message_bytes): (j.status, j.error) for j in run.jobs}
    assert statuses.pop(("SM3", 64)) == ("crash", "SM3 at 64 B crashed")
    assert {status for status, _ in statuses.values()} == {"done"}
    assert _jobs_of(tmp_path / "run")[("SM3", 64)]["t1_seconds"] > 0  # its calibration kept


def test_options_are_checked_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="at most one"):
        _campaign(tmp_path / "a", workers=2, scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="positive"):
        _campaign(tmp_path / "b", workers=0)
    with pytest.raises(ValueError, match="tcp://HOST:8786"):
        _campaign(tmp_path / "c", scheduler="127.0.0.1:8786")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", [["--workers", "2"], ["--scheduler", "tcp://127.0.0.1:1"]])
def test_without_dask_the_options_say_how_to_install_it(tmp_path, monkeypatch, capsys,
                                                        option):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed: ImportError
    with pytest.raises(DistributedError, match=r'pip install "ngcc\[distributed\]"'):
        _campaign(tmp_path / "api", **{option[0][2:]: int(option[1]) if option[1].isdigit()
                                       else option[1]})
    code = _cli.main(["campaign", "SM3", "--quick", "--run-dir", str(tmp_path / "cli"),
                      *option])
    assert code != 0
    err = capsys.readouterr().err
    assert option[0] in err and 'pip install "ngcc[distributed]"' in err
    assert not (tmp_path / "cli").exists()


# ------------------------------------------------------------ the worker's side

def _order(library: Path, sha: str) -> _jobs.JobOrder:
    return _jobs.JobOrder(key="k", label="SM3", instance=replace(ngcc.instance("SM3"),
                                                                 library=library),
                          library_sha256=sha, message_bytes=64, trials=3, max_trials=3,
                          target_ci=None, trial_target=0.02, op_budget=5.0,
                          trial_timeout=None, run_dir="/nowhere")


@needs_dask
def test_a_worker_refuses_library_bytes_that_differ(tmp_path):
    from ngcc.measure import worker as _worker

    library = ngcc.instance("SM3").library
    data = library.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    good = _worker.LibraryPlugin("good", {sha: (library.name, data)})
    good.setup()
    try:
        copy = _worker.worker_library(_order(library, sha))
        assert copy.read_bytes() == data and copy != library
        copy.chmod(0o700)
        copy.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # damaged after it arrived
        with pytest.raises(LibraryMismatchError, match="refused library %s of SM3: its "
                           "copy .* has sha256 [0-9a-f]{64}, not the plan's %s"
                           % (library.name, sha)):
            _worker.worker_library(_order(library, sha))
    finally:
        good.teardown()
    bad = _worker.LibraryPlugin("bad", {sha: (library.name, data + b"\0")})
    bad.setup()
    try:
        with pytest.raises(LibraryMismatchError, match=r"the bytes sent for .* have sha256"):
            _worker.worker_library(_order(library, sha))
    finally:
        bad.teardown()


@needs_dask
def test_a_worker_whose_kernel_refuses_the_isolation_stops_the_campaign_once(tmp_path,
                                                                           monkeypatch):
    """Not an error on each job: the same refusal would meet every job of that host."""
    from ngcc.base.errors import SandboxUnavailableError
    from ngcc.measure import distributed as _distributed
    from ngcc.measure import worker as _worker

    library = ngcc.instance("SM3").library
    data = library.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    refused = SandboxUnavailableError("ngcc-driver: isolation unavailable: unshare(...)")

    def refusing_measure_job(*args, **kwargs):
        raise refused

    monkeypatch.setattr(_worker, "measure_job", refusing_measure_job)
    monkeypatch.setenv(_worker.CPU_ENV, str(_locks.allowed_cpus()[0]))
    monkeypatch.setenv(_worker.HELD_ENV, "1")
    plugin = _worker.LibraryPlugin("refusing", {sha: (library.name, data)})
    plugin.setup()
    try:
        with pytest.raises(SandboxUnavailableError, match="isolation unavailable") as caught:
            _worker.run_job(_order(library, sha), FakeRunner())
    finally:
        plugin.teardown()

    class _Future:  # what the client holds: the worker's exception, re-raised
        def result(self):
            raise caught.value

        def release(self):
            pass

    with pytest.raises(SandboxUnavailableError, match="isolation unavailable"):
        _distributed.DaskExecutor._result(_order(library, sha), _Future())


@needs_dask
def test_the_copies_of_a_killed_worker_are_removed_by_the_next(tmp_path, monkeypatch):
    import tempfile

    from ngcc.measure import worker as _worker

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = tmp_path / ("ngcc-libraries-%s-x1" % dead)
    living = tmp_path / ("ngcc-libraries-%d-x2" % os.getppid())
    for folder in (stale, living):
        folder.mkdir()
        (folder / "lib.so").write_bytes(b"old")
    plugin = _worker.LibraryPlugin("p", {})
    plugin.setup()
    try:
        assert not stale.exists() and living.exists()
        assert plugin.folder is not None and plugin.folder.parent == tmp_path
        assert plugin.folder.name.startswith("ngcc-libraries-%d-" % os.getpid())
    finally:
        plugin.teardown()
    assert not plugin.folder.exists()


@needs_dask
def test_a_worker_must_be_told_its_cpu(monkeypatch):
    from ngcc.measure import worker as _worker

    monkeypatch.setenv("NGCC_CPU", str(max(os.sched_getaffinity(0))))
    assert _worker.worker_cpu() == max(os.sched_getaffinity(0))
    monkeypatch.setenv("NGCC_CPU", "999")
    with pytest.raises(DistributedError, match="NGCC_CPU='999' is not a CPU it may use"):
        _worker.worker_cpu()
    monkeypatch.delenv("NGCC_CPU")
    if len(os.sched_getaffinity(0)) > 1:
        with pytest.raises(DistributedError, match=r"was not told its CPU.*NGCC_CPU=3 dask "
                           "worker tcp://SCHEDULER:8786 --nworkers 1 --nthreads 1 "
                           "--resources cpu=1"):
            _worker.worker_cpu()


@needs_dask
def test_workers_beyond_the_cpus_are_refused():
    from ngcc.measure import distributed as _distributed

    allowed = len(os.sched_getaffinity(0))
    with pytest.raises(DistributedError, match="may use only %d CPU" % allowed):
        _distributed.local_cpus(allowed + 1)
    assert _distributed.local_cpus(allowed) == sorted(os.sched_getaffinity(0))


# ------------------------------------------------------------ a local cluster

@needs_dask
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
@real_cluster
@on_this_host
def test_two_workers_write_the_records_of_a_serial_run(tmp_path):
    """Real pinned trials and the real KAT gate, serial and on two workers."""
    serial = ngcc.Campaign(INSTANCES, lengths=LENGTHS, quick=True,
                           run_dir=tmp_path / "serial", progress=False).run()
    started = time.monotonic()
    spread = ngcc.Campaign(INSTANCES, lengths=LENGTHS, quick=True,
                           run_dir=tmp_path / "dask", progress=False, workers=2).run()
    print("two workers: %.1f s" % (time.monotonic() - started))
    assert [j.status for j in spread.jobs] == ["done"] * 4
    assert len(spread.records) == len(serial.records) == 4
    assert ([_gate_facts(e) for e in spread.build_entries]
            == [_gate_facts(e) for e in serial.build_entries])  # the same KAT gate
    cpus = CPUS
    for a, b in zip(serial.records, spread.records, strict=True):
        assert (a.label, a.message_bytes) == (b.label, b.message_bytes)
        # the same schema, field for field
        assert not _shape_difference(_keys(a.to_json()), _keys(b.to_json()))
        assert not _shape_difference(_keys(a.to_json()["trials"][0]),
                                     _keys(b.to_json()["trials"][0]))
        assert (_gate_facts(a), a.implementation) == (_gate_facts(b), b.implementation)
        assert b.plan.calls_per_trial == _plan.calls_per_trial(
            b.plan.t1_seconds, b.plan.trial_target_seconds, b.plan.op_budget_seconds,
            b.plan.trials_planned)
        same = {"t1_seconds": 0, "calls_per_trial": 1, "cpu": 0, "estimated_seconds": 0,
                "order": None}  # the serial loop interleaves, each worker runs a job whole
        assert replace(a.plan, **same) == replace(b.plan, **same)
        assert (a.plan.order, b.plan.order) == ("interleaved", "sequential")
        # 3 planned; up to 3 more in place of trials of the host's slow speed state
        assert 3 <= len(a.trials) <= 6 and 3 <= len(b.trials) <= 6
        env = b.environment
        assert env.host == platform.node() and env.cpu in cpus and b.plan.cpu == env.cpu
        assert {t.cpu for t in b.trials} == {env.cpu}
        assert 0.2 < b.statistics.median_cycles / a.statistics.median_cycles < 5  # same code
    assert {r.environment.cpu for r in spread.records} == set(cpus)  # both workers measured
    state = json.loads((tmp_path / "dask" / "campaign.json").read_text())
    assert state["starts"][0]["settings"]["executor"] == (
        "dask LocalCluster: 2 workers, CPUs %d, %d" % tuple(cpus))
    assert _valid(tmp_path / "dask") == []
    assert ("each a fresh process pinned to the CPU of the worker that measured the job "
            "(%s CPU %d, %s CPU %d)" % (platform.node(), cpus[0], platform.node(), cpus[1])
            in (tmp_path / "dask" / "report" / "baseline.md").read_text())


def _gate_facts(entry) -> dict:
    """What the KAT gate decided (its log differs by its times)."""
    kat = entry.kat.to_json()
    kat.pop("log_sha256")
    return kat


#: Statistics a job's own trials decide whether they hold a value: an interval needs two
#: trials of the fast speed state, and one run's job may keep one.
DATA_DEPENDENT = ("cpu_time_ci95_low_ticks", "cpu_time_ci95_high_ticks",
                  "cpu_time_ci95_relative")


def _shape_difference(a: object, b: object, path: str = "") -> list[str]:
    """The paths where two shapes (:func:`_keys`) differ, but the data-dependent ones."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return [] if a == b else [path]
    return [p for key in sorted(set(a) | set(b)) if key not in DATA_DEPENDENT
            for p in ([path + key] if key not in a or key not in b else
                      _shape_difference(a[key], b[key], path + key + "."))]


def _keys(value: object) -> object:
    """The shape of a JSON value: its keys (those with a value: a field added to the
    schema is left out where it is null, so whether it appears depends on the job), and
    which values are lists."""
    if isinstance(value, dict):
        return {key: _keys(item) for key, item in value.items() if item is not None}
    return "list" if isinstance(value, list) else None


@needs_dask
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
@real_cluster
@on_this_host
def test_a_worker_killed_mid_job_costs_only_that_attempt(tmp_path):
    runner = KillingRunner(("SM3", 1024), 1, tmp_path / "killed")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = _campaign(tmp_path / "run", runner=runner, workers=2).run()
    assert (tmp_path / "killed").exists()  # the worker did die in trial 1
    assert [j.status for j in run.jobs] == ["done"] * 4
    record = run.record("SM3", 1024)
    assert [t.index for t in record.trials] == [0, 1, 2]  # the lost trial 0 is not in it
    notes = {note["record"]: note for note in json.loads(
        (tmp_path / "run" / "campaign.json").read_text())["starts"][0]["resubmitted"]}
    note = notes.pop(record.relpath)
    assert note["worker"].startswith("tls://127.0.0.1:")  # the local cluster speaks TLS
    assert note["reason"] == "the worker was lost while it measured the job"
    # A job the same worker had just finished is lost too if the client had not yet
    # fetched its result (the fake runner is that fast); Dask measures it again.
    assert all(other["worker"] == note["worker"] and other["reason"] == "the worker was lost "
               "before the job's result reached the client" for other in notes.values())
    said = [str(w.message) for w in caught if "measured again from the start" in str(w.message)]
    assert len(said) == 1 + len(notes)
    assert ("SM3 at 1024 B: %s %s; its partial trials were discarded and the job was measured "
            "again from the start" % (note["worker"], note["reason"])) in said
    assert _valid(tmp_path / "run") == []


CLIENT = """
import sys
sys.path.insert(0, {tests!r})
from _fakes import FakeKat, SlowRunner
import ngcc

if __name__ == "__main__":
    ngcc.Campaign({instances!r}, lengths={lengths!r}, quick=True, run_dir=sys.argv[1],
                  runner=SlowRunner(0.25), kat_checker=FakeKat(), workers=2,
                  progress=False).run()
"""


@needs_dask
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
@real_cluster
@on_this_host
def test_a_client_killed_mid_run_resumes_without_measuring_a_job_twice(tmp_path):
    run_dir, lengths = tmp_path / "run", [64, 1024, 4096]
    script = tmp_path / "client.py"
    script.write_text(textwrap.dedent(CLIENT.format(tests=str(TESTS), instances=INSTANCES,
                                                    lengths=lengths)))
    client = subprocess.Popen([sys.executable, str(script), str(run_dir)],
                              start_new_session=True, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and client.poll() is None:
            with_status = [job["status"] for job in _jobs_of(run_dir).values()] \
                if (run_dir / "campaign.json").exists() else []
            if "done" in with_status and "pending" in with_status:
                break
            time.sleep(0.05)
        assert client.poll() is None, "the client ended before it could be killed"
        os.kill(client.pid, signal.SIGKILL)
        client.wait()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(client.pid, signal.SIGKILL)  # its workers (they also end by themselves)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_locks.cpu_holder(cpu) for cpu in CPUS):
        time.sleep(0.05)  # until the dead workers' CPU locks are released
    before = {key: (run_dir / job["record"]).read_bytes()
              for key, job in _jobs_of(run_dir).items() if job["status"] == "done"}
    assert 0 < len(before) < 6
    ngcc.Campaign(INSTANCES, lengths=lengths, quick=True, run_dir=run_dir, progress=False,
                  runner=FakeRunner(), kat_checker=FakeKat(), workers=2).run()
    jobs = _jobs_of(run_dir)
    assert [job["status"] for job in jobs.values()] == ["done"] * 6
    assert {key: (run_dir / jobs[key]["record"]).read_bytes() for key in before} == before
    assert sorted(p.name for p in (run_dir / "records").rglob("*.json")) == sorted(
        Path(job["record"]).name for job in jobs.values())
    assert len(json.loads((run_dir / "campaign.json").read_text())["starts"]) == 2
    assert _valid(run_dir) == []


@needs_dask
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
@real_cluster
@on_this_host
def test_a_library_changed_since_the_plan_is_refused_by_the_workers(tmp_path):
    folder = tmp_path / "lib"
    folder.mkdir()
    library = folder / "Ext.so"
    shutil.copyfile(ngcc.instance("SM3").library, library)
    (folder / "Ext.so.json").write_text(json.dumps(
        {"name": "Ext", "family": "Fake", "digest_bits": 256}))
    campaign = ngcc.Campaign([library], lengths=[64], quick=True, run_dir=tmp_path / "run",
                             progress=False, runner=FakeRunner(), kat_checker=FakeKat(),
                             workers=2)
    planned = campaign.plan.libraries[0].library_sha256
    shutil.copyfile(ngcc.instance("pseudoXOF-512").library, library)  # other bytes now
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = campaign.run()
    [job] = run.jobs
    assert run.records == [] and job.status == "error"
    assert "refused library Ext.so of Ext: the bytes sent for Ext.so have sha256 %s, not " \
           "the plan's %s" % (hashlib.sha256(library.read_bytes()).hexdigest(), planned) \
           in job.error
    assert "worker tls://127.0.0.1:" in job.error


# ------------------------------------------------------------ records of several hosts

class _TwoHosts(_executors.SerialExecutor):
    """Says pseudoXOF-512 was measured on host ``node-b`` and the rest on ``node-a``, as
    the workers of two machines would."""

    def measure(self, orders, runner):
        for result in super().measure(orders, runner):
            host = "node-b" if " pseudoXOF-512 " in result.key else "node-a"
            yield replace(result, environment=replace(result.environment, host=host))


BY_HOST = ["WChain-V1-512", "pseudoXOF-512"]


def _two_host_run(run_dir: Path, executor=None) -> ngcc.Run:
    return ngcc.Campaign(BY_HOST, lengths=LENGTHS, quick=True, run_dir=run_dir,
                         progress=False, runner=FakeRunner(), kat_checker=FakeKat(),
                         executor=executor or _TwoHosts()).run()


def test_reports_group_figures_by_host_and_take_no_ratio_across_hosts(tmp_path, monkeypatch):
    fixed_host(monkeypatch)
    one = _two_host_run(tmp_path / "one", _executors.SerialExecutor())
    two = _two_host_run(tmp_path / "two")
    assert {r.label: r.environment.host for r in two.records} == {
        "WChain-V1-512": "node-a", "pseudoXOF-512": "node-b"}
    assert _valid(tmp_path / "one") == [] and _valid(tmp_path / "two") == []
    page_one = (tmp_path / "one" / "report" / "hash-34.md").read_text()
    page_two = (tmp_path / "two" / "report" / "hash-34.md").read_text()
    assert "Measured on host" not in page_one and "hosts" not in page_one
    assert "The records were measured on 2 hosts" in page_two
    assert "| `node-a` | Fake CPU (CPU " in page_two and "| `node-b` |" in page_two
    assert "Measured on host `node-a`:" in page_two
    assert "no ratio is taken across hosts" in page_two
    from ngcc.stats import groups as _analysis
    wchain = [r for r in two.records if r.label == "WChain-V1-512"]
    assert [_analysis.baseline_ratio(two.records, r) for r in wchain] == [None, None]
    assert None not in [_analysis.baseline_ratio(one.records, r) for r in one.records
                        if r.label == "WChain-V1-512"]
    summary = (tmp_path / "two" / "report" / "summary.md").read_text()
    assert summary.index("Measured on host `node-a`:") < summary.index(
        "| hash-34 | `WChain-V1-512`") < summary.index("Measured on host `node-b`:") \
        < summary.index("| baseline | `pseudoXOF-512`")


def test_compare_picks_a_host_and_pools_nothing_across_hosts(tmp_path, monkeypatch, capsys):
    fixed_host(monkeypatch)
    from ngcc.base.errors import UnknownHostError
    from ngcc.report import compare as _compare_runs

    one = _two_host_run(tmp_path / "one", _executors.SerialExecutor())  # host fake-host
    two = _two_host_run(tmp_path / "two")
    both = _compare_runs.compare_runs(one, two)
    assert [s.pair.label_a for s in both.summaries] == ["WChain-V1-512", "pseudoXOF-512"]
    assert [row.host_differences for row in both.rows] == [
        ("host: fake-host vs node-a",)] * 2 + [("host: fake-host vs node-b",)] * 2
    mixed = _campaign_mixed(tmp_path / "mixed")
    result = _compare_runs.compare_runs(one, mixed)
    assert [s.pair.label_a for s in result.summaries] == ["pseudoXOF-512"]
    assert any("WChain-V1-512: no geometric mean over the lengths: B's records were "
               "measured on hosts node-a, node-b" in note for note in result.notes)
    picked = _compare_runs.compare_runs(one, mixed, hosts=["fake-host", "node-a"])
    assert [(r.pair.label_a, r.message_bytes) for r in picked.rows] == [
        ("WChain-V1-512", 64), ("pseudoXOF-512", 64), ("pseudoXOF-512", 1024)]
    assert any("not compared at 1024 B (measured on host node-b in B)" in note
               for note in picked.notes)
    with pytest.raises(UnknownHostError, match=r"no record of run B .* was measured on host "
                       "'lab-9'; its hosts: node-a, node-b"):
        _compare_runs.compare_runs(one, two, hosts=["fake-host", "lab-9"])
    assert _cli.main(["compare", str(tmp_path / "two"), "--instance", "pseudoXOF-512",
                      "--host", "node-b", "--host", "node-b"]) == 0
    assert "pseudoXOF-512" in capsys.readouterr().out


class _MixedHosts(_executors.SerialExecutor):
    """WChain-V1-512 at 1024 B on ``node-b``, everything else on ``node-a``."""

    def measure(self, orders, runner):
        for result in super().measure(orders, runner):
            host = "node-b" if " WChain-V1-512 1024 B " in result.key else "node-a"
            yield replace(result, environment=replace(result.environment, host=host))


def _campaign_mixed(run_dir: Path) -> ngcc.Run:
    return _two_host_run(run_dir, _MixedHosts())


@needs_dask
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
@real_cluster
@on_this_host
def test_a_scheduler_and_workers_started_as_the_readme_says(tmp_path):
    """``dask scheduler``, then one ``NGCC_CPU=<cpu> dask worker ... --resources cpu=1``
    per CPU (README, Distributed campaigns), then ``ngcc campaign --scheduler``."""
    import socket

    with socket.socket() as probe:  # a free port on the loopback
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = "tcp://127.0.0.1:%d" % port
    dask = [sys.executable, "-m", "dask"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}  # _fakes
    started = [subprocess.Popen([*dask, "scheduler", "--host", "127.0.0.1", "--port",
                                 str(port), "--no-dashboard"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)]
    try:
        for cpu in CPUS:
            started.append(subprocess.Popen(
                [*dask, "worker", address, "--nworkers", "1", "--nthreads", "1",
                 "--resources", "cpu=1", "--name", "cpu%d" % cpu, "--no-dashboard"],
                env={**env, "NGCC_CPU": str(cpu)}, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True))
        run = _campaign(tmp_path / "run", scheduler=address).run()
    finally:
        for process in reversed(started):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
    assert [j.status for j in run.jobs] == ["done"] * 4
    assert {r.environment.cpu for r in run.records} <= set(CPUS)
    assert json.loads((tmp_path / "run" / "campaign.json").read_text())["starts"][0][
        "settings"]["executor"] == "dask " + address
    assert _valid(tmp_path / "run") == []


def test_with_an_executor_the_client_holds_a_cpu_only_for_its_leak_tests(tmp_path,
                                                                       monkeypatch):
    fixed_host(monkeypatch)
    held = []

    def tester(inst, length, *, calls, seconds, cpu, label):
        held.append((label, cpu, _locks.cpu_holder(cpu)))
        raise ngcc.NgccError("no leak test here")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = _campaign(tmp_path / "run", executor=_executors.SerialExecutor(), leak=64,
                        leak_tester=tester).run()
    assert [(label, holder.pid) for label, _, holder in held] == [
        ("pseudoXOF-512", os.getpid()), ("SM3", os.getpid())]
    assert {cpu for _, cpu, _ in held} == {run.plan.cpu}
    assert sum("the leak test at 64 B failed" in str(w.message) for w in caught) == 2
    assert [j.status for j in run.jobs] == ["done"] * 4  # its CPU lock was free again


@needs_dask
def test_a_cluster_whose_workers_offer_no_cpu_resource_is_refused(tmp_path):
    from distributed import Client, LocalCluster

    from ngcc.measure import distributed as _distributed

    library = ngcc.instance("SM3").library
    order = _order(library, hashlib.sha256(library.read_bytes()).hexdigest())
    with LocalCluster(n_workers=1, processes=False, dashboard_address=HTTP_ANY_PORT) as cluster, \
            Client(cluster) as client:
        executor = _distributed.DaskExecutor(client, "dask test")
        with pytest.raises(DistributedError, match="offers the 'cpu' resource, so no job "
                           "would ever run: start each worker with --nthreads 1 "
                           "--resources cpu=1 and NGCC_CPU=<its CPU>"):
            list(executor.measure([order], FakeRunner()))


@needs_dask
def test_workers_of_another_ngcc_version_are_refused(monkeypatch):
    from distributed import Client, LocalCluster

    from ngcc.measure import distributed as _distributed

    library = ngcc.instance("SM3").library
    order = _order(library, hashlib.sha256(library.read_bytes()).hexdigest())
    monkeypatch.setattr(_distributed, "__version__", "9.9.9")  # the client's, not theirs
    with LocalCluster(n_workers=1, processes=False, dashboard_address=HTTP_ANY_PORT,
                      resources={"cpu": 1}) as cluster, Client(cluster) as client:
        executor = _distributed.DaskExecutor(client, "dask test")
        with pytest.raises(DistributedError, match=r"run another ngcc than this client's "
                           r"9\.9\.9 \(\S+: %s\): install ngcc 9\.9\.9 on them"
                           % ngcc.__version__.replace(".", r"\.")):
            list(executor.measure([order], FakeRunner()))


@needs_dask
def test_a_cluster_left_without_workers_is_an_error_not_a_wait(monkeypatch):
    from distributed import Client, LocalCluster

    from ngcc.measure import distributed as _distributed

    library = ngcc.instance("SM3").library
    order = _order(library, hashlib.sha256(library.read_bytes()).hexdigest())
    monkeypatch.setattr(_distributed, "WORKER_WAIT_SECONDS", 0.5)
    monkeypatch.setattr(_distributed.DaskExecutor, "_check_workers", lambda self: None)
    with LocalCluster(n_workers=1, processes=False, dashboard_address=HTTP_ANY_PORT) as cluster, \
            Client(cluster) as client:  # its one worker offers no cpu: the job never runs
        executor = _distributed.DaskExecutor(client, "dask test")
        with pytest.raises(DistributedError, match=r"offers the 'cpu' resource is left "
                           r"\(none for 0 s\), so 1 job\(s\) cannot be measured; .* run the "
                           "same command again to resume"):
            list(executor.measure([order], FakeRunner()))


@needs_dask
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
@real_cluster
@on_this_host
def test_a_local_cluster_holds_its_cpus_while_it_runs(tmp_path):
    from ngcc.measure import distributed as _distributed

    with _distributed.local_executor(2, tmp_path / "run") as executor:
        assert executor.held == tuple(CPUS)
        assert [_locks.cpu_holder(cpu).pid for cpu in CPUS] == [os.getpid()] * 2
        refused = _in_another_thread(lambda: _distributed.local_executor(
            2, tmp_path / "other", wait=0).__enter__())
        assert isinstance(refused, ngcc.CpuBusyError) and str(refused).startswith(
            "--workers 2 needs CPU %d (the workers take the last 2 CPUs this process may "
            "use), which another ngcc measurement holds (pid %d" % (CPUS[0], os.getpid()))
        with pytest.warns(ngcc.MeasurementWarning, match="the leak test at 64 B failed: no "
                          "leak test here"):
            run = _campaign(tmp_path / "run", executor=executor, leak=64,
                            leak_tester=_no_leak_test).run()  # its leak tests: on a held CPU
    assert [j.status for j in run.jobs] == ["done"] * 4  # the workers took no lock
    assert [_locks.cpu_holder(cpu) for cpu in CPUS] == [None, None]


def _no_leak_test(inst, length, *, calls, seconds, cpu, label):
    raise ngcc.NgccError("no leak test here (CPU %d)" % cpu)


def _in_another_thread(call):
    """What ``call`` raised in a thread of its own (None: nothing)."""
    raised = []

    def run():
        try:
            call()
        except BaseException as exc:  # handed back to the test
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return raised[0] if raised else None


class OverwritingRunner(FakeRunner):
    """A library that, on the worker, renames other bytes over the file it was loaded
    from once its first trial has run."""

    def trial(self, instance, message_bytes, calls, warmup, cpu, index, timeout):
        measured = super().trial(instance, message_bytes, calls, warmup, cpu, index, timeout)
        if index == 0:
            swap = Path(instance.library).with_name("swap.so")
            shutil.copyfile(ngcc.instance("pseudoXOF-512").library, swap)
            os.replace(swap, instance.library)
        return measured


@needs_dask
@real_cluster
@on_this_host
def test_a_local_cluster_refuses_clients_without_its_key(tmp_path):
    """The scheduler of --workers lives in this process and runs what a client sends: it
    speaks TLS with a key of this run's, so a library's own client is refused, while the
    campaign's client measures; a library changed on a worker between its trials fails
    its job there too."""
    from distributed import Client
    from distributed.security import Security

    from ngcc.measure import distributed as _distributed

    library = ngcc.instance("SM3").library
    sha = hashlib.sha256(library.read_bytes()).hexdigest()
    with _distributed.local_executor(1, tmp_path / "run", wait=0) as executor:
        address = executor.client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        host_port = address.split("://", 1)[1]
        for plain in ("tcp://" + host_port, host_port):  # what a library found in /proc
            with pytest.raises(OSError):
                Client(plain, timeout=5)
        with pytest.raises((OSError, TimeoutError)):  # TLS, but with a key of its own
            Client(address, timeout=5, security=Security.temporary())
        [done] = executor.measure([_order(library, sha)], FakeRunner())
        [changed] = executor.measure([replace(_order(library, sha), key="k2")],
                                     OverwritingRunner())
    assert done.status == "done" and len(done.trials) == 3
    assert changed.status == "error" and changed.trials == ()
    assert "changed while trial 0 at 64 B ran: its sha256 is %s…, not the plan's %s…" % (
        hashlib.sha256(ngcc.instance("pseudoXOF-512").library.read_bytes()).hexdigest()[:16],
        sha[:16]) in changed.error
