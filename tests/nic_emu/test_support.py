"""Config validation, congestion control, memory regions, event log, virtual clock."""

from __future__ import annotations

import io
import random

import pytest

from nic_emu.analysis import count_kinds, repath_time
from nic_emu.config import CcConfig, NicConfig, config_as_dict
from nic_emu.congestion import FixedWindow, Nscc, make_congestion_control
from nic_emu.event_log import LOSS, TX, EventLog, read_jsonl
from nic_emu.exceptions import AnalysisError, ConfigError, MemoryAccessError
from nic_emu.memory import MemoryTable


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"evs_per_connection": 0}, "evs_per_connection must be > 0"),
        ({"ack_timeout_exp": 25}, "ack_timeout_exp must be in 0..24"),
        ({"receive_window_psns": 100}, "multiple of 128"),
        ({"ev_min_active": -1}, "ev_min_active must be >= 0"),
        ({"mtu_payload": 10000}, "mtu_payload must be <= 9000"),
        ({"cc": "nscc"}, "cc must be a CcConfig"),
        ({"probe_interval_ns": 5_000}, "must be at least base_rtt_ns"),
    ],
)
def test_bad_config_rejected(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        NicConfig(**kwargs)


def test_cc_config_range_and_rto() -> None:
    with pytest.raises(ConfigError, match=r"gamma must be in \(0, 1\)"):
        CcConfig(gamma=1.5)
    assert NicConfig(ack_timeout_exp=6).rto_base_ns == 65_536
    assert config_as_dict(NicConfig())["cc"]["gamma"] == 0.8


def _nscc(**kwargs: object) -> Nscc:
    return Nscc(CcConfig(**kwargs), 4096, 150_000, 12_000, 0)  # type: ignore[arg-type]


def test_nscc_starts_at_max_and_decreases_on_ecn_with_delay_once_per_rtt() -> None:
    cc = _nscc()
    assert cc.cwnd == cc.max_wnd == 225_000 and cc.target_ns == 9_000
    t = 0
    # ECN and 28 us of queueing delay: the average delay (gain 1/80) passes the 9 us
    # target after ~31 samples, then one decrease, and no second within the RTT (40 us:
    # with delay_md, decreases are spaced by the measured RTT when above the base RTT).
    for _ in range(60):
        t += 100
        cc.on_ack(4096, True, 40_000, t)
    first = cc.cwnd
    assert first < 225_000 and cc.decreases == 1 and cc.avg_delay > cc.target_ns
    t += 30_000
    cc.on_ack(4096, True, 40_000, t)
    assert cc.decreases == 1
    t += 10_001
    cc.on_ack(4096, True, 40_000, t)
    assert cc.decreases == 2 and cc.cwnd < first
    assert cc.cwnd >= first // 2  # one decrease is at most max_md_jump (0.5)


def test_nscc_ecn_below_target_leaves_window() -> None:
    cc = _nscc()
    cc.on_ack(4096, False, 12_000, 1_000)
    cc.cwnd = 100_000
    cc.on_ack(4096, True, 13_000, 2_000)
    assert cc.cwnd == 100_000


def test_nscc_increases_without_ecn_and_nack_shrinks() -> None:
    cc = _nscc()
    cc.cwnd = 50_000
    t = 0
    for _ in range(200):
        t += 100
        cc.on_ack(4096, False, 12_000 + 5_000, t)  # below target: proportional increase
    assert cc.cwnd > 50_000
    grown = cc.cwnd
    cc.on_nack(4096, t, inflight=grown)  # quick adapt's period has not ended: shrink only
    assert cc.cwnd == grown - 4096 and cc.quick_adapts == 0
    cc.cwnd = 5000
    cc.on_loss(4096, t)
    assert cc.cwnd == 4096  # never below one MTU


def test_nscc_fast_increase_on_a_clear_path_after_a_window_of_acks() -> None:
    cc = _nscc()
    cc.cwnd = 40_960
    t = 0
    acked = 0
    while not cc.fast_mode and acked < 200_000:  # no queueing delay (under 1 us)
        t += 100
        cc.on_ack(4096, False, 12_000, t)
        acked += 4096
    assert cc.fast_mode and acked > 40_960  # only after more than a window of clear acks
    before = cc.cwnd
    t += 100
    cc.on_ack(4096, False, 12_000, t)
    assert cc.cwnd >= before + int(4096 * cc.fast_scale)
    cc.on_ack(4096, False, 12_000 + 2_000, t + 100)  # 2 us of delay ends fast mode
    assert not cc.fast_mode


def test_nscc_base_rtt_starts_configured_and_follows_the_lowest_sample() -> None:
    cc = _nscc()
    cc.on_ack(4096, False, 20_000, 100)  # above the configured 12 us: no change
    assert cc.base_rtt_ns == 12_000 and cc.max_wnd == 225_000
    cc.on_ack(4096, False, 8_000, 200)  # the fabric is shorter: base RTT and ceiling fall
    assert cc.base_rtt_ns == 8_000 and cc.max_wnd == 150_000 and cc.cwnd <= 150_000
    assert cc.target_ns == 9_000  # the target stays the configured network's


def test_nscc_quick_adapt_after_trims_sets_the_window_to_what_was_delivered() -> None:
    cc = _nscc()
    cc.on_ack(4096, False, 12_000, 1_000)  # starts the first period (ends 22 us)
    cc.on_ack(4096, False, 12_000, 2_000)
    cc.on_ack(4096, False, 12_000, 3_000)  # 8,192 bytes delivered in this period
    cc.on_nack(4096, 30_000, inflight=100_000)  # period over, little delivered: adapt
    assert cc.quick_adapts == 1 and cc.cwnd == 8_192
    # The marks of what was in flight then are old news: ignored, no decrease.
    cc.avg_delay = 50_000.0
    cc.on_ack(4096, True, 40_000, 60_000)
    assert cc.cwnd == 8_192 and cc.decreases == 0
    # A period that delivered a lot (more than max_wnd / 2^qa_gate) does not adapt.
    busy = _nscc()
    busy.on_ack(4096, False, 12_000, 1_000)
    for i in range(10):
        busy.on_ack(4096, False, 12_000, 2_000 + i)
    busy.on_nack(4096, 30_000, inflight=100_000)
    assert busy.quick_adapts == 0 and busy.cwnd == 225_000 - 4096


def test_nscc_unmarked_delay_over_target_without_delay_md_is_not_congestion() -> None:
    """UET 1.0's rule (delay_md off): delay no queue marked pulls the average toward a
    quarter base RTT and is answered by a fair increase; MRC's default (delay_md on)
    counts it as congestion, its last hop marking no ECN."""
    uet = _nscc(delay_md=False, quick_adapt=False)
    mrc = _nscc(quick_adapt=False)
    for cc in (uet, mrc):
        cc.cwnd = 100_000
        t = 0
        for _ in range(2000):  # 200 us of samples with 28 us of unmarked delay
            t += 100
            cc.on_ack(4096, False, 40_000, t)
    assert uet.avg_delay <= 3_000 and uet.cwnd > 100_000 and uet.decreases == 0
    assert mrc.avg_delay > mrc.target_ns and mrc.cwnd < 100_000 and mrc.decreases >= 1


def test_nscc_config_rejects_bad_quick_adapt_settings() -> None:
    with pytest.raises(ConfigError, match=r"qa_gate must be an integer in 0..16"):
        CcConfig(qa_gate=17)
    with pytest.raises(ConfigError, match=r"delay_gain must be in \(0, 1\)"):
        CcConfig(delay_gain=0.0)
    with pytest.raises(ConfigError, match="quick_adapt must be true or false"):
        CcConfig(quick_adapt=1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="qa_threshold_targets must be > 0"):
        CcConfig(qa_threshold_targets=0)


def test_disabled_cc_is_fixed() -> None:
    cc = make_congestion_control(CcConfig(enabled=False), 4096, 150_000, 12_000, 0)
    assert isinstance(cc, FixedWindow)
    cc.on_nack(4096, 0)
    cc.on_ack(10, True, 99_999, 1)
    assert cc.cwnd == 225_000


def test_memory_regions() -> None:
    table = MemoryTable()
    a = table.register(100)
    b = table.register(5000)
    assert a.rkey != b.rkey and b.va >= a.va + 100
    assert table.lookup(a.rkey, a.va + 90, 10) is a
    assert table.lookup(a.rkey, a.va + 91, 10) is None
    assert table.lookup(0xBAD, a.va, 1) is None
    with pytest.raises(MemoryAccessError, match="positive length"):
        table.register(0)
    with pytest.raises(MemoryAccessError, match="outside region"):
        a.read(a.va - 1, 4)
    table.deregister(a.rkey)
    with pytest.raises(MemoryAccessError, match="no memory region"):
        table.deregister(a.rkey)


def test_reserved_memory_takes_an_rkey_and_va_range_as_a_region_would() -> None:
    table, other = MemoryTable(), MemoryTable()
    rkey, va = table.reserve(5000)
    region = other.register(5000)
    assert (rkey, va) == (region.rkey, region.va)  # the same numbering, no buffer
    assert table.lookup(rkey, va, 1) is None and not table.regions
    after = table.register(100)
    assert after.rkey == rkey + 1 and after.va >= va + 5000
    for bad in (0, -1, True, 2.5):
        with pytest.raises(MemoryAccessError, match="positive length"):
            table.reserve(bad)  # type: ignore[arg-type]


def test_event_log_round_trip_and_errors() -> None:
    log = EventLog()
    log.record(5, "nic0", TX, qpn=1, plane=0, ev=7, psn=3, bytes=100, rtx=False)
    log.record(9, "nic0", LOSS, qpn=1, plane=0, ev=7, psn=3, sent_ns=5, reason="timeout")
    buf = io.StringIO()
    assert log.write_jsonl(buf) == 2
    back = read_jsonl(buf.getvalue().splitlines())
    assert [r.as_dict() for r in back] == [r.as_dict() for r in log]
    assert count_kinds(back) == {TX: 1, LOSS: 1}
    with pytest.raises(AnalysisError, match="line 1 is not JSON"):
        read_jsonl(["{oops"])
    with pytest.raises(AnalysisError, match="lacks t_ns"):
        read_jsonl(['{"a": 1}'])


def test_repath_time_from_records() -> None:
    log = EventLog()
    for t in (100, 200, 300, 400):
        log.record(t, "n", TX, ev=1, plane=0)
    log.record(250, "n", TX, ev=2, plane=1)
    log.record(500, "n", LOSS, ev=1, sent_ns=200)
    log.record(600, "n", LOSS, ev=1, sent_ns=300)
    result = repath_time(log, {1}, fault_ns=150)
    assert result.repath_ns == 200 and result.packets_lost == 2
    assert result.packets_sent_after_fault == 3
    with pytest.raises(AnalysisError, match="trace_packets"):
        repath_time([r for r in log if r.kind != TX], {1})
    with pytest.raises(AnalysisError, match="never hit"):
        repath_time(log, {2})
    with pytest.raises(AnalysisError, match="at least one EV"):
        repath_time(log, set())


def test_nscc_delay_at_the_target_is_a_mark_and_below_it_an_exact_increase() -> None:
    """The native build holds an acknowledgement's delay as a C double (session 20): an
    int delay compares with the target and scales the increase as Python's int does."""
    cc = _nscc(delay_md=True)
    cc.cwnd = 50_000
    target = cc.target_ns
    cc.on_ack(4096, False, 12_000 + target, 100)  # at the target: delay_md marks it
    assert cc.inc_bytes == 0.0 and cc.avg_delay == cc.delay_gain * target
    avg = cc.avg_delay
    cc.on_ack(4096, False, 12_000 + target - 1, 200)  # one ns under: proportional increase
    assert cc.inc_bytes == cc.alpha * 4096 * 1
    assert cc.avg_delay == avg + cc.delay_gain * ((target - 1) - avg)
    inc, avg = cc.inc_bytes, cc.avg_delay
    cc.on_ack(4096, False, -1, 300)  # no sample: the average delay (a float) stands in
    assert cc.inc_bytes == inc + cc.alpha * 4096 * (target - avg)


class _Ns(int):
    """A time that is an int but not exactly one: Nscc.on_ack's C path (the native
    build's) refuses it, so the Python expressions run on the same values."""


_NSCC_STATE = (
    "cwnd",
    "max_wnd",
    "base_rtt_ns",
    "avg_delay",
    "inc_bytes",
    "acked_since_adjust",
    "last_adjust_ns",
    "last_decrease_ns",
    "fast_count",
    "fast_mode",
    "achieved",
    "qa_end_ns",
    "qa_trigger",
    "ignore_bytes",
    "ignored",
    "decreases",
    "quick_adapts",
    "last_rtt_ns",
)


@pytest.mark.parametrize("delay_md", [True, False])
@pytest.mark.parametrize("quick_adapt", [True, False])
def test_nscc_on_ack_on_c_numbers_takes_the_python_steps(delay_md: bool, quick_adapt: bool) -> None:
    """Three controls fed the same acknowledgements, NACKs and losses: one with ints and
    bools (the native build's C path), one given ``now`` as an int subclass and one the
    ECN echo as an int (the Python expressions on either build) hold the same state after
    every call: the base RTT falling, marks, fast and proportional increases, decreases,
    quick adapt and the adjustments."""
    rng = random.Random(f"nscc-{delay_md}-{quick_adapt}")
    cfg = CcConfig(delay_md=delay_md, quick_adapt=quick_adapt, qa_gate=1)
    ccs = [Nscc(cfg, 4096, 150_000, 13_000, 0) for _ in range(3)]
    now = 0
    for step in range(3_000):
        now += rng.choice((1, 50, 400, 3_000, 30_000))
        nbytes = rng.choice((0, 1, 4096, 8192, 65_536))
        inflight = rng.randrange(0, 300_000)
        roll = rng.random()
        if roll < 0.85:
            ecn = rng.random() < 0.25
            rtt = rng.choice(
                (-1, rng.randrange(0, 13_000), 13_000 + rng.randrange(0, 60_000), 1 << 54)
            )
            ccs[0].on_ack(nbytes, ecn, rtt, now, inflight)
            ccs[1].on_ack(nbytes, ecn, rtt, _Ns(now), inflight)
            ccs[2].on_ack(nbytes, int(ecn), rtt, now, inflight)  # type: ignore[arg-type]
        elif roll < 0.95:
            for cc in ccs:
                cc.on_nack(nbytes, now, inflight)
        else:
            for cc in ccs:
                cc.on_loss(nbytes, now)
        for name in _NSCC_STATE:
            want = getattr(ccs[0], name)
            assert getattr(ccs[1], name) == want == getattr(ccs[2], name), (step, name)
    assert ccs[0].base_rtt_ns < 13_000 and ccs[0].decreases and ccs[0].cwnd
    if quick_adapt:
        assert ccs[0].quick_adapts
