"""CLI hygiene of every console script (issue 15, issue 16's one CLI kit): each subcommand
answers ``--help`` (exit 0), refuses a bad argument with one message and exit 2, and piped
into ``head -1`` ends without a traceback; Ctrl-C exits 130 without one.

Subcommands are discovered from the parsers, so a new one is covered without editing this
file."""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import controller.cli
import nic_emu.cli
import p4emu.cli
import p4emu.server.main
import testbed.cli
from clikit import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE

BIN = Path(sys.executable).parent
Main = Callable[[Sequence[str]], int]


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return sorted(action.choices)
    return []


def _scripts() -> dict[str, tuple[Main, list[str]]]:
    """console script -> (its main, its subcommands)."""
    return {
        "p4emu": (
            p4emu.cli.main,
            _subcommands(p4emu.cli.build_parser(p4emu.cli.default_registry())),
        ),
        "p4emu-switch": (p4emu.server.main.main, []),
        "mrc-controller": (controller.cli.main, _subcommands(controller.cli.build_parser())),
        "nic-emu": (nic_emu.cli.main, _subcommands(nic_emu.cli.build_parser())),
        "mrc-testbed": (testbed.cli.main, _subcommands(testbed.cli.build_parser())),
    }


CASES = [(script, sub) for script, (_main, subs) in _scripts().items() for sub in ([None, *subs])]
IDS = [f"{script} {sub or ''}".strip() for script, sub in CASES]


def _argv(sub: str | None, *rest: str) -> list[str]:
    return [*([sub] if sub else []), *rest]


@pytest.mark.parametrize(("script", "sub"), CASES, ids=IDS)
def test_help_exits_0(script: str, sub: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    main = _scripts()[script][0]
    assert main(_argv(sub, "--help")) == EXIT_OK
    captured = capsys.readouterr()
    assert captured.out.startswith("usage:") and "Traceback" not in captured.err


@pytest.mark.parametrize(("script", "sub"), CASES, ids=IDS)
def test_bad_argument_exits_2_in_a_line(
    script: str, sub: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    main = _scripts()[script][0]
    assert main(_argv(sub, "--no-such-option-7")) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]  # argparse may print the usage first
    assert last.startswith(script) and ("--no-such-option-7" in last or "required" in last), err


BAD_VALUE = "%bad-value%"


def _parsers() -> dict[str, argparse.ArgumentParser]:
    return {
        "p4emu": p4emu.cli.build_parser(p4emu.cli.default_registry()),
        "mrc-controller": controller.cli.build_parser(),
        "nic-emu": nic_emu.cli.build_parser(),
        "mrc-testbed": testbed.cli.build_parser(),
    }


def _refuses(kind: object, text: str) -> bool:
    try:
        kind(text)  # type: ignore[operator]
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return True
    return False


def _typed_options() -> list[tuple[str, str, str]]:
    """(script, subcommand, option) for every option whose type refuses BAD_VALUE."""
    found = []
    for script, parser in _parsers().items():
        for sub in (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)):
            for name, command in sorted(sub.choices.items()):
                for action in command._actions:
                    typed = action.option_strings and callable(action.type)
                    if typed and _refuses(action.type, BAD_VALUE):
                        found.append((script, name, action.option_strings[-1]))
    return found


TYPED = _typed_options()


@pytest.mark.parametrize(("script", "sub", "option"), TYPED, ids=[" ".join(t) for t in TYPED])
def test_a_bad_value_of_any_typed_option_exits_2_naming_it(
    script: str, sub: str, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every option with a checked type (numbers, sizes, ports, JSON ...) refuses a bad
    value with one message naming the option, exit 2, before the command does anything."""
    main = _scripts()[script][0]
    assert main([sub, f"{option}={BAD_VALUE}"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert option in err and "Traceback" not in err, err


def test_typed_options_are_found() -> None:
    assert len(TYPED) > 20
    assert ("mrc-testbed", "send", "--bytes") in TYPED
    assert ("mrc-controller", "push", "--timeout") in TYPED


def test_defaults_in_help_are_the_ones_used(capsys: pytest.CaptureFixture[str]) -> None:
    """Every option whose help names a default has that default in its parser."""
    parsers = [
        testbed.cli.build_parser(),
        controller.cli.build_parser(),
    ]
    checked = 0
    for parser in parsers:
        for sub in (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)):
            for command in sub.choices.values():
                for action in command._actions:
                    text = action.help or ""
                    if "(default " not in text or "%(default)" in text:
                        continue
                    shown = text.split("(default ", 1)[1].split(")", 1)[0].split(";")[0]
                    if action.default is None or not isinstance(action.default, int | float):
                        continue
                    value = shown.rstrip("M").split()[0]
                    try:
                        number = float(value)
                    except ValueError:
                        continue
                    default = float(action.default)
                    if shown.endswith("M"):
                        default /= 1 << 20
                    assert number == default, f"{command.prog} {action.option_strings}: {text}"
                    checked += 1
    assert checked > 10


@pytest.mark.integration
@pytest.mark.parametrize("script", sorted(_scripts()))
def test_piped_into_head_no_traceback(script: str) -> None:
    """Every subcommand's help, and the biggest output we have (the plan of the largest
    bundled topology), piped into ``head -1``: the first line, nothing on stderr."""
    subs = _scripts()[script][1]
    commands = [[script, *_argv(sub, "--help")] for sub in [None, *subs]]
    if script == "mrc-controller":
        commands.append([script, "plan", "paper-8plane"])
    for command in commands:
        line = " ".join(command)
        result = subprocess.run(
            f'{BIN}/{line} | head -1; exit "${{PIPESTATUS[0]}}"',
            shell=True,
            executable="/bin/bash",
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert result.returncode == EXIT_OK, (line, result.stderr)
        assert len(result.stdout.splitlines()) == 1, line
        assert result.stderr == "", (line, result.stderr)


@pytest.mark.integration
@pytest.mark.parametrize("script", ["p4emu-switch", "mrc-controller", "nic-emu"])
def test_ctrl_c_exits_130_without_a_traceback(script: str, tmp_path: Path) -> None:
    """Each command is busy in its body (serving, retrying, or waiting for a peer that
    accepts and never answers) when Ctrl-C arrives."""
    with contextlib.ExitStack() as stack:
        silent_tcp = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        silent_tcp.bind(("127.0.0.1", 0))
        silent_tcp.listen(4)
        silent_unix = stack.enter_context(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
        silent_unix.bind(str(tmp_path / "ctl.sock"))
        silent_unix.listen(4)
        command = {
            "p4emu-switch": ["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0"],
            # watch keeps retrying switches that do not answer; Ctrl-C is its way to stop
            "mrc-controller": [
                "watch",
                "tiny",
                "--grpc-base-port",
                str(silent_tcp.getsockname()[1]),
            ],
            "nic-emu": [
                "send",
                "--to",
                "nic1",
                "--bytes",
                "1M",
                "--via",
                str(tmp_path / "ctl.sock"),
                "--timeout",
                "120",
            ],
        }[script]
        process = subprocess.Popen(
            [str(BIN / script), *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # Wait until the command is in its body (not importing): a line it prints there,
        # or (nic-emu) its connection to the control socket.
        assert process.stdout is not None
        first = ""
        if script == "nic-emu":
            silent_unix.settimeout(300)
            stack.enter_context(silent_unix.accept()[0])
        else:
            first = process.stdout.readline()
            if script == "mrc-controller":  # past "watching ...": its first event
                first += process.stdout.readline()
            assert first, process.communicate()
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        rest, err = process.communicate(timeout=60)
        _out = first + rest
    if script == "mrc-controller":  # watch: Ctrl-C is the documented stop, a success
        assert process.returncode == EXIT_OK and "stopped;" in _out, err
    else:
        assert process.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err


def test_every_console_script_goes_through_clikit() -> None:
    """pyproject's console scripts are exactly the ones checked here."""
    text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    section = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    names = {line.split("=")[0].strip() for line in section.splitlines() if "=" in line}
    assert names == set(_scripts())
