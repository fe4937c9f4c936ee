"""Mininet mode on BMv2 (root, simple_switch_grpc and p4c on PATH; tests/conftest.py skips
``bmv2`` tests where simple_switch_grpc is missing)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import capabilities
import pytest

from testbed import rundir as rd
from testbed.mininet_mode import up_mininet
from testbed.options import FabricOptions
from testbed.traffic import run_transfer
from topologies import load

from .conftest import free_bases, nic_program

pytestmark = [
    pytest.mark.integration,
    pytest.mark.bmv2,
    pytest.mark.skipif(
        capabilities.mininet_missing() is not None, reason=str(capabilities.mininet_missing())
    ),
]


def test_tiny_on_bmv2_forwards_and_survives_a_link_cut() -> None:
    tiny = load("tiny")
    _udp, grpc = free_bases(tiny)
    with tempfile.TemporaryDirectory(prefix="mrt-", dir="/tmp") as root:
        options = FabricOptions(
            mode="mininet",
            root=Path(root),
            target="bmv2",
            grpc_base_port=grpc,
            nic_command=nic_program(),
        )
        fabric = up_mininet("tiny", options).fabric
        try:
            assert fabric.state.target == "bmv2"
            assert run_transfer(fabric, "nic0", "nic3", 64 * 1024, timeout=60).intact
            uplink = fabric.topology.link("p0-t0-0", "p0-t1-0")
            fabric.link_down("p0-t0-0", "p0-t1-0")
            # Through BMv2's runtime CLI (port_remove), not the tables: both ends are down.
            assert not fabric.port_states("p0-t0-0")[uplink.a.port]
            assert not fabric.port_states("p0-t1-0")[uplink.b.port]
            assert fabric.status(check=True).in_sync
            assert run_transfer(fabric, "nic0", "nic3", 64 * 1024, timeout=60).intact
            fabric.link_up("p0-t0-0", "p0-t1-0")
            assert fabric.port_states("p0-t0-0")[uplink.a.port]
            assert fabric.status(check=True).in_sync
        finally:
            rd.teardown(fabric.rundir)
