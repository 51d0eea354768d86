"""``python -m pciname``: the same command line as ``pciname``."""

import sys

from pciname.cli import main

sys.exit(main())
