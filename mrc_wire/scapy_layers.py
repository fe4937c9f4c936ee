"""Scapy layers for the MRC transport headers, so pcaps of the fabric dissect.

Importing this module binds the BTH to UDP destination port 4791 (ahead of scapy's
port-based guesses, because the UDP source port carries half of a random EV and may
equal 53, 123, ...). The SRH is scapy's own ``IPv6ExtHdrSegmentRouting`` (routing type
4), bound to the inner IPv6 by next header 41. Field names follow
docs/wire-format.md; this module is for tools and tests, never for the hot path.
"""

from __future__ import annotations

from scapy.fields import (
    BitField,
    ByteEnumField,
    ByteField,
    FlagsField,
    IntField,
    ShortField,
    ThreeBytesField,
    X3BytesField,
    XByteField,
    XIntField,
    XLongField,
    XShortField,
)
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrSegmentRouting
from scapy.packet import Packet, Raw, bind_layers

from mrc_wire.constants import BTH_PKEY, IPPROTO_IPV6, MRC_UDP_PORT, NackReason, Opcode

__all__ = [
    "IPv6ExtHdrSegmentRouting",
    "MrcBTH",
    "MrcImmDt",
    "MrcNack",
    "MrcProbe",
    "MrcRETH",
    "MrcSack",
    "MrcTSETH",
]

_OPCODE_NAMES = {int(op): op.name for op in Opcode}
_NACK_NAMES = {int(r): r.name for r in NackReason}
# FlagsField names are listed from bit 0 upwards.
_SACK_FLAG_NAMES = ["ecn_echo", "always_skip", "ts_valid", "probe_reply", "r4", "r5", "r6", "r7"]
_NACK_FLAG_NAMES = ["ecn_echo", "r1", "ts_valid", "r3", "r4", "r5", "r6", "r7"]
_PROBE_FLAG_NAMES = ["reply", "r1", "r2", "r3", "r4", "r5", "r6", "r7"]


class MrcBTH(Packet):
    """Base Transport Header, 12 bytes (IB BTH layout, MRC flags in byte 1)."""

    name = "MRC BTH"
    fields_desc = [
        ByteEnumField("opcode", int(Opcode.WRITE), _OPCODE_NAMES),
        BitField("rtx", 0, 1),
        BitField("ts", 0, 1),
        BitField("last", 0, 1),
        BitField("reserved0", 0, 1),
        BitField("tver", 0, 4),
        XShortField("pkey", BTH_PKEY),
        XByteField("reserved1", 0),
        X3BytesField("dqpn", 0),
        BitField("ack_req", 0, 1),
        BitField("reserved2", 0, 7),
        ThreeBytesField("psn", 0),
    ]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        if self.opcode in (Opcode.WRITE, Opcode.WRITE_IMM):
            return MrcTSETH if self.ts else MrcRETH
        if self.opcode == Opcode.SACK:
            return MrcSack
        if self.opcode == Opcode.NACK:
            return MrcNack
        if self.opcode == Opcode.PROBE:
            return MrcProbe
        return Raw


class MrcTSETH(Packet):
    """Timestamp extension (present when BTH.ts = 1): sender's 32-bit clock in ns."""

    name = "MRC TSETH"
    fields_desc = [IntField("tx_timestamp", 0)]


class MrcRETH(Packet):
    """RDMA extended transport header, in every data packet."""

    name = "MRC RETH"
    fields_desc = [
        XLongField("va", 0),
        XIntField("rkey", 0),
        IntField("dma_length", 0),
    ]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        bth = self.underlayer
        while bth is not None and not isinstance(bth, MrcBTH):
            bth = bth.underlayer
        if bth is not None and bth.opcode == Opcode.WRITE_IMM and len(payload) >= 4:
            return MrcImmDt
        return Raw


class MrcImmDt(Packet):
    """Immediate data of a WRITE_IMM packet."""

    name = "MRC ImmDt"
    fields_desc = [XIntField("immediate", 0)]


class MrcSack(Packet):
    """SACK extension header, 32 bytes (BTH.psn is the cumulative PSN)."""

    name = "MRC SACK"
    fields_desc = [
        FlagsField("flags", 0, 8, _SACK_FLAG_NAMES),
        XByteField("port_status", 0xFF),
        ShortField("sack_offset", 0),
        XLongField("bitmap", 0),
        XIntField("echoed_ev", 0),
        IntField("echoed_ts", 0),
        IntField("rcvd_bytes", 0),
        ByteField("rcv_cwnd_pen", 0),
        ThreeBytesField("echoed_psn", 0),
        ShortField("ooo_count", 0),
        XShortField("reserved", 0),
    ]


class MrcNack(Packet):
    """NACK extension header, 16 bytes (BTH.psn is the cumulative PSN)."""

    name = "MRC NACK"
    fields_desc = [
        ByteEnumField("reason", int(NackReason.TRIMMED), _NACK_NAMES),
        FlagsField("flags", 0, 8, _NACK_FLAG_NAMES),
        XByteField("port_status", 0xFF),
        XByteField("reserved0", 0),
        XIntField("echoed_ev", 0),
        IntField("echoed_ts", 0),
        XByteField("reserved1", 0),
        ThreeBytesField("nack_psn", 0),
    ]


class MrcProbe(Packet):
    """Probe extension header, 16 bytes (reliability probe or EV probe on QPN 0x2)."""

    name = "MRC Probe"
    fields_desc = [
        FlagsField("flags", 0, 8, _PROBE_FLAG_NAMES),
        XByteField("port_status", 0xFF),
        XShortField("reserved", 0),
        XIntField("probe_id", 0),
        XIntField("probe_ev", 0),
        IntField("timestamp", 0),
    ]


def _bind() -> None:
    bind_layers(UDP, MrcBTH, dport=MRC_UDP_PORT)
    # bind_layers appends; move ours to the front so an EV whose high half equals a
    # well-known port (53 -> DNS, ...) still dissects as MRC.
    entry = ({"dport": MRC_UDP_PORT}, MrcBTH)
    guesses = [g for g in UDP.payload_guess if g != entry]
    UDP.payload_guess = [entry, *guesses]
    bind_layers(MrcTSETH, MrcRETH)
    # SRH -> inner IPv6 (next header 41). Scapy's next-header logic already dissects it
    # this way; the explicit binding also fills nh when a packet is built.
    bind_layers(IPv6ExtHdrSegmentRouting, IPv6, nh=IPPROTO_IPV6)


_bind()
