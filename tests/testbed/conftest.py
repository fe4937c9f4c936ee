"""Shared fixtures of the launcher tests: a private run root, free port blocks, the NIC
program to run."""

from __future__ import annotations

import itertools
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed import layout
from testbed.exceptions import PortInUseError, PortPlanError
from testbed.fabric import nic_command
from testbed.local import check_ports_free
from topologies import Topology

_bases = itertools.count(0)

# tiny with 3 us / 100 Gb/s links, 0 us / 50 Gb/s on plane 1, and per-link overrides of
# delay and rate on one NIC link and one T0-T1 link per plane.
OVERRIDDEN = """
name: overridden
planes:
  - {}
  - link_defaults: {delay_us: 0, rate_gbps: 50}
t0_per_plane: 2
t1_per_plane: 2
nics_per_t0: 2
link_defaults: {delay_us: 3}
links:
  - between: [p0-t0-1, p0-t1-0]
    delay_us: 5.5
    rate_gbps: 40
  - between: [nic3, p1-t0-1]
    delay_us: 200
    rate_gbps: 25
  - between: [nic0, p0-t0-0]
    rate_gbps: 10
  - between: [p1-t0-0, p1-t1-1]
    rate_gbps: 400
"""


def nic_program() -> list[str]:
    """The nic-emu process (``nic-emu``, else ``python -m nic_emu``)."""
    return nic_command()


def free_bases(topology: Topology) -> tuple[int, int]:
    """(UDP base, gRPC base) blocks that are free now, distinct for every call."""
    for _ in range(200):
        step = next(_bases)
        udp = 21000 + (step * 997) % 9000
        grpc = 12000 + (step * 211) % 6000
        try:
            ends = layout.udp_link_ports(topology, udp)
            endpoints = layout.grpc_endpoints(topology, grpc)
            check_ports_free(
                sorted(end.local for end in ends.values()),
                [layout.grpc_port(e) for e in endpoints.values()],
            )
        except (PortInUseError, PortPlanError):
            continue
        return udp, grpc
    raise RuntimeError("no free port block found")


@pytest.fixture
def run_root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    root.mkdir()
    return root


@pytest.fixture
def short_root() -> Iterator[Path]:
    """A run root with a short path (Unix socket paths are limited to 107 bytes)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mrt-", dir="/tmp") as directory:
        yield Path(directory)


def udp_port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind((layout.LOOPBACK, port))
        except OSError:
            return True
    return False
