"""p4emu: an embedded, pure-Python P4_16 / v1model target.

The front end (:mod:`p4emu.frontend`) reads real P4_16 programs as p4c accepts them and
produces a :class:`~p4emu.frontend.ast.CheckedProgram`.
"""

from __future__ import annotations

from p4emu.exceptions import P4EmuError, P4SourceError, P4SourceErrors, P4UnsupportedError
from p4emu.frontend import CheckedProgram, load_program, load_program_text

__all__ = [
    "CheckedProgram",
    "P4EmuError",
    "P4SourceError",
    "P4SourceErrors",
    "P4UnsupportedError",
    "load_program",
    "load_program_text",
]
