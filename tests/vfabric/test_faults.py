"""Every fault kind: bytes intact; a cut link is left; bad faults get specific errors."""

from __future__ import annotations

import pytest

from nic_emu.config import NicConfig
from topologies import encode_ev
from topologies.events import (
    EvDropEvent,
    Event,
    FlapEvent,
    LinkRef,
    LossEvent,
    PortRef,
    SwitchDownEvent,
    SwitchUpEvent,
)
from vfabric import VirtualFabric
from vfabric.exceptions import (
    FaultTimeError,
    FaultValueError,
    UnknownLinkError,
    UnknownNodeError,
    VirtualFabricError,
)

from .conftest import CUT, SIZE, cut_run

LINK = LinkRef(*CUT)
PORT = PortRef("nic3", 0)
FAULTS: dict[str, list[Event]] = {
    "link": [LINK.change(20_000, up=False), LINK.change(60_000, up=True)],
    "switch": [
        SwitchDownEvent(at_ns=20_000, switch="p1-t1-1"),
        SwitchUpEvent(at_ns=60_000, switch="p1-t1-1"),
    ],
    "nic_port": [PORT.change(20_000, up=False), PORT.change(60_000, up=True)],
    "flap": [
        FlapEvent(
            at_ns=10_000,
            of=LinkRef("p1-t0-1", "p1-t1-0"),
            period_ns=30_000,
            down_ns=10_000,
            until_ns=90_000,
        )
    ],
    "loss": [
        LossEvent(at_ns=10_000, links=(LinkRef("p0-t0-1", "p0-t1-1"),), rate=0.05, until_ns=80_000)
    ],
    "ev_drop": [EvDropEvent(at_ns=5_000, nic="nic0", ev=encode_ev(1, 1, 3), fraction=0.5)],
}


@pytest.mark.parametrize("kind", sorted(FAULTS))
def test_bytes_intact_through_every_fault_kind(kind: str) -> None:
    fabric = VirtualFabric("tiny", seed=7)
    t = fabric.transfer("nic0", "nic3", SIZE)
    for event in FAULTS[kind]:
        fabric.schedule(event)
    assert fabric.run(until_ns=50_000_000)
    assert t.intact and t.bytes_verified == SIZE, t.failure
    lost = sum(sum(w.drops.values()) for w in fabric.wires.values())
    assert lost > 0, "the fault never hit the traffic"


def test_after_repath_the_cut_link_carries_no_data() -> None:
    fabric = cut_run(seed=1)
    repath = fabric.repaths()[0]
    assert repath["repath_us"], "no repath measured"
    wire = fabric.wires[CUT]  # T0 -> T1: the direction data takes from nic0
    settled = 20_000 + int(max(repath["repath_us"]) * 1000) + 2 * 12_000
    late = {t: b for t, b in wire.lost_bins.items() if settled <= t * wire.bin_ns < 60_000}
    assert sum(wire.lost_bins.values()) > 0 and not late


@pytest.mark.parametrize("seed", [1, 2])
def test_repath_within_two_base_rtts_of_the_first_loss(seed: int) -> None:
    """Issue 11's target: the sender leaves a silently cut path within 2 RTTs of the first
    loss (nic_emu retires the path's other EVs, which cross the same link)."""
    fabric = cut_run(seed=seed)
    repath = fabric.repaths()[0]
    assert repath["repath_us"], "no repath measured"
    assert max(repath["repath_us"]) * 1000 <= 2 * NicConfig().base_rtt_ns, repath["repath_us"]


def test_the_cut_link_carries_data_again_after_restore() -> None:
    fabric = cut_run(seed=1, size=6 << 20)
    wire = fabric.wires[CUT]
    assert any(t * wire.bin_ns >= 60_000 for t in wire.bins)


@pytest.mark.parametrize(
    ("event", "error", "words"),
    [
        (LinkRef("p0-t0-0", "p0-t1-9").change(10, up=False), UnknownLinkError, "p0-t1-9"),
        (LinkRef("p0-t0-0", "p1-t1-0").change(10, up=False), UnknownLinkError, "p1-t1-0"),
        (SwitchDownEvent(at_ns=10, switch="p9-t0-0"), UnknownNodeError, "p9-t0-0"),
        (PortRef("nic9", 0).change(10, up=False), UnknownNodeError, "nic9"),
        (PortRef("nic0", 5).change(10, up=False), UnknownNodeError, "5"),
        (
            FlapEvent(at_ns=0, of=PortRef("nic9", 0), period_ns=10, down_ns=5, until_ns=100),
            UnknownNodeError,
            "nic9",
        ),
        (
            LossEvent(at_ns=0, links=(LinkRef(*CUT), LinkRef("p0-t0-0", "p0-t1-9")), rate=0.1),
            UnknownLinkError,
            "p0-t1-9",
        ),
        (EvDropEvent(at_ns=0, nic="nic9", ev=1, fraction=0.5), UnknownNodeError, "nic9"),
        (Event(at_ns=0), FaultValueError, "changes nothing"),
    ],
)
def test_bad_events_get_a_specific_error(event: Event, error: type, words: str) -> None:
    """What only the fabric knows (its names); bad values are refused by the event itself
    (tests/topologies/test_events.py). Nothing of a refused event is scheduled, not even
    the first link of a loss whose second link is unknown."""
    fabric = VirtualFabric("tiny")
    with pytest.raises(error, match=words):
        fabric.schedule(event)
    assert not fabric.faults and not fabric.events.pending()


def test_schedule_takes_only_events_of_the_vocabulary() -> None:
    fabric = VirtualFabric("tiny")
    with pytest.raises(VirtualFabricError, match=r"topologies\.events"):
        fabric.schedule(("link_down", 10, *CUT))  # type: ignore[arg-type]


def test_a_fault_in_the_past_is_refused() -> None:
    fabric = VirtualFabric("tiny")
    fabric.transfer("nic0", "nic1", 1000)
    fabric.run()
    with pytest.raises(FaultTimeError, match="in the past"):
        fabric.schedule(LINK.change(fabric.now - 1, up=False))


def test_bad_transfers_get_a_specific_error() -> None:
    fabric = VirtualFabric("tiny")
    for call, words in (
        (lambda: fabric.transfer("nic0", "nic0", 10), "itself"),
        (lambda: fabric.transfer("nic0", "nic7", 10), "nic7"),
        (lambda: fabric.transfer("nic0", "nic1", 0), "size"),
        (lambda: fabric.transfer("nic0", "nic1", 10, transport="tcp"), "tcp"),
        (lambda: fabric.transfer("nic0", "nic1", 10, messages=11), "messages"),
    ):
        with pytest.raises(VirtualFabricError, match=words):
            call()


def test_ev_drop_is_counted_against_that_ev_only() -> None:
    ev = encode_ev(1, 1, 3)
    fabric = VirtualFabric("tiny", seed=7)
    t = fabric.transfer("nic0", "nic3", SIZE)
    fabric.schedule(EvDropEvent(at_ns=0, nic="nic0", ev=ev, fraction=1.0))
    assert fabric.run(until_ns=50_000_000) and t.intact
    sent = fabric.ev_counters()["nic0"]["tx"]
    assert sent[f"{ev:#010x}"]["dropped"] > 0
    assert all(row["dropped"] == 0 for key, row in sent.items() if key != f"{ev:#010x}")


def test_a_repath_is_attributed_to_its_fault_even_after_random_loss() -> None:
    """Random loss retires some EVs of the cut path before the cut: the cut still gets
    its own repath, measured from its own losses, per path it cut."""
    fabric = VirtualFabric("tiny", seed=3)
    t = fabric.transfer("nic0", "nic3", SIZE)
    for a, b in (("p0-t0-0", "p0-t1-0"), ("p0-t1-0", "p0-t0-1")):
        fabric.schedule(LossEvent(at_ns=0, links=(LinkRef(a, b),), rate=0.02))
    fabric.schedule(LINK.change(30_000, up=False))
    assert fabric.run(until_ns=50_000_000) and t.intact
    loss_retired = [
        c for c in fabric.ev_state_changes() if c["to"] == "ASSUMED_BAD" and c["t_ns"] < 30_000
    ]
    assert loss_retired, "the loss retired nothing before the cut: the case is not tested"
    cut = next(r for r in fabric.repaths() if r["kind"] == "link_down")
    assert cut["repath_us"] and all(us is not None for us in cut["repath_us"]), cut
    assert max(cut["repath_us"]) * 1000 <= 2 * NicConfig().base_rtt_ns, cut["repath_us"]
    assert all(e["packets_lost"] >= 0 and e["qpn"] is not None for e in cut["events"])


def test_the_event_log_names_each_fault_as_vfabric_always_did() -> None:
    """The ``fault_scheduled`` records (and so the event-log hashes) are the ones vfabric's
    own fault classes wrote before the vocabulary moved to topologies.events: a loss is
    one fault per link, a port flap is its link's, an unset end is left out."""
    fabric = VirtualFabric("tiny")
    events: list[Event] = [
        LINK.change(10, up=False),
        SwitchUpEvent(at_ns=20, switch="p1-t1-1"),
        PORT.change(30, up=False),
        FlapEvent(at_ns=40, of=PortRef("nic1", 0), period_ns=30, down_ns=10, until_ns=90),
        LossEvent(at_ns=50, links=(LinkRef("p0-t1-0", "p0-t0-1"), LinkRef(*CUT)), rate=0.5),
        EvDropEvent(at_ns=60, nic="nic0", ev=7, fraction=0.25, until_ns=70, plane=0, t1=0),
    ]
    for event in events:
        fabric.schedule(event)
    records = [r.detail for r in fabric.log.records if r.kind == "fault_scheduled"]
    assert records == [
        {"index": 0, "fault": {"fault": "link_down", "at_ns": 10, "a": CUT[0], "b": CUT[1]}},
        {"index": 1, "fault": {"fault": "switch_up", "at_ns": 20, "name": "p1-t1-1"}},
        {"index": 2, "fault": {"fault": "nic_port_down", "at_ns": 30, "nic": "nic3", "plane": 0}},
        {
            "index": 3,
            "fault": {
                "fault": "flap",
                "start_ns": 40,
                "a": "nic1",
                "b": "p0-t0-0",
                "period_ns": 30,
                "down_ns": 10,
                "until_ns": 90,
            },
        },
        {
            "index": 4,
            "fault": {
                "fault": "link_loss",
                "start_ns": 50,
                "a": "p0-t1-0",
                "b": "p0-t0-1",
                "probability": 0.5,
            },
        },
        {
            "index": 5,
            "fault": {
                "fault": "link_loss",
                "start_ns": 50,
                "a": CUT[0],
                "b": CUT[1],
                "probability": 0.5,
            },
        },
        {
            "index": 6,
            "fault": {
                "fault": "ev_drop",
                "start_ns": 60,
                "nic": "nic0",
                "ev": 7,
                "fraction": 0.25,
                "end_ns": 70,
            },
        },
    ]
    assert [list(r["fault"]) for r in records] == [list(f.describe()) for f in fabric.faults]
    assert [f.links() for f in fabric.faults] == [
        [CUT],
        [],
        [("nic3", "p0-t0-1")],
        [("nic1", "p0-t0-0")],
        [],
        [],
        [],
    ]


def test_a_flap_changes_at_the_times_of_its_edges_and_is_up_by_its_end() -> None:
    """The virtual fabric flaps at the times of FlapEvent.edges, as the process fabric
    does: a last down period cut short by ``until_ns`` ends there."""
    flap = FlapEvent(at_ns=10, of=LINK, period_ns=30, down_ns=20, until_ns=50)
    fabric = VirtualFabric("tiny")
    fabric.schedule(flap)
    fabric.run(until_ns=100)
    changes = [
        (r.t_ns, r.kind) for r in fabric.log.records if (r.detail or {}).get("cause") == "flap"
    ]
    assert changes == [(e.at_ns, e.kind) for e in flap.edges()]
    assert changes == [(10, "link_down"), (30, "link_up"), (40, "link_down"), (50, "link_up")]


def test_repaths_are_counted_per_sending_nic() -> None:
    """Every NIC numbers its QPNs from the same base: two NICs' connections through one
    dead T1 are two repaths each, not one figure from the earliest loss of either to the
    latest send of either."""
    fabric = VirtualFabric("tiny", seed=3)
    fabric.transfer("nic0", "nic3", SIZE)
    fabric.transfer("nic1", "nic2", SIZE)
    fabric.schedule(SwitchDownEvent(at_ns=20_000, switch="p1-t1-1"))
    assert fabric.run(until_ns=50_000_000)
    events = fabric.repaths()[0]["events"]
    senders = [t.sender for t in fabric.transfers]
    assert senders[0] is not None and senders[1] is not None
    assert senders[0].qpn == senders[1].qpn  # the case: one QPN on two NICs
    assert {e["nic"] for e in events} == {"nic0", "nic1"}
    keys = [(e["nic"], e["qpn"], tuple(e["path"])) for e in events]
    assert len(keys) == len(set(keys))
