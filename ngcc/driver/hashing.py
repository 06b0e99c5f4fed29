"""Hashing one message through an instance library: ``ngcc.hash``."""

from __future__ import annotations

import functools
import operator
import os

from ngcc import _core
from ngcc.base.errors import HashError
from ngcc.driver import child as _child
from ngcc.driver import process as _process
from ngcc.library.registry import Instance, instance


@functools.cache
def library(path: str) -> _core.Library:
    """Return the loaded library at ``path`` (loaded once per process)."""
    return _core.Library(path)


def byte_view(data: object, what: str) -> memoryview:
    """``data`` as one contiguous view of its bytes, ``what`` naming it in errors.

    Raises:
        TypeError: not a buffer, or a buffer of Python objects (a numpy object array,
            whose bytes are pointers, not a message).
        ValueError: a strided view (``memoryview(b)[::2]``), which has no one address.
    """
    try:
        view = memoryview(data)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError("%s must be a bytes-like object (bytes, bytearray, memoryview, "
                        "numpy uint8 array), not %s" % (what, type(data).__name__)) from None
    if "O" in view.format:
        raise TypeError("%s is an array of Python objects (buffer format %r): its bytes "
                        "are pointers, not a message; pass bytes or a numpy uint8 array"
                        % (what, view.format))
    if not view.c_contiguous:
        raise ValueError("%s must be a contiguous buffer (a strided view is not): pass "
                         "bytes(%s) or numpy.ascontiguousarray(%s)" % (what, what, what))
    return view


def hash(
    name: str | os.PathLike[str] | Instance, data: object, bits: int | None = None
) -> bytes:
    """Hash the first ``bits`` bits of ``data`` with an instance; return the digest.

    Args:
        name: an instance name (``"Wish512"``), an :class:`Instance`, or a library path.
        data: any contiguous buffer (bytes, bytearray, memoryview, numpy uint8 array);
            it is passed to a built-in ``CryptHash`` without a copy (a library from
            ``ngcc build`` runs in the trial driver, a process of its own, which gets
            a copy in a guarded buffer).
        bits: message length in bits; defaults to ``8 * len(data)``. ICCS bit order:
            message bit 0 is the most significant bit of byte 0, and the unused low
            bits of a partial last byte are ignored.

    Raises:
        UnknownInstanceError: no such instance.
        TypeError: ``data`` does not support the buffer protocol, or holds Python
            objects (a numpy object array).
        ValueError: ``bits`` negative or longer than the buffer.
        HashError: ``CryptHash`` returned nonzero (the message names the instance).
        LibraryError: a library that cannot be loaded or lacks ``CryptHash``.
        InstanceCrashError, InstanceTimeoutError: a foreign library crashed (read
            past the message, say) or hung; InstanceProtocolError (an
            InstanceCrashError) when it wrote to the driver's result channel.
    """
    inst = instance(name)
    view = byte_view(data, "data")
    if bits is None:
        bits = 8 * view.nbytes
    if isinstance(bits, bool) or not hasattr(bits, "__index__"):
        raise TypeError("bits must be an int, not %s" % type(bits).__name__)
    bits = operator.index(bits)  # a numpy integer is an int here
    if bits < 0:
        raise ValueError("bits must be >= 0, got %d" % bits)
    if bits > 8 * view.nbytes:  # also every bits too large for C (2**63 ...)
        raise ValueError("bits=%d is longer than the data: %d bytes hold at most %d bits"
                         % (bits, view.nbytes, 8 * view.nbytes))
    if not inst.builtin:
        try:
            return _child.hash_in_child(inst, view.cast("B"), bits)
        except _process.DriverError as exc:
            raise _process.api_error(inst, exc) from None
    try:
        return library(str(inst.library)).hash(inst.digest_bits, data, bits)
    except HashError as exc:  # the C message names the file; say which instance too
        raise HashError("%s: %s" % (inst.name, exc)) from None
