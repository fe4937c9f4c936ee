"""nic_emu.connection.feedback: losses, the tail-loss probe and the acknowledgements on
their own, each reaching its queue pair only through QpStatus (a recording double here)
and the NIC only through FeedbackHost."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mrc_wire import EV_PROBE_QPN, Nack, Probe, Sack, decode
from mrc_wire.constants import NackReason
from nic_emu import event_log as ev_kinds
from nic_emu.connection.common import TS_MASK, QpState
from nic_emu.connection.events import WriteCompleted
from nic_emu.connection.feedback import Feedback
from nic_emu.connection.gobackn import GoBackN
from nic_emu.connection.reverse import ReverseEvs
from nic_emu.ev_set import ASSUMED_BAD, GOOD, SKIP
from nic_emu.sender import IN_FLIGHT, LOST

from .kit import (
    CFG,
    MTU,
    PEER,
    PEER_QPN,
    PLAN,
    QPN,
    Parts,
    RecordingHost,
    make_parts,
    post,
    transmit,
)


def _feedback(parts: Parts, *, gbn: GoBackN | None = None) -> tuple[Feedback, RecordingHost]:
    host = RecordingHost()
    single = None
    if gbn is not None:
        first = parts.evs.ring[0]
        single = (first.plane, first.ev)
    feedback = Feedback(
        host,
        parts.qp,
        parts.cfg,
        parts.send,
        parts.evs,
        parts.cc,
        parts.timers,
        ReverseEvs(parts.core, parts.cfg, PEER, QPN, 0, single),
        parts.probes,
        parts.losses,
        parts.tail,
        peer=PEER,
        peer_addrs=frozenset(PLAN.nic_address(PEER, p).packed for p in range(2)),
        mrc=gbn is None,
        gbn=gbn,
        counters=parts.counters,
        log=parts.log,
    )
    return feedback, host


def _envelope(ev: int, *, inner_src: bytes | None = None) -> dict[str, object]:
    peer = PLAN.nic_address(PEER, 0).packed
    return {
        "dst_mac": bytes(6),
        "src_mac": bytes(6),
        "outer_src": peer,
        "outer_dst": bytes(16),
        "inner_src": peer if inner_src is None else inner_src,
        "inner_dst": PLAN.nic_address("nic0", 0).packed,
        "ev": ev,
        "dqpn": QPN,
    }


def _sack(parts: Parts, cum: int, **fields: object) -> Sack:
    ev = parts.evs.ring[0].ev
    fields.setdefault("echoed_ev", ev)
    return Sack(**_envelope(ev), cum_psn=cum, **fields)  # type: ignore[arg-type]


def _nack(parts: Parts, psn: int, reason: int, **fields: object) -> Nack:
    ev = parts.evs.ring[0].ev
    return Nack(
        **_envelope(ev),  # type: ignore[arg-type]
        cum_psn=parts.send.snd_una,
        nack_psn=psn,
        reason=reason,
        echoed_ev=ev,
        **fields,
    )


# -- Losses ---------------------------------------------------------------------------


def test_a_loss_is_counted_logged_judged_and_queued_again() -> None:
    parts = make_parts()
    post(parts, 2)
    pkt = transmit(parts, 100)
    entry = pkt.entry
    assert entry is not None
    parts.send.mark_lost(pkt)
    parts.losses.lost(pkt, "reorder", 500)
    assert parts.counters["losses_reorder"] == 1 and entry.losses == 1
    assert entry.state is ASSUMED_BAD  # MRC: a loss without a trim judges the EV
    assert parts.send.rtx_heap == [pkt.psn]
    (loss,) = parts.core.log.of_kind(ev_kinds.LOSS)
    assert (loss.psn, loss.detail["reason"], loss.detail["sent_ns"]) == (0, "reorder", 100)
    (rtx,) = parts.core.log.of_kind(ev_kinds.RETRANSMIT)
    assert rtx.detail == {"reason": "reorder", "transmissions": 1}
    assert parts.qp.state is QpState.READY


def test_a_port_or_path_loss_leaves_the_ev_alone() -> None:
    parts = make_parts()
    post(parts, 2)
    for reason in ("port", "path"):
        pkt = transmit(parts, 100)
        parts.send.mark_lost(pkt)
        parts.losses.lost(pkt, reason, 500)
        assert pkt.entry is not None and pkt.entry.state is GOOD
    assert (parts.counters["losses_port"], parts.counters["losses_path"]) == (1, 1)


def test_a_loss_quarantines_the_path_it_was_sent_on() -> None:
    parts = make_parts(replace(CFG, path_quarantine=True))
    post(parts, 1)
    pkt = transmit(parts, 100)
    parts.send.mark_lost(pkt)
    parts.losses.lost(pkt, "timeout", 500)
    assert pkt.entry is not None and pkt.entry.path in parts.evs.quarantined
    assert parts.counters["path_suspects"] == 1


def test_a_probe_answered_on_a_held_path_shows_the_packets_it_overtook_lost() -> None:
    parts = make_parts(replace(CFG, path_quarantine=True))
    post(parts, 4)
    e = parts.evs.ring[0]
    other = next(x for x in parts.evs.ring if x.path != e.path)
    early = transmit(parts, 100, e)
    elsewhere = transmit(parts, 100, other)
    probe_ns = 20_000
    window = parts.timers.reorder_window()
    edge = transmit(parts, probe_ns - window, e)  # a reorder window before it: lost too
    late = transmit(parts, probe_ns - window + 1, e)  # may still arrive after the probe
    parts.losses.overtaken(e.path, probe_ns, 30_000)
    assert (early.state, edge.state) == (LOST, LOST)
    assert (elsewhere.state, late.state) == (IN_FLIGHT, IN_FLIGHT)
    assert sorted(parts.send.rtx_heap) == [early.psn, edge.psn]
    assert parts.counters["losses_overtaken"] == 2
    losses = parts.core.log.of_kind(ev_kinds.LOSS)
    assert [r.detail["reason"] for r in losses] == ["overtaken", "overtaken"]
    # The probe just showed the path works: neither the EV nor the path is judged again.
    assert e.state is GOOD and e.path not in parts.evs.quarantined
    assert parts.counters["path_suspects"] == 0


def test_an_overtaken_loss_that_fails_the_queue_pair_stops_there() -> None:
    parts = make_parts(replace(CFG, path_quarantine=True))
    post(parts, 2)
    e = parts.evs.ring[0]
    first = transmit(parts, 100, e)
    transmit(parts, 200, e)
    first.transmissions = CFG.max_packet_transmissions
    parts.losses.overtaken(e.path, 20_000, 30_000)
    assert parts.qp.state is QpState.ERROR and parts.counters["losses_overtaken"] == 1


def test_a_packet_sent_too_often_fails_the_queue_pair() -> None:
    parts = make_parts()
    post(parts, 1)
    pkt = transmit(parts, 100)
    pkt.transmissions = CFG.max_packet_transmissions
    parts.send.mark_lost(pkt)
    parts.losses.queue_retransmit(pkt, "trimmed", 500)
    ((reason, detail, now),) = parts.qp.failures
    assert (reason, now) == ("packet_retries", 500)
    assert f"was sent {CFG.max_packet_transmissions} times" in detail


# -- TailProbe --------------------------------------------------------------------------


def test_the_tail_probe_is_due_only_when_nothing_new_can_go() -> None:
    parts = make_parts()
    tail = parts.tail
    assert tail.deadline() is None  # nothing in flight
    post(parts, 2)
    transmit(parts, 100)
    assert tail.deadline() is None  # the rest of the WRITE can go: its SACKs drive RACK
    transmit(parts, 200)
    assert tail.deadline() == 200 + parts.timers.tail_probe_timeout()
    tail.armed = False
    assert tail.deadline() is None


@pytest.mark.parametrize("window", [1, 1.0, 2, 2.0])
def test_the_tail_probe_is_due_when_the_receive_window_is_full(window: float) -> None:
    """The receive window compared on C integers (the native build's) or, a float, by
    the Python expression: one PSN out fills a window of 1, not one of 2."""
    parts = make_parts()
    tail = parts.tail
    tail.window = window
    post(parts, 3)
    transmit(parts, 100)
    due = 100 + parts.timers.tail_probe_timeout() if window == 1 else None
    assert tail.deadline() == due


def test_the_tail_probe_asks_the_peer_qp_and_its_answer_shows_the_losses() -> None:
    parts = make_parts()
    post(parts, 2)
    transmit(parts, 100)
    transmit(parts, 200)
    frame = parts.tail.send_probe(1_000)
    assert frame is not None
    probe = decode(frame[1])
    assert isinstance(probe, Probe) and probe.dqpn == PEER_QPN and probe.psn == 0
    assert (parts.tail.armed, parts.tail.sent_ns) == (False, 1_000)
    assert parts.tail.answered(850, 2_000)  # sent 850 ns or more before the probe: lost
    assert parts.send.rtx_heap == [0]
    assert parts.counters["losses_tail_probe"] == 1 and parts.tail.sent_ns == -1


def test_an_answer_whose_losses_fail_the_queue_pair_says_so() -> None:
    parts = make_parts()
    post(parts, 1)
    pkt = transmit(parts, 100)
    pkt.transmissions = CFG.max_packet_transmissions
    parts.tail.sent_ns = 1_000
    assert not parts.tail.answered(0, 2_000)
    assert parts.qp.failures[0][0] == "packet_retries"
    assert parts.tail.sent_ns == 1_000  # left as it was: the queue pair is gone


# -- Feedback ---------------------------------------------------------------------------


def test_a_sack_from_elsewhere_is_dropped() -> None:
    parts = make_parts()
    feedback, host = _feedback(parts)
    stranger = PLAN.nic_address("nic1", 0).packed
    s = Sack(**_envelope(1, inner_src=stranger), cum_psn=0, echoed_ev=1)  # type: ignore[arg-type]
    assert feedback.on_sack(s, 0, 10) == ()
    assert host.calls == [("drop", "foreign_source", 0, {"qpn": QPN})]
    assert parts.counters["rx_sack"] == 0


def test_a_sack_from_elsewhere_is_dropped_after_the_peers() -> None:
    parts = make_parts()
    feedback, host = _feedback(parts)
    stranger = PLAN.nic_address("nic1", 0).packed
    other = PLAN.nic_address(PEER, 1).packed  # the peer's plane-1 address, on plane 0
    assert feedback.on_sack(_sack(parts, 0), 0, 10) == ()
    s = Sack(**_envelope(1, inner_src=stranger), cum_psn=0, echoed_ev=1)  # type: ignore[arg-type]
    assert feedback.on_sack(s, 0, 20) == ()
    s = Sack(**_envelope(1, inner_src=other), cum_psn=0, echoed_ev=1)  # type: ignore[arg-type]
    assert feedback.on_sack(s, 0, 30) == ()
    drops = [c for c in host.calls if c[0] == "drop"]
    assert drops == [("drop", "foreign_source", 0, {"qpn": QPN})]
    assert parts.counters["rx_sack"] == 2


def test_a_cumulative_sack_acknowledges_samples_and_completes_the_write() -> None:
    parts = make_parts()
    feedback, host = _feedback(parts)
    post(parts, 2)
    transmit(parts, 0)
    transmit(parts, 0)
    parts.tail.armed = False
    assert feedback.on_sack(_sack(parts, 2, echoed_ts=0, port_status=0b11), 0, 5_000) == ()
    assert (parts.send.snd_una, parts.send.inflight_bytes) == (2, 0)
    assert host.events == [WriteCompleted(QPN, 1, 2 * MTU, 5_000)]
    assert (parts.timers.min_rtt_ns, parts.timers.last_ack_ns) == (5_000, 5_000)
    assert parts.tail.armed and parts.counters["rx_sack"] == 1
    ev = parts.evs.ring[0].ev
    assert host.calls == [("ports", PEER, 0b11, 5_000), ("heard", PEER, ev, 5_000)]


def test_a_sack_outside_the_window_is_refused() -> None:
    parts = make_parts()
    feedback, host = _feedback(parts)
    post(parts, 1)
    transmit(parts, 0)
    assert feedback.on_sack(_sack(parts, 5), 0, 100) == ()  # beyond the next PSN (1)
    assert parts.counters["rx_bad_ack"] == 1
    assert host.calls[-1] == ("drop", "ack_outside_window", 0, {"qpn": QPN, "psn": 5})
    assert parts.send.inflight_bytes == MTU


@pytest.mark.parametrize("general", [False, True])
def test_rack_declares_the_packets_a_later_one_overtook_lost(general: bool) -> None:
    """The oldest packet is tested on C integers first (the native build's), or, with a
    threshold that is not an int (a float of the same value), by the Python expressions
    alone: the same losses."""
    parts = make_parts()
    feedback, _ = _feedback(parts)
    if general:
        feedback.reorder_threshold = float(feedback.reorder_threshold)
    post(parts, 5)
    for i in range(5):
        transmit(parts, i * 100_000)
    # PSN 4 arrived, nothing before it: 3 later sends and the reorder window passed for
    # PSNs 0 and 1 only.
    assert feedback.on_sack(_sack(parts, 0, bitmap=1 << 4), 0, 410_000) == ()
    assert sorted(parts.send.rtx_heap) == [0, 1]
    assert parts.counters["losses_reorder"] == 2
    reasons = {r.detail["reason"] for r in parts.core.log.of_kind(ev_kinds.RETRANSMIT)}
    assert reasons == {"reorder"}


@pytest.mark.parametrize("general", [False, True])
def test_a_reorder_loss_that_fails_the_queue_pair_stops_the_sack_there(general: bool) -> None:
    parts = make_parts()
    feedback, _ = _feedback(parts)
    if general:
        feedback.reorder_threshold = float(feedback.reorder_threshold)
    post(parts, 5)
    pkts = [transmit(parts, i * 100_000) for i in range(5)]
    pkts[0].transmissions = pkts[1].transmissions = CFG.max_packet_transmissions
    feedback.on_sack(_sack(parts, 0, bitmap=1 << 4), 0, 410_000)
    # the first loss failed it: the second is not counted
    assert parts.qp.state is QpState.ERROR and parts.counters["losses_reorder"] == 1


def test_an_ecn_echo_skips_the_echoed_ev() -> None:
    parts = make_parts()
    feedback, _ = _feedback(parts)
    post(parts, 1)
    pkt = transmit(parts, 0)
    entry = pkt.entry
    assert entry is not None
    assert feedback.on_sack(_sack(parts, 1, ecn_echo=True, echoed_ev=entry.ev), 0, 100) == ()
    assert entry.state is SKIP and parts.counters["ecn_echo_rx"] == 1


def test_a_trim_nack_queues_the_packet_again_and_a_stale_one_does_not() -> None:
    parts = make_parts()
    feedback, _ = _feedback(parts)
    post(parts, 2)
    first = transmit(parts, 100)
    transmit(parts, 200)
    feedback.on_nack(_nack(parts, 1, int(NackReason.TRIMMED), echoed_ts=100), 0, 300)
    assert parts.counters["rx_nack_stale"] == 1 and not parts.send.rtx_heap
    feedback.on_nack(
        _nack(parts, 0, int(NackReason.TRIMMED), echoed_ts=first.sent_ns & TS_MASK), 0, 400
    )
    assert parts.send.rtx_heap == [0] and first.entry is not None and first.entry.nacks == 1
    rtx = parts.core.log.of_kind(ev_kinds.RETRANSMIT)
    assert [r.detail["reason"] for r in rtx] == ["trimmed"]


def test_acknowledgements_wait_for_nothing_once_the_queue_pair_failed() -> None:
    parts = make_parts()
    feedback, host = _feedback(parts)
    post(parts, 1)
    transmit(parts, 0)
    parts.qp.state = QpState.ERROR
    assert feedback.on_sack(_sack(parts, 1), 0, 100) == ()
    feedback.on_nack(_nack(parts, 0, int(NackReason.TRIMMED)), 0, 100)
    assert [c[0] for c in host.calls] == ["ports", "heard", "ports", "heard"]
    assert parts.send.inflight_bytes == MTU and not host.events


def test_a_sequence_nack_goes_back_n() -> None:
    parts = make_parts(mrc=False)
    gbn = GoBackN(
        parts.cfg.roce,
        parts.cfg.port_rate_bps,
        0,
        peer_label=f"{PEER} QPN {PEER_QPN:#x}",
        counters=parts.counters,
        log=parts.log,
    )
    feedback, _ = _feedback(parts, gbn=gbn)
    post(parts, 4)
    for t in range(4):
        transmit(parts, t)
    feedback.on_nack(_nack(parts, 1, int(NackReason.ROD_OOO)), 0, 100)
    assert parts.counters["gobackn_rewinds"] == 1
    assert sorted(parts.send.rtx_heap) == [1, 2, 3]


def test_a_sack_returns_the_probes_of_the_quarantined_paths_due() -> None:
    parts = make_parts(replace(CFG, path_quarantine=True))
    feedback, _ = _feedback(parts)
    post(parts, 2)
    pkt = transmit(parts, 0)
    assert pkt.entry is not None
    path = pkt.entry.path
    assert parts.evs.quarantine(path, 0, 10)
    parts.probes.held[path] = [10, -1]  # its probe is due from 10 ns
    frames = feedback.on_sack(_sack(parts, 0), 0, 20)
    (probe,) = [decode(f) for _, f in frames]
    assert isinstance(probe, Probe) and probe.dqpn == EV_PROBE_QPN
    assert parts.evs.by_ev[probe.probe_ev].path == path


def test_a_sack_bitmap_acknowledges_each_psn_it_names_once() -> None:
    """Each set bit of the 64-bit bitmap names PSN cum + sack_offset + its index (bit 63
    included); a PSN an earlier SACK acknowledged is no news; a bit at or past the next
    PSN ends the walk."""
    parts = make_parts()
    feedback, _ = _feedback(parts)
    post(parts, 80)
    for i in range(80):
        transmit(parts, i)
    send = parts.send
    assert send.next_psn == 80
    feedback.on_sack(_sack(parts, 0, sack_offset=2, bitmap=(1 << 3) | (1 << 10)), 0, 1_000)
    assert sorted(set(range(80)) - set(send.unacked)) == [5, 12]
    assert parts.counters["rx_sack"] == 1
    inflight = send.inflight_bytes
    # PSN 5 again (no news), 12 again, 16 + 63 = 79 (the last sent), bit 0 (16)
    bitmap = (1 << 63) | 1
    feedback.on_sack(_sack(parts, 0, sack_offset=16, bitmap=bitmap), 0, 2_000)
    feedback.on_sack(_sack(parts, 0, sack_offset=1, bitmap=(1 << 4) | (1 << 11)), 0, 2_000)
    assert sorted(set(range(80)) - set(send.unacked)) == [5, 12, 16, 79]
    assert send.inflight_bytes == inflight - 2 * MTU
    # past the next PSN: 17 + 63 = 80 is not sent; the walk stops there
    feedback.on_sack(_sack(parts, 0, sack_offset=17, bitmap=1 << 63), 0, 3_000)
    assert sorted(set(range(80)) - set(send.unacked)) == [5, 12, 16, 79]
    # an advanced cumulative point: the bitmap's base is past snd_una (the shift)
    feedback.on_sack(_sack(parts, 6, sack_offset=30, bitmap=(1 << 40) | 1), 0, 4_000)
    assert send.snd_una == 6
    assert sorted(set(range(6, 80)) - set(send.unacked)) == [12, 16, 36, 76, 79]
    # a late SACK, its cumulative point below snd_una (a negative shift): PSN 5 is old
    # news, 22 and 16 (already acknowledged above) are read at their places
    feedback.on_sack(
        _sack(parts, 2, sack_offset=0, bitmap=(1 << 3) | (1 << 14) | (1 << 20)), 0, 5_000
    )
    assert send.snd_una == 6
    assert sorted(set(range(6, 80)) - set(send.unacked)) == [12, 16, 22, 36, 76, 79]


def test_the_rtt_sample_is_the_echoed_timestamps_age_modulo_2_32() -> None:
    """on_sack's RTT sample, on C integers on the native build when now and the echoed
    timestamp are ints, is ``(now - echoed_ts) & TS_MASK`` (samples past 1 s ignored):
    across the 32-bit wrap, for a timestamp from the future (a huge age: no sample), for
    ``True`` (an int but not exactly one: the Python expression) and for a timestamp
    wider than the field, as the Python expression gives it."""
    cases = [
        (5_000, 4_700),
        (5_000, 5_000),
        ((1 << 32) + 100, TS_MASK - 49),
        ((1 << 40) + 7, ((1 << 40) - 1_000) & TS_MASK),
        (5_000, 5_010),
        (5_000, True),
        (5_000, (1 << 45) + 4_000),
        ((1 << 61) + 3, 1),  # now past the C path's bound: the Python expression
    ]
    for now, ts in cases:
        parts = make_parts()
        feedback, _ = _feedback(parts)
        post(parts, 1)
        transmit(parts, 0)
        feedback.on_sack(_sack(parts, 1, echoed_ts=ts), 0, now)
        age = (now - ts) & TS_MASK
        want = age if age <= 1_000_000_000 else None
        if want is None:
            assert parts.timers.min_rtt_ns == make_parts().timers.min_rtt_ns, (now, ts)
        else:
            assert parts.timers.min_rtt_ns == want, (now, ts)
        assert parts.send.snd_una == 1
