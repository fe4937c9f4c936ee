"""Registers, counters, meters (trTCM over virtual time), random, digests, log_msg."""

from __future__ import annotations

import logging
import random

import pytest

from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.exceptions import (
    ExternError,
    ExternIndexError,
    LogMsgFormatError,
    MeterConfigError,
)
from p4emu.runtime.externs import (
    CELL_MAX,
    GREEN,
    RED,
    YELLOW,
    Counter,
    CounterType,
    DigestConfig,
    DigestQueue,
    LogMsgFormat,
    Meter,
    MeterCell,
    MeterConfig,
    MeterType,
    RandomSource,
    Register,
    format_log_msg,
    meter_config_from_bmv2_rates,
)

# --- registers --------------------------------------------------------------------------


def test_register_read_write_truncates_to_width() -> None:
    reg = Register("ingress.r", width=8, size=4)
    reg.write(2, 0x1FF)
    assert reg.read(2) == 0xFF
    reg.write(3, -1)
    assert reg.read(3) == 0xFF
    assert reg.values() == [0, 0, 0xFF, 0xFF]


def test_register_out_of_range_is_logged_and_leaves_state(caplog: pytest.LogCaptureFixture) -> None:
    reg = Register("ingress.r", width=16, size=4)
    reg.write(0, 5)
    with caplog.at_level(logging.ERROR, logger="p4emu.runtime"):
        assert reg.read(4, unchanged=1234) == 1234  # BMv2 leaves the destination as is
        reg.write(7, 99)
    assert reg.values() == [5, 0, 0, 0]
    assert reg.out_of_range == 2
    assert "out-of-bounds index 4" in caplog.text
    assert "out-of-bounds index 7" in caplog.text


def test_register_control_plane_errors() -> None:
    reg = Register("r", width=8, size=2)
    with pytest.raises(ExternIndexError, match=r"register r: index 2 out of range \[0, 2\)"):
        reg.get(2)
    with pytest.raises(ExternIndexError):
        reg.set(-1, 0)
    with pytest.raises(ExternError, match="does not fit"):
        reg.set(0, 256)
    reg.set(1, 7)
    assert reg.get(1) == 7
    reg.reset()
    assert reg.values() == [0, 0]
    with pytest.raises(ExternError):
        Register("bad", width=0, size=1)


# --- counters ---------------------------------------------------------------------------


def test_counter_counts_packets_and_bytes(caplog: pytest.LogCaptureFixture) -> None:
    counter = Counter("c", 2, CounterType.packets_and_bytes)
    counter.count(0, 100)
    counter.count(0, 60)
    counter.count(1, 1)
    with caplog.at_level(logging.ERROR, logger="p4emu.runtime"):
        counter.count(2, 1)
    assert counter.read(0) == (2, 160)
    assert counter.read(1) == (1, 1)
    assert counter.out_of_range == 1
    counter.write(1, 10, 20)
    assert counter.read(1) == (10, 20)
    with pytest.raises(ExternIndexError):
        counter.read(2)
    with pytest.raises(ExternError):
        counter.write(0, -1, 0)
    counter.reset()
    assert counter.read(0) == (0, 0)


def test_counter_cells_stay_exact_past_64_bits() -> None:
    """The native build's C cells hold up to CELL_MAX (2**64 - 1); a count or a write past
    it moves the counter to Python ints: every value stays exact, as on the pure path."""
    counter = Counter("c", 3, CounterType.packets_and_bytes)
    counter.write(0, CELL_MAX - 1, CELL_MAX - 100)
    counter.write(2, CELL_MAX, CELL_MAX)  # at the limit: still a C cell natively
    assert counter.read(2) == (CELL_MAX, CELL_MAX)
    counter.count_at(0, 100)  # both reach CELL_MAX exactly
    assert counter.read(0) == (CELL_MAX, CELL_MAX)
    counter.count_at(1, 7)
    counter.count(0, 1)  # past it: packets and bytes 2**64
    assert counter.read(0) == (2**64, 2**64)
    counter.count_at(0, 4096)
    counter.count(1, 2**70)  # a length no C integer holds
    assert counter.read(0) == (2**64 + 1, 2**64 + 4096)
    assert counter.read(1) == (2, 7 + 2**70)
    assert counter.read(2) == (CELL_MAX, CELL_MAX)
    counter.write(1, 5, 6)
    assert counter.read(1) == (5, 6)
    counter.reset()
    assert [counter.read(i) for i in range(3)] == [(0, 0)] * 3
    counter.count_at(2, 9)
    assert counter.read(2) == (1, 9)


@pytest.mark.parametrize("big", [2**64, 2**80])
def test_counter_write_past_64_bits_is_kept(big: int) -> None:
    counter = Counter("c", 2, CounterType.bytes)
    counter.count(1, 10)
    counter.write(0, 1, big)
    assert counter.read(0) == (1, big) and counter.read(1) == (1, 10)
    counter.count_at(0, 3)
    counter.count_at(1, 3)
    assert counter.read(0) == (2, big + 3) and counter.read(1) == (2, 13)


def test_counter_count_at_matches_count() -> None:
    """Generated code's call (the index known in range) counts as ``count`` does."""
    checked = Counter("c", 4, CounterType.packets_and_bytes)
    direct = Counter("c", 4, CounterType.packets_and_bytes)
    for index, length in [(0, 64), (3, 1500), (0, 0), (2, 9216), (3, 1), (0, 64)]:
        checked.count(index, length)
        direct.count_at(index, length)
    assert [direct.read(i) for i in range(4)] == [checked.read(i) for i in range(4)]
    assert direct.read(0) == (3, 128) and direct.out_of_range == 0
    for index in (-1, 4, 5):  # not in range: the caller's error, nothing counted
        with pytest.raises(ExternIndexError):
            direct.count_at(index, 1)
    assert [direct.read(i) for i in range(4)] == [checked.read(i) for i in range(4)]


def test_counter_count_at_after_reset_and_write() -> None:
    """``count_at`` counts in the cells ``reset`` and ``write`` leave (compiled: through
    the pointer to the C cells it keeps, taken again by ``reset``)."""
    counter = Counter("c", 3, CounterType.packets_and_bytes)
    counter.count_at(2, 100)
    counter.reset()
    assert [counter.read(i) for i in range(3)] == [(0, 0)] * 3
    counter.count_at(2, 7)
    counter.write(1, 5, 50)
    counter.count_at(1, 3)
    counter.reset()
    counter.count_at(0, 1)
    assert [counter.read(i) for i in range(3)] == [(1, 1), (0, 0), (0, 0)]
    counter.write(2, 4, 40)
    counter.count_at(2, 2)
    assert [counter.read(i) for i in range(3)] == [(1, 1), (0, 0), (5, 42)]


def test_counter_cells_are_the_lists_from_then_on() -> None:
    """``cells()`` gives the lists generated code of a pure runtime counts in: with the
    counts made before (the native build moves its C cells into them), and the same lists
    whatever is done afterwards."""
    counter = Counter("c", 2, CounterType.packets_and_bytes)
    counter.count(1, 40)
    packets, byte_counts = counter.cells()
    assert (packets, byte_counts) == ([0, 1], [0, 40])
    packets[0] += 1
    byte_counts[0] += 5
    counter.count_at(1, 2)
    counter.write(0, 7, 8)
    assert counter.read(0) == (7, 8) and counter.read(1) == (2, 42)
    again = counter.cells()
    assert again[0] is packets and again[1] is byte_counts
    counter.reset()
    assert counter.cells()[0] is packets and packets == [0, 0] and byte_counts == [0, 0]


# --- meters -----------------------------------------------------------------------------


def _packet_meter(clock: VirtualClock) -> Meter:
    meter = Meter("m", 2, MeterType.packets, clock)
    meter.configure(0, MeterConfig(cir=1000, cburst=2, pir=2000, pburst=4))
    return meter


def test_unconfigured_meter_is_green() -> None:
    clock = VirtualClock()
    meter = Meter("m", 1, MeterType.packets, clock)
    assert [meter.execute(0, 64) for _ in range(100)] == [GREEN] * 100


def test_trtcm_colors_over_time() -> None:
    clock = VirtualClock()
    meter = _packet_meter(clock)
    # burst at t=0: committed bucket 2, peak bucket 4
    assert [meter.execute(0, 64) for _ in range(5)] == [GREEN, GREEN, YELLOW, YELLOW, RED]
    # 1 ms later: +1 committed token, +2 peak tokens
    clock.advance(1000)
    assert [meter.execute(0, 64) for _ in range(3)] == [GREEN, YELLOW, RED]
    # long idle: buckets refill only up to their burst sizes
    clock.advance(10_000_000)
    assert [meter.execute(0, 64) for _ in range(5)] == [GREEN, GREEN, YELLOW, YELLOW, RED]


def test_trtcm_steady_rates() -> None:
    clock = VirtualClock()
    meter = _packet_meter(clock)
    meter.execute(0, 1)
    # 1500 pps offered: above CIR (1000) but under PIR (2000) -> GREEN/YELLOW mix, no RED
    colors = []
    for _ in range(3000):
        clock.advance(1_000_000 / 1500)
        colors.append(meter.execute(0, 1))
    assert RED not in colors
    green = colors.count(GREEN)
    assert 1900 <= green <= 2100  # ~1000 pps of the 1500 are green
    # 4000 pps offered: above PIR -> about half RED
    colors = []
    for _ in range(4000):
        clock.advance(250)
        colors.append(meter.execute(0, 1))
    assert 1900 <= colors.count(RED) <= 2100


def test_byte_meter_uses_length() -> None:
    clock = VirtualClock()
    meter = Meter("mb", 1, MeterType.bytes, clock)
    meter.configure(0, MeterConfig(cir=1_000_000, cburst=1500, pir=2_000_000, pburst=3000))
    assert meter.execute(0, 1500) == GREEN
    assert meter.execute(0, 1500) == YELLOW
    assert meter.execute(0, 1) == RED
    clock.advance(750)  # 750 us: +750 committed bytes, +1500 peak bytes
    assert meter.execute(0, 700) == GREEN
    assert meter.execute(0, 700) == YELLOW


def test_meter_out_of_range_and_config_errors() -> None:
    clock = VirtualClock()
    meter = _packet_meter(clock)
    assert meter.execute(5, 64, unchanged=7) == 7
    assert meter.out_of_range == 1
    with pytest.raises(ExternIndexError):
        meter.configure(9, None)
    with pytest.raises(MeterConfigError, match="peak rate"):
        meter.configure(1, MeterConfig(cir=10, cburst=1, pir=5, pburst=1))
    with pytest.raises(MeterConfigError, match="negative"):
        meter.configure(1, MeterConfig(cir=-1, cburst=1, pir=5, pburst=1))
    assert meter.get_config(0) == MeterConfig(1000, 2, 2000, 4)
    meter.configure(0, None)
    assert meter.get_config(0) is None
    assert meter.execute(0, 64) == GREEN


def test_meter_configure_all_and_bmv2_rates() -> None:
    clock = VirtualClock()
    meter = Meter("m", 3, MeterType.packets, clock)
    config = meter_config_from_bmv2_rates([(0.001, 2), (0.002, 4)])
    assert config == MeterConfig(1000, 2, 2000, 4)
    meter.configure_all(config)
    assert all(meter.get_config(i) == config for i in range(3))
    with pytest.raises(MeterConfigError):
        meter_config_from_bmv2_rates([(0.001, 2)])


def test_meter_cell_direct_use() -> None:
    cell = MeterCell(MeterType.packets, created_ns=0)
    cell.configure(MeterConfig(0, 0, 0, 0))
    assert cell.execute(0, 1) == RED  # zero bursts: nothing conforms


# --- random -----------------------------------------------------------------------------


def test_random_is_seedable_and_inclusive(caplog: pytest.LogCaptureFixture) -> None:
    a = RandomSource(42)
    b = RandomSource(42)
    draws = [a.uniform(0, 3) for _ in range(200)]
    assert draws == [b.uniform(0, 3) for _ in range(200)]
    assert set(draws) == {0, 1, 2, 3}
    assert a.uniform(5, 5) == 5
    with caplog.at_level(logging.WARNING, logger="p4emu.runtime"):
        assert a.uniform(9, 3) == 9
    assert "lo 9 > hi 3" in caplog.text


def test_random_draws_what_randint_draws() -> None:
    # uniform() inlines random.Random.randint: the same generator gives the same values
    # (and leaves it in the same state) for widths 1 to 2**64, powers of two and their
    # neighbours (the retry loop), before and after seed()
    bounds = [(0, 0), (0, 1), (3, 4), (-5, 5), (0, 2**32 - 1), (0, 2**64 - 1), (7, 2**48)]
    for k in range(1, 66):
        bounds += [(0, 2**k - 2), (0, 2**k - 1), (0, 2**k), (100, 100 + 2**k)]
    source = RandomSource(7)
    reference = random.Random(7)
    for lo, hi in bounds * 20:
        assert source.uniform(lo, hi) == reference.randint(lo, hi)
    source.seed(11)
    reference.seed(11)
    for lo, hi in bounds:
        assert source.uniform(lo, hi) == reference.randint(lo, hi)
    assert source.rng.getstate() == reference.getstate()


def test_uniform_at_draws_what_uniform_draws(caplog: pytest.LogCaptureFixture) -> None:
    # uniform_at() (generated code's draw of at most 63 bits; compiled, a C call on C
    # integers) gives uniform()'s values from the same generator and leaves it in the same
    # state, for every width 1 to 63 (each power of two and its neighbours: the retry
    # loop and the C bit length), both paths
    bounds = [(0, 0), (0, 1), (3, 4), (5, 5), (0, 2**32 - 1), (0, 2**63 - 1), (7, 2**48)]
    for k in range(1, 63):
        bounds += [(0, 2**k - 2), (0, 2**k - 1), (0, 2**k), (100, 100 + 2**k)]
    source = RandomSource(7)
    reference = RandomSource(7)
    for lo, hi in bounds * 10:
        assert source.uniform_at(lo, hi) == reference.uniform(lo, hi)
    assert source.rng.getstate() == reference.rng.getstate()
    with caplog.at_level(logging.WARNING, logger="p4emu.runtime"):
        assert source.uniform_at(9, 3) == 9  # lo > hi: lo, and the same warning
    assert "lo 9 > hi 3" in caplog.text
    assert source.rng.getstate() == reference.rng.getstate()  # nothing drawn


def test_random_source_is_final_compiled() -> None:
    """Compiled, ``RandomSource`` is a final extension type (``uniform_at`` is then called
    from generated code without the check for a Python override): deriving from it is a
    ``TypeError`` there; the pure class still allows it."""
    if hasattr(RandomSource, "__pyx_vtable__"):  # an extension type's C methods
        with pytest.raises(TypeError):
            type("Derived", (RandomSource,), {})
    else:
        assert issubclass(type("Derived", (RandomSource,), {}), RandomSource)


# --- digests ----------------------------------------------------------------------------


def test_digest_default_sends_each_sample() -> None:
    clock = VirtualClock()
    queue = DigestQueue(clock)
    assert queue.push(1, (0xAABBCCDDEEFF, 3))
    assert queue.push(1, (0xAABBCCDDEEFF, 3))  # no dedup without an ack timeout
    lists = queue.poll()
    assert [d.samples for d in lists] == [[(0xAABBCCDDEEFF, 3)], [(0xAABBCCDDEEFF, 3)]]
    assert lists[0].list_id != lists[1].list_id


def test_digest_batching_timeout_and_dedup() -> None:
    clock = VirtualClock()
    queue = DigestQueue(clock)
    queue.configure(
        7, DigestConfig(max_timeout_ns=1_000_000, max_list_size=3, ack_timeout_ns=5_000_000)
    )
    assert queue.push(7, (1,))
    assert queue.push(7, (2,))
    assert not queue.push(7, (1,))  # pending duplicate
    assert queue.poll() == []  # neither full nor timed out
    clock.advance(1000)
    (batch,) = queue.poll()
    assert batch.samples == [(1,), (2,)]
    assert not queue.push(7, (1,))  # sent, not acked yet
    queue.ack(7, batch.list_id)
    assert queue.push(7, (1,))
    assert queue.dropped_duplicates == 2
    with pytest.raises(ExternError):
        queue.ack(7, batch.list_id)
    # ack timeout expiry re-allows a sample
    queue.push(7, (3,))
    queue.push(7, (4,))
    (full,) = queue.poll()  # (1,), (3,), (4,) reached max_list_size
    assert full.samples == [(1,), (3,), (4,)]
    clock.advance(5000)
    queue.poll()
    assert queue.push(7, (3,))


def test_digest_overflow() -> None:
    queue = DigestQueue(VirtualClock(), capacity=2)
    queue.configure(1, DigestConfig(max_timeout_ns=10**9, max_list_size=100))
    assert queue.push(1, (1,))
    assert queue.push(1, (2,))
    assert not queue.push(1, (3,))
    assert queue.dropped_overflow == 1


# --- log_msg ----------------------------------------------------------------------------


def test_log_msg_formatting() -> None:
    assert format_log_msg("x = {}, y = {}", [10, 255]) == "x = 10, y = 255"
    assert format_log_msg("{}{}", [1, 2]) == "12"
    assert format_log_msg("no args") == "no args"
    assert format_log_msg(r"set \{a\} = {}", [3]) == "set {a} = 3"
    assert format_log_msg("named {value} here", [-4]) == "named -4 here"
    fmt = LogMsgFormat("a={} b={}")
    assert fmt.placeholders == 2
    assert fmt.render([1, 2]) == "a=1 b=2"


def test_log_msg_errors() -> None:
    with pytest.raises(LogMsgFormatError, match="expects 2"):
        format_log_msg("{} {}", [1])
    with pytest.raises(LogMsgFormatError, match="no matching"):
        LogMsgFormat("oops {")
