"""Receiver bitmap, message tracking, sender loss detection and PSN unwrapping."""

from __future__ import annotations

import random

import pytest

from nic_emu.receiver import (
    DUPLICATE,
    NEW_IN_ORDER,
    NEW_OUT_OF_ORDER,
    OUT_OF_WINDOW,
    GoBackNReceiveState,
    MessageTracker,
    ReceiveState,
)
from nic_emu.sender import ACKED, LOST, PSN_MOD, BufferPayload, SendState, WriteRequest, unwrap


def test_unwrap_near_reference_across_the_24_bit_boundary() -> None:
    assert unwrap(5, PSN_MOD - 3) == PSN_MOD + 5
    assert unwrap(PSN_MOD - 2, PSN_MOD + 1) == PSN_MOD - 2
    assert unwrap(1000, 990) == 1000


def test_receive_state_in_any_order_and_duplicates() -> None:
    rs = ReceiveState(100, 1024)
    order = list(range(100, 400))
    random.Random(3).shuffle(order)
    results = [rs.accept(p) for p in order]
    assert rs.rcv_nxt == 400 and rs.ooo == 0
    assert results.count(NEW_IN_ORDER) + results.count(NEW_OUT_OF_ORDER) == 300
    assert rs.accept(150) == DUPLICATE
    assert rs.accept(400 + 1024) == OUT_OF_WINDOW
    assert rs.accept(405) == NEW_OUT_OF_ORDER and rs.accept(405) == DUPLICATE


@pytest.mark.parametrize("seed", range(20))
def test_receive_state_follows_the_arrivals_it_was_given(seed: int) -> None:
    """In order (the point moves by one), after a gap that fills (it jumps over every PSN
    that arrived beyond), duplicates, out of window: each result, ``rcv_nxt`` and the
    bitmap are what the set of arrivals says, window beyond 64 PSNs included."""
    rng = random.Random(seed)
    window = rng.choice([128, 1024])
    rs = ReceiveState(7, window)
    seen: set[int] = set()
    point = 7
    for _ in range(2000):
        psn = point + rng.choice([0, 0, 0, 1, 2, 5, 63, 64, 65, 130, window - 1, window, -1])
        if psn < point or psn in seen:
            want = DUPLICATE
        elif psn - point >= window:
            want = OUT_OF_WINDOW
        elif psn == point:
            want = NEW_IN_ORDER
            seen.add(psn)
            while point in seen:
                point += 1
        else:
            want = NEW_OUT_OF_ORDER
            seen.add(psn)
        assert rs.accept(psn) == want
        assert rs.rcv_nxt == point
        assert rs.ooo == sum(1 << (p - point) for p in seen if p > point)


def test_sack_view_covers_the_trigger() -> None:
    rs = ReceiveState(0, 1024)
    for p in (2, 3, 70, 200):
        rs.accept(p)
    base, bits = rs.sack_view(3)
    assert base == 0 and bits == 0b1100
    base, bits = rs.sack_view(200)
    assert base == 200 - 63 and bits == 1 << 63


def test_message_tracker_completes_in_psn_order() -> None:
    mt = MessageTracker(0)
    for psn in range(3):
        mt.note(psn, 0x1000 + 4096 * psn)
    mt.note_last(2, 7, 0x1000 + 10000)
    mt.note(3, 0x9000)
    mt.note_last(3, 7, 0x9000 + 5)
    assert mt.completed(2) == []
    assert mt.completed(4) == [(0, 2, 7, 0x1000, 10000), (3, 3, 7, 0x9000, 5)]


def test_message_tracker_prunes_vas_that_cannot_start_a_message() -> None:
    mt = MessageTracker(10)
    for psn in range(10, 200):
        mt.note(psn, 0x1000 + (psn - 10) * 100)
    mt.prune(150)  # 10 starts the open message; 150.. are beyond the cumulative point
    assert sorted(mt.va_by_psn) == [10, *range(150, 200)]
    mt.note_last(199, 7, 0x1000 + 190 * 100)
    assert mt.completed(200) == [(10, 199, 7, 0x1000, 19000)]
    assert not mt.va_by_psn


def test_go_back_n_receiver_accepts_only_next() -> None:
    rs = GoBackNReceiveState(0, 64)
    assert rs.accept(1) == NEW_OUT_OF_ORDER and rs.rcv_nxt == 0
    assert rs.accept(0) == NEW_IN_ORDER and rs.accept(0) == DUPLICATE


CREDIBLE = 1 << 62  # ack()'s ambiguous_after: every retransmission may be the one acked


def _sender(npkts: int = 10, mtu: int = 100) -> tuple[SendState, WriteRequest]:
    ss = SendState(0, mtu, 1024)
    data = memoryview(bytes(range(256)) * 4)[: npkts * mtu - 50]
    wr = WriteRequest(1, BufferPayload(data), len(data), 0x1000, 5, npkts, 0)
    ss.post(wr)
    return ss, wr


def test_segmentation_and_completion() -> None:
    ss, wr = _sender()
    pkts = []
    while (p := ss.next_packet()) is not None:
        ss.sent(p, None, 0)
        pkts.append(p)
    assert [p.length for p in pkts] == [100] * 9 + [50]
    assert pkts[0].first and pkts[-1].last and wr.last_psn == 9
    assert ss.inflight_bytes == 950
    for p in reversed(pkts):
        ss.ack(p.psn, CREDIBLE)
    assert ss.advance_una(0) and ss.snd_una == 10
    assert ss.completed_writes() == [wr] and ss.inflight_bytes == 0


def test_rack_style_loss_needs_both_count_and_time() -> None:
    ss, _ = _sender(npkts=40, mtu=10)
    pkts = []
    for t in range(40):
        p = ss.next_packet()
        ss.sent(p, None, t * 100)
        pkts.append(p)
    for p in pkts[1:20]:
        ss.ack(p.psn, CREDIBLE)
    # 19 later sends acked, but the latest left only 1900 ns after PSN 0
    assert ss.detect_losses(16, 5000) == []
    for p in pkts[20:]:
        ss.ack(p.psn, CREDIBLE)
    lost = ss.detect_losses(16, 3000)
    assert [p.psn for p in lost] == [0] and lost[0].state == LOST
    assert ss.next_packet() is lost[0]
    ss.sent(lost[0], None, 5000)
    assert ss.detect_losses(16, 3000) == []  # the retransmission is not blamed on old acks
    ss.ack(0, CREDIBLE)
    assert lost[0].state == ACKED and ss.advance_una(0) and ss.snd_una == 40


def test_timeout_pops_oldest_and_rewind_resends_everything() -> None:
    ss, _ = _sender(npkts=5, mtu=10)
    for t in range(5):
        ss.sent(ss.next_packet(), None, t)
    assert ss.oldest_sent_ns() == 0
    assert ss.pop_expired(-1) is None
    first = ss.pop_expired(0)
    assert first is not None and first.psn == 0
    assert ss.rewind(2) == 3
    assert [ss.next_packet().psn for _ in range(4)] == [0, 2, 3, 4]


def test_sacked_bits_are_the_selectively_acknowledged_psns_above_snd_una() -> None:
    rng = random.Random(11)
    ss, _ = _sender(npkts=300, mtu=10)
    for t in range(300):
        ss.sent(ss.next_packet(), None, t)
    for _ in range(200):
        if rng.random() < 0.8:
            ss.ack(rng.randrange(ss.snd_una, ss.next_psn), CREDIBLE)
        else:
            cum = min(ss.next_psn, ss.snd_una + rng.randrange(4))
            ss.ack_below(cum, CREDIBLE)
            ss.advance_una(cum)
        for psn in range(ss.snd_una, ss.next_psn):
            assert bool(ss.sacked >> (psn - ss.snd_una) & 1) == (psn not in ss.unacked), psn
    assert ss.sacked >> (ss.next_psn - ss.snd_una) == 0


def _spurious_retransmission(npkts: int = 60) -> tuple[SendState, list]:
    """60 packets sent 100 ns apart; 1..29 acknowledged, so PSN 0 is declared lost and
    resent at 6000 ns, while 30..59 are still in flight."""
    ss, _ = _sender(npkts=npkts, mtu=10)
    pkts = []
    for t in range(npkts):
        p = ss.next_packet()
        ss.sent(p, None, t * 100)
        pkts.append(p)
    for p in pkts[1:30]:
        ss.ack(p.psn, CREDIBLE)
    assert [p.psn for p in ss.detect_losses(16, 1000)] == [0]
    ss.sent(ss.next_packet(), None, 6000)
    return ss, pkts


def test_an_ack_too_soon_after_a_retransmission_is_the_originals_and_dates_nothing() -> None:
    # The original PSN 0 arrives late and is acknowledged at 6100 ns, 100 ns after the
    # retransmission left; with a minimum RTT of 1000 ns that ACK cannot be the
    # retransmission's (RFC 8985 6.2 step 2). Taking the retransmission's send time
    # would declare 30..44 lost, overtaken by a packet that was not sent after them.
    ss, pkts = _spurious_retransmission()
    assert ss.ack(0, 6100 - 1000) is pkts[0] and pkts[0].state == ACKED
    assert ss.detect_losses(16, 1000) == []
    assert ss.acked_max_sent_ns == 2900


def test_an_ack_a_min_rtt_after_the_retransmission_may_be_its_own() -> None:
    ss, _ = _spurious_retransmission()
    ss.ack(0, 7100 - 1000)
    assert ss.acked_max_sent_ns == 6000
    assert [p.psn for p in ss.detect_losses(16, 1000)] == list(range(30, 45))


def test_a_cumulative_ack_follows_the_same_rule() -> None:
    ss, _ = _spurious_retransmission()
    ss.ack_below(30, 6100 - 1000)
    assert ss.detect_losses(16, 1000) == [] and ss.acked_max_sent_ns == 2900
    ss, _ = _spurious_retransmission()
    ss.ack_below(30, 7100 - 1000)
    assert [p.psn for p in ss.detect_losses(16, 1000)] == list(range(30, 45))


@pytest.mark.parametrize("seed", range(8))
def test_front_lost_answers_whether_detect_losses_finds_one(seed: int) -> None:
    """front_lost, given detect_losses' limits, says whether it finds a loss (the native
    build's feedback asks it first, on C integers, and makes the list only then)."""
    rng = random.Random(seed)
    ss, _ = _sender(npkts=300, mtu=10)
    t = 0
    sent = []
    for _ in range(600):
        t += rng.choice((10, 100, 1_000))
        roll = rng.random()
        if roll < 0.5:
            p = ss.next_packet()
            if p is not None:
                ss.sent(p, None, t)
                sent.append(p)
        elif roll < 0.8 and sent:
            ss.ack(rng.choice(sent).psn, CREDIBLE)
        threshold = rng.choice((0, 1, 3, 16))
        window = rng.choice((0, 100, 1_000, 5_000))
        due = ss.front_lost(ss.acked_max_tx_seq - threshold, ss.acked_max_sent_ns - window)
        lost = ss.detect_losses(threshold, window)
        assert due == bool(lost)
        for _ in lost:  # resent at once, oldest PSN first
            p = ss.next_packet()
            assert p in lost
            ss.sent(p, None, t)


def test_write_done_says_whether_completed_writes_has_any() -> None:
    """Feedback asks write_done first (most acknowledgements complete no WRITE, and then
    no list is made): it is true exactly when completed_writes returns some."""
    ss, wr = _sender(npkts=3)
    assert not ss.write_done() and ss.completed_writes() == []
    pkts = []
    while (p := ss.next_packet()) is not None:
        ss.sent(p, None, 0)
        pkts.append(p)
    for p in pkts[1:]:
        ss.ack(p.psn, CREDIBLE)
        assert not ss.write_done()
    ss.ack(pkts[0].psn, CREDIBLE)
    assert ss.write_done() and ss.completed_writes() == [wr]
    assert not ss.write_done() and ss.completed_writes() == []
