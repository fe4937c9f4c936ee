"""Clocks for everything time-related in the runtime (meters, queues, idle timeouts).

Time is kept as integer **nanoseconds** since the clock's origin (the switch start, as
BMv2's ``get_ts()``), and exposed in **microseconds** too, the unit of every v1model
timestamp (``ingress_global_timestamp``, ``enq_timestamp``, ``deq_timedelta``...).
Microsecond values are truncated, like BMv2's ``duration_cast<microseconds>``.

- :class:`RealClock` follows ``time.monotonic_ns()``; origin = construction time.
- :class:`VirtualClock` only moves when told to (:meth:`VirtualClock.advance`), so tests
  and simulations are deterministic.

Both derive from :class:`ClockBase`. The switch and the traffic manager take any
:class:`Clock`; on the compiled path (``clock.pxd``) they read one that derives from
:class:`ClockBase` through a C call instead of Python's method protocol.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

import cython

from p4emu.runtime.exceptions import RuntimeP4Error

NS_PER_US = 1_000
NS_PER_S = 1_000_000_000
_NS_PER_US = NS_PER_US  # compiled, a C constant (clock.pxd)


@runtime_checkable
class Clock(Protocol):
    """Anything that tells the time since the switch started."""

    def now_ns(self) -> int:
        """Nanoseconds since the clock's origin."""
        ...

    def now_us(self) -> int:
        """Microseconds since the clock's origin (truncated)."""
        ...


class ClockBase:
    """The base of the runtime's clocks (a :class:`Clock` need not derive from it).
    Compiled, an extension type whose ``now_ns`` and ``now_us`` are C methods: code that
    knows a clock is one reads it without Python's method protocol. A subclass says what
    the time is; the base has none."""

    __slots__ = ()

    def now_ns(self) -> int:
        """Nanoseconds since the clock's origin."""
        raise NotImplementedError(f"{type(self).__name__} does not tell the time")

    def now_us(self) -> int:
        """Microseconds since the clock's origin (truncated)."""
        raise NotImplementedError(f"{type(self).__name__} does not tell the time")


class RealClock(ClockBase):
    """Wall-clock time from ``time.monotonic_ns()``, 0 at construction."""

    __slots__ = ("_origin_ns",)

    def __init__(self) -> None:
        self._origin_ns = time.monotonic_ns()

    def now_ns(self) -> int:
        return time.monotonic_ns() - self._origin_ns

    def now_us(self) -> int:
        return (time.monotonic_ns() - self._origin_ns) // NS_PER_US


class VirtualClock(ClockBase):
    """A deterministic clock that only moves forward when advanced.

    Compiled, it keeps its time as a C integer too whenever it is an int that fits one
    (``_c_ns``, -1 otherwise), which :func:`read_ns` and :func:`read_us` read without an
    int object; the event list's moves to each event's time (:meth:`_c_set`) set only
    that, and the int object is made when a caller asks for it (``_ns`` None until then)."""

    __slots__ = ("_ns",)

    def __init__(self, start_us: float = 0) -> None:
        if start_us < 0:
            raise RuntimeP4Error(f"VirtualClock cannot start before 0 (got {start_us} us)")
        self._ns = round(start_us * NS_PER_US)
        self._mirror()

    def now_ns(self) -> int:
        return self._time()

    def now_us(self) -> int:
        if cython.compiled and self._c_ns >= 0:
            return self._c_ns // _NS_PER_US  # C: the same for a time >= 0
        return self._time() // NS_PER_US

    def advance(self, us: float) -> int:
        """Move forward by ``us`` microseconds (fractions allowed); returns the new ``now_ns``."""
        if us < 0:
            raise RuntimeP4Error(f"a clock cannot go backwards (advance by {us} us)")
        self._ns = self._time() + round(us * NS_PER_US)
        self._mirror()
        return self._ns

    def advance_ns(self, ns: int) -> int:
        """Move forward by ``ns`` nanoseconds; returns the new ``now_ns``."""
        if ns < 0:
            raise RuntimeP4Error(f"a clock cannot go backwards (advance by {ns} ns)")
        self._ns = self._time() + ns
        self._mirror()
        return self._ns

    def set_ns(self, ns: int) -> None:
        """Jump to an absolute time, which must not be in the past."""
        if ns < self._time():
            raise RuntimeP4Error(f"a clock cannot go backwards (from {self._ns} ns to {ns} ns)")
        self._ns = ns
        self._mirror()

    def _time(self) -> int:
        """The time as an int object: ``_ns``; compiled, made from ``_c_ns`` (and kept)
        when :meth:`_c_set` left the time in C only."""
        if cython.compiled and self._ns is None:
            self._ns = self._c_ns
        return self._ns

    def _mirror(self) -> None:
        """Compiled: ``_c_ns`` follows ``_ns`` (every change of ``_ns`` calls this)."""
        if cython.compiled:
            ns = self._ns
            if type(ns) is int and 0 <= ns < 1 << 63:
                self._c_ns = ns
            else:
                self._c_ns = -1

    def _c_set(self, ns: int) -> None:
        """``set_ns(ns)``: the event list's move to its next event's time. Compiled, a C
        call that compares and stores C integers when the clock's time is one, and makes
        no int object (:meth:`_time` makes it if asked)."""
        if cython.compiled and 0 <= self._c_ns <= ns:
            self._ns = None
            self._c_ns = ns
        else:
            self.set_ns(ns)


def read_ns(clock: Clock) -> int:
    """``clock.now_ns()``; compiled, a C integer: a :class:`VirtualClock`'s own (not a
    subclass's) read in C, another :class:`ClockBase`'s ``now_ns`` called through its C
    vtable (its subclasses' own ``now_ns`` included), else the method."""
    if cython.compiled:
        if type(clock) is VirtualClock:
            vc = cython.cast(VirtualClock, clock)
            if vc._c_ns >= 0:
                return vc._c_ns
            return vc._ns
        if isinstance(clock, ClockBase):
            return cython.cast(ClockBase, clock).now_ns()
    return clock.now_ns()


def read_us(clock: Clock) -> int:
    """``clock.now_us()``, read as :func:`read_ns` reads ``now_ns``."""
    if cython.compiled:
        if type(clock) is VirtualClock:
            vc = cython.cast(VirtualClock, clock)
            if vc._c_ns >= 0:
                return vc._c_ns // _NS_PER_US  # C: the same for a time >= 0
            return vc._ns // NS_PER_US
        if isinstance(clock, ClockBase):
            return cython.cast(ClockBase, clock).now_us()
    return clock.now_us()
