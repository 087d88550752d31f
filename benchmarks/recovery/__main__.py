"""``python -m benchmarks.recovery``."""

import sys

from benchmarks.recovery.run import main

sys.exit(main())
