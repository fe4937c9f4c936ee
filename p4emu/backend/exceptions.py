"""Errors raised by ``p4emu.backend`` (the P4 -> Python compiler) and the switch built on it.

Every error a user can cause is a subclass of :class:`BackendError` and carries a
specific, human-readable message: a program construct the compiler does not implement
(:class:`CompileError`, with the source location), a failed P4 ``assert``. A bad
argument to the in-process switch is a :class:`p4emu.exceptions.SwitchError` (a run-time
error, not the compiler's). Errors of the run-time objects the control plane writes
(action profiles, value sets, controller packet headers) live in
:mod:`p4emu.runtime.exceptions`.
"""

from __future__ import annotations

from p4emu.exceptions import P4EmuError


class BackendError(P4EmuError):
    """Base class of every error raised by ``p4emu.backend``."""


class CompileError(BackendError):
    """The checked program cannot be compiled (``file:line:col: message``)."""

    def __init__(self, message: str, file: str = "", line: int = 0, column: int = 0) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        where = f"{file}:{line}:{column}: " if file else ""
        super().__init__(f"{where}error: {message}")


class P4AssertionError(BackendError):
    """A P4 ``assert``/``assume`` failed (BMv2 aborts the switch process)."""
