"""``python -m p4emu``."""

from __future__ import annotations

import sys

from p4emu.cli import main

if __name__ == "__main__":
    sys.exit(main())
