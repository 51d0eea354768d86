"""``python -m pciname``: the same command line as ``pciname``."""

import sys

from .cli import main

sys.exit(main())
