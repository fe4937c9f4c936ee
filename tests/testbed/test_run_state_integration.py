"""Run state does not depend on the working directory; a NIC process that dies during
``send`` is reported as such; ``down --all`` stops every run (issues 15 and 17)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from testbed import rundir as rd
from topologies import load

from .conftest import free_bases, nic_program

pytestmark = pytest.mark.integration

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def test_commands_find_the_run_from_any_directory(short_root: Path, tmp_path: Path) -> None:
    env = {**os.environ, rd.ROOT_ENV: str(short_root)}
    cli = [sys.executable, "-m", "testbed"]
    places = []
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        places.append(tmp_path / name)

    def mrc(*args: str, where: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cli, *args],
            cwd=where,
            env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    udp, grpc = free_bases(load("tiny"))
    up = mrc(
        "up",
        "tiny",
        "--base-port",
        str(udp),
        "--grpc-base-port",
        str(grpc),
        "--nic-command",
        " ".join(nic_program()),
        where=places[0],
    )
    assert up.returncode == 0, up.stderr
    try:
        status = mrc("status", where=places[1])
        assert status.returncode == 0, status.stderr
        assert f"run directory: {short_root / 'tiny'}" in status.stdout
        assert not (places[0] / "runs").exists() and not (places[1] / "runs").exists()

        # A NIC process that is gone: send says so (by its pid), not after a timeout.
        nic3 = rd.run_dir("tiny", short_root).load().processes["nic:nic3"]
        os.kill(nic3.pid, signal.SIGKILL)
        send = mrc("send", "nic0", "nic3", "--bytes", "4M", "--timeout", "3600", where=places[1])
        assert send.returncode == 1
        assert f"nic3: the NIC process (pid {nic3.pid}) has exited" in send.stderr, send.stderr
        assert "logs: " in send.stderr and "nic0.events.jsonl" in send.stderr
        assert "Traceback" not in send.stderr
        status = mrc("status", where=places[2])
        assert status.returncode == 3 and "process gone" in status.stdout

        # A second run (a recorded sleeper), then down --all from a third directory.
        other = rd.run_dir("other", short_root)
        state = rd.RunState("other", other.create(), "local", "p4emu", "t.yaml", 0.0, 0)
        other.save(state)
        sleeper = rd.spawn(
            other, state, name="nic:x", kind="nic", argv=SLEEPER, log=other.file("x.log")
        )
        several = mrc("status", where=places[2])
        assert several.returncode == 1 and "several runs" in several.stderr
    finally:
        down = mrc("down", "--all", where=places[2])
    assert down.returncode == 0, down.stderr
    assert "tiny: " in down.stdout and "other: 1 processes stopped" in down.stdout
    assert rd.list_runs(short_root) == []
    assert not rd.is_alive(sleeper)
