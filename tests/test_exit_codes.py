"""One exit-code convention across the five commands (docs/exit-codes.md): 2 for a bad
invocation or bad input file (refused before anything starts), 1 for a failed operation,
3 for an unhealthy fabric, 130 for Ctrl-C (tests/test_cli_hygiene.py: bad arguments and
Ctrl-C for every subcommand; here: input files, failed operations, the codes' homes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import clikit
import controller.cli
import nic_emu.cli
import p4emu.cli
import p4emu.server.main
import testbed.cli

Main = Callable[[Sequence[str]], int]
P4_SYNTAX_ERROR = "#include <v1model.p4>\nheader h_t { bit<8> a }\n"


@pytest.fixture
def run_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "runs"
    monkeypatch.setenv("MRC_TESTBED_RUN_DIR", str(root))
    return root


def _run(main: Main, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def test_the_codes_have_one_home() -> None:
    assert (clikit.EXIT_OK, clikit.EXIT_FAILURE, clikit.EXIT_USAGE) == (0, 1, 2)
    assert (clikit.EXIT_UNHEALTHY, clikit.EXIT_INTERRUPTED) == (3, 130)
    assert controller.cli.EXIT_SWITCH_FAILED == clikit.EXIT_UNHEALTHY
    assert testbed.cli.EXIT_DEGRADED == clikit.EXIT_UNHEALTHY


# --------------------------------------------------------------- 2: a missing input file


def test_p4emu_check_of_a_missing_program_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(p4emu.cli.main, ["check", str(tmp_path / "none.p4")], capsys)
    assert code == clikit.EXIT_USAGE and "cannot read source file" in err


def test_p4emu_switch_with_a_missing_program_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(p4emu.server.main.main, [str(tmp_path / "none.p4")], capsys)
    assert code == clikit.EXIT_USAGE and "does not exist" in err


def test_mrc_controller_plan_of_a_missing_topology_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(controller.cli.main, ["plan", str(tmp_path / "none.yaml")], capsys)
    assert code == clikit.EXIT_USAGE and "no such topology file" in err


def test_nic_emu_serve_with_a_missing_config_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _err = _run(nic_emu.cli.main, ["serve", "--config", str(tmp_path / "none.yaml")], capsys)
    assert code == clikit.EXIT_USAGE


def test_mrc_testbed_up_of_a_missing_topology_exits_2(
    tmp_path: Path, run_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(testbed.cli.main, ["up", str(tmp_path / "none.yaml")], capsys)
    assert code == clikit.EXIT_USAGE and "no such topology file" in err


# --------------------------------------------------------------- 2: a malformed input file


def test_p4emu_check_of_a_bad_program_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.p4"
    bad.write_text(P4_SYNTAX_ERROR, encoding="utf-8")
    code, err = _run(p4emu.cli.main, ["check", str(bad)], capsys)
    assert code == clikit.EXIT_USAGE and "syntax error" in err


def test_mrc_controller_and_mrc_testbed_agree_on_a_bad_topology(
    tmp_path: Path, run_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("planes: 2\nt0_per_plane: 2\nt1_per_plane: -2\nnics_per_t0: 2\n")
    plan, _ = _run(controller.cli.main, ["plan", str(bad)], capsys)
    up, err = _run(testbed.cli.main, ["up", str(bad)], capsys)
    assert plan == up == clikit.EXIT_USAGE
    assert "t1_per_plane: must be a positive integer" in err


def test_mrc_testbed_run_of_a_non_scenario_exits_2_and_does_not_echo_it(
    tmp_path: Path, run_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "passwd"
    text.write_text("".join(f"user{i}:x:{i}:{i}::/var/lib/user{i}:/bin/sh\n" for i in range(200)))
    code, err = _run(testbed.cli.main, ["run", str(text)], capsys)
    assert code == clikit.EXIT_USAGE and "must be a mapping" in err
    assert "user199" not in err and len(err) < 400


def test_mrc_testbed_up_with_a_missing_program_exits_2_before_starting_anything(
    tmp_path: Path, run_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(
        testbed.cli.main, ["up", "tiny", "--program", str(tmp_path / "none.p4")], capsys
    )
    assert code == clikit.EXIT_USAGE and "none.p4: no such file" in err
    assert not run_root.exists()  # no run directory, so no process either


# --------------------------------------------------------------- 1: a failed operation


def test_p4emu_p4info_to_an_unwritable_output_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = Path(__file__).parent / "p4emu" / "server" / "programs" / "p4rt_demo.p4"
    out = tmp_path / "no-dir" / "x.txtpb"
    code, err = _run(p4emu.cli.main, ["p4info", str(program), "-o", str(out)], capsys)
    assert code == clikit.EXIT_FAILURE and "cannot write P4Info" in err


def test_nic_emu_send_without_a_nic_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["send", "--via", "127.0.0.1:1", "--to", "nic1", "--bytes", "10"]
    code, err = _run(nic_emu.cli.main, argv, capsys)
    assert code == clikit.EXIT_FAILURE and "no control socket" in err


def test_mrc_testbed_status_without_a_fabric_exits_1(
    run_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(testbed.cli.main, ["status"], capsys)
    assert code == clikit.EXIT_FAILURE and err.startswith("mrc-testbed status:")


def test_mrc_testbed_down_takes_the_run_name_as_up_does(
    run_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = _run(testbed.cli.main, ["down", "tiny"], capsys)
    assert code == clikit.EXIT_OK  # nothing runs under that name: nothing to stop
    code, err = _run(testbed.cli.main, ["down", "tiny", "--name", "other"], capsys)
    assert code == clikit.EXIT_USAGE and "give the run's name once" in err
