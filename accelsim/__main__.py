"""`python -m accelsim` runs the command line."""

import sys

from accelsim.cli import main

sys.exit(main())
