"""Errors of p4emu's P4Runtime client stack, and the names of status codes in messages."""

from __future__ import annotations

from p4emu.exceptions import P4EmuError
from p4emu.proto import rpc_code


class EntityNameError(P4EmuError):
    """Building an entity by name failed: unknown name, parameter, or a value too wide."""


def code_name(code: int) -> str:
    """``"INVALID_ARGUMENT"`` for 3, etc. (the number itself if unknown)."""
    try:
        return rpc_code.Code.Name(code)
    except ValueError:
        return str(code)
