"""``mrc-testbed demo`` and the CLI flow, end to end in local mode."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from controller.plan import plan_fabric
from testbed import cli
from testbed import rundir as rd
from testbed.demo import DEMO_PLOT_NAME, DEMO_RESULTS_NAME, DemoOptions, demo_phases, run_demo
from testbed.exceptions import DemoError, ModeError
from testbed.fabric import switch_command
from testbed.scenario.run_options import default_tdf
from testbed.traffic import deadline_line
from topologies import load

from .conftest import free_bases, nic_program


def _p4emu_switch_missing() -> bool:
    try:
        switch_command("p4emu")
    except ModeError:
        return True
    return False


pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        _p4emu_switch_missing(), reason="p4emu-switch (p4emu.server.main) is not installed yet"
    ),
]


def _demo_options(root: Path, **changes: object) -> DemoOptions:
    udp, grpc = free_bases(load("tiny"))
    fields: dict[str, object] = {
        "mode": "local",
        "size": 2 * 1024 * 1024,
        "run_dir": root,
        "udp_base_port": udp,
        "grpc_base_port": grpc,
        "out_dir": root / "out",
    }
    fields.update(changes)
    return DemoOptions(**fields)  # type: ignore[arg-type]


def test_demo_cuts_a_link_mid_transfer_and_plots(short_root: Path) -> None:
    """The process demo is the demo scenario on the process fabric, time-dilated: the
    same driver, phases and summary as in virtual time."""
    options = _demo_options(short_root)
    said: list[str] = []
    result = run_demo(options, said.append)
    assert result.intact and result.bytes_delivered_intact == result.size == 2 * 1024 * 1024
    assert result.clock == "wall" and result.tdf == default_tdf(load("tiny"), "local", "p4emu")
    phases = demo_phases(result.size, result.line_rate_gbps)
    assert (result.cut_ns, result.restore_ns) == (phases.cut_ns, phases.restore_ns)
    assert result.completion_ns is not None and result.completion_ns > result.restore_ns
    assert set(result.goodput_fraction) == {"before", "during", "after"}
    assert any("locally" in line for line in said)
    out = short_root / "out"
    assert (out / DEMO_PLOT_NAME).read_bytes()[:4] == b"\x89PNG"
    data = json.loads((out / DEMO_RESULTS_NAME).read_text())
    assert data["demo"]["failure"] is None and data["fabric"]["clock"] == "wall"
    assert [e["description"] for e in data["events"]] == [
        "link p0-t0-0 -- p0-t1-0 down",
        "link p0-t0-0 -- p0-t1-0 up",
    ]
    assert rd.list_runs(short_root) == []  # torn down


def test_cli_up_status_break_send_down(
    short_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    udp, grpc = free_bases(load("tiny"))
    base = ["--run-dir", str(short_root)]
    nic = ["--nic-command", shlex.join(nic_program())]
    assert (
        cli.main(
            [
                "up",
                "tiny",
                *base,
                "--base-port",
                str(udp),
                "--grpc-base-port",
                str(grpc),
                *nic,
                "--json",
            ]
        )
        == 0
    )
    up = json.loads(capsys.readouterr().out)
    assert set(up["phases"]) >= {"routes_installed", "nics_ready"}
    # The entry count agrees with mrc-controller plan (default actions included).
    assert up["entries"] == plan_fabric(load("tiny")).entry_count()
    assert up["written"]["inserted"] + up["written"]["modified"] == up["entries"]
    try:
        assert (
            cli.main(
                ["up", "tiny", *base, "--base-port", str(udp), "--grpc-base-port", str(grpc), *nic]
            )
            == 1
        )
        assert "tiny is already running" in capsys.readouterr().err
        assert cli.main(["link", "down", "p1-t1-0", "p1-t0-1", *base]) == 0
        assert capsys.readouterr().out.strip() == "link p1-t0-1 -- p1-t1-0 is now down"
        assert cli.main(["port", "down", "nic2", "0", *base]) == 0
        assert cli.main(["switch", "down", "p0-t1-1", *base]) == 0
        capsys.readouterr()
        assert cli.main(["status", "--json", *base]) == 0
        status = json.loads(capsys.readouterr().out)
        assert status["links_down"] == [["p1-t0-1", "p1-t1-0"]]
        assert status["ports_down"] == [["nic2", 0]]
        assert status["switches_down"] == ["p0-t1-1"]
        assert cli.main(["send", "nic2", "nic0", "--bytes", "64K", "--deadline", "90", *base]) == 0
        captured = capsys.readouterr()
        assert "intact" in captured.out
        assert captured.err.startswith(deadline_line(90))
        # Both of nic2's ports down: no usable path, so the NIC fails it at its deadline.
        assert cli.main(["port", "down", "nic2", "1", *base]) == 0
        capsys.readouterr()
        assert cli.main(["send", "nic2", "nic0", "--bytes", "64K", "--deadline", "1", *base]) == 1
        err = capsys.readouterr().err
        assert err.startswith(deadline_line(1)), err
        # Whichever of the NIC's two checks of the deadline fires first.
        assert "failed (deadline)" in err or "failed (no_usable_ev)" in err, err
        assert "plane 0 via p0-t1-0: 80 ASSUMED_BAD" in err
        assert "local ports down: [0, 1]" in err
        assert cli.main(["port", "up", "nic2", "1", *base]) == 0
        # a link that does not exist is bad input: 2 (docs/exit-codes.md)
        assert cli.main(["link", "down", "p0-t0-0", "p1-t1-0", *base]) == 2
        assert "there is no link" in capsys.readouterr().err
        for command in (
            ["switch", "up", "p0-t1-1"],
            ["port", "up", "nic2", "0"],
            ["link", "up", "p1-t0-1", "p1-t1-0"],
        ):
            assert cli.main([*command, *base]) == 0
        capsys.readouterr()
        assert cli.main(["status", "--check", *base]) == 0
        output = capsys.readouterr().out
        assert output.count("tables match the plan") == 8, output
    finally:
        assert cli.main(["down", *base]) == 0
    assert "12 processes stopped" in capsys.readouterr().out
    assert rd.list_runs(short_root) == []


def test_a_failed_demo_keeps_its_evidence(short_root: Path) -> None:
    """Failure leaves evidence (issue 15): a demo run undilated (TDF 1) cannot carry its
    transfer by the run's end; the run directory (logs, NIC event logs) moves to failed/,
    the results directory keeps what the run measured, and the error says where."""
    options = _demo_options(short_root, tdf=1)
    with pytest.raises(DemoError, match="did not arrive intact") as info:
        run_demo(options)
    notes = "\n".join(info.value.__notes__)
    kept = Path(notes.split("logs and state of the failed run: ")[1].split()[0])
    assert kept.parent == short_root / rd.FAILED_DIR
    assert (kept / "nics" / "nic0.events.jsonl").exists()
    assert "did not arrive intact" in (kept / rd.FAILURE_FILE).read_text()
    assert rd.list_runs(short_root) == []
    assert rd.marked_pids(rd.RunDir(kept).load().run_id) == []
    data = json.loads((short_root / "out" / DEMO_RESULTS_NAME).read_text())
    assert data["demo"]["failure"].startswith("DemoError")
    assert (short_root / "out" / DEMO_PLOT_NAME).read_bytes()[:4] == b"\x89PNG"
