"""Timers that fit the fabric (issue 15): in wall-clock modes the RTO and the probe
interval follow the measured RTT (RFC 6298) between the mode's floors and ceilings, probes
back off while nothing answers, and NSCC can take the queueing delay as its congestion
signal where no switch marks ECN."""

from __future__ import annotations

from dataclasses import replace

from nic_emu.config import CcConfig, NicConfig
from nic_emu.congestion import Nscc
from nic_emu.core import NicCore
from nic_emu.serve_config import transport_config
from nic_emu.testing import SimNetwork
from topologies import AddressPlan, load
from vfabric.eventlist import EventList

from .conftest import TEST_CONFIG, Transfer, payload

MS = 1_000_000
ADAPTIVE = NicConfig(
    adaptive_timers=True,
    ack_timeout_exp=17,  # 134 ms: the first RTO and the ceiling
    rto_min_ns=2 * MS,
    probe_interval_ns=100 * MS,
    probe_interval_min_ns=3 * MS,
    base_rtt_ns=100_000,
)


def _conn(config: NicConfig):
    core = NicCore("nic0", AddressPlan(load("tiny")), config)
    return core.create_connection("nic3", qpn=0x100, peer_qpn=0x100)


def test_rto_follows_rfc6298_between_floor_and_ceiling() -> None:
    conn = _conn(ADAPTIVE)
    ceiling = ADAPTIVE.rto_base_ns
    assert conn.timers.rto_ns() == ceiling  # no sample yet: the mode's starting value
    conn.timers.smooth(4 * MS)  # first sample: SRTT = R, RTTVAR = R/2, RTO = 3R
    assert (conn.timers.srtt_ns, conn.timers.rttvar_ns, conn.timers.rto_ns()) == (
        4 * MS,
        2 * MS,
        12 * MS,
    )
    conn.timers.smooth(8 * MS)  # RTTVAR = 3/4*2 + 1/4*4 = 2.5 ms; SRTT = 7/8*4 + 1/8*8 = 4.5
    assert (conn.timers.srtt_ns, conn.timers.rttvar_ns, conn.timers.rto_ns()) == (
        4.5 * MS,
        2.5 * MS,
        14.5 * MS,
    )
    for _ in range(200):
        conn.timers.smooth(MS // 2)  # steady 0.5 ms: RTO ~0.5 ms, held at the 2 ms floor
    assert conn.timers.rto_ns() == ADAPTIVE.rto_min_ns
    conn.timers.smooth(10_000 * MS)  # a huge outlier: the ceiling holds
    assert conn.timers.rto_ns() == ceiling


def test_fixed_timers_ignore_rtt_samples() -> None:
    conn = _conn(replace(ADAPTIVE, adaptive_timers=False))
    conn.timers.smooth(MS)
    assert conn.timers.rto_ns() == ADAPTIVE.rto_base_ns
    assert conn.timers.probe_interval_ns() == ADAPTIVE.probe_interval_ns


def test_probe_interval_is_the_rto_backed_off_while_unanswered() -> None:
    conn = _conn(ADAPTIVE)
    for _ in range(100):
        conn.timers.smooth(MS)
    assert conn.timers.rto_ns() == 2 * MS  # floor
    assert conn.timers.probe_interval_ns() == 3 * MS  # its own floor (SRTT + 4 RTTVAR ~ 1 ms)
    conn.timers.probe_misses = 3
    assert 8 * MS <= conn.timers.probe_interval_ns() <= 9 * MS  # ~1 ms x 2^3
    conn.timers.probe_misses = 30
    assert conn.timers.probe_interval_ns() == 100 * MS  # ceiling


def test_a_floor_above_its_ceiling_is_the_ceiling() -> None:
    conn = _conn(replace(ADAPTIVE, ack_timeout_exp=10, probe_interval_ns=1 * MS))
    conn.timers.smooth(MS // 10)
    assert conn.timers.rto_ns() == 1024 << 10 and conn.timers.probe_interval_ns() == MS


def test_the_process_defaults_are_adaptive_and_the_hardware_ones_are_not() -> None:
    process = transport_config({})
    assert process.adaptive_timers and process.cc.delay_md
    assert process.rto_min_ns < process.rto_base_ns
    assert process.probe_interval_min_ns < process.probe_interval_ns
    hardware = NicConfig()
    assert not hardware.adaptive_timers and hardware.cc.delay_md  # MRC: no last-hop ECN
    assert (hardware.rto_base_ns, hardware.probe_interval_ns) == (65_536, 32_000)


def test_adaptive_timers_learn_the_rtt_of_a_transfer_and_survive_a_cut() -> None:
    """Virtual time, process-like timers: the RTO falls from its 134 ms start to the
    fabric's scale, and a cut T0-T1 link is bypassed without a failure."""
    config = replace(
        TEST_CONFIG,
        adaptive_timers=True,
        ack_timeout_exp=17,
        rto_min_ns=100_000,
        probe_interval_ns=100 * MS,
        probe_interval_min_ns=50_000,
    )
    net = SimNetwork(load("tiny"), EventList(), config=config, seed=3)
    sender, receiver = net.connect("nic0", "nic3")
    data = payload(4 << 20, 3)
    region = net.register_memory("nic3", len(data))
    t = Transfer(net, sender, receiver, region, data)
    t.post()
    net.run(until_ns=200_000)
    net.fabric.set_link_state("p0-t0-0", "p0-t1-0", False)
    assert net.run_until_idle([sender], limit_ns=5_000 * MS)
    assert not net.failures("nic0") and t.delivered
    assert sender.timers.srtt_ns > 0 and sender.timers.rto_ns() < 2 * MS


def test_delay_md_decreases_on_delay_alone_once_per_measured_rtt() -> None:
    # target 1 ms at 100 us base RTT; quick adapt off (the 4.9 ms delay would trigger it)
    cfg = CcConfig(delay_md=True, target_qdelay_rtts=10, quick_adapt=False)
    cc = Nscc(cfg, 4096, 125_000, 100_000, 0)
    plain_cfg = CcConfig(delay_md=False, target_qdelay_rtts=10, quick_adapt=False)
    plain = Nscc(plain_cfg, 4096, 125_000, 100_000, 0)
    for c in (cc, plain):
        c.on_ack(4096, False, 1 * MS, 0)  # min RTT 1 ms
    start = cc.cwnd
    now = 0
    for _ in range(50):  # queueing delay 4 ms, no ECN, samples every 0.5 ms
        now += MS // 2
        cc.on_ack(4096, False, 5 * MS, now)
        plain.on_ack(4096, False, 5 * MS, now)
    assert cc.cwnd < start and plain.cwnd >= start
    # At most one decrease per measured RTT (5 ms): 25 ms of samples -> at most 5 or 6.
    assert 1 <= cc.decreases <= 6 and plain.decreases == 0
