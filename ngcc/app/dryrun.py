"""``ngcc evaluate --dry-run``: what an evaluation of some archives will build, before
anything is built or measured, and without a CPU lock. Each folder's header is read as
the build will read it (the preprocessor, in the compiler's jail: no submission code
runs), so the plan names each folder's instance, digest width, candidate and label, and
what is already known to fail (a header that does not give a valid name, a link not
followed)."""

from __future__ import annotations

import platform

from ngcc.base.errors import CERTAIN_FIXES, BuildError, InvalidNameError, PublishedError
from ngcc.campaign import conditions as _conditions
from ngcc.campaign import cost as _cost
from ngcc.campaign import ct_step as _ct_step
from ngcc.campaign.settings import CampaignSettings
from ngcc.driver.child import DriverRunner
from ngcc.driver.contract import TrialRunner
from ngcc.library import archive as _archive
from ngcc.library import candidates as _candidates
from ngcc.library.archive import Archives, Folder
from ngcc.library.header import read_instance_header
from ngcc.measure.locks import default_cpu
from ngcc.report import published as _published


def plan_lines(archives: Archives, ct: bool | None = None,
               settings: CampaignSettings | None = None,
               runner: TrialRunner | None = None) -> list[str]:
    """What ``--dry-run`` prints: each folder found, its kind and the build options,
    then its instance, digest width, candidate and label (or why it will not build),
    the trials' time on this host now from the plan alone (``settings``, default the
    defaults; each trial's start measured by ``runner``, default the driver's, with
    the built-in SM3: no submission code runs), and the constant-time step's cost
    where it runs (``ct``: as :func:`ngcc.app.evaluate.evaluate`).

    Raises:
        ArchiveError: an archive that is not a folder, or no implementation folder.
    """
    pairs = _archive.folders_of(archives)
    lines = ["%d implementation folder(s) found in %d archive(s):" % (
        len(pairs), len({root for root, _ in pairs}))]
    headers = {folder.path: _header(folder) for _, folder in pairs}
    known = _submission_candidates([(f, headers[f.path]) for _, f in pairs])
    for root, folder in pairs:
        if folder.linked_to is not None:
            lines.append("  %-9s not followed (a link to %s)       %s" % (
                folder.kind, folder.linked_to, folder.shown(root)))
            continue
        lines.append("  %-9s ngcc build --flags %-11s %s" % (
            folder.kind, folder.flags, folder.shown(root)))
        lines.append("            " + _instance_words(folder, headers[folder.path], known))
    lines.append("each build that fails may be run again with the fixes its own diagnosis "
                 "is certain of (%s), each recorded as an adjustment; nothing was built"
                 % CERTAIN_FIXES)
    instances = [_published_instance(folder, headers[folder.path], known)
                 for _, folder in pairs if not isinstance(headers[folder.path], str)]
    lines.append(_trials_line(instances, settings or CampaignSettings.make(),
                              runner or DriverRunner()))
    if _ct_step.wanted(ct):
        lines.append(_ct_step.plan_line(sum(1 for _, f in pairs if f.linked_to is None)))
    return lines


#: The harness's system whose published figures stand for a library's speed before its
#: build (``report.published``): the one of this machine's architecture.
PUBLISHED_SYSTEM = "arm_1" if platform.machine() in ("aarch64", "arm64") else "x86_1"


def _trials_line(instances: list[str | None], settings: CampaignSettings,
                 runner: TrialRunner) -> str:
    """The trials' time of the libraries that will build (``cost.plan_only``), each of
    ``instances`` (the harness's name of its instance, None where no candidate claims
    it) as fast as its published figure says where there is one, or why there is no
    time here."""
    if settings.workers is not None or settings.scheduler is not None:
        return ("the trials run as whole jobs on workers, each calibrated where it is "
                "measured: no time is estimated here")
    cpu = default_cpu()  # the CPU share there now: nothing of the evaluation's runs yet
    calls = _cost.reference_calls(runner, cpu)
    start = _conditions.start_cost(runner, cpu, _conditions.host_share(cpu=cpu),
                                   _cost.reference_probe(calls))
    return _cost.plan_only(_published_calls(instances, calls), settings, start,
                           start.share or _conditions.host_share(), calls, PUBLISHED_SYSTEM)


def _published_calls(instances: list[str | None], calls: _cost.ReferenceCalls | None
                     ) -> list[_cost.PublishedCalls | None]:
    """Each instance's calls at this host's rate (:class:`~ngcc.campaign.cost.PublishedCalls`)
    where :data:`PUBLISHED_SYSTEM` has its figures at two lengths or more, else None."""
    if calls is None:
        return [None] * len(instances)
    try:
        figures = _published.load(PUBLISHED_SYSTEM)
    except PublishedError:
        figures = {}
    lines: dict[str, list[tuple[int, float]]] = {}
    for (name, length), figure in figures.items():
        lines.setdefault(name, []).append((length, figure.mean_cycles))
    reference = tuple(sorted(lines.get("sm3hash-256", ())))
    if len(reference) < 2:
        return [None] * len(instances)
    return [_cost.PublishedCalls(name, tuple(sorted(lines[name])), reference, calls)
            if name is not None and len(lines.get(name, ())) >= 2 else None
            for name in instances]


def _published_instance(folder: Folder, header: tuple[str, int] | str,
                        known: dict[str, set[str]]) -> str | None:
    """The harness's name of a folder's instance (``laurus_512`` is ``Laurus-512``), None
    where no candidate claims it."""
    if isinstance(header, str):
        return None
    return _candidates.manifest_folder(_folder_candidate(folder, header[0], known)[0],
                                       header[0])


def _header(folder: Folder) -> tuple[str, int] | str:
    """(instance name, digest bits) as the build will read them, or why it cannot."""
    if folder.linked_to is not None:
        return "a link, not followed"
    try:
        return read_instance_header(folder.path)
    except (BuildError, InvalidNameError) as exc:
        return str(exc).splitlines()[0].replace(str(folder.path), folder.path.name)


def _candidate(name: str) -> str:
    """The candidate the build infers from an instance name (``external`` for none)."""
    try:
        return _candidates.infer_candidate(name) or _candidates.EXTERNAL
    except _candidates.AmbiguousInstanceError:
        return "ambiguous"


def _submission_candidates(found: list[tuple[Folder, tuple[str, int] | str]]
                           ) -> dict[str, set[str]]:
    """The registry candidates each submission's headers name (a library no candidate
    claims takes its submission's one, as ``ngcc evaluate`` builds it)."""
    known: dict[str, set[str]] = {}
    for folder, header in found:
        if not isinstance(header, str):
            candidate = _candidate(header[0])
            if candidate not in (_candidates.EXTERNAL, "ambiguous"):
                known.setdefault(folder.submission, set()).add(candidate)
    return known


def _folder_candidate(folder: Folder, name: str, known: dict[str, set[str]]
                      ) -> tuple[str, bool]:
    """The candidate of a folder whose header names ``name``, and whether it is its
    submission's (a name no candidate claims, in a submission of one known candidate)."""
    candidate = _candidate(name)
    if candidate == _candidates.EXTERNAL and len(known.get(folder.submission, ())) == 1:
        return next(iter(known[folder.submission])), True
    return candidate, False


def _instance_words(folder: Folder, header: tuple[str, int] | str,
                    known: dict[str, set[str]]) -> str:
    """``instance laurus_512, 512 bits, candidate hash-14 (Laurus), label
    Laurus-512@ref``, or ``will not build: <why>``."""
    if isinstance(header, str):
        return "will not build: " + header
    name, bits = header
    candidate, inherited_from_submission = _folder_candidate(folder, name, known)
    inherited = ", its submission's" if inherited_from_submission else ""
    title = _candidates.title(candidate)
    label = "label %s@%s" % (_candidates.harness_name(candidate, name),
                             _archive.KIND_SUFFIX.get(folder.kind, folder.kind))
    if inherited:  # its name is no instance of the candidate: matched by content
        label += " unless its KAT_2_12 file equals another instance's manifest line"
    return "instance %s, %d bits, candidate %s%s%s, %s" % (
        name, bits, candidate, " (%s)" % title if title else "", inherited, label)

