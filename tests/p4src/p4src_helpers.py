"""Shared helpers for the tests of p4src/mrc_switch.p4 on p4emu.

- :class:`MrcSwitch`: an in-process p4emu switch running mrc_switch.p4 with a virtual
  clock and ``--priority-queues 8``, programmed through P4Runtime ``p4.v1`` messages
  (entities built by name from the P4Info, as a controller would) and read back the
  same way (counters).
- Scapy frame builders for MRC data and control packets (docs/wire-format.md).
- Small readers for what leaves the switch (outer IPv6 fields, packet_in header).

Expectations in the tests come from docs/wire-format.md, docs/switch-queues.md,
p4src/README.md and v1model/BMv2 semantics, never from running the program.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv6Address
from pathlib import Path

from finsy.proto import p4i, p4r
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrSegmentRouting
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw, raw

import mrc_wire.scapy_layers as mrc_layers
from mrc_wire import Dscp, Ecn, Opcode
from p4emu.frontend import load_program
from p4emu.frontend.ast import CheckedProgram
from p4emu.p4rt import P4RuntimeState
from p4emu.p4rt_client.exceptions import EntityNameError
from p4emu.p4rt_client.messages import EntityNames
from p4emu.p4rt_client.schema import KeyFieldValue
from p4emu.runtime.clock import VirtualClock
from p4emu.switch import Switch
from topologies import AddressPlan, RouteKind, UsidRoute

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "mrc_switch.p4"

CPU_PORT = 510
DROP_PORT = 511
BLOCK = 0xFCBB_BB00  # default uSID block fcbb:bb00::/32 (docs/addressing.md section 2)

# Port classes (p4src/README.md, egress_port_config)
FABRIC, HOST, CPU = 0, 1, 2
# packet_in reasons (p4src/README.md, Controller packet I/O)
PUNT_END_OF_CARRIER, PUNT_NO_ROUTE, PUNT_HOP_LIMIT, PUNT_NON_IPV6, PUNT_ROUTE_TO_CPU = 1, 2, 3, 4, 5
CONTROL_PRIORITY, DATA_PRIORITY = 7, 0

NIC_SRC = "fd6d:7263:0:1::"  # nic0 on plane 1 (docs/addressing.md section 6)
NIC_DST = "fd6d:7263:0:1::3"  # nic3 on plane 1
NIC_MAC = "02:01:00:00:00:00"
SWITCH_MAC = "0a:00:00:00:14:00"

# Sizes (docs/wire-format.md section 1 and 11)
HEADER_BYTES = 130  # Ethernet .. RETH, no SRH, no TSETH: what a trimmed packet keeps


class HarnessError(AssertionError):
    """The test harness could not do what a test asked (bad name, refused write)."""


@functools.cache
def checked_program() -> CheckedProgram:
    """mrc_switch.p4 parsed and type-checked once per test session."""
    return load_program(PROGRAM)


def carrier(*usids: int, block: int = BLOCK) -> str:
    """The uSID carrier ``block | usids... | 0...`` as IPv6 text (docs/addressing.md)."""
    if len(usids) > 6:
        raise HarnessError(f"a carrier holds at most 6 uSIDs, got {len(usids)}")
    value = block << 96
    for i, usid in enumerate(usids):
        value |= usid << (80 - 16 * i)
    return str(IPv6Address(value))


class MrcSwitch:
    """mrc_switch.p4 on p4emu, configured through P4Runtime messages.

    The defaults mirror the documented deployment: ``--priority-queues 8``,
    ``--cpu-port 510``, 64-packet queues, no rate limit unless a test sets one.
    """

    def __init__(
        self,
        *,
        priority_queues: int = 8,
        queue_depth: int = 64,
        seed: int = 0,
    ) -> None:
        self.clock = VirtualClock()
        self.switch = Switch(
            checked_program(),
            clock=self.clock,
            cpu_port=CPU_PORT,
            drop_port=DROP_PORT,
            priority_queues=priority_queues,
            queue_depth=queue_depth,
            seed=seed,
        )
        self.p4rt = P4RuntimeState(self.switch.objects)
        self.departures: list[Departure] = []
        self.switch.output_callback = self._transmitted
        info = self.switch.p4info
        if info is None:
            raise HarnessError("mrc_switch.p4 has no P4Info")
        self.p4info: p4i.P4Info = info
        self.names = EntityNames(info)

    # --- P4Info lookups ------------------------------------------------------------------

    def _find(self, section: str, name: str):
        try:
            return self.names.find(section, name)
        except EntityNameError as exc:
            raise HarnessError(str(exc)) from None

    # --- entities (built by name: p4emu.p4rt_client) ----------------------------------------

    def action(self, name: str, params: Mapping[str, int] | None = None) -> p4r.Action:
        try:
            return self.names.action(name, params or {})
        except EntityNameError as exc:
            raise HarnessError(str(exc)) from None

    def table_entry(
        self,
        table: str,
        match: Mapping[str, KeyFieldValue],
        action: str,
        params: Mapping[str, int] | None = None,
        *,
        default: bool = False,
    ) -> p4r.Entity:
        try:
            return self.names.table_entry(table, match, action, params or {}, default=default)
        except EntityNameError as exc:
            raise HarnessError(str(exc)) from None

    def write(self, update_type: int, *entities: p4r.Entity) -> None:
        updates = [p4r.Update(type=update_type, entity=e) for e in entities]
        errors = self.p4rt.write(updates)
        failed = [(i, e) for i, e in enumerate(errors) if e.canonical_code != 0]
        if failed:
            raise HarnessError(f"P4Runtime write refused: {failed}")

    def insert(self, *entities: p4r.Entity) -> None:
        self.write(p4r.Update.INSERT, *entities)

    def modify(self, *entities: p4r.Entity) -> None:
        self.write(p4r.Update.MODIFY, *entities)

    def delete(self, *entities: p4r.Entity) -> None:
        self.write(p4r.Update.DELETE, *entities)

    def counter(self, name: str, index: int) -> tuple[int, int]:
        """``(packets, bytes)`` of one counter cell, read with a P4Runtime CounterEntry."""
        entity = p4r.Entity()
        entity.counter_entry.counter_id = self._find("counters", name).preamble.id
        entity.counter_entry.index.index = index
        [result] = list(self.p4rt.read(entity))
        data = result.counter_entry.data
        return data.packet_count, data.byte_count

    def counters(self, name: str) -> dict[int, tuple[int, int]]:
        """Every non-zero cell of a counter (wildcard read): ``index -> (packets, bytes)``."""
        entity = p4r.Entity()
        entity.counter_entry.counter_id = self._find("counters", name).preamble.id
        out = {}
        for result in self.p4rt.read(entity):
            data = result.counter_entry.data
            if data.packet_count or data.byte_count:
                out[result.counter_entry.index.index] = (data.packet_count, data.byte_count)
        return out

    def reset_counter(self, name: str, index: int) -> None:
        """P4Runtime MODIFY of a CounterEntry with zero data."""
        entity = p4r.Entity()
        entity.counter_entry.counter_id = self._find("counters", name).preamble.id
        entity.counter_entry.index.index = index
        entity.counter_entry.data.packet_count = 0
        entity.counter_entry.data.byte_count = 0
        self.modify(entity)

    # --- configuration by name (p4src/README.md) ------------------------------------------

    def switch_config(
        self,
        *,
        plane_id: int = 0,
        control_priority: int = CONTROL_PRIORITY,
        punt_end_of_carrier: int = 0,
        punt_no_route: int = 0,
        punt_hop_limit: int = 0,
        punt_non_ipv6: int = 0,
    ) -> None:
        self.modify(
            self.table_entry(
                "MrcIngress.switch_config",
                {},
                "MrcIngress.set_switch_config",
                {
                    "plane_id": plane_id,
                    "control_priority": control_priority,
                    "punt_end_of_carrier": punt_end_of_carrier,
                    "punt_no_route": punt_no_route,
                    "punt_hop_limit": punt_hop_limit,
                    "punt_non_ipv6": punt_non_ipv6,
                },
                default=True,
            )
        )

    def my_usid(self, locator: int) -> None:
        self.insert(
            self.table_entry("MrcIngress.my_usid", {"dst_prefix": locator}, "MrcIngress.usid_un")
        )

    def my_sid(self, address: str) -> None:
        self.insert(
            self.table_entry(
                "MrcIngress.my_sid", {"dst_addr": int(IPv6Address(address))}, "MrcIngress.srv6_end"
            )
        )

    def usid_route(self, usid: int, port: int | None) -> None:
        """``forward(port)``, or ``to_cpu`` when ``port`` is None."""
        if port is None:
            entity = self.table_entry("MrcIngress.usid_route", {"usid": usid}, "MrcIngress.to_cpu")
        else:
            entity = self.table_entry(
                "MrcIngress.usid_route", {"usid": usid}, "MrcIngress.forward", {"port": port}
            )
        self.insert(entity)

    def ipv6_route(self, prefix: str, port: int | None) -> None:
        """LPM ``prefix`` (text, e.g. ``fd00::/16``) -> ``forward(port)`` or ``to_cpu``."""
        address, length = prefix.split("/")
        key = (int(IPv6Address(address)), int(length))
        if port is None:
            entity = self.table_entry(
                "MrcIngress.ipv6_route", {"dst_addr": key}, "MrcIngress.to_cpu"
            )
        else:
            entity = self.table_entry(
                "MrcIngress.ipv6_route", {"dst_addr": key}, "MrcIngress.forward", {"port": port}
            )
        self.insert(entity)

    def _port_config_entity(self, port: int, port_class: int, up: int) -> p4r.Entity:
        return self.table_entry(
            "MrcIngress.egress_port_config",
            {"port": port},
            "MrcIngress.set_egress_port_config",
            {"port_class": port_class, "up": up},
        )

    def egress_port_config(self, port: int, port_class: int, up: int = 1) -> None:
        self.insert(self._port_config_entity(port, port_class, up))

    def modify_egress_port_config(self, port: int, port_class: int, up: int) -> None:
        self.modify(self._port_config_entity(port, port_class, up))

    def ingress_port_status(self, port: int, up: int, *, update: str = "insert") -> None:
        entity = self.table_entry(
            "MrcIngress.ingress_port_status",
            {"port": port},
            "MrcIngress.set_ingress_port_status",
            {"up": up},
        )
        if update == "insert":
            self.insert(entity)
        else:
            self.modify(entity)

    def class_params(
        self,
        port_class: int,
        *,
        ecn_enable: int,
        ecn_min_qdepth: int,
        ecn_max_qdepth: int,
        ecn_max_prob: int,
        trim_enable: int,
        trim_qdepth: int,
        queue_limit: int,
    ) -> None:
        self.insert(
            self.table_entry(
                "MrcIngress.port_class_params",
                {"port_class": port_class},
                "MrcIngress.set_class_params",
                {
                    "ecn_enable": ecn_enable,
                    "ecn_min_qdepth": ecn_min_qdepth,
                    "ecn_max_qdepth": ecn_max_qdepth,
                    "ecn_max_prob": ecn_max_prob,
                    "trim_enable": trim_enable,
                    "trim_qdepth": trim_qdepth,
                    "queue_limit": queue_limit,
                },
            )
        )

    def port_macs(self, port: int, src_mac: str, dst_mac: str) -> None:
        self.insert(
            self.table_entry(
                "MrcEgress.egress_port_mac",
                {"port": port},
                "MrcEgress.set_port_macs",
                {"src_mac": _mac_int(src_mac), "dst_mac": _mac_int(dst_mac)},
            )
        )

    # --- traffic -----------------------------------------------------------------------

    def send(self, port: int, frame: bytes | Packet) -> None:
        self.switch.inject(port, raw(frame) if isinstance(frame, Packet) else frame)

    def run(self) -> None:
        """Let every queued packet leave (jumps the virtual clock)."""
        self.switch.run_until_idle()

    def advance(self, us: float) -> None:
        """Move the virtual clock forward, sending what is due on the way."""
        self.switch.advance(us)

    def _transmitted(self, port: int, frame: bytes) -> None:
        self.departures.append(Departure(self.clock.now_ns(), port, frame))

    def take(self, port: int | None = None) -> list[tuple[int, bytes]]:
        """Frames transmitted so far (and not taken yet), in order, optionally for one port."""
        taken = [d for d in self.departures if port is None or d.port == port]
        self.departures = [d for d in self.departures if not (port is None or d.port == port)]
        return [(d.port, d.frame) for d in taken]

    def set_port_rate(self, port: int, pps: float) -> None:
        """``set_queue_rate <pps> <port>``: every priority queue of the port (BMv2)."""
        self.switch.set_queue_rate(pps, port=port)


@dataclass(frozen=True)
class Departure:
    """A frame leaving the switch: virtual time (ns), port, bytes."""

    time_ns: int
    port: int
    frame: bytes


def _mac_int(mac: str) -> int:
    return int(mac.replace(":", ""), 16)


# --- frames ------------------------------------------------------------------------------


def _outer(
    dst: str,
    *,
    dscp: int,
    ecn: int,
    ev: int,
    hop_limit: int,
    segments: Sequence[str],
    segments_left: int | None,
    outer_src: str,
) -> Packet:
    tc = (dscp << 2) | ecn
    eth = Ether(dst=SWITCH_MAC, src=NIC_MAC, type=0x86DD)
    if not segments:
        return eth / IPv6(tc=tc, fl=ev & 0xFFFF, nh=41, hlim=hop_limit, src=outer_src, dst=dst)
    srh = IPv6ExtHdrSegmentRouting(
        nh=41,
        addresses=list(segments),
        segleft=len(segments) - 1 if segments_left is None else segments_left,
    )
    outer = IPv6(tc=tc, fl=ev & 0xFFFF, nh=43, hlim=hop_limit, src=outer_src, dst=dst)
    return eth / outer / srh


def data_frame(
    dst: str,
    *,
    psn: int = 1,
    payload_len: int = 64,
    ev: int = 0x1001_0005,
    dscp: int = Dscp.TRIMMABLE,
    ecn: int = Ecn.ECT0,
    hop_limit: int = 64,
    opcode: int = Opcode.WRITE,
    timestamp: int | None = None,
    immediate: int | None = None,
    segments: Sequence[str] = (),
    segments_left: int | None = None,
    dqpn: int = 0x11,
    outer_src: str = NIC_SRC,
    inner_dst: str = NIC_DST,
) -> bytes:
    """An MRC RDMA WRITE data frame built with scapy (docs/wire-format.md sections 1-8)."""
    inner_tc = (dscp << 2) | ecn
    packet = _outer(
        dst,
        dscp=dscp,
        ecn=ecn,
        ev=ev,
        hop_limit=hop_limit,
        segments=segments,
        segments_left=segments_left,
        outer_src=outer_src,
    )
    packet = packet / IPv6(
        tc=inner_tc, fl=ev & 0xFFFF, nh=17, hlim=64, src=outer_src, dst=inner_dst
    )
    packet = packet / UDP(sport=ev >> 16, dport=4791, chksum=0)
    packet = packet / mrc_layers.MrcBTH(
        opcode=opcode, ts=int(timestamp is not None), dqpn=dqpn, psn=psn
    )
    if timestamp is not None:
        packet = packet / mrc_layers.MrcTSETH(tx_timestamp=timestamp)
    packet = packet / mrc_layers.MrcRETH(
        va=0x1000_0000 + psn * 4096, rkey=0x77, dma_length=payload_len
    )
    if opcode == Opcode.WRITE_IMM:
        packet = packet / mrc_layers.MrcImmDt(immediate=immediate or 0)
    packet = packet / Raw(bytes((psn + i) & 0xFF for i in range(payload_len)))
    return raw(packet)


def sack_frame(dst: str, *, psn: int = 1, ev: int = 0x1001_0005, hop_limit: int = 64) -> bytes:
    """A SACK (DSCP CONTROL, Not-ECT), docs/wire-format.md section 9."""
    packet = _outer(
        dst,
        dscp=Dscp.CONTROL,
        ecn=Ecn.NOT_ECT,
        ev=ev,
        hop_limit=hop_limit,
        segments=(),
        segments_left=None,
        outer_src=NIC_SRC,
    )
    packet = packet / IPv6(tc=Dscp.CONTROL << 2, fl=ev & 0xFFFF, nh=17, src=NIC_SRC, dst=NIC_DST)
    packet = packet / UDP(sport=ev >> 16, dport=4791, chksum=0)
    packet = packet / mrc_layers.MrcBTH(opcode=Opcode.SACK, dqpn=0x11, psn=psn)
    packet = packet / mrc_layers.MrcSack(echoed_ev=ev, echoed_psn=psn)
    return raw(packet)


def probe_frame(dst: str, *, ev: int = 0x1001_0005) -> bytes:
    """A reliability probe (DSCP NO_TRIM, Not-ECT), docs/wire-format.md section 9."""
    packet = _outer(
        dst,
        dscp=Dscp.NO_TRIM,
        ecn=Ecn.NOT_ECT,
        ev=ev,
        hop_limit=64,
        segments=(),
        segments_left=None,
        outer_src=NIC_SRC,
    )
    packet = packet / IPv6(tc=Dscp.NO_TRIM << 2, fl=ev & 0xFFFF, nh=17, src=NIC_SRC, dst=NIC_DST)
    packet = packet / UDP(sport=ev >> 16, dport=4791, chksum=0)
    packet = packet / mrc_layers.MrcBTH(opcode=Opcode.PROBE, dqpn=0x11, psn=0)
    packet = packet / mrc_layers.MrcProbe(probe_id=7, probe_ev=ev)
    return raw(packet)


# --- reading what left the switch ----------------------------------------------------------


@dataclass(frozen=True)
class Outer:
    """The outer IPv6 fields the fabric may change (docs/wire-format.md section 3)."""

    dscp: int
    ecn: int
    hop_limit: int
    dst: str
    payload_len: int


def outer(frame: bytes) -> Outer:
    ip = Ether(frame)[IPv6]
    return Outer(
        dscp=ip.tc >> 2, ecn=ip.tc & 0x3, hop_limit=ip.hlim, dst=str(ip.dst), payload_len=ip.plen
    )


@dataclass(frozen=True)
class PacketIn:
    ingress_port: int
    reason: int
    frame: bytes


def packet_in(data: bytes) -> PacketIn:
    """Split a frame sent to the CPU port: 3-byte packet_in header (port 9, pad 7, reason 8)."""
    if len(data) < 3:
        raise HarnessError(f"{len(data)} bytes cannot hold a packet_in header")
    word = int.from_bytes(data[:2], "big")
    return PacketIn(ingress_port=word >> 7, reason=data[2], frame=data[3:])


def packet_out_header(egress_port: int, use_pipeline: int) -> bytes:
    """The 2-byte packet_out header: egress_port 9, use_pipeline 1, pad 6."""
    return ((egress_port << 7) | (use_pipeline << 6)).to_bytes(2, "big")


# --- configuration from the address plan ---------------------------------------------------


def program_switch(ms: MrcSwitch, plan: AddressPlan, switch: str) -> list[UsidRoute]:
    """What the controller installs on ``switch`` (p4src/README.md checklist): plane id,
    own uSID, ``routes_for`` and class HOST on every NIC-facing port."""
    info = plan.describe_usid(plan.switch_usid(switch))
    assert info.plane is not None
    ms.switch_config(plane_id=info.plane)
    ms.my_usid(plan.locator(switch))
    routes = plan.routes_for(switch)
    for route in routes:
        ms.usid_route(route.usid, route.port)
    for route in routes:
        if route.kind is RouteKind.TO_NIC:
            ms.egress_port_config(route.port, HOST)
    return routes
