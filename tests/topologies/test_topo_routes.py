"""Walk every path hop by hop through the route plan, the way the switches will.

Each switch does uN forwarding (sources §3.1): if DA[127:80] is
block + its uSID, shift the uSID part left by 16 (filling with 0), look the new active
uSID up in its ``usid_route`` entries and send the packet out of that port. The walk
uses only ``routes_for``, ``locator`` and ``Topology.peer``, so it checks the plan
independently of how ``path_for_ev`` built the carrier.
"""

from __future__ import annotations

import pytest

from topologies import AddressPlan, Endpoint, Topology, load, loads

USID_PART = (1 << 96) - 1

UPLINK_PERMUTED = """
name: permuted
planes:
  - {}
  - t1_per_plane: 3
  - t1_per_plane: 1
t0_per_plane: 3
t1_per_plane: 2
nics_per_t0: 3
switches: {first_port: 0, cpu_port: 300}
links:
  - {between: [p0-t0-0, p0-t1-0], uplink_index: 1}
  - {between: [p0-t0-0, p0-t1-1], uplink_index: 0}
  - {between: [p1-t0-2, p1-t1-0], uplink_index: 9}
  - {between: [p1-t0-2, p1-t1-2], uplink_index: 4}
"""


class Fabric:
    """The data plane as the controller will program it."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.plan = AddressPlan(topo)
        self.tables = {
            sw.name: {route.usid: route.port for route in self.plan.routes_for(sw)}
            for sw in topo.switches
        }
        self.my_usid = {self.plan.locator(sw): sw.name for sw in topo.switches}

    def deliver(self, src: str, plane: int, carrier: int) -> tuple[list[str], Endpoint, int]:
        """Send ``carrier`` out of ``src``'s port on ``plane``; return the switches
        visited, where the packet left the fabric, and its final destination address."""
        hop = self.topo.peer(src, plane)
        visited: list[str] = []
        da = carrier
        while not hop.node.startswith("nic"):
            switch = hop.node
            assert len(visited) < 5, f"forwarding loop: {visited}"
            assert self.my_usid.get(da >> 80) == switch, f"{switch} does not own {da:032x}"
            assert self.topo.switch(switch).plane == plane, f"{switch} is not on plane {plane}"
            visited.append(switch)
            da = (da & ~USID_PART) | ((da << 16) & USID_PART)  # shift, fill with 0
            active = da >> 80 & 0xFFFF
            assert active in self.tables[switch], f"{switch} has no route for uSID {active:04x}"
            port = self.tables[switch][active]
            assert port in self.topo.switch(switch).ports, f"{switch} routes to missing port {port}"
            hop = self.topo.peer(switch, port)
        return visited, hop, da


@pytest.mark.parametrize(
    "topo",
    [
        load("tiny"),
        load("small"),
        # every walk of the full-size fabric: seconds of CPU (CI, not -m unit)
        pytest.param(load("paper-8plane"), marks=pytest.mark.scenario),
        loads(UPLINK_PERMUTED),
    ],
    ids=lambda t: t.name,
)
def test_every_pair_plane_and_t1_reaches_the_destination_port(topo: Topology) -> None:
    fabric = Fabric(topo)
    plan = fabric.plan
    walks = 0
    for src in topo.nics:
        for dst in topo.nics:
            if src.index == dst.index:
                continue
            same_t0 = src.t0_index == dst.t0_index
            for plane in topo.planes:
                for t1 in range(plane.t1_count):
                    ev = plan.make_ev(plane.index, t1, salt=(src.index * 31 + dst.index) & 0xFFFF)
                    path = plan.path_for_ev(src.name, dst.name, ev)
                    visited, exit_port, final_da = fabric.deliver(
                        src.name, plane.index, path.carrier
                    )
                    assert exit_port == Endpoint(dst.name, plane.index)
                    assert tuple(visited) == path.switches
                    assert len(visited) == (1 if same_t0 else 3)
                    if not same_t0:
                        assert visited[1] == f"p{plane.index}-t1-{t1}"
                    assert final_da == plan.arrival_carrier(dst.name, plane.index)
                    walks += 1
    expected_walks = sum(topo.nic_count * (topo.nic_count - 1) * p.t1_count for p in topo.planes)
    assert walks == expected_walks


def test_a_carrier_for_another_t0_is_not_forwarded() -> None:
    fabric = Fabric(load("tiny"))
    wrong = fabric.plan.path("nic2", "nic0", 0, 0).carrier  # starts at p0-t0-1
    with pytest.raises(AssertionError, match="p0-t0-0 does not own"):
        fabric.deliver("nic0", 0, wrong)


def test_a_carrier_for_another_plane_is_not_forwarded() -> None:
    fabric = Fabric(load("tiny"))
    plane1 = fabric.plan.path("nic0", "nic3", 1, 0).carrier
    with pytest.raises(AssertionError, match="does not own"):
        fabric.deliver("nic0", 0, plane1)
