"""Transfers' data: made lazily from a seeded source, checked at the receiver by digest;
damaged bytes are reported, bad placements refused, and a run holds no copy of the data."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import tracemalloc
from collections.abc import Callable, Iterator

import pytest

from mrc_wire.codec import DataPacket, decode, encode_data
from mrc_wire.frames import data_bytes
from nic_emu.config import NicConfig
from nic_emu.datasource import PIECE_BYTES, DataSource, RandomSource
from nic_emu.exceptions import MemoryAccessError
from vfabric import VirtualFabric
from vfabric.exceptions import TransferSetupError
from vfabric.transfers import (
    EMPTY_SHA256,
    MAX_SHARED_PIECES,
    SentData,
    Transfer,
    all_finished,
    message_spans,
    transfer_source,
)

from .conftest import SIZE

KIB = 1 << 10


def source_bytes(source: DataSource, start: int = 0, length: int | None = None) -> bytes:
    length = source.size - start if length is None else length
    return b"".join(source.pieces(start, length))


class _Watched(Transfer):
    """A transfer whose ``finished`` reads are counted."""

    reads = 0

    @property
    def finished(self) -> bool:
        _Watched.reads += 1
        return super().finished


def test_all_finished_asks_from_the_first_transfer_still_running() -> None:
    assert all_finished([])() is False  # no foreground transfer: never done by them
    ts = [_Watched(i, "nic0", "nic1", KIB, 1, "mrc", 0) for i in range(4)]
    check = all_finished(ts)
    assert check() is False
    ts[2].completion_ns = 5  # out of order: the first two still run
    ts[3].failure = "conn_failed"  # failed counts as finished
    assert check() is False
    ts[0].completion_ns = 7
    _Watched.reads = 0
    assert check() is False  # transfer 1 still runs: 0 passed, stops at 1
    assert _Watched.reads == 2
    ts[1].completion_ns = 9
    _Watched.reads = 0
    assert check() is True  # from transfer 1 on: 1, 2 and 3 read once each
    assert _Watched.reads == 3
    _Watched.reads = 0
    assert check() is True and _Watched.reads == 0  # nothing read again


# ---------------------------------------------------------------- the sending side


def test_message_spans_tile_the_transfer() -> None:
    assert message_spans(10, 3) == [(0, 4), (4, 3), (7, 3)]
    assert message_spans(5, 1) == [(0, 5)]


def test_a_transfers_bytes_depend_on_the_seed_and_the_id_only() -> None:
    a = source_bytes(transfer_source(1, 0, 5000))
    assert a == source_bytes(transfer_source(1, 0, 5000))
    assert a != source_bytes(transfer_source(1, 1, 5000))
    assert a != source_bytes(transfer_source(2, 0, 5000))
    assert source_bytes(transfer_source(1, 0, 9000))[:5000] == a  # a prefix of a longer one


def test_each_message_payload_and_expected_reader_give_its_bytes() -> None:
    size = 3 * PIECE_BYTES + 1000
    spans = message_spans(size, 3)
    want = source_bytes(transfer_source(4, 2, size))
    sent = SentData(transfer_source(4, 2, size), spans)
    for index, (offset, length) in enumerate(spans):
        payload, expected = sent.payload(index, f"message {index}"), sent.expected(index)
        got = b"".join(payload.take(pos, min(4000, length - pos)) for pos in range(0, length, 4000))
        assert got == want[offset : offset + length]
        assert expected.take(0, length) == got  # an independent reader of the same bytes
    assert sent.sha256() == hashlib.sha256(want).hexdigest()


def test_a_shared_receiver_compares_with_the_senders_own_pieces() -> None:
    """Both ends in one process: the receiver's expected bytes are the very piece objects
    the source made for the sender, none made again, and none kept once compared."""
    size = 3 * PIECE_BYTES + 1000
    sent = SentData(transfer_source(4, 2, size), [(0, size)])
    sent.share()
    taken: list[bytes] = []
    pieces = sent.source.pieces

    def counting(start: int, length: int) -> Iterator[bytes]:
        for piece in pieces(start, length):
            taken.append(piece)
            yield piece

    sent.source.pieces = counting  # type: ignore[method-assign]
    payload, expected = sent.payload(0, "m0"), sent.expected(0)
    for pos in range(0, size, 4000):
        n = min(4000, size - pos)
        assert expected.matches(pos, payload.take(pos, n))
    assert len(taken) == 4  # the sender's four pieces, made once
    assert expected._piece is taken[-1]  # the sender's object itself
    assert sent._shared[0] is not None and not sent._shared[0]  # every piece handed over
    del expected  # the receiver drops its reader at the message's end
    assert sent._shared == [None]  # and the queue with it


def test_a_receiver_ahead_of_the_sender_reads_its_own_copy() -> None:
    """Bytes the sender has not taken (another process's sender, a forged payload past
    what was sent): the receiver reads the source from there on, the same bytes."""
    size = 3 * PIECE_BYTES + 1000
    want = source_bytes(transfer_source(4, 2, size))
    sent = SentData(transfer_source(4, 2, size), [(0, size)])
    sent.share()
    payload, expected = sent.payload(0, "m0"), sent.expected(0)
    payload.take(0, 100)  # the sender has the first piece only
    assert expected.take(0, PIECE_BYTES + 10) == want[: PIECE_BYTES + 10]
    assert sent._shared == [None]  # from now on the sender queues nothing
    payload.take(100, size - 100)
    assert expected.take(PIECE_BYTES + 10, size - PIECE_BYTES - 10) == want[PIECE_BYTES + 10 :]


def test_a_lagging_receiver_stops_sharing_past_the_limit() -> None:
    """A receiver that stopped comparing (a damaged message) holds at most
    MAX_SHARED_PIECES pieces; it then reads its own copy, the same bytes."""
    size = (MAX_SHARED_PIECES + 3) * PIECE_BYTES
    want = source_bytes(transfer_source(4, 2, size))
    sent = SentData(transfer_source(4, 2, size), [(0, size)])
    sent.share()
    payload, expected = sent.payload(0, "m0"), sent.expected(0)
    payload.take(0, MAX_SHARED_PIECES * PIECE_BYTES)
    queue = sent._shared[0]
    assert queue is not None and len(queue) == MAX_SHARED_PIECES
    payload.take(MAX_SHARED_PIECES * PIECE_BYTES, 1)
    assert sent._shared == [None] and not queue
    assert expected.take(0, size) == want


def test_the_sender_makes_no_digest_while_sending(monkeypatch: pytest.MonkeyPatch) -> None:
    """The payloads are the source's pieces as they are; the transfer's SHA-256 is made
    only when asked."""
    size = 2 * PIECE_BYTES + 5
    sent = SentData(transfer_source(7, 1, size), message_spans(size, 2))

    def no_digest(*args: object) -> None:
        raise AssertionError("a digest was made while sending")

    with monkeypatch.context() as patched:
        patched.setattr(hashlib, "sha256", no_digest)
        for index, (_, length) in enumerate(sent.spans):
            sent.payload(index, f"m{index}").take(0, length)
            sent.expected(index).take(0, length)
    assert sent.sha256() == hashlib.sha256(source_bytes(sent.source)).hexdigest()


def test_later_messages_start_from_a_saved_state_not_from_byte_zero() -> None:
    """A message boundary on a piece boundary: the first message's reader saves the
    generator's state there, although it is never resumed after its last piece."""
    size = 4 * PIECE_BYTES
    sent = SentData(transfer_source(1, 0, size), message_spans(size, 2))
    source = sent.source
    assert isinstance(source, RandomSource)
    payload = sent.payload(0, "m0")
    payload.take(0, 2 * PIECE_BYTES)
    assert 2 * PIECE_BYTES in source._states


def test_the_digest_is_made_once_when_asked() -> None:
    size = 2 * PIECE_BYTES + 5
    sent = SentData(transfer_source(7, 1, size), [(0, size)])
    want = hashlib.sha256(source_bytes(transfer_source(7, 1, size))).hexdigest()
    assert sent.sha256() == want
    sent.source = RandomSource(0, 0)  # a pass over the source would now fail
    assert sent.sha256() == want


@pytest.mark.parametrize("messages", [1, 2])
def test_the_digest_of_a_transfer_cut_short_is_the_whole_datas(messages: int) -> None:
    size = 2 * PIECE_BYTES + 5
    sent = SentData(transfer_source(7, 1, size), message_spans(size, messages))
    sent.payload(0, "m0").take(0, 1000)  # the connection failed after one packet
    assert sent.sha256() == hashlib.sha256(source_bytes(transfer_source(7, 1, size))).hexdigest()


def test_message_data_is_taken_in_order_only() -> None:
    sent = SentData(transfer_source(1, 0, 10_000), [(0, 10_000)])
    payload = sent.payload(0, "transfer 0 message 0")
    payload.take(0, 100)
    with pytest.raises(MemoryAccessError, match="transfer 0 message 0: streamed data is read"):
        payload.take(500, 100)


@pytest.mark.parametrize(
    ("spans", "match"),
    [
        ([(0, 4), (5, 5)], "must tile the data in order"),
        ([(0, 4), (4, 0), (4, 6)], "must tile the data in order"),
        ([(4, 6), (0, 4)], "must tile the data in order"),
        ([(0, 4), (4, 5)], "cover 9 bytes of a 10-byte source"),
        ([(0, 4), (4, 7)], "cover 11 bytes of a 10-byte source"),
    ],
)
def test_bad_message_spans_are_refused(spans: list[tuple[int, int]], match: str) -> None:
    with pytest.raises(TransferSetupError, match=match):
        SentData(transfer_source(1, 0, 10), spans)


def test_a_transfer_that_never_started_reports_the_digest_of_nothing() -> None:
    t = Transfer(0, "nic0", "nic3", 100, 1, "mrc", 0)
    assert t.as_dict()["sha256"] == EMPTY_SHA256 == hashlib.sha256(b"").hexdigest()


# ---------------------------------------------------------------- on the fabric

FrameEdit = Callable[[DataPacket], DataPacket | None]


def edit_first_frame_into(fabric: VirtualFabric, nic: str, edit: FrameEdit) -> list[int]:
    """On every wire into ``nic``: the first data frame that ``edit`` changes (it returns
    the changed packet, or None to leave a frame alone) arrives changed; the PSNs changed
    (:func:`edit_frames_into` with an edit that stops after one change)."""
    changed: list[int] = []

    def first(m: DataPacket, count: int) -> DataPacket | None:
        if changed:
            return None
        new = edit(m)
        if new is not None:
            changed.append(m.psn)
        return new

    edit_frames_into(fabric, nic, first)
    return changed


def test_a_payload_damaged_in_flight_fails_the_transfer_naming_the_message() -> None:
    fabric = VirtualFabric("tiny", seed=5)
    t = fabric.transfer("nic0", "nic3", SIZE, messages=3)
    spans = message_spans(SIZE, 3)
    mtu = fabric.nics["nic0"].core.config.mtu_payload
    first_of_message_1 = -(-spans[1][0] // mtu)  # messages start on a packet boundary

    def flip_last_byte(m: DataPacket) -> DataPacket | None:
        if m.psn != first_of_message_1 + 3:
            return None
        damaged = m.payload[:-1] + bytes([m.payload[-1] ^ 0x01])
        return dataclasses.replace(m, payload=damaged)

    changed = edit_first_frame_into(fabric, "nic3", flip_last_byte)
    assert fabric.run(until_ns=50_000_000)
    assert changed == [first_of_message_1 + 3]
    assert t.failure == "message 1 arrived damaged (bytes differ from sent)"
    assert t.bytes_delivered >= spans[0][1] + spans[1][1]
    assert t.bytes_verified == t.bytes_delivered - spans[1][1]
    assert not t.intact and t.as_dict()["intact"] is False
    failed = [r for r in fabric.log.records if r.kind == "transfer_failed"]
    assert [r.detail["reason"] for r in failed if r.detail] == [t.failure]


def test_the_same_run_undamaged_is_intact() -> None:
    fabric = VirtualFabric("tiny", seed=5)
    t = fabric.transfer("nic0", "nic3", SIZE, messages=3)
    changed = edit_first_frame_into(fabric, "nic3", lambda m: None)
    assert fabric.run(until_ns=50_000_000)
    assert changed == [] and t.intact and t.bytes_verified == SIZE
    assert (
        t.as_dict()["sha256"]
        == hashlib.sha256(source_bytes(transfer_source(5, 0, SIZE))).hexdigest()
    )


DROP = object()  # an edit's answer: the frame never arrives
SeenEdit = Callable[[DataPacket, int], "DataPacket | object | None"]


def edit_frames_into(fabric: VirtualFabric, nic: str, edit: SeenEdit) -> list[tuple[int, int]]:
    """On every wire into ``nic``: each data frame is given to ``edit`` with how many
    frames of its PSN arrived before it; it returns the packet to deliver instead,
    :data:`DROP`, or None to leave the frame alone. The (PSN, arrival) changed or dropped."""
    changed: list[tuple[int, int]] = []
    seen: dict[int, int] = {}
    for (_, dst), wire in fabric.wires.items():
        if dst != nic:
            continue
        sink = wire.sink
        assert sink is not None

        def arrive(port: int, frame: bytes, sink: Callable[[int, bytes], None] = sink) -> None:
            if data_bytes(frame):
                m = decode(frame)
                assert isinstance(m, DataPacket)
                count = seen.get(m.psn, 0)
                seen[m.psn] = count + 1
                new = edit(m, count)
                if new is DROP:
                    changed.append((m.psn, count))
                    return
                if new is not None:
                    assert isinstance(new, DataPacket)
                    changed.append((m.psn, count))
                    frame = encode_data(new)
            sink(port, frame)

        wire.sink = arrive
    return changed


def flip(m: DataPacket, at: int) -> DataPacket:
    """``m`` with bit 0 of its payload's byte ``at`` flipped."""
    payload = bytearray(m.payload)
    payload[at] ^= 0x01
    return dataclasses.replace(m, payload=bytes(payload))


def run_damaged(edit: SeenEdit, messages: int = 3) -> tuple[Transfer, list[tuple[int, int]]]:
    fabric = VirtualFabric("tiny", seed=5)
    t = fabric.transfer("nic0", "nic3", SIZE, messages=messages)
    changed = edit_frames_into(fabric, "nic3", edit)
    assert fabric.run(until_ns=50_000_000)
    return t, changed


def test_one_byte_flipped_in_the_first_packet_fails_the_transfer() -> None:
    t, changed = run_damaged(lambda m, seen: flip(m, 0) if m.psn == 0 and not seen else None)
    assert changed == [(0, 0)]
    assert t.failure == "message 0 arrived damaged (bytes differ from sent)"
    assert t.bytes_verified == t.bytes_delivered - message_spans(SIZE, 3)[0][1]
    assert not t.intact


def test_one_byte_flipped_in_a_retransmission_fails_the_transfer() -> None:
    """The first copy of a packet of message 2 is lost; the copy the sender resends
    arrives with one byte flipped: what is checked is the copy placed."""
    spans = message_spans(SIZE, 3)
    mtu = NicConfig().mtu_payload  # the fabric's NICs' (messages start on a packet)
    psn = -(-spans[2][0] // mtu) + 5  # well inside message 2

    def lose_then_damage(m: DataPacket, seen: int) -> DataPacket | object | None:
        if m.psn != psn:
            return None
        return DROP if seen == 0 else flip(m, len(m.payload) // 2) if seen == 1 else None

    t, changed = run_damaged(lose_then_damage)
    assert changed == [(psn, 0), (psn, 1)]
    assert t.sender is not None and t.sender.counters["tx_rtx"] >= 1
    assert t.failure == "message 2 arrived damaged (bytes differ from sent)"
    assert t.bytes_verified == spans[0][1] + spans[1][1]


def test_the_last_byte_of_a_message_flipped_fails_the_transfer() -> None:
    lasts: list[int] = []

    def damage_last_of_message_1(m: DataPacket, seen: int) -> DataPacket | None:
        if m.last and not seen:
            lasts.append(m.psn)
            if len(lasts) == 2:  # the second message's last packet
                return flip(m, len(m.payload) - 1)
        return None

    t, changed = run_damaged(damage_last_of_message_1)
    assert len(changed) == 1
    assert t.failure == "message 1 arrived damaged (bytes differ from sent)"
    spans = message_spans(SIZE, 3)
    assert t.bytes_verified == t.bytes_delivered - spans[1][1] and not t.intact


def test_a_one_message_transfer_damaged_in_its_last_byte_fails() -> None:
    def damage_last(m: DataPacket, seen: int) -> DataPacket | None:
        return flip(m, len(m.payload) - 1) if m.last and not seen else None

    t, changed = run_damaged(damage_last, messages=1)
    assert len(changed) == 1
    assert t.failure == "message 0 arrived damaged (bytes differ from sent)"
    assert t.bytes_verified == 0 and t.bytes_delivered == SIZE


def test_a_result_without_the_digest_leaves_it_out() -> None:
    fabric = VirtualFabric("tiny", seed=5)
    t = fabric.transfer("nic0", "nic3", 64 * KIB, messages=2)
    assert fabric.run(until_ns=50_000_000) and t.intact and t.sent is not None
    t.sent.source = RandomSource(0, 0)  # a pass over the source would now fail
    short = fabric.transfer_result(t, sha256=False)
    assert "sha256" not in short and short["bytes_verified"] == 64 * KIB
    t.sent.source = transfer_source(5, t.id, 64 * KIB)
    full = fabric.transfer_result(t)
    assert full.pop("sha256") == hashlib.sha256(source_bytes(t.sent.source)).hexdigest()
    assert full == short
    assert list(t.as_dict()) == list(fabric.transfer_result(t))  # the digest in its place


@pytest.mark.parametrize(
    ("field", "delta"),
    [("va", -1), ("va", SIZE), ("rkey", 1)],
    ids=["va-below", "va-past-end", "other-rkey"],
)
def test_a_write_outside_the_transfers_memory_is_refused_and_resent(field: str, delta: int) -> None:
    """As a registered region would: dropped as ``memory_access`` (counted), never
    checked into the digest; the sender resends the packet and the data arrives intact."""
    fabric = VirtualFabric("tiny", seed=2)
    t = fabric.transfer("nic0", "nic3", SIZE)

    def misplace(m: DataPacket) -> DataPacket:
        return dataclasses.replace(m, **{field: getattr(m, field) + delta})

    changed = edit_first_frame_into(fabric, "nic3", misplace)
    assert fabric.run(until_ns=50_000_000)
    assert len(changed) == 1
    assert t.receiver is not None and t.receiver.counters["rx_access_error"] == 1
    assert fabric.nics["nic3"].core.drop_reasons.get("memory_access") == 1
    assert t.intact and t.bytes_verified == SIZE


# ---------------------------------------------------------------- memory


def peak_traced_bytes(size: int) -> int:
    fabric = VirtualFabric("tiny", seed=1)
    t = fabric.transfer("nic0", "nic3", size, messages=3)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        assert fabric.run(until_ns=50_000_000)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert t.intact
    return peak


def test_a_runs_memory_does_not_grow_with_the_transfer_size() -> None:
    """An 8x larger transfer (1.75 MiB more) peaks within 256 KiB of the smaller one's
    peak: neither side holds the data (a copy at either end would add 1.75 MiB), only the
    window's unacknowledged and out-of-order payloads and the piece being made; what
    still grows is the goodput timelines (a bin per 10 us of sending per wire)."""
    small, large = peak_traced_bytes(256 * KIB), peak_traced_bytes(2048 * KIB)
    assert large - small < 256 * KIB, (small, large)
