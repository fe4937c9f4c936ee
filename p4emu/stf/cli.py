"""``python -m p4emu stf PROGRAM.p4 TEST.stf``: run a p4c STF test on p4emu.

Exit status 0 when every expectation is met, 1 otherwise (a readable report of the
mismatching packets on stdout) or on an error (bad program, bad STF line, refused
entry: one message on stderr).
"""

from __future__ import annotations

import argparse
import sys

from p4emu.stf.runner import StfOptions, add_switch_arguments, apply_switch_arguments, run_stf


def configure(parser: argparse.ArgumentParser) -> None:
    from p4emu.cli import add_program_arguments

    add_program_arguments(parser)
    parser.add_argument("stf", metavar="TEST.stf", help="the STF test file")
    add_switch_arguments(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="print only failures")


def run(args: argparse.Namespace) -> int:
    from p4emu.cli import parse_defines

    options = StfOptions(include_dirs=tuple(args.include_dirs), defines=parse_defines(args.defines))
    apply_switch_arguments(options, args)
    result = run_stf(args.program, args.stf, options)
    if not result.passed or not args.quiet:
        print(result.report(), file=sys.stdout)
    return 0 if result.passed else 1


def register_commands(registry) -> None:  # registry: p4emu.cli.CommandRegistry
    registry.add("stf", "run a p4c STF packet test against p4emu", configure, run)
