"""Errors raised by p4emu's port I/O."""

from __future__ import annotations

from p4emu.exceptions import P4EmuError


class PortIOError(P4EmuError):
    """A port driver could not be opened or used (names the port and the cause)."""


class PortSpecError(PortIOError):
    """A ``-i PORT@IFACE`` specification is malformed."""
