"""``python -m ngcc``: the same command line as the ``ngcc`` script."""

import sys

from ngcc._cli import main

sys.exit(main())
