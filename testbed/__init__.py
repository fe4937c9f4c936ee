"""mrc-testbed's launcher: bring an emulated MRC fabric up, break it, tear it down.

Modes: ``local`` (processes over loopback UDP, no root) and ``mininet`` (veth pairs and
namespaces, root). The CLI is :mod:`testbed.cli` (``mrc-testbed``); docs/testbed.md.
"""

from __future__ import annotations

from clikit import hotpath  # noqa: F401 - first: the compiled-or-pure finder (docs/virtual-fabric.md)
