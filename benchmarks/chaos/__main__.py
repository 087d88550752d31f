"""``python -m benchmarks.chaos``."""

import sys

from benchmarks.chaos.run import main

sys.exit(main())
