"""p4emu's backend: compiles a checked v1model program into Python, once.

- :func:`compile_program` -> :class:`CompiledProgram` (the six v1model blocks as Python
  functions, packet-state factories, and the control-plane objects);
- :class:`ProgramObjects` (:mod:`p4emu.backend.objects`): what the control plane reads
  and writes, by fully-qualified P4Info name and by id.

The in-process switch built on it is :class:`p4emu.switch.Switch`.
"""

from __future__ import annotations

from p4emu.backend.exceptions import BackendError, CompileError, P4AssertionError, SwitchError
from p4emu.backend.objects import ProgramObjects
from p4emu.backend.program import CompiledProgram, Hooks, compile_program

__all__ = [
    "BackendError",
    "CompileError",
    "CompiledProgram",
    "Hooks",
    "P4AssertionError",
    "ProgramObjects",
    "SwitchError",
    "compile_program",
]
