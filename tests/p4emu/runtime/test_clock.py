"""Real and virtual clocks."""

from __future__ import annotations

import pytest

from p4emu.runtime.clock import Clock, ClockBase, RealClock, VirtualClock, read_ns, read_us
from p4emu.runtime.exceptions import RuntimeP4Error


def test_virtual_clock_moves_only_when_advanced() -> None:
    clock = VirtualClock()
    assert (clock.now_ns(), clock.now_us()) == (0, 0)
    clock.advance(1.5)
    assert (clock.now_ns(), clock.now_us()) == (1500, 1)
    clock.advance_ns(500)
    assert clock.now_us() == 2
    clock.set_ns(10_000)
    assert clock.now_us() == 10
    with pytest.raises(RuntimeP4Error):
        clock.advance(-1)
    with pytest.raises(RuntimeP4Error):
        clock.set_ns(5)
    with pytest.raises(RuntimeP4Error):
        VirtualClock(start_us=-1)
    assert VirtualClock(start_us=3).now_ns() == 3000


def test_real_clock_is_monotonic_from_zero() -> None:
    clock = RealClock()
    first = clock.now_ns()
    second = clock.now_ns()
    assert 0 <= first <= second
    assert clock.now_us() >= 0
    assert isinstance(clock, Clock) and isinstance(VirtualClock(), Clock)


def test_the_clocks_derive_from_a_base_that_tells_no_time() -> None:
    assert isinstance(RealClock(), ClockBase) and isinstance(VirtualClock(), ClockBase)
    base = ClockBase()
    with pytest.raises(NotImplementedError, match="does not tell the time"):
        base.now_ns()
    with pytest.raises(NotImplementedError, match="does not tell the time"):
        base.now_us()


class _Skewed(VirtualClock):
    """A Python subclass: the switch and traffic manager's C reads must reach its methods."""

    def now_ns(self) -> int:
        return super().now_ns() + 7_000

    def now_us(self) -> int:
        return super().now_us() + 7


def test_a_subclass_of_a_clock_tells_its_own_time() -> None:
    clock = _Skewed(1)
    assert (clock.now_ns(), clock.now_us()) == (8_000, 8)
    assert isinstance(clock, ClockBase)


class _Protocol:
    """A Clock by the protocol only (not a ClockBase): read through Python."""

    def now_ns(self) -> int:
        return 12_345

    def now_us(self) -> int:
        return 12


def test_read_ns_and_read_us_reach_every_kind_of_clock() -> None:
    """What the switch and the traffic manager read: a ClockBase's own methods (its C
    vtable when compiled, a Python subclass's override included), any other Clock's."""
    assert (read_ns(VirtualClock(3.999)), read_us(VirtualClock(3.999))) == (3_999, 3)
    assert (read_ns(_Skewed(1)), read_us(_Skewed(1))) == (8_000, 8)
    assert (read_ns(_Protocol()), read_us(_Protocol())) == (12_345, 12)
    with pytest.raises(NotImplementedError, match="does not tell the time"):
        read_ns(ClockBase())


def test_a_virtual_clock_past_64_bits_or_not_an_int_keeps_python_s_arithmetic() -> None:
    """Compiled, a virtual clock also keeps its time as a C integer while it is an int
    below 2**63; past that (or a float from ``advance_ns``) it reads the int object
    itself, as the pure path does."""
    clock = VirtualClock()
    clock.set_ns(2**63 - 1)
    assert (clock.now_ns(), clock.now_us()) == (2**63 - 1, (2**63 - 1) // 1000)
    assert (read_ns(clock), read_us(clock)) == (2**63 - 1, (2**63 - 1) // 1000)
    clock.advance_ns(1)
    assert (clock.now_ns(), clock.now_us()) == (2**63, 2**63 // 1000)
    clock.advance(2.5)
    assert clock.now_ns() == 2**63 + 2_500
    with pytest.raises(RuntimeP4Error, match=f"from {2**63 + 2_500} ns to 5 ns"):
        clock.set_ns(5)
    small = VirtualClock()
    small.advance_ns(1_500.5)  # type: ignore[arg-type]
    assert (small.now_ns(), small.now_us()) == (1_500.5, 1.0)
    small.set_ns(3_000)  # an int again: C reads again
    assert (small.now_ns(), small.now_us(), read_ns(small), read_us(small)) == (3_000, 3, 3_000, 3)
