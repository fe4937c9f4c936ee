"""p4src/mrc_switch.p4 with the controller's entries: the same packets into p4emu and into
BMv2's simple_switch_grpc, the frames out compared port by port (``-m bmv2``).

Each switch role of the ``tiny`` topology (a T0 and a T1 of plane 1) gets what the
controller plans for it (``controller.plan.plan_fabric``, encoded by
``controller.entities.EntityCodec``). The packets: data frames along every planned uSID
route, every ECN / DSCP combination, hop limits 0..2, SACKs and probes, an end-of-carrier
and an unknown uSID, non-IPv6 frames (ARP, IPv4, an 802.1Q-tagged IPv6 frame),
truncations and seeded random byte flips. Frames to the CPU port (punts) are not compared
(BMv2's are on its P4Runtime stream); their absence from the data ports is. BMv2's ports
are veth pairs (root), packets sent one at a time: the pcap replay of
``--use-files`` sends a burst, which fills queues and changes ECN marks.
"""

from __future__ import annotations

import random
from pathlib import Path

import p4src_helpers as helpers
import pytest
from bmv2_harness import by_port, run_on_bmv2_veth, tools_missing, veth_missing
from finsy.proto import p4r

import topologies
from controller.entities import EntityCodec
from controller.plan import plan_fabric
from p4emu.runtime.clock import VirtualClock
from p4emu.switch import Switch

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "mrc_switch.p4"
CPU_PORT = 510
PRIORITY_QUEUES = 8


def controller_updates(switch: Switch, name: str) -> list[p4r.Update]:
    assert switch.p4info is not None
    codec = EntityCodec(switch.p4info)
    plan = plan_fabric(topologies.load("tiny"))[name]
    return [
        codec.encode_update("MODIFY" if entry.is_default else "INSERT", entry)
        for entry in plan.entries
    ]


def packets(name: str) -> list[tuple[int, bytes]]:
    addresses = topologies.AddressPlan(topologies.load("tiny"))
    own = addresses.switch_usid(name)
    routes = addresses.routes_for(name)
    carriers = [helpers.carrier(own, route.usid, 0xE201) for route in routes]
    carriers += [helpers.carrier(route.usid) for route in routes]  # our routes, not our uSID
    carriers += [helpers.carrier(own), helpers.carrier(0x7777, own)]  # end of carrier, unknown
    frames: list[bytes] = []
    for dst in carriers:
        frames.append(helpers.data_frame(dst))
        frames.append(helpers.sack_frame(dst))
        frames.append(helpers.probe_frame(dst))
    dst = carriers[0]
    for ecn in range(4):
        for dscp in (0, 8, 10, 26, 46, 48, 63):
            frames.append(helpers.data_frame(dst, ecn=ecn, dscp=dscp))
    for hop_limit in (0, 1, 2):
        frames.append(helpers.data_frame(dst, hop_limit=hop_limit))
    base = helpers.data_frame(dst)
    frames.append(bytes.fromhex("ffffffffffff0200000000010806") + bytes(28))  # ARP
    frames.append(base[:12] + b"\x08\x00" + bytes.fromhex("4500001c0000000040110000") + bytes(8))
    frames.append(base[:12] + b"\x81\x00\x00\x05" + base[12:])  # 802.1Q-tagged IPv6
    for cut in (14, 20, 53, 54, 60, 61, 70, 100):  # a Linux port sends no runt under 14
        frames.append(base[:cut])
    rng = random.Random(14)
    for _ in range(40):
        flipped = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        frames.append(bytes(flipped))
    ports = sorted({route.port for route in routes if route.port is not None} | {1})
    return [(ports[i % len(ports)], frame) for i, frame in enumerate(frames)]


@pytest.mark.bmv2
@pytest.mark.parametrize("name", ["p1-t0-0", "p1-t1-1"])
def test_mrc_switch_same_packets_out_as_bmv2(name: str, tmp_path: Path) -> None:
    reason = tools_missing() or veth_missing()
    if reason is not None:
        pytest.skip(reason)
    switch = Switch(
        PROGRAM, clock=VirtualClock(), cpu_port=CPU_PORT, priority_queues=PRIORITY_QUEUES
    )
    from p4emu.p4rt import P4RuntimeState

    state = P4RuntimeState(switch.objects)
    updates = controller_updates(switch, name)
    errors = state.write(updates)
    assert all(e.canonical_code == 0 for e in errors), errors
    sent = packets(name)
    ports = sorted({port for port, _ in sent})
    emu: list[tuple[int, bytes]] = []
    counts: list[int] = []
    for port, frame in sent:  # one at a time, as BMv2 gets them over the veths
        switch.inject(port, frame)
        switch.run_until_idle()
        out = [(p, d) for p, d in switch.collect() if p in ports]
        emu.extend(out)
        counts.append(len(out))
    assert emu, "nothing came out of p4emu: the test would compare nothing"
    bmv2 = run_on_bmv2_veth(
        PROGRAM,
        updates,
        sent,
        tmp_path,
        ports,
        ["--cpu-port", str(CPU_PORT), "--priority-queues", str(PRIORITY_QUEUES)],
        expected_counts=counts,
    )
    assert by_port(emu) == by_port(bmv2)
