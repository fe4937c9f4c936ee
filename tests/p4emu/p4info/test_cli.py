"""``python -m p4emu p4info`` and ``python -m p4emu.p4info``."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4emu.cli import main as p4emu_main
from p4emu.p4info.cli import main as p4info_main

HERE = Path(__file__).parent
PROGRAM = HERE / "programs" / "basic_routing.p4"
EXPECTED = (HERE / "data" / "basic_routing-bmv2.p4info.txtpb").read_text()


def test_subcommand_writes_the_p4info_file(tmp_path: Path) -> None:
    out = tmp_path / "basic_routing.p4info.txtpb"
    assert p4emu_main(["p4info", str(PROGRAM), "-o", str(out)]) == 0
    assert out.read_text() == EXPECTED


def test_standalone_module_prints_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert p4info_main([str(PROGRAM)]) == 0
    assert capsys.readouterr().out == EXPECTED


def test_defines_reach_the_preprocessor(tmp_path: Path) -> None:
    source = tmp_path / "prog.p4"
    source.write_text(
        PROGRAM.read_text().replace("size = 65536;", "size = BD_SIZE;"), encoding="utf-8"
    )
    out = tmp_path / "prog.p4info.txtpb"
    assert p4emu_main(["p4info", str(source), "-D", "BD_SIZE=65536", "-o", str(out)]) == 0
    assert out.read_text() == EXPECTED


def test_p4info_errors_are_one_line_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "bad.p4"
    source.write_text(
        PROGRAM.read_text()
        .replace("table bd {", "@id(1) table bd {")
        .replace("table ipv4_fib {", "@id(1) table ipv4_fib {"),
        encoding="utf-8",
    )
    assert p4emu_main(["p4info", str(source), "-o", str(tmp_path / "x.txtpb")]) == 2
    captured = capsys.readouterr()
    assert "is assigned to multiple declarations" in captured.err
    assert "Traceback" not in captured.err
    assert not (tmp_path / "x.txtpb").exists()


def test_source_errors_are_reported_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "broken.p4"
    source.write_text("control c( {", encoding="utf-8")
    assert p4info_main([str(source)]) == 2
    err = capsys.readouterr().err
    assert "broken.p4:1:" in err and "Traceback" not in err


def test_unwritable_output_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "missing-dir" / "x.p4info.txtpb"
    assert p4emu_main(["p4info", str(PROGRAM), "-o", str(out)]) == 1
    assert "cannot write P4Info" in capsys.readouterr().err
