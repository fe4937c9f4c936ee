"""The in-memory fabric itself: uN forwarding, queue thresholds, faults."""

from __future__ import annotations

import dataclasses

import pytest

from mrc_wire import DataPacket, Dscp, Ecn, decode, encode
from mrc_wire.frames import frame_ev
from nic_emu.exceptions import FabricError
from nic_emu.testing.model_fabric import FabricConfig, LinkFault, ModelFabric
from nic_emu.testing.scheduler import never
from topologies import AddressPlan, load
from vfabric.eventlist import EventList


def _fabric(**cfg: object) -> tuple[ModelFabric, dict[str, list[tuple[int, int, bytes]]]]:
    events = EventList()
    fabric = ModelFabric(events, load("small"), seed=3, config=FabricConfig(**cfg))  # type: ignore[arg-type]
    got: dict[str, list[tuple[int, int, bytes]]] = {}
    for nic in ("nic0", "nic2"):
        bucket = got.setdefault(nic, [])
        fabric.attach(
            nic,
            lambda plane, frame, b=bucket: b.append((events.now, plane, frame)),
            lambda plane, up: None,
        )
    return fabric, got


def _frame(plan: AddressPlan, ev: int, size: int = 4096, **changes: object) -> bytes:
    path = plan.path_for_ev("nic0", "nic2", ev)
    packet = DataPacket(
        dst_mac=bytes(6),
        src_mac=bytes(6),
        outer_src=plan.nic_address("nic0", path.plane).packed,
        outer_dst=path.carrier_bytes,
        inner_src=plan.nic_address("nic0", path.plane).packed,
        inner_dst=plan.nic_address("nic2", path.plane).packed,
        ev=ev,
        dqpn=0x100,
        psn=1,
        va=0,
        rkey=1,
        dma_length=size,
        payload=bytes(size),
    )
    return encode(dataclasses.replace(packet, **changes))


def test_un_forwarding_follows_the_carrier_to_the_nic() -> None:
    fabric, got = _fabric()
    plan = fabric.plan
    ev = plan.make_ev(2, 1, 7)
    fabric.transmit("nic0", 2, _frame(plan, ev))
    fabric.events.run(None, never)
    ((t, plane, frame),) = got["nic2"]
    m = decode(frame)
    assert plane == 2 and m.ev == ev == frame_ev(frame)
    assert int.from_bytes(m.outer_dst, "big") == plan.arrival_carrier("nic2", 2)
    assert m.hop_limit == 64 - 3
    assert fabric.switches["p2-t1-1"].forwarded == 1 and fabric.switches["p2-t1-0"].forwarded == 0
    assert 4000 < t < 6000  # 4 links of 1 us plus serialisation


def test_a_wrong_carrier_is_dropped_not_misdelivered() -> None:
    fabric, got = _fabric()
    plan = fabric.plan
    ev = plan.make_ev(0, 0, 1)
    frame = _frame(
        plan, ev, outer_dst=plan.path_for_ev("nic0", "nic2", plan.make_ev(1, 0, 1)).carrier_bytes
    )
    fabric.transmit("nic0", 0, frame)  # plane-1 carrier on a plane-0 port
    fabric.events.run(None, never)
    assert got["nic2"] == [] and fabric.switches["p0-t0-0"].drops == {"not_my_usid": 1}


def test_full_queue_trims_trimmable_and_drops_the_rest() -> None:
    fabric, got = _fabric()
    plan = fabric.plan
    ev = plan.make_ev(0, 0, 1)
    channel = fabric.channel("p0-t1-0", "p0-t0-1")
    assert (channel.trim_depth, channel.limit, channel.ecn_kmin, channel.ecn_kmax) == (
        48,
        60,
        10,
        38,
    )
    carrier_at_t1 = _frame(plan, ev)
    # Feed the T1 -> T0 channel directly, faster than it drains.
    da = int.from_bytes(decode(carrier_at_t1).outer_dst, "big")
    shifted = (da & (((1 << 32) - 1) << 96)) | ((da << 32) & ((1 << 96) - 1))
    at_t1 = encode(
        dataclasses.replace(decode(carrier_at_t1), outer_dst=shifted.to_bytes(16, "big"))
    )
    for _ in range(70):
        channel.send(at_t1)
    no_trim = encode(dataclasses.replace(decode(at_t1), dscp=Dscp.NO_TRIM))
    for _ in range(20):
        channel.send(no_trim)
    fabric.events.run(None, never)
    assert channel.trims == 22 and channel.ecn_marks > 0 and channel.drops_full == 20 - 12
    trimmed = [decode(f) for _, _, f in got["nic2"] if decode(f).trimmed]
    assert len(trimmed) == 22 and all(not m.trimmed_lasthop for m in trimmed)
    marked = [decode(f) for _, _, f in got["nic2"] if decode(f).ecn == Ecn.CE]
    assert marked


def test_last_hop_trims_as_lasthop_and_never_marks_ecn() -> None:
    fabric, got = _fabric()
    channel = fabric.channel("p0-t0-1", "nic2")
    assert not channel.ecn and channel.last_hop
    plan = fabric.plan
    frame = _frame(plan, plan.make_ev(0, 0, 1))
    m = decode(frame)
    arrival = plan.arrival_carrier("nic2", 0).to_bytes(16, "big")
    last = encode(dataclasses.replace(m, outer_dst=arrival))
    for _ in range(60):
        channel.send(last)
    fabric.events.run(None, never)
    kinds = [decode(f) for _, _, f in got["nic2"]]
    assert sum(k.trimmed_lasthop for k in kinds) == 12
    assert not any(k.ecn == Ecn.CE for k in kinds)


def test_faults_drop_duplicate_and_delay_deterministically() -> None:
    def run(fault: LinkFault) -> tuple[int, list[int]]:
        fabric, got = _fabric()
        plan = fabric.plan
        fabric.set_fault("nic0", "p0-t0-0", fault)
        ev = plan.make_ev(0, 0, 1)
        for i in range(200):
            fabric.events.at(
                i * 1000, lambda f: fabric.transmit("nic0", 0, f), _frame(plan, ev, 64, psn=i)
            )
        fabric.events.run(None, never)
        return len(got["nic2"]), [decode(f).psn for _, _, f in got["nic2"]]

    n, _ = run(LinkFault(drop_prob=0.5))
    assert 60 < n < 140 and run(LinkFault(drop_prob=0.5)) == run(LinkFault(drop_prob=0.5))
    n, psns = run(LinkFault(dup_prob=0.3))
    assert n > 220 and sorted(set(psns)) == list(range(200))
    _, psns = run(LinkFault(reorder_prob=0.5, reorder_delay_ns=20_000))
    assert psns != sorted(psns) and sorted(psns) == list(range(200))


def test_fabric_config_is_checked() -> None:
    with pytest.raises(FabricError, match="ecn_min_frac < ecn_max_frac"):
        FabricConfig(ecn_min_frac=0.9, ecn_max_frac=0.1)
    with pytest.raises(FabricError, match="trim_frac <= queue_limit_frac"):
        FabricConfig(trim_frac=0.99, queue_limit_frac=0.5)
