"""mrc_wire.codec: round trips of every message kind, field placement, encode errors;
and mrc_wire.reference, the models of the switch rewrites (trim_frame, mark_ce), which
share this module's message builders."""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mrc_wire import (
    DataPacket,
    Dscp,
    Ecn,
    EncodeError,
    Malformation,
    MalformedPacket,
    MrcWireError,
    Nack,
    NackReason,
    Probe,
    Sack,
    decode,
    encode,
    encode_data,
    header_length,
    ipv6_bytes,
    mark_ce,
    trim_frame,
)
from mrc_wire.constants import EV_PROBE_QPN, MRC_UDP_PORT, Opcode

# --- Builders: one set of addresses, message factories ---------------------------------

ENVELOPE: dict[str, Any] = {
    "dst_mac": bytes.fromhex("0a0000001400"),
    "src_mac": bytes.fromhex("020100000001"),
    "outer_src": ipv6_bytes("fd6d:7263:0:1::1"),
    "outer_dst": ipv6_bytes("fcbb:bb00:1400:1801:1401:e201::"),
    "inner_src": ipv6_bytes("fd6d:7263:0:1::1"),
    "inner_dst": ipv6_bytes("fd6d:7263:0:1::3"),
    "ev": 0x1001_BEEF,
    "dqpn": 0x000123,
}

SEGMENTS = (
    ipv6_bytes("fcbb:bb00:1401:e201::"),
    ipv6_bytes("fcbb:bb00:1801::"),
)


def data(**overrides: Any) -> DataPacket:
    fields: dict[str, Any] = {
        **ENVELOPE,
        "psn": 0x00ABCD,
        "va": 0x7F00_0000_1000,
        "rkey": 0xCAFE_F00D,
        "dma_length": 64,
        "payload": bytes(range(64)),
    }
    fields.update(overrides)
    return DataPacket(**fields)


def sack(**overrides: Any) -> Sack:
    fields: dict[str, Any] = {**ENVELOPE, "cum_psn": 100, "echoed_ev": 0x2002_0001}
    fields.update(overrides)
    return Sack(**fields)


def nack(**overrides: Any) -> Nack:
    fields: dict[str, Any] = {
        **ENVELOPE,
        "cum_psn": 100,
        "nack_psn": 105,
        "reason": 0x01,
        "echoed_ev": 0x2002_0001,
    }
    fields.update(overrides)
    return Nack(**fields)


def probe(**overrides: Any) -> Probe:
    fields: dict[str, Any] = {**ENVELOPE, "probe_id": 7, "probe_ev": 0x1001_BEEF, "timestamp": 99}
    fields.update(overrides)
    return Probe(**fields)


@pytest.mark.parametrize(
    "message",
    [
        data(),
        data(payload=b"", dma_length=0),
        data(timestamp=0xDEAD_BEEF, rtx=True, ack_req=True, last=True),
        data(opcode=Opcode.WRITE_IMM, immediate=0x1234_5678, last=True),
        data(timestamp=1, opcode=Opcode.WRITE_IMM, immediate=2),
        data(opcode=Opcode.WRITE_IMM, dscp=Dscp.TRIMMED, payload=b"", dma_length=9),
        data(segments=SEGMENTS, segments_left=1),
        data(dscp=Dscp.TRIMMED, payload=b"", dma_length=4096),
        data(dscp=Dscp.TRIMMED_LASTHOP, payload=b"", dma_length=4096, timestamp=5),
        data(dscp=Dscp.NO_TRIM, ecn=Ecn.CE, hop_limit=3),
        sack(),
        sack(
            sack_offset=3,
            bitmap=0x8000_0000_0000_0001,
            echoed_psn=0xFFFFFF,
            echoed_ts=0xFFFF_FFFF,
            rcvd_bytes=123456,
            ecn_echo=True,
            always_skip=True,
            probe_reply=True,
            port_status=0b1011_0111,
            rcv_cwnd_pen=127,
            ooo_count=65535,
        ),
        sack(segments=SEGMENTS[:1]),
        nack(),
        nack(reason=NackReason.TRIMMED_LASTHOP, echoed_ts=77, ecn_echo=True, port_status=0x0F),
        nack(reason=0xFC),
        probe(),
        probe(dqpn=EV_PROBE_QPN, reply=True, psn=9, port_status=0x7F),
    ],
    ids=lambda m: type(m).__name__,
)
def test_round_trip(message: DataPacket | Sack | Nack | Probe) -> None:
    frame = encode(message)
    assert decode(frame) == message
    assert decode(bytearray(frame)) == message
    assert decode(memoryview(frame)) == message


@pytest.mark.parametrize(
    "message", [data(), sack(), nack(), probe()], ids=lambda m: type(m).__name__
)
def test_decode_sets_every_field_of_each_kind(message: DataPacket | Sack | Nack | Probe) -> None:
    """decode() makes its message without __init__: the envelope and the kind's decoder
    must between them set every field (a field added to a kind and not decoded fails)."""
    decoded = decode(encode(message))
    assert type(decoded) is type(message)
    unset = [f.name for f in dataclasses.fields(decoded) if not hasattr(decoded, f.name)]
    assert unset == []
    if hasattr(decoded, "__dict__"):  # pure path: an unset field would read its class default
        assert set(vars(decoded)) == {f.name for f in dataclasses.fields(decoded)}
    assert dataclasses.asdict(decoded) == dataclasses.asdict(message)


@pytest.mark.parametrize("length", [0, 1, 64, 4096])
def test_a_decoded_payload_is_bytes_of_the_frame_tail_not_tied_to_the_frame(length: int) -> None:
    """The native decode copies the payload out of the frame in C (no slice object): the
    same bytes, of type bytes, whatever the frame's buffer does afterwards."""
    payload = bytes((i * 7 + 3) & 0xFF for i in range(length))
    frame = encode(data(dma_length=length, payload=payload))
    buffer = bytearray(frame)
    for source in (frame, bytes(buffer)):
        decoded = decode(source)
        assert isinstance(decoded, DataPacket)
        assert type(decoded.payload) is bytes and decoded.payload == payload
    decoded = decode(buffer)
    buffer[len(buffer) - length :] = bytes(length)  # the buffer changes after decoding
    assert isinstance(decoded, DataPacket) and decoded.payload == payload


def test_data_frame_layout_byte_by_byte() -> None:
    packet = data(timestamp=0x0102_0304, ack_req=True, last=True, rtx=True)
    frame = encode_data(packet)
    assert len(frame) == 14 + 40 + 40 + 8 + 12 + 4 + 16 + 64
    assert frame[0:6] == ENVELOPE["dst_mac"] and frame[6:12] == ENVELOPE["src_mac"]
    assert frame[12:14] == b"\x86\xdd"
    (vtcfl,) = struct.unpack_from("!I", frame, 14)
    assert vtcfl >> 28 == 6
    assert (vtcfl >> 22) & 0x3F == Dscp.TRIMMABLE
    assert (vtcfl >> 20) & 0x3 == Ecn.ECT0
    assert vtcfl & 0xFFFFF == 0xBEEF  # EV low half, upper flow-label bits 0
    assert struct.unpack_from("!HBB", frame, 18) == (len(frame) - 54, 41, 64)
    assert frame[22:38] == ENVELOPE["outer_src"] and frame[38:54] == ENVELOPE["outer_dst"]
    # inner IPv6 copies traffic class and flow label
    assert struct.unpack_from("!I", frame, 54)[0] == vtcfl
    assert struct.unpack_from("!HBB", frame, 58) == (len(frame) - 94, 17, 64)
    assert frame[62:78] == ENVELOPE["inner_src"] and frame[78:94] == ENVELOPE["inner_dst"]
    # UDP: EV high half, 4791, length, checksum 0
    assert struct.unpack_from("!HHHH", frame, 94) == (0x1001, MRC_UDP_PORT, len(frame) - 94, 0)
    # BTH
    assert frame[102] == Opcode.WRITE
    assert frame[103] == 0x80 | 0x40 | 0x20  # RTX, TS, LAST, version 0
    assert frame[104:106] == b"\xff\xff"
    assert frame[106] == 0 and frame[107:110] == b"\x00\x01\x23"
    assert frame[110] == 0x80  # ACK_REQ
    assert frame[111:114] == b"\x00\xab\xcd"
    # TSETH, RETH, payload
    assert frame[114:118] == b"\x01\x02\x03\x04"
    assert struct.unpack_from("!QII", frame, 118) == (0x7F00_0000_1000, 0xCAFE_F00D, 64)
    assert frame[134:] == bytes(range(64))


def test_sack_layout() -> None:
    frame = encode(
        sack(
            sack_offset=2,
            bitmap=5,
            echoed_ts=9,
            echoed_psn=0x010203,
            rcv_cwnd_pen=3,
            ecn_echo=True,
            probe_reply=True,
        )
    )
    assert len(frame) == 146
    assert frame[102] == 0xDC
    assert frame[111:114] == (100).to_bytes(3, "big")  # BTH PSN = cumulative PSN
    body = frame[114:]
    assert body[0] == 0x01 | 0x04 | 0x08
    assert body[1] == 0xFF
    assert struct.unpack_from("!HQIIIBxxxHH", body, 2) == (2, 5, 0x2002_0001, 9, 0, 3, 0, 0)
    assert body[25:28] == b"\x01\x02\x03"


def test_nack_and_probe_layout() -> None:
    frame = encode(nack(echoed_ts=4))
    assert len(frame) == 130 and frame[102] == 0xDD
    assert frame[114:130] == bytes([1, 0x04, 0xFF, 0]) + struct.pack("!III", 0x2002_0001, 4, 105)
    frame = encode(probe(reply=True, dqpn=EV_PROBE_QPN))
    assert len(frame) == 130 and frame[102] == 0xDE
    assert frame[107:110] == b"\x00\x00\x02"
    assert frame[114:130] == bytes([1, 0xFF, 0, 0]) + struct.pack("!III", 7, 0x1001_BEEF, 99)


def test_srh_layout() -> None:
    frame = encode(data(segments=SEGMENTS, segments_left=2))
    assert frame[20] == 43  # outer next header: routing
    assert frame[54:62] == bytes([41, 4, 4, 2, 1, 0, 0, 0])
    assert frame[62:78] == SEGMENTS[0] and frame[78:94] == SEGMENTS[1]
    assert struct.unpack_from("!H", frame, 18)[0] == len(frame) - 54


def test_derived_properties() -> None:
    trimmed = decode(encode(data(dscp=Dscp.TRIMMED_LASTHOP, payload=b"", dma_length=8)))
    assert isinstance(trimmed, DataPacket)
    assert trimmed.trimmed and trimmed.trimmed_lasthop
    assert not data().trimmed
    assert probe(dqpn=EV_PROBE_QPN).is_ev_probe and not probe().is_ev_probe


def test_decode_returns_ev_from_port_and_flow_label() -> None:
    for ev in (0, 0xFFFF_FFFF, 0x0035_0001, 0xABCD_0000):
        decoded = decode(encode(data(ev=ev)))
        assert decoded.ev == ev


def test_header_length() -> None:
    assert header_length() == 130
    assert header_length(timestamp=True) == 134
    assert header_length(2, True) == 134 + 8 + 32


@given(
    ev=st.integers(0, 0xFFFF_FFFF),
    psn=st.integers(0, 0xFFFFFF),
    dqpn=st.integers(0, 0xFFFFFF),
    dscp=st.sampled_from([Dscp.TRIMMABLE, Dscp.TRIMMABLE_RETX, Dscp.NO_TRIM]),
    ecn=st.integers(0, 3),
    hop=st.integers(0, 255),
    va=st.integers(0, 2**64 - 1),
    rkey=st.integers(0, 2**32 - 1),
    ts=st.none() | st.integers(0, 2**32 - 1),
    imm=st.none() | st.integers(0, 2**32 - 1),
    payload=st.binary(max_size=300),
    flags=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    nsegs=st.integers(0, 3),
)
def test_data_round_trip_property(
    ev: int,
    psn: int,
    dqpn: int,
    dscp: int,
    ecn: int,
    hop: int,
    va: int,
    rkey: int,
    ts: int | None,
    imm: int | None,
    payload: bytes,
    flags: tuple[bool, bool, bool],
    nsegs: int,
) -> None:
    packet = data(
        ev=ev,
        psn=psn,
        dqpn=dqpn,
        dscp=dscp,
        ecn=ecn,
        hop_limit=hop,
        va=va,
        rkey=rkey,
        timestamp=ts,
        opcode=Opcode.WRITE if imm is None else Opcode.WRITE_IMM,
        immediate=imm,
        payload=payload,
        dma_length=len(payload),
        rtx=flags[0],
        ack_req=flags[1],
        last=flags[2],
        segments=(SEGMENTS * 2)[:nsegs],
        segments_left=nsegs,
    )
    assert decode(encode(packet)) == packet


@given(
    cum=st.integers(0, 0xFFFFFF),
    offset=st.integers(0, 0xFFFF),
    bitmap=st.integers(0, 2**64 - 1),
    ev=st.integers(0, 2**32 - 1),
    ts=st.none() | st.integers(0, 2**32 - 1),
    rcvd=st.integers(0, 2**32 - 1),
    pen=st.integers(0, 127),
    bits=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    status=st.integers(0, 255),
)
def test_sack_round_trip_property(
    cum: int,
    offset: int,
    bitmap: int,
    ev: int,
    ts: int | None,
    rcvd: int,
    pen: int,
    bits: tuple[bool, bool, bool],
    status: int,
) -> None:
    message = sack(
        cum_psn=cum,
        sack_offset=offset,
        bitmap=bitmap,
        echoed_ev=ev,
        echoed_ts=ts,
        rcvd_bytes=rcvd,
        rcv_cwnd_pen=pen,
        ecn_echo=bits[0],
        always_skip=bits[1],
        probe_reply=bits[2],
        port_status=status,
    )
    assert decode(encode(message)) == message


# --- Encode errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "needle"),
    [
        (data(psn=1 << 24), "psn"),
        (data(dqpn=1 << 24), "dqpn"),
        (data(ev=1 << 32), "ev"),
        (data(ev=-1), "ev"),
        (data(dscp=64), "dscp"),
        (data(ecn=4), "ecn"),
        (data(hop_limit=256), "hop_limit"),
        (data(dma_length=65), "dma_length 65 must equal the payload length 64"),
        (data(dscp=Dscp.TRIMMED), "trimmed data packet carries no payload"),
        (data(outer_dst=b"\x00" * 15), "outer_dst must be 16 bytes"),
        (data(src_mac=b"\x00" * 5), "MAC addresses are 6 bytes"),
        (data(segments=(b"\x00" * 15,)), "SRH segment is 16 bytes"),
        (data(segments=SEGMENTS, segments_left=3), "segments_left"),
        (data(segments_left=1), "no SRH segments"),
        (data(timestamp=1 << 32), "out of range"),
        (data(opcode=Opcode.WRITE_IMM, immediate=-1), "out of range"),
        (data(immediate=5), "WRITE_IMM needs an immediate"),
        (data(opcode=Opcode.WRITE_IMM), "WRITE_IMM needs an immediate"),
        (data(opcode=Opcode.SACK), "opcode is WRITE or WRITE_IMM"),
        (data(payload=bytes(70000), dma_length=70000), "payload too large"),
        (sack(rcv_cwnd_pen=128), "rcv_cwnd_pen"),
        (sack(bitmap=1 << 64), "SACK field out of range"),
        (sack(cum_psn=1 << 24), "cum_psn"),
        (nack(nack_psn=1 << 24), "nack_psn"),
        (nack(reason=256), "NACK field out of range"),
        (probe(probe_id=1 << 32), "probe field out of range"),
        (probe(psn=-1), "psn"),
    ],
)
def test_encode_rejects_bad_values(message: DataPacket | Sack | Nack | Probe, needle: str) -> None:
    with pytest.raises(EncodeError, match=needle):
        encode(message)


def test_encode_rejects_foreign_objects() -> None:
    with pytest.raises(EncodeError, match="cannot encode a str"):
        encode("not a message")  # type: ignore[arg-type]


def test_ipv6_bytes() -> None:
    expected = bytes.fromhex("fcbbbb00140000000000000000000000")
    assert ipv6_bytes("fcbb:bb00:1400::") == expected
    assert ipv6_bytes(int.from_bytes(expected, "big")) == expected
    assert ipv6_bytes(expected) == expected
    with pytest.raises(EncodeError, match="not an IPv6 address"):
        ipv6_bytes("10.0.0.1")
    with pytest.raises(EncodeError, match="16 bytes"):
        ipv6_bytes(b"\x00" * 4)


# --- Reference models of the switch rewrites (mrc_wire.reference) --------------------------


@pytest.mark.parametrize("timestamp", [None, 0x55])
@pytest.mark.parametrize("segments", [(), SEGMENTS])
@pytest.mark.parametrize("last_hop", [False, True])
def test_trim_frame(timestamp: int | None, segments: tuple[bytes, ...], last_hop: bool) -> None:
    original = data(
        timestamp=timestamp,
        segments=segments,
        segments_left=len(segments),
        payload=bytes(1000),
        dma_length=1000,
        opcode=Opcode.WRITE_IMM,
        immediate=0xAA,
        ecn=Ecn.CE,
        hop_limit=17,
    )
    frame = encode(original)
    trimmed = trim_frame(frame, last_hop=last_hop)
    assert len(trimmed) == header_length(len(segments), timestamp is not None)
    assert trimmed[: len(trimmed)] != frame[: len(trimmed)]
    decoded = decode(trimmed)
    assert isinstance(decoded, DataPacket)
    assert decoded.trimmed and decoded.trimmed_lasthop == last_hop
    assert decoded.payload == b"" and decoded.immediate is None
    assert decoded.dma_length == 1000  # RETH still says what was cut
    # Everything else is untouched; re-encoding the expected packet gives the same bytes.
    expected = data(
        timestamp=timestamp,
        segments=segments,
        segments_left=len(segments),
        payload=b"",
        dma_length=1000,
        opcode=Opcode.WRITE_IMM,
        ecn=Ecn.CE,
        hop_limit=17,
        dscp=Dscp.TRIMMED_LASTHOP if last_hop else Dscp.TRIMMED,
    )
    assert decoded == expected
    # Byte for byte: the re-encoded packet, except that the switch leaves the inner
    # traffic class (a copy of the original outer DSCP/ECN) alone.
    inner = 54 + (8 + 16 * len(segments) if segments else 0)
    reference = bytearray(encode(expected))
    reference[inner : inner + 4] = frame[inner : inner + 4]
    assert trimmed == bytes(reference)


def test_trim_frame_rejects_what_the_switch_never_trims() -> None:
    with pytest.raises(EncodeError, match="only data packets"):
        trim_frame(encode(sack()))
    trimmed = trim_frame(encode(data()))
    with pytest.raises(EncodeError, match="already trimmed"):
        trim_frame(trimmed)


def test_mark_ce() -> None:
    for ecn in (Ecn.ECT0, Ecn.ECT1):
        marked = decode(mark_ce(encode(data(ecn=ecn))))
        assert marked.ecn == Ecn.CE
        assert marked == data(ecn=Ecn.CE)
    for ecn in (Ecn.NOT_ECT, Ecn.CE):
        frame = encode(data(ecn=ecn))
        assert mark_ce(frame) == frame


# --- Malformed and foreign frames ---------------------------------------------------------


def _patch(frame: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(frame)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


_DATA = encode(data())
_DATA_TS = encode(data(timestamp=1))
_DATA_IMM = encode(data(opcode=Opcode.WRITE_IMM, immediate=1))
_DATA_SRH = encode(data(segments=SEGMENTS, segments_left=1))
_SACK = encode(sack())
_NACK = encode(nack())
_PROBE = encode(probe())


def _with_lengths(frame: bytes, cut: int) -> bytes:
    """Drop ``cut`` bytes from the end and fix every length so only the inner part is short."""
    short = bytearray(frame[: len(frame) - cut])
    struct.pack_into("!H", short, 18, len(short) - 54)
    struct.pack_into("!H", short, 58, len(short) - 94)
    struct.pack_into("!H", short, 98, len(short) - 94)
    return bytes(short)


def _srh_frame(**srh_fields: int) -> bytes:
    """The SRH test frame with some SRH bytes overwritten (offsets inside the SRH)."""
    out = bytearray(_DATA_SRH)
    for offset, value in srh_fields.items():
        out[54 + int(offset[1:])] = value
    return bytes(out)


MALFORMED: list[tuple[str, bytes, Malformation, str]] = [
    ("empty", b"", Malformation.TOO_SHORT, "0 bytes"),
    ("ethernet only", _DATA[:14], Malformation.TOO_SHORT, "need at least 54"),
    ("ipv4", _patch(_DATA, 12, "!H", 0x0800), Malformation.WRONG_ETHERTYPE, "0x0800"),
    ("arp", _patch(_DATA, 12, "!H", 0x0806), Malformation.WRONG_ETHERTYPE, "0x0806"),
    ("outer version 4", _patch(_DATA, 14, "!B", 0x40), Malformation.WRONG_IP_VERSION, "outer"),
    ("inner version 4", _patch(_DATA, 54, "!B", 0x40), Malformation.WRONG_IP_VERSION, "inner"),
    (
        "outer payload length too big",
        _patch(_DATA, 18, "!H", len(_DATA) - 53),
        Malformation.LENGTH_MISMATCH,
        "outer IPv6 payload length",
    ),
    ("truncated frame", _DATA[:-1], Malformation.LENGTH_MISMATCH, "outer IPv6 payload length"),
    (
        "outer next header TCP",
        _patch(_DATA, 20, "!B", 6),
        Malformation.WRONG_NEXT_HEADER,
        "outer next header 6",
    ),
    (
        "inner next header TCP",
        _patch(_DATA, 60, "!B", 6),
        Malformation.WRONG_NEXT_HEADER,
        "inner next header 6",
    ),
    (
        "inner payload length",
        _patch(_DATA, 58, "!H", 10),
        Malformation.LENGTH_MISMATCH,
        "inner IPv6 payload length 10",
    ),
    ("udp port 4789", _patch(_DATA, 96, "!H", 4789), Malformation.BAD_UDP_PORT, "4789"),
    (
        "udp length",
        _patch(_DATA, 98, "!H", 20),
        Malformation.LENGTH_MISMATCH,
        "UDP length 20",
    ),
    (
        "inner+udp+bth cut",
        _patch(_DATA[:100], 18, "!H", 46),
        Malformation.TOO_SHORT,
        "need 60",
    ),
    ("unknown opcode", _patch(_DATA, 102, "!B", 0x04), Malformation.UNKNOWN_OPCODE, "0x04"),
    ("opcode 0xff", _patch(_SACK, 102, "!B", 0xFF), Malformation.UNKNOWN_OPCODE, "0xff"),
    (
        "bth version 1",
        _patch(_DATA, 103, "!B", 0x01),
        Malformation.UNSUPPORTED_VERSION,
        "BTH version 1",
    ),
    ("no reth", _with_lengths(_DATA, 64 + 1), Malformation.TOO_SHORT, "16-byte RETH"),
    ("no tseth+reth", _with_lengths(_DATA_TS, 64 + 5), Malformation.TOO_SHORT, "TSETH + RETH"),
    ("no immdt", _with_lengths(_DATA_IMM, 64 + 2), Malformation.TOO_SHORT, "ImmDt"),
    (
        "payload shorter than RETH length",
        _with_lengths(_DATA, 1),
        Malformation.LENGTH_MISMATCH,
        "RETH length 64 but 63 payload bytes",
    ),
    (
        "trimmed with payload",
        _patch(_DATA, 14, "!I", 0x6000_0000 | (40 << 22) | (2 << 20) | 0xBEEF),
        Malformation.LENGTH_MISMATCH,
        "trimmed packet",
    ),
    ("sack short", _with_lengths(_SACK, 1), Malformation.TOO_SHORT, "32-byte SACK"),
    ("nack short", _with_lengths(_NACK, 16), Malformation.TOO_SHORT, "16-byte NACK"),
    ("probe short", _with_lengths(_PROBE, 3), Malformation.TOO_SHORT, "16-byte probe"),
    (
        "sack trailing bytes",
        _with_lengths(_SACK + b"\x00\x00", 0),
        Malformation.LENGTH_MISMATCH,
        "2 bytes after the 32-byte SACK",
    ),
    (
        "probe trailing bytes",
        _with_lengths(_PROBE + b"\x00", 0),
        Malformation.LENGTH_MISMATCH,
        "after the 16-byte probe",
    ),
    ("srh routing type 3", _srh_frame(o2=3), Malformation.BAD_SRH, "routing type 3"),
    ("srh with tlv length", _srh_frame(o1=6), Malformation.BAD_SRH, "hdr_ext_len 6"),
    ("srh segments left", _srh_frame(o3=3), Malformation.BAD_SRH, "segments_left 3"),
    ("srh next header udp", _srh_frame(o0=17), Malformation.WRONG_NEXT_HEADER, "SRH next header"),
    (
        "srh lists too many segments",
        _patch(_srh_frame(o1=40, o4=19)[:96], 18, "!H", 42),
        Malformation.TOO_SHORT,
        "past the frame end",
    ),
    (
        "srh cut",
        _patch(_DATA_SRH[:58], 18, "!H", 4),
        Malformation.TOO_SHORT,
        "8-byte SRH",
    ),
]


@pytest.mark.parametrize(
    ("frame", "reason", "needle"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_decode_rejects_malformed(frame: bytes, reason: Malformation, needle: str) -> None:
    with pytest.raises(MalformedPacket) as excinfo:
        decode(frame)
    assert excinfo.value.reason == reason
    assert needle in str(excinfo.value)
    assert str(excinfo.value).startswith(f"malformed MRC frame ({reason.value}): ")
    assert isinstance(excinfo.value, MrcWireError)


def test_every_malformation_is_exercised() -> None:
    assert {case[2] for case in MALFORMED} == set(Malformation)


def test_foreign_scapy_frames_are_rejected() -> None:
    from scapy.layers.inet import IP, TCP
    from scapy.layers.inet6 import UDP, IPv6
    from scapy.layers.l2 import Ether

    foreign = {
        bytes(Ether() / IP() / TCP()): Malformation.WRONG_ETHERTYPE,
        bytes(Ether() / IPv6() / TCP()): Malformation.WRONG_NEXT_HEADER,
        bytes(Ether() / IPv6() / IPv6() / UDP(dport=53) / (b"x" * 20)): Malformation.BAD_UDP_PORT,
    }
    for frame, reason in foreign.items():
        with pytest.raises(MalformedPacket) as excinfo:
            decode(frame)
        assert excinfo.value.reason == reason


# --- One decoder and one encoder whatever the buffer ----------------------------------------
# The native build decodes a ``bytes`` frame without an SRH in place and writes a frame
# without an SRH into one allocation; any other buffer (a bytearray, a memoryview) takes
# the ``struct`` code, as every frame does on the pure path. These compare the two on the
# path that runs (tests/clikit/test_hotpath.py's native run, or MRC_TESTBED_PURE=0).

DIFFERENTIAL = [
    data(),
    data(payload=b"", dma_length=0),
    data(timestamp=0xDEAD_BEEF, rtx=True, ack_req=True, last=True, psn=0xFFFFFF),
    data(opcode=Opcode.WRITE_IMM, immediate=0x1234_5678, last=True),
    data(timestamp=1, opcode=Opcode.WRITE_IMM, immediate=2, va=0xFFFF_FFFF_FFFF_FFFF),
    data(dscp=Dscp.TRIMMED, payload=b"", dma_length=4096),
    data(dscp=Dscp.TRIMMED_LASTHOP, payload=b"", dma_length=9, timestamp=5),
    data(segments=SEGMENTS, segments_left=1),
    sack(),
    sack(
        bitmap=0xFFFF_FFFF_FFFF_FFFF,
        echoed_ts=0xFFFF_FFFF,
        rcvd_bytes=0xFFFF_FFFF,
        ecn_echo=True,
        probe_reply=True,
        rcv_cwnd_pen=127,
        echoed_psn=0xFFFFFF,
        ooo_count=65535,
    ),
    nack(echoed_ts=77),
    probe(dqpn=EV_PROBE_QPN, reply=True),
]


def _outcome(frame: bytes | bytearray) -> object:
    """What decode makes of ``frame``: the message, or the error's type and text."""
    try:
        return decode(frame)
    except MrcWireError as exc:
        return (type(exc), str(exc))


@pytest.mark.parametrize("message", DIFFERENTIAL, ids=lambda m: type(m).__name__)
def test_decode_of_bytes_is_that_of_any_buffer_on_damaged_frames(message: Any) -> None:
    """Every byte flipped (three ways), every truncation and one byte more: a ``bytes``
    frame decodes to the same message, or fails with the same error, as a bytearray."""
    frame = encode(message)
    damaged = [frame[:cut] for cut in range(len(frame))] + [frame + b"\x00"]
    for i in range(len(frame)):
        for mask in (0x01, 0x80, 0xFF):
            damaged.append(frame[:i] + bytes([frame[i] ^ mask]) + frame[i + 1 :])
    decoded = 0
    for bad in damaged:
        outcome = _outcome(bad)
        assert outcome == _outcome(bytearray(bad)), bad.hex()
        decoded += not isinstance(outcome, tuple)
    assert decoded  # flips of payload and field bytes still decode


@pytest.mark.parametrize("message", DIFFERENTIAL, ids=lambda m: type(m).__name__)
def test_encode_writes_the_same_frame_from_any_buffer(message: Any) -> None:
    """A message whose MAC (or payload) is a bytearray is packed by ``struct``: the same
    frame as from ``bytes``, and both decode back to the message."""
    frame = encode(message)
    assert encode(dataclasses.replace(message, dst_mac=bytearray(message.dst_mac))) == frame
    if isinstance(message, DataPacket):
        assert encode(dataclasses.replace(message, payload=bytearray(message.payload))) == frame
    assert decode(frame) == message


@pytest.mark.parametrize(
    ("field", "value"),
    [("ev", 1 << 32), ("ev", -1), ("hop_limit", 256), ("dscp", 64), ("ecn", 4), ("psn", 1 << 24)],
)
def test_encode_refuses_out_of_range_fields_before_writing(field: str, value: int) -> None:
    with pytest.raises(EncodeError, match=field):
        encode(data(**{field: value}))


def test_encode_refuses_an_address_that_is_not_bytes_as_struct_does() -> None:
    with pytest.raises(struct.error):
        encode(sack(inner_src="x" * 16))


@pytest.mark.parametrize("order", ["big", "little"])
def test_decoded_addresses_are_the_frames_whatever_came_before(order: str) -> None:
    """The native decoder reuses the address objects it made for the same bytes (a cache
    of 1024 slots, compared word by word): thousands of distinct addresses, each decoded
    twice, interleaved, read back as their own bytes every time (slots replaced,
    collisions included). Both byte orders: the addresses differ in their first words
    (a MAC's first 4 bytes, an IPv6 address's first 8) or in their last ones."""
    other = "little" if order == "big" else "big"
    frames = []
    for i in range(3000):
        mac = i.to_bytes(6, order)  # type: ignore[arg-type]
        address = (i * 7919).to_bytes(16, other)  # type: ignore[arg-type]
        message = sack(dst_mac=mac, src_mac=mac[::-1], outer_dst=address, inner_src=address)
        frames.append((encode(message), message))
    for frame, message in frames + frames[::-1]:
        decoded = decode(frame)
        assert decoded == message
        assert decoded.dst_mac == frame[0:6] and decoded.inner_src == frame[62:78]


@pytest.mark.parametrize(
    ("message", "needle"),
    [
        (data(timestamp=1 << 32), "data packet field out of range"),
        (data(timestamp=-1), "data packet field out of range"),
        (data(opcode=Opcode.WRITE_IMM, immediate=1 << 32, last=True), "field out of range"),
        (data(dqpn=1 << 32), "data packet field out of range"),
        (data(dqpn=1 << 24), "dqpn must be in"),
        (sack(port_status=0x100), "SACK field out of range"),
        (sack(sack_offset=0x10000), "SACK field out of range"),
        (sack(bitmap=1 << 64), "SACK field out of range"),
        (sack(bitmap=-1), "SACK field out of range"),
        (sack(echoed_ev=1 << 32), "SACK field out of range"),
        (sack(echoed_ts=1 << 32), "SACK field out of range"),
        (sack(rcvd_bytes=-1), "SACK field out of range"),
        (sack(ooo_count=0x10000), "SACK field out of range"),
        (sack(dqpn=1 << 24), "dqpn must be in"),
    ],
    ids=lambda v: v if isinstance(v, str) else type(v).__name__,
)
def test_encode_refuses_what_struct_refuses(message: Any, needle: str) -> None:
    """The native writers take only what ``struct`` packs: every other value is refused
    with the reference's error (the field checks, then ``struct``'s, then the envelope's)."""
    with pytest.raises(EncodeError, match=needle):
        encode(message)


def test_encode_packs_a_float_field_as_the_reference_does() -> None:
    with pytest.raises(EncodeError, match="SACK field out of range"):
        encode(sack(echoed_ev=1.0))
    with pytest.raises(EncodeError, match="data packet field out of range"):
        encode(data(timestamp=2.0))


class _Compared(Exception):
    """What :class:`_OwnOrder` raises when it is compared."""


class _OwnOrder(int):
    """An int whose ordering is its own: any comparison raises :class:`_Compared`."""

    def __le__(self, other: object) -> bool:
        raise _Compared(f"{int(self)} compared with {other!r}")

    __lt__ = __gt__ = __ge__ = __le__


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (data, "ev"),
        (data, "dscp"),
        (data, "ecn"),
        (data, "hop_limit"),
        (data, "dqpn"),
        (data, "psn"),
        (data, "va"),
        (data, "rkey"),
        (data, "dma_length"),
        (sack, "cum_psn"),
        (sack, "echoed_psn"),
        (sack, "rcv_cwnd_pen"),
    ],
)
def test_encode_compares_an_int_with_its_own_order_as_python_does(build: Any, field: str) -> None:
    """The native range checks read an int's value in C only where its type compares as
    ``int`` does; a subclass with its own comparisons is compared by Python, as on the
    pure path (here: its comparison raises)."""
    message = build()
    with pytest.raises(_Compared):
        encode(dataclasses.replace(message, **{field: _OwnOrder(getattr(message, field))}))


def test_encode_of_enum_bool_and_wide_fields_is_that_of_their_ints() -> None:
    """An IntEnum and a bool compare as ints (the native checks read them in C); a value
    too wide for a C ``long long`` is compared by Python: each encodes as its int."""
    reference = encode(data(dscp=int(Dscp.TRIMMABLE), ecn=int(Ecn.ECT0), hop_limit=1))
    assert isinstance(data().dscp, Dscp) and isinstance(data().ecn, Ecn)
    assert encode(data(dscp=Dscp.TRIMMABLE, ecn=Ecn.ECT0, hop_limit=True)) == reference
    wide = data(va=(1 << 64) - 1)
    assert decode(encode(wide)).va == (1 << 64) - 1
    assert decode(encode(sack(bitmap=(1 << 64) - 1))).bitmap == (1 << 64) - 1
    with pytest.raises(EncodeError, match="va"):
        encode(data(va=1 << 64))
    with pytest.raises(EncodeError, match="rkey"):
        encode(data(rkey=-(1 << 70)))


@pytest.mark.parametrize(
    ("field", "limit"),
    [("psn", (1 << 24) - 1), ("rkey", (1 << 32) - 1), ("va", (1 << 64) - 1), ("hop_limit", 0xFF)],
)
def test_encode_range_checks_at_every_digit_boundary(field: str, limit: int) -> None:
    """An exact int is checked in C from its digits when it has one or two (30 bits each
    on a 64-bit CPython), else as a C ``long long``, else by Python: each value around
    those boundaries, and the field's own limit, is taken or refused as ``0 <= v <= limit``
    says."""
    edges = {0, 1, limit, limit + 1, -1, 1 << 64, -(1 << 64)}
    for bits in (15, 30, 60, 63):
        edges |= {(1 << bits) - 1, 1 << bits, -(1 << bits), -((1 << bits) - 1)}
    for value in sorted(edges):
        message = data(**{field: value})
        if 0 <= value <= limit:
            assert getattr(decode(encode(message)), field) == value
        else:
            with pytest.raises(EncodeError, match=field):
                encode(message)


class _OwnEquality(int):
    """An int whose equality is its own: comparing it for (in)equality raises
    :class:`_Compared` (its order is int's)."""

    def __eq__(self, other: object) -> bool:
        raise _Compared(f"{int(self)} compared with {other!r}")

    __ne__ = __eq__
    __hash__ = int.__hash__


def test_encode_tests_dscp_and_dma_length_as_python_does() -> None:
    """encode_data's trimmed test (``dscp == TRIMMED``) and its length test (``len(payload)
    != dma_length``) read an exact int in C, around every digit boundary (30 bits a digit,
    negative values too), and compare anything else by Python (an equality of its own is
    called, as on the pure path)."""
    for dscp in (Dscp.TRIMMED, int(Dscp.TRIMMED), Dscp.TRIMMED_LASTHOP, int(Dscp.TRIMMED_LASTHOP)):
        frame = encode(data(dscp=dscp, payload=b"", dma_length=4096))
        assert decode(frame).payload == b"" and decode(frame).dma_length == 4096
    for dscp in (-1, -(1 << 30), -(1 << 40), 1 << 30, 1 << 40, 1 << 70, 64):
        with pytest.raises(EncodeError, match="dscp"):
            encode(data(dscp=dscp))
    for delta in (-64, -1, 1, 1 << 30, (1 << 30) - 64, 1 << 31):
        with pytest.raises(EncodeError, match="dma_length"):
            encode(data(dma_length=64 + delta))
    assert decode(encode(data(dma_length=True, payload=b"x"))).dma_length == 1
    with pytest.raises(_Compared):
        encode(data(dscp=_OwnEquality(Dscp.TRIMMED), payload=b"", dma_length=64))
    with pytest.raises(_Compared):
        encode(data(dma_length=_OwnEquality(64)))


def test_encode_takes_a_falsy_segments_left_without_segments() -> None:
    """Without an SRH, ``segments_left`` may be any falsy value (the native check reads
    an exact 0 in C, anything else goes through the field checks): the same frame; a
    truthy one is refused, as are addresses of the wrong length."""
    reference = encode(data())
    for falsy in (0, False, None, 0.0):
        assert encode(data(segments_left=falsy)) == reference
        assert encode(sack(segments_left=falsy)) == encode(sack())
    for truthy in (1, True, 1 << 40, -1):
        with pytest.raises(EncodeError, match="segments_left is set"):
            encode(data(segments_left=truthy))
        with pytest.raises(EncodeError, match="segments_left is set"):
            encode(sack(segments_left=truthy))
    with pytest.raises(EncodeError, match="MAC addresses are 6 bytes"):
        encode(data(src_mac=b"\x00" * 7))
    with pytest.raises(EncodeError, match="inner_dst must be 16 bytes"):
        encode(sack(inner_dst=b"\x00" * 15))


@pytest.mark.parametrize(
    ("build", "field", "limit", "needle"),
    [
        (sack, "bitmap", (1 << 64) - 1, "SACK field out of range"),
        (sack, "port_status", 0xFF, "SACK field out of range"),
        (sack, "sack_offset", 0xFFFF, "SACK field out of range"),
        (sack, "ooo_count", 0xFFFF, "SACK field out of range"),
        (sack, "echoed_ev", 0xFFFF_FFFF, "SACK field out of range"),
        (sack, "echoed_ts", 0xFFFF_FFFF, "SACK field out of range"),
        (sack, "rcvd_bytes", 0xFFFF_FFFF, "SACK field out of range"),
        (data, "timestamp", 0xFFFF_FFFF, "data packet field out of range"),
        (data, "va", (1 << 64) - 1, "va must be in"),
    ],
)
def test_native_writers_read_fields_at_every_digit_boundary(
    build: Any, field: str, limit: int, needle: str
) -> None:
    """The native writers read each field once as a C integer (a 64-bit one from up to
    three 30-bit digits): every value around the digits' and the field's limits is
    written as the reference writes it, or refused with its error; an IntEnum or a
    bool is written as its int."""
    edges = {0, 1, limit, limit + 1, -1, 1 << 64, 1 << 90}
    for bits in (15, 30, 60, 63):
        edges |= {(1 << bits) - 1, 1 << bits, -(1 << bits)}
    for value in sorted(edges):
        message = build(**{field: value})
        if 0 <= value <= limit:
            frame = encode(message)
            assert getattr(decode(frame), field) == value
            assert encode(dataclasses.replace(message, dst_mac=bytearray(message.dst_mac))) == frame
        else:
            with pytest.raises(EncodeError, match=needle):
                encode(message)
    assert encode(build(**{field: True})) == encode(build(**{field: 1}))
    assert encode(build(**{field: Dscp.TRIMMED})) == encode(build(**{field: int(Dscp.TRIMMED)}))


@pytest.mark.parametrize("build", [data, sack])
@pytest.mark.parametrize(
    ("field", "limit"),
    [
        ("ev", (1 << 32) - 1),
        ("dscp", 0x3F),
        ("ecn", 0x3),
        ("hop_limit", 0xFF),
        ("dqpn", (1 << 24) - 1),
    ],
)
def test_the_usual_envelope_read_in_c_takes_what_the_field_checks_take(
    build: Any, field: str, limit: int
) -> None:
    """The native writers' one C read of the usual envelope (every envelope check at once,
    no reference taken) takes an envelope only when the field-by-field checks would: each
    int field at and past its limit, as an int, a bool, an IntEnum and an int with its own
    order, is written as its int or refused with the error it had; addresses of another
    size or type, an empty SRH list and a float segments_left go through those checks."""
    message = build()
    for value in (0, 1, limit, limit + 1, -1, 1 << 40, 1 << 70):
        changed = dataclasses.replace(message, **{field: value})
        if 0 <= value <= limit:
            frame = encode(changed)
            assert getattr(decode(frame), field) == value
            assert encode(dataclasses.replace(changed, **{field: _OwnIntEnum(value)})) == frame
        else:
            with pytest.raises((EncodeError, struct.error)):
                encode(changed)
    assert encode(dataclasses.replace(message, **{field: True})) == encode(
        dataclasses.replace(message, **{field: 1})
    )
    with pytest.raises(_Compared):
        encode(dataclasses.replace(message, **{field: _OwnOrder(1)}))
    reference = encode(message)
    assert encode(dataclasses.replace(message, segments=[])) == reference
    assert encode(dataclasses.replace(message, segments_left=0.0)) == reference
    assert encode(dataclasses.replace(message, inner_src=bytearray(message.inner_src))) == reference
    for name, size in (("dst_mac", 6), ("outer_dst", 16), ("inner_dst", 16)):
        with pytest.raises(EncodeError, match="bytes"):
            encode(dataclasses.replace(message, **{name: b"\x01" * (size + 1)}))


class _OwnIntEnum(int):
    """An int subclass whose comparisons are int's (as an IntEnum's): read in C."""


@pytest.mark.parametrize("build", [data, sack])
def test_a_decoded_inner_source_is_its_own_bytes_when_equal_to_the_outer_or_not(
    build: Any,
) -> None:
    """The native decoder shares the outer source's bytes object with the inner source
    when their 16 bytes are equal: each is the frame's bytes, when equal and when they
    differ in any one byte."""
    outer = ENVELOPE["outer_src"]
    for position in (None, 0, 7, 8, 15):
        inner = bytearray(outer)
        if position is not None:
            inner[position] ^= 0x40
        message = build(outer_src=outer, inner_src=bytes(inner))
        got = decode(encode(message))
        assert got.outer_src == outer and got.inner_src == bytes(inner)
        assert got == message
