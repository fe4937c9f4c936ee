"""mrc_wire.scapy_layers: scapy-built frames equal the codec's bytes, and scapy dissects
codec-built frames (with SRH, with an EV whose port half collides with DNS, from a pcap)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrSegmentRouting
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw
from scapy.utils import rdpcap, wrpcap

from mrc_wire import (
    DataPacket,
    Dscp,
    Ecn,
    Nack,
    NackReason,
    Opcode,
    Probe,
    Sack,
    decode,
    encode,
    ipv6_bytes,
    trim_frame,
)
from mrc_wire.constants import EV_PROBE_QPN
from mrc_wire.scapy_layers import (
    MrcBTH,
    MrcImmDt,
    MrcNack,
    MrcProbe,
    MrcRETH,
    MrcSack,
    MrcTSETH,
)

DST_MAC, SRC_MAC = "0a:00:00:00:14:00", "02:01:00:00:00:01"
OUTER_SRC, OUTER_DST = "fd6d:7263:0:1::1", "fcbb:bb00:1400:1801:1401:e201::"
INNER_SRC, INNER_DST = "fd6d:7263:0:1::1", "fd6d:7263:0:1::3"
SEGMENTS = ("fcbb:bb00:1401:e201::", "fcbb:bb00:1801::")


def envelope(ev: int, dscp: int, ecn: int, segments: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "dst_mac": bytes.fromhex(DST_MAC.replace(":", "")),
        "src_mac": bytes.fromhex(SRC_MAC.replace(":", "")),
        "outer_src": ipv6_bytes(OUTER_SRC),
        "outer_dst": ipv6_bytes(OUTER_DST),
        "inner_src": ipv6_bytes(INNER_SRC),
        "inner_dst": ipv6_bytes(INNER_DST),
        "ev": ev,
        "dscp": dscp,
        "ecn": ecn,
        "segments": tuple(ipv6_bytes(s) for s in segments),
        "segments_left": len(segments),
    }


def scapy_stack(ev: int, dscp: int, ecn: int, segments: tuple[str, ...] = ()) -> Packet:
    """Ether / IPv6 [/ SRH] / IPv6 / UDP as the wire format says, built with scapy."""
    tc = dscp << 2 | ecn
    outer = IPv6(src=OUTER_SRC, dst=OUTER_DST, tc=tc, fl=ev & 0xFFFF, hlim=64)
    inner = IPv6(src=INNER_SRC, dst=INNER_DST, tc=tc, fl=ev & 0xFFFF, hlim=64, nh=17)
    stack = Ether(dst=DST_MAC, src=SRC_MAC) / outer
    if segments:
        stack = stack / IPv6ExtHdrSegmentRouting(
            addresses=list(segments), segleft=len(segments), lastentry=len(segments) - 1
        )
    return stack / inner / UDP(sport=ev >> 16, dport=4791, chksum=0)


EV = 0x1001_BEEF
DNS_EV = 0x0035_0001  # UDP source port 53


def cases() -> list[tuple[str, Any, Packet]]:
    """(id, message, the same frame built with scapy) for every kind of message."""
    return data_cases() + control_cases()


def data_cases() -> list[tuple[str, Any, Packet]]:
    payload = bytes(range(48))
    return [
        (
            "write",
            DataPacket(
                **envelope(EV, Dscp.TRIMMABLE, Ecn.ECT0),
                dqpn=0x123,
                psn=0xABCD,
                va=0x1000,
                rkey=0xCAFE,
                dma_length=48,
                payload=payload,
            ),
            scapy_stack(EV, Dscp.TRIMMABLE, Ecn.ECT0)
            / MrcBTH(opcode=0x0A, dqpn=0x123, psn=0xABCD)
            / MrcRETH(va=0x1000, rkey=0xCAFE, dma_length=48)
            / Raw(payload),
        ),
        (
            "write_imm_ts_flags",
            DataPacket(
                **envelope(DNS_EV, Dscp.TRIMMABLE_RETX, Ecn.ECT1),
                dqpn=7,
                psn=1,
                va=2,
                rkey=3,
                dma_length=48,
                payload=payload,
                timestamp=0x0102_0304,
                opcode=Opcode.WRITE_IMM,
                immediate=0xFEED,
                rtx=True,
                last=True,
                ack_req=True,
            ),
            scapy_stack(DNS_EV, Dscp.TRIMMABLE_RETX, Ecn.ECT1)
            / MrcBTH(opcode=0x0B, rtx=1, ts=1, last=1, ack_req=1, dqpn=7, psn=1)
            / MrcTSETH(tx_timestamp=0x0102_0304)
            / MrcRETH(va=2, rkey=3, dma_length=48)
            / MrcImmDt(immediate=0xFEED)
            / Raw(payload),
        ),
        (
            "write_srh",
            DataPacket(
                **envelope(EV, Dscp.NO_TRIM, Ecn.ECT0, SEGMENTS),
                dqpn=9,
                psn=9,
                va=9,
                rkey=9,
                dma_length=48,
                payload=payload,
            ),
            scapy_stack(EV, Dscp.NO_TRIM, Ecn.ECT0, SEGMENTS)
            / MrcBTH(opcode=0x0A, dqpn=9, psn=9)
            / MrcRETH(va=9, rkey=9, dma_length=48)
            / Raw(payload),
        ),
    ]


def control_cases() -> list[tuple[str, Any, Packet]]:
    return [
        (
            "sack",
            Sack(
                **envelope(EV, Dscp.CONTROL, Ecn.NOT_ECT),
                dqpn=5,
                cum_psn=100,
                sack_offset=2,
                bitmap=0xF0F0,
                echoed_ev=0x2002_0001,
                echoed_psn=103,
                echoed_ts=55,
                rcvd_bytes=4096,
                ecn_echo=True,
                port_status=0xFE,
                rcv_cwnd_pen=4,
                ooo_count=2,
            ),
            scapy_stack(EV, Dscp.CONTROL, Ecn.NOT_ECT)
            / MrcBTH(opcode=0xDC, dqpn=5, psn=100)
            / MrcSack(
                flags="ecn_echo+ts_valid",
                port_status=0xFE,
                sack_offset=2,
                bitmap=0xF0F0,
                echoed_ev=0x2002_0001,
                echoed_ts=55,
                rcvd_bytes=4096,
                rcv_cwnd_pen=4,
                echoed_psn=103,
                ooo_count=2,
            ),
        ),
        (
            "nack",
            Nack(
                **envelope(EV, Dscp.CONTROL, Ecn.NOT_ECT),
                dqpn=5,
                cum_psn=100,
                nack_psn=104,
                reason=NackReason.TRIMMED_LASTHOP,
                echoed_ev=0x2002_0001,
                echoed_ts=66,
            ),
            scapy_stack(EV, Dscp.CONTROL, Ecn.NOT_ECT)
            / MrcBTH(opcode=0xDD, dqpn=5, psn=100)
            / MrcNack(
                reason=2, flags="ts_valid", echoed_ev=0x2002_0001, echoed_ts=66, nack_psn=104
            ),
        ),
        (
            "ev_probe_reply",
            Probe(
                **envelope(EV, Dscp.CONTROL, Ecn.NOT_ECT),
                dqpn=EV_PROBE_QPN,
                psn=3,
                reply=True,
                probe_id=0xABCD,
                probe_ev=0x3003_0003,
                timestamp=77,
                port_status=0x0F,
            ),
            scapy_stack(EV, Dscp.CONTROL, Ecn.NOT_ECT)
            / MrcBTH(opcode=0xDE, dqpn=2, psn=3)
            / MrcProbe(
                flags="reply", port_status=0x0F, probe_id=0xABCD, probe_ev=0x3003_0003, timestamp=77
            ),
        ),
    ]


CASES = cases()


@pytest.mark.parametrize(("message", "built"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_codec_bytes_equal_scapy_bytes(message: Any, built: Packet) -> None:
    frame = encode(message)
    assert bytes(built) == frame
    assert decode(bytes(built)) == message


@pytest.mark.parametrize(("message", "built"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_scapy_dissects_codec_frames(message: Any, built: Packet) -> None:
    dissected = Ether(encode(message))
    bth = dissected[MrcBTH]
    assert bth.dqpn == message.dqpn
    assert dissected[UDP].sport << 16 | dissected[IPv6].fl == message.ev
    if message.segments:
        assert dissected[IPv6ExtHdrSegmentRouting].addresses == list(SEGMENTS)
    if isinstance(message, DataPacket):
        assert dissected[MrcRETH].va == message.va
        assert dissected[MrcRETH].dma_length == message.dma_length
        assert bytes(dissected[Raw].load) == message.payload
        if message.timestamp is not None:
            assert dissected[MrcTSETH].tx_timestamp == message.timestamp
        if message.immediate is not None:
            assert dissected[MrcImmDt].immediate == message.immediate
    elif isinstance(message, Sack):
        assert dissected[MrcSack].bitmap == message.bitmap
        assert dissected[MrcSack].echoed_ev == message.echoed_ev
        assert bth.psn == message.cum_psn
    elif isinstance(message, Nack):
        assert dissected[MrcNack].reason == message.reason
        assert dissected[MrcNack].nack_psn == message.nack_psn
    else:
        assert dissected[MrcProbe].probe_id == message.probe_id
        assert dissected[MrcProbe].flags.reply
    # Re-serialising the dissection reproduces the frame exactly.
    assert bytes(dissected) == encode(message)


def test_dns_source_port_still_dissects_as_mrc() -> None:
    # Scapy tries UDP bindings in order and binds DNS to source port 53 too: ours must
    # come first, or an EV whose high half is 53 would dissect as DNS.
    assert UDP.payload_guess[0] == ({"dport": 4791}, MrcBTH)
    frame = encode(CASES[1][1])
    dissected = Ether(frame)
    assert dissected[UDP].sport == 53
    assert dissected.haslayer(MrcBTH)
    assert dissected[MrcBTH].opcode == Opcode.WRITE_IMM


def test_trimmed_frame_dissects_without_payload() -> None:
    trimmed = Ether(trim_frame(encode(CASES[0][1])))
    assert trimmed[IPv6].tc >> 2 == Dscp.TRIMMED
    assert trimmed[MrcRETH].dma_length == 48
    assert not trimmed.haslayer(Raw)


def test_pcap_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "fabric.pcap"
    wrpcap(str(path), [Ether(encode(message)) for _, message, _ in CASES])
    packets = rdpcap(str(path))
    assert len(packets) == len(CASES)
    for packet, (_, message, _) in zip(packets, CASES):
        assert packet.haslayer(MrcBTH)
        assert decode(bytes(packet)) == message
