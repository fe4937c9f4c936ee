"""The ``python -m p4emu`` command line.

Subcommands are registered on a :class:`CommandRegistry`. The front end registers ``check``;
each module of :data:`COMMAND_MODULES` adds its own in one of two ways (a listed module that
is missing, or that offers neither, is an error)::

    # a) a registration function
    def register_commands(registry: CommandRegistry) -> None:
        registry.add("stf", "run an STF test", configure, run)

    # b) module attributes COMMAND (name), HELP, configure(parser) and run(args) -> int

``run`` returns the exit status. Every :class:`p4emu.exceptions.P4EmuError` is printed as
its message, with the exit code :data:`EXIT_CODES` gives it (2 for a bad program, 1 for a
failed run); :func:`clikit.run_main` gives the other exit codes; no traceback is ever shown.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clikit import EXIT_FAILURE, EXIT_USAGE, run_main
from p4emu.exceptions import P4EmuError, P4SourceError
from p4emu.limits import CompileLimitError, run_bounded
from p4emu.p4info.exceptions import P4InfoError, P4InfoTextError

COMMAND_MODULES = ("p4emu.p4info.cli", "p4emu.stf.cli")
"""The modules that contribute subcommands (see the module docstring)."""


@dataclass
class Command:
    """One subcommand: its name, help line, the function that adds its arguments and the one
    that runs it (returns the exit status)."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class CommandRegistry:
    """Collects subcommands before the argument parser is built."""

    def __init__(self) -> None:
        self.commands: dict[str, Command] = {}

    def add(
        self,
        name: str,
        help: str,
        configure: Callable[[argparse.ArgumentParser], None],
        run: Callable[[argparse.Namespace], int],
    ) -> None:
        if name in self.commands:
            raise ValueError(f"subcommand {name!r} registered twice")
        self.commands[name] = Command(name, help, configure, run)


def add_program_arguments(parser: argparse.ArgumentParser) -> None:
    """The PROGRAM / -I / -D arguments shared by every command that loads a P4 program."""
    parser.add_argument("program", metavar="PROGRAM.p4", help="P4_16 source file")
    parser.add_argument(
        "-I", dest="include_dirs", action="append", default=[], metavar="DIR",
        help="add DIR to the #include search path",
    )  # fmt: skip
    parser.add_argument(
        "-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
        help="define a preprocessor macro (VALUE defaults to 1)",
    )  # fmt: skip


class CommandLineError(P4EmuError):
    """A bad argument that argparse cannot check by itself (``-D``)."""


EXIT_CODES: dict[type[BaseException], int] = {
    P4SourceError: EXIT_USAGE,  # the program (the input file) is bad or missing
    CompileLimitError: EXIT_USAGE,  # ... or asks for more than the compile bounds
    CommandLineError: EXIT_USAGE,
    P4InfoError: EXIT_USAGE,  # ids or names of the program's P4Info collide
    P4InfoTextError: EXIT_FAILURE,  # the P4Info cannot be written
}
"""The exit code of each kind of error (clikit's convention, docs/exit-codes.md); any other
P4EmuError is a failed operation (1)."""


def exit_code_for(error: P4EmuError) -> int:
    """The exit code of ``error`` under :data:`EXIT_CODES`."""
    for kind in type(error).__mro__:
        if kind in EXIT_CODES:
            return EXIT_CODES[kind]
    return EXIT_FAILURE


def parse_defines(values: Sequence[str]) -> dict[str, str]:
    """``["A=1", "B"]`` -> ``{"A": "1", "B": "1"}``."""
    defines: dict[str, str] = {}
    for value in values:
        name, sep, body = value.partition("=")
        if not name or not name.replace("_", "a").isalnum() or name[0].isdigit():
            raise CommandLineError(f"invalid macro definition -D {value[:64]!r}")
        defines[name] = body if sep else "1"
    return defines


def load_from_args(args: argparse.Namespace):
    """Load the program named by :func:`add_program_arguments` arguments."""
    from p4emu.frontend import load_program

    return load_program(args.program, args.include_dirs, parse_defines(args.defines))


def _configure_check(parser: argparse.ArgumentParser) -> None:
    add_program_arguments(parser)
    parser.add_argument("-W", "--warnings", action="store_true", help="print warnings too")


def _run_check(args: argparse.Namespace) -> int:
    # The compile bounds of p4emu-switch's SetForwardingPipelineConfig (p4emu.limits).
    checked = run_bounded(lambda: load_from_args(args))
    if args.warnings:
        for warning in checked.warnings:
            print(warning, file=sys.stderr)
    print("ok")
    return 0


def default_registry(modules: Sequence[str] = COMMAND_MODULES) -> CommandRegistry:
    """``check`` plus the subcommands of ``modules``; a module that cannot be imported
    raises its ImportError, one that offers no subcommand raises ValueError."""
    registry = CommandRegistry()
    registry.add(
        "check", "preprocess, parse and type-check a v1model program", _configure_check, _run_check
    )
    for module_name in modules:
        module = importlib.import_module(module_name)
        register = getattr(module, "register_commands", None)
        if register is not None:
            register(registry)
        elif all(hasattr(module, attr) for attr in ("COMMAND", "configure", "run")):
            help_text = getattr(module, "HELP", module.COMMAND)
            registry.add(module.COMMAND, help_text, module.configure, module.run)
        else:
            raise ValueError(
                f"{module_name} offers no subcommand: it defines neither "
                "register_commands(registry) nor COMMAND, configure and run"
            )
    return registry


def build_parser(registry: CommandRegistry) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="p4emu", description="Embedded P4_16 / v1model target")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in registry.commands.values():
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        sub.set_defaults(_run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Exit status (clikit's convention, docs/exit-codes.md): 0 ok, 2 a bad command line or
    a bad or missing program (printed compiler-style, ``FILE:LINE:COL: error: ...``; also a
    program over the compile bounds), 1 a failed run (an STF test, an unwritable output),
    130 Ctrl-C; an internal error prints ``p4emu: internal error: ...`` and exits 1."""

    def body() -> int:
        registry = default_registry()
        parser = build_parser(registry)
        args = parser.parse_args(argv)
        return int(args._run(args))

    return run_main("p4emu", body, expected=(P4EmuError,), codes=EXIT_CODES, bare=True)


if __name__ == "__main__":
    sys.exit(main())
