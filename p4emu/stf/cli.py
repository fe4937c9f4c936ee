"""``python -m p4emu stf PROGRAM.p4 TEST.stf`` or ``python -m p4emu stf DIR``.

With a program and an STF file: exit status 0 when every expectation is met, 1 otherwise
(a readable report of the mismatching packets on stdout) or on an error (bad program, bad
STF line, refused entry: one message on stderr).

With a directory (a conformance corpus, :mod:`p4emu.stf.corpus`): one line per test
(``PASS`` / ``FAIL`` / ``UNSUPPORTED``, failures with their report), then the summary
``N passed, M failed, K unsupported``; exit status 1 if any test failed.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

from p4emu.exceptions import P4EmuError
from p4emu.stf.runner import StfOptions, add_switch_arguments, apply_switch_arguments, run_stf


def configure(parser: argparse.ArgumentParser) -> None:
    from p4emu.cli import add_program_arguments

    add_program_arguments(parser)
    parser.add_argument(
        "stf", metavar="TEST.stf", nargs="?",
        help="the STF test file (omit it when PROGRAM.p4 is a directory of tests)",
    )  # fmt: skip
    add_switch_arguments(parser)
    parser.add_argument("-q", "--quiet", action="store_true", help="print only failures")


def _options(args: argparse.Namespace) -> StfOptions:
    from p4emu.cli import parse_defines

    options = StfOptions(include_dirs=tuple(args.include_dirs), defines=parse_defines(args.defines))
    apply_switch_arguments(options, args)
    return options


def _run_directory(args: argparse.Namespace) -> int:
    from p4emu.stf.corpus import PASSED, UNSUPPORTED, CorpusCase, run_corpus

    base = _options(args)

    def progress(case: CorpusCase) -> None:
        if case.outcome == PASSED:
            if not args.quiet:
                print(f"PASS {case.stf}")
        elif case.outcome == UNSUPPORTED:
            print(f"UNSUPPORTED {case.stf}: {case.detail}")
        else:
            print(f"FAIL {case.stf}\n{case.detail}")
        sys.stdout.flush()

    result = run_corpus(args.program, lambda: copy.deepcopy(base), progress)
    print(result.summary())
    return 0 if result.passed else 1


def run(args: argparse.Namespace) -> int:
    if Path(args.program).is_dir():
        if args.stf is not None:
            raise P4EmuError(f"{args.program} is a directory: give no TEST.stf with it")
        return _run_directory(args)
    if args.stf is None:
        raise P4EmuError(f"{args.program}: give TEST.stf (or a directory of tests)")
    result = run_stf(args.program, args.stf, _options(args))
    if not result.passed or not args.quiet:
        print(result.report(), file=sys.stdout)
    return 0 if result.passed else 1


def register_commands(registry) -> None:  # registry: p4emu.cli.CommandRegistry
    registry.add(
        "stf", "run a p4c STF packet test (or a directory of them) on p4emu", configure, run
    )
