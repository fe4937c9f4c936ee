"""mrc_wire.frames: the fields a fabric reads in place read what ``decode`` reads."""

from __future__ import annotations

import pytest

from mrc_wire import DataPacket, Sack, decode, encode
from mrc_wire.frames import (
    DATA_DSCP_MASK,
    DATA_DSCPS,
    DATA_HEADER_BYTES,
    TRIMMED_DSCP_MASK,
    TRIMMED_DSCPS,
    data_bytes,
    dscp_mask,
    frame_dqpn,
    frame_dscp,
    frame_ev,
    frame_inner_dst,
    frame_inner_src,
    frame_outer,
)

ADDR = bytes(range(16))
MAC = bytes(6)
ENVELOPE = {
    "dst_mac": MAC,
    "src_mac": MAC,
    "outer_src": ADDR,
    "outer_dst": ADDR,
    "inner_src": ADDR,
    "inner_dst": ADDR,
    "dqpn": 0x123,
}


def _data(ev: int, dscp: int, ecn: int, **extra: object) -> DataPacket:
    payload = bytes(64)
    return DataPacket(
        **ENVELOPE,  # type: ignore[arg-type]
        ev=ev,
        dscp=dscp,
        ecn=ecn,
        psn=7,
        va=0x1000,
        rkey=9,
        dma_length=len(payload),
        payload=payload,
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("ev", [0, 0x1234_5678, 0xFFFF_FFFF, 0x0001_FFFF, 0xFFFF_0000])
@pytest.mark.parametrize(("dscp", "ecn"), [(0, 0), (10, 3), (63, 1), (8, 2)])
def test_frame_outer_reads_what_decode_reads(ev: int, dscp: int, ecn: int) -> None:
    frame = encode(_data(ev, dscp, ecn))
    m = decode(frame)
    assert frame_outer(frame) == (m.ev, m.dscp, m.ecn) == (ev, dscp, ecn)
    assert frame_ev(frame) == ev
    assert frame_dscp(frame) == dscp


def test_frame_outer_of_a_sack() -> None:
    sack = Sack(**ENVELOPE, ev=0xABCD_0123, cum_psn=1, echoed_ev=5)  # type: ignore[arg-type]
    frame = encode(sack)
    assert frame_outer(frame) == (0xABCD_0123, sack.dscp, sack.ecn)
    assert data_bytes(frame) == 0


def test_frames_with_an_srh_or_cut_short_have_no_outer_fields() -> None:
    srh = encode(_data(5, 10, 0, segments=(ADDR,), segments_left=1))
    assert frame_outer(srh) is None and frame_ev(srh) is None
    plain = encode(_data(5, 10, 0))
    assert frame_outer(plain[:95]) is None and frame_ev(plain[:95]) is None
    assert frame_outer(plain[:96]) == (5, 10, 0)


@pytest.mark.parametrize("dscp", [26, 28, 30, 40, 41, 48, 0])
def test_addresses_qp_and_payload_read_what_decode_reads(dscp: int) -> None:
    envelope = {**ENVELOPE, "inner_src": bytes(range(1, 17)), "inner_dst": bytes(range(16, 32))}
    payload = bytes(64)
    packet = DataPacket(
        **envelope,  # type: ignore[arg-type]
        ev=1,
        dscp=dscp,
        ecn=0,
        psn=7,
        va=0x1000,
        rkey=9,
        dma_length=len(payload),
        payload=b"" if dscp in (40, 41) else payload,
    )
    frame = encode(packet)
    m = decode(frame)
    assert frame_inner_src(frame) == m.inner_src == envelope["inner_src"]
    assert frame_inner_dst(frame) == m.inner_dst == envelope["inner_dst"]
    assert frame_dqpn(frame) == m.dqpn == 0x123
    carries_data = dscp in (26, 28, 30)
    assert data_bytes(frame) == (len(payload) if carries_data else 0)
    assert len(frame) == DATA_HEADER_BYTES + len(m.payload)


def test_the_dscp_masks_are_the_sets() -> None:
    """DATA_DSCP_MASK / TRIMMED_DSCP_MASK (the fabric's per-frame tests): bit d set exactly
    for the DSCPs of the set; a value outside 6 bits is refused."""
    for mask, dscps in ((DATA_DSCP_MASK, DATA_DSCPS), (TRIMMED_DSCP_MASK, TRIMMED_DSCPS)):
        assert {d for d in range(64) if mask >> d & 1} == set(dscps)
        assert mask == dscp_mask(dscps) and mask < 1 << 64
    assert dscp_mask(frozenset({0, 63})) == 1 | 1 << 63
    with pytest.raises(ValueError, match="a DSCP is 6 bits"):
        dscp_mask(frozenset({64}))
    with pytest.raises(ValueError, match="a DSCP is 6 bits"):
        dscp_mask(frozenset({-1}))
