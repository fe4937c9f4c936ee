"""The p4emu-switch fork server (testbed.zygote)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from testbed import rundir as rd
from testbed.exceptions import ModeError
from testbed.fabric import (
    SWITCH_COMMAND_ENV,
    SwitchLaunch,
    SwitchStarter,
    switch_command,
    use_fork_server,
)


def _p4emu_switch_missing() -> bool:
    try:
        switch_command("p4emu")
    except ModeError:
        return True
    return False


def test_fork_server_only_for_the_default_p4emu_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SWITCH_COMMAND_ENV, raising=False)
    assert use_fork_server("bmv2", None) is False
    assert use_fork_server("p4emu", ["my-switch"]) is False
    monkeypatch.setenv(SWITCH_COMMAND_ENV, "my-switch --flag")
    assert use_fork_server("p4emu", None) is False


@pytest.mark.integration
@pytest.mark.skipif(
    _p4emu_switch_missing(), reason="p4emu-switch (p4emu.server.main) is not installed yet"
)
def test_forked_switches_are_separate_recorded_sessions(short_root: Path) -> None:
    run = rd.run_dir("z", short_root)
    run_id = run.create()
    state = rd.RunState("z", run_id, "local", "p4emu", "t.yaml", time.time(), 1)
    run.save(state)
    starter = SwitchStarter(run, state, ["p4emu-switch"], fork_server=True)
    try:
        good = starter.start(
            SwitchLaunch(
                "s0",
                ["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0"],
                run.file("switches", "s0.log"),
            )
        )
        bad = starter.start(SwitchLaunch("s1", ["--no-such-flag"], run.file("switches", "s1.log")))
    finally:
        starter.close()
    try:
        assert good.argv[0] == "p4emu-switch"  # recorded with its ordinary command line
        assert rd.is_alive(good)
        assert rd.start_ticks(good.pid) == good.start_ticks
        assert os.getsid(good.pid) == good.pid  # its own session: stopped as a group
        assert good.pid in rd.marked_pids(run_id)
        deadline = time.monotonic() + 10
        while rd.is_alive(bad) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not rd.is_alive(bad)
        assert "unrecognized arguments: --no-such-flag" in Path(bad.log).read_text()
        assert not rd.is_alive(starter_zygote(state))
    finally:
        rd.teardown(run)
    assert not rd.is_alive(good)


def starter_zygote(state: rd.RunState) -> rd.ProcessRecord:
    return state.processes["zygote:p4emu-switch"]
