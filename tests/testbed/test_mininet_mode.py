"""Mininet mode's pure parts: the switch command lines and NIC configs it writes, and the
notes it prints (the network itself is in test_mininet_integration.py)."""

from __future__ import annotations

import os
import pty
from pathlib import Path
from types import SimpleNamespace

import pytest

from nic_emu.serve_config import AfPacketPortSpec, parse_serve_config
from p4emu.server.options import parse_options
from testbed import layout
from testbed import rundir as rd
from testbed.fabric import switch_args
from testbed.local import nic_config, write_topology
from testbed.mininet_mode import interface_commands, mininet_notes, nic_ports, release_shells
from topologies import from_mapping, load, loads, to_mapping

from .conftest import OVERRIDDEN


def _argv(target: str, switch: str) -> list[str]:
    topo = loads(OVERRIDDEN)
    ports = {port: layout.switch_interface(switch, port) for port in topo.switch(switch).ports}
    return switch_args(
        target, topo, switch, ports, None, grpc_address="127.0.0.1:9559", seed=3, thrift_port=9090
    )


def test_p4emu_switches_get_each_ports_link_delay_and_p4emu_accepts_it() -> None:
    expected = {
        "p0-t0-1": {1: 3.0, 2: 3.0, 3: 5.5, 4: 3.0},  # port 3 leads to p0-t1-0 (override)
        "p0-t1-0": {1: 3.0, 2: 5.5},  # the same link from the T1's end
        "p1-t0-1": {2: 200.0},  # plane 1 has no delay but nic3's link on port 2
        "p1-t0-0": {},
    }
    for switch, delays in expected.items():
        options = parse_options(_argv("p4emu", switch))
        assert options.link_delays_us == delays, switch
        assert [spec.port for spec in options.interfaces] == list(
            loads(OVERRIDDEN).switch(switch).ports
        )


def test_mininet_switches_leave_the_rate_to_tc_htb() -> None:
    for target in ("p4emu", "bmv2"):
        argv = _argv(target, "p0-t0-1")
        assert "--queue-rate" not in argv and "--port-queue-rate" not in argv
    assert parse_options(_argv("p4emu", "p0-t0-1")).port_queue_rates_pps == {}


def test_bmv2_switches_get_no_p4emu_only_options() -> None:
    argv = _argv("bmv2", "p0-t0-1")
    assert "--link-delay-us" not in argv
    assert "--queue-depth" not in argv and "--seed" not in argv


def test_nic_configs_carry_each_planes_link_delay(short_root: Path) -> None:
    topo = loads(OVERRIDDEN)
    for nic, expected in (("nic0", [3.0, 0.0]), ("nic3", [3.0, 200.0]), ("nic2", [3.0, 0.0])):
        ports = nic_ports(topo, nic)
        assert ports == {
            str(plane): {
                "driver": "afpacket",
                "interface": f"{nic}-p{plane}",
                "delay_us": delay,
            }
            for plane, delay in enumerate(expected)
        }
    # nic-emu reads the config the launcher writes, delays included.
    run = rd.run_dir("m", short_root)
    run.create()
    config = nic_config(run, write_topology(run, topo), "nic3", nic_ports(topo, "nic3"), 1, {})
    parsed = parse_serve_config(config)
    assert parsed.ports == {
        0: AfPacketPortSpec(0, "nic3-p0", 3.0),
        1: AfPacketPortSpec(1, "nic3-p1", 200.0),
    }


def test_notes_say_precisely_where_delay_is_emulated() -> None:
    p4emu = mininet_notes(load("tiny"), 0.001, "p4emu")
    assert "100 Gb/s x 0.001" in p4emu[0] and "tc htb" in p4emu[0]
    assert "link delay 1 us is added by each link's sender" in p4emu[1]
    assert "not emulated" not in " ".join(p4emu)
    bmv2 = mininet_notes(load("tiny"), 1.0, "bmv2")
    assert "BMv2 has no link delay option" in bmv2[1]
    assert "each NIC adds a whole path's one-way delay" in bmv2[1]
    doc = to_mapping(load("tiny"))
    doc["link_defaults"]["delay_us"] = 0
    undelayed = from_mapping(doc, "tiny-undelayed", "tiny")
    assert len(mininet_notes(undelayed, 1.0, "bmv2")) == 1  # nothing to say about delay


def test_bmv2_nics_add_a_whole_paths_delay_and_bmv2_logs_nothing() -> None:
    topo = loads(OVERRIDDEN)
    for nic in ("nic0", "nic3"):
        bmv2 = {int(p): port["delay_us"] for p, port in nic_ports(topo, nic, "bmv2").items()}
        assert bmv2 == layout.sender_path_delays_us(topo, nic)
    argv = _argv("bmv2", "p0-t0-1")
    assert argv[argv.index("--log-level") + 1] == "off"
    assert "--log-level" not in _argv("p4emu", "p0-t0-1")


def test_each_veth_queues_at_most_its_links_depth() -> None:
    commands = interface_commands("s1-eth1", 6.1, 64)
    assert commands[-2] == "tc qdisc replace dev s1-eth1 parent 5:1 handle 10: pfifo limit 64"
    assert "htb rate 6.100mbit" in commands[-3] and commands[-1] == "ip link set s1-eth1 up"
    assert not any("pfifo" in c for c in interface_commands("s1-eth1", 6.1))


def test_a_built_network_leaves_no_terminal_open_in_the_launcher() -> None:
    """Each node shell's pty (Mininet's ``master``, read through ``stdin``, and ``slave``)
    is closed in the launcher once the network is built: scripts/verdicts-doc builds a
    Mininet fabric per run in one process and kept about 90 descriptors per fabric."""
    nodes = []
    for _ in range(3):
        master, slave = pty.openpty()
        nodes.append(SimpleNamespace(shell=object(), stdin=os.fdopen(master, "r"), slave=slave))
    gone = SimpleNamespace(shell=None, stdin=None, slave=-1)  # already cleaned up: untouched
    release_shells([*nodes, gone])
    for node in nodes:
        assert node.shell is None and node.stdin.closed
        with pytest.raises(OSError):  # the launcher's copy of the slave end is closed
            os.fstat(node.slave)
    release_shells(nodes)  # twice: nothing left to close, no error
