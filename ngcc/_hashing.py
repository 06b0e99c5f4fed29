"""Hashing one message through an instance library: ``ngcc.hash``."""

from __future__ import annotations

import functools
import os

from ngcc import _core
from ngcc._errors import HashError
from ngcc._isolate import run_isolated
from ngcc._registry import Instance, instance


@functools.cache
def library(path: str) -> _core.Library:
    """Return the loaded library at ``path`` (loaded once per process)."""
    return _core.Library(path)


def hash(
    name: str | os.PathLike[str] | Instance, data: object, bits: int | None = None
) -> bytes:
    """Hash the first ``bits`` bits of ``data`` with an instance; return the digest.

    Args:
        name: an instance name (``"Wish512"``), an :class:`Instance`, or a library path.
        data: any contiguous buffer (bytes, bytearray, memoryview, numpy uint8 array);
            it is passed to a built-in ``CryptHash`` without a copy (a library from
            ``ngcc build`` runs in a child process, which gets a copy).
        bits: message length in bits; defaults to ``8 * len(data)``. ICCS bit order:
            message bit 0 is the most significant bit of byte 0, and the unused low
            bits of a partial last byte are ignored.

    Raises:
        UnknownInstanceError: no such instance.
        TypeError: ``data`` does not support the buffer protocol.
        ValueError: ``bits`` negative or longer than the buffer.
        HashError: ``CryptHash`` returned nonzero (the message names the instance).
        InstanceCrashError, InstanceTimeoutError: a foreign library crashed or hung.
    """
    inst = instance(name)
    if bits is None:
        try:
            bits = 8 * memoryview(data).nbytes  # type: ignore[arg-type]
        except TypeError:
            raise TypeError("data must be a bytes-like object (bytes, bytearray, memoryview, "
                            "numpy uint8 array), not %s" % type(data).__name__) from None
    if isinstance(bits, bool) or not isinstance(bits, int):
        raise TypeError("bits must be an int, not %s" % type(bits).__name__)
    try:
        if not inst.builtin:
            # Foreign code: hash in a child process so a crash cannot kill the caller.
            return run_isolated("ngcc._hashing:_hash_in_process",
                                "%s hashing %d bits" % (inst, bits),
                                library_path=str(inst.library), digest_bits=inst.digest_bits,
                                data=bytes(memoryview(data)[: (bits + 7) // 8]), bits=bits)
        return library(str(inst.library)).hash(inst.digest_bits, data, bits)
    except HashError as exc:  # the C message names the file; say which instance too
        raise HashError("%s: %s" % (inst.name, exc)) from None


def _hash_in_process(library_path: str, digest_bits: int, data: bytes, bits: int) -> bytes:
    return library(library_path).hash(digest_bits, data, bits)
