"""``python -m rnnlab.i18n``: keep the catalogs (see :mod:`rnnlab.i18n.catalogs`)."""

import sys

from rnnlab.i18n.catalogs import main

sys.exit(main(sys.argv[1:]))
