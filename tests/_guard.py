"""Hash messages placed so that they end exactly at an unreadable guard page.

An implementation that reads even one byte past ceil(bits/8) message bytes
faults; the hashing runs in a child process so the fault fails one test
instead of killing the test run.
"""

from __future__ import annotations

import json
import subprocess
import sys

_CHILD = r"""
import ctypes, json, mmap, sys
import ngcc

name, cases = json.loads(sys.stdin.read())
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
page = mmap.PAGESIZE
out = []
for hex_msg, bits in cases:
    data = bytes.fromhex(hex_msg)
    size = (bits + 7) // 8
    pages = (size + page - 1) // page + 1
    area = mmap.mmap(-1, (pages + 1) * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(area))
    guard = pages * page
    if libc.mprotect(base + guard, page, 0) != 0:
        raise OSError(ctypes.get_errno(), "mprotect failed")
    area[guard - size:guard] = data[:size]
    out.append(ngcc.hash(name, memoryview(area)[guard - size:guard], bits).hex())
print(json.dumps(out))
"""


def hash_before_guard_page(instance: str, cases: list[tuple[bytes, int]]) -> list[bytes]:
    """Return the digests of (message, bits) cases, each message ending at a guard page.

    Raises AssertionError naming the instance when the child process faults.
    """
    payload = json.dumps([instance, [(m.hex(), bits) for m, bits in cases]])
    child = subprocess.run([sys.executable, "-c", _CHILD], input=payload, capture_output=True,
                           text=True, timeout=300, check=False)
    if child.returncode != 0:
        raise AssertionError("%s read past the end of the message (child exit %d): %s"
                             % (instance, child.returncode, child.stderr[-2000:]))
    return [bytes.fromhex(d) for d in json.loads(child.stdout)]
