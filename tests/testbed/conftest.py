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
