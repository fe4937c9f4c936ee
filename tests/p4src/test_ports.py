"""mrc_switch.p4 port up/down on p4emu: ingress_port_status and egress_port_config with
``up`` = 0 drop and count (``drop_port_down[port]``), p4src/README.md."""

from __future__ import annotations

import functools

from p4src_helpers import (
    CPU,
    CPU_PORT,
    FABRIC,
    HEADER_BYTES,
    HOST,
    PUNT_END_OF_CARRIER,
    MrcSwitch,
    carrier,
    data_frame,
    outer,
    packet_in,
    packet_out_header,
    program_switch,
    sack_frame,
)

import topologies
from mrc_wire import Dscp

T0_0, T0_1, T1_0, T1_1, DOWN_1 = 0x1400, 0x1401, 0x1800, 0x1801, 0xE201
TO_T1_1 = carrier(T0_0, T1_1, T0_1, DOWN_1)  # leaves p1-t0-0 on port 4
TO_T1_0 = carrier(T0_0, T1_0, T0_1, DOWN_1)  # leaves on port 3
TO_NIC_1 = carrier(T0_0, DOWN_1)  # leaves on port 2


@functools.cache
def plan() -> topologies.AddressPlan:
    return topologies.AddressPlan(topologies.load("tiny"))


def t0() -> MrcSwitch:
    ms = MrcSwitch()
    program_switch(ms, plan(), "p1-t0-0")
    return ms


def ports_out(ms: MrcSwitch) -> list[int]:
    ms.run()
    return [port for port, _ in ms.take()]


def test_ingress_port_down_drops_everything_received_on_it_and_counts() -> None:
    ms = t0()
    ms.ingress_port_status(3, 0)
    frames = [data_frame(TO_NIC_1, psn=1), sack_frame(TO_NIC_1), data_frame(TO_T1_1, psn=2)]
    for frame in frames:
        ms.send(3, frame)
    assert ports_out(ms) == []
    assert ms.counter("MrcIngress.drop_port_down", 3) == (3, sum(len(f) for f in frames))
    ms.send(1, data_frame(TO_NIC_1))  # another port still works
    assert ports_out(ms) == [2]


def test_ingress_port_up_entry_and_modify_back_up() -> None:
    ms = t0()
    ms.ingress_port_status(3, 1)
    ms.send(3, data_frame(TO_NIC_1))
    assert ports_out(ms) == [2]
    ms.ingress_port_status(3, 0, update="modify")
    ms.send(3, data_frame(TO_NIC_1))
    assert ports_out(ms) == []
    ms.ingress_port_status(3, 1, update="modify")
    ms.send(3, data_frame(TO_NIC_1))
    assert ports_out(ms) == [2]
    assert ms.counter("MrcIngress.drop_port_down", 3)[0] == 1


def test_egress_port_down_drops_what_is_routed_to_it_and_counts_on_that_port() -> None:
    ms = t0()
    ms.egress_port_config(4, FABRIC, up=0)
    down = [data_frame(TO_T1_1, psn=k) for k in range(3)] + [sack_frame(TO_T1_1)]
    for frame in down:
        ms.send(1, frame)
    ms.send(1, data_frame(TO_T1_0))  # the other uplink is up
    assert ports_out(ms) == [3]
    assert ms.counter("MrcIngress.drop_port_down", 4) == (4, sum(len(f) for f in down))
    assert ms.counter("MrcIngress.drop_port_down", 1) == (0, 0)
    assert ms.counter("MrcEgress.forwarded", 4) == (0, 0)


def test_link_down_on_both_sides_then_restored_by_deleting_the_entries() -> None:
    ms = t0()
    ms.egress_port_config(4, FABRIC, up=0)
    ms.ingress_port_status(4, 0)
    ms.send(1, data_frame(TO_T1_1))  # would leave on 4
    ms.send(4, data_frame(TO_NIC_1))  # arrives on 4
    assert ports_out(ms) == []
    assert ms.counter("MrcIngress.drop_port_down", 4)[0] == 2
    ms.delete(
        ms.table_entry(
            "MrcIngress.egress_port_config",
            {"port": 4},
            "MrcIngress.set_egress_port_config",
            {"port_class": FABRIC, "up": 0},
        ),
        ms.table_entry(
            "MrcIngress.ingress_port_status",
            {"port": 4},
            "MrcIngress.set_ingress_port_status",
            {"up": 0},
        ),
    )
    ms.send(1, data_frame(TO_T1_1))
    ms.send(4, data_frame(TO_NIC_1))
    assert sorted(ports_out(ms)) == [2, 4]


def test_host_port_down_keeps_its_class_when_brought_back_up() -> None:
    ms = t0()
    ms.modify_egress_port_config(2, HOST, up=0)
    ms.send(1, data_frame(TO_NIC_1))
    assert ports_out(ms) == []
    ms.modify_egress_port_config(2, HOST, up=1)
    ms.switch.set_queue_rate(1000, port=2)
    for k in range(49):  # one over the trim threshold: last-hop trim proves class HOST
        ms.send(3, data_frame(TO_NIC_1, psn=k))
    ms.run()
    out = [frame for _, frame in ms.take(2)]
    assert [len(f) for f in out].count(HEADER_BYTES) == 1
    assert Dscp.TRIMMED_LASTHOP in {outer(f).dscp for f in out}


def test_packet_out_to_a_down_port_is_dropped_and_counted() -> None:
    ms = t0()
    ms.egress_port_config(3, FABRIC, up=0)
    frame = data_frame(TO_T1_0)
    ms.send(CPU_PORT, packet_out_header(3, 0) + frame)
    assert ports_out(ms) == []
    assert ms.counter("MrcIngress.drop_port_down", 3) == (1, len(frame) + 2)


def test_cpu_port_ignores_egress_port_config() -> None:
    ms = t0()
    ms.switch_config(plane_id=1, punt_end_of_carrier=1)
    ms.egress_port_config(CPU_PORT, FABRIC, up=0)
    ms.send(3, data_frame(carrier(T0_0)))
    ms.run()
    [(port, data)] = ms.take()
    assert port == CPU_PORT
    assert packet_in(data).reason == PUNT_END_OF_CARRIER
    assert ms.counters("MrcIngress.drop_port_down") == {}


def test_drops_at_a_down_port_do_not_inflate_its_queue_estimate() -> None:
    ms = t0()
    ms.switch.set_queue_rate(1000, port=4)
    ms.egress_port_config(4, FABRIC, up=0)
    for k in range(70):
        ms.send(1, data_frame(TO_T1_1, psn=k))
    ms.modify_egress_port_config(4, FABRIC, up=1)
    ms.send(1, data_frame(TO_T1_1, psn=100))
    ms.run()
    [(port, frame)] = ms.take()
    assert port == 4
    assert outer(frame).dscp == Dscp.TRIMMABLE and len(frame) > HEADER_BYTES
    assert ms.counter("MrcIngress.drop_port_down", 4)[0] == 70


def test_cpu_class_entry_disables_trimming_on_a_front_panel_port() -> None:
    ms = t0()
    ms.switch.set_queue_rate(1000, port=9)
    ms.egress_port_config(9, CPU)
    ms.ipv6_route("fd00:abcd::/32", 9)
    for k in range(62):
        ms.send(1, data_frame("fd00:abcd::1", psn=k))
    ms.run()
    out = [frame for _, frame in ms.take(9)]
    assert len(out) == 60  # class CPU: no trimming, the queue limit (60) still applies
    assert all(len(f) > HEADER_BYTES for f in out)
    assert ms.counter("MrcIngress.drop_queue_full", 9)[0] == 2
