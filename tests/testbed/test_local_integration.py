"""Local mode end to end: p4emu-switch processes over loopback UDP, nic-emu processes, the
controller."""

from __future__ import annotations

import contextlib
import itertools
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller import p4names
from testbed import rundir as rd
from testbed.exceptions import ModeError, TestbedError
from testbed.fabric import Fabric, switch_command
from testbed.local import up_local
from testbed.options import FabricOptions
from testbed.traffic import run_transfer
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
SIZE = 64 * 1024


@pytest.fixture(scope="module")
def tiny() -> Iterator[Fabric]:
    with tempfile.TemporaryDirectory(prefix="mrt-", dir="/tmp") as root:
        udp, grpc = free_bases(load("tiny"))
        options = FabricOptions(
            root=Path(root), udp_base_port=udp, grpc_base_port=grpc, nic_command=nic_program()
        )
        result = up_local("tiny", options)
        try:
            yield result.fabric
        finally:
            report = rd.teardown(result.fabric.rundir)
            assert report.processes_stopped == 12


def _egress_up(fabric: Fabric, switch: str, port: int) -> int:
    view = fabric.read_switch(switch, counters=False)
    for entry in view.tables[p4names.EGRESS_PORT_CONFIG]:
        if entry.match == (port,):
            return entry.params[1]
    raise AssertionError(f"{switch} has no egress_port_config entry for port {port}")


def test_every_pair_of_nics_can_transfer(tiny: Fabric) -> None:
    assert tiny.state.phase == "ready"
    for src, dst in itertools.permutations(["nic0", "nic1", "nic2", "nic3"], 2):
        outcome = run_transfer(tiny, src, dst, SIZE, seed=hash((src, dst)) & 0xFFFF, timeout=60)
        assert outcome.intact, outcome.line()


def test_multi_connection_and_roce_transfers_are_checked_per_part(tiny: Fabric) -> None:
    outcome = run_transfer(tiny, "nic1", "nic2", 4 * SIZE, connections=4, timeout=60)
    assert outcome.intact
    assert len(outcome.info["parts"]) == 4
    assert run_transfer(tiny, "nic3", "nic0", SIZE, mode="roce", timeout=60).intact


def test_status_sees_every_process_and_tables_match_the_plan(tiny: Fabric) -> None:
    status = tiny.status(check=True)
    assert status.healthy
    switches = [n for n in status.nodes if n.kind == "switch"]
    assert len(switches) == 8
    assert all("tables match the plan" in n.detail for n in switches)
    assert all(n.detail == "planes 0:up 1:up" for n in status.nodes if n.kind == "nic")


def _port(fabric: Fabric, switch: str, port: int) -> dict[str, Any]:
    """The port's state leaves as the switch reports them over gNMI."""
    return fabric.gnmi_ports(switch)[port]


def test_link_down_and_up_change_forwarding(tiny: Fabric) -> None:
    """A cut is physical: the port is down on the switch (gNMI), the routes stay as
    planned, nothing leaves the port, and the NIC routes around it."""
    port = tiny.topology.link("p0-t0-0", "p0-t1-0").a.port  # p0-t0-0's uplink to p0-t1-0
    tiny.link_down("p0-t0-0", "p0-t1-0")
    try:
        assert _port(tiny, "p0-t0-0", port)["oper-status"] == "DOWN"
        assert _port(tiny, "p0-t1-0", 1)["oper-status"] == "DOWN"
        assert _egress_up(tiny, "p0-t0-0", port) == 1  # the tables are not touched
        before = _port(tiny, "p0-t0-0", port)["out-pkts"]
        outcome = run_transfer(tiny, "nic0", "nic2", SIZE, timeout=60)
        assert outcome.intact  # the NIC routes around the cut
        assert _port(tiny, "p0-t0-0", port)["out-pkts"] == before
        status = tiny.status(check=True)
        assert status.links_down == [["p0-t0-0", "p0-t1-0"]] and status.in_sync
    finally:
        tiny.link_up("p0-t0-0", "p0-t1-0")
    assert _port(tiny, "p0-t0-0", port)["oper-status"] == "UP"
    # Traffic returns to the link once the sender uses its EVs again (the NIC decides when,
    # after its probes succeed), so send until it does.
    assert _until(lambda: _forwards(tiny, "p0-t0-0", port, "nic0", "nic2"))


def test_a_cut_survives_push_and_a_running_watch(tiny: Fabric) -> None:
    """One truth for link state (issue 15): with ``mrc-controller watch`` running (it holds
    P4Runtime primary arbitration and reconciles), ``link down`` works, and neither the
    watch nor a ``push --pipeline force`` revives the cut link; status --check agrees."""
    base = str(tiny.state.settings["grpc_base_port"])
    topology = tiny.state.topology_file
    watch = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "mrc-controller"),
            "watch",
            topology,
            "--grpc-base-port",
            base,
            "--interval",
            "0.2",
            "--resync",
            "0.5",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(3.0)  # the watch connects and becomes primary on every switch
        assert watch.poll() is None
        port = tiny.topology.link("p1-t0-1", "p1-t1-1").a.port
        assert tiny.link_down("p1-t0-1", "p1-t1-1") == "link p1-t0-1 -- p1-t1-1 is now down"
        push = subprocess.run(
            [
                str(Path(sys.executable).parent / "mrc-controller"),
                "push",
                topology,
                "--grpc-base-port",
                base,
                "--pipeline",
                "force",
                "--election-id",
                "7",
                "--timeout",
                "60",  # a loaded machine: a forced pipeline takes a while
                "-q",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert push.returncode == 0, push.stderr
        time.sleep(1.5)  # a few resyncs of the watch
        assert _port(tiny, "p1-t0-1", port)["oper-status"] == "DOWN"
        status = tiny.status(check=True)
        assert status.links_down == [["p1-t0-1", "p1-t1-1"]]
        assert status.in_sync, status.lines()
        assert run_transfer(tiny, "nic1", "nic3", SIZE, timeout=60).intact
        assert tiny.link_up("p1-t0-1", "p1-t1-1") == "link p1-t0-1 -- p1-t1-1 is now up"
        assert _port(tiny, "p1-t0-1", port)["oper-status"] == "UP"
    finally:
        if tiny.state.links_down:
            tiny.link_up("p1-t0-1", "p1-t1-1")
        watch.send_signal(signal.SIGINT)
        _out, err = watch.communicate(timeout=60)
    assert watch.returncode == 0 and "Traceback" not in err, err


def _planes_used(info: dict[str, Any]) -> set[str]:
    return {plane for plane, size in info["per_plane_bytes"].items() if size > 0}


def _forwards(fabric: Fabric, switch: str, port: int, src: str, dst: str) -> bool:
    before = fabric.counters(switch).get(("forwarded", port), 0)
    assert run_transfer(fabric, src, dst, SIZE, timeout=60).intact
    return fabric.counters(switch).get(("forwarded", port), 0) > before


def _until(check: Callable[[], bool], attempts: int = 30, pause: float = 0.5) -> bool:
    for _ in range(attempts):
        if check():
            return True
        time.sleep(pause)
    return False


def test_switch_down_and_up(tiny: Fabric) -> None:
    record = tiny.switch_record("p1-t1-1")
    tiny.switch_down("p1-t1-1")
    try:
        assert not rd.is_alive(record)
        status = tiny.status()
        assert "p1-t1-1" in status.switches_down
        assert run_transfer(tiny, "nic1", "nic3", SIZE, timeout=60).intact
    finally:
        tiny.switch_up("p1-t1-1")
    fresh = tiny.switch_record("p1-t1-1")
    assert fresh.pid != record.pid and rd.is_alive(fresh)
    assert tiny.state.switches_down == []
    report = tiny.program(["p1-t1-1"], dry_run=True)
    assert report.reports[0].changes == ()  # re-programmed to the plan
    assert _until(lambda: _forwards(tiny, "p1-t1-1", 2, "nic1", "nic3"))


def test_port_down_and_up(tiny: Fabric) -> None:
    t0_port = tiny.topology.nic_port("nic0", 1).t0_port
    tiny.port_down("nic0", 1)
    try:
        assert tiny.nic("nic0").status()["planes"]["1"] == "down"
        assert _port(tiny, "p1-t0-0", t0_port)["oper-status"] == "DOWN"
        outcome = run_transfer(tiny, "nic0", "nic3", SIZE, timeout=60)
        assert outcome.intact
        assert _planes_used(outcome.info) == {"0"}
    finally:
        tiny.port_up("nic0", 1)
    assert tiny.nic("nic0").status()["planes"]["1"] == "up"
    assert _port(tiny, "p1-t0-0", t0_port)["oper-status"] == "UP"

    def both_planes() -> bool:
        outcome = run_transfer(tiny, "nic0", "nic3", SIZE, timeout=60)
        assert outcome.intact
        return _planes_used(outcome.info) == {"0", "1"}

    assert _until(both_planes)


def test_a_restarted_switch_gets_its_cut_ports_back_down(tiny: Fabric) -> None:
    """A switch powered off and on comes back with every port up; the ports of links that
    are still cut go down again (the cut is a fact of the cable, not of the switch)."""
    link = tiny.topology.link("p0-t0-1", "p0-t1-1")
    tiny.link_down("p0-t0-1", "p0-t1-1")
    try:
        tiny.switch_down("p0-t1-1")
        tiny.switch_up("p0-t1-1")
        assert _port(tiny, "p0-t1-1", link.b.port)["oper-status"] == "DOWN"
        assert tiny.status(check=True).in_sync
    except BaseException:
        with contextlib.suppress(TestbedError):  # the first failure is the one to see
            tiny.link_up("p0-t0-1", "p0-t1-1")
        raise
    tiny.link_up("p0-t0-1", "p0-t1-1")
    assert _port(tiny, "p0-t1-1", link.b.port)["oper-status"] == "UP"


def test_a_switch_that_outlives_its_kill_is_reported_not_taken_for_down(
    tiny: Fabric, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the killed switch process is still there after the wait, switch down says so and
    does not record the switch as down (a later switch up would take the lingering process
    for a running switch)."""
    import testbed.fabric as fabric_module

    monkeypatch.setattr(fabric_module, "kill_record", lambda record, sig, wait: None)
    with pytest.raises(TestbedError, match=r"p0-t1-0: process \d+ still runs 10 s after SIGKILL"):
        tiny.switch_down("p0-t1-0")
    assert "p0-t1-0" not in tiny.state.switches_down
    assert tiny.status(check=True).in_sync
