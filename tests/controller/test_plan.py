"""Plan correctness: every NIC port reaches every other NIC of its plane through every T1.

A small model of the switch program's forwarding (my_usid -> shift -> usid_route ->
egress_port_config, docs/addressing.md section 1) walks each carrier through the planned
tables, hop by hop, over the topology's links.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import topologies
from controller import p4names
from controller.exceptions import PlanError
from controller.plan import Entry, LpmPrefix, RoutePlan, parse_link, plan_fabric
from controller.policy import SwitchPolicy
from topologies import AddressPlan, Role, Topology

USID_MASK = 0xFFFF


def _mapping_topology() -> Topology:
    """3 planes, uneven T1 counts, re-cabled uplinks, first port 5, a per-link queue."""
    return topologies.from_mapping(
        {
            "name": "odd",
            "planes": [{}, {"t1_per_plane": 3}, {"t1_per_plane": 1}],
            "t0_per_plane": 3,
            "t1_per_plane": 2,
            "nics_per_t0": 3,
            "switches": {"first_port": 5},
            "links": [
                {"between": ["p0-t0-1", "p0-t1-0"], "uplink_index": 1},
                {"between": ["p0-t0-1", "p0-t1-1"], "uplink_index": 0},
                {"between": ["p1-t0-2", "p1-t1-2"], "queue_packets": 32},
            ],
        }
    )


TOPOLOGIES = {
    "tiny": lambda: topologies.load("tiny"),
    "small": lambda: topologies.load("small"),
    "paper-8plane": lambda: topologies.load("paper-8plane"),
    "odd": _mapping_topology,
}


@dataclass
class Trace:
    switches: list[str]
    delivered_to: tuple[str, int]  # (node, port) the last hop leads to
    arrival: int  # destination address on arrival


class Forwarder:
    """The forwarding decisions of p4src/mrc_switch.p4, on plan entries."""

    def __init__(self, plan: RoutePlan) -> None:
        self.plan = plan
        self.tables: dict[str, dict[str, dict[object, Entry]]] = {}

    def table(self, switch: str, name: str) -> dict[object, Entry]:
        if switch not in self.tables:
            by_table: dict[str, dict[object, Entry]] = {}
            for entry in self.plan[switch].entries:
                if not entry.is_default:
                    by_table.setdefault(entry.table, {})[entry.match[0]] = entry
            self.tables[switch] = by_table
        return self.tables[switch].get(name, {})

    def trace(self, nic: str, plane: int, carrier: int) -> Trace:
        topo = self.plan.topology
        attach = topo.nic_port(nic, plane)
        node, da = attach.t0, carrier
        switches: list[str] = []
        for _ in range(8):
            switches.append(node)
            assert da >> 80 in self.table(node, p4names.MY_USID), f"{node}: no my_usid hit"
            next_usid = da >> 64 & USID_MASK
            assert next_usid != 0, f"{node}: carrier ends here"
            da = (da >> 96 << 96) | (da & ((1 << 80) - 1)) << 16  # uN shift
            route = self.table(node, p4names.USID_ROUTE).get(next_usid)
            assert route is not None, f"{node}: no usid_route for {next_usid:#06x}"
            assert route.action == p4names.FORWARD
            port = route.params[0]
            config = self.table(node, p4names.EGRESS_PORT_CONFIG)[port]
            assert config.params[1] == 1, f"{node}: port {port} is down"
            peer = topo.peer(node, port)
            if peer.node.startswith("nic"):
                return Trace(switches, (peer.node, peer.port), da)
            node = peer.node
        raise AssertionError(f"loop: {switches}")


@pytest.fixture(params=sorted(TOPOLOGIES))
def topology(request: pytest.FixtureRequest) -> Topology:
    return TOPOLOGIES[request.param]()


def test_every_nic_reaches_every_other_nic_on_each_plane_through_every_t1(
    topology: Topology,
) -> None:
    plan = plan_fabric(topology)
    addresses = plan.addresses
    forwarder = Forwarder(plan)
    traced = 0
    for src in topology.nics:
        for dst in topology.nics:
            if src.index == dst.index:
                continue
            for plane in topology.planes:
                for t1 in range(plane.t1_count):
                    path = addresses.path(src.name, dst.name, plane.index, t1)
                    trace = forwarder.trace(src.name, plane.index, path.carrier)
                    assert trace.delivered_to == (dst.name, plane.index)
                    assert trace.arrival == addresses.arrival_carrier(dst.name, plane.index)
                    assert tuple(trace.switches) == path.switches
                    assert {plan[s].plane for s in trace.switches} == {plane.index}
                    if src.t0_index == dst.t0_index:
                        assert len(trace.switches) == 1
                    else:
                        assert len(trace.switches) == 3
                        assert trace.switches[1] == topology.t1(plane.index, t1).name
                    traced += 1
    assert traced > 0


def test_no_entry_names_a_missing_port_and_planes_never_mix(topology: Topology) -> None:
    plan = plan_fabric(topology)
    addresses = AddressPlan(topology)
    for sw_plan in plan:
        sw = topology.switch(sw_plan.name)
        ports = set(sw.ports)
        for entry in sw_plan.entries:
            if entry.action == p4names.FORWARD:
                assert entry.params[0] in ports, entry
            if entry.table in (
                p4names.EGRESS_PORT_CONFIG,
                p4names.INGRESS_PORT_STATUS,
                p4names.EGRESS_PORT_MAC,
            ):
                assert entry.match[0] in ports, entry
            if entry.table == p4names.USID_ROUTE:
                info = addresses.describe_usid(entry.match[0])
                assert info.plane == sw.plane, (sw.name, info)
                # The port leads to what the uSID names.
                peer = topology.peer(sw.name, entry.params[0])
                if info.kind == "downlink":
                    assert peer.node.startswith("nic")
                else:
                    assert peer.node == info.name
        assert sw_plan.plane == sw.plane


def test_tables_per_role(topology: Topology) -> None:
    plan = plan_fabric(topology)
    for sw_plan in plan:
        sw = topology.switch(sw_plan.name)
        counts = sw_plan.count_by_table()
        assert counts[p4names.SWITCH_CONFIG] == 1
        assert counts[p4names.MY_USID] == 1
        plane = topology.planes[sw.plane]
        if sw.role is Role.T0:
            assert counts[p4names.USID_ROUTE] == plane.t1_count + topology.nics_per_t0
        else:
            assert counts[p4names.USID_ROUTE] == topology.t0_per_plane
        assert counts[p4names.EGRESS_PORT_CONFIG] == len(sw.ports)
        assert counts[p4names.EGRESS_PORT_MAC] == len(sw.ports)
        assert counts[p4names.PORT_CLASS_PARAMS] == 3
        assert p4names.INGRESS_PORT_STATUS not in counts  # every port is up
        config = sw_plan.entries_of(p4names.SWITCH_CONFIG)[0]
        assert config.is_default and config.params[0] == sw.plane


def test_route_count_matches_the_address_plan(topology: Topology) -> None:
    plan = plan_fabric(topology)
    assert plan.count_by_table()[p4names.USID_ROUTE] == AddressPlan(topology).route_count()


def test_port_classes_host_on_t0_downlinks_only() -> None:
    topo = topologies.load("tiny")
    plan = plan_fabric(topo)
    for sw_plan in plan:
        sw = topo.switch(sw_plan.name)
        for entry in sw_plan.entries_of(p4names.EGRESS_PORT_CONFIG):
            port = entry.match[0]
            host = sw.role is Role.T0 and port in sw.downlinks
            want = p4names.PORT_CLASS_HOST if host else p4names.PORT_CLASS_FABRIC
            assert entry.params == (want, 1)


def test_class_params_no_ecn_on_the_last_hop_and_defaults_match_the_program() -> None:
    plan = plan_fabric(topologies.load("tiny"))
    params = {e.match[0]: e.params for e in plan["p0-t0-0"].entries_of(p4names.PORT_CLASS_PARAMS)}
    # docs/switch-queues.md section 6 for a 64-packet queue.
    assert params[p4names.PORT_CLASS_FABRIC] == (1, 10, 38, 0xFFFF, 1, 48, 60)
    assert params[p4names.PORT_CLASS_HOST] == (0, 10, 38, 0xFFFF, 1, 48, 60)
    assert params[p4names.PORT_CLASS_CPU] == (0, 10, 38, 0xFFFF, 0, 48, 60)


def test_queue_thresholds_follow_the_smallest_queue_of_the_switch() -> None:
    topo = _mapping_topology()  # p1-t0-2 -- p1-t1-2 has 32-packet queues
    plan = plan_fabric(topo)
    for name in ("p1-t0-2", "p1-t1-2"):
        fabric = plan[name].entries_of(p4names.PORT_CLASS_PARAMS)[0]
        assert fabric.params[5:] == (24, 30)  # trim 3/4 of 32, limit 32 - 2
    other = plan["p1-t0-1"].entries_of(p4names.PORT_CLASS_PARAMS)[0]
    assert other.params[5:] == (48, 60)


def test_mac_rewrite_names_both_ends() -> None:
    topo = topologies.load("tiny")
    addresses = AddressPlan(topo)
    plan = plan_fabric(topo)
    for sw_plan in plan:
        for entry in sw_plan.entries_of(p4names.EGRESS_PORT_MAC):
            src, dst = entry.params
            assert src == int(addresses.switch_mac(sw_plan.name).replace(":", ""), 16)
            peer = topo.peer(sw_plan.name, entry.match[0])
            if peer.node.startswith("nic"):
                want = addresses.nic_mac(peer.node, sw_plan.plane)
            else:
                want = addresses.switch_mac(peer.node)
            assert dst == int(want.replace(":", ""), 16)
    assert (
        p4names.EGRESS_PORT_MAC
        not in plan_fabric(topo, policy=SwitchPolicy(rewrite_macs=False)).count_by_table()
    )


def test_cpu_rules_and_punts() -> None:
    plan = plan_fabric(topologies.load("tiny"))
    routes = plan["p0-t1-0"].entries_of(p4names.IPV6_ROUTE)
    assert {(e.match[0], e.action) for e in routes} == {
        (LpmPrefix(0xFF02 << 112, 16), p4names.TO_CPU),
        (LpmPrefix(0xFE80 << 112, 10), p4names.TO_CPU),
    }
    config = plan["p0-t1-0"].entries_of(p4names.SWITCH_CONFIG)[0]
    assert config.params == (0, 7, 1, 0, 0, 0)  # punt end-of-carrier only
    quiet = plan_fabric(
        topologies.load("tiny"), policy=SwitchPolicy(punts=frozenset(), control_priority=0)
    )
    assert quiet["p0-t1-0"].entries_of(p4names.SWITCH_CONFIG)[0].params == (0, 0, 0, 0, 0, 0)


def test_link_down_marks_both_ends_and_nothing_else() -> None:
    topo = topologies.load("tiny")
    plan = plan_fabric(topo, down_links=["p0-t0-0,p0-t1-1", ("nic3", "p1-t0-1")])
    link = topo.link("p0-t0-0", "p0-t1-1")
    for end in (link.a, link.b):
        status = plan[end.node].entries_of(p4names.INGRESS_PORT_STATUS)
        assert [(e.match, e.params) for e in status] == [((end.port,), (0,))]
        config = {
            e.match[0]: e.params[1] for e in plan[end.node].entries_of(p4names.EGRESS_PORT_CONFIG)
        }
        assert config[end.port] == 0
        assert sum(1 for up in config.values() if up == 0) == 1
    access = topo.link("nic3", "p1-t0-1")
    status = plan["p1-t0-1"].entries_of(p4names.INGRESS_PORT_STATUS)
    assert [e.match[0] for e in status] == [access.b.port]
    untouched = plan["p0-t1-0"].entries_of(p4names.INGRESS_PORT_STATUS)
    assert untouched == []


def test_link_down_errors_are_specific() -> None:
    topo = topologies.load("tiny")
    with pytest.raises(PlanError, match="p0-t0-0,p1-t1-0 cannot be marked down"):
        plan_fabric(topo, down_links=["p0-t0-0,p1-t1-0"])
    with pytest.raises(PlanError, match="expected two node names"):
        parse_link("p0-t0-0")
    assert parse_link("a -- b") == ("a", "b")
    assert parse_link("a:b") == ("a", "b")


def test_selected_switches_and_unknown_switch() -> None:
    topo = topologies.load("tiny")
    plan = plan_fabric(topo, switches=["p1-t1-0", "p0-t0-1"])
    assert [sw.name for sw in plan] == ["p1-t1-0", "p0-t0-1"]
    with pytest.raises(PlanError, match="p9-t0-0"):
        plan_fabric(topo, switches=["p9-t0-0"])
    with pytest.raises(PlanError, match="no switch 'p0-t0-0' in this plan"):
        plan["p0-t0-0"]


def test_equal_entries_are_shared_between_switches() -> None:
    plan = plan_fabric(topologies.load("paper-8plane"))
    first = plan["p0-t1-0"].entries_of(p4names.USID_ROUTE)
    second = plan["p0-t1-3"].entries_of(p4names.USID_ROUTE)
    assert first == second
    assert all(a is b for a, b in zip(first, second))


def test_plan_is_linear_in_fabric_size() -> None:
    small = plan_fabric(topologies.two_tier(2, 4, 2, 4)).entry_count()
    double = plan_fabric(topologies.two_tier(4, 4, 2, 4)).entry_count()
    assert double == 2 * small
