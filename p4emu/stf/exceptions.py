"""Errors of the STF runner.

Every error carries the STF file and line it comes from (``file:line: message``), so a
bad test file or a refused table entry points at the line to fix; a mismatch between
expected and received packets is not an error but a failed :class:`StfResult`.
"""

from __future__ import annotations

from p4emu.exceptions import P4EmuError


class StfError(P4EmuError):
    """Base class of STF runner errors."""


class StfCommandError(StfError):
    """An STF command cannot be executed: unknown table/action/field/argument, an entry
    the switch refuses (the P4Runtime error is in the message), bad options."""

    def __init__(self, file: str, line: int, message: str) -> None:
        self.file = file
        self.line = line
        self.message = message
        where = f"{file}:{line}: " if line else f"{file}: "
        super().__init__(where + message)


class StfSyntaxError(StfError):
    """A line of an STF file cannot be parsed; ``str()`` is ``file:line:column: message``
    (``file:line: message`` when no column applies, as for an unreadable file)."""

    def __init__(self, file: str, line: int, message: str, column: int | None = None) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        where = f"{file}:{line}:{column}" if column is not None else f"{file}:{line}"
        super().__init__(f"{where}: {message}")
