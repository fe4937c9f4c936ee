"""Includes resolve only inside the program's directory, the -I directories and p4emu's own
core.p4 / v1model.p4; every refusal names the include as written and nothing of the host."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from p4emu.cli import main as p4emu_main
from p4emu.exceptions import P4SourceError
from p4emu.frontend import load_program
from p4emu.frontend import preprocessor as pp

OUTSIDE = "it leads outside the program's directory and the include path (-I)"


def program(tmp_path: Path, include: str, name: str = "main.p4") -> Path:
    path = tmp_path / "prog" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#include <core.p4>\n#include {include}\n", encoding="utf-8")
    return path


def error_for(path: Path, include_dirs: tuple[Path, ...] = ()) -> str:
    with pytest.raises(P4SourceError) as info:
        load_program(path, include_dirs)
    return str(info.value)


@pytest.mark.parametrize(
    "include",
    [
        '"/etc/passwd"',
        '"/etc/no-such-file-here"',  # same answer whether or not the file exists
        '"../../../../../../etc/hostname"',
        '"../secret.p4"',
        "<../../../../etc/passwd>",
        '"/dev/zero"',
        '"/proc/self/environ"',
    ],
)
def test_includes_outside_the_roots_are_refused_before_any_lookup(
    tmp_path: Path, include: str
) -> None:
    (tmp_path / "secret.p4").write_text("const bit<8> SECRET = 42;\n")
    path = program(tmp_path, include)
    assert error_for(path) == f"{path}:2:1: error: #include {include} refused: {OUTSIDE}"


def test_a_symlink_leading_outside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.p4").write_text("SECRET-TOKEN\n")
    path = program(tmp_path, '"link.p4"')
    os.symlink(tmp_path / "secret.p4", path.parent / "link.p4")
    assert error_for(path) == (
        f'{path}:2:1: error: #include "link.p4" refused: a symbolic link; {OUTSIDE}'
    )
    assert "SECRET" not in error_for(path)


def test_a_symlink_inside_the_program_directory_is_followed(tmp_path: Path) -> None:
    path = program(tmp_path, '"alias.p4"')
    (path.parent / "real.p4").write_text("const bit<8> X = 1;\n")
    os.symlink(path.parent / "real.p4", path.parent / "alias.p4")
    assert "no 'main' package" in error_for(path)  # the include itself was read


def test_a_fifo_is_not_a_regular_file(tmp_path: Path) -> None:
    path = program(tmp_path, '"pipe.p4"')
    os.mkfifo(path.parent / "pipe.p4")
    assert error_for(path) == f'{path}:2:1: error: #include "pipe.p4" refused: not a regular file'


def test_an_oversized_include_is_refused_without_reading_it_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pp, "MAX_SOURCE_FILE_BYTES", 100_000)
    path = program(tmp_path, '"big.p4"')
    with (path.parent / "big.p4").open("wb") as big:
        big.truncate(10**9)  # sparse: 1 GB on paper
    message = error_for(path)
    assert message.startswith(f'{path}:2:1: error: #include "big.p4" refused: larger than')
    assert "100000 bytes per file" in message


def test_the_total_source_size_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pp, "MAX_TOTAL_SOURCE_BYTES", 250)
    path = tmp_path / "main.p4"
    for name in ("a.p4", "b.p4", "c.p4"):
        (tmp_path / name).write_text("// " + "x" * 80 + "\n")
    path.write_text('#include "a.p4"\n#include "b.p4"\n#include "c.p4"\n')
    assert '#include "c.p4" refused: larger than' in error_for(path)


def test_an_oversized_main_program_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pp, "MAX_SOURCE_FILE_BYTES", 10)
    path = tmp_path / "main.p4"
    path.write_text("const bit<8> X = 1;\n")
    assert error_for(path).startswith(f"{path}:1:1: error: larger than the source size limit")


def test_include_dir_flag_allows_a_directory(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "defs.p4").write_text("const bit<8> X = 1;\n")
    path = program(tmp_path, '"../shared/defs.p4"')
    assert OUTSIDE in error_for(path)
    assert "no 'main' package" in error_for(path, (shared,))
    path = program(tmp_path, '"defs.p4"', name="other.p4")
    assert "no 'main' package" in error_for(path, (shared,))


def test_includes_below_the_program_directory_and_back_up_are_fine(tmp_path: Path) -> None:
    path = program(tmp_path, '"inc/a.p4"')
    (path.parent / "inc").mkdir()
    (path.parent / "inc" / "a.p4").write_text('#include "../common.p4"\n')
    (path.parent / "common.p4").write_text("const bit<8> X = 1;\n")
    assert "no 'main' package" in error_for(path)


def test_cli_check_reports_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = program(tmp_path, '"/etc/passwd"')
    assert p4emu_main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f'{path}:2:1: error: #include "/etc/passwd" refused: {OUTSIDE}\n'
    assert p4emu_main(["check", "-I", "/etc", str(path)]) == 2  # -I allows the directory
    assert "refused" not in capsys.readouterr().err
