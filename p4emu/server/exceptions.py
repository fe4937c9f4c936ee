"""Errors raised by the p4emu-switch process and its P4Runtime server."""

from __future__ import annotations

from p4emu.exceptions import P4EmuError


class ServerError(P4EmuError):
    """Base class of p4emu-switch errors."""


class OptionsError(ServerError):
    """The command line is malformed; the message says which flag and why."""
