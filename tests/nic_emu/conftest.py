"""Shared builders for the nic_emu tests: small fabrics, transfers checked by hash."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, replace

import pytest

from nic_emu.config import NicConfig, TransportMode
from nic_emu.connection import Connection
from nic_emu.core import NicCore
from nic_emu.memory import MemoryRegion
from nic_emu.testing import SimNetwork
from nic_emu.testing.model_fabric import FabricConfig
from topologies import AddressPlan, load
from vfabric.eventlist import EventList

# Small EV sets keep the tests fast; the mechanisms do not depend on the set size.
TEST_CONFIG = NicConfig(evs_per_connection=32, backup_evs_per_connection=16, trace_packets=True)


# Plane 0 through its second T1 of ``small``: the path the shared-verdict tests cut.
PATH = (0, "p0-t1-1")


def core_with_peers(**overrides: object) -> tuple[NicCore, dict[str, object]]:
    """nic0's core on ``small`` with a connection to each of nic1 (beside it), nic2 and nic3
    (under T0 1), nic4 (T0 2) and nic6 (T0 3): the NIC-wide path verdicts' test bench."""
    config = replace(NicConfig(evs_per_connection=32, backup_evs_per_connection=16), **overrides)  # type: ignore[arg-type]
    core = NicCore("nic0", AddressPlan(load("small")), config)
    conns = {
        peer: core.create_connection(peer, qpn=0x100 + i, peer_qpn=0x100 + i)
        for i, peer in enumerate(("nic1", "nic2", "nic3", "nic4", "nic6"))
    }
    return core, conns


def make_net(
    topology: str = "small",
    *,
    seed: int = 1,
    fabric_config: FabricConfig | None = None,
    **overrides: object,
) -> SimNetwork:
    config = replace(TEST_CONFIG, **overrides)  # type: ignore[arg-type]
    return SimNetwork(
        load(topology), EventList(), config=config, seed=seed, fabric_config=fabric_config
    )


def payload(size: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(size)


@dataclass
class Transfer:
    net: SimNetwork
    sender: Connection
    receiver: Connection
    region: MemoryRegion
    data: bytes

    messages: int = 1

    def post(self) -> None:
        step = -(-len(self.data) // self.messages) if self.data else 1
        for offset in range(0, max(len(self.data), 1), step):
            self.net.write(self.sender, self.data[offset : offset + step], self.region, offset)

    @property
    def delivered(self) -> bool:
        """Every byte arrived exactly as sent (checked by hash)."""
        got = hashlib.sha256(bytes(self.region.buffer[: len(self.data)])).digest()
        return got == hashlib.sha256(self.data).digest()


def start_transfer(
    net: SimNetwork,
    src: str = "nic0",
    dst: str = "nic2",
    size: int = 1 << 20,
    *,
    mode: TransportMode | None = None,
    seed: int = 0,
    messages: int = 1,
    post: bool = True,
) -> Transfer:
    """Connect ``src`` to ``dst`` and (unless ``post`` is False) post the WRITEs."""
    sender, receiver = net.connect(src, dst, mode=mode)
    region = net.register_memory(dst, size)
    t = Transfer(net, sender, receiver, region, payload(size, seed), messages)
    if post:
        t.post()
    return t


def finish(t: Transfer, limit_ns: int = 50_000_000) -> bool:
    return t.net.run_until_idle([t.sender], limit_ns=limit_ns)


@pytest.fixture
def net() -> SimNetwork:
    return make_net()
