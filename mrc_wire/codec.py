"""Fast MRC frame codec on precompiled ``struct.Struct`` objects (no scapy on this path).

A frame is Ethernet / outer IPv6 [/ SRH] / inner IPv6 / UDP 4791 / BTH / MRC headers /
payload; docs/wire-format.md gives every byte. ``decode`` turns a frame into one of
``DataPacket``, ``Sack``, ``Nack`` or ``Probe``; the ``encode_*`` functions do the
reverse. Addresses are raw bytes (6 for a MAC, 16 for an IPv6 address) so neither side
converts on the hot path; ``ipv6_bytes`` converts once from text or an integer.

The native build (``cython.compiled``) decodes the usual frame (a ``bytes`` data packet or
SACK without an SRH) in place and writes a frame without an SRH into one allocation; every
other frame and value takes the ``struct`` code below, the reference, which the pure path
runs for everything (docs/virtual-fabric.md, "NIC cores in C").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from ipaddress import IPv6Address

import cython

from mrc_wire.constants import (
    BTH_ACK_REQ,
    BTH_LEN,
    BTH_PKEY,
    BTH_VERSION,
    DEFAULT_HOP_LIMIT,
    ETH_LEN,
    ETHERTYPE_IPV6,
    EV_MASK,
    EV_PROBE_QPN,
    IMMDT_LEN,
    INNER_HOP_LIMIT,
    IPPROTO_IPV6,
    IPPROTO_ROUTING,
    IPPROTO_UDP,
    IPV6_LEN,
    MAC_LEN,
    MRC_UDP_PORT,
    NACK_LEN,
    PROBE_LEN,
    PSN_MASK,
    QPN_MASK,
    RETH_LEN,
    SACK_LEN,
    SID_LEN,
    SRH_FIXED_LEN,
    SRH_ROUTING_TYPE,
    TSETH_LEN,
    UDP_CHECKSUM,
    UDP_LEN,
    BthFlag,
    Dscp,
    Ecn,
    NackFlag,
    Opcode,
    ProbeFlag,
    SackFlag,
)
from mrc_wire.exceptions import EncodeError, Malformation, MalformedPacket

if cython.compiled:  # the native build's in-place readers and one-allocation frames
    from cython.cimports.cpython.bytes import PyBytes_AS_STRING, PyBytes_FromStringAndSize
    from cython.cimports.cpython.list import PyList_GET_ITEM, PyList_SET_ITEM
    from cython.cimports.cpython.long import PyLong_AsLongLongAndOverflow, PyLong_CheckExact
    from cython.cimports.cpython.object import Py_TYPE, PyObject
    from cython.cimports.cpython.ref import Py_INCREF, Py_XDECREF
    from cython.cimports.libc.string import memcmp, memcpy
    from cython.cimports.mrc_wire.codec import (
        mrc_envelope_usual,
        mrc_int_in_range,
        mrc_int_u64,
        mrc_int_value,
        mrc_int_within,
    )

__all__ = [
    "DataPacket",
    "Envelope",
    "Message",
    "Nack",
    "Probe",
    "Sack",
    "decode",
    "encode",
    "encode_data",
    "encode_nack",
    "encode_probe",
    "encode_sack",
    "header_length",
    "ipv6_bytes",
]

# --- Precompiled layouts (network byte order) -------------------------------------------
# Ethernet + outer IPv6 + inner IPv6 + UDP, the whole prefix of a frame without an SRH.
_HEAD = struct.Struct("!6s6sH IHBB16s16s IHBB16s16s HHHH")
# Ethernet + outer IPv6 (used with an SRH, and by decode).
_ETH_IP6 = struct.Struct("!6s6sH IHBB16s16s")
# Inner IPv6 + UDP.
_IP6_UDP = struct.Struct("!IHBB16s16s HHHH")
# Inner IPv6 + UDP + BTH, read in one call by decode.
_IP6_UDP_BTH = struct.Struct("!IHBB16s16s HHHH BBHII")
_SRH = struct.Struct("!BBBBBBH")
_BTH_RETH = struct.Struct("!BBHII QII")
_BTH_TS_RETH = struct.Struct("!BBHII I QII")
_TSETH = struct.Struct("!I")
_RETH = struct.Struct("!QII")
_IMMDT = struct.Struct("!I")
_BTH_SACK = struct.Struct("!BBHII BBHQIIIIHH")
_SACK = struct.Struct("!BBHQIIIIHH")
_BTH_NACK = struct.Struct("!BBHII BBBBIII")
_NACK = struct.Struct("!BBBBIII")
_BTH_PROBE = struct.Struct("!BBHII BBHIII")
_PROBE = struct.Struct("!BBHIII")

assert _HEAD.size == ETH_LEN + 2 * IPV6_LEN + UDP_LEN
assert _IP6_UDP_BTH.size == IPV6_LEN + UDP_LEN + BTH_LEN
assert _SACK.size == SACK_LEN and _NACK.size == NACK_LEN and _PROBE.size == PROBE_LEN
assert _BTH_TS_RETH.size == BTH_LEN + TSETH_LEN + RETH_LEN
# decode's per-packet path: bound unpackers and folded offsets (no lookups, no arithmetic)
_unpack_eth_ip6 = _ETH_IP6.unpack_from
_unpack_ip6_udp_bth = _IP6_UDP_BTH.unpack_from
_unpack_reth = _RETH.unpack_from
_unpack_sack = _SACK.unpack_from
_unpack_nack = _NACK.unpack_from
_unpack_probe = _PROBE.unpack_from
_pack_head = _HEAD.pack
_OUTER_END = ETH_LEN + IPV6_LEN  # where the SRH or the inner IPv6 header starts
_HEAD_LEN = _HEAD.size  # where the BTH starts in a frame without an SRH
_INNER_TO_BTH_END = IPV6_LEN + UDP_LEN + BTH_LEN

_IPV6_VERSION_BITS = 6 << 28
_MAX_IPV6_PAYLOAD = 0xFFFF
_BTH_VERSION_MASK = 0x0F
_BTH_FLAG_RTX = int(BthFlag.RTX)
_BTH_FLAG_TS = int(BthFlag.TS)
_BTH_FLAG_LAST = int(BthFlag.LAST)
_OP_WRITE = int(Opcode.WRITE)
_OP_WRITE_IMM = int(Opcode.WRITE_IMM)
_OP_SACK = int(Opcode.SACK)
_OP_NACK = int(Opcode.NACK)
_OP_PROBE = int(Opcode.PROBE)
# Plain ints: operations on IntFlag/IntEnum members build enum objects (slow).
_SACK_ECN_ECHO = int(SackFlag.ECN_ECHO)
_SACK_ALWAYS_SKIP = int(SackFlag.ALWAYS_SKIP)
_SACK_TS_VALID = int(SackFlag.TS_VALID)
_SACK_PROBE_REPLY = int(SackFlag.PROBE_REPLY)
_NACK_ECN_ECHO = int(NackFlag.ECN_ECHO)
_NACK_TS_VALID = int(NackFlag.TS_VALID)
_PROBE_REPLY = int(ProbeFlag.REPLY)
_DSCP_TRIMMED = int(Dscp.TRIMMED)
_DSCP_TRIMMED_LASTHOP = int(Dscp.TRIMMED_LASTHOP)
_MAX_SRH_SIDS = 127  # hdr_ext_len (8 bits) = 2 x SIDs must fit
# the native build's decoder: the addresses it made last (_address6, _address16), a
# power of two of slots (a NIC node meets a few dozen addresses); a slot is the top bits
# of a multiplicative hash of the address's words (the 64-bit golden ratio, odd: every
# bit of the words reaches the top bits)
_ADDRESS_SLOTS = 1024
assert MAC_LEN == 6  # _head_native and _address6 copy and read a MAC as 6 literal bytes
_ADDRESS_SLOT_SHIFT64 = 64 - (_ADDRESS_SLOTS.bit_length() - 1)
_ADDRESS_MIX = 0x9E3779B97F4A7C15
_addresses: list[bytes] = [b""] * _ADDRESS_SLOTS
# and the int objects it made last (_int_object), as many slots; -1 (no value read from
# a frame, which are unsigned) in every slot at first
_ints: list[int] = [-1] * _ADDRESS_SLOTS
# the native build's readers and writers: the wire's constants as C values (codec.pxd)
_ETHERTYPE = ETHERTYPE_IPV6
_IPPROTO_IPV6 = IPPROTO_IPV6
_IPPROTO_UDP = IPPROTO_UDP
_UDP_PORT = MRC_UDP_PORT
_INNER_HOP = INNER_HOP_LIMIT
_UDP_CSUM = UDP_CHECKSUM
_MAC_LEN = MAC_LEN
_IPV6_LEN = IPV6_LEN
_UDP_LEN = UDP_LEN
_BTH_VERSION = BTH_VERSION
_TSETH_LEN = TSETH_LEN
_RETH_LEN = RETH_LEN
_IMMDT_LEN = IMMDT_LEN
_SACK_LEN = SACK_LEN
_PSN_MASK = PSN_MASK
_EV_MASK = EV_MASK
_LOW32 = 0xFFFF_FFFF  # _put64's low word
_BTH_LEN = BTH_LEN
_BTH_PKEY = BTH_PKEY
_QPN_MASK = QPN_MASK


# --- Messages -------------------------------------------------------------------------------


# The messages are dataclasses in the form Cython compiles as extension types (codec.pxd
# declares their fields, in this order): keyword-only, no slots (Cython makes the fields a
# C struct), and no field declared again in a subclass, so each kind declares its own
# ``dscp`` and ``ecn`` (their defaults differ by kind) after the envelope's fields.


@dataclass(kw_only=True)
class Envelope:
    """Fields every MRC frame has: Ethernet, outer IPv6 (+SRH), inner IPv6, UDP, BTH DQPN;
    and ``dscp`` and ``ecn``, which each kind declares with its own default.

    ``dscp``/``ecn``/``hop_limit`` are the outer header's (what the fabric sets and the
    receiver reads). ``ev`` is the 32-bit entropy value: high 16 bits in the UDP source
    port, low 16 bits in the flow label. ``segments`` is the SRH segment list as on the
    wire (Segment List[0] first); empty means no SRH.
    """

    dst_mac: bytes
    src_mac: bytes
    outer_src: bytes
    outer_dst: bytes
    inner_src: bytes
    inner_dst: bytes
    ev: int
    hop_limit: int = DEFAULT_HOP_LIMIT
    segments: tuple[bytes, ...] = ()
    segments_left: int = 0
    dqpn: int


@dataclass(kw_only=True)
class DataPacket(Envelope):
    """RDMA WRITE data: opcode WRITE, or WRITE_IMM with ``immediate`` (the ImmDt).

    ``dma_length`` is the RETH length: the payload bytes this packet carries, or carried
    before a switch trimmed it. ``timestamp`` is the TSETH value (None: no TSETH). A
    trimmed WRITE_IMM keeps its opcode but has lost its ImmDt (``immediate`` is None).
    """

    dscp: int = Dscp.TRIMMABLE
    ecn: int = Ecn.ECT0
    opcode: int = Opcode.WRITE
    psn: int
    va: int
    rkey: int
    dma_length: int
    rtx: bool = False
    ack_req: bool = False
    last: bool = False
    timestamp: int | None = None
    immediate: int | None = None
    payload: bytes = b""

    @property
    def trimmed(self) -> bool:
        """True when a switch cut this packet to its header (DSCP TRIMMED[_LASTHOP])."""
        return self.dscp == _DSCP_TRIMMED or self.dscp == _DSCP_TRIMMED_LASTHOP

    @property
    def trimmed_lasthop(self) -> bool:
        return self.dscp == _DSCP_TRIMMED_LASTHOP


@dataclass(kw_only=True)
class Sack(Envelope):
    """Selective ACK. ``cum_psn`` is the next PSN expected (all before it received); bit i
    of ``bitmap`` (LSB = bit 0) stands for PSN ``cum_psn + sack_offset + i`` (mod 2^24)."""

    dscp: int = Dscp.CONTROL
    ecn: int = Ecn.NOT_ECT
    cum_psn: int
    sack_offset: int = 0
    bitmap: int = 0
    echoed_ev: int
    echoed_psn: int = 0
    echoed_ts: int | None = None
    rcvd_bytes: int = 0
    ecn_echo: bool = False
    always_skip: bool = False
    probe_reply: bool = False
    port_status: int = 0xFF
    rcv_cwnd_pen: int = 0
    ooo_count: int = 0


@dataclass(kw_only=True)
class Nack(Envelope):
    """Negative ACK of ``nack_psn`` with a UET reason code (``NackReason``)."""

    dscp: int = Dscp.CONTROL
    ecn: int = Ecn.NOT_ECT
    cum_psn: int
    nack_psn: int
    reason: int
    echoed_ev: int
    echoed_ts: int | None = None
    ecn_echo: bool = False
    port_status: int = 0xFF


@dataclass(kw_only=True)
class Probe(Envelope):
    """Reliability probe (to the peer's QPN; answered by a SACK with ``probe_reply``) or EV
    probe (to QPN 0x2; answered by a Probe with ``reply`` set and the same ``probe_id``,
    ``probe_ev`` and ``timestamp``). ``psn`` is informative: probes consume no PSN."""

    dscp: int = Dscp.NO_TRIM
    ecn: int = Ecn.NOT_ECT
    psn: int = 0
    reply: bool = False
    probe_id: int = 0
    probe_ev: int = 0
    timestamp: int = 0
    port_status: int = 0xFF

    @property
    def is_ev_probe(self) -> bool:
        return self.dqpn == EV_PROBE_QPN


Message = DataPacket | Sack | Nack | Probe


# --- Helpers --------------------------------------------------------------------------------


def ipv6_bytes(address: str | int | IPv6Address | bytes) -> bytes:
    """The 16 wire bytes of an IPv6 address given as text, integer, IPv6Address or bytes."""
    if isinstance(address, bytes):
        if len(address) != 16:
            raise EncodeError(f"an IPv6 address is 16 bytes, got {len(address)}")
        return address
    try:
        return IPv6Address(address).packed
    except ValueError as exc:
        raise EncodeError(f"{address!r} is not an IPv6 address: {exc}") from None


def header_length(segments: int = 0, timestamp: bool = False) -> int:
    """Bytes a trimmed data packet keeps: everything up to and including the RETH."""
    srh = SRH_FIXED_LEN + SID_LEN * segments if segments else 0
    return (
        ETH_LEN
        + IPV6_LEN
        + srh
        + IPV6_LEN
        + UDP_LEN
        + BTH_LEN
        + (TSETH_LEN if timestamp else 0)
        + RETH_LEN
    )


def _bad(reason: Malformation, detail: str) -> MalformedPacket:
    return MalformedPacket(reason, detail)


def _check_range(name: str, value: int, limit: int) -> None:
    if not 0 <= value <= limit:
        raise EncodeError(f"{name} must be in 0..{limit:#x}, got {value!r}")


def _check_envelope(m: Envelope, dscp: int, ecn: int) -> None:
    # The usual frame in one expression (no SRH, every field in range); anything else
    # goes through the field-by-field checks, which name what is wrong. ``dscp`` and
    # ``ecn`` are the message's (each kind declares its own). Compiled, each range is read
    # in C (_in_range: an exact int in C, anything else by Python's comparison).
    if (
        len(m.dst_mac) == _MAC_LEN
        and len(m.src_mac) == _MAC_LEN
        and len(m.outer_src) == 16
        and len(m.outer_dst) == 16
        and len(m.inner_src) == 16
        and len(m.inner_dst) == 16
        and _in_range(m.ev, _EV_MASK)
        and _in_range(dscp, 0x3F)
        and _in_range(ecn, 0x3)
        and _in_range(m.hop_limit, 0xFF)
        and _in_range(m.dqpn, _QPN_MASK)
        and not m.segments
        and not m.segments_left
    ):
        return
    _check_envelope_fields(m, dscp, ecn)


def _check_native(m: Envelope, dscp: int, ecn: int) -> None:
    """:func:`_check_envelope` of a message :func:`_native_frame` accepted (no SRH, every
    address ``bytes``): its lengths read from the bytes objects and ``segments_left``'s
    zero in C; anything else (a wrong length, a field out of range, a ``segments_left``
    that is not an exact 0) goes through the field-by-field checks, which raise as
    :func:`_check_envelope` does or accept what it accepts."""
    segments_left = 0
    if (
        len(cython.cast(bytes, m.dst_mac)) == _MAC_LEN
        and len(cython.cast(bytes, m.src_mac)) == _MAC_LEN
        and len(cython.cast(bytes, m.outer_src)) == 16
        and len(cython.cast(bytes, m.outer_dst)) == 16
        and len(cython.cast(bytes, m.inner_src)) == 16
        and len(cython.cast(bytes, m.inner_dst)) == 16
        and _in_range(m.ev, _EV_MASK)
        and _in_range(dscp, 0x3F)
        and _in_range(ecn, 0x3)
        and _in_range(m.hop_limit, 0xFF)
        and _in_range(m.dqpn, _QPN_MASK)
        and _as_c_int(m.segments_left, cython.address(segments_left))
        and segments_left == 0  # an int 0 (anything else falsy: the checks below)
    ):
        return
    _check_envelope_fields(m, dscp, ecn)


def _check_envelope_fields(m: Envelope, dscp: int, ecn: int) -> None:
    # struct's "16s" silently pads or cuts, so lengths are checked by hand.
    if len(m.dst_mac) != MAC_LEN or len(m.src_mac) != MAC_LEN:
        raise EncodeError(
            f"MAC addresses are 6 bytes, got dst {len(m.dst_mac)} / src {len(m.src_mac)}"
        )
    for name in ("outer_src", "outer_dst", "inner_src", "inner_dst"):
        if len(getattr(m, name)) != 16:
            raise EncodeError(f"{name} must be 16 bytes, got {len(getattr(m, name))}")
    _check_range("ev", m.ev, EV_MASK)
    _check_range("dscp", dscp, 0x3F)
    _check_range("ecn", ecn, 0x3)
    _check_range("hop_limit", m.hop_limit, 0xFF)
    _check_range("dqpn", m.dqpn, QPN_MASK)
    if m.segments:
        if len(m.segments) > _MAX_SRH_SIDS:
            raise EncodeError(f"an SRH holds at most {_MAX_SRH_SIDS} segments")
        for sid in m.segments:
            if len(sid) != SID_LEN:
                raise EncodeError(f"an SRH segment is 16 bytes, got {len(sid)}")
        _check_range("segments_left", m.segments_left, len(m.segments))
    elif m.segments_left:
        raise EncodeError("segments_left is set but there are no SRH segments")


def _wrap(m: Envelope, dscp: int, ecn: int, transport: bytes, payload: bytes) -> bytes:
    """Put Ethernet / outer IPv6 [/ SRH] / inner IPv6 / UDP in front of the transport
    headers (BTH and after) and the payload, copying the payload once; ``dscp`` and
    ``ecn`` are the message's."""
    _check_envelope(m, dscp, ecn)
    if cython.compiled and _native_frame(m, dscp, ecn, payload):
        return _wrap_native(m, dscp, ecn, transport, payload)
    ev = m.ev
    udp_len = UDP_LEN + len(transport) + len(payload)
    # The inner header copies the outer traffic class and flow label (docs/wire-format.md).
    vtcfl = _IPV6_VERSION_BITS | (dscp << 22) | (ecn << 20) | (ev & 0xFFFF)
    if not m.segments:
        if IPV6_LEN + udp_len > _MAX_IPV6_PAYLOAD:
            raise EncodeError(f"payload too large: outer IPv6 payload {IPV6_LEN + udp_len}")
        head = _pack_head(
            m.dst_mac,
            m.src_mac,
            ETHERTYPE_IPV6,
            vtcfl,
            IPV6_LEN + udp_len,
            IPPROTO_IPV6,
            m.hop_limit,
            m.outer_src,
            m.outer_dst,
            vtcfl,
            udp_len,
            IPPROTO_UDP,
            INNER_HOP_LIMIT,
            m.inner_src,
            m.inner_dst,
            ev >> 16,
            MRC_UDP_PORT,
            udp_len,
            UDP_CHECKSUM,
        )
        return b"".join((head, transport, payload))
    nsids = len(m.segments)
    srh = _SRH.pack(IPPROTO_IPV6, 2 * nsids, SRH_ROUTING_TYPE, m.segments_left, nsids - 1, 0, 0)
    outer_payload = len(srh) + SID_LEN * nsids + IPV6_LEN + udp_len
    if outer_payload > _MAX_IPV6_PAYLOAD:
        raise EncodeError(f"payload too large: outer IPv6 payload {outer_payload}")
    outer = _ETH_IP6.pack(
        m.dst_mac,
        m.src_mac,
        ETHERTYPE_IPV6,
        vtcfl,
        outer_payload,
        IPPROTO_ROUTING,
        m.hop_limit,
        m.outer_src,
        m.outer_dst,
    )
    inner = _IP6_UDP.pack(
        vtcfl,
        udp_len,
        IPPROTO_UDP,
        INNER_HOP_LIMIT,
        m.inner_src,
        m.inner_dst,
        ev >> 16,
        MRC_UDP_PORT,
        udp_len,
        UDP_CHECKSUM,
    )
    return b"".join((outer, srh, *m.segments, inner, transport, payload))


def _wrap_native(m: Envelope, dscp: int, ecn: int, transport: bytes, payload: bytes) -> bytes:
    """The native build's :func:`_wrap` of a frame without an SRH (its envelope checked):
    the same bytes as ``_HEAD.pack`` and the join, in one allocation
    (tests/mrc_wire/test_wire_codec.py checks both ways on the native path)."""
    out = _head_native(m, dscp, ecn, len(transport), payload)
    b = cython.cast(cython.p_uchar, PyBytes_AS_STRING(out))
    memcpy(b + _HEAD_LEN, PyBytes_AS_STRING(transport), len(transport))
    return out


def _head_native(m: Envelope, dscp: int, ecn: int, transport_len: int, payload: bytes) -> bytes:
    """The native build's frame without an SRH of ``transport_len`` bytes of transport
    headers (BTH and after) and ``payload``, allocated once at its final size: its
    Ethernet / IPv6 / IPv6 / UDP headers and payload written, the transport headers left
    to the caller (at ``_HEAD_LEN``); ``m``'s envelope is checked."""
    udp_len = _UDP_LEN + transport_len + len(payload)
    if _IPV6_LEN + udp_len > _MAX_IPV6_PAYLOAD:
        raise EncodeError(f"payload too large: outer IPv6 payload {_IPV6_LEN + udp_len}")
    ev = m.ev
    vtcfl = _IPV6_VERSION_BITS | (dscp << 22) | (ecn << 20) | (ev & 0xFFFF)
    out = PyBytes_FromStringAndSize(cython.NULL, _HEAD_LEN + transport_len + len(payload))
    b = cython.cast(cython.p_uchar, PyBytes_AS_STRING(out))
    # the sizes literals (_MAC_LEN, 16): the C compiler copies them inline, no memcpy call
    memcpy(b, PyBytes_AS_STRING(m.dst_mac), 6)
    memcpy(b + 6, PyBytes_AS_STRING(m.src_mac), 6)
    _put16(b, 12, _ETHERTYPE)
    _put32(b, 14, vtcfl)  # outer IPv6
    _put16(b, 18, _IPV6_LEN + udp_len)
    b[20] = _IPPROTO_IPV6
    b[21] = m.hop_limit
    memcpy(b + 22, PyBytes_AS_STRING(m.outer_src), 16)
    memcpy(b + 38, PyBytes_AS_STRING(m.outer_dst), 16)
    _put32(b, 54, vtcfl)  # inner IPv6
    _put16(b, 58, udp_len)
    b[60] = _IPPROTO_UDP
    b[61] = _INNER_HOP
    memcpy(b + 62, PyBytes_AS_STRING(m.inner_src), 16)
    memcpy(b + 78, PyBytes_AS_STRING(m.inner_dst), 16)
    _put16(b, 94, ev >> 16)  # UDP
    _put16(b, 96, _UDP_PORT)
    _put16(b, 98, udp_len)
    _put16(b, 100, _UDP_CSUM)
    memcpy(b + _HEAD_LEN + transport_len, PyBytes_AS_STRING(payload), len(payload))
    return out


def _in_range(value: object, limit: int) -> bool:
    """``0 <= value <= limit`` (``limit`` below 2**64). Compiled, an exact ``int`` that
    fits a C ``long long`` is compared in C from its digits (``mrc_int_in_range``, inline in
    every encoder); an ``int`` subclass that compares as an ``int`` (its type's comparison
    is ``int``'s: ``bool``, an ``IntEnum`` such as ``Dscp``) and fits is compared in C, with
    no Python comparison; any other value (wider, a subclass with its own comparison, not
    an int) is compared by Python, with its errors; the pure path compares every value by
    Python."""
    if cython.compiled and PyLong_CheckExact(value):
        found = mrc_int_in_range(value, limit)  # in C (codec.pxd); -1: wider than 64 bits
        if found >= 0:
            return found == 1
    return _in_range_any(value, limit)


def _as_c_int(value: object, out: cython.pointer(cython.longlong)) -> bool:
    """Compiled: ``value``'s value into ``*out`` when it is an ``int`` whose comparisons are
    ``int``'s (exact: its digits read inline, ``mrc_int_value``; ``bool``, an ``IntEnum``)
    and fits a C ``long long``: True, and C comparisons of ``*out`` then answer as
    Python's would. False for anything else, which the caller compares by Python."""
    if PyLong_CheckExact(value) and mrc_int_value(value, out):
        return True
    return _as_c_int_any(value, out)


def _as_c_int_any(value: object, out: cython.pointer(cython.longlong)) -> bool:
    """:func:`_as_c_int` of a value whose digits are not read inline (out of line: the
    native build inlines :func:`_as_c_int`'s usual case)."""
    if isinstance(value, int) and (
        PyLong_CheckExact(value) or Py_TYPE(value).tp_richcompare == Py_TYPE(0).tp_richcompare
    ):
        overflow: cython.int = 0
        out[0] = PyLong_AsLongLongAndOverflow(value, cython.address(overflow))
        return not overflow
    return False


def _as_c_u32(value: object, out: cython.pointer(cython.longlong)) -> bool:
    """:func:`_as_c_int` of a value that must be a 32-bit unsigned field: True only when
    it is read so and lies in ``[0, 2**32)``; False otherwise (the caller then packs by
    ``struct``, whose checks raise as the reference does)."""
    return _as_c_int(value, out) and out[0] >= 0 and cython.cast(cython.ulonglong, out[0]) <= _LOW32


def _data_rules_hold(p: DataPacket) -> bool:
    """Compiled: :func:`encode_data`'s rules on the opcode, a trimmed packet and the
    payload's length, with the opcode, DSCP and ``dma_length`` read in C
    (:func:`_as_c_int`) and the payload ``bytes``: True when they hold. False when they
    do not or a value is not read so; the reference's checks then run (and raise, or
    pass as they do: this test has no side effect and raises nothing)."""
    opcode = 0
    dscp = 0
    dma_length = 0
    payload = p.payload
    if not (
        type(payload) is bytes  # its length then read from the object (PyBytes_GET_SIZE)
        and _as_c_int(p.opcode, cython.address(opcode))
        and _as_c_int(p.dscp, cython.address(dscp))
        and _as_c_int(p.dma_length, cython.address(dma_length))
    ):
        return False
    if opcode != _OP_WRITE and opcode != _OP_WRITE_IMM:
        return False
    size = len(cython.cast(bytes, payload))
    if dscp in (_DSCP_TRIMMED, _DSCP_TRIMMED_LASTHOP):  # compiled, C comparisons
        return size == 0 and p.immediate is None
    return size == dma_length and (opcode == _OP_WRITE_IMM) == (p.immediate is not None)


def _in_range_any(value: object, limit: int) -> bool:
    """:func:`_in_range` of a value that is not an exact ``int`` of at most 64 bits (out of
    line: the native build inlines :func:`_in_range`'s usual case)."""
    if (
        cython.compiled
        and isinstance(value, int)
        and Py_TYPE(value).tp_richcompare == Py_TYPE(0).tp_richcompare  # int's own
    ):
        overflow: cython.int = 0
        small = PyLong_AsLongLongAndOverflow(value, cython.address(overflow))
        if not overflow:
            return small >= 0 and cython.cast(cython.ulonglong, small) <= limit
    return 0 <= value <= limit


def _as_c_u64(value: object, out: cython.pointer(cython.ulonglong)) -> bool:
    """Compiled: an exact ``int`` from 0 to 2**64 - 1 into ``*out`` (its digits read in C,
    ``mrc_int_u64``): True; anything else False (the caller packs it another way)."""
    return PyLong_CheckExact(value) and mrc_int_u64(value, out) == 1


# The native writers read each field once as a C integer (_as_c_int, _as_c_u64) and
# check its range in C (against C constants, _LOW32 an unsigned one: a literal past
# 2**31 is a Python int to Cython, and its comparison a Python one); a field not read so (not an int that compares as int, too wide)
# or out of range makes them return None, and the encoder then packs the message with
# struct, as the reference does, with its errors. The fields the encoder range-checked
# before (a PSN, a key, a length) need only be read.


def _data_native(p: DataPacket, opcode: int, flags: int, psn_word: int) -> bytes | None:
    """The native build's :func:`encode_data` once its checks passed: the whole frame
    written in place, or None where ``struct`` (and then ``_wrap``) would refuse a field
    or the frame has an SRH (``encode_data`` then packs it as the reference does)."""
    timestamp = p.timestamp
    immediate = p.immediate
    op = dqpn = psn = rkey = dma_length = ts = imm = 0
    va = 0
    usual = _envelope_usual(p, p.dscp, p.ecn, p.payload)
    if not (
        (usual or _native_frame(p, p.dscp, p.ecn, p.payload))
        and _as_c_int(opcode, cython.address(op))
        and _as_c_int(p.dqpn, cython.address(dqpn))
        and 0 <= dqpn <= _QPN_MASK
        and _as_c_int(psn_word, cython.address(psn))
        and _as_c_u64(p.va, cython.address(va))
        and _as_c_int(p.rkey, cython.address(rkey))
        and _as_c_int(p.dma_length, cython.address(dma_length))
        and (timestamp is None or _as_c_u32(timestamp, cython.address(ts)))
        and (immediate is None or _as_c_u32(immediate, cython.address(imm)))
    ):
        return None
    if not usual:  # else _check_native's checks hold (_envelope_usual)
        _check_native(p, p.dscp, p.ecn)
    size = _BTH_LEN + _RETH_LEN
    if timestamp is not None:
        size += _TSETH_LEN
        flags |= _BTH_FLAG_TS
    if immediate is not None:
        size += _IMMDT_LEN
    out = _head_native(p, p.dscp, p.ecn, size, p.payload)
    b = cython.cast(cython.p_uchar, PyBytes_AS_STRING(out))
    off = _HEAD_LEN
    _put_bth(b, off, op, flags, dqpn, psn)
    off += _BTH_LEN
    if timestamp is not None:
        _put32(b, off, ts)  # TSETH
        off += _TSETH_LEN
    _put64(b, off, va)  # RETH
    _put32(b, off + 8, rkey)
    _put32(b, off + 12, dma_length)
    if immediate is not None:
        _put32(b, off + _RETH_LEN, imm)  # ImmDt
    return out


def _sack_native(s: Sack, flags: int) -> bytes | None:
    """The native build's :func:`encode_sack` once its checks passed, as
    :func:`_data_native` (None: ``struct`` packs it)."""
    echoed_ts = s.echoed_ts
    dqpn = cum_psn = port_status = sack_offset = echoed_ev = ts = rcvd = 0
    echoed_psn = pen = ooo = 0
    bitmap = 0
    usual = _envelope_usual(s, s.dscp, s.ecn, b"")
    if not (
        (usual or _native_frame(s, s.dscp, s.ecn, b""))
        and _as_c_int(s.dqpn, cython.address(dqpn))
        and 0 <= dqpn <= _QPN_MASK
        and _as_c_int(s.cum_psn, cython.address(cum_psn))
        and _as_c_int(s.port_status, cython.address(port_status))
        and 0 <= port_status <= 0xFF
        and _as_c_int(s.sack_offset, cython.address(sack_offset))
        and 0 <= sack_offset <= 0xFFFF
        and _as_c_u64(s.bitmap, cython.address(bitmap))
        and _as_c_u32(s.echoed_ev, cython.address(echoed_ev))
        and (echoed_ts is None or _as_c_u32(echoed_ts, cython.address(ts)))
        and _as_c_u32(s.rcvd_bytes, cython.address(rcvd))
        and _as_c_int(s.echoed_psn, cython.address(echoed_psn))
        and _as_c_int(s.rcv_cwnd_pen, cython.address(pen))
        and _as_c_int(s.ooo_count, cython.address(ooo))
        and 0 <= ooo <= 0xFFFF
    ):
        return None
    if not usual:  # else _check_native's checks hold (_envelope_usual)
        _check_native(s, s.dscp, s.ecn)
    out = _head_native(s, s.dscp, s.ecn, _BTH_LEN + _SACK_LEN, b"")
    b = cython.cast(cython.p_uchar, PyBytes_AS_STRING(out))
    off = _HEAD_LEN
    _put_bth(b, off, _OP_SACK, _BTH_VERSION, dqpn, cum_psn)
    off += _BTH_LEN
    b[off] = flags  # the SACK header
    b[off + 1] = port_status
    _put16(b, off + 2, sack_offset)
    _put64(b, off + 4, bitmap)
    _put32(b, off + 12, echoed_ev)
    _put32(b, off + 16, ts)  # 0 without an echoed timestamp
    _put32(b, off + 20, rcvd)
    _put32(b, off + 24, (pen << 24) | echoed_psn)
    _put16(b, off + 28, ooo)
    _put16(b, off + 30, 0)
    return out


def _envelope_usual(m: Envelope, dscp: object, ecn: object, payload: object) -> bool:
    """Compiled only: True when the envelope is the usual one, read in C with no reference
    taken (``mrc_envelope_usual``, ``mrc_int_within`` in codec.pxd): six addresses of
    ``bytes`` at their sizes, no SRH, ``payload`` bytes, and ``ev``, ``dscp``, ``ecn``,
    ``hop_limit`` and ``dqpn`` ints that compare as ``int`` does, in range. Then
    :func:`_native_frame` and :func:`_check_native` both pass, and need not run; False
    for anything else (they run and decide, with their errors)."""
    return (
        mrc_envelope_usual(
            cython.cast(cython.pointer(PyObject), m.dst_mac),
            cython.cast(cython.pointer(PyObject), m.src_mac),
            cython.cast(cython.pointer(PyObject), m.outer_src),
            cython.cast(cython.pointer(PyObject), m.outer_dst),
            cython.cast(cython.pointer(PyObject), m.inner_src),
            cython.cast(cython.pointer(PyObject), m.inner_dst),
            cython.cast(cython.pointer(PyObject), m.segments),
            cython.cast(cython.pointer(PyObject), m.segments_left),
            cython.cast(cython.pointer(PyObject), payload),
        )
        and mrc_int_within(cython.cast(cython.pointer(PyObject), m.ev), _EV_MASK)
        and mrc_int_within(cython.cast(cython.pointer(PyObject), dscp), 0x3F)
        and mrc_int_within(cython.cast(cython.pointer(PyObject), ecn), 0x3)
        and mrc_int_within(cython.cast(cython.pointer(PyObject), m.hop_limit), 0xFF)
        and mrc_int_within(cython.cast(cython.pointer(PyObject), m.dqpn), _QPN_MASK)
    ) != 0


def _native_frame(m: Envelope, dscp: int, ecn: int, payload: object) -> bool:
    """True when :func:`_wrap_native` makes the frame: no SRH, every address ``bytes`` and
    every number an ``int`` (anything else goes through ``struct``, whose errors stay)."""
    return (
        not m.segments
        and type(payload) is bytes
        and type(m.dst_mac) is bytes
        and type(m.src_mac) is bytes
        and type(m.outer_src) is bytes
        and type(m.outer_dst) is bytes
        and type(m.inner_src) is bytes
        and type(m.inner_dst) is bytes
        and isinstance(m.ev, int)
        and isinstance(m.hop_limit, int)
        and isinstance(dscp, int)
        and isinstance(ecn, int)
    )


def _put16(b: bytearray, off: int, value: int) -> None:
    """The native build's big-endian 16-bit store."""
    b[off] = (value >> 8) & 0xFF
    b[off + 1] = value & 0xFF


def _put32(b: bytearray, off: int, value: int) -> None:
    """The native build's big-endian 32-bit store."""
    b[off] = (value >> 24) & 0xFF
    b[off + 1] = (value >> 16) & 0xFF
    b[off + 2] = (value >> 8) & 0xFF
    b[off + 3] = value & 0xFF


def _put_bth(b: bytearray, off: int, opcode: int, flags: int, dqpn: int, psn_word: int) -> None:
    """The native build's BTH at ``off``: opcode, flags byte, the partition key, the
    destination QP word and the PSN word."""
    b[off] = opcode
    b[off + 1] = flags
    _put16(b, off + 2, _BTH_PKEY)
    _put32(b, off + 4, dqpn)
    _put32(b, off + 8, psn_word)


def _put64(b: bytearray, off: int, value: int) -> None:
    """The native build's big-endian 64-bit store (``_LOW32``: a C constant, so the mask
    is a C operation; a literal that wide is a Python int to Cython)."""
    _put32(b, off, value >> 32)
    _put32(b, off + 4, value & _LOW32)


# --- Encoders -------------------------------------------------------------------------------


def encode_data(p: DataPacket) -> bytes:
    """Encode a data packet. An untrimmed packet must carry exactly ``dma_length`` bytes;
    a trimmed one (DSCP TRIMMED/TRIMMED_LASTHOP) carries none and no ImmDt."""
    in_range = (  # compiled, each range read in C (_in_range)
        _in_range(p.psn, _PSN_MASK)
        and _in_range(p.va, 0xFFFF_FFFF_FFFF_FFFF)
        and _in_range(p.rkey, 0xFFFF_FFFF)
        and _in_range(p.dma_length, 0xFFFF_FFFF)
    )
    if not in_range:
        _check_range("psn", p.psn, PSN_MASK)
        _check_range("va", p.va, 0xFFFF_FFFF_FFFF_FFFF)
        _check_range("rkey", p.rkey, 0xFFFF_FFFF)
        _check_range("dma_length", p.dma_length, 0xFFFF_FFFF)
    opcode = p.opcode
    # compiled, the usual packet's rules read in C (no Python comparison of an IntEnum
    # opcode); anything else as the reference
    if not (cython.compiled and _data_rules_hold(p)):
        if opcode != _OP_WRITE and opcode != _OP_WRITE_IMM:
            raise EncodeError(f"a data packet's opcode is WRITE or WRITE_IMM, not {opcode!r}")
        trimmed = p.dscp == _DSCP_TRIMMED or p.dscp == _DSCP_TRIMMED_LASTHOP
        if trimmed:
            if p.payload or p.immediate is not None:
                raise EncodeError("a trimmed data packet carries no payload and no immediate")
        else:
            if len(p.payload) != p.dma_length:
                raise EncodeError(
                    f"dma_length {p.dma_length} must equal the payload length {len(p.payload)}"
                )
            if (opcode == _OP_WRITE_IMM) != (p.immediate is not None):
                raise EncodeError("opcode WRITE_IMM needs an immediate, WRITE must not have one")
    flags = BTH_VERSION
    if p.rtx:
        flags |= _BTH_FLAG_RTX
    if p.last:
        flags |= _BTH_FLAG_LAST
    psn_word = p.psn | (BTH_ACK_REQ << 24 if p.ack_req else 0)
    if cython.compiled:
        frame = _data_native(p, opcode, flags, psn_word)
        if frame is not None:
            return frame
    try:
        if p.timestamp is None:
            head = _BTH_RETH.pack(
                opcode, flags, BTH_PKEY, p.dqpn, psn_word, p.va, p.rkey, p.dma_length
            )
        else:
            head = _BTH_TS_RETH.pack(
                opcode,
                flags | _BTH_FLAG_TS,
                BTH_PKEY,
                p.dqpn,
                psn_word,
                p.timestamp,
                p.va,
                p.rkey,
                p.dma_length,
            )
        if p.immediate is not None:
            head += _IMMDT.pack(p.immediate)
    except struct.error as exc:
        raise EncodeError(f"data packet field out of range: {exc}") from None
    return _wrap(p, p.dscp, p.ecn, head, p.payload)


def encode_sack(s: Sack) -> bytes:
    in_range = (  # compiled, each range read in C (_in_range)
        _in_range(s.cum_psn, _PSN_MASK)
        and _in_range(s.echoed_psn, _PSN_MASK)
        and _in_range(s.rcv_cwnd_pen, 0x7F)
    )
    if not in_range:
        _check_range("cum_psn", s.cum_psn, PSN_MASK)
        _check_range("echoed_psn", s.echoed_psn, PSN_MASK)
        _check_range("rcv_cwnd_pen", s.rcv_cwnd_pen, 0x7F)
    flags = 0
    if s.ecn_echo:
        flags |= _SACK_ECN_ECHO
    if s.always_skip:
        flags |= _SACK_ALWAYS_SKIP
    if s.echoed_ts is not None:
        flags |= _SACK_TS_VALID
    if s.probe_reply:
        flags |= _SACK_PROBE_REPLY
    if cython.compiled:
        frame = _sack_native(s, flags)
        if frame is not None:
            return frame
    try:
        body = _BTH_SACK.pack(
            _OP_SACK,
            BTH_VERSION,
            BTH_PKEY,
            s.dqpn,
            s.cum_psn,
            flags,
            s.port_status,
            s.sack_offset,
            s.bitmap,
            s.echoed_ev,
            0 if s.echoed_ts is None else s.echoed_ts,
            s.rcvd_bytes,
            (s.rcv_cwnd_pen << 24) | s.echoed_psn,
            s.ooo_count,
            0,
        )
    except struct.error as exc:
        raise EncodeError(f"SACK field out of range: {exc}") from None
    return _wrap(s, s.dscp, s.ecn, body, b"")


def encode_nack(n: Nack) -> bytes:
    _check_range("cum_psn", n.cum_psn, PSN_MASK)
    _check_range("nack_psn", n.nack_psn, PSN_MASK)
    flags = 0
    if n.ecn_echo:
        flags |= _NACK_ECN_ECHO
    if n.echoed_ts is not None:
        flags |= _NACK_TS_VALID
    try:
        body = _BTH_NACK.pack(
            _OP_NACK,
            BTH_VERSION,
            BTH_PKEY,
            n.dqpn,
            n.cum_psn,
            n.reason,
            flags,
            n.port_status,
            0,
            n.echoed_ev,
            0 if n.echoed_ts is None else n.echoed_ts,
            n.nack_psn,
        )
    except struct.error as exc:
        raise EncodeError(f"NACK field out of range: {exc}") from None
    return _wrap(n, n.dscp, n.ecn, body, b"")


def encode_probe(p: Probe) -> bytes:
    _check_range("psn", p.psn, PSN_MASK)
    try:
        body = _BTH_PROBE.pack(
            _OP_PROBE,
            BTH_VERSION,
            BTH_PKEY,
            p.dqpn,
            p.psn,
            _PROBE_REPLY if p.reply else 0,
            p.port_status,
            0,
            p.probe_id,
            p.probe_ev,
            p.timestamp,
        )
    except struct.error as exc:
        raise EncodeError(f"probe field out of range: {exc}") from None
    return _wrap(p, p.dscp, p.ecn, body, b"")


def encode(message: Message) -> bytes:
    """Encode any message (dispatch on its type)."""
    if isinstance(message, DataPacket):
        return encode_data(message)
    if isinstance(message, Sack):
        return encode_sack(message)
    if isinstance(message, Nack):
        return encode_nack(message)
    if isinstance(message, Probe):
        return encode_probe(message)
    raise EncodeError(f"cannot encode a {type(message).__name__}")


# --- Decoder --------------------------------------------------------------------------------


def _parse_srh(frame: bytes, n: int, off: int) -> tuple[tuple[bytes, ...], int, int]:
    """Validate the SRH at ``off``; return (segments, segments_left, offset after it)."""
    if n - off < SRH_FIXED_LEN:
        raise _bad(Malformation.TOO_SHORT, f"{n - off} bytes left for an 8-byte SRH")
    nh, ext_len, rtype, seg_left, last_entry, _flags, _tag = _SRH.unpack_from(frame, off)
    if rtype != SRH_ROUTING_TYPE:
        raise _bad(Malformation.BAD_SRH, f"routing type {rtype} (expected {SRH_ROUTING_TYPE})")
    nsids = last_entry + 1
    if ext_len != 2 * nsids:
        raise _bad(
            Malformation.BAD_SRH,
            f"hdr_ext_len {ext_len} does not match last_entry {last_entry} "
            f"(expected {2 * nsids}; SRH TLVs are not used by MRC)",
        )
    if seg_left > nsids:
        raise _bad(Malformation.BAD_SRH, f"segments_left {seg_left} exceeds the {nsids} segments")
    if nh != IPPROTO_IPV6:
        raise _bad(
            Malformation.WRONG_NEXT_HEADER,
            f"SRH next header {nh} (expected IPv6 {IPPROTO_IPV6})",
        )
    start = off + SRH_FIXED_LEN
    end = start + SID_LEN * nsids
    if end > n:
        raise _bad(Malformation.TOO_SHORT, f"SRH lists {nsids} segments past the frame end")
    segments = tuple(bytes(frame[i : i + SID_LEN]) for i in range(start, end, SID_LEN))
    return segments, seg_left, end


def decode(frame: bytes | bytearray | memoryview) -> Message:
    """Decode one Ethernet frame; raise ``MalformedPacket`` for anything else."""
    if cython.compiled and type(frame) is bytes:
        found = _decode_native(frame)
        if found is not None:
            return found
    return _decode(frame)


def _decode(frame: bytes | bytearray | memoryview) -> Message:
    """:func:`decode` on ``struct`` (the reference): any frame, any malformation named."""
    n = len(frame)
    if n < _OUTER_END:
        raise _bad(Malformation.TOO_SHORT, f"{n} bytes, need at least 54 for Ethernet + IPv6")
    dst_mac, src_mac, ethertype, vtcfl, plen, nh, hop, osrc, odst = _unpack_eth_ip6(frame, 0)
    if ethertype != ETHERTYPE_IPV6:
        raise _bad(Malformation.WRONG_ETHERTYPE, f"ethertype {ethertype:#06x} (expected 0x86dd)")
    if vtcfl >> 28 != 6:
        raise _bad(Malformation.WRONG_IP_VERSION, f"outer IP version {vtcfl >> 28}")
    off = _OUTER_END
    if plen != n - off:
        raise _bad(
            Malformation.LENGTH_MISMATCH,
            f"outer IPv6 payload length {plen} but {n - off} bytes follow the header",
        )
    segments: tuple[bytes, ...] = ()
    seg_left = 0
    if nh == IPPROTO_ROUTING:
        segments, seg_left, off = _parse_srh(frame, n, off)
    elif nh != IPPROTO_IPV6:
        raise _bad(
            Malformation.WRONG_NEXT_HEADER,
            f"outer next header {nh} (expected IPv6 {IPPROTO_IPV6} or routing {IPPROTO_ROUTING})",
        )
    if n - off < _INNER_TO_BTH_END:
        raise _bad(
            Malformation.TOO_SHORT,
            f"{n - off} bytes left for inner IPv6 + UDP + BTH (need 60)",
        )
    (
        ivtcfl,
        iplen,
        inh,
        _ihop,
        isrc,
        idst,
        sport,
        dport,
        ulen,
        _csum,
        opcode,
        bflags,
        _pkey,
        dqpn_word,
        psn_word,
    ) = _unpack_ip6_udp_bth(frame, off)
    if ivtcfl >> 28 != 6:
        raise _bad(Malformation.WRONG_IP_VERSION, f"inner IP version {ivtcfl >> 28}")
    if iplen != n - off - IPV6_LEN:
        raise _bad(
            Malformation.LENGTH_MISMATCH,
            f"inner IPv6 payload length {iplen} but {n - off - IPV6_LEN} bytes follow",
        )
    if inh != IPPROTO_UDP:
        raise _bad(
            Malformation.WRONG_NEXT_HEADER, f"inner next header {inh} (expected UDP {IPPROTO_UDP})"
        )
    if dport != MRC_UDP_PORT:
        raise _bad(Malformation.BAD_UDP_PORT, f"UDP destination port {dport} (expected 4791)")
    if ulen != iplen:
        raise _bad(
            Malformation.LENGTH_MISMATCH,
            f"UDP length {ulen} but inner IPv6 payload length {iplen}",
        )
    if bflags & _BTH_VERSION_MASK != BTH_VERSION:
        raise _bad(Malformation.UNSUPPORTED_VERSION, f"BTH version {bflags & _BTH_VERSION_MASK}")
    off += _INNER_TO_BTH_END
    rest = n - off
    dscp = (vtcfl >> 22) & 0x3F
    ecn = (vtcfl >> 20) & 0x3
    ev = (sport << 16) | (vtcfl & 0xFFFF)
    dqpn = dqpn_word & QPN_MASK
    # One decoder per message kind, as there is one encoder per kind: each builds its
    # message from the BTH on (its own fields) and the envelope, the fields every kind
    # shares, is set here once (``dscp`` and ``ecn``, which each kind declares, by the
    # kind's decoder). The message is made without __init__ (``cls.__new__(cls)``): on
    # this per-packet path that costs less than passing 20-odd keyword arguments, and
    # every field is set below or by the kind's decoder (tests/mrc_wire/test_wire_codec.py
    # checks each kind's fields).
    message: Message
    if opcode in (_OP_WRITE, _OP_WRITE_IMM):
        message = _decode_data(frame, off, rest, opcode, bflags, psn_word, dscp, ecn)
    elif opcode == _OP_SACK:
        message = _decode_sack(frame, off, rest, psn_word, dscp, ecn)
    elif opcode == _OP_NACK:
        message = _decode_nack(frame, off, rest, psn_word, dscp, ecn)
    elif opcode == _OP_PROBE:
        message = _decode_probe(frame, off, rest, psn_word, dscp, ecn)
    else:
        raise _bad(Malformation.UNKNOWN_OPCODE, f"BTH opcode {opcode:#04x}")
    _set_envelope(message, dst_mac, src_mac, osrc, odst, isrc, idst, ev, hop, segments, seg_left)
    message.dqpn = dqpn
    return message


def _set_envelope(
    message: Envelope,
    dst_mac: bytes,
    src_mac: bytes,
    osrc: bytes,
    odst: bytes,
    isrc: bytes,
    idst: bytes,
    ev: int,
    hop: int,
    segments: tuple[bytes, ...],
    seg_left: int,
) -> None:
    """The envelope's fields but ``dqpn``, as read from a frame."""
    message.dst_mac = dst_mac
    message.src_mac = src_mac
    message.outer_src = osrc
    message.outer_dst = odst
    message.inner_src = isrc
    message.inner_dst = idst
    message.ev = ev
    message.hop_limit = hop
    message.segments = segments
    message.segments_left = seg_left


def _decode_native(frame: bytes) -> Message | None:
    """The native build's :func:`decode` of a well-formed frame without an SRH, its fields
    read in place (no ``struct`` tuples, no intermediate integers): the same message as
    :func:`_decode`, or None for any other frame (an SRH, or anything :func:`_decode`
    refuses), which :func:`_decode` then decodes or refuses with its specific error.
    tests/mrc_wire/test_wire_codec.py compares both on valid and damaged frames."""
    n = len(frame)
    if n < _OUTER_END + _INNER_TO_BTH_END:
        return None
    b = cython.cast(cython.p_uchar, PyBytes_AS_STRING(frame))
    vtcfl = _get32(b, 14)
    if (
        _get16(b, 12) != _ETHERTYPE
        or vtcfl >> 28 != 6
        or _get16(b, 18) != n - _OUTER_END
        or b[20] != _IPPROTO_IPV6  # an SRH (or a wrong next header): _decode
    ):
        return None
    iplen = _get16(b, 58)
    bflags = b[103]
    if (
        _get32(b, 54) >> 28 != 6
        or iplen != n - _OUTER_END - _IPV6_LEN
        or b[60] != _IPPROTO_UDP
        or _get16(b, 96) != _UDP_PORT
        or _get16(b, 98) != iplen
        or bflags & _BTH_VERSION_MASK != _BTH_VERSION
    ):
        return None
    off = _OUTER_END + _INNER_TO_BTH_END
    rest = n - off
    opcode = b[102]
    psn_word = _get32(b, 110)
    dscp = (vtcfl >> 22) & 0x3F
    ecn = (vtcfl >> 20) & 0x3
    message: Message
    if opcode in (_OP_WRITE, _OP_WRITE_IMM):
        timestamp = None
        if bflags & _BTH_FLAG_TS:
            if rest < _TSETH_LEN + _RETH_LEN:
                return None
            timestamp = _get32(b, off)
            off += _TSETH_LEN
            rest -= _TSETH_LEN
        elif rest < _RETH_LEN:
            return None
        va = _get64(b, off)
        rkey = _get32(b, off + 8)
        dma_length = _get32(b, off + 12)
        off += _RETH_LEN
        rest -= _RETH_LEN
        immediate = None
        if dscp in (_DSCP_TRIMMED, _DSCP_TRIMMED_LASTHOP):
            if rest:
                return None
            payload = b""
        else:
            if opcode == _OP_WRITE_IMM:
                if rest < _IMMDT_LEN:
                    return None
                immediate = _get32(b, off)
                off += _IMMDT_LEN
                rest -= _IMMDT_LEN
            if rest != dma_length:
                return None
            # frame[off:] made directly (the slice object and its protocol skipped)
            payload = PyBytes_FromStringAndSize(PyBytes_AS_STRING(frame) + off, rest)
        message = _new_data(
            opcode,
            bflags,
            psn_word,
            dscp,
            ecn,
            va,
            _int_object(rkey),  # the connection's: the same on every packet
            _int_object(dma_length),  # the usual packet's size
            timestamp,
            immediate,
            payload,
        )
    elif opcode == _OP_SACK:
        if rest != _SACK_LEN:
            return None
        sflags = b[off]
        pen_psn = _get32(b, off + 24)
        sack: Sack = Sack.__new__(Sack)
        sack.dscp = dscp
        sack.ecn = ecn
        sack.cum_psn = psn_word & _PSN_MASK
        sack.sack_offset = _get16(b, off + 2)
        sack.bitmap = _get64(b, off + 4)
        sack.echoed_ev = _int_object(_get32(b, off + 12))  # an EV of the peer's few
        sack.echoed_psn = pen_psn & _PSN_MASK
        sack.echoed_ts = _get32(b, off + 16) if sflags & _SACK_TS_VALID else None
        sack.rcvd_bytes = _get32(b, off + 20)
        sack.ecn_echo = bool(sflags & _SACK_ECN_ECHO)
        sack.always_skip = bool(sflags & _SACK_ALWAYS_SKIP)
        sack.probe_reply = bool(sflags & _SACK_PROBE_REPLY)
        sack.port_status = b[off + 1]
        sack.rcv_cwnd_pen = (pen_psn >> 24) & 0x7F
        sack.ooo_count = _get16(b, off + 28)
        message = sack
    else:
        return None  # a NACK or a probe (one per trim, per probe interval), or no MRC opcode
    _envelope_native(message, frame, b, vtcfl)
    return message


def _envelope_native(message: Envelope, frame: bytes, b: bytes, vtcfl: int) -> None:
    """:func:`_decode_native`'s envelope of ``message``, read from ``frame`` (its bytes at
    ``b``, the outer version, class and flow label ``vtcfl``) in place."""
    outer_src = _address16(frame, b, 22)
    # the inner source is the outer one on the usual frame (a NIC's own address): its
    # bytes compared in place, the object shared (equal bytes either way)
    if memcmp(b + 22, b + 62, 16) == 0:
        inner_src = outer_src
    else:
        inner_src = _address16(frame, b, 62)
    _set_envelope(
        message,
        _address6(frame, b, 0),
        _address6(frame, b, 6),
        outer_src,
        _address16(frame, b, 38),
        inner_src,
        _address16(frame, b, 78),
        _int_object((_get16(b, 94) << 16) | (vtcfl & 0xFFFF)),  # the EV
        b[21],
        (),
        0,
    )
    message.dqpn = _int_object(_get32(b, 106) & _QPN_MASK)  # the connection's QP


def _int_object(value: int) -> int:
    """The native decoder's int object for ``value`` (read from a frame: 0 <= value <
    2**32), a field that repeats (a connection's QP and key, an EV, the usual length): the
    object made for the same value before while its slot (the top bits of
    ``value * _ADDRESS_MIX``) still holds it, else a new one kept there. An equal int
    either way (ints are immutable: sharing one is invisible)."""
    slot = (cython.cast(cython.ulonglong, value) * _ADDRESS_MIX) >> _ADDRESS_SLOT_SHIFT64
    cached = PyList_GET_ITEM(_ints, slot)  # borrowed: the list holds only exact ints
    held = -1
    if mrc_int_value(cython.cast(object, cached), cython.address(held)) and held == value:
        return cython.cast(object, cached)
    found = value
    Py_INCREF(found)  # the list's C store, the old one released
    PyList_SET_ITEM(_ints, slot, found)
    Py_XDECREF(cached)
    return found


# The native build's address readers: ``frame[off:off + size]`` (6 bytes for a MAC, 16 for
# an IPv6 address), the bytes object made for the same bytes before while its slot still
# holds it (a NIC sees the same few addresses on every packet: one object each, whose hash
# Python keeps). Equal bytes either way. The address is read as C words (memcpy of a
# fixed size: plain loads, no alignment needed), hashed to a slot (_ADDRESS_MIX's
# multiplication, the top bits) and compared with the slot's bytes word by word.


def _address6(frame: bytes, b: bytes, off: int) -> bytes:
    """A MAC address at ``off`` (see above)."""
    lo = 0
    hi = 0
    memcpy(cython.address(lo), b + off, 4)
    memcpy(cython.address(hi), b + off + 4, 2)
    slot = ((lo | cython.cast(cython.ulonglong, hi) << 32) * _ADDRESS_MIX) >> _ADDRESS_SLOT_SHIFT64
    # the slot's bytes object, borrowed (the list holds only bytes: no type test)
    found = cython.cast(bytes, PyList_GET_ITEM(_addresses, slot))
    if len(found) == 6:
        f = cython.cast(cython.p_uchar, PyBytes_AS_STRING(found))
        flo = 0
        fhi = 0
        memcpy(cython.address(flo), f, 4)
        memcpy(cython.address(fhi), f + 4, 2)
        if flo == lo and fhi == hi:
            return found
    return _address_new(frame, off, 6, slot)


def _address16(frame: bytes, b: bytes, off: int) -> bytes:
    """An IPv6 address at ``off`` (see above)."""
    w0 = 0
    w1 = 0
    memcpy(cython.address(w0), b + off, 8)
    memcpy(cython.address(w1), b + off + 8, 8)
    slot = ((w0 ^ w1 * _ADDRESS_MIX) * _ADDRESS_MIX) >> _ADDRESS_SLOT_SHIFT64
    found = cython.cast(bytes, PyList_GET_ITEM(_addresses, slot))
    if len(found) == 16:
        f = cython.cast(cython.p_uchar, PyBytes_AS_STRING(found))
        f0 = 0
        f1 = 0
        memcpy(cython.address(f0), f, 8)
        memcpy(cython.address(f1), f + 8, 8)
        if f0 == w0 and f1 == w1:
            return found
    return _address_new(frame, off, 16, slot)


def _address_new(frame: bytes, off: int, size: int, slot: int) -> bytes:
    """The address at ``off`` as a new bytes object, kept in ``slot`` (out of line: the
    readers' usual case is inline)."""
    found = frame[off : off + size]
    old = PyList_GET_ITEM(_addresses, slot)  # the list's C store, the old one released
    Py_INCREF(found)
    PyList_SET_ITEM(_addresses, slot, found)
    Py_XDECREF(old)
    return found


# The native build's big-endian reads (``value`` is a 64-bit unsigned C integer there).


def _get16(b: bytes, off: int) -> int:
    value = b[off]
    return (value << 8) | b[off + 1]


def _get32(b: bytes, off: int) -> int:
    value = b[off]
    value = (value << 8) | b[off + 1]
    value = (value << 8) | b[off + 2]
    return (value << 8) | b[off + 3]


def _get64(b: bytes, off: int) -> int:
    value = _get32(b, off)
    return (value << 32) | _get32(b, off + 4)


def _decode_data(
    frame: bytes | bytearray | memoryview,
    off: int,
    rest: int,
    opcode: int,
    bflags: int,
    psn_word: int,
    dscp: int,
    ecn: int,
) -> DataPacket:
    """A WRITE / WRITE_IMM from the BTH on: [TSETH] RETH [ImmDt] payload (``rest`` bytes)."""
    timestamp = None
    if bflags & _BTH_FLAG_TS:
        if rest < TSETH_LEN + RETH_LEN:
            raise _bad(Malformation.TOO_SHORT, f"{rest} bytes left for TSETH + RETH")
        (timestamp,) = _TSETH.unpack_from(frame, off)
        off += TSETH_LEN
        rest -= TSETH_LEN
    elif rest < RETH_LEN:
        raise _bad(Malformation.TOO_SHORT, f"{rest} bytes left for the 16-byte RETH")
    va, rkey, dma_length = _unpack_reth(frame, off)
    off += RETH_LEN
    rest -= RETH_LEN
    immediate = None
    if dscp in (_DSCP_TRIMMED, _DSCP_TRIMMED_LASTHOP):
        if rest:
            raise _bad(
                Malformation.LENGTH_MISMATCH,
                f"trimmed packet (DSCP {dscp}) has {rest} bytes after the RETH; "
                "a trimmed packet ends at the RETH",
            )
        payload = b""
    else:
        if opcode == _OP_WRITE_IMM:
            if rest < IMMDT_LEN:
                raise _bad(Malformation.TOO_SHORT, f"{rest} bytes left for the ImmDt")
            (immediate,) = _IMMDT.unpack_from(frame, off)
            off += IMMDT_LEN
            rest -= IMMDT_LEN
        if rest != dma_length:
            raise _bad(
                Malformation.LENGTH_MISMATCH,
                f"RETH length {dma_length} but {rest} payload bytes",
            )
        payload = bytes(frame[off:])
    return _new_data(
        opcode, bflags, psn_word, dscp, ecn, va, rkey, dma_length, timestamp, immediate, payload
    )


def _new_data(
    opcode: int,
    bflags: int,
    psn_word: int,
    dscp: int,
    ecn: int,
    va: int,
    rkey: int,
    dma_length: int,
    timestamp: int | None,
    immediate: int | None,
    payload: bytes,
) -> DataPacket:
    """A data packet's own fields, as read from a frame (the envelope is set after)."""
    packet: DataPacket = DataPacket.__new__(DataPacket)
    packet.dscp = dscp
    packet.ecn = ecn
    packet.psn = psn_word & _PSN_MASK  # compiled, a C operation (PSN_MASK: a Python one)
    packet.va = va
    packet.rkey = rkey
    packet.dma_length = dma_length
    packet.opcode = opcode
    packet.rtx = bool(bflags & _BTH_FLAG_RTX)
    packet.ack_req = bool(psn_word >> 31)
    packet.last = bool(bflags & _BTH_FLAG_LAST)
    packet.timestamp = timestamp
    packet.immediate = immediate
    packet.payload = payload
    return packet


def _decode_sack(
    frame: bytes | bytearray | memoryview, off: int, rest: int, psn_word: int, dscp: int, ecn: int
) -> Sack:
    """A SACK from the BTH on: its 32-byte header, nothing after it."""
    _expect_length("SACK", rest, SACK_LEN)
    (
        sflags,
        port_status,
        sack_offset,
        bitmap,
        echoed_ev,
        echoed_ts,
        rcvd_bytes,
        pen_psn,
        ooo_count,
        _reserved,
    ) = _unpack_sack(frame, off)
    sack: Sack = Sack.__new__(Sack)
    sack.dscp = dscp
    sack.ecn = ecn
    sack.cum_psn = psn_word & PSN_MASK
    sack.sack_offset = sack_offset
    sack.bitmap = bitmap
    sack.echoed_ev = echoed_ev
    sack.echoed_psn = pen_psn & PSN_MASK
    sack.echoed_ts = echoed_ts if sflags & _SACK_TS_VALID else None
    sack.rcvd_bytes = rcvd_bytes
    sack.ecn_echo = bool(sflags & _SACK_ECN_ECHO)
    sack.always_skip = bool(sflags & _SACK_ALWAYS_SKIP)
    sack.probe_reply = bool(sflags & _SACK_PROBE_REPLY)
    sack.port_status = port_status
    sack.rcv_cwnd_pen = (pen_psn >> 24) & 0x7F
    sack.ooo_count = ooo_count
    return sack


def _decode_nack(
    frame: bytes | bytearray | memoryview, off: int, rest: int, psn_word: int, dscp: int, ecn: int
) -> Nack:
    """A NACK from the BTH on: its 16-byte header, nothing after it."""
    _expect_length("NACK", rest, NACK_LEN)
    reason, nflags, port_status, _r0, echoed_ev, echoed_ts, nack_word = _unpack_nack(frame, off)
    nack: Nack = Nack.__new__(Nack)
    nack.dscp = dscp
    nack.ecn = ecn
    nack.cum_psn = psn_word & PSN_MASK
    nack.nack_psn = nack_word & PSN_MASK
    nack.reason = reason
    nack.echoed_ev = echoed_ev
    nack.echoed_ts = echoed_ts if nflags & _NACK_TS_VALID else None
    nack.ecn_echo = bool(nflags & _NACK_ECN_ECHO)
    nack.port_status = port_status
    return nack


def _decode_probe(
    frame: bytes | bytearray | memoryview, off: int, rest: int, psn_word: int, dscp: int, ecn: int
) -> Probe:
    """A probe from the BTH on: its 16-byte header, nothing after it."""
    _expect_length("probe", rest, PROBE_LEN)
    pflags, port_status, _r0, probe_id, probe_ev, timestamp = _unpack_probe(frame, off)
    probe: Probe = Probe.__new__(Probe)
    probe.dscp = dscp
    probe.ecn = ecn
    probe.psn = psn_word & PSN_MASK
    probe.reply = bool(pflags & _PROBE_REPLY)
    probe.probe_id = probe_id
    probe.probe_ev = probe_ev
    probe.timestamp = timestamp
    probe.port_status = port_status
    return probe


def _expect_length(kind: str, rest: int, size: int) -> None:
    if rest < size:
        raise _bad(Malformation.TOO_SHORT, f"{rest} bytes left for the {size}-byte {kind} header")
    if rest > size:
        raise _bad(
            Malformation.LENGTH_MISMATCH,
            f"{rest - size} bytes after the {size}-byte {kind} header",
        )
