"""The constant-time step of ``ngcc evaluate`` (on by default where valgrind is
present; ``--no-ct`` skips it): each library built, analysed by ``ngcc ct``'s own
analysis (:func:`ngcc.measure.ct_measurement.constant_time`), its evidence written
to ``RUN_DIR/ct/<candidate>/<label>__ct.json``. A library whose evidence is there,
sound and of the same twin sources, keeps it on resume."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from ngcc.base.errors import CorruptRecordError, NgccError
from ngcc.evidence import ct_evidence as _evidence
from ngcc.evidence.ct_evidence import CtEvidence
from ngcc.library.registry import instance
from ngcc.measure import ct_measurement as _ct

#: Seconds one library's analysis takes, about: its twin's build, then valgrind's
#: start and the lengths under memcheck (measured on the built-ins: 5 to 8 s a library
#: on a loaded 2-core KVM guest; a large submission takes longer).
SECONDS_PER_LIBRARY = 10.0


def wanted(asked: bool | None) -> bool:
    """Whether the step runs: as asked, else where valgrind is on PATH."""
    return asked if asked is not None else shutil.which("valgrind") is not None


def plan_line(libraries: int) -> str:
    """The step in a plan: what it does and about how long it takes."""
    return ("constant time (ngcc ct): each library's -g debug twin under valgrind memcheck, "
            "about %.0f s a library (%d: about %.0f s); --no-ct skips it"
            % (SECONDS_PER_LIBRARY, libraries, SECONDS_PER_LIBRARY * libraries))


def _kept(path: Path) -> bool:
    try:
        _evidence.read_evidence(path)
    except CorruptRecordError:
        return False
    return True


def run(run_dir: Path, libraries: Sequence[tuple[str, Path]],
        on_done: Callable[[CtEvidence], None] | None = None) -> list[CtEvidence]:
    """Analyse each ``(label, library path)`` into ``run_dir/ct/``; return the evidence
    made now (a library whose sound evidence is there is kept). A library that cannot
    be looked up is a ``not analysed`` record, never a stop."""
    out = run_dir / _evidence.CT_DIR
    made = []
    for label, library in libraries:
        try:
            inst = instance(library)
        except NgccError as exc:
            evidence = CtEvidence(instance=label, label=label, candidate="external",
                                  variant="external", library=str(library),
                                  verdict=_evidence.NOT_ANALYSED, reason=str(exc))
        else:
            target = _evidence.evidence_path(CtEvidence(
                instance=inst.name, label=label, candidate=inst.candidate,
                variant=inst.variant, library=str(library), verdict=_evidence.CONSTANT_TIME),
                out)
            if target.is_file() and _kept(target):
                continue
            evidence = _ct.constant_time(inst, label=label)
        _evidence.write_evidence(evidence, out)
        made.append(evidence)
        if on_done is not None:
            on_done(evidence)
    return made
