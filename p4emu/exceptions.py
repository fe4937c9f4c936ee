"""Errors raised by p4emu.

Every error a user can cause (a bad P4 source file, a bad table entry, a bad packet...)
is a subclass of :class:`P4EmuError` and carries a specific, human-readable message.
"""

from __future__ import annotations


class P4EmuError(Exception):
    """Base class of every error p4emu raises on bad input."""


class P4SourceError(P4EmuError):
    """A P4 source file is malformed or rejected by the type checker.

    ``str(error)`` is ``file:line:col: error: message`` so editors can jump to it.
    """

    def __init__(self, file: str, line: int, column: int, message: str) -> None:
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        super().__init__(self.format())

    def format(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: error: {self.message}"

    def __str__(self) -> str:
        return self.format()


class P4UnsupportedError(P4SourceError):
    """The source is valid P4_16 but uses a construct p4emu does not implement.

    ``construct`` names the construct (e.g. ``"header union stack"``).
    """

    def __init__(self, file: str, line: int, column: int, construct: str) -> None:
        self.construct = construct
        super().__init__(file, line, column, f"unsupported construct: {construct}")


class P4SourceErrors(P4SourceError):
    """Several independent source errors; location attributes are those of the first."""

    def __init__(self, errors: list[P4SourceError]) -> None:
        if not errors:
            raise ValueError("P4SourceErrors needs at least one error")
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.file, first.line, first.column, first.message)

    def format(self) -> str:
        return "\n".join(error.format() for error in self.errors)


class SwitchError(P4EmuError):
    """A bad argument to the in-process switch API, ``p4emu.switch`` (port out of range,
    no CPU port...): an error of the running switch, not of the compiler."""
