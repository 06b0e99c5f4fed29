"""The command line of every Python child process ngcc starts.

``python -m ngcc._isolate`` or ``python -c ...`` puts the working directory first on
``sys.path``; run from a source checkout with a non-editable install, the folder
``./ngcc`` (no built ``_core``) then shadows the installed package and every child
fails. :func:`python_child_command` replaces that entry with the folder the parent's
own ``ngcc`` was imported from, so a child imports exactly the parent's installation
whatever the working directory and install mode (``pip install .``, ``-e``, a wheel).

Not ``python -I``: it would also drop ``PYTHONPATH`` and the user site-packages (where
``pip install --user`` puts numpy) and ``PYTHONMALLOC`` (the sanitizer runs), so a
child could not import what its parent did.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The folder that holds the parent's ``ngcc`` package.
PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)

# ``-c`` puts "" (the working directory) first on sys.path, unless PYTHONSAFEPATH is set.
_PATH_SETUP = (
    "import sys\n"
    "if sys.path[:1] == ['']:\n"
    "    del sys.path[0]\n"
    "sys.path.insert(0, sys.argv.pop(1))\n")


def python_child_command(code: str, *args: str) -> list[str]:
    """The command that runs ``code`` in a fresh interpreter like this one, with ``args``
    as ``sys.argv[1:]`` and the parent's ``ngcc`` first on ``sys.path``."""
    return [sys.executable, "-c", _PATH_SETUP + code, PACKAGE_ROOT, *args]
