"""The conformance corpus agrees with docs/conformance.md, on p4emu and (``-m bmv2``) on BMv2."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from bmv2_harness import by_port, run_on_bmv2, run_stf_recorded, tools_missing
from p4lang_tools import find_tool, missing_reason

from p4emu.cli import main as p4emu_main
from p4emu.exceptions import P4EmuError
from p4emu.stf.corpus import FAILED, PASSED, UNSUPPORTED, find_cases, run_corpus
from p4emu.stf.runner import StfOptions
from p4emu.switch import Switch

HERE = Path(__file__).parent
DOC = HERE.parents[1] / "docs" / "conformance.md"
_ROW = re.compile(r"^\|[^|]*\|\s*`([^`]+)`\s*\|\s*(\w+)\s*\|([^|]*)\|")
STATUSES = {"supported": PASSED, "differs": PASSED, "unsupported": UNSUPPORTED}


def documented() -> dict[str, tuple[str, str]]:
    """``feature/name`` -> (status, BMv2 column) from the table in docs/conformance.md."""
    rows: dict[str, tuple[str, str]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            name, status, bmv2 = match.group(1), match.group(2), match.group(3).strip()
            assert name not in rows, f"{name} has two rows in {DOC.name}"
            assert status in STATUSES, f"{name}: unknown status {status!r}"
            rows[name] = (status, bmv2)
    return rows


def case_name(program: Path) -> str:
    return program.relative_to(HERE).with_suffix("").as_posix()


ROWS = documented()
CASES = {case_name(program): (program, stf) for program, stf in find_cases(HERE)}
COMPARED = sorted(name for name, (_, bmv2) in ROWS.items() if bmv2 == "compared")
REJECTED = sorted((HERE / "rejected").glob("*.p4"))
"""Programs p4c rejects: line 1 ``// error: <p4emu's message>``, line 2 ``// p4c: <p4c's>``."""


def expected_errors(program: Path) -> tuple[str, str]:
    ours, theirs = program.read_text(encoding="utf-8").splitlines()[:2]
    assert ours.startswith("// error: ") and theirs.startswith("// p4c: "), program
    return ours.removeprefix("// error: "), theirs.removeprefix("// p4c: ")


def test_every_program_has_a_row_and_every_row_a_program() -> None:
    assert sorted(ROWS) == sorted(CASES)


def test_each_outcome_is_the_documented_status() -> None:
    # strict: a frame on a port the STF never names fails the corpus's own tests
    result = run_corpus(HERE, lambda: StfOptions(strict_ports=True))
    outcomes = {case_name(case.program): case for case in result.cases}
    for name, (status, _) in ROWS.items():
        case = outcomes[name]
        assert case.outcome == STATUSES[status], f"{name}: {case.outcome}\n{case.detail}"
        if case.outcome == UNSUPPORTED:
            assert "unsupported construct: " in case.detail
            assert case.detail.startswith(f"{case.program}:")  # file:line:col
    assert result.count(FAILED) == 0


def test_directory_mode_prints_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert p4emu_main(["stf", "-q", str(HERE / "semantics")]) == 0
    count = len(find_cases(HERE / "semantics"))
    assert capsys.readouterr().out.splitlines()[-1] == f"{count} passed, 0 failed, 0 unsupported"


def test_directory_mode_counts_failures_and_unsupported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = HERE / "semantics" / "local_header.p4"
    (tmp_path / "ok.p4").write_text(program.read_text())
    (tmp_path / "ok.stf").write_text((HERE / "semantics" / "local_header.stf").read_text())
    (tmp_path / "bad.p4").write_text(program.read_text())
    (tmp_path / "bad.stf").write_text("packet 0 01 02 FF\nexpect 1 00\n")
    (tmp_path / "no.p4").write_text((HERE / "rejected" / "extern_function.p4").read_text())
    (tmp_path / "no.stf").write_text("packet 0 00\n")
    (tmp_path / "helper.p4").write_text("// an include, no .stf: not a test\n")
    assert p4emu_main(["stf", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "1 passed, 1 failed, 1 unsupported"
    assert any(line.startswith("FAIL ") for line in out)
    assert any(line.startswith("UNSUPPORTED ") for line in out)


def test_directory_mode_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert p4emu_main(["stf", str(tmp_path)]) == 1
    assert "no PROGRAM.p4 with a PROGRAM.stf" in capsys.readouterr().err
    assert p4emu_main(["stf", str(HERE), "x.stf"]) == 1
    assert "is a directory: give no TEST.stf" in capsys.readouterr().err


@pytest.mark.bmv2
@pytest.mark.parametrize("name", COMPARED)
def test_same_packets_out_as_bmv2(name: str, tmp_path: Path) -> None:
    reason = tools_missing()
    if reason is not None:
        pytest.skip(reason)
    program, stf = CASES[name]
    passed, report, recording = run_stf_recorded(program, stf)
    assert passed, report
    bmv2 = run_on_bmv2(
        program,
        recording.updates,
        recording.packets,
        tmp_path,
        expected_frames=len(recording.outputs),
    )
    assert by_port(recording.outputs) == by_port(bmv2)


@pytest.mark.parametrize("program", REJECTED, ids=lambda p: p.stem)
def test_p4emu_rejects_what_p4c_rejects(program: Path) -> None:
    message, _ = expected_errors(program)
    with pytest.raises(P4EmuError) as info:
        Switch(program)  # front end and back end
    assert re.match(rf"{re.escape(str(program))}:\d+:\d+: error: ", str(info.value)), info.value
    assert message in str(info.value)


def test_rejected_programs_are_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert REJECTED and all(f"`rejected/{program.stem}`" in text for program in REJECTED)


@pytest.mark.bmv2
@pytest.mark.parametrize("program", REJECTED, ids=lambda p: p.stem)
def test_p4c_rejects_them_too(program: Path, tmp_path: Path) -> None:
    p4c = find_tool("p4c")
    if p4c is None:
        pytest.skip(missing_reason("p4c"))
    _, message = expected_errors(program)
    result = subprocess.run(
        [p4c, "--target", "bmv2", "--arch", "v1model", "-o", str(tmp_path), str(program)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode != 0 and message in result.stderr + result.stdout, result.stderr
