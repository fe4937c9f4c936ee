"""``p4info`` command: write the P4Info of a P4 program, like ``p4c --p4runtime-files``.

    python -m p4emu p4info PROGRAM.p4 -o OUT.p4info.txtpb   (via p4emu's CLI)
    python -m p4emu.p4info PROGRAM.p4 -o OUT.p4info.txtpb   (standalone)

Without ``-o`` (or with ``-o -``) the text goes to standard output.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from p4emu.exceptions import P4EmuError

COMMAND = "p4info"
HELP = "write the P4Info (p4c-compatible names and ids) of a v1model program"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the command's arguments to ``parser`` (p4emu's sub-parser or a standalone one)."""
    from p4emu.cli import add_program_arguments

    add_program_arguments(parser)
    parser.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="OUT.p4info.txtpb",
        help="output file ('-' or omitted: standard output)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the command; user errors are printed as one message (exit status: 2 for a bad
    program, 1 for an output that cannot be written: p4emu.cli.EXIT_CODES)."""
    from p4emu.cli import exit_code_for, load_from_args
    from p4emu.p4info.builder import build_p4info
    from p4emu.p4info.extract import extract_model
    from p4emu.p4info.text import p4info_to_text, write_p4info

    try:
        info = build_p4info(extract_model(load_from_args(args)))
        if args.output == "-":
            sys.stdout.write(p4info_to_text(info))
        else:
            write_p4info(info, args.output)
    except P4EmuError as error:
        print(error, file=sys.stderr)
        return exit_code_for(error)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m p4emu.p4info", description=HELP)
    configure(parser)
    return run(parser.parse_args(argv))
