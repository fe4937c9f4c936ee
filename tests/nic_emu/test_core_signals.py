"""Each signal's reaction, driven frame by frame through two sans-IO cores."""

from __future__ import annotations

from itertools import pairwise

import pytest

from mrc_wire import DataPacket, NackReason, Probe, Sack, mark_ce, trim_frame
from nic_emu.connection.host import ConnectionFailed, WriteReceived
from nic_emu.ev_set import ASSUMED_BAD, DENIED, GOOD, SKIP
from nic_emu.event_log import EV_STATE, LOSS, NACK_TX, PROBE_OK, RTO
from nic_emu.exceptions import ConnectionFailedError

from .harness import QPN_A, QPN_B, Pair, data_psns, decoded

MTU = 4096


def _by_psn(frames: list[tuple[int, bytes]]) -> dict[int, tuple[int, bytes]]:
    return {m.psn: fr for m, fr in zip(decoded(frames), frames) if isinstance(m, DataPacket)}


@pytest.mark.parametrize(
    ("last_hop", "reason"),
    [(False, NackReason.TRIMMED), (True, NackReason.TRIMMED_LASTHOP)],
)
def test_trim_nack_retransmits_at_once_and_leaves_the_ev_alone(
    last_hop: bool, reason: NackReason
) -> None:
    pair = Pair()
    pair.write(bytes(4 * MTU))
    plane, frame = _by_psn(pair.a.frames_to_send(0))[1]
    ev = decoded([(plane, frame)])[0].ev
    pair.b.receive_frame(trim_frame(frame, last_hop=last_hop), plane, 1000)
    nack_frames = pair.b.frames_to_send(1000)
    (nack,) = decoded(nack_frames)
    assert nack.reason == reason and nack.nack_psn == 1 and nack.echoed_ev == ev
    assert pair.cb.counters["bytes_placed"] == 0  # a trimmed header places nothing
    cwnd = pair.ca.cc.cwnd
    pair.deliver(pair.a, nack_frames, 2000)
    again = decoded(pair.a.frames_to_send(2000))
    assert [(m.psn, m.rtx) for m in again] == [(1, True)]
    entry = pair.ca.evs.by_ev[ev]
    assert entry.state is GOOD and entry.nacks == 1
    assert pair.ca.cc.cwnd == cwnd - MTU
    assert not pair.kinds(LOSS)


def test_receiver_nacks_trimmed_packets_with_the_right_reason() -> None:
    pair = Pair()
    pair.write(bytes(2 * MTU))
    frames = pair.a.frames_to_send(0)
    for last_hop in (False, True):
        plane, frame = frames[int(last_hop)]
        pair.b.receive_frame(trim_frame(frame, last_hop=last_hop), plane, 10)
    nacks = decoded(pair.b.frames_to_send(10))
    assert [n.reason for n in nacks] == [NackReason.TRIMMED, NackReason.TRIMMED_LASTHOP]
    assert [r.detail["reason"] for r in pair.kinds(NACK_TX)] == ["TRIMMED", "TRIMMED_LASTHOP"]


def test_trimmed_copy_of_a_received_packet_gets_a_sack_not_a_nack() -> None:
    pair = Pair()
    pair.write(bytes(MTU))
    ((plane, frame),) = pair.a.frames_to_send(0)
    pair.b.receive_frame(frame, plane, 5)
    pair.b.frames_to_send(5)
    pair.b.receive_frame(trim_frame(frame), plane, 6)
    assert [type(m) for m in decoded(pair.b.frames_to_send(6))] == [Sack]


def test_ecn_echo_puts_the_ev_in_skip_for_a_while() -> None:
    pair = Pair(ev_skip_ns=50_000)
    pair.write(bytes(2 * MTU))
    plane, frame = pair.a.frames_to_send(0)[0]
    ev = decoded([(plane, frame)])[0].ev
    pair.b.receive_frame(mark_ce(frame), plane, 5000)
    sack_frames = pair.b.frames_to_send(5000)
    (sack,) = decoded(sack_frames)
    assert sack.ecn_echo and sack.echoed_ev == ev
    pair.deliver(pair.a, sack_frames, 6000)
    entry = pair.ca.evs.by_ev[ev]
    assert entry.state is SKIP and entry.skip_until == 56_000 and entry.ecn_marks == 1
    pair.write(bytes(40 * MTU), now=7000)
    assert ev not in {m.ev for m in decoded(pair.a.frames_to_send(7000))}
    for _ in range(len(pair.ca.evs.ring)):
        pair.ca.evs.pick(60_000)
    assert entry.state is GOOD
    assert [r.detail["reason"] for r in pair.kinds(EV_STATE) if r.ev == ev] == [
        "ecn",
        "skip_expired",
    ]


def test_sack_gap_loss_marks_ev_bad_at_once_and_replaces_it_from_the_same_plane() -> None:
    pair = Pair()
    pair.write(bytes(MTU))  # PSN 0 leaves at t=0 and is lost
    ((lost_plane, lost_frame),) = pair.a.frames_to_send(0)
    lost_ev = decoded([(lost_plane, lost_frame)])[0].ev
    pair.write(bytes(40 * MTU), now=20_000, offset=MTU)  # later sends, 20 us later
    pair.deliver(pair.b, pair.a.frames_to_send(20_000), 30_000)
    pair.deliver(pair.a, pair.b.frames_to_send(30_000), 40_000)
    entry = pair.ca.evs.by_ev[lost_ev]
    assert entry.state is ASSUMED_BAD and not entry.active and entry.losses == 1
    (loss,) = pair.kinds(LOSS)
    assert loss.psn == 0 and loss.detail == {"sent_ns": 0, "reason": "reorder"}
    (change,) = [r for r in pair.kinds(EV_STATE) if r.ev == lost_ev]
    assert change.detail["new"] == "ASSUMED_BAD" and change.t_ns == 40_000
    # A backup of the same plane took its slot in the rotation.
    plane_evs = [e for e in pair.ca.evs.ring if e.plane == lost_plane]
    assert len(plane_evs) == 2 and all(e.state is GOOD for e in plane_evs)
    (rtx,) = decoded(pair.a.frames_to_send(40_000))
    assert rtx.psn == 0 and rtx.rtx and rtx.ev != lost_ev


def test_selective_retransmit_resends_only_the_gaps_oldest_first() -> None:
    pair = Pair()
    pair.write(bytes(20 * MTU))
    first = _by_psn(pair.a.frames_to_send(0))
    pair.write(bytes(30 * MTU), now=20_000, offset=20 * MTU)
    second = pair.a.frames_to_send(20_000)
    kept = [fr for psn, fr in first.items() if psn not in (5, 2)] + second
    pair.deliver(pair.b, kept, 30_000)
    pair.deliver(pair.a, pair.b.frames_to_send(30_000), 40_000)
    assert data_psns(pair.a.frames_to_send(40_000)) == [2, 5]
    assert pair.ca.counters["tx_rtx"] == 2


def test_duplicates_are_never_placed_twice_and_get_an_immediate_sack() -> None:
    pair = Pair()
    pair.write(b"x" * 100)
    (frame,) = pair.a.frames_to_send(0)
    pair.deliver(pair.b, [frame, frame, frame], 10)
    assert pair.cb.counters["bytes_placed"] == 100 and pair.cb.counters["rx_dup"] == 2
    received = [e for e in pair.b.events() if isinstance(e, WriteReceived)]
    assert [e.length for e in received] == [100]
    sacks = decoded(pair.b.frames_to_send(10))
    assert len(sacks) == 3 and all(isinstance(s, Sack) and s.cum_psn == 1 for s in sacks)


def test_timeout_marks_the_ev_bad_retransmits_elsewhere_and_backs_off_then_fails() -> None:
    pair = Pair(max_retries=3)
    pair.write(bytes(100))
    (frame,) = pair.a.frames_to_send(0)
    ev = decoded([frame])[0].ev
    rto = pair.ca.timers.rto_ns()
    tail_probe = pair.a.next_timer()  # a tail-loss probe comes first, then the timeout
    assert tail_probe < rto
    pair.a.handle_timer(tail_probe)
    (probe,) = decoded(pair.a.frames_to_send(tail_probe))
    assert isinstance(probe, Probe) and probe.dqpn == QPN_B and not probe.reply
    assert pair.a.next_timer() == rto == 65_536
    pair.a.handle_timer(rto)
    (again,) = decoded(pair.a.frames_to_send(rto))
    assert again.psn == 0 and again.rtx and again.ev != ev
    assert pair.ca.evs.by_ev[ev].state is ASSUMED_BAD
    # Nobody ever answers: linear then exponential backoff, then a clear failure.
    for _ in range(500):
        t = pair.a.next_timer()
        if t is None:
            break
        pair.a.handle_timer(t)
        pair.a.frames_to_send(t)
    rto_times = [r.t_ns for r in pair.kinds(RTO)]
    gaps = [b - a for a, b in pairwise(rto_times)]
    assert gaps == [2 * rto, 3 * rto, 6 * rto]  # rto_linear_retries=2, then doubling
    (failure,) = [e for e in pair.a.events() if isinstance(e, ConnectionFailed)]
    assert failure.reason == "max_retries" and failure.pending_wr_ids == (1,)
    assert "no acknowledgement from nic2" in failure.message
    with pytest.raises(ConnectionFailedError, match="max_retries"):
        pair.write(b"more")


def test_tail_loss_probe_finds_a_lost_last_packet_before_the_timeout() -> None:
    pair = Pair()
    pair.write(bytes(3 * MTU))
    frames = pair.a.frames_to_send(0)
    by_psn = _by_psn(frames)
    pair.deliver(pair.b, [by_psn[0], by_psn[1]], 10_000)
    pair.deliver(pair.a, pair.b.frames_to_send(10_000), 20_000)
    t = pair.a.next_timer()
    assert t < pair.ca.timers.rto_ns()
    pair.a.handle_timer(t)
    probe_frames = pair.a.frames_to_send(t)
    pair.deliver(pair.b, probe_frames, t + 5_000)
    (reply,) = decoded(reply_frames := pair.b.frames_to_send(t + 5_000))
    assert isinstance(reply, Sack) and reply.probe_reply and reply.cum_psn == 2
    pair.deliver(pair.a, reply_frames, t + 10_000)
    (loss,) = pair.kinds(LOSS)
    assert loss.psn == 2 and loss.detail["reason"] == "tail_probe"
    assert data_psns(pair.a.frames_to_send(t + 10_000)) == [2]


def test_probes_revive_a_path_after_consecutive_successes() -> None:
    pair = Pair(probe_interval_ns=12_000, probe_success_threshold=3, probes_per_path=1)
    pair.write(bytes(100))
    (frame,) = pair.a.frames_to_send(0)
    ev = decoded([frame])[0].ev
    now = pair.ca.timers.rto_ns()
    pair.a.handle_timer(now)
    entry = pair.ca.evs.by_ev[ev]
    assert entry.state is ASSUMED_BAD
    pair.deliver(pair.b, pair.a.frames_to_send(now), now + 1)
    pair.deliver(pair.a, pair.b.frames_to_send(now + 1), now + 2)
    assert pair.ca.idle
    delivered = 0
    dropped_one = False
    while entry.state is ASSUMED_BAD:
        now = pair.a.next_timer()
        pair.a.handle_timer(now)
        probes = pair.a.frames_to_send(now)
        assert all(isinstance(m, Probe) and m.dqpn == 2 for m in decoded(probes))
        # A silent timeout retired the packet's whole path: one of its EVs is probed.
        (probed,) = [pair.ca.evs.by_ev[m.probe_ev] for m in decoded(probes)]
        assert probed.path == entry.path
        if delivered == 1 and not dropped_one:
            dropped_one = True  # this probe is lost: the success count starts over
            continue
        pair.deliver(pair.b, probes, now + 1)
        replies = pair.b.frames_to_send(now + 1)
        assert all(m.reply for m in decoded(replies))
        pair.deliver(pair.a, replies, now + 2)
        delivered += 1
    assert delivered == 4
    assert [r.detail["successes"] for r in pair.kinds(PROBE_OK)] == [1, 1, 2, 3]
    assert all(e.state is GOOD for e in pair.ca.evs.by_path[entry.path])


def test_port_down_retires_the_plane_locally_and_the_peer_learns_it_from_sacks() -> None:
    pair = Pair()
    pair.b.set_port_state(1, False, 0)
    assert {r.detail["reason"] for r in pair.kinds(EV_STATE) if r.nic == "nic2"} == {
        "local_port_down"
    }
    pair.write(bytes(8 * MTU))
    frames = pair.a.frames_to_send(0)
    on_plane_1 = {psn for psn, (p, _) in _by_psn(frames).items() if p == 1}
    assert on_plane_1
    pair.deliver(pair.b, frames, 10)  # the frames on plane 1 die at the down port
    assert pair.b.counters["rx_port_down"] == len(on_plane_1)
    sack_frames = pair.b.frames_to_send(10)
    assert sack_frames and all(p != 1 for p, _ in sack_frames)
    assert all(s.port_status & 0b10 == 0 for s in decoded(sack_frames))
    pair.deliver(pair.a, sack_frames, 20)
    assert all(e.state is ASSUMED_BAD for e in pair.ca.evs.entries() if e.plane == 1)
    assert {r.detail["reason"] for r in pair.kinds(EV_STATE) if r.nic == "nic0"} == {
        "remote_port_down"
    }
    resent = _by_psn(pair.a.frames_to_send(20))
    assert set(resent) == on_plane_1 and all(p != 1 for p, _ in resent.values())
    # The port comes back: the next SACK says so and probes start on plane 1.
    pair.b.set_port_state(1, True, 30)
    pair.deliver(pair.b, list(resent.values()), 40)
    pair.deliver(pair.a, pair.b.frames_to_send(40), 50)
    assert pair.ca.idle and pair.ca.probes.next_ns is not None
    assert all(e.plane == 1 for e in pair.ca.evs.probe_candidates())


def test_deny_is_management_only() -> None:
    pair = Pair()
    target = pair.ca.evs.ring[0].ev
    pair.a.deny_ev(QPN_A, target, 0)
    pair.write(bytes(40 * MTU))
    assert target not in {m.ev for m in decoded(pair.a.frames_to_send(0))}
    assert pair.ca.evs.by_ev[target].state is DENIED
    assert target not in {e.ev for e in pair.ca.evs.probe_candidates()}
    pair.a.allow_ev(QPN_A, target, 1)
    assert pair.ca.evs.by_ev[target].state is GOOD


def test_sender_never_exceeds_the_receive_window() -> None:
    pair = Pair(receive_window_psns=128)
    pair.write(bytes(300 * MTU))
    assert len(pair.a.frames_to_send(0)) == 128
    assert pair.a.frames_to_send(1) == []


def test_receiver_drops_packets_beyond_its_window() -> None:
    pair = Pair(receive_window_psns=128)
    pair.write(bytes(129 * MTU))
    frames = pair.a.frames_to_send(0)
    late = _by_psn(frames)[127]
    pair.deliver(pair.b, [late], 5)
    assert pair.cb.counters["rx_out_of_order"] == 1
    pair.b.frames_to_send(5)
    pair.cb.rx.recv.window = 64  # a peer that ignores our window: PSN 127 is now too far
    other = _by_psn(frames)[100]
    pair.deliver(pair.b, [other], 6)
    assert pair.cb.counters["rx_out_of_window"] == 1 and pair.b.frames_to_send(6) == []


def test_sacks_leave_a_plane_that_stopped_delivering_while_others_go_on() -> None:
    """Issue 17: a plane (or path) the peer was heard on 60 us ago, while the other planes
    deliver now, is skipped by the reverse path at once (reverse_refresh_ns, 50 us), not
    after reverse_plane_stale_ns (200 us)."""
    pair = Pair()
    pair.write(bytes(64 * 4096))
    frames = pair.a.frames_to_send(0)
    on0 = [f for f in frames if f[0] == 0]
    others = [f for f in frames if f[0] != 0]
    assert on0 and others
    pair.deliver(pair.b, on0, 1)
    early = pair.b.frames_to_send(1)
    assert {plane for plane, _ in early} == {0}  # only plane 0 was heard so far
    pair.deliver(pair.b, others, 60_000)
    sacks = pair.b.frames_to_send(60_000)
    assert sacks and all(isinstance(m, Sack) for m in decoded(sacks))
    assert 0 not in {plane for plane, _ in sacks}
    assert len({plane for plane, _ in sacks}) == 3  # still spread over the live planes


def test_tail_loss_probe_also_fires_when_the_window_is_full_of_lost_packets() -> None:
    """RFC 8985 section 7.2: a cwnd-limited sender probes too. A window whose packets were
    all lost on a cut path sends nothing more, so no acknowledgement lets RACK see the
    losses: without the probe only the retransmission timeout would."""
    pair = Pair(port_rate_bps=25_000_000_000)  # a real window (1.5 BDP: 55 packets), paced
    pair.write(bytes(200 * MTU))
    send = pair.ca.send
    now, sent = 0, 0
    for _ in range(10_000):  # the ports pace: send until the window is full
        if send.inflight_bytes + MTU > pair.ca.cc.cwnd:
            break
        sent += len(data_psns(pair.a.frames_to_send(now)))  # every frame is lost
        now = pair.a.next_timer()
    assert send.pending and sent * MTU >= pair.ca.cc.cwnd - MTU  # cwnd-limited, data queued
    t = pair.a.next_timer()
    assert t < send.oldest_sent_ns() + pair.ca.timers.rto_ns()
    pair.a.handle_timer(t)
    probes = [m for m in decoded(pair.a.frames_to_send(t)) if isinstance(m, Probe)]
    assert len(probes) == 1 and probes[0].psn == send.snd_una
    assert pair.ca.counters["tx_tail_probe"] == 1
    assert not pair.kinds(RTO)


def test_has_events_says_whether_events_has_something_to_hand() -> None:
    pair = Pair()
    assert not pair.b.has_events() and pair.b.events() == []
    pair.write(b"x" * 100)
    pair.deliver(pair.b, pair.a.frames_to_send(0), 10)
    assert pair.b.has_events()
    assert [e.length for e in pair.b.events() if isinstance(e, WriteReceived)] == [100]
    assert not pair.b.has_events() and pair.b.events() == []
