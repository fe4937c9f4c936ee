"""Link cut, switch down and NIC port down on the process fabric (real p4emu-switch and
nic-emu processes, wall clock): byte-exact delivery through each, and a repath seen."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

import capabilities
import pytest

from testbed import layout
from testbed.exceptions import PortInUseError, PortPlanError
from testbed.local import check_ports_free
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.load import loads
from testbed.scenario.runner import RunOptions, run_checked
from testbed.scenario.virtual import Variant
from topologies import Topology

# Scenario times are stretched 1000x on the process fabric: 40 us -> 40 ms of wall time.
SCENARIO = """
name: process-{name}
topology: tiny
duration: 100ms
traffic: [{{name: main, src: nic0, dst: nic3, bytes: {size}, messages: 1}}]
timeline:
  - {{at: {at}, {event}}}
assertions:
  byte_exact: true
  repath_max: 1ms        # not checked on the process fabric (wall clock)
"""
# On BMv2 (Mininet) transfers of 1 MiB and more never got an acknowledgement on this
# machine (8 MiB: no_usable_ev; 1 MiB: max_retries) while 64 KiB completes in about 40 ms:
# the cut comes 10 ms in. Reported in the failover suite's hand-over.
BMV2_SIZE = "64KiB"
BMV2_CUT = "10us"
EVENTS = {
    "link-cut": "link_down: [p0-t0-0, p0-t1-0]",
    "switch-down": "switch_down: p0-t1-1",
    "port-down": "port_down: {nic: nic0, plane: 1}",
}


def free_ports(topology: Topology) -> tuple[int, int]:
    rng = random.Random()
    for _ in range(200):
        udp, grpc = rng.randrange(30000, 39000), rng.randrange(40000, 45000)
        try:
            check_ports_free(
                sorted(end.local for end in layout.udp_link_ports(topology, udp).values()),
                [layout.grpc_port(e) for e in layout.grpc_endpoints(topology, grpc).values()],
            )
        except (PortInUseError, PortPlanError):
            continue
        return udp, grpc
    raise RuntimeError("no free port block")


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(EVENTS))
def test_fault_on_the_process_fabric(name: str) -> None:
    scenario = loads(
        SCENARIO.format(name=name, event=EVENTS[name], size="8MiB", at="40us"),
        source=f"{name}.yaml",
    )
    udp, grpc = free_ports(scenario.topology)
    with tempfile.TemporaryDirectory(prefix="mrs-", dir="/tmp") as root:  # short socket paths
        options = RunOptions(
            mode="local", run_dir=Path(root), udp_base_port=udp, grpc_base_port=grpc
        )
        run, _ = run_checked(scenario, Variant(), options)
    assert [c.name for c in run.checks] == ["byte-exact delivery"]
    assert run.ok, run.checks
    assert run.transfers[0].intact
    assert run.events[0].at_ns > 0  # the fault happened while the transfer ran
    assert run.transfers[0].completion_ns is not None
    assert run.transfers[0].completion_ns > run.events[0].at_ns


@pytest.mark.integration
@pytest.mark.bmv2
@pytest.mark.skipif(
    capabilities.mininet_missing() is not None, reason=str(capabilities.mininet_missing())
)
def test_link_cut_on_bmv2() -> None:
    scenario = loads(
        SCENARIO.format(name="bmv2", event=EVENTS["link-cut"], size=BMV2_SIZE, at=BMV2_CUT),
        source="bmv2.yaml",
    )
    _udp, grpc = free_ports(scenario.topology)
    with tempfile.TemporaryDirectory(prefix="mrs-", dir="/tmp") as root:
        options = RunOptions(mode="mininet", target="bmv2", run_dir=Path(root), grpc_base_port=grpc)
        run, _ = run_checked(scenario, Variant(), options)
    assert run.ok, run.checks
    assert run.transfers[0].intact


def test_process_fabric_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    scenario = loads(
        SCENARIO.format(name="loss", event="loss: {rate: 1%}", size="8MiB", at="40us"),
        source="loss.yaml",
    )
    with pytest.raises(ScenarioRunError, match=r"timeline\[0\]: loss needs the virtual fabric"):
        run_checked(scenario, Variant(), RunOptions(mode="local", run_dir=tmp_path))
