"""``python -m ngcc``: the same command line as the ``ngcc`` script."""

import sys

from ngcc.cli.main import main

sys.exit(main())
