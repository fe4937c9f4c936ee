"""Receive side of a connection: which PSNs arrived, the SACK view, message boundaries.

Arrival tracking is a Python-int bitmap relative to the cumulative point ``rcv_nxt``
(every PSN below it has arrived), so an in-order arrival costs a few integer operations.
"""

from __future__ import annotations

import heapq

SACK_BITS = 64
SACK_MASK = (1 << SACK_BITS) - 1

# Results of ReceiveState.accept
NEW_IN_ORDER = 0  # advanced the cumulative point
NEW_OUT_OF_ORDER = 1  # new, beyond a gap
DUPLICATE = 2  # already received: never placed again
OUT_OF_WINDOW = 3  # beyond the receive window: dropped, not acknowledged


class ReceiveState:
    """Selective-repeat receiver state (MRC)."""

    __slots__ = ("ooo", "rcv_nxt", "window")

    def __init__(self, initial_psn: int, window: int) -> None:
        self.rcv_nxt = initial_psn
        self.ooo = 0  # bit i set: PSN rcv_nxt + i has arrived (bit 0 is always clear)
        self.window = window

    def accept(self, psn: int) -> int:
        off = psn - self.rcv_nxt
        if off == 0:
            if not self.ooo:  # nothing arrived beyond: the point moves by one (the usual)
                self.rcv_nxt += 1
                return NEW_IN_ORDER
            bits = self.ooo | 1
            run = (bits ^ (bits + 1)).bit_length() - 1  # trailing ones
            self.rcv_nxt += run
            self.ooo = bits >> run
            return NEW_IN_ORDER
        if off < 0:
            return DUPLICATE
        if off >= self.window:
            return OUT_OF_WINDOW
        if (self.ooo >> off) & 1:
            return DUPLICATE
        self.ooo |= 1 << off
        return NEW_OUT_OF_ORDER

    def sack_view(self, trigger_psn: int) -> tuple[int, int]:
        """(bitmap base PSN, 64-bit bitmap) covering ``trigger_psn`` when it is ahead.

        The window starts right after the cumulative point unless the trigger lies
        beyond it, in which case it is the 64-PSN window ending at the trigger.
        """
        base = self.rcv_nxt
        off = trigger_psn - base - (SACK_BITS - 1)
        if off > 0:
            base += off
            return base, (self.ooo >> off) & SACK_MASK
        return base, self.ooo & SACK_MASK


class GoBackNReceiveState:
    """RoCE-like receiver: accepts only the next PSN, drops everything out of order."""

    __slots__ = ("nak_outstanding", "rcv_nxt", "window")

    def __init__(self, initial_psn: int, window: int) -> None:
        self.rcv_nxt = initial_psn
        self.window = window
        self.nak_outstanding = False  # a sequence-error NAK was sent for rcv_nxt

    def accept(self, psn: int) -> int:
        off = psn - self.rcv_nxt
        if off == 0:
            self.rcv_nxt += 1
            self.nak_outstanding = False
            return NEW_IN_ORDER
        if off < 0:
            return DUPLICATE
        if off >= self.window:
            return OUT_OF_WINDOW
        return NEW_OUT_OF_ORDER  # caller drops it and NAKs once


class MessageTracker:
    """Message boundaries seen by a receiver. A message completes, in PSN order, once the
    cumulative point passes its last PSN (so every one of its bytes has been placed).

    The wire marks only the *last* packet of a message; a message's first PSN is the one
    after the previous message's last, and its VA is the VA that first packet carried,
    so the VA of every packet is kept until its message completes.
    """

    __slots__ = ("_end_heap", "_ends", "msg_first_psn", "va_by_psn")

    def __init__(self, initial_psn: int) -> None:
        self.msg_first_psn = initial_psn
        self.va_by_psn: dict[int, int] = {}  # PSN -> VA, for PSNs of incomplete messages
        self._ends: dict[int, tuple[int, int]] = {}  # last PSN -> (rkey, end VA)
        self._end_heap: list[int] = []

    def note(self, psn: int, va: int) -> None:
        self.va_by_psn[psn] = va

    def prune(self, rcv_nxt: int) -> None:
        """Forget the VAs of PSNs below the cumulative point that cannot start a message.

        Once every message due at ``rcv_nxt`` has been completed, the only message start
        below it is :attr:`msg_first_psn` (a later one would follow a last PSN below
        ``rcv_nxt``, whose message is complete): the map keeps that and the PSNs beyond
        the cumulative point (at most the receive window), not one entry per packet of a
        long message."""
        first = self.msg_first_psn
        vas = self.va_by_psn
        for psn in [p for p in vas if first < p < rcv_nxt]:
            del vas[psn]

    def note_last(self, psn: int, rkey: int, end_va: int) -> None:
        if psn not in self._ends:
            self._ends[psn] = (rkey, end_va)
            heapq.heappush(self._end_heap, psn)

    def has_due(self, rcv_nxt: int) -> bool:
        """True when :meth:`completed` has something to return."""
        heap = self._end_heap
        return bool(heap) and heap[0] < rcv_nxt

    def completed(self, rcv_nxt: int) -> list[tuple[int, int, int, int, int]]:
        """Messages whose last PSN is below ``rcv_nxt``, oldest first.

        Each is (first PSN, last PSN, rkey, VA, length); VA and length are -1 if the
        first packet's VA was never recorded.
        """
        heap = self._end_heap
        if not heap or heap[0] >= rcv_nxt:
            return []
        out = []
        vas = self.va_by_psn
        while heap and heap[0] < rcv_nxt:
            last = heapq.heappop(heap)
            rkey, end_va = self._ends.pop(last)
            first = self.msg_first_psn
            va = vas.get(first, -1)
            for psn in range(first, last + 1):
                vas.pop(psn, None)
            out.append((first, last, rkey, va, end_va - va if va >= 0 else -1))
            self.msg_first_psn = last + 1
        return out
