"""p4emu: an embedded, pure-Python P4_16 / v1model target.

The front end (:mod:`p4emu.frontend`) reads real P4_16 programs as p4c accepts them and
produces a :class:`~p4emu.frontend.ast.CheckedProgram`.

The front end is imported on first use, so that tools which never compile a program
(``p4emu-switch --no-p4`` until a pipeline arrives, port drivers) start quickly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clikit import hotpath  # noqa: F401 - first: the compiled-or-pure finder (docs/virtual-fabric.md)
from p4emu.exceptions import (
    P4EmuError,
    P4SourceError,
    P4SourceErrors,
    P4UnsupportedError,
    SwitchError,
)

if TYPE_CHECKING:
    from p4emu.frontend import CheckedProgram, load_program, load_program_text

__all__ = [
    "CheckedProgram",
    "P4EmuError",
    "P4SourceError",
    "P4SourceErrors",
    "P4UnsupportedError",
    "SwitchError",
    "load_program",
    "load_program_text",
]

_FRONTEND_NAMES = {"CheckedProgram", "load_program", "load_program_text"}


def __getattr__(name: str) -> Any:
    if name in _FRONTEND_NAMES:
        from p4emu import frontend

        return getattr(frontend, name)
    raise AttributeError(f"module 'p4emu' has no attribute {name!r}")
