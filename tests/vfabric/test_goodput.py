"""Goodput is the bytes the application got, each once; the wire is reported beside it."""

from __future__ import annotations

from nic_emu.config import NicConfig, RoceConfig
from topologies.events import LinkRef, LossEvent
from vfabric import VirtualFabric


def test_goodput_counts_each_byte_once_and_the_wire_counts_resends() -> None:
    nbytes = 512 << 10
    config = NicConfig(roce=RoceConfig(ack_timeout_exp=8))  # 1 ms: a lost tail is quick
    fabric = VirtualFabric("tiny", seed=2, nic_config=config)
    t = fabric.transfer("nic0", "nic3", nbytes, transport="roce")
    for link in fabric.topology.links():
        fabric.schedule(LossEvent(at_ns=0, links=(LinkRef(link.a.node, link.b.node),), rate=0.01))
    assert fabric.run(until_ns=1_000_000_000) and t.intact
    assert fabric.delivered_bytes() == nbytes  # go-back-N resends are not goodput
    assert fabric.received_data_bytes() > nbytes  # ... but they crossed the wire
    goodput = fabric.goodput()
    width = goodput["bin_ns"]
    placed = sum(sum(s) for s in goodput["delivered_per_plane"].values()) * width / 8
    wire = sum(sum(s) for s in goodput["per_plane"].values()) * width / 8
    assert round(placed) == nbytes
    assert wire > placed
