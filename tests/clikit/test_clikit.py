"""clikit: the argparse types and the main() wrapper's exit codes."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import textwrap

import pytest

from clikit import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    byte_size,
    command_line,
    json_object,
    non_negative_float,
    non_negative_int,
    port_number,
    positive_float,
    positive_int,
    run_main,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4096", 4096),
        ("64K", 65536),
        ("16M", 16 << 20),
        ("1G", 1 << 30),
        ("16MiB", 16 << 20),
        ("1.5k", 1536),
        ("2kb", 2048),
    ],
)
def test_byte_size_accepts(text: str, value: int) -> None:
    assert byte_size(text) == value


@pytest.mark.parametrize("text", ["", "abc", "-1", "0", "1T", "12 pounds"])
def test_byte_size_refuses_naming_the_value(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"byte count"):
        byte_size(text)


def test_numbers_and_ports() -> None:
    assert positive_int("0x10") == 16
    assert non_negative_int("0") == 0
    assert positive_float("0.5") == 0.5
    assert non_negative_float("0") == 0.0
    assert port_number("1024") == 1024
    for checker, bad, words in (
        (positive_int, "0", "positive"),
        (positive_int, "x", "integer"),
        (non_negative_int, "-1", ">= 0"),
        (positive_float, "nan", "positive"),
        (positive_float, "-2", "positive"),
        (non_negative_float, "y", "number"),
        (port_number, "80", "outside 1024..65535"),
        (port_number, "70000", "outside"),
        (port_number, "http", "not a port"),
    ):
        with pytest.raises(argparse.ArgumentTypeError, match=words):
            checker(bad)


def test_command_line_and_json_object() -> None:
    assert command_line("python3 -m 'x y'") == ["python3", "-m", "x y"]
    with pytest.raises(argparse.ArgumentTypeError, match="empty"):
        command_line("  ")
    with pytest.raises(argparse.ArgumentTypeError, match="cannot split"):
        command_line("'unterminated")
    assert json_object('{"a": 1}') == {"a": 1}
    with pytest.raises(argparse.ArgumentTypeError, match="not JSON"):
        json_object("{a}")
    with pytest.raises(argparse.ArgumentTypeError, match="JSON object"):
        json_object("[1]")


class Expected(Exception):
    """An error the wrapped command may raise on purpose (one line, exit 1)."""


class Usage(Expected):
    """An expected error that is a usage error (exit 2)."""


def _raise(exc: BaseException) -> int:
    raise exc


def test_run_main_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main("p", lambda: None) == EXIT_OK
    assert run_main("p", lambda: 3) == 3
    assert run_main("p", lambda: _raise(SystemExit(2))) == EXIT_USAGE
    assert run_main("p", lambda: _raise(SystemExit(None))) == EXIT_OK
    assert run_main("p", lambda: _raise(KeyboardInterrupt())) == EXIT_INTERRUPTED
    assert "p: interrupted" in capsys.readouterr().err
    codes = {Usage: EXIT_USAGE}
    assert run_main("p", lambda: _raise(Expected("bad")), expected=(Expected,), codes=codes) == 1
    assert capsys.readouterr().err == "p: bad\n"
    assert run_main("p", lambda: _raise(Usage("worse")), expected=(Expected,), codes=codes) == 2
    noted = Expected("failed")
    noted.add_note("logs: /x")
    assert run_main("p", lambda: _raise(noted), expected=(Expected,)) == EXIT_FAILURE
    assert capsys.readouterr().err.endswith("p: failed\nlogs: /x\n")
    assert run_main("p", lambda: _raise(ValueError("bug"))) == EXIT_FAILURE
    err = capsys.readouterr().err
    assert "internal error: ValueError: bug" in err and "Traceback" not in err


def test_run_main_usage_from_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="p")
    parser.add_argument("--n", type=positive_int)
    assert run_main("p", lambda: parser.parse_args(["--n", "0"]) and 0) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "argument --n: must be a positive integer, got 0" in err
    assert "Traceback" not in err


def test_closed_pipe_is_quiet_and_ok() -> None:
    """A script writing much more than ``head -1`` reads: no traceback, no "Exception
    ignored" message, exit 0."""
    script = textwrap.dedent(
        """
        import sys
        from clikit import run_main
        def body():
            for i in range(200000):
                print("line", i)
            return 0
        sys.exit(run_main("p", body))
        """
    )
    result = subprocess.run(
        f"{sys.executable} -c '{script}' | head -1; echo \"${{PIPESTATUS[0]}}\"",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout.splitlines() == ["line 0", "0"]
    assert result.stderr == ""


def test_say_survives_a_closed_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    assert run_main("p", lambda: _raise(Expected("x")), expected=(Expected,)) == EXIT_FAILURE
