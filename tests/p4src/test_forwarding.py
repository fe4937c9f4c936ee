"""mrc_switch.p4 forwarding on p4emu: uN on T0 and T1, end of carrier, SRH End, hop
limit, route misses, non-IPv6 frames, punts and packet_out.

Expected behaviour: docs/addressing.md (carrier, uN shift), docs/wire-format.md
(fields the fabric changes) and p4src/README.md (tables, counters, packet I/O).
"""

from __future__ import annotations

import functools
from ipaddress import IPv6Address

import pytest
from p4src_helpers import (
    CPU_PORT,
    PUNT_END_OF_CARRIER,
    PUNT_HOP_LIMIT,
    PUNT_NO_ROUTE,
    PUNT_NON_IPV6,
    PUNT_ROUTE_TO_CPU,
    MrcSwitch,
    carrier,
    data_frame,
    outer,
    packet_in,
    packet_out_header,
    program_switch,
)
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import raw

import mrc_wire
import topologies

# tiny topology, plane 1 (docs/addressing.md): T0 uSIDs 0x1400/0x1401, T1 0x1800/0x1801,
# downlinks 0xe200 (port 1) / 0xe201 (port 2); T0 uplinks: port 3 -> T1 0, port 4 -> T1 1;
# T1 ports: 1 -> T0 0, 2 -> T0 1.
T0_0, T0_1, T1_0, T1_1 = 0x1400, 0x1401, 0x1800, 0x1801
DOWN_0, DOWN_1 = 0xE200, 0xE201


@functools.cache
def plan() -> topologies.AddressPlan:
    return topologies.AddressPlan(topologies.load("tiny"))


def switch_for(name: str) -> MrcSwitch:
    ms = MrcSwitch()
    program_switch(ms, plan(), name)
    return ms


def _addr(text: str) -> int:
    return int(IPv6Address(text))


def only_output(ms: MrcSwitch) -> tuple[int, bytes]:
    ms.run()
    out = ms.take()
    assert len(out) == 1, out
    return out[0]


# --- uN ------------------------------------------------------------------------------------


def test_t0_first_hop_shifts_the_carrier_and_forwards_to_the_t1_uplink() -> None:
    ms = switch_for("p1-t0-0")
    path = plan().path_for_ev("nic0", "nic3", plan().make_ev(1, 1, 5))
    assert str(path.carrier_address) == carrier(T0_0, T1_1, T0_1, DOWN_1)
    ms.send(1, data_frame(str(path.carrier_address), hop_limit=64))
    port, frame = only_output(ms)
    assert port == 4  # uplink to T1 1
    # only DA (shifted, zero fill) and hop limit change; every other byte is as sent
    assert frame == data_frame(carrier(T1_1, T0_1, DOWN_1), hop_limit=63)


def test_shift_of_a_full_carrier_fills_the_last_usid_with_zero() -> None:
    ms = switch_for("p1-t0-0")
    ms.send(1, data_frame(carrier(T0_0, T1_1, 0x1111, 0x2222, 0x3333, 0x4444)))
    port, frame = only_output(ms)
    assert port == 4
    assert outer(frame).dst == carrier(T1_1, 0x1111, 0x2222, 0x3333, 0x4444)
    assert _addr(outer(frame).dst) & 0xFFFF == 0


def test_t1_shifts_and_forwards_to_the_destination_t0() -> None:
    ms = switch_for("p1-t1-1")
    ms.send(1, data_frame(carrier(T1_1, T0_1, DOWN_1), hop_limit=63))
    port, frame = only_output(ms)
    assert port == 2  # toward p1-t0-1
    assert frame == data_frame(carrier(T0_1, DOWN_1), hop_limit=62)


def test_t0_last_hop_forwards_on_the_downlink_usid_and_leaves_the_arrival_carrier() -> None:
    ms = switch_for("p1-t0-1")
    ms.send(4, data_frame(carrier(T0_1, DOWN_1), hop_limit=62))
    port, frame = only_output(ms)
    assert port == 2  # downlink 1 = NIC nic3
    assert _addr(outer(frame).dst) == plan().arrival_carrier("nic3", 1)
    assert frame == data_frame(carrier(DOWN_1), hop_limit=61)


def test_three_switch_path_delivers_an_intact_packet_to_the_nic() -> None:
    path = plan().path_for_ev("nic0", "nic3", plan().make_ev(1, 1, 9))
    frame = data_frame(str(path.carrier_address), psn=77, payload_len=1000, timestamp=1234)
    sent = mrc_wire.decode(frame)
    in_ports = {"p1-t0-0": 1, "p1-t1-1": 1, "p1-t0-1": 4}
    for name in path.switches:
        ms = switch_for(name)
        ms.send(in_ports[name], frame)
        _, frame = only_output(ms)
    got = mrc_wire.decode(frame)
    assert _addr(outer(frame).dst) == plan().arrival_carrier("nic3", 1)
    assert got.hop_limit == 64 - 3
    assert (got.psn, got.payload, got.timestamp, got.ev) == (
        sent.psn,
        sent.payload,
        sent.timestamp,
        sent.ev,
    )
    assert (got.dscp, got.ecn) == (sent.dscp, sent.ecn)  # no congestion: unchanged


def test_same_t0_path_goes_straight_to_the_downlink() -> None:
    ms = switch_for("p1-t0-0")
    path = plan().path_for_ev("nic0", "nic1", plan().make_ev(1, 0, 1))
    assert path.switches == ("p1-t0-0",)
    ms.send(1, data_frame(str(path.carrier_address)))
    port, frame = only_output(ms)
    assert port == 2
    assert frame == data_frame(carrier(DOWN_1), hop_limit=63)


def test_carrier_of_another_plane_is_not_mine_and_is_a_no_route_drop() -> None:
    ms = switch_for("p1-t0-0")
    ms.send(3, data_frame(carrier(0x0400, 0x0801, 0x0401, 0xE001)))  # plane 0 uSIDs
    ms.run()
    assert ms.take() == []
    assert ms.counter("MrcIngress.drop_no_route", 3)[0] == 1


# --- end of carrier --------------------------------------------------------------------------


def test_end_of_carrier_is_addressed_to_the_switch_and_dropped_by_default() -> None:
    ms = switch_for("p1-t0-1")
    frame = data_frame(carrier(T0_1))  # my uSID, then 0x0000
    ms.send(4, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counter("MrcIngress.drop_local", 4) == (1, len(frame))
    assert ms.counters("MrcEgress.forwarded") == {}


def test_end_of_carrier_is_punted_unchanged_when_configured() -> None:
    ms = switch_for("p1-t0-1")
    ms.switch_config(plane_id=1, punt_end_of_carrier=1)
    frame = data_frame(carrier(T0_1), hop_limit=5)
    ms.send(4, frame)
    ms.run()
    [(port, data)] = ms.take()
    assert port == CPU_PORT
    punt = packet_in(data)
    assert (punt.ingress_port, punt.reason) == (4, PUNT_END_OF_CARRIER)
    assert punt.frame == frame  # punts carry the packet as received
    assert ms.counter("MrcIngress.punted", 4) == (1, len(frame))


# --- SRH End -----------------------------------------------------------------------------------


def test_usid_end_of_carrier_with_srh_takes_the_next_carrier_from_the_segment_list() -> None:
    ms = switch_for("p1-t1-1")
    final = carrier(T0_1, DOWN_1)
    # Segment List[0] is the last segment (RFC 8754); SL = 1 -> DA <- Segment List[0]
    frame = data_frame(carrier(T1_1), segments=[final], segments_left=1, hop_limit=40)
    ms.send(1, frame)
    port, out = only_output(ms)
    assert port == 2  # usid_route on the new active uSID 0x1401
    assert out == data_frame(final, segments=[final], segments_left=0, hop_limit=39)


def test_usid_srh_end_picks_segment_list_entry_segments_left_minus_one() -> None:
    ms = switch_for("p1-t1-1")
    last = carrier(0x1400, DOWN_0)
    middle = carrier(T0_1, DOWN_1)
    frame = data_frame(carrier(T1_1), segments=[last, middle], segments_left=2)
    ms.send(1, frame)
    port, out = only_output(ms)
    assert port == 2  # middle's active uSID 0x1401
    assert out == data_frame(middle, segments=[last, middle], segments_left=1, hop_limit=63)


def test_full_sid_srh_end_routes_the_new_destination_with_ipv6_route() -> None:
    ms = switch_for("p1-t1-1")
    ms.my_sid("fcbb:bb00:1801::1")
    ms.ipv6_route("fd00:abcd::/32", 9)
    frame = data_frame("fcbb:bb00:1801::1", segments=["fd00:abcd::5"], segments_left=1)
    ms.send(1, frame)
    port, out = only_output(ms)
    assert port == 9
    assert out == data_frame(
        "fd00:abcd::5", segments=["fd00:abcd::5"], segments_left=0, hop_limit=63
    )


def test_full_sid_with_no_segments_left_is_addressed_to_the_switch() -> None:
    ms = switch_for("p1-t1-1")
    ms.my_sid("fcbb:bb00:1801::1")
    frame = data_frame("fcbb:bb00:1801::1", segments=["fd00:abcd::5"], segments_left=0)
    ms.send(1, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counter("MrcIngress.drop_local", 1)[0] == 1


def test_srh_end_with_a_next_carrier_outside_the_block_uses_ipv6_route() -> None:
    ms = switch_for("p1-t1-1")
    ms.ipv6_route("fd00:abcd::/32", 9)
    frame = data_frame(carrier(T1_1), segments=["fd00:abcd::7"], segments_left=1)
    ms.send(1, frame)
    port, out = only_output(ms)
    assert port == 9
    assert outer(out).dst == "fd00:abcd::7"


# --- hop limit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("hop_limit", [0, 1])
def test_hop_limit_expiry_is_dropped_and_counted(hop_limit: int) -> None:
    ms = switch_for("p1-t0-0")
    frame = data_frame(carrier(T0_0, T1_1, T0_1, DOWN_1), hop_limit=hop_limit)
    ms.send(1, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counter("MrcIngress.drop_hop_limit", 1) == (1, len(frame))


def test_hop_limit_two_still_forwards_with_one() -> None:
    ms = switch_for("p1-t0-0")
    ms.send(1, data_frame(carrier(T0_0, T1_1, T0_1, DOWN_1), hop_limit=2))
    _, frame = only_output(ms)
    assert outer(frame).hop_limit == 1


def test_hop_limit_expiry_is_punted_when_configured() -> None:
    ms = switch_for("p1-t0-0")
    ms.switch_config(plane_id=1, punt_hop_limit=1)
    frame = data_frame(carrier(T0_0, T1_1, T0_1, DOWN_1), hop_limit=1)
    ms.send(1, frame)
    ms.run()
    [(port, data)] = ms.take()
    assert port == CPU_PORT
    punt = packet_in(data)
    assert (punt.ingress_port, punt.reason, punt.frame) == (1, PUNT_HOP_LIMIT, frame)


# --- route misses --------------------------------------------------------------------------------


def test_unknown_next_usid_is_a_counted_no_route_drop() -> None:
    ms = switch_for("p1-t0-0")
    frame = data_frame(carrier(T0_0, 0x1805, T0_1, DOWN_1))
    ms.send(1, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counter("MrcIngress.drop_no_route", 1) == (1, len(frame))


def test_foreign_destination_without_an_ipv6_route_is_a_counted_no_route_drop() -> None:
    ms = switch_for("p1-t0-0")
    frame = data_frame("2001:db8::1")
    ms.send(2, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counter("MrcIngress.drop_no_route", 2) == (1, len(frame))


def test_route_miss_is_punted_when_configured() -> None:
    ms = switch_for("p1-t0-0")
    ms.switch_config(plane_id=1, punt_no_route=1)
    frame = data_frame("2001:db8::1")
    ms.send(2, frame)
    ms.run()
    [(port, data)] = ms.take()
    assert port == CPU_PORT
    punt = packet_in(data)
    assert (punt.ingress_port, punt.reason, punt.frame) == (2, PUNT_NO_ROUTE, frame)
    assert ms.counters("MrcIngress.drop_no_route") == {}


def test_ipv6_route_forwards_transit_traffic_and_decrements_the_hop_limit() -> None:
    ms = switch_for("p1-t0-0")
    ms.ipv6_route("fd00:abcd::/32", 9)
    ms.send(2, data_frame("fd00:abcd::42", hop_limit=10))
    port, frame = only_output(ms)
    assert port == 9
    assert frame == data_frame("fd00:abcd::42", hop_limit=9)


def test_ipv6_route_to_cpu_punts_with_the_hop_limit_untouched() -> None:
    ms = switch_for("p1-t0-0")
    ms.ipv6_route("ff02::/16", None)
    nd = raw(
        Ether(dst="33:33:00:00:00:01", src="02:01:00:00:00:00") / IPv6(dst="ff02::1", hlim=255)
    )
    ms.send(2, nd)
    ms.run()
    [(port, data)] = ms.take()
    assert port == CPU_PORT
    punt = packet_in(data)
    assert (punt.ingress_port, punt.reason, punt.frame) == (2, PUNT_ROUTE_TO_CPU, nd)


def test_usid_route_to_cpu_punts() -> None:
    ms = switch_for("p1-t0-0")
    ms.usid_route(0x1234, None)
    frame = data_frame(carrier(T0_0, 0x1234))
    ms.send(3, frame)
    ms.run()
    [(port, data)] = ms.take()
    assert port == CPU_PORT
    punt = packet_in(data)
    assert (punt.ingress_port, punt.reason, punt.frame) == (3, PUNT_ROUTE_TO_CPU, frame)


def test_route_forward_to_the_cpu_port_becomes_a_punt_with_a_packet_in_header() -> None:
    ms = switch_for("p1-t0-0")
    ms.usid_route(0x1234, CPU_PORT)
    frame = data_frame(carrier(T0_0, 0x1234))
    ms.send(3, frame)
    ms.run()
    [(port, data)] = ms.take()
    assert port == CPU_PORT
    punt = packet_in(data)
    assert (punt.ingress_port, punt.reason, punt.frame) == (3, PUNT_ROUTE_TO_CPU, frame)


# --- non-IPv6 ------------------------------------------------------------------------------------


def test_non_ipv6_frame_is_a_no_route_drop_by_default() -> None:
    ms = switch_for("p1-t0-0")
    arp = raw(Ether(dst="ff:ff:ff:ff:ff:ff", src="02:01:00:00:00:00") / ARP())
    ms.send(1, arp)
    ms.run()
    assert ms.take() == []
    assert ms.counter("MrcIngress.drop_no_route", 1) == (1, len(arp))


def test_non_ipv6_frame_is_punted_when_configured() -> None:
    ms = switch_for("p1-t0-0")
    ms.switch_config(plane_id=1, punt_non_ipv6=1)
    arp = raw(Ether(dst="ff:ff:ff:ff:ff:ff", src="02:01:00:00:00:00") / ARP())
    ms.send(1, arp)
    ms.run()
    [(port, data)] = ms.take()
    assert port == CPU_PORT
    punt = packet_in(data)
    assert (punt.ingress_port, punt.reason, punt.frame) == (1, PUNT_NON_IPV6, arp)


# --- packet_out and MAC rewrite -------------------------------------------------------------------


def test_packet_out_without_pipeline_is_sent_unchanged_to_its_port() -> None:
    ms = switch_for("p1-t0-0")
    frame = data_frame(carrier(0x7777))  # would be a route miss if it were routed
    ms.send(CPU_PORT, packet_out_header(3, 0) + frame)
    port, out = only_output(ms)
    assert (port, out) == (3, frame)


def test_packet_out_through_the_pipeline_is_routed_like_a_received_packet() -> None:
    ms = switch_for("p1-t0-0")
    ms.send(CPU_PORT, packet_out_header(0, 1) + data_frame(carrier(T0_0, T1_0, T0_1, DOWN_1)))
    port, out = only_output(ms)
    assert port == 3
    assert out == data_frame(carrier(T1_0, T0_1, DOWN_1), hop_limit=63)


def test_egress_port_mac_rewrites_the_ethernet_addresses() -> None:
    ms = switch_for("p1-t0-0")
    ms.port_macs(4, "0a:00:00:00:14:00", "0a:00:00:00:18:01")
    ms.send(1, data_frame(carrier(T0_0, T1_1, T0_1, DOWN_1)))
    _, frame = only_output(ms)
    eth = Ether(frame)
    assert (eth.src, eth.dst) == ("0a:00:00:00:14:00", "0a:00:00:00:18:01")
    assert frame[12:] == data_frame(carrier(T1_1, T0_1, DOWN_1), hop_limit=63)[12:]
