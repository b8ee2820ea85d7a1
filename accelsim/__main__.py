"""`python -m accelsim` runs the command line."""

import sys

from accelsim.cli.main import main

sys.exit(main())
