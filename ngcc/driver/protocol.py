"""The frames ngcc-driver writes on its result pipe, read strictly (``csrc/driver/frames.h``).

A frame is ``[u32 type][u32 length][payload]``, little-endian. :class:`Conversation`
splits the bytes into frames as they arrive and refuses, as a :class:`ProtocolError`,
anything a driver answering this very request cannot have sent: an unknown type, a
length outside the bounds the request implies (a digest of the instance's length,
exactly ``calls × 8`` bytes of cycles, a trial's two digests, at most 1 KiB of error
text, leak batches of at most ``batch_calls`` calls adding up to at most ``calls``), a
frame out of order or repeated, anything after ``END``. Nothing is allocated before its length
has been checked, and no payload is ever interpreted as code.

The numbers here mirror ``csrc/driver/frames.h``; ``tests/test_driver.py`` checks that
they agree, ``tests/test_frames_h.py`` that the fields do (names, types, order).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ngcc.base.untrusted import plain

PROTOCOL_VERSION = 1
HEADER = struct.Struct("<II")
MAX_TEXT = 1024
MAX_DATA = 1 << 16

HELLO, LOADED, ERROR, CRASH, DIGEST, COLD, TRIAL, CYCLES = 1, 2, 3, 4, 5, 6, 7, 8
KAT_DATA, PROGRESS, KAT_DONE, PROBE, END = 9, 10, 11, 12, 13
LEAK_BATCH, LEAK_DONE, TRIAL_DIGEST, CT_LENGTH, HONESTY_DIGEST = 14, 15, 16, 17, 18
BATCH_MARK, LEAK_MARK = 19, 20
NAMES = {HELLO: "HELLO", LOADED: "LOADED", ERROR: "ERROR", CRASH: "CRASH", DIGEST: "DIGEST",
         COLD: "COLD", TRIAL: "TRIAL", CYCLES: "CYCLES", KAT_DATA: "KAT_DATA",
         PROGRESS: "PROGRESS", KAT_DONE: "KAT_DONE", PROBE: "PROBE", END: "END",
         LEAK_BATCH: "LEAK_BATCH", LEAK_DONE: "LEAK_DONE", TRIAL_DIGEST: "TRIAL_DIGEST",
         CT_LENGTH: "CT_LENGTH", HONESTY_DIGEST: "HONESTY_DIGEST", BATCH_MARK: "BATCH_MARK",
         LEAK_MARK: "LEAK_MARK"}

#: ERROR codes (``DRIVER_ERR_*``) and the word ngcc uses for each.
ERROR_REASONS = {1: "request", 2: "load", 3: "hash", 4: "memory", 5: "system", 6: "counter",
                 7: "cpu", 8: "forked", 9: "kat", 10: "placement", 11: "feature"}

#: Guard pages (``GUARD_*``) and accesses (``ACCESS_*``) of a CRASH frame.
GUARDS = {1: "past the message", 2: "before the message", 3: "past the digest",
          4: "before the digest"}
ACCESSES = {1: "read", 2: "wrote"}

#: Counters (``COUNTER_ID_*``): their evidence name and the unit of their ticks.
COUNTERS = {1: ("rdtsc", "tsc-ticks"), 2: ("cntvct_el0", "timer-ticks"),
            3: ("clock_monotonic_raw", "ns"), 4: ("perf_cycles_rdpmc", "core-cycles"),
            5: ("perf_cycles_read", "core-cycles")}

HELLO_LAYOUT = struct.Struct("<II")
ERROR_HEAD = struct.Struct("<ii")
CRASH_LAYOUT = struct.Struct("<IIIiQ")
PAIR = struct.Struct("<QQ")          # COLD, PROGRESS, KAT_DONE
PROBE_LAYOUT = struct.Struct("<I")

#: FRAME_TRIAL (``trial_facts`` in frames.h), field by field.
TRIAL_FIELDS = (
    ("pid", "I"), ("cpu", "i"), ("cpu_at_end", "i"), ("still_pinned", "I"),
    ("counter_id", "I"), ("calls", "I"), ("warmup", "I"), ("batch_calls", "I"),
    ("frequency_hz", "d"), ("overhead_min_ticks", "Q"), ("overhead_median_ticks", "Q"),
    ("core_cycles_per_tick", "d"), ("loop_ticks", "Q"), ("loop_ns", "Q"),
    ("thread_cpu_ns", "Q"), ("voluntary_switches", "Q"), ("involuntary_switches", "Q"),
    ("batch_ticks", "Q"), ("batch_ns", "Q"), ("batch_thread_cpu_ns", "Q"),
    ("batch_involuntary_switches", "Q"), ("baseline_rss_kib", "Q"), ("peak_rss_kib", "Q"),
    ("setup_cpu_ns", "Q"), ("counter_resolution", "Q"), ("batch_min_cpu_ns", "Q"),
    ("batch_min_calls", "Q"), ("honesty_calls", "Q"), ("honesty_ticks", "Q"),
    ("honesty_ns", "Q"), ("honesty_min_cpu_ns", "Q"), ("honesty_min_calls", "Q"),
    ("load_1", "d"), ("load_5", "d"), ("load_15", "d"),
)
TRIAL_LAYOUT = struct.Struct("<" + "".join(kind for _, kind in TRIAL_FIELDS))

#: FRAME_LEAK_DONE (``leak_facts`` in frames.h), field by field.
LEAK_FIELDS = (
    ("pid", "I"), ("cpu", "i"), ("cpu_at_end", "i"), ("still_pinned", "I"),
    ("counter_id", "I"), ("stop_reason", "I"), ("calls", "Q"), ("class0_calls", "Q"),
    ("class1_calls", "Q"), ("warmup", "Q"), ("seed", "Q"), ("message_bytes", "Q"),
    ("batch_calls", "Q"), ("frequency_hz", "d"), ("overhead_min_ticks", "Q"),
    ("overhead_median_ticks", "Q"), ("loop_ns", "Q"), ("voluntary_switches", "Q"),
    ("involuntary_switches", "Q"), ("peak_rss_kib", "Q"),
)
LEAK_LAYOUT = struct.Struct("<" + "".join(kind for _, kind in LEAK_FIELDS))
#: Why a leak run stopped (``LEAK_STOP_*``).
LEAK_STOPS = {1: "calls", 2: "seconds", 3: "parent"}
#: Bytes per call of a LEAK_BATCH frame: its u64 ticks and its u8 class.
LEAK_CALL_BYTES = 9

#: The frames each mode may send besides HELLO, LOADED, ERROR, CRASH and END.
MODE_FRAMES = {
    "hash": (DIGEST, HONESTY_DIGEST), "cold": (COLD,),
    "trial": (TRIAL, CYCLES, TRIAL_DIGEST, HONESTY_DIGEST, BATCH_MARK),
    "kat": (KAT_DATA, PROGRESS, KAT_DONE), "probe": (PROBE,),
    "leak": (LEAK_BATCH, LEAK_DONE, LEAK_MARK),
    "ct": (CT_LENGTH,),
}
#: The frames a successful conversation of each mode must hold (and HONESTY_DIGEST
#: where the request asked for an honesty batch).
MODE_RESULT = {"hash": (DIGEST,), "cold": (COLD,), "trial": (TRIAL, CYCLES, TRIAL_DIGEST),
               "kat": (KAT_DONE,), "probe": (PROBE,), "leak": (LEAK_DONE,), "ct": (CT_LENGTH,)}

_REPEATABLE = {KAT_DATA, PROGRESS, LEAK_BATCH, CT_LENGTH, BATCH_MARK, LEAK_MARK}
#: A CT_LENGTH frame's head: the bit length and CryptHash's return (the digest follows).
CT_HEAD = struct.Struct("<Qi")
MAX_PROGRESS_FRAMES = 1_000_000
#: A HONESTY_DIGEST frame: the SM3 of the honesty batch's digests.
HONESTY_DIGEST_BYTES = 32
#: A BATCH_MARK frame: its u32 phase, 0 before the batch and 1 after it.
MARK_LAYOUT = struct.Struct("<I")
#: A LEAK_MARK frame: its u32 phase and u32 calls (the sub-batch's, at odd phases).
LEAK_MARK_LAYOUT = struct.Struct("<II")
#: The LEAK_MARK frames of a leak run with ``--outside-fd`` that made a call: two around
#: each of ``LEAK_OUTSIDE_ROUNDS`` (csrc/driver/mode_leak.c) sub-batches of each class.
LEAK_OUTSIDE_ROUNDS = 4
LEAK_MARKS = 4 * LEAK_OUTSIDE_ROUNDS


class ProtocolError(Exception):
    """Bytes on the result channel that the request cannot explain."""


@dataclass
class Conversation:
    """The frames of one driver run, checked as they arrive.

    Attributes:
        mode: the driver mode asked for.
        digest_bytes: the length a DIGEST frame must have.
        calls: the number of timed calls (a CYCLES frame is ``calls × 8`` bytes; the
            LEAK_BATCH frames of a leak run hold at most this many in all).
        batch_calls: the most calls of one LEAK_BATCH frame.
        max_data_bytes: the most KAT file bytes this run may send in all.
        on_loaded: called when the LOADED frame arrives.
        on_data: called with each KAT_DATA payload (the parent writes the file).
        on_progress: called with (done, total) of each PROGRESS frame.
        on_batch: called with (ticks, classes) of each LEAK_BATCH frame: n little-endian
            u64 ticks and n class bytes, each 0 or 1.
        honesty_calls: the honesty batch asked for (``--honesty-calls``): a
            HONESTY_DIGEST frame is then required, and refused without it.
        on_mark: called with the phase of each BATCH_MARK frame (``--outside-fd``:
            :mod:`ngcc.driver.outside`); without it such a frame is refused.
        on_leak_mark: called with (phase, calls) of each LEAK_MARK frame (a leak run's
            ``--outside-fd``); with it, a leak run that made a call must send
            :data:`LEAK_MARKS` of them before LEAK_DONE, and without it none.
    """

    mode: str
    digest_bytes: int = 0
    calls: int = 0
    batch_calls: int = 0
    max_data_bytes: int = 0
    on_loaded: Callable[[], None] | None = None
    on_data: Callable[[memoryview], None] | None = None
    on_progress: Callable[[int, int], None] | None = None
    on_batch: Callable[[memoryview, memoryview], None] | None = None
    honesty_calls: int = 0
    on_mark: Callable[[int], None] | None = None
    on_leak_mark: Callable[[int, int], None] | None = None
    frames: dict[int, Any] = field(default_factory=dict)
    data_bytes: int = 0
    leak_calls: int = 0
    leak_class1_calls: int = 0
    progress_frames: int = 0
    _header: bytearray = field(default_factory=bytearray)
    _kind: int = 0
    _payload: bytearray | None = None
    _filled: int = 0

    @property
    def ended(self) -> bool:
        """True once the END frame has arrived."""
        return END in self.frames

    @property
    def complete(self) -> bool:
        """True when the run ended with every result frame of its mode and no error."""
        return (self.ended and ERROR not in self.frames
                and all(kind in self.frames for kind in MODE_RESULT[self.mode])
                and (HONESTY_DIGEST in self.frames or not self.honesty_calls)
                and (self.on_mark is None or self.frames.get(BATCH_MARK) == 2)
                and (self.on_leak_mark is None or self.frames.get(LEAK_MARK, 0) == (
                    LEAK_MARKS if self.leak_calls else 0)))

    def feed(self, data: bytes | memoryview) -> None:
        """Take the next bytes of the channel; raise ProtocolError at the first defect."""
        view = memoryview(data)
        at = 0
        while at < len(view):
            if self._payload is None:
                need = HEADER.size - len(self._header)
                self._header += view[at:at + need]
                at += min(need, len(view) - at)
                if len(self._header) < HEADER.size:
                    return
                kind, length = HEADER.unpack(self._header)
                self._header.clear()
                self._admit(kind, length)
                self._kind, self._payload, self._filled = kind, bytearray(length), 0
            take = min(len(self._payload) - self._filled, len(view) - at)
            self._payload[self._filled:self._filled + take] = view[at:at + take]
            self._filled += take
            at += take
            if self._filled == len(self._payload):
                payload, self._payload = self._payload, None
                self._accept(self._kind, payload)

    def finish(self) -> None:
        """The channel is closed: a frame cut short is a ProtocolError."""
        if self._header or self._payload is not None:
            raise ProtocolError("the channel closed inside a frame")

    # ------------------------------------------------------------ checks

    def _bounds(self, kind: int) -> tuple[int, int]:
        """The least and most bytes a payload of this kind may have."""
        fixed = {HELLO: HELLO_LAYOUT.size, LOADED: 0, CRASH: CRASH_LAYOUT.size, END: 0,
                 COLD: PAIR.size, PROGRESS: PAIR.size, KAT_DONE: PAIR.size,
                 PROBE: PROBE_LAYOUT.size, TRIAL: TRIAL_LAYOUT.size,
                 BATCH_MARK: MARK_LAYOUT.size, LEAK_MARK: LEAK_MARK_LAYOUT.size,
                 LEAK_DONE: LEAK_LAYOUT.size,
                 DIGEST: self.digest_bytes, CYCLES: 8 * self.calls,
                 TRIAL_DIGEST: 2 * self.digest_bytes, HONESTY_DIGEST: HONESTY_DIGEST_BYTES,
                 CT_LENGTH: CT_HEAD.size + self.digest_bytes}
        if kind in fixed:
            return fixed[kind], fixed[kind]
        if kind == ERROR:
            return ERROR_HEAD.size, ERROR_HEAD.size + MAX_TEXT
        if kind == LEAK_BATCH:
            return LEAK_CALL_BYTES, LEAK_CALL_BYTES * min(self.batch_calls,
                                                          self.calls - self.leak_calls)
        return 1, MAX_DATA  # KAT_DATA

    def _admit(self, kind: int, length: int) -> None:
        """Check a frame header before its payload is read."""
        if kind not in NAMES:
            raise ProtocolError("unknown frame type %d (length %d)" % (kind, length))
        name = NAMES[kind]
        if not self.frames and kind != HELLO:
            raise ProtocolError("the first frame is %s, not HELLO" % name)
        if self.ended or CRASH in self.frames:
            raise ProtocolError("a %s frame after the %s frame" % (
                name, "END" if self.ended else "CRASH"))
        if ERROR in self.frames and kind != END:
            raise ProtocolError("a %s frame after the ERROR frame" % name)
        if kind in MODE_FRAMES[self.mode] and LOADED not in self.frames:
            raise ProtocolError("a %s frame before the library was loaded" % name)
        if kind not in MODE_FRAMES[self.mode] and kind not in (HELLO, LOADED, ERROR, CRASH,
                                                                END):
            raise ProtocolError("a %s frame in a %s run" % (name, self.mode))
        if kind in self.frames and kind not in _REPEATABLE:
            raise ProtocolError("a second %s frame" % name)
        if kind == CYCLES and TRIAL not in self.frames:
            raise ProtocolError("a CYCLES frame before the TRIAL frame")
        if kind == TRIAL_DIGEST and CYCLES not in self.frames:
            raise ProtocolError("a TRIAL_DIGEST frame before the CYCLES frame")
        if kind == BATCH_MARK and (self.on_mark is None or self.frames.get(BATCH_MARK) == 2
                                   or TRIAL in self.frames):
            raise ProtocolError("a BATCH_MARK frame %s" % (
                "in a run that asked for none" if self.on_mark is None else
                "after the batch's two" if TRIAL not in self.frames else
                "after the TRIAL frame"))
        if kind == LEAK_MARK and (self.on_leak_mark is None or LEAK_DONE in self.frames
                                  or self.frames.get(LEAK_MARK, 0) == LEAK_MARKS
                                  or not self.leak_calls):
            raise ProtocolError("a LEAK_MARK frame %s" % (
                "in a run that asked for none" if self.on_leak_mark is None else
                "after the LEAK_DONE frame" if LEAK_DONE in self.frames else
                "before any LEAK_BATCH frame" if not self.leak_calls else
                "after the %d of the sub-batches timed from outside" % LEAK_MARKS))
        if kind == LEAK_BATCH and LEAK_MARK in self.frames:
            raise ProtocolError("a LEAK_BATCH frame after the LEAK_MARK frames")
        if kind == HONESTY_DIGEST and not self.honesty_calls:
            raise ProtocolError("a HONESTY_DIGEST frame in a run that asked for no "
                                "honesty batch")
        if kind == HONESTY_DIGEST and {"hash": DIGEST, "trial": TRIAL_DIGEST}[
                self.mode] not in self.frames:
            raise ProtocolError("a HONESTY_DIGEST frame before the %s frame"
                                % ("DIGEST" if self.mode == "hash" else "TRIAL_DIGEST"))
        if kind in (KAT_DATA, PROGRESS) and KAT_DONE in self.frames:
            raise ProtocolError("a %s frame after the KAT_DONE frame" % name)
        if kind == LEAK_BATCH and LEAK_DONE in self.frames:
            raise ProtocolError("a LEAK_BATCH frame after the LEAK_DONE frame")
        if kind == LEAK_BATCH and self.leak_calls >= self.calls:
            raise ProtocolError("a LEAK_BATCH frame after all %d calls" % self.calls)
        low, high = self._bounds(kind)
        if not low <= length <= high:
            raise ProtocolError("a %s frame of %d bytes (expected %s)" % (
                name, length, low if low == high else "%d to %d" % (low, high)))
        if kind == LEAK_BATCH and length % LEAK_CALL_BYTES:
            raise ProtocolError("a LEAK_BATCH frame of %d bytes (not a whole number of "
                                "%d-byte calls)" % (length, LEAK_CALL_BYTES))
        if kind == KAT_DATA and self.data_bytes + length > self.max_data_bytes:
            raise ProtocolError("more than %d bytes of KAT file" % self.max_data_bytes)
        if kind == PROGRESS and self.progress_frames >= MAX_PROGRESS_FRAMES:
            raise ProtocolError("more than %d PROGRESS frames" % MAX_PROGRESS_FRAMES)

    def _accept(self, kind: int, payload: bytearray) -> None:
        """Decode a complete frame into ``frames``."""
        if kind == HELLO:
            version, pid = HELLO_LAYOUT.unpack(payload)
            if version != PROTOCOL_VERSION:
                raise ProtocolError("protocol version %d, expected %d"
                                    % (version, PROTOCOL_VERSION))
            self.frames[kind] = pid
        elif kind == ERROR:
            code, value = ERROR_HEAD.unpack_from(payload)
            if code not in ERROR_REASONS:
                raise ProtocolError("unknown error code %d" % code)
            text = plain(bytes(payload[ERROR_HEAD.size:]).decode("utf-8", errors="replace"))
            self.frames[kind] = (ERROR_REASONS[code], value, text)
        elif kind == CRASH:
            self.frames[kind] = CRASH_LAYOUT.unpack(payload)
        elif kind in (COLD, KAT_DONE):
            self.frames[kind] = PAIR.unpack(payload)
        elif kind == PROBE:
            self.frames[kind] = PROBE_LAYOUT.unpack(payload)[0]
        elif kind == BATCH_MARK:
            phase, marks = MARK_LAYOUT.unpack(payload)[0], self.frames.get(kind, 0)
            if phase != marks:
                raise ProtocolError("a BATCH_MARK frame of phase %d where %d was due"
                                    % (phase, marks))
            self.frames[kind] = marks + 1
            if self.on_mark is not None:
                self.on_mark(phase)
        elif kind == LEAK_MARK:
            (phase, calls), marks = LEAK_MARK_LAYOUT.unpack(payload), self.frames.get(kind, 0)
            if phase != marks or (calls == 0) != (phase % 2 == 0):
                raise ProtocolError("a LEAK_MARK frame of phase %d and %d calls where phase "
                                    "%d was due%s" % (phase, calls, marks, (
                                        " with its sub-batch's calls" if marks % 2 else
                                        " with 0 calls")))
            self.frames[kind] = marks + 1
            if self.on_leak_mark is not None:
                self.on_leak_mark(phase, calls)
        elif kind == TRIAL:
            values = TRIAL_LAYOUT.unpack(payload)
            self.frames[kind] = {name: value for (name, _), value in
                                 zip(TRIAL_FIELDS, values, strict=True)}
        elif kind == KAT_DATA:
            self.data_bytes += len(payload)
            self.frames[kind] = self.data_bytes
            if self.on_data is not None:
                self.on_data(memoryview(payload))
        elif kind == LEAK_BATCH:
            self._accept_batch(payload)
        elif kind == LEAK_DONE:
            values = LEAK_LAYOUT.unpack(payload)
            self.frames[kind] = {name: value for (name, _), value in
                                 zip(LEAK_FIELDS, values, strict=True)}
        elif kind == CT_LENGTH:
            bits, status = CT_HEAD.unpack_from(payload)
            self.frames.setdefault(kind, []).append(
                (bits, status, bytes(payload[CT_HEAD.size:])))
        elif kind == PROGRESS:
            done, total = PAIR.unpack(payload)
            self.progress_frames += 1
            self.frames[kind] = (done, total)
            if done > total:
                raise ProtocolError("progress %d of %d" % (done, total))
            if self.on_progress is not None:
                self.on_progress(done, total)
        else:  # LOADED, END: empty; DIGEST, CYCLES, TRIAL_DIGEST, HONESTY_DIGEST: raw
            self.frames[kind] = payload
            if kind == LOADED and self.on_loaded is not None:
                self.on_loaded()

    def _accept_batch(self, payload: bytearray) -> None:
        calls = len(payload) // LEAK_CALL_BYTES
        classes = memoryview(payload)[8 * calls:]
        if bytes(classes).translate(None, b"\x00\x01"):
            raise ProtocolError("a LEAK_BATCH frame with a class other than 0 or 1")
        self.leak_calls += calls
        self.leak_class1_calls += bytes(classes).count(1)
        self.frames[LEAK_BATCH] = self.leak_calls
        if self.on_batch is not None:
            self.on_batch(memoryview(payload)[:8 * calls], classes)
