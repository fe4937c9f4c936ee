from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testbed import rundir as rd
from testbed.exceptions import NotRunningError, RunDirError

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def make_state(run: rd.RunDir) -> rd.RunState:
    run_id = run.create()
    state = rd.RunState(
        name=run.name,
        run_id=run_id,
        mode="local",
        target="p4emu",
        topology_file=str(run.file("topology.yaml")),
        created=time.time(),
        launcher_pid=os.getpid(),
    )
    run.save(state)
    return state


def test_state_round_trips_through_the_file(run_root: Path) -> None:
    run = rd.run_dir("a", run_root)
    state = make_state(run)
    state.processes["switch:p0-t0-0"] = rd.ProcessRecord(
        "switch:p0-t0-0", "switch", 123, 456, ["p4emu-switch"], "log"
    )
    state.links_down.append(["p0-t0-0", "p0-t1-0"])
    run.save(state)
    loaded = run.load()
    assert loaded == state
    assert loaded.processes_of("switch")[0].node == "p0-t0-0"


def test_damaged_state_is_a_clear_error(run_root: Path) -> None:
    run = rd.run_dir("a", run_root)
    make_state(run)
    run.state_path.write_text("{not json", encoding="utf-8")
    with pytest.raises(RunDirError, match=r"state.json: damaged state file"):
        run.load()
    run.state_path.write_text(json.dumps({"version": 1, "name": "a"}), encoding="utf-8")
    with pytest.raises(RunDirError, match="damaged state file"):
        run.load()
    run.state_path.write_text(json.dumps({"version": 99}), encoding="utf-8")
    with pytest.raises(RunDirError, match="state version 99"):
        run.load()


def test_missing_state_means_not_running(run_root: Path) -> None:
    with pytest.raises(NotRunningError, match="no fabric is running"):
        rd.run_dir("nothing", run_root).load()


def test_run_names_must_be_plain(run_root: Path) -> None:
    for bad in ("", "a/b", "..", "."):
        with pytest.raises(RunDirError, match="plain directory name"):
            rd.run_dir(bad, run_root)


def test_select_run_picks_the_only_one_or_asks(run_root: Path) -> None:
    with pytest.raises(NotRunningError, match="no fabric is running"):
        rd.select_run(None, run_root)
    make_state(rd.run_dir("one", run_root))
    assert rd.select_run(None, run_root).name == "one"
    make_state(rd.run_dir("two", run_root))
    with pytest.raises(
        NotRunningError, match=r"several runs .* \(one, two\); choose one with --name"
    ):
        rd.select_run(None, run_root)
    assert rd.select_run("two", run_root).name == "two"


def test_default_root_never_depends_on_the_current_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """$MRC_TESTBED_RUN_DIR, else /run/mrc-testbed for root, else $XDG_RUNTIME_DIR, else
    ~/.local/state/mrc-testbed — the same answer from any directory (issue 15)."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(rd.ROOT_ENV, str(tmp_path / "x"))
    assert rd.default_root() == tmp_path / "x"
    monkeypatch.delenv(rd.ROOT_ENV)
    monkeypatch.setattr(rd.os, "geteuid", lambda: 0)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg"))
    assert rd.default_root() == Path("/run/mrc-testbed")
    monkeypatch.setattr(rd.os, "geteuid", lambda: 1000)
    assert rd.default_root() == tmp_path / "xdg" / "mrc-testbed"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    seen = set()
    for where in (tmp_path, home.parent, Path("/")):
        monkeypatch.chdir(where)
        seen.add(rd.default_root())
    assert seen == {home / ".local" / "state" / "mrc-testbed"}
    monkeypatch.setenv(rd.ROOT_ENV, "relative")
    monkeypatch.chdir(tmp_path)
    assert rd.default_root() == tmp_path / "relative"  # made absolute once, at the start


def test_reserved_names_and_retire(run_root: Path) -> None:
    for name in rd.RESERVED_NAMES:
        with pytest.raises(RunDirError, match="reserved"):
            rd.run_dir(name, run_root)
    run = rd.run_dir("broken", run_root)
    run.create()
    (run.file("switches", "s.log")).write_text("the evidence\n")
    kept = rd.retire(run, "it broke")
    assert not run.exists()
    assert kept.parent == run_root / rd.FAILED_DIR and kept.name.startswith("broken-")
    assert (kept / "switches" / "s.log").read_text() == "the evidence\n"
    assert (kept / rd.FAILURE_FILE).read_text() == "it broke\n"
    assert rd.list_runs(run_root) == []  # no longer a run to choose from
    with pytest.raises(NotRunningError, match="no fabric is running"):
        rd.select_run(None, run_root)
    again = rd.run_dir("broken", run_root)
    again.create()
    assert rd.retire(again, "twice") != kept  # same second: a new name


def test_failed_runs_are_bounded(run_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rd, "FAILED_KEPT", 2)
    for i in range(4):
        run = rd.run_dir(f"r{i}", run_root)
        run.create()
        rd.retire(run, "x")
    assert len(list((run_root / rd.FAILED_DIR).iterdir())) == 2


def test_start_ticks_of_a_missing_pid_is_none() -> None:
    assert rd.start_ticks(os.getpid()) is not None
    assert rd.start_ticks(2**22 + 17) is None


def test_teardown_of_nothing_is_a_no_op(run_root: Path) -> None:
    report = rd.teardown(rd.run_dir("absent", run_root))
    assert not report.existed
    assert report.summary() == "absent: nothing to stop"


@pytest.mark.integration
def test_teardown_stops_recorded_processes_and_removes_everything(run_root: Path) -> None:
    run = rd.run_dir("t", run_root)
    state = make_state(run)
    record = rd.spawn(
        run, state, name="switch:s", kind="switch", argv=SLEEPER, log=run.file("switches", "s.log")
    )
    assert rd.is_alive(record)
    assert run.load().processes["switch:s"].pid == record.pid
    report = rd.teardown(run)
    assert report.processes_stopped == 1
    assert not rd.is_alive(record)
    assert not run.path.exists()
    assert rd.teardown(run).summary() == "t: nothing to stop"  # idempotent


@pytest.mark.integration
def test_teardown_finds_unrecorded_processes_by_run_id(run_root: Path) -> None:
    """A process started but not yet recorded when the launcher died is still found."""
    run = rd.run_dir("t", run_root)
    state = make_state(run)
    env = dict(os.environ, **{rd.RUN_ENV: state.run_id})
    orphan = subprocess.Popen(SLEEPER, env=env, start_new_session=True)
    try:
        # Popen returns once exec has begun; the kernel shows the new environment in
        # /proc/PID/environ a moment later (empty until then), so wait for it, bounded.
        deadline = time.monotonic() + 30
        while not rd.marked_pids(state.run_id) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert rd.marked_pids(state.run_id) == [orphan.pid]
        run.state_path.unlink()  # even without a state file: the run-id file is enough
        report = rd.teardown(run)
        assert report.processes_stopped == 1
        assert orphan.wait(timeout=5) is not None
    finally:
        if orphan.poll() is None:
            orphan.kill()


@pytest.mark.integration
def test_a_recycled_pid_is_never_killed(run_root: Path) -> None:
    run = rd.run_dir("t", run_root)
    state = make_state(run)
    bystander = subprocess.Popen(SLEEPER, start_new_session=True)
    try:
        ticks = rd.start_ticks(bystander.pid)
        assert ticks is not None
        # The state says this pid is ours, but with another start time: another process.
        state.processes["nic:n"] = rd.ProcessRecord(
            "nic:n", "nic", bystander.pid, ticks + 1, ["x"], ""
        )
        run.save(state)
        rd.teardown(run)
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


@pytest.mark.integration
def test_teardown_removes_leftover_sockets_and_keeps_dir_when_asked(run_root: Path) -> None:
    import socket

    run = rd.run_dir("t", run_root)
    make_state(run)
    path = run.file("nics", "nic0.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()
    report = rd.teardown(run, keep_dir=True)
    assert report.sockets_removed == 1
    assert not path.exists()
    assert run.path.exists()
