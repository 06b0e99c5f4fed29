"""What an analysis of a library is, and the analyses there are.

An analysis (beside timing: the leak test, constant time) is one slice through the
stages: one module per stage it needs, each named ``<analysis>_<role>`` so that its
name says which analysis it serves, and one row of :data:`ANALYSES`:

=============  ==================================  ==============================================
role           module                              what it holds
=============  ==================================  ==============================================
``twin``       ``library/<name>_twin``             the library it runs, if not the library itself
``evidence``   ``evidence/<name>_evidence``        its evidence type, codec and files:
                                                   ``read_evidence(path)``, ``run_evidence(dir)``
``statistics`` ``stats/<name>_statistics``         what it computes from what it measured
``mode``       ``driver/<name>_mode``              its driver mode (the C: ``csrc/driver/``)
``measurement`` ``measure/<name>_measurement``     the analysis of one library
``step``       ``campaign/<name>_step``            its step of a campaign (optional)
``section``    ``report/sections/<name>_section``  its page section: ``section(run, candidate,
                                                   plotted)``, its column in the tables
                                                   of libraries: ``library_column(run)``,
                                                   ``plot_stems(run)``,
                                                   ``draw_plots(run, out)``
``plot``       ``report/plots/<name>_plot``        its figures (optional)
``command``    ``cli/<name>_command``              its subcommand: ``add_command(subcommands)``
=============  ==================================  ==============================================

The modules that serve every analysis find a slice's module by :meth:`Analysis.module`:
the command line (``cli/main``), the run object (``evidence/run``), ``ngcc validate``
(``report/validate``), the pages and their plots (``report/pages``, ``report/write``).
tests/test_imports.py holds those imports to the stage order as it holds the others.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

#: Each role of a slice: the package folder of its module (its stage).
ROLES = {"twin": "library", "evidence": "evidence", "statistics": "stats", "mode": "driver",
         "measurement": "measure", "step": "campaign", "section": "report.sections",
         "plot": "report.plots", "command": "cli"}


@dataclass(frozen=True)
class Analysis:
    """One analysis of a library.

    Attributes:
        name: its name: its command (``ngcc leak``), its driver mode and the first
            word of each of its modules.
        title: its title on a page.
        folder: its evidence folder in a run directory.
        roles: the roles of :data:`ROLES` it has a module for.
    """

    name: str
    title: str
    folder: str
    roles: tuple[str, ...]

    def module(self, role: str) -> str:
        """The dotted name of its module of ``role`` (``ngcc.cli.leak_command``).

        Raises:
            KeyError: a role it has no module for.
        """
        if role not in self.roles:
            raise KeyError("the %s analysis has no %s module" % (self.name, role))
        return "ngcc.%s.%s_%s" % (ROLES[role], self.name, role)


#: Every analysis, in the order pages show them: the one registration of a slice.
ANALYSES = (
    Analysis("leak", "Timing leakage", "leak",
             ("evidence", "statistics", "mode", "measurement", "step", "section", "plot",
              "command")),
    Analysis("ct", "Constant time", "ct",
             ("twin", "evidence", "statistics", "mode", "measurement", "step", "section",
              "command")),
)


def slice_modules(role: str) -> list[ModuleType]:
    """The module of ``role`` of every analysis that has one, imported, in the order of
    :data:`ANALYSES`. Called by the module that serves that role (its stage is that
    role's or a later one)."""
    return [importlib.import_module(analysis.module(role)) for analysis in ANALYSES
            if role in analysis.roles]
