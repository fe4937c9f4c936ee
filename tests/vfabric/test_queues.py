"""Queue build-up in the P4 program: trims and ECN marks appear where its thresholds and
port classes say (docs/switch-queues.md), and nowhere else."""

from __future__ import annotations

from pathlib import Path

import pytest

from topologies import loads
from vfabric import VirtualFabric

SLOW = ("p0-t0-1", "p0-t1-0")


def _slow_tiny():
    import topologies

    text = (Path(topologies.__file__).parent / "tiny.yaml").read_text() + (
        f"links:\n  - between: [{SLOW[0]}, {SLOW[1]}]\n    rate_gbps: 10\n"
    )
    return loads(text, "tiny-slow.yaml")


def _incast(**kwargs: object) -> VirtualFabric:
    fabric = VirtualFabric("tiny", seed=2, **kwargs)  # type: ignore[arg-type]
    for src in ("nic0", "nic1", "nic2"):
        fabric.transfer(src, "nic3", 512 << 10)
    assert fabric.run(until_ns=50_000_000)
    assert all(t.intact for t in fabric.transfers)
    return fabric


def test_incast_trims_on_the_last_hop_and_never_marks_there() -> None:
    fabric = _incast()
    links = fabric.link_counters()
    last_hops = {"p0-t0-1->nic3", "p1-t0-1->nic3"}
    assert all(links[name]["trims"] > 0 for name in last_hops)
    assert all(links[name]["ecn_marks"] == 0 for name in last_hops)  # HOST class: ECN off
    assert all(row["trims"] == 0 for name, row in links.items() if name not in last_hops)
    # Trimmed headers reach nic3 unless its control queue overflowed (tail drops, which
    # the P4 program cannot count: docs/switch-queues.md section 8).
    trimmed_at_nic3 = sum(s.trimmed for s in fabric.nics["nic3"].ev_rx.values())
    trims = sum(links[name]["trims"] for name in last_hops)
    tail = sum(links[name]["tail_drops"] for name in last_hops)
    assert trims - tail <= trimmed_at_nic3 <= trims


def test_the_counters_of_some_senders_are_those_rows_of_all() -> None:
    fabric = _incast()
    links, switches = fabric.link_counters(), fabric.switch_counters()
    senders = {"p0-t0-1", "nic0"}
    some = fabric.link_counters(senders)
    assert some == {name: row for name, row in links.items() if name.split("->")[0] in senders}
    assert list(some) == [name for name in links if name in some] and some
    assert fabric.switch_counters({"p0-t0-1"}) == {"p0-t0-1": switches["p0-t0-1"]}
    assert fabric.switch_counters(set()) == {} and fabric.link_counters(set()) == {}


def test_incast_without_trimming_drops_at_the_queue_limit_instead() -> None:
    fabric = _incast(trimming=False)
    links = fabric.link_counters()
    assert sum(row["trims"] for row in links.values()) == 0
    assert links["p0-t0-1->nic3"]["queue_limit_drops"] > 0


@pytest.mark.parametrize("ecn", [True, False])
def test_a_slow_fabric_link_marks_ecn_only_there(ecn: bool) -> None:
    fabric = VirtualFabric(_slow_tiny(), seed=5, ecn=ecn)
    t = fabric.transfer("nic0", "nic3", 1 << 20)
    assert fabric.run(until_ns=50_000_000)
    assert t.intact
    fabric.run(until_ns=fabric.now + 500_000)  # drain the slow queue: ECN is marked at dequeue
    links = fabric.link_counters()
    congested = f"{SLOW[1]}->{SLOW[0]}"
    if ecn:
        assert links[congested]["ecn_marks"] > 0
    assert all(row["ecn_marks"] == 0 for name, row in links.items() if name != congested)
    marked_rx = sum(s.ce_marked for s in fabric.nics["nic3"].ev_rx.values())
    assert marked_rx == links[congested]["ecn_marks"]
