"""``python -m vecenv``: the command line (see :mod:`vecenv.cli`)."""

import sys

from .cli import main

sys.exit(main())
