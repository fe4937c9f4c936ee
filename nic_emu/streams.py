"""Streamed WRITE data: what a sender segments packets from, and what a receiver checks
them into, without either holding a whole message (docs/nic-emu-process.md, "Memory").

- :class:`StreamPayload` is a WRITE's data as a lazy iterator of pieces (``bytes``): the
  sender takes each packet's payload from it once, in order, when it segments the packet;
  the packet keeps that payload until it is acknowledged (retransmissions reuse it), so a
  sender holds at most its unacknowledged packets' payloads and one piece.
- :class:`StreamReceiver` is a responder QP's sink: payloads arriving in PSN order feed a
  running SHA-256 of the current message at once; payloads beyond a gap are held until the
  gap fills (at most the receive window's worth), counted against a :class:`Budget`. A
  message's digest is final when its last packet is fed, so nothing is kept after it.
- :class:`ComparingReceiver` is the same sink checking each message byte for byte
  against the bytes expected there (read again from their source, a piece at a time, in
  step with the in-order placement) instead of a digest: the virtual fabric's
  (vfabric/transfers.py), which knows what each message should hold.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterator
from typing import Protocol

import cython

from nic_emu.exceptions import DataSourceError, MemoryAccessError

if cython.compiled:
    from cython.cimports.cpython.bytes import PyBytes_AS_STRING, PyBytes_FromStringAndSize
    from cython.cimports.libc.string import memcmp, memcpy
    from cython.cimports.nic_emu.nic_host import nic_ns_ll

# Drop reasons of StreamReceiver.admit (NicCore.drop's ``reason``)
DROP_MEMORY_ACCESS = "memory_access"
DROP_MEMORY_BUDGET = "memory_budget"
# StreamReceiver._outside's C path: addresses and lengths of magnitude at most 2**62 (a
# sum of two stays in a C long long); nic_ns_ll's answer for anything else
_VA_LIMIT = 1 << 62
_INEXACT = -(1 << 63)


class Budget(Protocol):
    """Bytes a NIC may hold; ``take`` is False (and counts a refusal) when they would
    pass the limit."""

    def can_take(self, nbytes: int) -> bool: ...

    def take(self, nbytes: int) -> bool: ...

    def give(self, nbytes: int) -> None: ...


# [P] What a NIC holds for its transfers together: payloads sent and not yet acknowledged
# (reserved per sending connection: receive window x MTU payload + one data piece) and
# payloads received beyond a gap. Not the transfers' sizes: data is made as it is sent.
NIC_MEMORY_BUDGET_BYTES = 512 << 20


class MemoryBudget:
    """Bytes a NIC's transfers may hold together (:data:`NIC_MEMORY_BUDGET_BYTES`):
    reservations of sending connections and payloads held out of order (the
    :class:`Budget` of ``nic_emu serve``'s transfers and of the virtual fabric's sinks).

    The native build makes it an extension type of C integers that a sink calls in C
    (:meth:`StreamReceiver.admit`, :meth:`StreamReceiver.place`) when it is exactly this
    type; a subclass, or another :class:`Budget`, is called as a Python object.
    """

    __slots__ = ("limit", "refused", "used")

    def __init__(self, limit: int = NIC_MEMORY_BUDGET_BYTES) -> None:
        self.limit = limit
        self.used = 0
        self.refused = 0

    # ``nbytes > limit - used`` is ``used + nbytes > limit`` for Python ints, and never
    # overflows a C integer (both are at least 0 while the budget is in use).
    def can_take(self, nbytes: int) -> bool:
        if nbytes > self.limit - self.used:
            self.refused += 1
            return False
        return True

    def take(self, nbytes: int) -> bool:
        if nbytes > self.limit - self.used:
            self.refused += 1
            return False
        self.used += nbytes
        return True

    def give(self, nbytes: int) -> None:
        self.used = max(0, self.used - nbytes)


class StreamPayload:
    """``length`` bytes of WRITE data from ``pieces``, taken in order (a packet at a time).

    ``pieces`` may yield pieces of any sizes; their total must be ``length``. An iterator
    that raises, or ends early, makes :meth:`take` raise :class:`DataSourceError` naming
    what went wrong (the sender fails the connection with it).
    """

    __slots__ = ("_piece", "_pieces", "_pos", "_used", "length", "what")

    def __init__(self, pieces: Iterator[bytes], length: int, what: str = "data") -> None:
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise MemoryAccessError(f"a streamed WRITE needs a length >= 0, got {length!r}")
        self.length = length
        self.what = what
        self._pieces = pieces
        self._piece = b""  # a bytes-like piece that is not ``bytes`` is copied into one
        self._used = 0  # bytes of the current piece already taken
        self._pos = 0  # bytes taken in all

    def take(self, offset: int, length: int) -> bytes:
        """The next ``length`` bytes, which start at ``offset`` of the data."""
        if offset != self._pos:
            raise MemoryAccessError(
                f"{self.what}: streamed data is read in order; asked for offset {offset}, "
                f"next is {self._pos}"
            )
        end = offset + length
        if end > self.length:
            raise MemoryAccessError(
                f"{self.what}: {length} bytes at offset {offset} pass the end ({self.length})"
            )
        piece, used = self._piece, self._used
        if len(piece) - used >= length:  # the common case: inside the current piece
            self._used = used + length
            self._pos = end
            if cython.compiled:  # the slice's copy made directly (no slice object)
                return PyBytes_FromStringAndSize(PyBytes_AS_STRING(piece) + used, length)
            return piece[used : used + length]  # one copy (a slice of bytes is bytes)
        # Across pieces: the rest of this one, then from the next ones. The native build
        # makes the result once and copies each part into it in C (no bytearray, no
        # slices, no final copy).
        have = len(piece) - used  # bytes of the result made so far
        if cython.compiled:
            result = PyBytes_FromStringAndSize(cython.NULL, length)
            dst = PyBytes_AS_STRING(result)
            memcpy(dst, PyBytes_AS_STRING(piece) + used, have)
        else:
            out = bytearray(piece[used:])
        while have < length:
            try:
                nxt = next(self._pieces)
            except StopIteration:
                raise DataSourceError(
                    f"{self.what} ended after {offset + have} of {self.length} bytes"
                ) from None
            except DataSourceError:
                raise
            except (OSError, ValueError) as exc:
                raise DataSourceError(f"{self.what}: {exc}") from None
            piece = nxt if type(nxt) is bytes else bytes(memoryview(nxt))
            want = length - have
            used = min(want, len(piece))
            if cython.compiled:
                memcpy(dst + have, PyBytes_AS_STRING(piece), used)
            else:
                out += piece[:want]
            have += used
        self._piece, self._used, self._pos = piece, used, end
        if cython.compiled:
            return result
        return bytes(out)

    def matches(self, offset: int, data: bytes | memoryview) -> bool:
        """Whether the next ``len(data)`` bytes, which start at ``offset``, equal ``data``:
        :meth:`take` and a comparison (the same errors), without the copy where ``data`` is
        ``bytes`` that lie inside the current piece (the native build compares the piece's
        buffer in C, a ``memcmp``)."""
        length = len(data)
        piece, used = self._piece, self._used
        end = offset + length
        if (
            offset == self._pos
            and end <= self.length
            and len(piece) - used >= length
            and type(data) is bytes
        ):
            self._used = used + length
            self._pos = end
            if cython.compiled:
                return memcmp(PyBytes_AS_STRING(piece) + used, PyBytes_AS_STRING(data), length) == 0
            return piece[used : used + length] == data
        return self.take(offset, length) == data

    def __len__(self) -> int:
        return self.length


class StreamReceiver:
    """The receive side of one responder QP: a running digest per message, out-of-order
    payloads held until the gap before them fills.

    ``next_psn`` follows the connection's cumulative point (every PSN below it was fed).
    Messages complete in PSN order; :meth:`pop_message` hands each one's (bytes, SHA-256)
    once, oldest first.
    """

    def __init__(
        self,
        first_psn: int,
        budget: Budget,
        max_va: int,
        *,
        min_va: int = 0,
        rkey: int | None = None,
    ) -> None:
        self.budget = budget
        self.min_va = min_va
        self.max_va = max_va
        self.next_psn = first_psn
        self.rkey = rkey  # None: the first packet's R_Key is the QP's
        self.held: dict[int, tuple[bytes, bool]] = {}  # PSN -> (payload, last)
        self.held_bytes = 0
        self.peak_held_bytes = 0
        self.fed_bytes = 0
        self._hash = hashlib.sha256()
        self._message_bytes = 0
        self._done: deque[tuple[int, str]] = deque()  # (bytes, sha256) of whole messages

    def admit(self, psn: int, rkey: int, va: int, length: int) -> str | None:
        """None if a new packet ``psn`` can be placed, else the drop reason: another R_Key
        than the QP's (given, or its first packet's), memory outside [``min_va``,
        ``max_va``), or no budget to hold it out of order."""
        if self.rkey is None:
            self.rkey = rkey
        elif rkey != self.rkey:
            return DROP_MEMORY_ACCESS  # one stream per (source NIC, QPN)
        if self._outside(va, length):
            return DROP_MEMORY_ACCESS
        if psn > self.next_psn and psn not in self.held:
            budget = self.budget
            if type(budget) is MemoryBudget:  # a C call on the native build
                fits = cython.cast(MemoryBudget, budget).can_take(length)
            else:
                fits = budget.can_take(length)
            if not fits:
                return DROP_MEMORY_BUDGET
        return None

    def _outside(self, va: int, length: int) -> bool:
        """Whether [``va``, ``va + length``) leaves [``min_va``, ``max_va``): on C
        integers when the four are ints of magnitude at most 2**62 (the native build's; a
        VA is 64 bits, its regions' far lower), by Python's ints otherwise."""
        if cython.compiled:
            v = nic_ns_ll(va, _VA_LIMIT)
            n = nic_ns_ll(length, _VA_LIMIT)
            lo = nic_ns_ll(self.min_va, _VA_LIMIT)
            hi = nic_ns_ll(self.max_va, _VA_LIMIT)
            if v != _INEXACT and n != _INEXACT and lo != _INEXACT and hi != _INEXACT:
                return v < lo or v + n > hi
        return va < self.min_va or va + length > self.max_va

    def place(self, psn: int, payload: bytes | memoryview, last: bool) -> None:
        """A new packet (never one placed before): fed at once when in order, else held."""
        if psn != self.next_psn:
            # bytes(payload) is payload itself when it is bytes: no call to make
            data = payload if type(payload) is bytes else bytes(payload)
            budget = self.budget
            if type(budget) is MemoryBudget:  # admit() checked that it fits
                cython.cast(MemoryBudget, budget).take(len(data))
            else:
                budget.take(len(data))
            self.held[psn] = (data, last)
            self.held_bytes += len(data)
            if self.held_bytes > self.peak_held_bytes:
                self.peak_held_bytes = self.held_bytes
            return
        self._feed(payload, last)
        held = self.held
        nxt = self.next_psn
        freed = 0  # given back to the budget at once when the run of held payloads ends
        try:
            while held:
                found = held.pop(nxt, None)
                if found is None:
                    break
                data, is_last = found
                self.held_bytes -= len(data)
                freed += len(data)
                self._feed(data, is_last)
                nxt = self.next_psn
        finally:  # a payload taken out of ``held`` is given back even if feeding it fails
            if freed:
                budget = self.budget
                if type(budget) is MemoryBudget:
                    cython.cast(MemoryBudget, budget).give(freed)
                else:
                    budget.give(freed)

    def _feed(self, payload: bytes | memoryview, last: bool) -> None:
        self._hash.update(payload)
        n = len(payload)
        self._message_bytes += n
        self.fed_bytes += n
        self.next_psn += 1
        if last:
            self._done.append((self._message_bytes, self._hash.hexdigest()))
            self._hash = hashlib.sha256()
            self._message_bytes = 0

    def pop_message(self) -> tuple[int, str] | None:
        """(bytes, SHA-256) of the oldest message not yet popped, None if none is done."""
        return self._done.popleft() if self._done else None

    def release(self) -> None:
        """Give back what is held (the QP is destroyed)."""
        if self.held_bytes:
            self.budget.give(self.held_bytes)
        self.held.clear()
        self.held_bytes = 0


class ComparingReceiver(StreamReceiver):
    """A :class:`StreamReceiver` that compares what it places with the bytes expected,
    instead of digesting it: message ``i`` (the ``i``-th completed, in PSN order) must be
    exactly ``lengths[i]`` bytes equal to ``expected(i)`` (a reader of them, made when the
    message's first payload is fed, dropped when its last is). Payloads beyond a gap are
    held as by the parent, so the comparison runs in PSN order, a packet at a time: no
    message is held whole, only the expected reader's current piece.

    :meth:`pop_checked` hands each message's (index, bytes placed, equal) once, oldest
    first; a message is equal when every byte matched and it ended exactly at its length
    (a short one, a long one or one beyond ``lengths`` is not). :meth:`pop_message` has
    nothing to hand (no digest is made).
    """

    def __init__(
        self,
        first_psn: int,
        budget: Budget,
        max_va: int,
        lengths: list[int],
        expected: Callable[[int], StreamPayload],
        *,
        min_va: int = 0,
        rkey: int | None = None,
    ) -> None:
        super().__init__(first_psn, budget, max_va, min_va=min_va, rkey=rkey)
        self.lengths = lengths
        self.expected = expected
        self._index = 0  # the message being fed
        self._reader: StreamPayload | None = None  # its expected bytes (None: not begun)
        self._equal = True  # every byte of it fed so far matched
        self._checked: deque[tuple[int, int, bool]] = deque()

    def _feed(self, payload: bytes | memoryview, last: bool) -> None:
        n = len(payload)
        pos = self._message_bytes
        self._message_bytes = pos + n
        self.fed_bytes += n
        self.next_psn += 1
        if self._equal:
            self._equal = self._matches(pos, payload, n)
        if last:
            index = self._index
            size = self._message_bytes
            equal = self._equal and size == self.lengths[index]
            self._checked.append((index, size, equal))
            self._index = index + 1
            self._reader = None
            self._equal = True
            self._message_bytes = 0

    def _matches(self, pos: int, payload: bytes | memoryview, n: int) -> bool:
        """Whether ``payload`` (``n`` bytes at ``pos`` of the current message) is what the
        message holds there; False once it passes the message's end."""
        index = self._index
        if index >= len(self.lengths) or pos + n > self.lengths[index]:
            return False
        reader = self._reader
        if reader is None:
            reader = self._reader = self.expected(index)
        return reader.matches(pos, payload)

    def pop_checked(self) -> tuple[int, int, bool] | None:
        """(index, bytes placed, equal to the expected bytes) of the oldest message not
        yet popped, None if none is done."""
        return self._checked.popleft() if self._checked else None
