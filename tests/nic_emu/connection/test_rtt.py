"""nic_emu.connection.rtt: the RTT estimates and the timeouts they set, on their own."""

from __future__ import annotations

from dataclasses import replace

from nic_emu.config import NicConfig
from nic_emu.connection.common import QDELAY_PEAK_RTTS, RTO_CAP_NS
from nic_emu.connection.rtt import NO_RTT, RttTimers

CFG = NicConfig()


def test_samples_set_min_rtt_queueing_delay_and_its_peak() -> None:
    t = RttTimers(CFG, 0, adaptive=False)
    assert t.min_rtt_ns == NO_RTT
    t.sample(10_000, 100)
    assert (t.min_rtt_ns, t.qdelay_ns, t.qdelay_peak_ns) == (10_000, 0.0, 0.0)
    t.sample(18_000, 200)  # 8 us above the minimum: the peak jumps, the average moves 1/8
    assert (t.qdelay_ns, t.qdelay_peak_ns, t.qdelay_peak_at) == (1_000.0, 8_000, 200)
    t.sample(9_000, 300)  # a new minimum: the queueing delay is measured from it
    assert t.min_rtt_ns == 9_000 and t.qdelay_ns == 875.0


def test_the_peak_falls_back_to_the_samples_over_its_span() -> None:
    t = RttTimers(CFG, 0, adaptive=False)
    t.sample(10_000, 0)
    t.sample(20_000, 0)
    span = QDELAY_PEAK_RTTS * CFG.base_rtt_ns
    t.sample(10_000, span // 2)  # half the span later: half way back to the sample (0)
    assert t.qdelay_peak_ns == 5_000
    t.sample(10_000, span // 2 + span)  # a whole span later: at the sample
    assert t.qdelay_peak_ns == 0


def test_the_rto_backs_off_linearly_then_doubles_within_its_cap() -> None:
    t = RttTimers(CFG, 0, adaptive=False)
    base = min(CFG.rto_base_ns, RTO_CAP_NS)
    linear = CFG.rto_linear_retries
    expected = [base]
    for n in range(1, 24):
        factor = n + 1 if n <= linear else (linear + 1) << (n - linear)
        expected.append(min(base * factor, RTO_CAP_NS))
    got = []
    for n in range(24):
        t.backoff = n
        got.append(t.rto_ns())
    assert got == expected and got[-1] == RTO_CAP_NS
    t.hold_until = 99
    t.progress(500)
    assert (t.backoff, t.hold_until, t.rto_ns(), t.last_ack_ns) == (0, 0, base, 500)


def test_a_fixed_timeout_ignores_samples() -> None:
    t = RttTimers(replace(CFG, adaptive_timers=True), 0, adaptive=True)
    t.fix(67_000_000)
    t.sample(1_000, 0)
    assert (t.rto_ns(), t.srtt_ns, t.adaptive) == (67_000_000, 0.0, False)


def test_reorder_window_tail_probe_timeout_and_hold_delay() -> None:
    t = RttTimers(CFG, 0, adaptive=False)
    # no sample: the configured base RTT stands for the round trip
    base = CFG.base_rtt_ns
    assert t.reorder_window() == CFG.reorder_window_ns
    assert t.tail_probe_timeout() == max(2 * base, base + CFG.reorder_window_ns)
    t.sample(10_000, 0)
    t.sample(30_000, 0)  # qdelay 2.5 us, peak 20 us: the peak sizes the window
    assert t.reorder_window() == 20_000
    assert t.tail_probe_timeout() == int(max(2 * 12_500, 12_500 + 20_000))
    assert t.hold_delay() == CFG.quarantine_window_ns  # no SRTT with fixed timers
    adaptive = RttTimers(CFG, 0, adaptive=True)
    adaptive.smooth(400_000)
    assert adaptive.reorder_window() == 100_000 == adaptive.hold_delay()  # SRTT / 4


def test_a_sample_is_blended_into_the_peak_as_python_ints_and_floats_do() -> None:
    """The native build computes a sample in C (session 20): the peak an int when a sample
    sets it, else the blend of Python's mixed int and float steps, to the bit."""
    t = RttTimers(CFG, 0, adaptive=True)
    span = QDELAY_PEAK_RTTS * CFG.base_rtt_ns
    t.sample(10_007, 0)
    t.sample(23_011, 1_000)  # the peak: the sample itself, an int
    assert t.qdelay_peak_ns == 13_004 and type(t.qdelay_peak_ns) is int
    rtts = [11_003, 10_500, 19_999, 10_007, 12_345, 30_001, 10_009]
    now, peak, qdelay = 1_000, 13_004, t.qdelay_ns
    for i, rtt in enumerate(rtts):
        at, now = now, now + 7_919 * (i + 1)
        t.sample(rtt, now)
        sample = rtt - 10_007
        qdelay += (sample - qdelay) / 8
        if sample >= peak:
            peak = sample
        else:
            peak = peak + (sample - peak) * min(1.0, (now - at) / span)
        assert (t.qdelay_ns, t.qdelay_peak_ns, type(t.qdelay_peak_ns)) == (
            qdelay,
            peak,
            type(peak),
        )
    srtt, rttvar = float(10_007), 10_007 / 2
    for rtt in [23_011, *rtts]:
        rttvar += (abs(srtt - rtt) - rttvar) / 4
        srtt += (rtt - srtt) / 8
    assert (t.srtt_ns, t.rttvar_ns, t.rtt_bound) == (srtt, rttvar, int(srtt + 4 * rttvar))


def test_the_reorder_window_and_hold_delay_are_the_max_of_their_terms_floor_first() -> None:
    """reorder_window = max(floor, int(2 * qdelay), int(peak)) (then RACK's quarter SRTT
    when adaptive) and hold_delay = max(floor, int(srtt) >> 2), compared as the builtin
    max does: the floor, first, is kept on a tie, a float one as the float it is."""
    for floor in (2_500, 2_500.0, 1_000, 7_999.5):
        cfg = replace(CFG, reorder_window_ns=floor, quarantine_window_ns=floor)
        for adaptive in (False, True):
            t = RttTimers(cfg, 0, adaptive=adaptive)
            for qdelay, peak, srtt in (
                (0.0, 0.0, 0.0),
                (1_249.9, 2_500, 10_000.0),
                (1_250.0, 2_499.99, 10_003.75),
                (3_000.7, 1_000, 31_999.0),
                (10.0, 4_000.5, 40_000.0),
                (0.2, 0, 9_999.99),
            ):
                t.qdelay_ns, t.qdelay_peak_ns, t.srtt_ns = qdelay, peak, srtt
                want = max(floor, int(2 * qdelay), int(peak))
                if adaptive:
                    want = max(want, int(srtt) >> 2)
                got = t.reorder_window()
                assert (got, type(got)) == (want, type(want)), (floor, adaptive, qdelay, peak)
                hold = max(floor, int(srtt) >> 2)
                assert (t.hold_delay(), type(t.hold_delay())) == (hold, type(hold))
                # on C integers: the same int, or -1 (not taken) for a float floor
                assert t.exact_hold_delay() == (hold if type(floor) is int else -1)


def test_the_hold_delay_on_c_integers_refuses_what_a_c_integer_cannot_hold() -> None:
    """exact_hold_delay answers -1 (the general path is taken) for a floor that is not an
    int of 0 to 2**53 (a bool, a negative, a larger int) or an SRTT past 2**53."""
    for floor, srtt, want in (
        (0, 0.0, 0),
        ((1 << 53) - 1, 0.0, (1 << 53) - 1),
        (1 << 53, 0.0, -1),
        (1 << 70, 0.0, -1),
        (-1, 0.0, -1),
        (True, 0.0, -1),
        (2_500, 10_003.75, 2_500),
        (2_500, 40_003.75, 10_000),
        (2_500, float(1 << 53), -1),
        (2_500, float("nan"), -1),
    ):
        t = RttTimers(replace(CFG, quarantine_window_ns=2_500), 0, adaptive=True)
        t.quarantine_floor_ns, t.srtt_ns = floor, srtt
        assert t.exact_hold_delay() == want, (floor, srtt)
        if want >= 0:
            assert t.exact_hold_delay() == t.hold_delay()


def test_the_configured_terms_read_per_acknowledgement_are_the_configurations() -> None:
    """The base RTT and the floors of the reorder window, the quarantine window and the
    RTO are kept by the timers (read per acknowledgement without the dataclass's
    attribute lookup): each one is the configuration's and sets what it bounds."""
    cfg = replace(
        CFG,
        base_rtt_ns=7_000,
        reorder_window_ns=3_333,
        quarantine_window_ns=4_444.5,
        rto_min_ns=55_555,
        adaptive_timers=True,
    )
    t = RttTimers(cfg, 0, adaptive=True)
    assert (t.base_rtt_ns, t.reorder_floor_ns, t.quarantine_floor_ns, t.rto_floor_ns) == (
        7_000,
        3_333,
        4_444.5,
        55_555,
    )
    assert (t.reorder_window(), t.hold_delay()) == (3_333, 4_444.5)  # no sample: the floors
    assert t.tail_probe_timeout() == int(max(2 * 7_000, 7_000 + 3_333))  # no RTT: the base
    t.sample(1_000, 0)  # a short RTT: the RTO is held at its floor
    assert t.rto_base == 55_555
    t.sample(9_000, 10)  # 8 us of queueing: the peak sets the reorder window
    assert t.reorder_window() == 8_000 and t.qdelay_peak_at == 10
    t.sample(1_000, 10 + QDELAY_PEAK_RTTS * 7_000 // 2)  # half the base RTTs' span later
    assert t.qdelay_peak_ns == 4_000


def test_the_tail_probe_timeout_is_python_arithmetic_on_its_terms() -> None:
    """tail_probe_timeout = int(max(2 * srtt, srtt + reorder_window())), srtt the minimum
    RTT plus the queueing delay (a float) or, before a sample, the base RTT: the native
    build computes it (and the window, for an int floor) in C integers and doubles, to
    the same int; a float floor or base RTT takes Python's arithmetic, whose result it is."""
    for floor, base in ((2_500, 12_000), (2_500.0, 12_000), (7_999.5, 12_000), (0, 9_000.5)):
        cfg = replace(CFG, reorder_window_ns=floor, base_rtt_ns=base, probe_interval_ns=64_000)
        for adaptive in (False, True):
            t = RttTimers(cfg, 0, adaptive=adaptive)
            got = t.tail_probe_timeout()
            want = int(max(2 * base, base + t.reorder_window()))
            assert (got, type(got)) == (want, int)  # no sample: the base RTT
            for min_rtt, qdelay, peak, srtt in (
                (1, 0.0, 0, 0.0),
                (10_007, 1_249.9, 2_500, 10_000.0),
                (10_007, 1_250.0, 2_499.99, 10_003.75),
                (3, 3_000.7, 1_000, 31_999.0),
                (12_345, 10.0, 4_000.5, 40_000.0),
                ((1 << 40) + 1, 0.1, 0, 9_999.99),  # the int made the nearest double
                ((1 << 53) + 1, 0.5, 7, 1.0),  # a round trip past 2**53: Python's int()
            ):
                t.min_rtt_ns, t.qdelay_ns, t.qdelay_peak_ns, t.srtt_ns = (
                    min_rtt,
                    qdelay,
                    peak,
                    srtt,
                )
                window = max(floor, int(2 * qdelay), int(peak))
                if adaptive:
                    window = max(window, int(srtt) >> 2)
                assert (t.reorder_window(), type(t.reorder_window())) == (window, type(window))
                rtt = min_rtt + qdelay
                want = int(max(2 * rtt, rtt + window))
                got = t.tail_probe_timeout()
                assert (got, type(got)) == (want, int), (floor, adaptive, min_rtt, qdelay)
