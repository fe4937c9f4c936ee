"""mrc-testbed's launcher: bring an emulated MRC fabric up, break it, tear it down.

Modes: ``local`` (processes over loopback UDP, no root) and ``mininet`` (veth pairs and
namespaces, root). The CLI is :mod:`testbed.cli` (``mrc-testbed``); docs/testbed.md.
"""
