"""Frame readers: single fields of an encoded MRC frame, read in place without ``decode``.

A fabric reads a few fields of every frame on every hop (its EV, DSCP and ECN, the payload
size); decoding the whole frame there would cost more than the hop itself. These readers
take the offsets of docs/wire-format.md for a frame without an SRH (Ethernet / outer IPv6
/ inner IPv6 / UDP / BTH), the form a frame has between a sending NIC and the receiving
NIC once the switch has consumed the uSID carrier; frames with an SRH, or not IPv6 in
IPv6, read as "no fields" (None, or 0 bytes of payload). ``tests/mrc_wire/test_frames.py``
checks every reader against ``decode``.
"""

from __future__ import annotations

import struct

from mrc_wire.codec import header_length
from mrc_wire.constants import ETH_LEN, IPPROTO_IPV6, IPV6_LEN, UDP_LEN, Dscp

__all__ = [
    "DATA_DSCPS",
    "DATA_HEADER_BYTES",
    "NEXT_HEADER_OFFSET",
    "RETX_DSCP",
    "TRAFFIC_CLASS_OFFSET",
    "TRIMMED_DSCPS",
    "data_bytes",
    "frame_dqpn",
    "frame_dscp",
    "frame_ev",
    "frame_inner_dst",
    "frame_inner_src",
    "frame_outer",
]

# Plain ints (not the IntEnum members): the readers compare the ints they read.
DATA_HEADER_BYTES = header_length(0)  # a data packet without an SRH: payload follows
DATA_DSCPS = frozenset({int(Dscp.TRIMMABLE), int(Dscp.TRIMMABLE_RETX), int(Dscp.NO_TRIM)})
TRIMMED_DSCPS = frozenset({int(Dscp.TRIMMED), int(Dscp.TRIMMED_LASTHOP)})
RETX_DSCP = int(Dscp.TRIMMABLE_RETX)


def dscp_mask(dscps: frozenset[int]) -> int:
    """``dscps`` as a 64-bit mask, bit ``d`` set for DSCP ``d`` (a DSCP is 6 bits): a
    membership test is then a shift, ``mask >> d & 1`` (C integers on the compiled path)."""
    if not all(0 <= d < 64 for d in dscps):
        raise ValueError(f"a DSCP is 6 bits: {sorted(dscps)}")
    return sum(1 << d for d in dscps)


#: DATA_DSCPS and TRIMMED_DSCPS as masks (:func:`dscp_mask`), the fabric's per-frame tests
DATA_DSCP_MASK = dscp_mask(DATA_DSCPS)
TRIMMED_DSCP_MASK = dscp_mask(TRIMMED_DSCPS)

# Offsets in a frame without an SRH.
TRAFFIC_CLASS_OFFSET = ETH_LEN  # outer version / traffic class / flow label
NEXT_HEADER_OFFSET = ETH_LEN + 6  # outer next header
_INNER = ETH_LEN + IPV6_LEN  # the inner IPv6 header
_INNER_SRC = _INNER + 8
_INNER_DST = _INNER_SRC + 16
_UDP_SPORT = _INNER + IPV6_LEN
_BTH = _UDP_SPORT + UDP_LEN
_DQPN = _BTH + 5  # BTH destination QP (24 bits), after opcode, flags, P_Key and a reserved byte
# From the outer IPv6 header: version / traffic class / flow label, next header, and the
# UDP source port of the inner header that follows it when there is no SRH.
_OUTER = struct.Struct(f"!I2xB{_UDP_SPORT - ETH_LEN - 7}xH")
_unpack_outer = _OUTER.unpack_from


def frame_outer(frame: bytes) -> tuple[int, int, int] | None:
    """(EV, DSCP, ECN) of a frame without an SRH, in one unpack (None for anything else:
    a frame with an SRH, or not IPv6 in IPv6, or too short)."""
    if len(frame) < _UDP_SPORT + 2:
        return None
    vtcfl, nh, sport = _unpack_outer(frame, ETH_LEN)
    if nh != IPPROTO_IPV6:
        return None
    return sport << 16 | vtcfl & 0xFFFF, vtcfl >> 22 & 0x3F, vtcfl >> 20 & 3


def frame_dscp(frame: bytes) -> int:
    """The outer DSCP (any IPv6 frame, SRH or not)."""
    return ((frame[ETH_LEN] & 0x0F) << 2) | (frame[ETH_LEN + 1] >> 6)


def frame_ev(frame: bytes) -> int | None:
    """The EV a frame carries (UDP source port : outer flow label low 16 bits)."""
    fields = frame_outer(frame)
    return None if fields is None else fields[0]


def frame_inner_src(frame: bytes) -> bytes:
    """The inner IPv6 source address (the sending NIC's), frames without an SRH."""
    return frame[_INNER_SRC : _INNER_SRC + 16]


def frame_inner_dst(frame: bytes) -> bytes:
    """The inner IPv6 destination address (the receiving NIC's port), frames without an SRH."""
    return frame[_INNER_DST : _INNER_DST + 16]


def frame_dqpn(frame: bytes) -> int:
    """The BTH destination QP, frames without an SRH."""
    return int.from_bytes(frame[_DQPN : _DQPN + 3], "big")


def data_bytes(frame: bytes) -> int:
    """RDMA payload bytes of a data frame (0 for anything else, trimmed headers included)."""
    if len(frame) <= DATA_HEADER_BYTES or frame[NEXT_HEADER_OFFSET] != IPPROTO_IPV6:
        return 0
    if frame_dscp(frame) not in DATA_DSCPS:
        return 0
    return len(frame) - DATA_HEADER_BYTES
