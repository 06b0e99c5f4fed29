"""The official known-answer tests (KAT): regenerate an instance's KAT files and
check them against the official manifests.

:func:`check` drives an instance library through the official KAT generator
(``spec/kat-format.md``, reimplemented in ``csrc/common/kat.c``) in the trial driver
(``ngcc-driver``, a process of its own: ``ngcc/driver/child.py``), every message ending
right before an unreadable guard page, compares each file's canonical SHA-256 with
the manifest line of that file name (whatever folder the line names), runs the guard probe
(every length again at the start of a page after a guard page), and writes a KAT log
per instance::

    >>> import ngcc.kat
    >>> [result] = ngcc.kat.check("Wish512", files=("2_12", "2_23"))
    >>> result.verdict
    'PASS'

Each file is checked against the first reference there is (its *basis*, one of
:data:`BASES`, named in the result, the KAT log and the report): the manifest line of
its name in the manifest given (``manifest=``, or ``ngcc build --manifest``), else in
the candidate's shipped manifest (``kat/<candidate>.sha256``); else the official file
in ``official_dir``; else the KAT file the submission ships; else none (``NOKAT``).

Verdicts (per file, and per instance as the worst of its files):

=========  ==============================================================
PASS       the canonical digest equals the manifest line
MISMATCH   it does not (or CryptHash returned nonzero); when the official
           file is at hand the first differing record is named
NOKAT      no reference to check the file against: no manifest line, no
           official file given, no KAT file shipped with the submission
           (e.g. the SM3 baseline)
CRASH      the instance library killed the generating process (reading past
           or before the message faults at once: the detail names the guard)
TIMEOUT    generation took longer than ``timeout``
ERROR      the generator could not run: out of memory for the 1 GiB
           message of KAT_2_33, library not loadable, disk full
=========  ==============================================================
"""

from ngcc.driver.kat import (
    BASES,
    DEFAULT_FILES,
    FILES,
    VERDICTS,
    KatFileResult,
    KatProbeResult,
    KatResult,
    check,
    file_name,
)

__all__ = ["BASES", "DEFAULT_FILES", "FILES", "VERDICTS", "KatFileResult", "KatProbeResult",
           "KatResult", "check", "file_name"]
