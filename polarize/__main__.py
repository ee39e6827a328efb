"""``python -m polarize``: the command line."""

import sys

from polarize.cli import main

sys.exit(main())
