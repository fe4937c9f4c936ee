"""DCQCN (nic_emu.dcqcn) against the algorithm of Zhu et al. (SIGCOMM 2015): the rate
cut and alpha on a CNP, alpha's decay, fast recovery, additive and hyper increase, the
CNP pacing, and the rate limiter's spacing."""

from __future__ import annotations

from typing import Any

import pytest

from nic_emu.config import DcqcnConfig, NicConfig, RoceConfig, TransportMode
from nic_emu.dcqcn import CnpPacer, DcqcnRate
from nic_emu.exceptions import ConfigError

from .conftest import finish, make_net, start_transfer

LINE = 100_000_000_000
CFG = DcqcnConfig()
K = CFG.alpha_timer_ns
T = CFG.rate_timer_ns
G = CFG.g


def test_line_rate_until_the_first_cnp() -> None:
    rate = DcqcnRate(CFG, LINE, 0)
    assert not rate.limited and rate.rc == LINE
    rate.on_sent(4096, 0)
    assert rate.next_send_ns == 0  # not limited: the port's pacing alone


def test_a_cnp_cuts_the_rate_by_alpha_over_two() -> None:
    rate = DcqcnRate(CFG, LINE, 0)
    rate.on_cnp(1_000)
    # alpha starts at 1: the first cut halves the rate; the target keeps the old rate
    assert rate.rc == LINE / 2 and rate.rt == LINE
    assert rate.alpha == pytest.approx((1 - G) * 1 + G)


def test_alpha_decays_every_k_without_a_cnp_and_sets_the_next_cut() -> None:
    rate = DcqcnRate(CFG, LINE, 0)
    rate.on_cnp(0)
    alpha = rate.alpha
    rate.advance(10 * K)
    assert rate.alpha == pytest.approx(alpha * (1 - G) ** 10)
    rc = rate.rc
    rate.on_cnp(10 * K)
    assert rate.rc == pytest.approx(max(rc * (1 - rate_alpha_before(alpha, 10) / 2), rc / 2))


def rate_alpha_before(alpha: float, periods: int) -> float:
    return alpha * (1 - G) ** periods


def test_fast_recovery_halves_the_gap_to_the_target_each_timer_period() -> None:
    rate = DcqcnRate(CFG, LINE, 0)
    rate.on_cnp(0)  # rc = LINE/2, rt = LINE
    for k in range(1, CFG.fast_recovery_steps + 1):
        rate.advance(k * T)
        assert rate.rt == LINE
        assert rate.rc == pytest.approx(LINE - LINE / 2 ** (k + 1))


def test_additive_then_hyper_increase_after_fast_recovery() -> None:
    cfg = DcqcnConfig(byte_counter=1_000_000, rate_ai_bps=1_000_000_000)
    rate = DcqcnRate(cfg, LINE, 0)
    rate.on_cnp(0)
    rate.on_cnp(10_000)  # a second cut: rt is now the first cut's rate
    rt0 = rate.rt
    start = 10_000
    for k in range(1, cfg.fast_recovery_steps + 1):
        rate.advance(start + k * T)
    assert rate.rt == rt0  # fast recovery does not move the target
    rate.advance(start + (cfg.fast_recovery_steps + 1) * T)
    assert rate.rt == pytest.approx(rt0 + cfg.rate_ai_bps)  # additive increase
    # byte-counter events: additive while i_B <= F, then hyper (i x R_HAI) once both
    # counts are past F
    now = start + (cfg.fast_recovery_steps + 1) * T
    rt = rate.rt
    for _ in range(cfg.fast_recovery_steps + 1):
        rate.on_sent(cfg.byte_counter, now)
    assert rate.byte_events == cfg.fast_recovery_steps + 1
    f = cfg.fast_recovery_steps
    assert rate.rt == pytest.approx(rt + f * cfg.rate_ai_bps + cfg.rate_hai_bps)


def test_back_at_line_rate_the_limiter_stops() -> None:
    rate = DcqcnRate(DcqcnConfig(rate_ai_bps=10_000_000_000), LINE, 0)
    rate.on_cnp(0)
    rate.advance(100 * T)
    assert not rate.limited and rate.rc == LINE


def test_one_cut_per_rate_reduce_period() -> None:
    rate = DcqcnRate(CFG, LINE, 0)
    rate.on_cnp(0)
    rate.on_cnp(CFG.rate_reduce_period_ns - 1)
    assert rate.cuts == 1 and rate.cnps == 2
    rate.on_cnp(CFG.rate_reduce_period_ns)
    assert rate.cuts == 2


def test_a_cut_never_goes_below_min_dec_factor_or_min_rate() -> None:
    rate = DcqcnRate(DcqcnConfig(min_dec_factor=0.75, initial_alpha=1.0), LINE, 0)
    rate.on_cnp(0)
    assert rate.rc == LINE * 0.75
    low = DcqcnRate(DcqcnConfig(min_rate_bps=60_000_000_000), LINE, 0)
    low.on_cnp(0)
    assert low.rc == 60_000_000_000


def test_the_limiter_spaces_packets_at_the_current_rate() -> None:
    rate = DcqcnRate(CFG, LINE, 0)
    rate.on_cnp(0)  # 50 Gb/s
    rate.on_sent(4230, 0)
    assert rate.next_send_ns == int(4230 * 8 * 1e9 / (LINE / 2))


def test_the_cnp_pacer_sends_one_cnp_per_interval() -> None:
    pacer = CnpPacer(CFG)
    times = [0, 10_000, 49_999, 50_000, 60_000, 100_001]
    assert [pacer.on_ce(t) for t in times] == [True, False, False, True, False, True]
    assert pacer.sent == 3


def test_an_incast_cuts_the_roce_senders_rates() -> None:
    """End to end on the model fabric: ECN marks become CNPs, CNPs cut the rates."""
    net = make_net()
    senders = ["nic0", "nic1", "nic4", "nic6"]
    ts = [
        start_transfer(net, s, "nic2", 256 << 10, seed=i, mode=TransportMode.ROCE)
        for i, s in enumerate(senders)
    ]
    assert net.run_until_idle([t.sender for t in ts], limit_ns=1_000_000_000)
    assert all(t.delivered for t in ts)
    cnps = sum(t.receiver.rx.cnp.sent for t in ts if t.receiver.rx.cnp is not None)
    cuts = sum(t.sender.dcqcn.cuts for t in ts if t.sender.dcqcn is not None)
    ecn_echoes = sum(t.sender.counters["ecn_echo_rx"] for t in ts)
    assert cnps > 0 and cuts > 0 and ecn_echoes == cnps


def test_dcqcn_off_leaves_the_rate_alone() -> None:
    net = make_net(roce=RoceConfig(dcqcn=DcqcnConfig(enabled=False)))
    t = start_transfer(net, size=64 << 10, mode=TransportMode.ROCE)
    assert finish(t) and t.delivered
    assert t.sender.dcqcn is None and t.receiver.rx.cnp is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"g": 0}, r"DcqcnConfig\.g must be in \(0, 1\]"),
        ({"min_dec_factor": 1.5}, r"DcqcnConfig\.min_dec_factor must be in \(0, 1\]"),
        ({"rate_timer_ns": 0}, r"DcqcnConfig\.rate_timer_ns must be > 0"),
        ({"cnp_interval_ns": -1}, r"DcqcnConfig\.cnp_interval_ns must be >= 0"),
        ({"enabled": "yes"}, r"DcqcnConfig\.enabled must be true or false"),
    ],
)
def test_bad_dcqcn_settings_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        DcqcnConfig(**kwargs)


def test_mrc_connections_have_no_dcqcn() -> None:
    net = make_net()
    sender, receiver = net.connect("nic0", "nic2", mode=TransportMode.MRC)
    assert sender.dcqcn is None and receiver.rx.cnp is None
    assert NicConfig().roce.dcqcn.enabled
