"""Mininet mode end to end (root): veth pairs, host namespaces, p4emu-switch on AF_PACKET."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import capabilities
import pytest

from testbed import cli, layout
from testbed import rundir as rd
from testbed.exceptions import ModeError
from testbed.fabric import switch_command
from testbed.mininet_mode import up_mininet
from testbed.options import FabricOptions
from testbed.traffic import run_transfer
from topologies import load

from .conftest import free_bases, nic_program


def _missing() -> str | None:
    reason = capabilities.mininet_missing()  # root, network namespaces, veth pairs
    if reason is not None:
        return reason
    try:
        switch_command("p4emu")
    except ModeError:
        return "p4emu-switch (p4emu.server.main) is not installed yet"
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        return "the mininet Python library is not installed (pip install mininet)"
    return None


pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(_missing() is not None, reason=str(_missing())),
]


def _root_interfaces(topology_name: str = "tiny") -> list[str]:
    topo = load(topology_name)
    names = [n for link in topo.links() for n in layout.link_interface_names(topo, link)]
    return [n for n in names if Path("/sys/class/net", n).exists()]


def _ethtool_features(interface: str) -> dict[str, str]:
    output = subprocess.run(
        ["ethtool", "-k", interface], capture_output=True, text=True, check=True
    ).stdout
    features = {}
    for line in output.splitlines()[1:]:
        name, _, value = line.strip().partition(":")
        features[name] = value.split()[0] if value.split() else ""
    return features


def test_mininet_tiny_with_p4emu_switches_transfers_and_tears_down() -> None:
    tiny = load("tiny")
    _udp, grpc = free_bases(tiny)
    with tempfile.TemporaryDirectory(prefix="mrt-", dir="/tmp") as root:
        options = FabricOptions(
            mode="mininet", root=Path(root), grpc_base_port=grpc, nic_command=nic_program()
        )
        result = up_mininet("tiny", options)
        fabric = result.fabric
        try:
            assert fabric.state.mode == "mininet"
            switch_side = [n for n in _root_interfaces() if not n.startswith("nic")]
            assert len(switch_side) == 24  # every switch port; NIC ends live in host namespaces
            features = _ethtool_features("p0-t0-0-eth3")
            assert features["tx-checksumming"] == "off"
            assert features["generic-segmentation-offload"] == "off"
            qdisc = subprocess.run(
                ["tc", "qdisc", "show", "dev", "p0-t0-0-eth3"], capture_output=True, text=True
            ).stdout
            assert "htb" in qdisc
            # tiny's 1 us links: every switch port and every NIC port delays what it sends.
            for record in fabric.state.processes_of("switch"):
                delays = [
                    record.argv[i + 1]
                    for i, arg in enumerate(record.argv)
                    if arg == "--link-delay-us"
                ]
                assert delays == [f"{p}=1.0" for p in tiny.switch(record.node).ports]
                assert "--port-queue-rate" not in record.argv  # the rate is tc htb's
            for nic in tiny.nics:
                path = fabric.rundir.file("nics", f"{nic.name}.json")
                ports = json.loads(path.read_text(encoding="utf-8"))["ports"]
                assert {port["delay_us"] for port in ports.values()} == {1.0}
            assert any("added by each link's sender" in note for note in result.notes)
            for src, dst in (("nic0", "nic3"), ("nic2", "nic1"), ("nic0", "nic1")):
                assert run_transfer(fabric, src, dst, 64 * 1024, timeout=60).intact
            # A cut through gNMI, where p4emu names its ports by their veths.
            uplink = tiny.link("p0-t0-0", "p0-t1-0")
            fabric.link_down("p0-t0-0", "p0-t1-0")
            assert not fabric.port_states("p0-t0-0")[uplink.a.port]
            assert not fabric.port_states("p0-t1-0")[uplink.b.port]
            assert fabric.status(check=True).in_sync
            assert run_transfer(fabric, "nic0", "nic3", 64 * 1024, timeout=60).intact
            fabric.link_up("p0-t0-0", "p0-t1-0")
            assert fabric.port_states("p0-t0-0")[uplink.a.port]
        finally:
            report = rd.teardown(fabric.rundir)
        assert report.processes_stopped >= 12
        assert _root_interfaces() == []
        assert rd.marked_pids(fabric.state.run_id) == []


def test_mininet_down_after_a_killed_launcher_leaves_nothing() -> None:
    tiny = load("tiny")
    _udp, grpc = free_bases(tiny)
    hanging = shlex.join([sys.executable, "-c", "import time; time.sleep(600)"])
    with tempfile.TemporaryDirectory(prefix="mrt-", dir="/tmp") as root:
        launcher = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "testbed",
                "up",
                "tiny",
                "--mode",
                "mininet",
                "--run-dir",
                root,
                "--grpc-base-port",
                str(grpc),
                "--switch-command",
                hanging,
                "--nic-command",
                shlex.join(nic_program()),
                "--timeout-start",
                "600",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        run = rd.run_dir("tiny", Path(root))
        deadline = time.monotonic() + 120
        state = None
        while time.monotonic() < deadline:
            if run.has_state():
                state = run.load()
                if len(state.processes_of("nic")) == tiny.nic_count:
                    break
            time.sleep(0.1)
        else:
            launcher.kill()
            pytest.fail("the Mininet launcher did not start every NIC within 120 s")
        launcher.kill()
        launcher.wait()
        assert state is not None
        assert len(_root_interfaces()) == 24
        assert rd.marked_pids(state.run_id)

        assert cli.main(["down", "--run-dir", root]) == 0

        assert _root_interfaces() == []
        assert rd.marked_pids(state.run_id) == []
        assert not run.path.exists()
