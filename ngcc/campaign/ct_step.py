"""The constant-time step of ``ngcc evaluate`` (on by default where valgrind is
present; ``--no-ct`` skips it): each library built, analysed by ``ngcc ct``'s own
analysis (:func:`ngcc.measure.ct_measurement.constant_time`), its evidence written
to ``RUN_DIR/ct/<candidate>/<label>__ct.json``. A library whose evidence is there and
sound keeps it on resume. Its cost is in the campaign's plan (:func:`seconds`), its
progress a task of the campaign's reporter (a line per library without a terminal)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from ngcc.base.errors import CorruptRecordError, NgccError
from ngcc.base.progress import Progress
from ngcc.evidence import ct_evidence as _evidence
from ngcc.evidence.ct_evidence import CtEvidence
from ngcc.library.registry import instance
from ngcc.measure import ct_measurement as _ct

#: Seconds one library's analysis takes, about: its twin's build, then valgrind's
#: start and the lengths under memcheck (measured on the built-ins: 5 to 8 s a library
#: on a loaded 2-core KVM guest; a large submission takes longer).
SECONDS_PER_LIBRARY = 10.0
#: The step's name in the progress and the plan.
STEP = "constant time (ngcc ct)"


def wanted(asked: bool | None) -> bool:
    """Whether the step runs: as asked, else where valgrind is on PATH."""
    return asked if asked is not None else shutil.which("valgrind") is not None


def seconds(libraries: int) -> float:
    """The step's estimated seconds for ``libraries`` libraries (the plan's
    ``ct_seconds``)."""
    return SECONDS_PER_LIBRARY * libraries


def plan_line(libraries: int) -> str:
    """The step in ``evaluate --dry-run``'s plan: what it does and about how long it
    takes."""
    return ("%s: each library's -g debug twin under valgrind memcheck, "
            "about %.0f s a library (%d: about %.0f s); --no-ct skips it"
            % (STEP, SECONDS_PER_LIBRARY, libraries, seconds(libraries)))


def _kept(path: Path) -> bool:
    try:
        _evidence.read_evidence(path)
    except CorruptRecordError:
        return False
    return True


def _done(out: Path, label: str, library: Path) -> bool:
    """Whether sound evidence of the library is there (one that cannot be looked up
    never is: its analysis is a ``not analysed`` record)."""
    try:
        inst = instance(library)
    except NgccError:
        return False
    target = _evidence.evidence_path(CtEvidence(
        instance=inst.name, label=label, candidate=inst.candidate, variant=inst.variant,
        library=str(library), verdict=_evidence.CONSTANT_TIME), out)
    return target.is_file() and _kept(target)


def todo(run_dir: Path, libraries: Sequence[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """The ``(label, library path)`` pairs the step analyses: those without sound
    evidence in ``run_dir/ct/``."""
    out = run_dir / _evidence.CT_DIR
    return [(label, library) for label, library in libraries
            if not _done(out, label, library)]


def _analysis(label: str, library: Path) -> CtEvidence:
    try:
        inst = instance(library)
    except NgccError as exc:
        return CtEvidence(instance=label, label=label, candidate="external",
                          variant="external", library=str(library),
                          verdict=_evidence.NOT_ANALYSED, reason=str(exc))
    return _ct.constant_time(inst, label=label)


def run(run_dir: Path, libraries: Sequence[tuple[str, Path]],
        progress: Progress | None = None) -> list[CtEvidence]:
    """Analyse each ``(label, library path)`` into ``run_dir/ct/``; return the evidence
    made now (a library whose sound evidence is there is kept). A library that cannot
    be looked up is a ``not analysed`` record, never a stop. ``progress``: where each
    library's verdict is told (default: nowhere)."""
    out = run_dir / _evidence.CT_DIR
    pending = todo(run_dir, libraries)
    made = []
    reporter = progress if progress is not None else Progress("off")
    with reporter.task(STEP, total=seconds(len(pending)),
                       items=len(pending)) as task:
        for label, library in pending:
            task.status(label)
            evidence = _analysis(label, library)
            _evidence.write_evidence(evidence, out)
            made.append(evidence)
            task.advance(SECONDS_PER_LIBRARY)
            task.item_done(label, evidence.summary())
    return made
