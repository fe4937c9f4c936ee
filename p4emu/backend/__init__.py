"""p4emu's backend: compiles a checked v1model program into Python, once.

- :func:`compile_program` -> :class:`CompiledProgram` (the six v1model blocks as Python
  functions, packet-state factories, and the control-plane objects);
- :class:`ProgramObjects` (:mod:`p4emu.runtime.objects`): what the control plane reads
  and writes, by fully-qualified P4Info name and by id.

The in-process switch built on it is :class:`p4emu.switch.Switch`. The compiler is
imported on first use, so the control-plane objects stay cheap to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clikit.lazy import lazy_names
from p4emu.backend.exceptions import BackendError, CompileError, P4AssertionError

if TYPE_CHECKING:
    from p4emu.backend.program import CompiledProgram, Hooks, compile_program
    from p4emu.runtime.objects import ProgramObjects

__all__ = [
    "BackendError",
    "CompileError",
    "CompiledProgram",
    "Hooks",
    "P4AssertionError",
    "ProgramObjects",
    "compile_program",
]

_LAZY = {
    "ProgramObjects": "p4emu.runtime.objects",
    "CompiledProgram": "p4emu.backend.program",
    "Hooks": "p4emu.backend.program",
    "compile_program": "p4emu.backend.program",
}


__getattr__ = lazy_names(__name__, _LAZY)
