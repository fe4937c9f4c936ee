from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from nic_emu.transfers import DEFAULT_TRANSFER_DEADLINE_S
from testbed import cli
from testbed.traffic import deadline_line


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_bad_topology_is_one_line_not_a_traceback(capsys, run_root: Path) -> None:
    code, _out, err = run(["up", "no-such-topo", "--run-dir", str(run_root)], capsys)
    assert code == 2  # a bad input file (docs/exit-codes.md)
    assert err.startswith("mrc-testbed up: no-such-topo: no such topology file")
    assert "Traceback" not in err


def test_invalid_topology_file_reports_the_key(capsys, run_root: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("planes: 2\nt0_per_plane: 2\nt1_per_plane: -2\nnics_per_t0: 2\n")
    code, _out, err = run(["up", str(bad), "--run-dir", str(run_root)], capsys)
    assert code == 2
    assert "t1_per_plane: must be a positive integer, got -2" in err


def test_bmv2_needs_mininet_mode(capsys, run_root: Path) -> None:
    code, _out, err = run(["up", "tiny", "--target", "bmv2", "--run-dir", str(run_root)], capsys)
    assert code == 2  # a bad invocation (docs/exit-codes.md)
    assert "--target bmv2 needs --mode mininet" in err


def test_usage_errors_exit_2(capsys) -> None:
    assert run(["up"], capsys)[0] == 2
    assert run(["link", "sideways", "a", "b"], capsys)[0] == 2
    code, _out, err = run(["send", "nic0", "nic1", "--bytes", "lots"], capsys)
    assert code == 2 and "'lots' is not a byte count" in err
    code, _out, err = run(["send", "nic0", "nic1", "--data", "file:"], capsys)
    assert code == 2 and "--data: file:PATH needs a path" in err
    code, _out, err = run(["up", "tiny", "--base-port", "80"], capsys)
    assert code == 2 and "port 80 is outside 1024..65535" in err
    code, _out, err = run(["up", "tiny", "--transport", "[1]"], capsys)
    assert code == 2 and "--transport: must be a JSON object" in err
    assert "Traceback" not in err


def test_send_takes_a_transfer_deadline(capsys) -> None:
    """The transfer deadline (issue 15): the NIC's default unless given, ``--timeout`` is
    the same option under its former name, and a deadline must be positive. (The demo is
    a scenario run: its transfer's deadline is the run's end, as for ``run``.)"""
    parser = cli.build_parser()
    for command in (["send", "nic0", "nic1"],):
        assert parser.parse_args(command).deadline == DEFAULT_TRANSFER_DEADLINE_S
        assert parser.parse_args([*command, "--deadline", "7.5"]).deadline == 7.5
        assert parser.parse_args([*command, "--timeout", "9"]).deadline == 9.0
        code, _out, err = run([*command, "--deadline", "0"], capsys)
        assert code == 2 and "--deadline" in err and "Traceback" not in err
    code, out, _err = run(["send", "--help"], capsys)
    assert code == 0 and f"(default {DEFAULT_TRANSFER_DEADLINE_S:g})" in " ".join(out.split())


def test_send_takes_a_data_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parser = cli.build_parser()
    assert parser.parse_args(["send", "nic0", "nic1"]).data == "random"
    monkeypatch.chdir(tmp_path)
    args = parser.parse_args(["send", "nic0", "nic1", "--data", "file:data.bin"])
    assert args.data == f"file:{tmp_path}/data.bin"  # the NIC process reads it, not the CLI


def test_deadline_line_says_what_the_deadline_does() -> None:
    line = deadline_line(2.5)
    assert line.startswith("transfer deadline: 2.5 s ")
    assert "fails, naming the paths it found down" in line


def test_bad_transport_key_is_refused_before_anything_starts(capsys, run_root: Path) -> None:
    """A key nic-emu does not know is a usage error naming it (issue 17): no run directory
    is made, so the next command is not blocked by a failed run."""
    code, _out, err = run(
        ["up", "tiny", "--run-dir", str(run_root), "--transport", '{"ev_count": 64}'], capsys
    )
    assert code == 2 and "transport.ev_count: unknown transport setting" in err
    code, _out, err = run(
        ["up", "tiny", "--run-dir", str(run_root), "--transport", '{"evs_per_connection": 0}'],
        capsys,
    )
    assert code == 2 and "evs_per_connection must be > 0" in err
    assert list(run_root.iterdir()) == []


def test_docs_transport_example_parses() -> None:
    """docs/testbed.md's own --transport example is accepted as written."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "testbed.md").read_text()
    examples = [line for line in text.splitlines() if "--transport '" in line]
    assert examples
    for line in examples:
        value = line.split("--transport '", 1)[1].split("'", 1)[0]
        args = cli.build_parser().parse_args(["up", "tiny", "--transport", value])
        assert args.transport


def test_demo_help_shows_the_ports_it_uses(capsys) -> None:
    from testbed.demo import DEMO_GRPC_BASE_PORT, DEMO_UDP_BASE_PORT

    code, out, _err = run(["demo", "--help"], capsys)
    assert code == 0
    flat = " ".join(out.split())
    assert f"(default {DEMO_UDP_BASE_PORT})" in flat
    assert f"(default {DEMO_GRPC_BASE_PORT})" in flat
    args = cli.build_parser().parse_args(["demo"])
    assert (args.base_port, args.grpc_base_port) == (DEMO_UDP_BASE_PORT, DEMO_GRPC_BASE_PORT)
    assert args.out is None  # a fresh results directory, never the current directory


def test_commands_on_no_run_say_so(capsys, run_root: Path) -> None:
    code, _out, err = run(["status", "--run-dir", str(run_root)], capsys)
    assert code == 1 and "no fabric is running" in err
    code, _out, err = run(
        ["link", "down", "p0-t0-0", "p0-t1-0", "--run-dir", str(run_root)], capsys
    )
    assert code == 1 and "no fabric is running" in err


def test_down_with_nothing_running_succeeds(capsys, run_root: Path) -> None:
    code, out, _err = run(["down", "--run-dir", str(run_root)], capsys)
    assert (code, out.strip()) == (0, "nothing to stop")
    code, out, _err = run(["down", "--all", "--run-dir", str(run_root)], capsys)
    assert code == 0 and "nothing to stop" in out
    code, out, _err = run(["down", "--name", "ghost", "--run-dir", str(run_root)], capsys)
    assert (code, out.strip()) == (0, "ghost: nothing to stop")


def test_mininet_mode_without_root_is_refused(
    capsys, run_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    code, _out, err = run(["up", "tiny", "--mode", "mininet", "--run-dir", str(run_root)], capsys)
    assert code == 1
    assert "--mode mininet needs root" in err


def _status(drifted: list[str] | None, running: bool = True) -> object:
    from testbed.fabric import FabricStatus, NodeStatus

    return FabricStatus(
        "tiny",
        "local",
        "p4emu",
        "ready",
        "tiny: ...",
        "/r/tiny",
        [NodeStatus("p0-t0-0", "switch", running, "P4Runtime 127.0.0.1:1")],
        [],
        [],
        [],
        drifted,
    )


@pytest.mark.parametrize(
    ("drifted", "running", "code"),
    [(None, True, 0), ([], True, 0), (["p0-t0-0"], True, 3), (None, False, 3)],
)
def test_status_exit_codes(
    capsys, monkeypatch: pytest.MonkeyPatch, drifted, running: bool, code: int
) -> None:
    """status exits 3 on a degraded fabric and, with --check, on tables that differ from
    the plan (issue 15: it used to report drift and exit 0)."""
    from testbed.fabric import Fabric

    class Fake:
        def status(self, *, check: bool) -> object:
            return _status(drifted, running)

    monkeypatch.setattr(Fabric, "open", classmethod(lambda cls, name, root: Fake()))
    assert run(["status", "--check"], capsys)[0] == code
    assert cli.main(["status", "--check", "--json"]) == code
    document = json.loads(capsys.readouterr().out)
    assert document["in_sync"] == (not drifted)
    if drifted:
        assert document["drifted"] == drifted


def test_a_port_in_use_is_refused_and_leaves_nothing(capsys, run_root: Path) -> None:
    """Refused before anything starts: the error names the port, and no directory is left
    to block or confuse the next command (issue 17)."""
    import socket

    from topologies import load

    from .conftest import free_bases

    udp, _grpc = free_bases(load("tiny"))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        code, _out, err = run(
            [
                "up",
                "tiny",
                "--run-dir",
                str(run_root),
                "--base-port",
                str(udp),
                "--grpc-base-port",
                str(port),
            ],
            capsys,
        )
    assert code == 2 and f"TCP port {port}" in err and "--grpc-base-port" in err
    assert list(run_root.iterdir()) == []


def test_up_tdf_dilates_the_topology_and_the_nics_from_nicconfig_defaults() -> None:
    """``up --tdf N`` (issue 30): the fabric the scenario runner's process mode builds,
    for any topology: rates / N, delays x N, every NIC time x N from NicConfig's own
    defaults with --transport over them; N is recorded in the run's settings."""
    from dataclasses import replace

    from nic_emu.config import NicConfig
    from nic_emu.serve_config import dilate_transport, transport_overrides
    from topologies import load

    args = cli.build_parser().parse_args(
        ["up", "tiny", "--tdf", "1024", "--transport", '{"sack_every_pkts": 2}']
    )
    topology, options = cli.dilated_up(args)
    plain = load("tiny")
    assert [(link.rate_gbps * 1024, link.delay_us / 1024) for link in topology.links()] == [
        (link.rate_gbps, link.delay_us) for link in plain.links()
    ]
    want = dilate_transport(replace(NicConfig(), sack_every_pkts=2), 1024)
    assert options.transport == transport_overrides(want) and options.tdf == 1024
    assert options.transport["rto_min_ns"] == NicConfig().rto_min_ns * 1024
    assert options.rate_scale == 1.0


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--tdf", "3"], "power of two"),
        (["--tdf", "0"], "power of two"),
        (["--tdf", "x"], "is not an integer"),
        (["--tdf", "8", "--rate-scale", "0.5"], "give --rate-scale or --tdf"),
        (["--tdf", "8", "--transport", '{"rto_min_ns": -1}'], "--transport: transport.rto_min_ns"),
    ],
)
def test_a_bad_up_tdf_exits_2_before_anything_starts(
    extra: list[str], words: str, capsys: pytest.CaptureFixture[str], run_root: Path
) -> None:
    code, _out, err = run(["up", "tiny", "--run-dir", str(run_root), *extra], capsys)
    assert code == 2 and words in err and "Traceback" not in err
    assert not any(run_root.iterdir())


def test_a_native_build_the_demo_waits_for_is_said_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    logger = logging.getLogger("p4emu.backend.native")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    cli._say_native_builds()
    cli._say_native_builds()  # a second demo in the process: still one handler
    assert len(logger.handlers) == 1
    logger.info("compiling %s", "it")
    logger.debug("not progress")
    assert capsys.readouterr().err == "... compiling it\n"
