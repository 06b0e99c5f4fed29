"""Whether submitted code runs in the kernel's isolation, and what to say when it cannot.

Every process that runs submitted code (``ngcc-driver`` in every mode, the compiler on
archive sources) runs in its own user, PID, network, IPC and mount namespaces. Where
the kernel refuses them (some containers) ngcc stops with :class:`SandboxUnavailableError`
naming the remedy, unless the evaluator asked to run without them: ``--no-sandbox`` on
the command line, or ``NGCC_NO_SANDBOX=1`` in the environment (the driver's seccomp
filter still applies; the record says which isolation each trial had).

Both start with a fixed minimal environment (:func:`minimal_environment`), whatever
ngcc's own holds: a token, password or key set for something else never reaches
submitted code (issue 45).
"""

from __future__ import annotations

import os

ENVIRONMENT_VARIABLE = "NGCC_NO_SANDBOX"

NAMESPACES = "namespaces"   # user, PID, network, IPC, mount, UTS + the seccomp filter
FILTER_ONLY = "filter"      # the seccomp filter alone (--no-sandbox)

#: The exit status of ngcc-driver --isolate and of ngcc-jail when the kernel refuses the
#: namespaces (ISOLATE_EXIT_UNAVAILABLE in csrc/isolate/isolate.h), before running anything.
EXIT_UNAVAILABLE = 122

REMEDY = ("this kernel or container refuses unprivileged user namespaces; allow them "
          "(sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0, "
          "or run the container with --security-opt seccomp=unconfined), or run "
          "submitted code with the seccomp filter alone: --no-sandbox or %s=1"
          % ENVIRONMENT_VARIABLE)


#: The variables of ngcc's environment that the processes running submitted code get:
#: the programs' search path, the language and the time zone, and ngcc's own
#: (``NGCC_...``); nothing else.
KEPT_VARIABLES = ("PATH", "LANG", "TZ")
KEPT_PREFIX = "NGCC_"


def minimal_environment(**extra: str) -> dict[str, str]:
    """The environment of a process that runs submitted code (``ngcc-driver``,
    ``ngcc-jail`` and the compiler in it): :data:`KEPT_VARIABLES` and the ``NGCC_``
    variables of ngcc's own environment, then ``extra``."""
    kept = {name: value for name, value in os.environ.items()
            if name in KEPT_VARIABLES or name.startswith(KEPT_PREFIX)}
    return {**kept, **extra}


def sandbox_enabled() -> bool:
    """True unless ``NGCC_NO_SANDBOX`` is set to a true value (``1``, ``yes``, ``true``)."""
    value = os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower()
    return value not in ("1", "yes", "true", "on")


def isolation_name() -> str:
    """The isolation submitted code gets now: ``namespaces`` or ``filter``."""
    return NAMESPACES if sandbox_enabled() else FILTER_ONLY


def disable_sandbox() -> None:
    """Run submitted code with the seccomp filter alone from now on (``--no-sandbox``):
    sets the environment variable so child processes and workers agree."""
    os.environ[ENVIRONMENT_VARIABLE] = "1"
