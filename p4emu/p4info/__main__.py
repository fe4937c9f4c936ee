"""``python -m p4emu.p4info PROGRAM.p4 -o OUT.p4info.txtpb``."""

from __future__ import annotations

import sys

from p4emu.p4info.cli import main

sys.exit(main())
