"""The KAT log of one instance (``spec/kat-format.md``): what was checked (the library,
its build, the manifest, the isolation, the build's adjustments) and each file's
verdict, written atomically by :func:`ngcc.driver.kat.check`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ngcc.base.clock import utc_now
from ngcc.base.files import atomic_write_bytes, sha256_file
from ngcc.base.version import __version__
from ngcc.driver import process as _process
from ngcc.library.registry import Instance

if TYPE_CHECKING:
    from ngcc.driver.kat import KatFileResult, KatProbeResult


def write_log(log: Path, inst: Instance, label: str, results: tuple[KatFileResult, ...],
               probe: KatProbeResult, verdict: str, manifest: Path, basis: str,
               by_content: str = "") -> None:
    """Write the KAT log atomically (temp file, fsync, rename: ``base.files``);
    ``by_content``: how the files were matched to manifest lines not of their name."""
    lines = [
        "ngcc KAT log (generator: ngcc %s, spec/kat-format.md)" % __version__,
        "date        %s" % utc_now(),
        "instance    %s" % inst.name,
        "label       %s" % label,
        "candidate   %s" % inst.candidate,
        "variant     %s" % inst.variant,
        "digest      %d bits" % inst.digest_bits,
        "library     %s" % inst.library,
        "sha256      %s" % _file_sha256(inst.library),
        "compiler    %s" % (inst.compiler or "unknown"),
        "flags       %s" % (" ".join(inst.cflags) or "unknown"),
        "manifest    %s" % manifest,
        "  sha256    %s" % (_file_sha256(manifest) if manifest.is_file() else "- (no such file)"),
        "basis       %s" % basis,
        *(["by content  %s" % by_content] if by_content else []),
        "isolation   %s" % _process.isolation_now(),
        *("adjusted    %s" % text for text in _adjustments(inst)),
        "",
    ]
    for r in results:
        lines += [
            "FILE %s %s" % (r.name, r.verdict),
            "  time              %s" % ("%.3f s" % r.seconds if r.seconds is not None else "-"),
            "  size              %s" % ("%d bytes" % r.size if r.size is not None else "-"),
            "  canonical sha256  %s" % (r.canonical_sha256 or "-"),
            "  manifest sha256   %s" % (r.expected_sha256 or "-"),
            "  basis             %s%s" % (r.basis, " " + r.reference if r.reference else ""),
        ]
        if r.detail:
            lines.append("  detail            %s" % r.detail)
        lines.append("")
    lines += ["PROBE guard pages %s" % probe.verdict,
              "  detail            %s" % probe.detail, ""]
    lines.append("RESULT %s %s %s" % (inst.candidate, inst.name, verdict))
    # a path of a folder whose name is not UTF-8 (os decodes its bytes as lone
    # surrogates) is written escaped, as plain() shows it
    atomic_write_bytes(log, ("\n".join(lines) + "\n").encode("utf-8", "backslashreplace"))


def _adjustments(inst: Instance) -> list[str]:
    """The build options ``ngcc evaluate`` added on the build's diagnosis (sidecar)."""
    found = (inst.sidecar or {}).get("adjustments")
    return [str(a) for a in found] if isinstance(found, list) else []


def _file_sha256(path: Path) -> str:
    try:
        return sha256_file(path)
    except OSError as exc:
        return "unreadable (%s)" % exc
