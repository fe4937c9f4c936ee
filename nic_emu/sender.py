"""Send side of a connection: segmentation, in-flight tracking, loss detection, RTO.

Packets are segmented lazily from posted WRITE requests when the window opens, each
taking its payload from the WRITE's data then (:class:`Payload`). Every
transmission gets a monotonic ``tx_seq``; ``outstanding`` lists the packets in the order
of their latest transmission (each in-flight packet once: one taken out of flight
elsewhere than at the front leaves the list then, :meth:`SendState.mark_lost`), so both
loss detectors look only at its front:

- SACK-driven (RACK-like): a packet is lost once a transmission sent at least
  ``reorder_threshold_pkts`` sends *and* ``reorder_window_ns`` later has been
  acknowledged. Time-ordered evidence copes with the reordering that spraying over
  planes with different queue depths causes; counting sends alone does not.
- Timeout: a packet unacknowledged ``rto`` after its (re)transmission.

Lost packets go to a min-heap of PSNs: retransmission is oldest gap first.

PSNs: Inside the core PSNs are unbounded Python ints counted from the connection's initial
PSN, so comparisons never wrap; only the wire carries them modulo 2^24. A received
24-bit PSN is unwrapped to the unbounded value nearest to a reference.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Protocol

import cython

from nic_emu.ev_set import EvEntry
from nic_emu.streams import StreamPayload

PSN_BITS = 24
PSN_MOD = 1 << PSN_BITS
PSN_MASK = PSN_MOD - 1
PSN_HALF = PSN_MOD >> 1  # unwrap(): the nearest of two congruent PSNs


def unwrap(psn24: int, reference: int) -> int:
    """The unbounded PSN congruent to ``psn24`` (mod 2^24) nearest to ``reference``."""
    delta = (psn24 - reference) & PSN_MASK
    if delta >= PSN_HALF:
        delta -= PSN_MOD
    return reference + delta


IN_FLIGHT = 0
LOST = 1  # queued for retransmission, not counted in flight
ACKED = 2
# the same, as C integers on the native build (sender.pxd): a packet's state (a C field)
# is compared and set without a global's lookup and an int object's comparison
_IN_FLIGHT = IN_FLIGHT
_LOST = LOST
_ACKED = ACKED

#: ``SendState.outstanding``'s entries before ``out_head`` (done with) are dropped in one
#: step once this many have gathered and the front is reached again (a list's head moves
#: by an index, not by a deque's pop: the native build reads the list in C)
OUT_COMPACT = 64


class Payload(Protocol):
    """A WRITE's data as the sender reads it: ``take(offset, length)`` is asked once per
    packet, in order of offset (a :class:`memoryview` slice of posted bytes, or
    :class:`nic_emu.streams.StreamPayload` for data made as it is sent)."""

    def take(self, offset: int, length: int) -> bytes | memoryview: ...


class BufferPayload:
    """Posted bytes: each packet's payload is a view into them (no copy)."""

    __slots__ = ("view",)

    def __init__(self, view: memoryview) -> None:
        self.view = view

    def take(self, offset: int, length: int) -> memoryview:
        return self.view[offset : offset + length]


class WriteRequest:
    """One RDMA WRITE posted by the application: ``length`` bytes from ``data``.

    A plain slotted class rather than a dataclass (an extension type natively:
    ``nic_emu/sender.pxd``); compared by identity."""

    __slots__ = (
        "acked_pkts",
        "data",
        "first_psn",
        "last_psn",
        "length",
        "next_offset",
        "npkts",
        "posted_ns",
        "remote_va",
        "rkey",
        "segmented",
        "wr_id",
    )

    def __init__(
        self,
        wr_id: int,
        data: Payload,
        length: int,
        remote_va: int,
        rkey: int,
        npkts: int,
        posted_ns: int,
        first_psn: int = -1,
        last_psn: int = -1,
        next_offset: int = 0,
        segmented: int = 0,
        acked_pkts: int = 0,
    ) -> None:
        self.wr_id = wr_id
        self.data = data
        self.length = length
        self.remote_va = remote_va
        self.rkey = rkey
        self.npkts = npkts
        self.posted_ns = posted_ns
        self.first_psn = first_psn
        self.last_psn = last_psn
        self.next_offset = next_offset  # bytes segmented into packets so far
        self.segmented = segmented  # packets segmented so far
        self.acked_pkts = acked_pkts

    @property
    def done(self) -> bool:
        return self.acked_pkts == self.npkts


class TxPacket:
    """One data packet (one PSN), reused across its retransmissions.

    A plain slotted class rather than a dataclass: one is built per packet sent, and
    its constructor is on the hot path.
    """

    __slots__ = (
        "entry",
        "first",
        "last",
        "length",
        "offset",
        "payload",
        "psn",
        "sent_ns",
        "state",
        "transmissions",
        "tx_seq",
        "wr",
    )

    def __init__(
        self, psn: int, wr: WriteRequest, offset: int, length: int, first: bool, last: bool
    ) -> None:
        self.psn = psn
        self.wr = wr
        self.offset = offset
        self.length = length
        self.first = first
        self.last = last
        # Taken from the WRITE's data once, when segmented; kept for retransmissions
        # until acknowledged (then dropped: a sender holds only unacknowledged payloads).
        self.payload: bytes | memoryview = b""
        self.entry: EvEntry | None = None  # EV of the latest transmission
        self.sent_ns = 0
        self.tx_seq = -1
        self.transmissions = 0
        self.state = _IN_FLIGHT

    def __repr__(self) -> str:
        return (
            f"TxPacket(psn={self.psn}, length={self.length}, state={self.state}, "
            f"transmissions={self.transmissions})"
        )


def _new_packet(
    psn: int, wr: WriteRequest, offset: int, length: int, first: bool, last: bool
) -> TxPacket:
    """``TxPacket(psn, wr, offset, length, first, last)``. The native build makes it
    without the constructor's call (six arguments boxed and parsed per packet): the
    type's allocation (None, zero, False everywhere), then the constructor's other
    fields (tests/nic_emu/test_sender.py compares every field)."""
    if not cython.compiled:
        return TxPacket(psn, wr, offset, length, first, last)
    pkt = TxPacket.__new__(TxPacket)
    pkt.psn = psn
    pkt.wr = wr
    pkt.offset = offset
    pkt.length = length
    pkt.first = first
    pkt.last = last
    pkt.payload = b""
    pkt.tx_seq = -1
    return pkt


class SendState:
    """Selective-repeat (or go-back-N) sender bookkeeping; no policy about EVs or CC."""

    def __init__(self, initial_psn: int, mtu: int, window_psns: int) -> None:
        self.mtu = mtu
        self.window_psns = window_psns
        self.next_psn = initial_psn
        self.snd_una = initial_psn
        self.unacked: dict[int, TxPacket] = {}
        # bit i: PSN snd_una + i was acknowledged by :meth:`ack` (a SACK bitmap); every
        # unacknowledged PSN is in ``unacked``, all at or above snd_una
        self.sacked = 0
        self.rtx_heap: list[int] = []
        self.inflight_bytes = 0
        self.tx_seq = 0
        # Packets in the order of their latest transmission, from ``out_head`` on (the
        # entries before it are done with). Every in-flight packet is here exactly once;
        # acknowledged ones are skipped when they reach the front.
        self.outstanding: list[TxPacket] = []
        self.out_head = 0
        self.acked_max_tx_seq = -1
        self.acked_max_sent_ns = -1
        self.pending: deque[WriteRequest] = deque()  # WRs with bytes not yet segmented
        self.incomplete: deque[WriteRequest] = deque()  # WRs not fully acknowledged
        self.retransmissions = 0

    # -- application -------------------------------------------------------------

    def post(self, wr: WriteRequest) -> None:
        self.pending.append(wr)
        self.incomplete.append(wr)

    def has_work(self) -> bool:
        return bool(self.rtx_heap) or bool(self.pending)

    def idle(self) -> bool:
        return not self.incomplete

    # -- transmission ------------------------------------------------------------

    def next_packet(self) -> TxPacket | None:
        """The next packet to send: the oldest lost PSN, else new data within the window."""
        heap = self.rtx_heap
        while heap:
            pkt = self.unacked.get(heapq.heappop(heap))
            if pkt is not None and pkt.state == _LOST:
                return pkt
        if not self.pending or self.next_psn - self.snd_una >= self.window_psns:
            return None
        wr = self.pending[0]
        offset = wr.next_offset
        length = min(self.mtu, wr.length - offset)
        # first: it may raise (a failed source). A stream's reader is called in C on the
        # native build, any other Payload through Python.
        data = wr.data
        if type(data) is StreamPayload:
            payload = cython.cast(StreamPayload, data).take(offset, length)
        else:
            payload = data.take(offset, length)
        psn = self.next_psn
        self.next_psn = psn + 1
        if wr.segmented == 0:
            wr.first_psn = psn
        wr.segmented += 1
        wr.next_offset = offset + length
        last = wr.segmented == wr.npkts
        if last:
            wr.last_psn = psn
            self.pending.popleft()
        pkt = _new_packet(psn, wr, offset, length, offset == 0, last)
        pkt.payload = payload
        self.unacked[psn] = pkt
        return pkt

    def sent(self, pkt: TxPacket, entry: EvEntry | None, now: int) -> None:
        seq = self.tx_seq
        self.tx_seq = seq + 1
        pkt.tx_seq = seq
        pkt.sent_ns = now
        pkt.entry = entry
        if pkt.transmissions:
            self.retransmissions += 1
        pkt.transmissions += 1
        pkt.state = _IN_FLIGHT
        self.inflight_bytes += pkt.length
        self.outstanding.append(pkt)

    # -- acknowledgement -----------------------------------------------------------

    def ack(self, psn: int, ambiguous_after: int) -> TxPacket | None:
        """Mark one PSN acknowledged; returns the packet if this is news.

        A retransmission sent after ``ambiguous_after`` (the acknowledgement's arrival
        less the minimum RTT) cannot be the transmission acknowledged: the original was.
        The packet is acknowledged all the same, but its send time and order do not feed
        loss detection (RFC 8985 section 6.2, step 2): they would date every packet sent
        before the retransmission as overtaken, and declare them lost."""
        pkt = self.unacked.pop(psn, None)
        if pkt is None:
            return None
        self.sacked |= 1 << (psn - self.snd_una)
        if pkt.state == _IN_FLIGHT:
            self.inflight_bytes -= pkt.length
        pkt.state = _ACKED
        pkt.payload = b""
        pkt.wr.acked_pkts += 1
        if pkt.tx_seq > self.acked_max_tx_seq and (
            pkt.transmissions == 1 or pkt.sent_ns <= ambiguous_after
        ):
            self.acked_max_tx_seq = pkt.tx_seq
            self.acked_max_sent_ns = pkt.sent_ns
        return pkt

    def ack_below(self, cumulative: int, ambiguous_after: int) -> int:
        """Acknowledge every PSN below ``cumulative``; returns the bytes newly acknowledged.
        A retransmission sent after ``ambiguous_after`` is counted as delivered on its EV
        but credits neither loss detection nor the EV's evidence of working (:meth:`ack`)."""
        unacked = self.unacked
        acked = 0
        max_seq = self.acked_max_tx_seq
        max_sent = self.acked_max_sent_ns
        for psn in range(self.snd_una, min(cumulative, self.next_psn)):
            pkt = unacked.pop(psn, None)
            if pkt is None:
                continue
            length = pkt.length
            if pkt.state == _IN_FLIGHT:
                self.inflight_bytes -= length
            pkt.state = _ACKED
            pkt.payload = b""
            pkt.wr.acked_pkts += 1
            acked += length
            entry = pkt.entry
            if entry is not None:
                entry.acked_packets += 1  # delivered bytes per EV: counted either way
            if pkt.transmissions > 1 and pkt.sent_ns > ambiguous_after:
                continue  # the original was acknowledged, not this retransmission
            if entry is not None and pkt.sent_ns > entry.acked_sent_ns:
                entry.acked_sent_ns = pkt.sent_ns
            if pkt.tx_seq > max_seq:
                max_seq = pkt.tx_seq
                max_sent = pkt.sent_ns
        self.acked_max_tx_seq = max_seq
        self.acked_max_sent_ns = max_sent
        return acked

    def advance_una(self, cumulative: int) -> bool:
        """Move ``snd_una`` past acknowledged PSNs; True if it moved."""
        old = self.snd_una
        una = max(old, min(cumulative, self.next_psn))
        unacked = self.unacked
        nxt = self.next_psn
        while una < nxt and una not in unacked:
            una += 1
        if una == old:
            return False
        self.snd_una = una
        self.sacked >>= una - old
        return True

    def write_done(self) -> bool:
        """Whether the oldest incomplete WR is wholly acknowledged: whether
        :meth:`completed_writes` has any to return (asked first: most acknowledgements
        complete none, and then no list is made)."""
        q = self.incomplete
        if not q:
            return False
        wr = q[0]
        return wr.acked_pkts == wr.npkts

    def completed_writes(self) -> list[WriteRequest]:
        """WRs now fully acknowledged, in posting order (RDMA completes in order)."""
        out = []
        q = self.incomplete
        while q:
            wr = q[0]  # a WriteRequest: its counts are C fields on the native build
            if wr.acked_pkts != wr.npkts:
                break
            out.append(q.popleft())
        return out

    # -- loss ----------------------------------------------------------------------

    def _front(self) -> TxPacket | None:
        """The oldest in-flight transmission (left at the front: ``out_head``)."""
        q = self.outstanding
        head = self.out_head
        end = len(q)
        while head < end:
            pkt = q[head]
            if pkt.state == _IN_FLIGHT:
                if head >= OUT_COMPACT:
                    del q[:head]
                    head = 0
                self.out_head = head
                return pkt
            head += 1
        q.clear()
        self.out_head = 0
        return None

    def front_lost(self, max_seq: int, max_sent_ns: int) -> bool:
        """Whether the oldest in-flight packet is lost by the SACK evidence: sent at or
        before transmission ``max_seq`` and at or before ``max_sent_ns`` (the first test
        of :meth:`detect_losses`, with its limits given: False, and it would find none)."""
        pkt = self._front()
        return pkt is not None and pkt.tx_seq <= max_seq and pkt.sent_ns <= max_sent_ns

    def detect_losses(self, threshold_pkts: int, window_ns: int) -> list[TxPacket]:
        """Packets the SACK evidence shows lost (now queued for retransmission)."""
        lost: list[TxPacket] = []
        max_seq = self.acked_max_tx_seq - threshold_pkts
        max_sent = self.acked_max_sent_ns - window_ns
        while True:
            pkt = self._front()
            if pkt is None or pkt.tx_seq > max_seq or pkt.sent_ns > max_sent:
                return lost
            self.out_head += 1
            self._lose(pkt)
            lost.append(pkt)

    def lost_before(self, sent_ns_limit: int) -> list[TxPacket]:
        """In-flight packets sent at or before ``sent_ns_limit``, now LOST (tail probe)."""
        lost: list[TxPacket] = []
        while True:
            pkt = self._front()
            if pkt is None or pkt.sent_ns > sent_ns_limit:
                return lost
            self.out_head += 1
            self._lose(pkt)
            lost.append(pkt)

    def oldest_sent_ns(self) -> int | None:
        pkt = self._front()
        return None if pkt is None else pkt.sent_ns

    def pop_expired(self, deadline_sent_ns: int) -> TxPacket | None:
        """The oldest in-flight packet sent at or before ``deadline_sent_ns``, now LOST."""
        pkt = self._front()
        if pkt is None or pkt.sent_ns > deadline_sent_ns:
            return None
        self.out_head += 1
        self._lose(pkt)
        return pkt

    def rewind(self, from_psn: int) -> int:
        """Go-back-N: every in-flight PSN >= ``from_psn`` is resent; returns how many."""
        count = 0
        for psn in range(max(from_psn, self.snd_una), self.next_psn):
            pkt = self.unacked.get(psn)
            if pkt is not None and pkt.state == _IN_FLIGHT:
                self._lose(pkt)
                count += 1
        if count:  # their entries leave ``outstanding`` together
            q = self.outstanding
            q[self.out_head :] = [p for p in q[self.out_head :] if p.state != _LOST]
        return count

    def mark_lost(self, pkt: TxPacket) -> None:
        """Take an in-flight packet out of flight (and out of ``outstanding``) and queue
        it for retransmission."""
        q = self.outstanding
        i = len(q) - 1
        while i >= self.out_head:
            if q[i] is pkt:
                del q[i]
                break
            i -= 1
        self._lose(pkt)

    def _lose(self, pkt: TxPacket) -> None:
        """:meth:`mark_lost` for a packet already out of ``outstanding``."""
        pkt.state = _LOST
        self.inflight_bytes -= pkt.length
        heapq.heappush(self.rtx_heap, pkt.psn)

    def in_flight_on_path(self, path: object) -> list[TxPacket]:
        """In-flight packets whose latest transmission went out on an EV of ``path``."""
        return [
            p
            for p in self.unacked.values()
            if p.state == _IN_FLIGHT and p.entry is not None and p.entry.path == path
        ]

    def in_flight_on_plane(self, plane: int) -> list[TxPacket]:
        """In-flight packets whose latest transmission went out on ``plane``."""
        return [
            p
            for p in self.unacked.values()
            if p.state == _IN_FLIGHT and p.entry is not None and p.entry.plane == plane
        ]
