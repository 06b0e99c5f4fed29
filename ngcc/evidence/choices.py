"""The choices a campaign's plan and its trials record, each one of a few words: the
counter a trial is asked to use, the statistic ``--target-ci`` aims at, the rule of
calls per trial and the order of the trials; and what a comparison of two runs is about
and its significance level unless asked.

:mod:`ngcc.evidence.model` checks a record against them and :mod:`ngcc.stats.compare`
compares by them; the options of the command line (``--counter``, ``--statistic``,
``--plan``, ``--order``; ``ngcc compare --statistic``, ``--alpha``) offer them, read
here without loading the model or numpy, so that the command line starts without them.
"""

from __future__ import annotations

#: The counters a trial can be asked to use (``--counter``; ``csrc/timer.h``).
COUNTER_CHOICES = ("auto", "perf", "tsc", "clock")
#: The statistics ``--target-ci`` can aim at (``--statistic``).
STATISTICS = ("mean", "median")
#: How calls per trial are planned (``--plan``): the harness's rule from one cold
#: call, or enough calls for ``trial_target`` seconds from warm calls.
CALLS_RULES = ("harness", "warm")
#: The orders in which a campaign runs its trials (``--order``).
ORDERS = ("interleaved", "sequential")

#: The per-trial statistics a comparison can be about: ``figure``, each trial's value of
#: the figure its record leads with (the trials of the slow speed state left out), or
#: the per-call ``median`` or ``mean`` of each trial.
COMPARED_STATISTICS = ("figure", "median", "mean")
#: The statistic compared unless another is asked for: what every view leads with.
DEFAULT_COMPARED_STATISTIC = "figure"
#: The significance level of a comparison unless another is asked for.
ALPHA = 0.05
#: The systems whose published harness figures ship in ``ngcc/published`` (``ngcc
#: compare --published``).
PUBLISHED_SYSTEMS = ("x86_1", "arm_1")
