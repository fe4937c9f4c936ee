"""nic_emu.sender: the packets ``next_packet`` makes (every field as the constructor
sets it, from posted bytes and from a stream) and ``outstanding``, the packets in the
order of their latest transmission (each in-flight packet once)."""

from __future__ import annotations

import inspect
import random

import pytest

from nic_emu.exceptions import DataSourceError
from nic_emu.sender import (
    IN_FLIGHT,
    LOST,
    OUT_COMPACT,
    BufferPayload,
    SendState,
    TxPacket,
    WriteRequest,
)
from nic_emu.streams import StreamPayload

# every field a packet has: the pure class's slots, the compiled type's readable fields
FIELDS = tuple(
    sorted(
        getattr(TxPacket, "__slots__", None)
        or (
            name
            for name, member in inspect.getmembers(TxPacket)
            if inspect.isgetsetdescriptor(member) or inspect.ismemberdescriptor(member)
        )
    )
)


def _fields(pkt: TxPacket) -> dict[str, object]:
    return {name: getattr(pkt, name) for name in FIELDS}


def _pieces(data: bytes, size: int):  # type: ignore[no-untyped-def]
    for i in range(0, len(data), size):
        yield data[i : i + size]


@pytest.mark.parametrize("streamed", [False, True])
def test_next_packet_makes_what_the_constructor_makes(streamed: bool) -> None:
    data = bytes(random.Random(5).randbytes(1000))
    payload = (
        StreamPayload(_pieces(data, 333), len(data))
        if streamed
        else BufferPayload(memoryview(data))
    )
    ss = SendState(77, 300, 64)
    wr = WriteRequest(9, payload, len(data), 0x1000, 5, 4, 0)
    ss.post(wr)
    pkts = []
    while (pkt := ss.next_packet()) is not None:
        pkts.append(pkt)
    assert len(pkts) == 4 and ss.pending == type(ss.pending)()
    for k, pkt in enumerate(pkts):
        offset = 300 * k
        length = min(300, 1000 - offset)
        want = TxPacket(77 + k, wr, offset, length, k == 0, k == 3)
        want.payload = data[offset : offset + length]
        got = _fields(pkt)
        assert bytes(got.pop("payload")) == want.payload  # type: ignore[arg-type]
        assert type(pkt.payload) is (bytes if streamed else memoryview)
        expected = _fields(want)
        del expected["payload"]
        assert got == expected and got["tx_seq"] == -1 and got["state"] == IN_FLIGHT
    assert (wr.first_psn, wr.last_psn, wr.segmented, wr.next_offset) == (77, 80, 4, 1000)


def test_a_failed_stream_fails_next_packet_before_any_state_moves() -> None:
    def pieces():  # type: ignore[no-untyped-def]
        yield b"x" * 100
        raise DataSourceError("gone")

    ss = SendState(0, 100, 64)
    ss.post(WriteRequest(1, StreamPayload(pieces(), 300), 300, 0, 5, 3, 0))
    assert ss.next_packet() is not None
    with pytest.raises(DataSourceError, match="gone"):
        ss.next_packet()
    assert ss.next_psn == 1 and ss.unacked.keys() == {0}


def _sent(n: int, mtu: int = 10) -> tuple[SendState, list[TxPacket]]:
    ss = SendState(0, mtu, 4096)
    ss.post(WriteRequest(1, BufferPayload(memoryview(bytes(n * mtu))), n * mtu, 0, 5, n, 0))
    pkts = []
    for t in range(n):
        pkt = ss.next_packet()
        assert pkt is not None
        ss.sent(pkt, None, 100 * t)
        pkts.append(pkt)
    return ss, pkts


def _listed(ss: SendState) -> list[int]:
    return [p.psn for p in ss.outstanding[ss.out_head :]]


def test_a_packet_lost_away_from_the_front_leaves_outstanding_and_returns_once() -> None:
    ss, pkts = _sent(5)
    ss.mark_lost(pkts[2])  # a trim, a path gone: not the front
    assert _listed(ss) == [0, 1, 3, 4] and pkts[2].state == LOST and ss.rtx_heap == [2]
    assert ss.next_packet() is pkts[2]
    ss.sent(pkts[2], None, 900)
    assert _listed(ss) == [0, 1, 3, 4, 2] and pkts[2].tx_seq == 5
    ss.mark_lost(pkts[4])
    ss.mark_lost(pkts[0])
    assert _listed(ss) == [1, 3, 2] and ss.oldest_sent_ns() == 100
    # The front's losses come off the front (RACK): 1 and 3, sent before the ack'd 2
    ss.ack(2, 10_000)
    assert [p.psn for p in ss.detect_losses(1, 0)] == [1, 3]
    assert ss.oldest_sent_ns() is None and _listed(ss) == []  # 2, acknowledged, passed


def test_rewind_takes_its_packets_out_of_outstanding_together() -> None:
    ss, pkts = _sent(6)
    ss.ack(1, 10_000)
    assert ss.rewind(3) == 3 and _listed(ss) == [0, 1, 2]
    assert [p.state for p in pkts[3:]] == [LOST] * 3
    for want in (3, 4, 5):
        pkt = ss.next_packet()
        assert pkt is not None and pkt.psn == want
        ss.sent(pkt, None, 1000 + want)
    assert _listed(ss) == [0, 1, 2, 3, 4, 5] and ss.oldest_sent_ns() == 0


def test_outstanding_drops_what_it_passed_in_one_step() -> None:
    n = 3 * OUT_COMPACT
    ss, pkts = _sent(n)
    for k, pkt in enumerate(pkts[: 2 * OUT_COMPACT]):
        ss.ack(pkt.psn, 10_000_000)
        front = ss._front()
        assert front is pkts[k + 1]
        # entries before the head are dropped once OUT_COMPACT of them gathered
        assert ss.out_head < OUT_COMPACT and ss.outstanding[ss.out_head] is front
    assert len(ss.outstanding) - ss.out_head == OUT_COMPACT
    assert len(ss.outstanding) < 2 * OUT_COMPACT
    expired = ss.pop_expired(100 * (2 * OUT_COMPACT))
    assert expired is pkts[2 * OUT_COMPACT] and expired.state == LOST
    assert _listed(ss) == [p.psn for p in pkts[2 * OUT_COMPACT + 1 :]]
