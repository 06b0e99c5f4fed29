"""The sections of a report page, one module per family.

A candidate page has the structure of the independent NGCC performance pages
(``docs/spec/seeds/``), which follow the NICCS x86 self-assessment guide §3.5: sections
1 (basic information), 2 (assessment environment) in :mod:`.basic`, 3 (functional
testing) in :mod:`.kat`, 4 (performance) in :mod:`.performance`, 5 (resource
consumption) in :mod:`.resources` and 7 (raw evidence index) in :mod:`.evidence`, with
the same columns and number formatting (:mod:`ngcc.base.format`), and about their
length. What those pages lack — the 95 % confidence intervals, the per-call median, the
CPU-time figure, the ratio to the pseudoXOF baseline, the trial flags and the plots —
sits in one clearly titled table after section 4 (:mod:`.statistics`), each figure once
and none of section 4's again; the analyses of a library have a section each, in their
slice (:mod:`.leak_section`: the leak tests; :mod:`.ct_section`: constant time;
``ngcc.evidence.analyses``). Trial flags are one line per kind (how many, the worst
case); jobs that were not measured are said once, at the top of each page (counts by
status, each distinct cause once with the jobs it stopped: :mod:`.failures`); a page
links only the plots that are drawn beside it. :mod:`.common` holds what every section
shares.

A section is a function of the run (or its records) that returns the section's
Markdown lines; the pages (:mod:`ngcc.report.pages`) put them together.
"""
