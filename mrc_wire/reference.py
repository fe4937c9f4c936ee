"""Byte-exact reference models of the two rewrites a fabric switch makes
(p4src/mrc_switch.p4): ``trim_frame`` and ``mark_ce``. Tests of the P4 program compare the
switch's output against them, and the NIC emulator's software fabric uses them.
"""

from __future__ import annotations

import struct

from mrc_wire.codec import DataPacket, decode, header_length
from mrc_wire.constants import ETH_LEN, IPV6_LEN, SID_LEN, SRH_FIXED_LEN, Dscp, Ecn
from mrc_wire.exceptions import EncodeError, Malformation, MalformedPacket

__all__ = ["mark_ce", "trim_frame"]

_U16 = struct.Struct("!H")
_U32 = struct.Struct("!I")


def trim_frame(frame: bytes, *, last_hop: bool = False) -> bytes:
    """What the fabric switch emits when it trims ``frame`` (p4src/mrc_switch.p4).

    Keeps everything up to and including the RETH; rewrites the outer DSCP to TRIMMED
    (TRIMMED_LASTHOP when ``last_hop``), the outer and inner IPv6 payload lengths and the
    UDP length to the kept bytes, and the UDP checksum to 0. ECN, hop limit, EV and RETH
    (whose length still says how much payload was cut) are untouched.
    """
    packet = decode(frame)
    if not isinstance(packet, DataPacket):
        raise EncodeError(f"only data packets are trimmed, not a {type(packet).__name__}")
    if packet.trimmed:
        raise EncodeError("the packet is already trimmed")
    srh_len = SRH_FIXED_LEN + SID_LEN * len(packet.segments) if packet.segments else 0
    keep = header_length(len(packet.segments), packet.timestamp is not None)
    out = bytearray(frame[:keep])
    inner_off = ETH_LEN + IPV6_LEN + srh_len
    udp_off = inner_off + IPV6_LEN
    udp_len = keep - udp_off
    (vtcfl,) = _U32.unpack_from(out, ETH_LEN)
    dscp = int(Dscp.TRIMMED_LASTHOP if last_hop else Dscp.TRIMMED)
    _U32.pack_into(out, ETH_LEN, (vtcfl & ~(0x3F << 22)) | (dscp << 22))
    _U16.pack_into(out, ETH_LEN + 4, keep - ETH_LEN - IPV6_LEN)
    _U16.pack_into(out, inner_off + 4, udp_len)
    _U16.pack_into(out, udp_off + 4, udp_len)
    _U16.pack_into(out, udp_off + 6, 0)
    return bytes(out)


def mark_ce(frame: bytes) -> bytes:
    """The switch's ECN mark: outer ECN ECT(0)/ECT(1) -> CE; other frames unchanged."""
    if len(frame) < ETH_LEN + IPV6_LEN:
        raise MalformedPacket(
            Malformation.TOO_SHORT, f"{len(frame)} bytes, need 54 to reach the ECN bits"
        )
    (vtcfl,) = _U32.unpack_from(frame, ETH_LEN)
    ecn = (vtcfl >> 20) & 0x3
    if ecn not in (Ecn.ECT0, Ecn.ECT1):
        return bytes(frame)
    out = bytearray(frame)
    _U32.pack_into(out, ETH_LEN, vtcfl | (int(Ecn.CE) << 20))
    return bytes(out)
