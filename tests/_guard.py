"""Hash messages placed so that they end exactly at an unreadable guard page.

An implementation that reads even one byte past ceil(bits/8) message bytes faults;
the hashing runs in ngcc-driver (its ``hash`` mode puts every message right before
a guard page, and the digest right before another), so the fault fails one test,
with the guard it touched, instead of killing the test run.
"""

from __future__ import annotations

import ngcc
from ngcc.driver import child as _child
from ngcc.driver import process as _process


def hash_before_guard_page(instance: str, cases: list[tuple[bytes, int]]) -> list[bytes]:
    """Return the digests of (message, bits) cases, each message ending at a guard page.

    Raises AssertionError naming the instance when the driver faults.
    """
    inst = ngcc.instance(instance)
    digests = []
    for message, bits in cases:
        try:
            digests.append(_child.hash_in_child(inst, message, bits))
        except _process.DriverError as exc:
            raise AssertionError("%s at %d bits: %s" % (instance, bits, exc)) from None
    return digests
