from __future__ import annotations

import pytest

from testbed import layout
from testbed.exceptions import PortPlanError
from topologies import load, loads

from .conftest import OVERRIDDEN


def test_udp_ports_are_a_pure_function_of_topology_and_base() -> None:
    tiny = load("tiny")
    assert layout.udp_link_ports(tiny, 30000) == layout.udp_link_ports(load("tiny"), 30000)


def test_every_link_end_names_its_peer_and_ports_are_unique() -> None:
    tiny = load("tiny")
    ends = layout.udp_link_ports(tiny, 30000)
    assert len(ends) == 2 * tiny.link_count
    locals_ = [end.local for end in ends.values()]
    assert len(set(locals_)) == len(locals_)
    assert set(locals_) == set(range(30000, 30000 + 2 * tiny.link_count))
    for link in tiny.links():
        a, b = ends[(link.a.node, link.a.port)], ends[(link.b.node, link.b.port)]
        assert (a.local, a.peer) == (b.peer, b.local)


def test_first_link_gets_base_on_its_lower_end() -> None:
    tiny = load("tiny")
    first = next(tiny.links())  # nic0:0 -- p0-t0-0:1
    ends = layout.udp_link_ports(tiny, 30000)
    assert ends[(first.a.node, first.a.port)].local == 30000
    assert ends[(first.b.node, first.b.port)].local == 30001
    assert ends[("p0-t0-0", 1)].switch_arg() == "1@udp:30001->30000"
    assert ends[("nic0", 0)].nic_port_config() == {
        "driver": "udp",
        "local": "127.0.0.1:30000",
        "peer": "127.0.0.1:30001",
        "delay_us": 0.0,
    }
    assert ends[("nic0", 0)].nic_port_config(2.5)["delay_us"] == 2.5


def test_port_block_must_fit_below_65536() -> None:
    tiny = load("tiny")
    with pytest.raises(PortPlanError, match=r"16 links need UDP ports 65530\.\.65561"):
        layout.udp_link_ports(tiny, 65530)


def test_privileged_base_port_is_refused() -> None:
    with pytest.raises(PortPlanError, match="1024"):
        layout.udp_link_ports(load("tiny"), 80)
    with pytest.raises(PortPlanError, match="below 1024"):
        layout.grpc_endpoints(load("tiny"), 80)


def test_grpc_endpoints_follow_the_controller_convention() -> None:
    endpoints = layout.grpc_endpoints(load("tiny"), 9559)
    assert endpoints["p0-t0-0"].address == "127.0.0.1:9559"
    assert endpoints["p1-t1-1"].address == "127.0.0.1:9566"
    assert layout.grpc_port(endpoints["p0-t1-0"]) == 9561


def test_link_rate_is_counted_in_full_frames() -> None:
    pps = layout.link_rate_pps(100)
    assert pps == pytest.approx(100e9 / (8 * layout.NOMINAL_FRAME_BYTES))
    assert layout.link_rate_pps(100, 0.001) == pytest.approx(pps / 1000)


def test_each_port_gets_its_own_links_rate() -> None:
    topo = loads(OVERRIDDEN)
    assert layout.port_rates_pps(topo, "p0-t1-0", 0.5) == {
        1: layout.link_rate_pps(100, 0.5),
        2: layout.link_rate_pps(40, 0.5),
    }
    assert layout.port_queue_rate_args(topo, "p0-t1-0") == [
        "--port-queue-rate",
        f"1={layout.link_rate_pps(100)!r}",
        "--port-queue-rate",
        f"2={layout.link_rate_pps(40)!r}",
    ]


def test_interface_names_and_length_limit() -> None:
    tiny = load("tiny")
    link = tiny.link("nic0", "p0-t0-0")
    assert layout.link_interface_names(tiny, link) == ("nic0-p0", "p0-t0-0-eth1")
    fabric = tiny.link("p1-t0-1", "p1-t1-0")
    assert layout.link_interface_names(tiny, fabric) == ("p1-t0-1-eth3", "p1-t1-0-eth2")
    with pytest.raises(PortPlanError, match="longer than Linux's 15 characters"):
        layout.switch_interface("p1-t0-1999", 2003)


def test_a_dilated_topology_divides_rates_multiplies_delays_and_keeps_queues() -> None:
    topo = loads(OVERRIDDEN)
    slow = layout.dilated_topology(topo, 1024)
    pairs = list(zip(topo.links(), slow.links(), strict=True))
    assert len(pairs) == topo.link_count
    for link, dilated in pairs:
        assert (dilated.a, dilated.b) == (link.a, link.b)
        assert dilated.rate_gbps == link.rate_gbps / 1024  # per-link overrides included
        assert dilated.delay_us == link.delay_us * 1024
        assert dilated.queue_packets == link.queue_packets
    assert slow.link("nic3", "p1-t0-1").delay_us == 200 * 1024
    assert layout.dilated_topology(topo, 1) is topo


def test_a_senders_path_delay_is_both_access_links_and_both_fabric_hops() -> None:
    topo = loads(OVERRIDDEN)
    # plane 0: access 3 us, p0-t0-1's largest uplink 5.5 us; plane 1: access 200 us, no
    # fabric delay on plane 1.
    assert layout.sender_path_delays_us(topo, "nic3") == {0: 17.0, 1: 400.0}
    assert layout.sender_path_delays_us(load("tiny"), "nic0") == {0: 4.0, 1: 4.0}
