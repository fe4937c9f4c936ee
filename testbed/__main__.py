"""``python -m testbed`` is ``mrc-testbed``."""

from __future__ import annotations

import sys

from testbed.cli import main

sys.exit(main())
