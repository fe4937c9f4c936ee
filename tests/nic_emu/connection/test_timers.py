"""nic_emu.connection.timers: a connection's deadlines on their own. The receive side
(AckSchedule), the send turn (SendWaits) and the NIC (DeadlineHost) are recording
doubles; the queue pair is reached only through QpStatus."""

from __future__ import annotations

from dataclasses import replace

from mrc_wire import Probe, decode
from nic_emu import event_log as ev_kinds
from nic_emu.config import RoceConfig
from nic_emu.connection.common import Frame, QpState
from nic_emu.connection.gobackn import GoBackN
from nic_emu.connection.timers import Deadlines
from nic_emu.ev_set import ASSUMED_BAD
from nic_emu.nic_host import NicHost

from .kit import CFG, PEER, PEER_QPN, Parts, make_parts, post, transmit


class Acks:
    """AckSchedule: a delayed SACK owed at ``sack_deadline``, which is ``sack``."""

    def __init__(self) -> None:
        self.sack_deadline: int | None = None
        self.sack: Frame | None = None
        self.timers: list[int] = []

    def on_timer(self, now: int) -> Frame | None:
        self.timers.append(now)
        return self.sack


class Waits:
    """SendWaits: what the send turn waits for."""

    def __init__(self) -> None:
        self.pace_at: int | None = None
        self.rate_wait_ns: int | None = None
        self.no_ev_since: int | None = None
        self.timers: list[int] = []

    def on_timer(self, now: int) -> None:
        self.timers.append(now)


class Host(NicHost):
    """DeadlineHost: two ports, both up; the peer's likewise (a NicHost: the native
    build's deadlines take their host as one)."""

    def __init__(self) -> None:
        super().__init__(2, [1, 1])


def _deadlines(parts: Parts, *, gbn: GoBackN | None = None) -> tuple[Deadlines, Host, Acks, Waits]:
    host, acks, waits = Host(), Acks(), Waits()
    deadlines = Deadlines(
        host,
        parts.qp,
        parts.cfg,
        parts.send,
        parts.evs,
        parts.timers,
        acks,
        waits,
        parts.probes,
        parts.tail,
        parts.losses,
        peer=PEER,
        peer_qpn=PEER_QPN,
        mrc=gbn is None,
        gbn=gbn,
        counters=parts.counters,
        log=parts.log,
        now=0,
    )
    return deadlines, host, acks, waits


def test_the_deadline_is_the_earliest_of_its_terms() -> None:
    parts = make_parts()
    deadlines, _, acks, waits = _deadlines(parts)
    post(parts, 1)
    transmit(parts, 100)
    acks.sack_deadline = 50
    assert deadlines.timer_deadline() == 50
    acks.sack_deadline = None
    assert deadlines.timer_deadline() == 100 + parts.timers.tail_probe_timeout()
    parts.tail.armed = False
    assert deadlines.timer_deadline() == 100 + parts.timers.rto_ns()
    waits.rate_wait_ns = 30_000
    assert deadlines.timer_deadline() == 30_000
    waits.no_ev_since = 10
    deadlines.no_ev_timeout_ns = 5
    assert deadlines.timer_deadline() == 15 and not deadlines.by_peer
    waits.pace_at = 12
    assert deadlines.next_deadline() == 12  # the pacing wait counts there only
    assert deadlines.timer_deadline() == 15
    parts.qp.state = QpState.ERROR
    assert deadlines.timer_deadline() is None


def test_the_peers_silence_is_a_deadline_and_says_so() -> None:
    parts = make_parts()
    deadlines, host, _, _ = _deadlines(parts)
    assert deadlines.timer_deadline() is None  # nothing outstanding: no silence to time
    post(parts, 1)  # posted, not sent: only the peer's silence is timed
    assert deadlines.timer_deadline() == CFG.peer_timeout_ns and deadlines.by_peer
    host.peer_heard_ns[PEER] = 500
    deadlines.peer_answered(300)  # never moves back
    deadlines.peer_answered(700)
    assert deadlines.quiet_since == 700
    assert deadlines.timer_deadline() == 700 + CFG.peer_timeout_ns
    host.port_up = [False, False]  # no port to probe from: the silence proves nothing
    assert deadlines.timer_deadline() is None and not deadlines.by_peer


def test_a_timer_ends_the_waits_sends_the_owed_sack_and_the_tail_probe() -> None:
    parts = make_parts()
    deadlines, _, acks, waits = _deadlines(parts)
    post(parts, 1)
    transmit(parts, 100)
    due = 100 + parts.timers.tail_probe_timeout()
    acks.sack = (1, b"the delayed SACK")
    frames = deadlines.on_timer(due)
    assert (waits.timers, acks.timers) == ([due], [due])
    assert len(frames) == 2 and frames[0] == acks.sack  # in the order they were made
    probe = decode(frames[1][1])
    assert isinstance(probe, Probe) and probe.dqpn == PEER_QPN
    assert parts.tail.sent_ns == due and not parts.tail.armed


def test_a_silent_timeout_retires_the_path_loses_every_late_packet_and_backs_off() -> None:
    parts = make_parts()
    deadlines, _, _, _ = _deadlines(parts)
    post(parts, 3)
    first = transmit(parts, 0)
    for t in (10, 20):
        transmit(parts, t)
    rto = parts.timers.rto_ns()
    parts.out.extend(deadlines.on_timer(rto + 20))
    assert sorted(parts.send.rtx_heap) == [0, 1, 2]
    assert parts.counters["losses_timeout"] == 3 and parts.counters["rto_silent"] == 1
    assert first.entry is not None
    assert all(e.state is ASSUMED_BAD for e in parts.evs.by_path[first.entry.path])
    (rec,) = parts.core.log.of_kind(ev_kinds.RTO)
    assert rec.detail == {"backoff": 1, "blamed": "PSN 0x0"}
    assert parts.timers.hold_until == rto + 20 + parts.timers.rto_ns() == rto + 20 + 2 * rto


def test_a_timeout_after_progress_is_not_silent() -> None:
    parts = make_parts()
    deadlines, _, _, _ = _deadlines(parts)
    post(parts, 2)
    pkt = transmit(parts, 0)
    parts.timers.progress(50)  # something came back after the packet left
    rto = parts.timers.rto_ns()
    parts.out.extend(deadlines.on_timer(rto))
    assert parts.send.rtx_heap == [0] and parts.timers.backoff == 0
    assert not parts.core.log.of_kind(ev_kinds.RTO)
    # The EV is judged by its loss; its path (two EVs) is not retired.
    assert pkt.entry is not None and pkt.entry.state is ASSUMED_BAD
    assert len(parts.evs.by_path[pkt.entry.path]) == 2 and parts.evs.bad_count == 1


def test_silent_timeouts_past_max_retries_fail_the_queue_pair() -> None:
    parts = make_parts()
    deadlines, _, _, _ = _deadlines(parts)
    post(parts, 1)
    transmit(parts, 0)
    parts.timers.backoff = CFG.max_retries
    now = parts.timers.rto_ns()
    parts.out.extend(deadlines.on_timer(now))
    ((reason, detail, when),) = parts.qp.failures
    assert (reason, when) == ("max_retries", now)
    assert f"after {CFG.max_retries} retries" in detail


def test_the_peers_silence_fails_the_queue_pair_with_its_paths() -> None:
    parts = make_parts(replace(CFG, peer_timeout_ns=1_000))
    deadlines, _, _, _ = _deadlines(parts)
    post(parts, 1)
    parts.out.extend(deadlines.on_timer(1_000))
    ((reason, detail, _),) = parts.qp.failures
    assert reason == "peer_unreachable"
    assert f"{PEER} is unreachable" in detail and "never heard from" in detail
    assert "paths: plane 0 via" in detail and "local ports down: none" in detail


def test_no_usable_ev_for_too_long_fails_the_queue_pair() -> None:
    parts = make_parts()
    deadlines, _, _, waits = _deadlines(parts)
    waits.no_ev_since = 100
    parts.out.extend(deadlines.on_timer(100 + deadlines.no_ev_timeout_ns - 1))
    assert not parts.qp.failures
    parts.out.extend(deadlines.on_timer(100 + deadlines.no_ev_timeout_ns))
    ((reason, detail, _),) = parts.qp.failures
    assert reason == "no_usable_ev" and f"toward {PEER}" in detail


def test_a_roce_timeout_goes_back_n_and_its_retries_fail_the_queue_pair() -> None:
    parts = make_parts(replace(CFG, roce=replace(RoceConfig(), retry_count=1)), mrc=False)
    gbn = GoBackN(
        parts.cfg.roce,
        parts.cfg.port_rate_bps,
        0,
        peer_label=f"{PEER} QPN {PEER_QPN:#x}",
        counters=parts.counters,
        log=parts.log,
    )
    parts.timers.fix(gbn.ack_timeout_ns)
    deadlines, _, _, _ = _deadlines(parts, gbn=gbn)
    post(parts, 2)
    transmit(parts, 0)
    transmit(parts, 0)
    parts.out.extend(deadlines.on_timer(gbn.ack_timeout_ns))
    assert parts.counters["gobackn_rewinds"] == 1 and sorted(parts.send.rtx_heap) == [0, 1]
    transmit(parts, gbn.ack_timeout_ns)
    parts.out.extend(deadlines.on_timer(2 * gbn.ack_timeout_ns))
    assert parts.qp.failures and parts.qp.failures[0][0] == "max_retries"


def test_a_connections_own_receive_side_and_send_turn_set_its_deadline() -> None:
    # A queue pair's deadlines read its Receiver and Transmitter (C fields on the
    # native build) as they read the doubles above.
    from nic_emu.connection.receive import Receiver
    from nic_emu.connection.transmit import Transmitter
    from nic_emu.testing import sim
    from topologies import load
    from vfabric.eventlist import EventList

    net = sim.SimNetwork(load("tiny"), EventList(), seed=1)
    conn, _ = net.connect("nic0", "nic3")
    d = conn.deadlines
    assert type(d.acks) is Receiver and type(d.waits) is Transmitter
    base = d.timer_deadline()
    early = 1 if base is None else base - 10
    conn.rx.sack_deadline = early
    assert d.timer_deadline() == early and not d.by_peer
    conn.rx.sack_deadline = None
    conn.tx.rate_wait_ns = early + 1
    assert d.timer_deadline() == early + 1
    conn.tx.rate_wait_ns = None
    conn.tx.no_ev_since = early - d.no_ev_timeout_ns + 2
    assert d.timer_deadline() == early + 2
    conn.tx.no_ev_since = None
    assert d.timer_deadline() == base


def _general(deadlines: Deadlines) -> tuple[int | float | None, bool]:
    """timer_deadline on its general path (every term a Python object, the reference),
    forced by a float term that never wins: (the deadline, by_peer)."""
    acks = deadlines.acks
    saved = acks.sack_deadline
    never = float(1 << 62)
    if saved is None:
        acks.sack_deadline = never
    try:
        t = deadlines.timer_deadline()
        return (None if t == never else t), deadlines.by_peer
    finally:
        acks.sack_deadline = saved


def test_exact_deadline_is_timer_deadline_on_c_integers_or_says_inexact() -> None:
    """exact_deadline (timer_deadline's arithmetic on C integers on the native build)
    gives the general path's deadline as a time key, and the same by_peer, in every state
    of the terms; a float term (a configured timeout may be one) or an int of 2**60 or
    more makes it INEXACT, and timer_deadline then gives the general path's float."""
    from nic_emu.connection.timers import INEXACT, NO_DEADLINE, time_key

    assert (time_key(None), time_key(5), time_key(-5)) == (NO_DEADLINE, 5, -5)
    assert time_key((1 << 60) - 1) == (1 << 60) - 1 and time_key(-(1 << 60) + 1) == 1 - (1 << 60)
    assert {time_key(1 << 60), time_key(-(1 << 60)), time_key(2.0), time_key(True)} == {INEXACT}
    parts = make_parts()
    deadlines, host, acks, waits = _deadlines(parts)

    def check(expect_exact: bool = True) -> None:
        general, by_peer = _general(deadlines)
        exact = deadlines.exact_deadline()
        if expect_exact:
            assert exact == time_key(general) and exact != INEXACT
            assert deadlines.by_peer == by_peer
            assert deadlines.timer_deadline() == general and deadlines.by_peer == by_peer
        else:
            assert exact == INEXACT
            t = deadlines.timer_deadline()
            assert t == general and type(t) is type(general)

    check()  # nothing at all
    post(parts, 2)
    check()  # the peer's silence only
    transmit(parts, 100)
    check()  # the tail-loss probe, the RTO, the peer
    transmit(parts, 150)
    parts.tail.armed = False
    check()
    parts.timers.hold_until = 1 << 40
    check()  # held past the RTO: the peer's silence is earlier
    parts.timers.hold_until = 0
    acks.sack_deadline = 120
    waits.rate_wait_ns = 110
    check()
    waits.no_ev_since = 5
    deadlines.no_ev_timeout_ns = 50
    check()
    host.peer_heard_ns[PEER] = -(1 << 50)  # heard long ago: the peer's silence is first
    deadlines.quiet_since = -(1 << 50)
    check()
    assert deadlines.by_peer
    host.port_up = [False, True]
    check()
    host.port_up = [False, False]
    check()
    assert not deadlines.by_peer
    parts.probes.next_ns = 7
    check()
    deadlines.no_ev_timeout_ns = 50.0  # a float term: the general path
    check(expect_exact=False)
    parts.probes.next_ns = None
    check(expect_exact=False)
    assert deadlines.timer_deadline() == 55.0 and type(deadlines.timer_deadline()) is float
    deadlines.no_ev_timeout_ns = 50
    acks.sack_deadline = 1 << 60  # too large for the C integers
    assert deadlines.exact_deadline() == INEXACT
    acks.sack_deadline = 3.5
    check(expect_exact=False)
    acks.sack_deadline = None
    deadlines.peer_timeout_ns = 1e6
    host.port_up = [True, True]
    deadlines.quiet_since = 0
    host.peer_heard_ns[PEER] = 0
    waits.no_ev_since = None
    parts.probes.next_ns = None
    waits.rate_wait_ns = None
    parts.timers.hold_until = 1 << 40
    check(expect_exact=False)
    assert deadlines.by_peer and deadlines.timer_deadline() == 1e6
