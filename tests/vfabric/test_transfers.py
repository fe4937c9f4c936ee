"""Transfers' data: made lazily from a seeded source, checked at the receiver by digest;
damaged bytes are reported, bad placements refused, and a run holds no copy of the data."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import tracemalloc
from collections.abc import Callable

import pytest

from mrc_wire.codec import DataPacket, decode, encode_data
from mrc_wire.frames import data_bytes
from nic_emu.datasource import PIECE_BYTES, DataSource, RandomSource
from nic_emu.exceptions import MemoryAccessError
from vfabric import VirtualFabric
from vfabric.exceptions import TransferSetupError
from vfabric.transfers import (
    EMPTY_SHA256,
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


def test_each_message_digest_is_the_digest_of_its_bytes_as_made() -> None:
    size = 3 * PIECE_BYTES + 1000
    spans = message_spans(size, 3)
    want = source_bytes(transfer_source(4, 2, size))
    sent = SentData(transfer_source(4, 2, size), spans)
    for index, (offset, length) in enumerate(spans):
        payload = sent.payload(index, f"message {index}")
        got = b"".join(payload.take(pos, min(4000, length - pos)) for pos in range(0, length, 4000))
        assert got == want[offset : offset + length]
        assert sent.digests[index] == hashlib.sha256(got).hexdigest()
    assert sent.sha256() == hashlib.sha256(want).hexdigest()


def test_a_digest_is_final_once_the_last_piece_is_made() -> None:
    """At the latest when the sender segments the message's last packet, so before the
    receiver can have it."""
    size = 2 * PIECE_BYTES + 100
    sent = SentData(transfer_source(1, 0, size), [(0, size)])
    payload = sent.payload(0, "m0")
    payload.take(0, PIECE_BYTES)
    payload.take(PIECE_BYTES, PIECE_BYTES)
    assert sent.digests == [None]
    payload.take(2 * PIECE_BYTES, 50)  # from the last piece: 50 bytes left to segment
    assert sent.digests[0] == hashlib.sha256(source_bytes(sent.source)).hexdigest()


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


def test_the_whole_digest_of_a_transfer_sent_is_not_made_again() -> None:
    size = 2 * PIECE_BYTES + 5
    sent = SentData(transfer_source(7, 1, size), [(0, size)])
    payload = sent.payload(0, "m0")
    payload.take(0, size)
    sent.source = RandomSource(0, 0)  # a pass over the source would now fail
    assert sent.sha256() == hashlib.sha256(source_bytes(transfer_source(7, 1, size))).hexdigest()


def test_the_whole_digest_of_a_transfer_cut_short_is_completed_from_the_source() -> None:
    size = 2 * PIECE_BYTES + 5
    sent = SentData(transfer_source(7, 1, size), message_spans(size, 2))
    sent.payload(0, "m0").take(0, 1000)  # the connection failed after one packet
    assert sent.sha256() == hashlib.sha256(source_bytes(transfer_source(7, 1, size))).hexdigest()


def test_a_one_message_transfer_cut_short_is_completed_from_the_source() -> None:
    size = 2 * PIECE_BYTES + 5
    sent = SentData(transfer_source(7, 1, size), [(0, size)])
    sent.payload(0, "m0").take(0, 1000)
    assert sent.digests == [None]
    assert sent.sha256() == hashlib.sha256(source_bytes(transfer_source(7, 1, size))).hexdigest()


def test_a_one_message_transfer_is_hashed_once_as_it_is_made() -> None:
    """Its message's digest is the transfer's: the running whole-transfer digest is
    left empty (one pass of SHA-256 over the data instead of two)."""
    size = 3 * PIECE_BYTES
    sent = SentData(transfer_source(3, 0, size), [(0, size)])
    sent.payload(0, "m0").take(0, size)
    assert sent._whole.hexdigest() == hashlib.sha256(b"").hexdigest()
    assert sent.sha256() == sent.digests[0]
    two = SentData(transfer_source(3, 0, size), message_spans(size, 2))
    for index, (offset, length) in enumerate(two.spans):
        two.payload(index, f"m{index}").take(offset - two.spans[index][0], length)
    assert two._whole.hexdigest() == sent.sha256()  # several messages: the running digest


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
    the changed packet, or None to leave a frame alone) arrives changed; the PSNs changed."""
    changed: list[int] = []
    for (_, dst), wire in fabric.wires.items():
        if dst != nic:
            continue
        sink = wire.sink
        assert sink is not None

        def arrive(port: int, frame: bytes, sink: Callable[[int, bytes], None] = sink) -> None:
            if not changed and data_bytes(frame):
                m = decode(frame)
                assert isinstance(m, DataPacket)
                new = edit(m)
                if new is not None:
                    changed.append(m.psn)
                    frame = encode_data(new)
            sink(port, frame)

        wire.sink = arrive
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
