"""``python -m rnnlab``: see :mod:`rnnlab.cli`."""

import sys

from rnnlab.cli import main

sys.exit(main())
