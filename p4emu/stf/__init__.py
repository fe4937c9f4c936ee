"""The p4c STF test runner of p4emu (``python -m p4emu stf PROGRAM.p4 TEST.stf``).

Typical use::

    from p4emu.stf import run_stf
    result = run_stf("prog.p4", "prog.stf")
    assert result.passed, result.report()

Table entries and PRE/extern configuration go through :mod:`p4emu.p4rt`, the same
P4Runtime path as the gRPC server; packets run through :class:`p4emu.switch.Switch` on a
virtual clock. Semantics follow p4c's BMv2 runner (``bmv2stf.py``); see
:mod:`p4emu.stf.runner`.
"""

from __future__ import annotations

from p4emu.stf.exceptions import StfCommandError, StfError, StfSyntaxError
from p4emu.stf.runner import StfOptions, StfResult, StfRunner, StfTarget, run_stf

__all__ = [
    "StfCommandError",
    "StfError",
    "StfOptions",
    "StfResult",
    "StfRunner",
    "StfSyntaxError",
    "StfTarget",
    "run_stf",
]
