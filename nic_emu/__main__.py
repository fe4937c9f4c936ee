"""``python -m nic_emu`` is the ``nic-emu`` command (docs/nic-emu-process.md)."""

from __future__ import annotations

import sys

from nic_emu.cli import main

sys.exit(main())
