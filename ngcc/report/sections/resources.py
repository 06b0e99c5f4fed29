"""Section 5 of a candidate page (resource consumption): the library's static size
and the trial process's resident memory."""

from __future__ import annotations

from collections.abc import Sequence

from ngcc.base import format as _format
from ngcc.evidence.model import Record
from ngcc.report.sections.common import SECTION_TITLES, instance_label
from ngcc.report.tables import markdown_table

RESOURCE_COLUMNS = ("instance", "operation", "static: ELF image (bytes)", "baseline RSS",
                    "peak RSS")


def resource_row(record: Record) -> tuple[str, ...]:
    """One row of section 5."""
    resources = record.resources
    return (instance_label(record), _format.operation(record.message_bytes),
            _format.byte_count(resources.elf_image_bytes),
            _format.kibibytes(resources.baseline_rss_kib),
            _format.kibibytes(resources.peak_rss_kib))


def _rss_process(records: Sequence[Record]) -> str:
    """What the RSS figures include: the trial process was ``ngcc-driver`` (C) or, in runs
    of ngcc versions before it, a Python process."""
    if all(r.provenance.runner.endswith("DriverRunner") for r in records):
        return "of the trial process, ngcc-driver (C) with the library and libc"
    return ("of the trial process, including, where it was a Python process, the "
            "interpreter and numpy (about 40 MiB)")


def resource_consumption(records: Sequence[Record]) -> list[str]:
    return ["## " + SECTION_TITLES[4], "",
            "Static memory is approximated by the library's loadable ELF segments (the "
            "memory sizes of its PT_LOAD segments); peak memory is the process high-water "
            "mark (VmHWM) " + _rss_process(records) + ", so both are upper-bound proxies "
            "rather than isolated algorithm memory. Baseline RSS is taken after loading "
            "the library, before the warm-up; both are the maxima over the trials.", ""] + \
        markdown_table(RESOURCE_COLUMNS, [resource_row(r) for r in records]) + [""]
