"""`python -m mpsched.traffic.gen`: see the package's docstring and `cli.py`."""

import sys

from mpsched.traffic.gen.cli import main

sys.exit(main())
