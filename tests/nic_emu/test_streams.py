"""Streamed WRITEs end to end on the model fabric: the bytes arrive intact, a failing
source fails the connection, and memory does not grow with the size of a transfer."""

from __future__ import annotations

import hashlib
import random
import sys
import tracemalloc
from collections.abc import Iterator

import pytest

from nic_emu.connection import QpState
from nic_emu.datasource import PIECE_BYTES, RandomSource
from nic_emu.exceptions import DataSourceError, MemoryAccessError
from nic_emu.streams import (
    DROP_MEMORY_ACCESS,
    DROP_MEMORY_BUDGET,
    NIC_MEMORY_BUDGET_BYTES,
    ComparingReceiver,
    StreamPayload,
    StreamReceiver,
)
from nic_emu.streams import MemoryBudget as StreamsBudget
from nic_emu.testing import SimNetwork
from nic_emu.transfers import MemoryBudget

from .conftest import make_net

MIB = 1 << 20


def test_a_payload_taken_inside_a_piece_is_a_copy_of_those_bytes() -> None:
    """take() inside the current piece copies the bytes out in C on the native build (no
    slice object): exact bytes, of type bytes, in order to the piece's end."""
    piece = bytes(range(256)) * 4
    payload = StreamPayload(iter([piece]), len(piece))
    got = [payload.take(0, 1), payload.take(1, 255), payload.take(256, 0)]
    got.append(payload.take(256, 768))
    assert all(type(part) is bytes for part in got)
    assert got == [piece[:1], piece[1:256], b"", piece[256:]]
    assert b"".join(got) == piece


def test_payload_is_taken_in_order_across_pieces() -> None:
    payload = StreamPayload(iter([b"abc", b"", b"defgh", b"ij"]), 10)
    assert payload.take(0, 4) == b"abcd"
    assert payload.take(4, 4) == b"efgh"
    with pytest.raises(MemoryAccessError, match="read in order; asked for offset 0, next is 8"):
        payload.take(0, 2)
    with pytest.raises(MemoryAccessError, match="pass the end"):
        payload.take(8, 3)
    assert payload.take(8, 2) == b"ij"


def test_matches_compares_the_next_bytes_in_order_as_take_does() -> None:
    payload = StreamPayload(iter([b"abcdef", b"ghij"]), 10)
    assert payload.matches(0, b"abc")
    assert not payload.matches(3, b"dxf")  # inside the piece, one byte differs
    assert payload.matches(6, memoryview(b"gh"))  # not bytes: compared through take
    assert payload.matches(8, b"ij")
    payload = StreamPayload(iter([b"abcd", b"efgh"]), 8)
    assert payload.matches(0, b"ab")
    assert payload.matches(2, b"cdef")  # across two pieces
    assert not payload.matches(6, b"gX")
    with pytest.raises(MemoryAccessError, match="read in order; asked for offset 0, next is 8"):
        payload.matches(0, b"a")
    with pytest.raises(MemoryAccessError, match="pass the end"):
        StreamPayload(iter([b"abcd"]), 4).matches(0, b"abcde")


def test_payload_takes_bytes_like_pieces_as_bytes() -> None:
    """A piece may be any bytes-like object (copied into ``bytes`` when reached); every
    packet's payload is ``bytes``, a whole piece taken at once included."""
    pieces = [bytearray(b"abc"), memoryview(b"defgh"), b"ijkl", b"mn"]
    payload = StreamPayload(iter(pieces), 14)  # type: ignore[arg-type]
    taken = [payload.take(0, 2), payload.take(2, 4), payload.take(6, 2), payload.take(8, 4)]
    taken.append(payload.take(12, 2))
    assert taken == [b"ab", b"cdef", b"gh", b"ijkl", b"mn"]
    assert all(type(t) is bytes for t in taken)


@pytest.mark.parametrize("seed", range(4))
def test_payloads_across_any_pieces_are_the_bytes_joined(seed: int) -> None:
    """Packets that straddle pieces (the native build fills one result in C): pieces of
    any sizes, empty ones and ones shorter than a packet among them, give the data's
    bytes in order; a source that ends early names how far a straddling take got."""
    rng = random.Random(seed)
    data = rng.randbytes(20_000)
    cuts = sorted(rng.sample(range(1, len(data)), 60)) + [len(data)] * 2  # an empty one too
    pieces, start = [], 0
    for cut in cuts:
        pieces.append(data[start:cut])
        start = cut
    payload = StreamPayload(iter(pieces), len(data))
    pos, taken = 0, []
    while pos < len(data):
        n = min(rng.choice([1, 7, 300, 1500, 4096]), len(data) - pos)
        part = payload.take(pos, n)
        assert type(part) is bytes and part == data[pos : pos + n]
        taken.append(part)
        pos += n
    assert b"".join(taken) == data
    short = StreamPayload(iter(pieces[:3]), len(data))
    have = sum(len(p) for p in pieces[:3])
    with pytest.raises(DataSourceError, match=f"ended after {have} of {len(data)}"):
        short.take(0, have + 1)


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


@pytest.mark.parametrize("base", [0x7F00_0000_0000, (1 << 62) - 4096, (1 << 64) - 4096, -5000])
def test_a_sink_s_range_is_checked_on_c_integers_and_past_them(base: int) -> None:
    """The range test on C integers (the native build's, every term of magnitude at most
    2**62) and by Python's ints past it (a 64-bit VA near the top): the same edges."""
    sink = StreamReceiver(0, MemoryBudget(), max_va=base + 4096, min_va=base, rkey=1)
    assert sink.admit(0, 1, base, 4096) is None
    assert sink.admit(0, 1, base + 4095, 1) is None
    assert sink.admit(0, 1, base + 4095, 2) == DROP_MEMORY_ACCESS  # past its end
    assert sink.admit(0, 1, base - 1, 1) == DROP_MEMORY_ACCESS  # below the range
    assert sink.admit(0, 1, base, 1 << 70) == DROP_MEMORY_ACCESS  # a length past 2**62


def test_the_memory_budget_takes_up_to_its_limit_counts_refusals_and_never_goes_negative() -> None:
    """The budget a sink calls in C on the native build (the streams module's own type,
    which nic_emu.transfers hands out): the same answers and counts as Python ints."""
    budget = MemoryBudget(limit=10_000)
    assert type(budget) is StreamsBudget and budget.limit == 10_000
    assert budget.can_take(10_000) and budget.used == 0 and budget.refused == 0
    assert budget.take(6000) and not budget.can_take(4001) and budget.refused == 1
    assert not budget.take(4001) and budget.used == 6000 and budget.refused == 2
    assert budget.take(4000) and budget.used == 10_000 and not budget.can_take(1)
    budget.give(12_000)  # more than it holds: it ends at 0
    assert budget.used == 0 and budget.refused == 3
    huge = MemoryBudget(sys.maxsize)  # the virtual fabric's sinks: no limit, no overflow
    assert huge.take(sys.maxsize - 1) and huge.can_take(1) and not huge.can_take(2)
    assert MemoryBudget().limit == NIC_MEMORY_BUDGET_BYTES == 512 << 20
    with pytest.raises(AttributeError):
        budget.other = 1  # type: ignore[attr-defined]


def test_a_sink_holds_beyond_a_gap_against_its_budget_and_refuses_past_it() -> None:
    """admit and place call the budget (in C when it is a MemoryBudget) for payloads
    held beyond a gap only; the run fed behind a filled gap gives them back."""
    budget = MemoryBudget(limit=3000)
    sink = StreamReceiver(0, budget, max_va=1 << 20)
    assert sink.admit(1, 7, 1000, 1000) is None and budget.refused == 0
    sink.place(1, b"b" * 1000, False)
    assert sink.admit(2, 7, 2000, 1500) is None
    sink.place(2, b"c" * 1500, False)
    assert budget.used == 2500 and sink.held_bytes == 2500
    assert sink.admit(3, 7, 3500, 600) == DROP_MEMORY_BUDGET and budget.refused == 1
    assert sink.admit(2, 7, 2000, 1500) is None  # already held: asks nothing
    assert sink.admit(0, 7, 0, 1000) is None and budget.refused == 1  # in order
    sink.place(0, b"a" * 1000, False)
    assert budget.used == 0 and sink.next_psn == 3 and not sink.held


class CountingBudget(MemoryBudget):
    """A budget that lists what is given back, call by call."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list[int] = []

    def give(self, nbytes: int) -> None:
        self.given.append(nbytes)
        super().give(nbytes)


def test_held_payloads_are_kept_as_they_came_and_given_back_once_per_run() -> None:
    """A bytes payload beyond a gap is held as the object itself (other bytes-like ones
    as a copy); when the gap fills, the run of held payloads fed behind it is given back
    to the budget in one call, and the budget ends where it began."""
    budget = CountingBudget()
    sink = StreamReceiver(0, budget, max_va=1 << 20)
    one, two, three = b"a" * 100, bytearray(b"b" * 50), b"c" * 7
    sink.place(1, one, False)
    sink.place(2, two, False)
    sink.place(4, three, True)
    assert sink.held[1][0] is one and type(sink.held[2][0]) is bytes
    assert budget.used == 157 and sink.held_bytes == 157
    sink.place(0, b"z" * 10, False)  # 1 and 2 follow it; 4 waits for 3
    assert budget.given == [150] and budget.used == 7 and sink.held_bytes == 7
    sink.place(3, b"y", False)
    assert budget.given == [150, 7] and budget.used == 0 and sink.held_bytes == 0
    assert sink.pop_message() == (
        168,
        hashlib.sha256(b"z" * 10 + b"a" * 100 + b"b" * 50 + b"y" + b"c" * 7).hexdigest(),
    )


def test_a_held_payload_that_fails_to_feed_is_still_given_back() -> None:
    """The comparison of a held payload raises (its expected bytes' source fails): what
    was taken out of ``held`` is given back all the same, and nothing is counted twice."""

    def failing(index: int) -> StreamPayload:
        def pieces() -> Iterator[bytes]:
            yield DATA[:1024]
            raise OSError("disk gone")

        return StreamPayload(pieces(), LENGTHS[index], "expected")

    budget = CountingBudget()
    sink = ComparingReceiver(0, budget, 1 << 20, LENGTHS, failing)
    sink.place(1, DATA[1024:2048], False)
    assert budget.used == 1024
    with pytest.raises(DataSourceError, match="disk gone"):
        sink.place(0, DATA[:1024], False)
    assert budget.given == [1024] and budget.used == 0 and sink.held_bytes == 0
    sink.release()
    assert budget.given == [1024]


# ---------------------------------------------------------------- the comparing sink

DATA = random.Random(1).randbytes(16384)  # two messages of 10,000 and 6,384 bytes
LENGTHS = [10_000, len(DATA) - 10_000]


class Expected:
    """Readers of DATA's messages, counted as they are made."""

    def __init__(self) -> None:
        self.made: list[int] = []

    def __call__(self, index: int) -> StreamPayload:
        self.made.append(index)
        offset = sum(LENGTHS[:index])
        pieces = (DATA[p : p + 3000] for p in range(offset, offset + LENGTHS[index], 3000))
        return StreamPayload(pieces, LENGTHS[index], f"message {index}")


def comparing(expected: Expected | None = None) -> ComparingReceiver:
    return ComparingReceiver(0, MemoryBudget(), 1 << 20, LENGTHS, expected or Expected())


def packets(data: bytes, size: int = 1024) -> list[bytes]:
    return [data[p : p + size] for p in range(0, len(data), size)]


def feed(sink: ComparingReceiver, payloads: list[bytes], order: list[int] | None = None) -> None:
    """``payloads`` as one message from the sink's next PSN, placed in ``order``."""
    first = sink.next_psn
    for i in order if order is not None else range(len(payloads)):
        sink.place(first + i, payloads[i], i == len(payloads) - 1)


def test_comparing_sink_finds_messages_equal_in_order_and_makes_no_digest() -> None:
    expected = Expected()
    sink = comparing(expected)
    feed(sink, packets(DATA[:10_000]))
    assert expected.made == [0] and sink._reader is None  # dropped after the last packet
    feed(sink, packets(DATA[10_000:], 1000))
    assert sink.pop_checked() == (0, 10_000, True)
    assert sink.pop_checked() == (1, 6384, True)
    assert sink.pop_checked() is None and sink.pop_message() is None
    assert sink.fed_bytes == len(DATA) and expected.made == [0, 1]


@pytest.mark.parametrize("at", [0, 1023, 1024, 5000, 9999])
def test_comparing_sink_finds_one_byte_that_differs(at: int) -> None:
    damaged = bytearray(DATA[:10_000])
    damaged[at] ^= 0x80
    sink = comparing()
    feed(sink, packets(bytes(damaged)))
    feed(sink, packets(DATA[10_000:]))
    assert sink.pop_checked() == (0, 10_000, False)
    assert sink.pop_checked() == (1, 6384, True)  # the next message is checked afresh


def test_comparing_sink_finds_a_short_and_a_long_message() -> None:
    sink = comparing()
    feed(sink, packets(DATA[:9000]))  # the right bytes, but it ends early
    assert sink.pop_checked() == (0, 9000, False)
    sink = comparing()
    feed(sink, packets(DATA[:10_000] + b"\0"))  # one byte past its end
    assert sink.pop_checked() == (0, 10_001, False)
    sink = comparing()
    feed(sink, packets(DATA[:10_000]))
    feed(sink, packets(DATA[:10_000]))  # message 1's place with message 0's bytes
    feed(sink, [b"x"])  # a third message, where none is expected
    assert [sink.pop_checked() for _ in range(3)] == [
        (0, 10_000, True),
        (1, 10_000, False),
        (2, 1, False),
    ]


def test_comparing_sink_checks_payloads_held_beyond_a_gap_in_psn_order() -> None:
    payloads = packets(DATA[:10_000])
    sink = comparing()
    feed(sink, payloads, order=[0, 3, 2, 5, 9, 1, 4, 6, 8, 7])  # 3, 2, 5 and 9 (784) held
    assert sink.held_bytes == 0 and not sink.held and sink.peak_held_bytes == 3 * 1024 + 784
    assert sink.pop_checked() == (0, 10_000, True)
    swapped = comparing()  # two payloads that trade places are not the message
    feed(swapped, [payloads[i] for i in (0, 2, 1, *range(3, 10))])
    assert swapped.pop_checked() == (0, 10_000, False)


def test_comparing_sink_reads_the_expected_bytes_in_step() -> None:
    """The reader is asked for each payload's bytes as it is fed: it has made no more of
    the message than the pieces those span."""
    sink = comparing()
    sink.place(0, DATA[:1024], False)  # one packet of message 0
    reader = sink._reader
    assert reader is not None and reader._pos == 1024 and len(reader._piece) == 3000


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
