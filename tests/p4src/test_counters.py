"""mrc_switch.p4 counters on p4emu, read through P4Runtime CounterEntry: they match
what was sent (p4src/README.md, Counters). Byte counts are the packet's length as
received, as BMv2 counts (``Packet::get_ingress_length``), also for trimmed and punted
packets."""

from __future__ import annotations

import functools

from p4src_helpers import (
    CPU_PORT,
    MrcSwitch,
    carrier,
    data_frame,
    program_switch,
    sack_frame,
)

import topologies

T0_0, T0_1, T1_1, DOWN_0, DOWN_1 = 0x1400, 0x1401, 0x1801, 0xE200, 0xE201

COUNTERS = (
    "MrcEgress.forwarded",
    "MrcEgress.forwarded_per_plane",
    "MrcEgress.ecn_marked",
    "MrcEgress.ecn_marked_per_plane",
    "MrcIngress.trimmed",
    "MrcIngress.trimmed_per_plane",
    "MrcIngress.drop_no_route",
    "MrcIngress.drop_hop_limit",
    "MrcIngress.drop_parser_error",
    "MrcIngress.drop_port_down",
    "MrcIngress.drop_queue_full",
    "MrcIngress.drop_local",
    "MrcIngress.punted",
)


@functools.cache
def plan() -> topologies.AddressPlan:
    return topologies.AddressPlan(topologies.load("tiny"))


def total(frames: list[bytes]) -> tuple[int, int]:
    return len(frames), sum(len(f) for f in frames)


def test_every_counter_matches_a_mixed_workload() -> None:
    ms = MrcSwitch()
    program_switch(ms, plan(), "p1-t0-0")
    ms.switch_config(plane_id=1, punt_end_of_carrier=1)
    to_uplink = [
        data_frame(carrier(T0_0, T1_1, T0_1, DOWN_1), psn=k, payload_len=100 * k) for k in range(5)
    ]
    to_nic1 = [data_frame(carrier(T0_0, DOWN_1), psn=k, payload_len=7 + k) for k in range(3)]
    sacks_to_nic0 = [sack_frame(carrier(T0_0, DOWN_0), psn=k) for k in range(2)]
    punt = [data_frame(carrier(T0_0))]
    no_route = [data_frame(carrier(T0_0, 0x1777)), data_frame("2001:db8::9")]
    expired = [data_frame(carrier(T0_0, DOWN_1), hop_limit=1)]
    broken = [data_frame(carrier(T0_0, DOWN_1))[:60]]

    for frame in to_uplink + no_route:
        ms.send(1, frame)
    for frame in to_nic1 + punt:
        ms.send(3, frame)
    for frame in sacks_to_nic0 + expired:
        ms.send(4, frame)
    for frame in broken:
        ms.send(2, frame)
    ms.run()

    out = ms.take()
    by_port: dict[int, int] = {}
    for port, _ in out:
        by_port[port] = by_port.get(port, 0) + 1
    assert by_port == {4: 5, 2: 3, 1: 2, CPU_PORT: 1}

    expected = {
        "MrcEgress.forwarded": {
            4: total(to_uplink),
            2: total(to_nic1),
            1: total(sacks_to_nic0),
            CPU_PORT: total(punt),
        },
        "MrcEgress.forwarded_per_plane": {1: total(to_uplink + to_nic1 + sacks_to_nic0 + punt)},
        "MrcIngress.punted": {3: total(punt)},
        "MrcIngress.drop_no_route": {1: total(no_route)},
        "MrcIngress.drop_hop_limit": {4: total(expired)},
        "MrcIngress.drop_parser_error": {2: total(broken)},
    }
    for name in COUNTERS:
        assert ms.counters(name) == expected.get(name, {}), name


def test_per_plane_counters_use_the_configured_plane_id() -> None:
    ms = MrcSwitch()
    program_switch(ms, plan(), "p1-t0-0")
    ms.switch_config(plane_id=9)
    frame = data_frame(carrier(T0_0, DOWN_1))
    ms.send(1, frame)
    ms.run()
    assert ms.counters("MrcEgress.forwarded_per_plane") == {9: (1, len(frame))}


def test_unconfigured_switch_counts_plane_zero_and_drops_everything_as_no_route() -> None:
    ms = MrcSwitch()  # initial default set_switch_config(0, 7, 0, 0, 0, 0), no routes
    frames = [data_frame(carrier(T0_0, DOWN_1)), sack_frame(carrier(T0_0, DOWN_1))]
    for frame in frames:
        ms.send(5, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counters("MrcIngress.drop_no_route") == {5: total(frames)}
    assert ms.counters("MrcEgress.forwarded_per_plane") == {}


def test_counter_can_be_reset_through_p4runtime() -> None:
    ms = MrcSwitch()
    program_switch(ms, plan(), "p1-t0-0")
    ms.send(1, data_frame(carrier(T0_0, DOWN_1)))
    ms.run()
    assert ms.counter("MrcEgress.forwarded", 2)[0] == 1
    ms.reset_counter("MrcEgress.forwarded", 2)
    assert ms.counter("MrcEgress.forwarded", 2) == (0, 0)
