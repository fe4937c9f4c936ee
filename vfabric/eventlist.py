"""The one event list of a virtual fabric: integer nanoseconds, one shared clock.

The shape follows htsim's ``EventList``: components (switches, wires, NICs, faults)
schedule their own callbacks; the list runs them in time order and moves the shared
:class:`p4emu.runtime.clock.VirtualClock` to each event's time before running it, so every
p4emu switch reads the same virtual time. Callbacks scheduled for the same instant run in
the order they were scheduled, which makes a run deterministic.

Two ways to schedule, one order (both take the next tie-breaking number):

- :meth:`EventList.at` refuses a time in the past and returns an :class:`EventHandle`
  that :meth:`EventList.cancel` takes: for faults, transfers, pause frames, tests;
- :meth:`EventList.push`, the per-packet path: no check and no handle, for a caller whose
  time is at or after :attr:`now` by construction; :meth:`EventList.push_source` the same
  for an :class:`EventSource` (a wire's arrivals, a switch's or a NIC's wake-ups), whose
  :meth:`EventSource.fire` the native build calls in C, with no bound method made per
  event; :meth:`EventList.push_source_int` the same for :meth:`EventSource.fire_int`,
  whose argument is an integer the native build keeps in C (a switch's wake-up time: no
  int object per event).

Nothing outside this module touches the heap.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any

import cython

if cython.compiled:  # the native build's list (see EventList): C memory, refcounted slots
    from cython.cimports.cpython.list import PyList_GET_ITEM, PyList_SET_ITEM
    from cython.cimports.cpython.object import PyObject
    from cython.cimports.cpython.ref import Py_INCREF, Py_XDECREF
    from cython.cimports.libc.stdlib import free, realloc
    from cython.cimports.vfabric.eventlist import (
        _BUCKETS,
        _DIGIT_BITS,
        _DIGITS,
        _LEVELS,
        _bit_length,
        _Bucket,
        _Event,
        _list_store,
        _lowest_bit,
    )

from p4emu.runtime.clock import VirtualClock
from vfabric.exceptions import EventHandleError, FaultTimeError, VirtualFabricError

#: one scheduled callback on the heap: (time_ns, sequence, callback, argument)
Entry = tuple[int, int, Callable[[Any], Any], Any]


class EventHandle:
    """What :meth:`EventList.at` returns: the event's time and tie-breaking number, for
    :meth:`EventList.cancel`. ``cancelled`` is true once a cancel removed it."""

    __slots__ = ("cancelled", "entry", "events")

    def __init__(self, events: EventList, entry: Entry) -> None:
        self.events = events
        self.entry = entry
        self.cancelled = False

    @property
    def time_ns(self) -> int:
        return self.entry[0]

    @property
    def sequence(self) -> int:
        return self.entry[1]

    def __repr__(self) -> str:
        state = " cancelled" if self.cancelled else ""
        return f"<EventHandle #{self.entry[1]} at {self.entry[0]} ns{state}>"


#: the native build's list starts with room for this many events, doubling when full
C_HEAP_START = 1024


class EventSource:
    """A component whose main event :meth:`EventList.push_source` schedules: the list
    runs ``source.fire(arg)`` at the event's time. On the native build ``fire`` is a C
    method (declared in ``eventlist.pxd``) that the run loop calls directly; pure, it is
    an ordinary method. Subclasses say what their event does."""

    __slots__ = ()

    def fire(self, arg: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no event of its own to fire")

    def fire_int(self, arg: int) -> None:
        """The event :meth:`EventList.push_source_int` schedules, whose argument is an
        integer (a C ``long long`` on the native build): ``fire(arg)`` unless a subclass
        takes it without an int object."""
        self.fire(arg)


class EventList:
    """A heap of ``(time_ns, sequence, callback, argument)``; see the module docstring.

    Two representations of one order (events are unique by ``(time_ns, sequence)``, so
    every correct heap pops them in the same order):

    - pure Python: a :mod:`heapq` list of tuples;
    - the native build (``cython.compiled``): a radix heap of C structs ``(t, seq)`` in
      C memory, chained by slot (see "the native build's list" below), the callback and
      argument kept in two Python lists at the event's slot (a free slot is reused; the
      lists keep the objects visible to the cycle collector). No tuple, no sequence
      integer and no comparison object is made per event, and a put or a take compares
      no more than a few times.
    """

    __slots__ = ("_queue", "_sequence", "clock", "events_run", "now")

    def __init__(self, clock: VirtualClock | None = None) -> None:
        self.clock = clock if clock is not None else VirtualClock()
        self.now = self.clock.now_ns()
        self._queue: list[Entry] = []
        #: the next tie-breaking number (scheduling order among events at one instant)
        self._sequence: Callable[[], int] = itertools.count(1).__next__
        self.events_run = 0
        if cython.compiled:
            self._seq = 1
            self._size = 0
            self._cap = 0
            self._fns = []
            self._args = []
            self._now_obj = self.now
            self._now_t = self.now
            self._c_grow()

    def now_object(self) -> int:
        """:attr:`now` as an int object, for a caller that passes the time on to Python
        code (a NIC core's calls). Compiled, made at the first call at this time and kept
        for the next readers (the run loop makes none: most times have no reader); a new
        one once ``now`` moved. Pure, ``now`` itself."""
        if cython.compiled:
            if self._now_t != self.now:
                self._now_obj = self.now
                self._now_t = self.now
            return self._now_obj
        return self.now

    def at(self, t_ns: int, fn: Callable[[Any], Any], arg: Any = None) -> EventHandle:
        """Run ``fn(arg)`` at virtual time ``t_ns`` (not before now); the handle cancels it."""
        if t_ns < self.now:
            raise FaultTimeError(
                f"cannot schedule at {t_ns} ns: virtual time is already {self.now} ns"
            )
        if cython.compiled:
            entry = (t_ns, self._seq, fn, arg)
            self._c_push(t_ns, fn, arg)
            return EventHandle(self, entry)
        entry = (t_ns, self._sequence(), fn, arg)
        heappush(self._queue, entry)
        return EventHandle(self, entry)

    def push(self, t_ns: int, fn: Callable[[Any], Any], arg: Any) -> None:
        """The per-packet path: run ``fn(arg)`` at ``t_ns``, which the caller guarantees is
        at or after :attr:`now` (unchecked; no handle). Same order as :meth:`at`."""
        if cython.compiled:
            self._c_push(t_ns, fn, arg)
            return
        heappush(self._queue, (t_ns, self._sequence(), fn, arg))

    def push_source(self, t_ns: int, source: EventSource, arg: Any) -> None:
        """:meth:`push` of ``source.fire(arg)``: the same order (the next tie-breaking
        number), without a bound method per event on the native build."""
        if cython.compiled:
            self._direct[self._c_push(t_ns, source, arg)] = 1
            return
        heappush(self._queue, (t_ns, self._sequence(), source.fire, arg))

    def push_source_int(self, t_ns: int, source: EventSource, arg: int) -> None:
        """:meth:`push_source` of ``source.fire_int(arg)`` for an integer ``arg`` (a signed
        64-bit one): the same order. The native build keeps ``arg`` in a C array beside
        the slot's callback (``_ints``), so no int object is made or kept per event."""
        if cython.compiled:
            slot = self._c_push(t_ns, source, None)
            self._direct[slot] = 2
            self._ints[slot] = arg
            return
        heappush(self._queue, (t_ns, self._sequence(), source.fire_int, arg))

    def cancel(self, handle: EventHandle) -> bool:
        """Take ``handle``'s event off the list: True if it was pending. An event that has
        already run (or is running) or was already cancelled is left alone: False, a
        no-op, so a component may cancel a timer without knowing whether it fired. A handle
        that this list did not give out raises :class:`EventHandleError`. Costs a pass
        over the pending events (for rare events: faults, timers of a test)."""
        if not isinstance(handle, EventHandle):
            raise EventHandleError(f"not an event handle: {handle!r}")
        if handle.events is not self:
            raise EventHandleError(f"{handle!r} was scheduled on another event list")
        if handle.cancelled:
            return False
        queue = self._queue
        entry = handle.entry
        if entry[0] < self.now:
            return False  # ran at an earlier instant
        if cython.compiled:
            if not self._c_remove(entry[0], entry[1]):
                return False  # ran at this instant (or is running)
            handle.cancelled = True
            return True
        # Pending events are unique by (time, sequence), so removing one and restoring
        # the heap leaves every other event's turn unchanged.
        try:
            index = queue.index(entry)
        except ValueError:
            return False  # ran at this instant (or is running)
        last = queue.pop()
        if index < len(queue):
            queue[index] = last
            heapify(queue)
        handle.cancelled = True
        return True

    def next_time(self) -> int | None:
        if cython.compiled:
            return self._c_next() if self._size else None
        return self._queue[0][0] if self._queue else None

    def pending(self) -> int:
        if cython.compiled:
            return self._size
        return len(self._queue)

    def run(self, until_ns: int | None, stop: Callable[[], bool], check_every: int = 64) -> bool:
        """Run events in time order until ``until_ns`` (inclusive) or until ``stop()`` is
        true (checked every ``check_every`` events) or nothing is left. Returns True when
        ``stop()`` ended the run."""
        if isinstance(check_every, bool) or not isinstance(check_every, int) or check_every < 1:
            raise VirtualFabricError(f"check_every must be a positive integer, got {check_every!r}")
        if cython.compiled:
            stopped = self._c_run(until_ns, stop, check_every)
        else:
            stopped = self._run(until_ns, stop, check_every)
        if stopped or stop():
            return True
        if until_ns is not None and self.now < until_ns:
            self.now = until_ns
            self.clock.set_ns(until_ns)
        return False

    def _run(self, until_ns: int | None, stop: Callable[[], bool], check_every: int) -> bool:
        """:meth:`run`'s events on the pure heap: True when ``stop()`` ended them."""
        heap = self._queue
        pop = heappop
        set_clock = self.clock.set_ns
        count = 0  # events run in the chunks before the current one
        i = -1  # the current chunk's event: i events of it ran before this one
        now = self.now
        limit = until_ns if until_ns is not None else 1 << 62
        if limit < now:  # every pending event is at or after now: none is due
            heap = []
        try:
            # stop() is asked before every check_every-th event; in between, events run
            # in a plain loop over a chunk, counted once per chunk (from its index i)
            while heap:
                if stop():
                    return True
                for i in range(check_every):
                    t, seq, fn, arg = pop(heap)
                    if t != now:
                        if t > limit:
                            heappush(heap, (t, seq, fn, arg))  # its place is unchanged
                            heap = []  # ends the outer loop too
                            i -= 1  # this one did not run
                            break
                        self.now = now = t
                        set_clock(t)
                    fn(arg)
                    if not heap:
                        break
                count += i + 1
                i = -1
        finally:
            # a callback that raised ends the run: the i events before it in its chunk ran
            self.events_run += count + (i if i > 0 else 0)
        return False

    # --- the native build's list (only ``cython.compiled`` reaches these) ---------------
    # ``_size`` events are pending, each at a slot (``_cap`` of them): ``_events[slot]``
    # holds its time, tie-breaking number and the next slot of its bucket's chain,
    # ``_fns[slot]`` and ``_args[slot]`` its callback and argument; ``_free[0:_nfree]``
    # are the slots no event holds. Taking an event off clears its slot.
    #
    # The pending events are a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan) of 6-bit
    # digits, which needs what an event list guarantees: no event is put before the
    # last one taken. ``_last`` is a time at or before every pending event's (the time
    # of the events taken last); ``_ready`` chains the events at ``_last``, and the
    # bucket of level L and digit d those whose time differs from ``_last`` first in its
    # digit L (bits 6L to 6L + 5), which is d in their time: every event of a bucket is
    # earlier than every event of a bucket of a higher digit in its level or of a higher
    # level. A put appends the event to its chain; a take takes ``_ready``'s first
    # event, after ``_c_settle`` refilled ``_ready`` from the lowest bucket that is not
    # empty when it was empty: ``_last`` becomes that bucket's earliest time and each of
    # its events moves to a lower level or to ``_ready`` (an event moves at most once a
    # level: about two moves an event in the fabric's runs, against six sifting levels
    # of a 4-ary heap). Order at one instant: events with one time are always in one
    # chain (their bucket depends on their time and ``_last`` alone), appended to it in
    # scheduling order and moved in chain order, so they stay in scheduling order, and
    # ``_ready`` runs them first to last: the order of ``(time, sequence)``, as the
    # pure path's heap. A chain of slots needs no memory of its own.

    def _c_grow(self) -> None:
        cap = self._cap * 2 if self._cap else C_HEAP_START
        events = cython.cast(
            cython.pointer(_Event), realloc(self._events, cap * cython.sizeof(_Event))
        )
        if events == cython.NULL:
            raise MemoryError(f"event list: no memory for {cap} events")
        self._events = events
        free_slots = cython.cast(
            cython.pointer(cython.Py_ssize_t),
            realloc(self._free, cap * cython.sizeof(cython.Py_ssize_t)),
        )
        if free_slots == cython.NULL:
            raise MemoryError(f"event list: no memory for {cap} events")
        self._free = free_slots
        direct = cython.cast(
            cython.p_uchar, realloc(self._direct, cap * cython.sizeof(cython.uchar))
        )
        if direct == cython.NULL:
            raise MemoryError(f"event list: no memory for {cap} events")
        self._direct = direct
        ints = cython.cast(
            cython.p_longlong, realloc(self._ints, cap * cython.sizeof(cython.longlong))
        )
        if ints == cython.NULL:
            raise MemoryError(f"event list: no memory for {cap} events")
        self._ints = ints
        if not self._cap:  # the first room: every chain empty
            self._ready.first = self._ready.tail = -1
            for b in range(_BUCKETS):
                self._buckets[b].first = self._buckets[b].tail = -1
        for slot in range(cap - 1, self._cap - 1, -1):  # the new slots, lowest on top
            self._free[self._nfree] = slot
            self._nfree += 1
            self._fns.append(None)
            self._args.append(None)
            direct[slot] = 0
        self._cap = cap

    @cython.boundscheck(False)  # a free slot is below _cap, the lists' length
    @cython.wraparound(False)
    def _c_push(self, t: int, fn: Any, arg: Any) -> int:
        """Put ``fn(arg)`` at ``t`` on the list; returns the slot it took."""
        if self._size == self._cap:
            self._c_grow()
        self._nfree -= 1
        slot = self._free[self._nfree]
        # the lists as borrowed pointers (self holds them for the call): no reference
        # taken and released around each store
        _list_store(
            cython.cast(cython.pointer(PyObject), self._fns),
            slot,
            cython.cast(cython.pointer(PyObject), fn),
        )
        _list_store(
            cython.cast(cython.pointer(PyObject), self._args),
            slot,
            cython.cast(cython.pointer(PyObject), arg),
        )
        seq = self._seq
        self._seq = seq + 1
        self._size += 1
        self._events[slot].seq = seq
        if t < self._last:  # before the events taken last (now set back by hand)
            self._c_rebase(t)
        self._c_put(slot, t)
        return slot

    def _c_index(self, t: int) -> int:
        """Where an event at ``t`` (at or after ``_last``) is filed: -1 for the ready chain
        (``t == _last``), else ``level * _DIGITS + d``: ``level`` the first digit in which
        ``t`` differs from ``_last``, ``d`` that digit of ``t``."""
        x = cython.cast(cython.ulonglong, t) ^ cython.cast(cython.ulonglong, self._last)
        if x == 0:
            return -1
        level = (_bit_length(x) - 1) // _DIGIT_BITS
        d = (cython.cast(cython.ulonglong, t) >> (level * _DIGIT_BITS)) & (_DIGITS - 1)
        return level * _DIGITS + d

    def _c_bucket(self, index: int) -> cython.pointer(_Bucket):
        """The chain of :meth:`_c_index`'s ``index``."""
        if index < 0:
            return cython.address(self._ready)
        return cython.address(self._buckets[index])

    def _c_put(self, slot: int, t: int) -> None:
        """Append the event at ``slot`` (its time ``t``, at or after ``_last``) to its chain."""
        self._events[slot].t = t
        self._events[slot].next = -1
        index = self._c_index(t)
        bucket = self._c_bucket(index)
        if index >= 0:
            level = index >> _DIGIT_BITS
            d = index & (_DIGITS - 1)
            if bucket.first < 0:
                self._used[level] |= cython.cast(cython.ulonglong, 1) << d
                self._levels |= cython.cast(cython.uint, 1) << level
                bucket.least = t
            elif t < bucket.least:
                bucket.least = t
        if bucket.first < 0:
            bucket.first = slot
        else:
            self._events[bucket.tail].next = slot
        bucket.tail = slot

    def _c_next(self) -> int:
        """The earliest pending time (``_size`` > 0): ``_last`` when events are ready, else
        the earliest of the lowest bucket's."""
        if self._ready.first >= 0:
            return self._last
        level = _lowest_bit(self._levels)
        return self._buckets[level * _DIGITS + _lowest_bit(self._used[level])].least

    def _c_take(self) -> int:
        """Take the earliest pending event (``_size`` > 0) off the list: its slot, which
        is the caller's to clear."""
        if self._ready.first < 0:
            self._c_settle()
        slot = self._ready.first
        self._ready.first = self._events[slot].next
        if self._ready.first < 0:
            self._ready.tail = -1
        self._size -= 1
        return slot

    def _c_settle(self) -> None:
        """``_ready`` is empty: the lowest bucket that is not empty is spread out below
        its level, ``_last`` becoming its earliest time (its events at that time, in
        chain order, make ``_ready``; the others go to lower levels)."""
        level = _lowest_bit(self._levels)
        d = _lowest_bit(self._used[level])
        bucket = cython.address(self._buckets[level * _DIGITS + d])
        self._used[level] &= ~(cython.cast(cython.ulonglong, 1) << d)
        if not self._used[level]:
            self._levels &= ~(cython.cast(cython.uint, 1) << level)
        last = bucket.least
        self._last = last
        slot = bucket.first
        bucket_tail = bucket.tail
        bucket.first = bucket.tail = -1
        if level == 0:
            # a level-0 bucket's events differ from _last in no digit but the lowest,
            # which is d in all of them: they are all at `last`, so the whole chain is
            # _ready (empty here), in its order (what moving them one by one would make)
            self._ready.first = slot
            self._ready.tail = bucket_tail
            return
        events = self._events
        while slot >= 0:
            after = events[slot].next
            self._c_put(slot, events[slot].t)
            slot = after

    def _c_rebase(self, t: int) -> None:
        """An event is put at ``t``, before ``_last`` (``now`` was set back by hand): every
        pending event goes into its chain again with ``_last`` at ``t`` (in chain order,
        ``_ready``'s then the buckets' in turn: events at one time stay in scheduling
        order)."""
        events = self._events
        first = self._ready.first
        tail = self._ready.tail
        self._ready.first = self._ready.tail = -1
        for b in range(_BUCKETS):  # every chain, one after the other
            if self._buckets[b].first >= 0:
                if first < 0:
                    first = self._buckets[b].first
                else:
                    events[tail].next = self._buckets[b].first
                tail = self._buckets[b].tail
                self._buckets[b].first = self._buckets[b].tail = -1
        for b in range(_LEVELS):
            self._used[b] = 0
        self._levels = 0
        self._last = t
        slot = first
        while slot >= 0:
            after = events[slot].next
            self._c_put(slot, events[slot].t)
            slot = after

    def _c_free(self, slot: int) -> None:
        """Clear ``slot`` (its event left the list) and give it back."""
        _c_store(self._fns, slot, None)
        _c_store(self._args, slot, None)
        self._direct[slot] = 0
        self._free[self._nfree] = slot
        self._nfree += 1

    def _c_remove(self, t: int, seq: int) -> bool:
        """Take the pending event ``(t, seq)`` off the list: False if none is pending."""
        if t < self._last or not self._size:
            return False  # every pending event is at or after _last
        events = self._events
        index = self._c_index(t)
        bucket = self._c_bucket(index)
        before = -1  # the slot before, in the chain
        slot = bucket.first
        while slot >= 0 and not (events[slot].seq == seq and events[slot].t == t):
            before = slot
            slot = events[slot].next
        if slot < 0:
            return False
        if before < 0:
            bucket.first = events[slot].next
        else:
            events[before].next = events[slot].next
        if bucket.tail == slot:
            bucket.tail = before
        if index >= 0:
            level = index >> _DIGIT_BITS
            d = index & (_DIGITS - 1)
            if bucket.first < 0:
                self._used[level] &= ~(cython.cast(cython.ulonglong, 1) << d)
                if not self._used[level]:
                    self._levels &= ~(cython.cast(cython.uint, 1) << level)
            elif t == bucket.least:  # the earliest may have gone: read again
                least = events[bucket.first].t
                before = events[bucket.first].next
                while before >= 0:
                    if events[before].t < least:
                        least = events[before].t
                    before = events[before].next
                bucket.least = least
        self._size -= 1
        self._c_free(slot)
        return True

    @cython.boundscheck(False)  # a slot is below _cap, the lists' length
    @cython.wraparound(False)
    def _c_run(self, until_ns: int | None, stop: Callable[[], bool], check_every: int) -> bool:
        """:meth:`_run` on the native list: the same events in the same order."""
        set_clock = self.clock.set_ns
        # the usual clock, a VirtualClock (not a subclass: its own set_ns), is set by a C
        # call with the time in C too (None: another, through set_clock)
        clock = self.clock if type(self.clock) is VirtualClock else None
        count = 0
        i = -1
        now = self.now
        limit = until_ns if until_ns is not None else 1 << 62
        fns = self._fns  # _c_grow extends these two lists in place: the same objects
        args = self._args
        going = limit >= now  # else every pending event is at or after now: none is due
        # the callback and argument of the event running (or run last): the references
        # the slot's lists held, taken over (the slot gets None), released when the next
        # event's are taken or the run ends, as two object variables would be
        held_fn = cython.cast(cython.pointer(PyObject), cython.NULL)
        held_arg = cython.cast(cython.pointer(PyObject), cython.NULL)
        try:
            while going and self._size:
                if stop():
                    return True
                for i in range(check_every):
                    t = self._c_next()
                    if t != now:
                        if t > limit:
                            going = False
                            i -= 1  # this one did not run
                            break
                        self.now = now = t
                        # no int object for the new time unless one is asked for
                        # (now_object(), the clock's now_ns())
                        if clock is not None:
                            clock._c_set(t)
                        else:
                            set_clock(t)
                    slot = self._c_take()
                    # the slot cleared and given back (_c_free, inlined): its lists'
                    # references to the callback and argument taken over (held_*), None
                    # put in their place
                    fn = PyList_GET_ITEM(fns, slot)
                    Py_XDECREF(held_fn)
                    held_fn = fn
                    arg = PyList_GET_ITEM(args, slot)
                    Py_XDECREF(held_arg)
                    held_arg = arg
                    Py_INCREF(None)
                    PyList_SET_ITEM(fns, slot, None)
                    Py_INCREF(None)
                    PyList_SET_ITEM(args, slot, None)
                    direct = self._direct[slot]
                    self._direct[slot] = 0
                    self._free[self._nfree] = slot
                    self._nfree += 1
                    if direct == 2:  # push_source_int: the argument is in C
                        number = self._ints[slot]
                        cython.cast(EventSource, fn).fire_int(number)
                    elif direct:
                        cython.cast(EventSource, fn).fire(cython.cast(object, arg))
                    else:
                        cython.cast(object, fn)(cython.cast(object, arg))
                    if not self._size:
                        break
                count += i + 1
                i = -1
        finally:
            self.events_run += count + (i if i > 0 else 0)
            Py_XDECREF(held_fn)
            Py_XDECREF(held_arg)
        return False

    def __dealloc__(self) -> None:
        if cython.compiled:
            free(self._events)
            free(self._free)
            free(self._direct)
            free(self._ints)


def _c_store(items: list[Any], slot: int, value: object) -> None:
    """The native build's ``items[slot] = value`` for a slot of the event list's two lists
    (below their length: ``_c_grow`` made it): the list's C store, no index checks, no
    type dispatch; the reference it held is released."""
    old = PyList_GET_ITEM(items, slot)
    Py_INCREF(value)
    PyList_SET_ITEM(items, slot, value)
    Py_XDECREF(old)
