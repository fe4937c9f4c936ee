"""Streamed WRITEs end to end on the model fabric: the bytes arrive intact, a failing
source fails the connection, and memory does not grow with the size of a transfer."""

from __future__ import annotations

import hashlib
import tracemalloc
from collections.abc import Iterator

import pytest

from nic_emu.connection import QpState
from nic_emu.datasource import PIECE_BYTES, RandomSource
from nic_emu.exceptions import DataSourceError, MemoryAccessError
from nic_emu.streams import DROP_MEMORY_ACCESS, StreamPayload, StreamReceiver
from nic_emu.testing import SimNetwork
from nic_emu.transfers import MemoryBudget

from .conftest import make_net

MIB = 1 << 20


def test_payload_is_taken_in_order_across_pieces() -> None:
    payload = StreamPayload(iter([b"abc", b"", b"defgh", b"ij"]), 10)
    assert payload.take(0, 4) == b"abcd"
    assert payload.take(4, 4) == b"efgh"
    with pytest.raises(MemoryAccessError, match="read in order; asked for offset 0, next is 8"):
        payload.take(0, 2)
    with pytest.raises(MemoryAccessError, match="pass the end"):
        payload.take(8, 3)
    assert payload.take(8, 2) == b"ij"


def test_payload_takes_bytes_like_pieces_as_bytes() -> None:
    """A piece may be any bytes-like object (copied into ``bytes`` when reached); every
    packet's payload is ``bytes``, a whole piece taken at once included."""
    pieces = [bytearray(b"abc"), memoryview(b"defgh"), b"ijkl", b"mn"]
    payload = StreamPayload(iter(pieces), 14)  # type: ignore[arg-type]
    taken = [payload.take(0, 2), payload.take(2, 4), payload.take(6, 2), payload.take(8, 4)]
    taken.append(payload.take(12, 2))
    assert taken == [b"ab", b"cdef", b"gh", b"ijkl", b"mn"]
    assert all(type(t) is bytes for t in taken)


def test_a_piece_that_is_not_bytes_like_is_refused() -> None:
    payload = StreamPayload(iter([b"ab", 3]), 5)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        payload.take(0, 4)


def test_a_source_that_ends_early_or_fails_raises_a_data_source_error() -> None:
    short = StreamPayload(iter([b"abc"]), 10, "transfer 7 data (file:/x)")
    with pytest.raises(DataSourceError, match=r"transfer 7 data \(file:/x\) ended after 3 of 10"):
        short.take(0, 5)

    def failing() -> Iterator[bytes]:
        yield b"ab"
        raise OSError(5, "Input/output error")

    broken = StreamPayload(failing(), 10, "data")
    with pytest.raises(DataSourceError, match=r"data: .*Input/output error"):
        broken.take(0, 4)


def send_streamed(net: SimNetwork, size: int, seed: int = 3) -> tuple[StreamReceiver, bool]:
    sender, receiver = net.connect("nic0", "nic2")
    sink = StreamReceiver(receiver.rx.recv.rcv_nxt, MemoryBudget(), max_va=1 << 40)
    receiver.attach_responder_sink(sink)
    source = RandomSource(seed, size)
    sender.post_write(StreamPayload(source.pieces(0, size), size), 0, 0x77, net.events.now)
    net.service("nic0")
    return sink, net.run_until_idle([sender], limit_ns=10_000_000_000)


def test_a_streamed_write_arrives_intact_and_nothing_is_held_after() -> None:
    size = 3 * PIECE_BYTES + 1234
    net = make_net()
    sink, finished = send_streamed(net, size)
    assert finished
    want = hashlib.sha256(b"".join(RandomSource(3, size).pieces(0, size))).hexdigest()
    assert sink.pop_message() == (size, want)
    assert sink.held_bytes == 0 and not sink.held and sink.budget.used == 0


def test_a_sink_refuses_memory_outside_its_range_and_other_rkeys() -> None:
    budget = MemoryBudget()
    sink = StreamReceiver(0, budget, max_va=2000, min_va=1000, rkey=0x42)
    assert sink.admit(0, 0x42, 1000, 1000) is None
    assert sink.admit(0, 0x42, 999, 10) == DROP_MEMORY_ACCESS  # below the range
    assert sink.admit(0, 0x42, 1995, 10) == DROP_MEMORY_ACCESS  # past its end
    assert sink.admit(0, 0x43, 1000, 10) == DROP_MEMORY_ACCESS  # the R_Key is given
    first = StreamReceiver(0, budget, max_va=2000)
    assert first.admit(0, 0x43, 0, 10) is None and first.rkey == 0x43  # else the first's


def test_a_failing_source_fails_the_connection_naming_it() -> None:
    net = make_net()
    sender, _ = net.connect("nic0", "nic2")
    payload = StreamPayload(iter([b"x" * 5000]), 20_000, "transfer 3 data (file:/data.bin)")
    sender.post_write(payload, 0, 0x77, net.events.now)
    net.service("nic0")
    net.run_until_idle([sender], limit_ns=1_000_000_000)
    assert sender.state is QpState.ERROR
    (failure,) = net.failures("nic0")
    assert failure.reason == "data_source"
    assert "transfer 3 data (file:/data.bin) ended after 5000 of 20000 bytes" in failure.message


def peak_bytes(size: int) -> int:
    net = make_net(trace_packets=False)  # a record per packet would grow with the size
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        sink, finished = send_streamed(net, size)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert finished and sink.pop_message() is not None
    return peak


@pytest.mark.scenario  # 36 MiB sent under tracemalloc: seconds of CPU (CI, not -m unit)
def test_memory_does_not_grow_with_the_transfer_size() -> None:
    """An 8x larger transfer peaks within 2 MiB of the smaller one's peak (a whole copy
    of either would be 4 or 32 MiB): both hold only unacknowledged and out-of-order
    payloads, the pieces being read, and the event log (which grows with events, not
    bytes)."""
    small, large = peak_bytes(4 * MIB), peak_bytes(32 * MIB)
    assert small < 4 * MIB
    assert large - small < 2 * MIB, (small, large)
