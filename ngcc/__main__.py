"""``python -m ngcc``: the same command line as the ``ngcc`` script.

A Ctrl-C while it starts ends with one line and exit status 130, as in the script:
while the package imports (``ngcc/__init__.py`` says it) and while the command line's
modules import (here).
"""

import sys

try:
    from ngcc.cli.main import main
except KeyboardInterrupt:
    print("ngcc: interrupted while starting; nothing was done", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
