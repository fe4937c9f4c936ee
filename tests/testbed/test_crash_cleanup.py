"""``mrc-testbed down`` after the launcher was killed in the middle of ``up``."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testbed import cli, layout
from testbed import rundir as rd
from topologies import load

from .conftest import free_bases, nic_program, udp_port_taken

# A "switch" that never serves P4Runtime: the launcher waits for it until it is killed.
HANGING_SWITCH = shlex.join([sys.executable, "-c", "import time; time.sleep(600)"])


@pytest.mark.integration
def test_down_after_a_killed_launcher_leaves_nothing(short_root: Path) -> None:
    tiny = load("tiny")
    udp, grpc = free_bases(tiny)
    log = (short_root / "launcher.log").open("wb")
    launcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "testbed",
            "up",
            "tiny",
            "--run-dir",
            str(short_root),
            "--base-port",
            str(udp),
            "--grpc-base-port",
            str(grpc),
            "--switch-command",
            HANGING_SWITCH,
            "--nic-command",
            shlex.join(nic_program()),
            "--timeout-start",
            "600",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    run = rd.run_dir("tiny", short_root)
    expected = tiny.switch_count + tiny.nic_count
    deadline = time.monotonic() + 60
    state = None
    while time.monotonic() < deadline:
        if run.has_state():
            state = run.load()
            sockets = list(run.path.glob("nics/*.sock"))
            if len(state.processes) == expected and len(sockets) == tiny.nic_count:
                break
        time.sleep(0.05)
    else:
        launcher.kill()
        output = (short_root / "launcher.log").read_text()
        pytest.fail(f"the launcher did not start every process within 60 s:\n{output}")
    launcher.kill()  # a crash: no cleanup of its own
    launcher.wait()
    assert state is not None
    orphans = rd.marked_pids(state.run_id)
    assert len(orphans) >= expected
    assert any(udp_port_taken(udp + i) for i in range(2 * tiny.link_count))

    assert cli.main(["down", "--run-dir", str(short_root)]) == 0

    assert rd.marked_pids(state.run_id) == []
    assert not run.path.exists()
    assert not any(udp_port_taken(udp + i) for i in range(2 * tiny.link_count))
    assert all(rd.start_ticks(pid) is None for pid in orphans)
    assert cli.main(["down", "--run-dir", str(short_root)]) == 0  # idempotent


@pytest.mark.integration
@pytest.mark.parametrize("failure", ["crashing switch", "syntax error in --program"])
def test_a_failed_up_stops_what_it_started_and_keeps_its_logs_aside(
    short_root: Path, capsys: pytest.CaptureFixture[str], failure: str
) -> None:
    """A switch program that exits at once, or a P4 program that does not compile: up
    fails naming the cause and where the logs are; nothing keeps running; the failed run
    is kept under failed/ and does not block the next command (issue 17)."""
    tiny = load("tiny")
    udp, grpc = free_bases(tiny)
    if failure == "crashing switch":
        crashing = shlex.join(
            [sys.executable, "-c", "import sys; print('boom: bad flag'); sys.exit(3)"]
        )
        extra = ["--switch-command", crashing]
        expected = ["exit status 3 while starting", "boom: bad flag"]
    else:
        program = short_root / "broken.p4"
        program.write_text("#include <v1model.p4>\ncontrol c( { }\n")
        extra = ["--program", str(program)]
        expected = ["broken.p4:2"]
    code = cli.main(
        [
            "up",
            "tiny",
            "--run-dir",
            str(short_root),
            "--base-port",
            str(udp),
            "--grpc-base-port",
            str(grpc),
            "--nic-command",
            shlex.join(nic_program()),
            *extra,
        ]
    )
    err = capsys.readouterr().err
    assert code == 1, err
    assert all(words in err for words in expected), err
    assert "Traceback" not in err
    kept = Path(err.split("logs and state of the failed run: ")[1].split()[0])
    assert kept.parent == short_root / rd.FAILED_DIR
    state = rd.RunDir(kept).load()
    assert state.phase == "failed"
    assert rd.marked_pids(state.run_id) == []
    assert (kept / "nics" / "nic0.json").exists()  # the evidence stays
    assert not rd.run_dir("tiny", short_root).path.exists()
    assert rd.list_runs(short_root) == []
    # The next command is not blocked by "several runs ...; choose one with --name".
    assert cli.main(["status", "--run-dir", str(short_root)]) == 1
    assert "no fabric is running" in capsys.readouterr().err
    assert cli.main(["down", "--run-dir", str(short_root)]) == 0
    assert not udp_port_taken(layout.udp_link_ports(tiny, udp)[("nic0", 0)].local)


@pytest.mark.integration
def test_ctrl_c_during_up_exits_130_and_keeps_the_run_aside(short_root: Path) -> None:
    """Ctrl-C while up starts processes: exit 130, no traceback, nothing left running, the
    partial run kept under failed/ (not a live run)."""
    tiny = load("tiny")
    udp, grpc = free_bases(tiny)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "testbed",
            "up",
            "tiny",
            "--run-dir",
            str(short_root),
            "--base-port",
            str(udp),
            "--grpc-base-port",
            str(grpc),
            "--nic-command",
            shlex.join(nic_program()),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    first = process.stderr.readline()  # "... starting 8 switches and 4 NICs": in the body
    assert first.startswith("... starting"), first
    process.send_signal(signal.SIGINT)
    _out, rest = process.communicate(timeout=120)
    err = first + rest
    assert process.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert "logs and state of the failed run: " in err
    assert rd.list_runs(short_root) == []
    kept = next((short_root / rd.FAILED_DIR).iterdir())
    assert rd.marked_pids(rd.RunDir(kept).load().run_id) == []
    assert not udp_port_taken(layout.udp_link_ports(tiny, udp)[("nic0", 0)].local)
