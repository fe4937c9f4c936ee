"""``python -m p4emu check``: prints ok or the errors, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from frontend_helpers import PROGRAMS_DIR

from p4emu.cli import CommandRegistry, build_parser, default_registry, main, parse_defines
from p4emu.exceptions import P4EmuError


def test_check_ok(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(PROGRAMS_DIR / "basic.p4")]) == 0
    assert capsys.readouterr().out == "ok\n"


def test_check_reports_error_with_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <v1model.p4>\nconst bit<8> X = nope;\n")
    assert main(["check", str(bad)]) == 2  # a bad input file (docs/exit-codes.md)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"{bad}:2:18: error: unknown name 'nope'\n"


def test_check_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "missing.p4")]) == 2
    assert "cannot read source file" in capsys.readouterr().err


def test_check_with_defines_and_include_dirs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "consts.p4").write_text("const bit<8> FROM_LIB = WIDTH;\n")
    program = tmp_path / "p.p4"
    source = (PROGRAMS_DIR / "basic.p4").read_text()
    program.write_text(
        "#include <consts.p4>\n#ifndef ENABLE\n#error ENABLE must be defined\n#endif\n" + source
    )
    assert main(["check", str(program), "-I", str(lib), "-D", "ENABLE", "-D", "WIDTH=3"]) == 0
    assert capsys.readouterr().out == "ok\n"
    assert main(["check", str(program), "-I", str(lib), "-D", "WIDTH=3"]) == 2
    assert capsys.readouterr().err == f"{program}:3:1: error: #error ENABLE must be defined\n"


def test_check_prints_warnings_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "w.p4"
    program.write_text(
        (PROGRAMS_DIR / "basic.p4").read_text().replace("hdr.ipv4.ttl - 1", "hdr.ipv4.ttl - 300")
    )
    assert main(["check", "-W", str(program)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "ok\n"
    assert "warning: value 300 does not fit in bit<8>" in captured.err


def test_bad_define_is_a_clean_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(PROGRAMS_DIR / "basic.p4"), "-D", "=3"]) == 2
    assert capsys.readouterr().err == "invalid macro definition -D '=3'\n"


def test_parse_defines() -> None:
    assert parse_defines(["A", "B=2", "C="]) == {"A": "1", "B": "2", "C": ""}
    with pytest.raises(P4EmuError):
        parse_defines(["9X=1"])


def test_registry_accepts_new_commands() -> None:
    registry = CommandRegistry()
    registry.add("hello", "say hello", lambda parser: parser.add_argument("name"), lambda args: 0)
    args = build_parser(registry).parse_args(["hello", "world"])
    assert args.name == "world" and args._run(args) == 0
    with pytest.raises(ValueError):
        registry.add("hello", "again", lambda parser: None, lambda args: 0)


def test_default_registry_has_check() -> None:
    assert "check" in default_registry().commands


def test_default_registry_has_every_listed_module_command() -> None:
    assert {"check", "p4info", "stf"} <= set(default_registry().commands)


def test_missing_command_module_is_an_error() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"p4emu\.no_such_cli"):
        default_registry(("p4emu.no_such_cli",))


def test_command_module_without_commands_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"p4emu\.exceptions offers no subcommand"):
        default_registry(("p4emu.exceptions",))


def test_internal_errors_are_not_tracebacks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("p4emu.frontend.load_program", explode)
    assert main(["check", str(PROGRAMS_DIR / "basic.p4")]) == 1  # clikit: a failure
    assert capsys.readouterr().err == "p4emu: internal error: RuntimeError: boom\n"


def test_module_entry_point(tmp_path: Path) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text("header h_t { bit<8> a }\n")
    result = subprocess.run(
        [sys.executable, "-m", "p4emu", "check", str(bad)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert result.returncode == 2
    assert result.stderr == f"{bad}:1:23: error: syntax error: expected ';', found '}}'\n"
    assert "Traceback" not in result.stderr
