"""The driver's modes: every call ngcc makes into a foreign library — hashing, the
cold call, trials, KAT generation, the guard probe (the analyses' own modes: the leak
test's calls in :mod:`ngcc.driver.leak_mode`, memcheck's in :mod:`ngcc.driver.ct_mode`) —
runs in ``ngcc-driver`` (``csrc/driver/``), a small C executable, in a process of its own,
started and bounded by :mod:`ngcc.driver.process` and judged by :mod:`ngcc.driver.ending`
(a failure is a :class:`~ngcc.driver.process.DriverError`); the facts each mode reports
are held against the request by :mod:`ngcc.driver.facts`. :class:`DriverRunner` is the
campaigns' trial runner.

Every mode takes ``memory_limit``: a cap on the run's address space in bytes
(RLIMIT_AS); under the sandbox the driver caps it at 4 GiB anyway (none in an
AddressSanitizer build), and the smaller cap applies. Default deadlines, each
overridable by the caller: hashing 60 s plus 1 s per MiB, the cold call
:data:`COLD_TIMEOUT`, the probe :data:`PROBE_TIMEOUT`, a trial :func:`trial_timeout`, a
KAT file :data:`KAT_TIMEOUTS` (those numbers: :mod:`ngcc.driver.limits`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ngcc import _core
from ngcc.base import sandbox as _sandbox
from ngcc.driver import ending as _ending
from ngcc.driver import facts as _facts
from ngcc.driver import outside as _outside
from ngcc.driver import process as _process
from ngcc.driver import protocol as wire
from ngcc.driver.contract import StartProbe

# The deadlines' numbers live in driver.limits (the options state them), applied here
from ngcc.driver.limits import KAT_TIMEOUTS as KAT_TIMEOUTS
from ngcc.driver.limits import MAX_TRIAL_TIMEOUT as MAX_TRIAL_TIMEOUT
from ngcc.driver.limits import TRIAL_TIMEOUT_FACTOR as TRIAL_TIMEOUT_FACTOR
from ngcc.driver.limits import TRIAL_TIMEOUT_SLACK as TRIAL_TIMEOUT_SLACK
from ngcc.driver.process import DriverError
from ngcc.driver.protocol import Conversation
from ngcc.library import registry as _registry
from ngcc.library.registry import Instance

if TYPE_CHECKING:  # a trial's measurement loads numpy and the model: the other modes
    import numpy as np  # (hashing, a KAT file, the probe) need neither

    from ngcc.evidence.model import TrialMeasurement

HASH_TIMEOUT = 60.0             # seconds, plus HASH_SECONDS_PER_MIB per MiB hashed
HASH_SECONDS_PER_MIB = 1.0
COLD_TIMEOUT = 120.0            # the first call of an unknown library
PROBE_TIMEOUT = 120.0
#: The start-cost probe (:meth:`DriverRunner.start_probe`): this many trials of one call
#: of the built-in SM3 at this many bytes, after its reference run.
START_PROBES = 3
START_PROBE_BYTES = 32
#: The most KAT file bytes one run may send (KAT_2_12 of a 8192-bit digest: ~6 MB).
MAX_KAT_BYTES = 64 << 20

#: The bit lengths the guard probe hashes at the start and at the end of a page:
#: every byte length to 130, partial bytes, block edges and one long message.
PROBE_BITS = tuple(sorted({*range(0, 8 * 131, 8), 1, 7, 9, 15, 255, 257, 1001, 2047, 2049,
                           4095, 4097, *(8 * n for n in (255, 256, 257, 1000, 4095, 4096,
                                                         4097, 8192, 65536))}))

#: The honesty batch of a trial (``csrc/driver/honesty.h``): one call per
#: HONESTY_SHARE calls of its batch, at least HONESTY_MIN_CALLS and at most
#: HONESTY_MAX_CALLS (its digests are kept: 2 MiB at 2048 bits); none without a batch
#: or for an empty message, which has nothing to vary.
HONESTY_SHARE = 16
HONESTY_MIN_CALLS = 4
HONESTY_MAX_CALLS = 8192


def honesty_calls(batch_calls: int, message_bytes: int) -> int:
    """The honesty batch's calls of a trial whose batch makes ``batch_calls`` calls."""
    if batch_calls <= 0 or message_bytes <= 0:
        return 0
    return min(HONESTY_MAX_CALLS, max(HONESTY_MIN_CALLS, -(-batch_calls // HONESTY_SHARE)))


@dataclass(frozen=True)
class Reference:
    """What a trial's calls must reproduce, from a ``hash`` run of its own: its
    message's digest and the SM3 of its honesty batch's digests (None: none asked)."""

    digest: bytes
    honesty: bytes | None = None


def trial_timeout(t1: float, calls: int, warmup: int, batch_calls: int | None = None,
                  cap: float = MAX_TRIAL_TIMEOUT) -> float:
    """A trial's deadline: ten times its estimate (warm-up, per-call loop and batch,
    ``t1`` seconds a call) plus 60 s for start-up, at most ``cap`` seconds
    (:func:`uncapped_trial_timeout` is the estimate's own)."""
    return min(cap, uncapped_trial_timeout(t1, calls, warmup, batch_calls))


def uncapped_trial_timeout(t1: float, calls: int, warmup: int,
                           batch_calls: int | None = None) -> float:
    """The deadline the cold call alone would allow a trial (:func:`trial_timeout`
    without its cap): what a message names when the cap was what killed the trial."""
    batch = calls if batch_calls is None else batch_calls
    return TRIAL_TIMEOUT_SLACK + TRIAL_TIMEOUT_FACTOR * (calls + warmup + batch) * t1


def library_options(inst: Instance) -> list[str]:
    features = ["--cpu-features", ",".join(inst.cpu_features)] if inst.cpu_features else []
    return ["--library", str(inst.library), "--digest-bits", str(inst.digest_bits), *features]


def memory_options(memory_limit: int | None) -> list[str]:
    """``--memory-limit`` for a run's address space (RLIMIT_AS, every mode), checked."""
    if memory_limit is None:
        return []
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, int) or memory_limit <= 0:
        raise ValueError("memory_limit must be a positive number of bytes, got %r"
                         % (memory_limit,))
    return ["--memory-limit", str(memory_limit)]


# ------------------------------------------------------------------- the modes

def hash_in_child(inst: Instance, data: bytes | memoryview, bits: int, *,
                  what: str | None = None, timeout: float | None = None,
                  memory_limit: int | None = None) -> bytes:
    """The digest of the first ``bits`` bits of ``data`` (``ceil(bits/8)`` bytes of it),
    computed by ``inst``'s library in the driver."""
    return _hash_run(inst, data, bits, what=what, timeout=timeout,
                     memory_limit=memory_limit).digest


def _hash_run(inst: Instance, data: bytes | memoryview, bits: int, *,
              what: str | None = None, timeout: float | None = None,
              memory_limit: int | None = None, honesty: int = 0) -> Reference:
    """A ``hash`` run: the digest, and with ``honesty`` calls the honesty batch's
    reference (its messages varied from ``data``'s, whole bytes only)."""
    message = memoryview(data).cast("B")[: (bits + 7) // 8]
    if len(message) * 8 < bits:
        raise ValueError("bits=%d is longer than the data: %d bytes hold at most %d bits"
                         % (bits, len(message), 8 * len(message)))
    what = what or "%s hashing %d bits" % (inst.name, bits)
    timeout = HASH_TIMEOUT + HASH_SECONDS_PER_MIB * len(message) / 2**20 \
        if timeout is None else timeout
    conversation = Conversation("hash", digest_bytes=inst.digest_bits // 8,
                                honesty_calls=honesty)
    options = ["--honesty-calls", str(honesty)] if honesty else []
    run = _process.run_driver(conversation, library_options(inst) + ["--bits", str(bits)]
                              + options + memory_options(memory_limit), timeout, message)
    _ending.judge(run, what, memory_limit)
    fold = conversation.frames.get(wire.HONESTY_DIGEST)
    return Reference(bytes(conversation.frames[wire.DIGEST]),
                     None if fold is None else bytes(fold))


def check_isolation() -> None:
    """Raise :class:`~ngcc.base.errors.SandboxUnavailableError` (with the remedy) where
    the kernel refuses the driver's isolation: the built-in SM3 hashes three bytes in
    it. Nothing to check, and nothing run, when the sandbox is off."""
    if _sandbox.sandbox_enabled():
        hash_in_child(_registry.instance("SM3"), b"abc", 24, what="checking the isolation")


def cold_call(inst: Instance, message_bytes: int, *, cpu: int | None = None,
              message: bytes | memoryview | None = None, what: str | None = None,
              timeout: float = COLD_TIMEOUT, memory_limit: int | None = None) -> float:
    """Seconds of the first call of ``inst``'s freshly loaded library on the default
    message of ``message_bytes`` bytes (or ``message``), pinned to ``cpu`` if given."""
    what = what or "%s at %d B (calibration)" % (inst.name, message_bytes)
    options = library_options(inst) + ["--message-bytes", str(message_bytes)]
    options += [] if cpu is None else ["--cpu", str(cpu)]
    options += [] if message is None else ["--message-stdin"]
    options += memory_options(memory_limit)
    conversation = Conversation("cold", digest_bytes=inst.digest_bits // 8)
    run = _process.run_driver(conversation, options, timeout, b"" if message is None else message)
    _ending.judge(run, what, memory_limit)
    _ticks, ns = conversation.frames[wire.COLD]
    if not 0 < ns <= run.wall_ns:
        raise _ending.broken_protocol(
            run, what, "a first call of %d ns in a child that ran %d ns" % (ns, run.wall_ns))
    return ns / 1e9


def trial(inst: Instance, message_bytes: int, calls: int, warmup: int, *,
          cpu: int | None = None, batch_calls: int | None = None,
          message: bytes | memoryview | None = None, memory_limit: int | None = None,
          what: str | None = None, timeout: float | None = None,
          t1: float | None = None, counter: str | None = None,
          expected_digest: bytes | Callable[[], bytes] | None = None,
          honesty: int | None = None,
          expected_honesty: bytes | Callable[[], bytes | None] | None = None
          ) -> TrialMeasurement:
    """One trial in a fresh driver: pin to ``cpu`` (if given), load, baseline RSS,
    calibrate, ``warmup`` calls, ``calls`` calls each between two counter readings,
    then ``batch_calls`` (default: ``calls``) calls with no reading between them.

    ``memory_limit`` caps the trial process's address space (bytes, RLIMIT_AS).
    The deadline is ``timeout``, else :func:`trial_timeout` of ``t1``, else 600 s.
    ``counter`` is ``auto``, ``perf``, ``tsc`` or ``clock`` (``csrc/timer.h``; None: the
    driver's default, tsc); a counter that cannot be opened is a ``ChildError``
    (``error``, reason ``counter``) that says why.

    What the library cannot hide (``protocol`` failures): the digest its last timed
    call and its last batch call left must be ``expected_digest`` (or what it returns,
    asked once the trial has delivered; default: the message's digest from a ``hash``
    run of its own, :func:`reference`), and
    the CPU time the kernel accounted to the process must fit the work its calls
    claim (:func:`ngcc.driver.facts.unclaimed_cpu`), and the batch's own figures fit
    the on-CPU time ngcc reads from outside around it
    (:func:`ngcc.driver.facts.below_outside`). After the batch, ``honesty``
    calls (default :func:`honesty_calls`) hash varied messages of the same length:
    their cost per call must be the batch's (:func:`ngcc.driver.facts.costly_honesty`)
    and the SM3 of their digests ``expected_honesty`` (default: from the reference run).
    """
    batch = calls if batch_calls is None else batch_calls
    honesty = honesty_calls(batch, message_bytes) if honesty is None else honesty
    what = what or "%s timing %d calls at %d B" % (inst.name, calls, message_bytes)
    if timeout is None:
        timeout = trial_timeout(t1, calls, warmup, batch) if t1 is not None else 600.0
    options = library_options(inst) + [
        "--message-bytes", str(message_bytes), "--calls", str(calls), "--warmup", str(warmup),
        "--batch-calls", str(batch)]
    options += [] if cpu is None else ["--cpu", str(cpu)]
    options += [] if message is None else ["--message-stdin"]
    options += [] if counter is None else ["--counter", counter]
    options += ["--honesty-calls", str(honesty)] if honesty else []
    options += memory_options(memory_limit)
    outside = _outside.Outside() if batch else None
    conversation = Conversation("trial", digest_bytes=inst.digest_bits // 8, calls=calls,
                                honesty_calls=honesty,
                                on_mark=outside.mark if outside else None)
    try:
        if outside:
            outside.conversation = conversation
        run = _process.run_driver(conversation, options + (outside.options() if outside else []),
                                  timeout, b"" if message is None else message,
                                  pass_fds=(outside.read_fd,) if outside else ())
    finally:
        if outside:
            outside.close()
    outside_ns = outside.batch_cpu_ns if outside else None
    _ending.judge(run, what, memory_limit)
    facts = conversation.frames[wire.TRIAL]
    import numpy as np

    cycles = np.frombuffer(conversation.frames[wire.CYCLES], dtype="<u8").astype(np.uint64)
    defect = _facts.implausible_trial(facts, cycles, run, cpu, calls, warmup, batch, honesty) \
        or _facts.unasked_counter(wire.COUNTERS[int(facts["counter_id"])][0], counter) \
        or _facts.unclaimed_cpu(facts, cycles, run, calls, warmup) \
        or _facts.below_outside(facts, outside_ns) \
        or _facts.costly_honesty(facts)
    if not defect:  # the trial's own failures first, then the reference run's
        expected = expected_digest() if callable(expected_digest) else expected_digest
        fold = expected_honesty() if callable(expected_honesty) else expected_honesty
        if expected is None or (honesty and fold is None):
            ref = reference(inst, message_bytes, message, honesty=honesty, what=what)
            expected, fold = expected or ref.digest, fold or ref.honesty
        defect = _facts.other_digest(bytes(conversation.frames[wire.TRIAL_DIGEST]), expected)
        if honesty and fold is not None and not defect:
            defect = _facts.other_honesty_digest(
                bytes(conversation.frames[wire.HONESTY_DIGEST]), fold)
    if defect:
        raise _ending.broken_protocol(run, what, defect)
    return _measurement(facts, cycles, cpu, run.wall_ns, run.isolation, outside_ns)


def default_message(message_bytes: int) -> bytes:
    """The NGCC harness's message of a trial or cold call given no message: byte i is
    ``(i * 131 + message_bytes) mod 256`` (as ``csrc/driver/buffers.c`` fills it)."""
    # (i*131 + n) mod 256 depends only on i mod 256: build one period, repeat it.
    period = bytes((i * 131 + message_bytes) % 256 for i in range(256))
    whole, rest = divmod(message_bytes, 256)
    return period * whole + period[:rest]


def reference(inst: Instance, message_bytes: int, message: bytes | memoryview | None = None,
              *, honesty: int = 0, what: str | None = None) -> Reference:
    """The digest of a trial's message (``message``, else :func:`default_message`) and,
    with ``honesty`` calls, its honesty batch's SM3, from a ``hash`` run of its own,
    which a trial's calls must reproduce."""
    data = default_message(message_bytes) if message is None else message
    what = "%s (its message hashed alone)" % (
        what or "%s at %d B" % (inst.name, message_bytes))
    return _hash_run(inst, data, 8 * message_bytes, what=what, honesty=honesty)


#: Where the driver puts a trial's timed message (``prepare_timed_message`` in
#: ``csrc/driver/buffers.h``): on the heap, as the NGCC harness does.
TIMED_PLACEMENT = "heap"


def _measurement(f: dict[str, int | float], cycles: np.ndarray, cpu: int | None,
                 parent_wall_ns: int, isolation: str, outside_ns: int | None
                 ) -> TrialMeasurement:
    from ngcc.evidence.model import TrialMeasurement

    counter, unit = wire.COUNTERS[int(f["counter_id"])]
    pinned = cpu is not None
    return TrialMeasurement(
        pid=int(f["pid"]), cpu=cpu if cpu is not None else int(f["cpu_at_end"]), cycles=cycles,
        loop_ticks=int(f["loop_ticks"]), loop_ns=int(f["loop_ns"]), counter=counter, unit=unit,
        frequency_hz=float(f["frequency_hz"]),
        overhead_min_ticks=int(f["overhead_min_ticks"]),
        overhead_median_ticks=int(f["overhead_median_ticks"]),
        baseline_rss_kib=int(f["baseline_rss_kib"]), peak_rss_kib=int(f["peak_rss_kib"]),
        load_average=(round(float(f["load_1"]), 2), round(float(f["load_5"]), 2),
                      round(float(f["load_15"]), 2)),
        batch_calls=int(f["batch_calls"]) or None,
        batch_ticks=int(f["batch_ticks"]) if f["batch_calls"] else None,
        batch_ns=int(f["batch_ns"]) if f["batch_calls"] else None,
        core_cycles_per_tick=float(f["core_cycles_per_tick"]) or None,
        thread_cpu_ns=int(f["thread_cpu_ns"]),
        voluntary_switches=int(f["voluntary_switches"]),
        involuntary_switches=int(f["involuntary_switches"]),
        affinity_changed=(not f["still_pinned"] or f["cpu_at_end"] != cpu) if pinned else None,
        parent_wall_ns=parent_wall_ns,
        batch_thread_cpu_ns=int(f["batch_thread_cpu_ns"]) if f["batch_calls"] else None,
        batch_involuntary_switches=(int(f["batch_involuntary_switches"]) if f["batch_calls"]
                                    else None),
        counter_resolution_ticks=int(f["counter_resolution"]) or None,
        batch_min_cpu_ns=int(f["batch_min_cpu_ns"]) if f["batch_min_calls"] else None,
        batch_min_calls=int(f["batch_min_calls"]) or None,
        honesty_calls=int(f["honesty_calls"]) or None,
        honesty_ticks=int(f["honesty_ticks"]) if f["honesty_calls"] else None,
        honesty_ns=int(f["honesty_ns"]) if f["honesty_calls"] else None,
        honesty_min_cpu_ns=int(f["honesty_min_cpu_ns"]) if f["honesty_min_calls"] else None,
        honesty_min_calls=int(f["honesty_min_calls"]) or None, isolation=isolation,
        outside_batch_cpu_ns=outside_ns,
        placement=TIMED_PLACEMENT)


@dataclass(frozen=True)
class KatOutcome:
    """A KAT file the driver generated and the parent wrote: its size and the
    generation time the driver measured."""

    path: Path
    size: int
    seconds: float


def generate_kat(inst: Instance, tag: str, path: Path, *, timeout: float | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 blank_digests: bool = False, memory_limit: int | None = None) -> KatOutcome:
    """Generate the KAT file ``tag`` (``2_12``, ``2_23``, ``2_33``, ``Loop``) of ``inst``
    in the driver (messages and digest in guarded buffers) and write it to ``path``:
    to ``<path>.part`` (created once the library is loaded), renamed when complete,
    removed on any failure. ``progress(done, total)`` follows the driver's reports.
    """
    what = "KAT_%s of %s" % (tag, inst.name)
    part = path.with_name(path.name + ".part")
    options = library_options(inst) + ["--kat", tag, "--instance", inst.name]
    options += ["--blank-digests"] if blank_digests else []
    options += memory_options(memory_limit)
    out: list[BinaryIO] = []

    def open_part() -> None:
        try:
            out.append(open(part, "wb"))  # noqa: SIM115 (closed below, on every path)
        except OSError as exc:
            raise _process.OutputError(OSError(exc.errno, "cannot create %s: %s" % (
                part, exc.strerror or exc))) from None

    def write(data: memoryview) -> None:
        try:
            out[0].write(data)
        except OSError as exc:
            raise _process.OutputError(OSError(exc.errno, "writing %s failed: %s" % (
                part, exc.strerror or exc))) from None

    conversation = Conversation("kat", digest_bytes=inst.digest_bits // 8,
                                max_data_bytes=MAX_KAT_BYTES, on_loaded=open_part,
                                on_data=write, on_progress=progress)
    try:
        try:
            run = _process.run_driver(conversation, options,
                                      KAT_TIMEOUTS.get(tag, 7200.0) if timeout is None
                                      else timeout)
        finally:
            closing = out[0].close if out else (lambda: None)
        _ending.judge(run, what, memory_limit)
        size, ns = conversation.frames[wire.KAT_DONE]
        if size != conversation.data_bytes:
            raise _ending.broken_protocol(run, what, "KAT_DONE claims %d bytes, %d came"
                                           % (size, conversation.data_bytes))
        try:
            closing()
        except OSError as exc:
            text = "writing %s failed: %s" % (part, exc.strerror or exc)
            raise DriverError("error", "%s failed: %s" % (what, text), "output", text) from None
        os.replace(part, path)
    except BaseException:
        for handle in out:
            with suppress(OSError):
                handle.close()
        with suppress(OSError):
            part.unlink()
        raise
    return KatOutcome(path, size, ns / 1e9)


def probe(inst: Instance, *, bits: tuple[int, ...] = PROBE_BITS,
          timeout: float = PROBE_TIMEOUT, memory_limit: int | None = None) -> int:
    """Hash each length of ``bits`` at the start of a page that follows a guard page
    and at the end of one before a guard page; returns how many lengths passed.

    Raises DriverError: ``crash`` with the guard touched (``read before the message``),
    or ``error`` with reason ``placement`` when the two digests differ.
    """
    conversation = Conversation("probe", digest_bytes=inst.digest_bits // 8)
    run = _process.run_driver(conversation, library_options(inst) + [
        "--lengths", ",".join(str(b) for b in bits)] + memory_options(memory_limit), timeout)
    _ending.judge(run, "the guard-page probe of %s" % inst.name, memory_limit)
    return int(conversation.frames[wire.PROBE])


# ------------------------------------------------------------- the runner

class DriverRunner:
    """The :class:`~ngcc.driver.contract.TrialRunner` of campaigns: every cold call and trial
    in a fresh ``ngcc-driver`` pinned to the trial's CPU.

    Args:
        memory_limit: cap on each trial process's address space in bytes (RLIMIT_AS),
            or None for no cap.
        counter: the counter of every trial (``auto``, ``perf``, ``tsc``, ``clock``;
            None: the driver's default, tsc).
    """

    def __init__(self, memory_limit: int | None = None, counter: str | None = None):
        self.memory_limit = memory_limit
        self.counter = counter
        self._references: dict[tuple[str, int, int, int], Reference] = {}

    def cold_call(self, instance: Instance, message_bytes: int, cpu: int,
                  timeout: float) -> float:
        """Seconds of the first call of a freshly loaded library (the plan's t1)."""
        return cold_call(instance, message_bytes, cpu=cpu, timeout=timeout,
                         memory_limit=self.memory_limit)

    def _reference(self, instance: Instance, message_bytes: int, honesty: int,
                   what: str) -> Reference:
        """The trial message's digest and honesty batch's SM3, from one hash run per
        library, length and honesty batch (the key holds the file's identity: a
        library rebuilt in place is hashed again)."""
        try:
            identity = os.stat(instance.library).st_ino
        except OSError:
            identity = -1
        key = (str(instance.library), identity, message_bytes, honesty)
        if key not in self._references:
            self._references[key] = reference(instance, message_bytes, honesty=honesty,
                                              what=what)
        return self._references[key]

    def trial(self, instance: Instance, message_bytes: int, calls: int, warmup: int,
              cpu: int, index: int, timeout: float) -> TrialMeasurement:
        """One trial: the per-call loop, then an uninstrumented batch of as many calls."""
        what = "%s at %d B (trial %d)" % (instance.name, message_bytes, index)
        honesty = honesty_calls(calls, message_bytes)
        return trial(instance, message_bytes, calls, warmup, cpu=cpu,
                     memory_limit=self.memory_limit, timeout=timeout, counter=self.counter,
                     what=what, honesty=honesty,
                     expected_digest=lambda: self._reference(
                         instance, message_bytes, honesty, what).digest,
                     expected_honesty=lambda: self._reference(
                         instance, message_bytes, honesty, what).honesty)

    def start_probe(self, cpu: int, probes: int = START_PROBES) -> StartProbe:
        """What a job costs on ``cpu`` beyond its calls, on this host now: the wall time
        of a reference run (:func:`reference`, once per job), then of ``probes`` trials of
        one SM3 call at :data:`START_PROBE_BYTES` bytes (each a fresh driver, as every
        trial), and the window of a trial's start its calls run within; a ``ChildError``
        where the driver did not deliver."""
        sm3, size = _registry.instance("SM3"), START_PROBE_BYTES
        honesty, what = honesty_calls(1, size), "the start-cost probe"
        began = time.perf_counter()
        ref = reference(sm3, size, honesty=honesty, what=what)
        seconds = [time.perf_counter() - began]
        for _ in range(probes):
            began = time.perf_counter()
            trial(sm3, size, 1, 0, cpu=cpu, memory_limit=self.memory_limit, what=what,
                  timeout=COLD_TIMEOUT, counter=self.counter, honesty=honesty,
                  expected_digest=ref.digest, expected_honesty=ref.honesty)
            seconds.append(time.perf_counter() - began)
        return StartProbe(seconds[0], tuple(seconds[1:]), _core.COUNTER_FREQUENCY_INTERVAL_NS / 1e9)

    def slow_probe(self, instance: Instance, message_bytes: int, calls: int, cpu: int,
                   trials: int) -> tuple[float, ...]:
        """The host's speed state now (``campaign.conditions.slow_state``): of ``trials``
        trials of ``calls`` calls of ``instance`` at ``message_bytes`` on ``cpu``, each a
        fresh driver, each one's thread CPU nanoseconds per call over its uninstrumented
        batch; a ``ChildError`` where one fails."""
        measured = [self.trial(instance, message_bytes, calls, min(calls, 16), cpu, index,
                               COLD_TIMEOUT) for index in range(trials)]
        return tuple(m.batch_thread_cpu_ns / m.batch_calls for m in measured
                     if m.batch_thread_cpu_ns and m.batch_calls)
