"""The Python switch model (``nic_emu.testing.model_fabric``, a test double for fast transport tests)
against the P4 program in vfabric, on the same scenarios.

Stated tolerances (docs/virtual-fabric.md, "The test double"):

- without congestion the two are identical: same packets, bytes and completion time;
- under a 3:1 incast, bytes delivered are identical (both byte-exact); trims agree within
  35 % and packets within 10 %: the model decides on the exact backlog and sends
  high-priority packets after their own serialisation, while the P4 program decides on its
  estimate of the data queue (docs/switch-queues.md section 3) behind a strict-priority
  link; neither marks ECN (last hop: HOST class) and neither drops.
"""

from __future__ import annotations

import random

import pytest

from nic_emu.testing import SimNetwork
from topologies import load
from vfabric import VirtualFabric
from vfabric.eventlist import EventList

TOPOLOGY = load("tiny")


def _model(senders: list[str], dst: str, size: int) -> dict[str, int]:
    net = SimNetwork(TOPOLOGY, EventList(), seed=2)
    conns, regions = [], []
    for i, src in enumerate(senders):
        conn, _ = net.connect(src, dst)
        region = net.register_memory(dst, size)
        data = random.Random(i).randbytes(size)
        net.write(conn, data, region)
        conns.append(conn)
        regions.append((region, data))
    assert net.run_until_idle(conns, limit_ns=50_000_000)
    channels = net.fabric.counters()["channels"]
    return {
        "bytes_intact": sum(len(d) for r, d in regions if bytes(r.buffer) == d),
        "tx_packets": channels["tx_packets"],
        "tx_bytes": channels["tx_bytes"],
        "trims": channels["trims"],
        "ecn_marks": channels["ecn_marks"],
        "drops": channels["drops_full"] + channels["drops_down"] + channels["drops_fault"],
        "done_ns": net.now,
    }


def _p4(senders: list[str], dst: str, size: int) -> dict[str, int]:
    fabric = VirtualFabric(TOPOLOGY, seed=2)
    for src in senders:
        fabric.transfer(src, dst, size)
    assert fabric.run(until_ns=50_000_000)
    planes = fabric.plane_counters().values()
    return {
        "bytes_intact": sum(t.bytes_verified for t in fabric.transfers if t.intact),
        "tx_packets": sum(p["tx_packets"] for p in planes),
        "tx_bytes": sum(p["tx_bytes"] for p in planes),
        "trims": sum(p["trims"] for p in planes),
        "ecn_marks": sum(p["ecn_marks"] for p in planes),
        "drops": sum(p["wire_drops"] + p["queue_limit_drops"] + p["tail_drops"] for p in planes),
        "done_ns": max(t.completion_ns or 0 for t in fabric.transfers),
    }


def test_without_congestion_model_and_p4_agree_exactly() -> None:
    assert _model(["nic0"], "nic3", 1 << 20) == _p4(["nic0"], "nic3", 1 << 20)


def test_under_incast_model_and_p4_agree_within_tolerances() -> None:
    senders, size = ["nic0", "nic1", "nic2"], 512 << 10
    model, p4 = _model(senders, "nic3", size), _p4(senders, "nic3", size)
    assert model["bytes_intact"] == p4["bytes_intact"] == 3 * size
    assert model["trims"] > 0 and p4["trims"] > 0
    assert p4["trims"] == pytest.approx(model["trims"], rel=0.35)
    assert p4["tx_packets"] == pytest.approx(model["tx_packets"], rel=0.10)
    assert model["ecn_marks"] == p4["ecn_marks"] == 0
    assert model["drops"] == p4["drops"] == 0
