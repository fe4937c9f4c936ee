"""One command-line kit for every console script of the project (``p4emu``,
``p4emu-switch``, ``mrc-controller``, ``nic-emu``, ``mrc-testbed``).

The bottom layer: it imports no project package, so every package may import it.

- :mod:`clikit.types`: argparse ``type=`` checkers (sizes, ports, positive numbers, a
  command line, a JSON object) whose errors name the value and what was expected;
- :mod:`clikit.main`: :func:`run_main`, the one wrapper around a command's body, with the
  exit codes every script shares (docs/exit-codes.md: ``EXIT_OK`` 0, ``EXIT_FAILURE`` 1 a
  failed operation, ``EXIT_USAGE`` 2 a bad invocation or input file, ``EXIT_UNHEALTHY`` 3
  an unhealthy fabric, ``EXIT_INTERRUPTED`` 130), one line on stderr for an expected error
  and never a traceback for a closed pipe (``| head``), Ctrl-C or a bad argument.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clikit.lazy import lazy_names

if TYPE_CHECKING:
    from clikit.main import (
        EXIT_FAILURE,
        EXIT_INTERRUPTED,
        EXIT_OK,
        EXIT_UNHEALTHY,
        EXIT_USAGE,
        TRACEBACK_ENV,
        run_main,
    )
    from clikit.types import (
        byte_size,
        command_line,
        input_file,
        json_object,
        non_negative_float,
        non_negative_int,
        port_number,
        positive_float,
        positive_int,
    )

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_UNHEALTHY",
    "EXIT_USAGE",
    "TRACEBACK_ENV",
    "byte_size",
    "command_line",
    "input_file",
    "json_object",
    "non_negative_float",
    "non_negative_int",
    "port_number",
    "positive_float",
    "positive_int",
    "run_main",
]

# each name is imported from its module on first use: a package that only needs
# ``clikit.hotpath`` (every package's first import) does not import argparse and the
# command-line kit (docs/virtual-fabric.md, "Start-up")
_LAZY = {
    **dict.fromkeys(
        ("EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_UNHEALTHY", "EXIT_USAGE"),
        "clikit.main",
    ),
    "TRACEBACK_ENV": "clikit.main",
    "run_main": "clikit.main",
    **dict.fromkeys(
        (
            "byte_size",
            "command_line",
            "input_file",
            "json_object",
            "non_negative_float",
            "non_negative_int",
            "port_number",
            "positive_float",
            "positive_int",
        ),
        "clikit.types",
    ),
}


__getattr__ = lazy_names(__name__, _LAZY)
