"""Time: the deadlines the host schedules (:meth:`TimerMixin.timer_deadline`) and what
happens when they pass (retransmission timeouts, tail-loss probes, peer silence, no
usable EV). The RTO and the other timeouts are :class:`~nic_emu.connection.rtt.RttTimers`'.
"""

from __future__ import annotations

from nic_emu import event_log as ev_kinds
from nic_emu.connection.common import Outbox, QpState, span
from nic_emu.sender import PSN_MASK


class TimerMixin:
    """Mixed into :class:`~nic_emu.connection.queue_pair.Connection`, whose
    ``__init__`` sets up the state used here."""

    def next_deadline(self) -> int | None:
        """When :meth:`on_timer` must next run (None: nothing pending)."""
        best = self.timer_deadline()
        t = self.pace_at
        if t is not None and (best is None or t < best):
            best = t
        return best

    def timer_deadline(self) -> int | None:
        """:meth:`next_deadline` without the pacing wait (``pace_at``), which the host
        tracks per port (NicCore.next_timer). Sets ``deadline_by_peer``: the peer's
        silence deadline (the one term that state shared with other connections moves)
        is the earliest."""
        if self.state is not QpState.READY:
            return None
        best = self.rx.sack_deadline
        send = self.send
        oldest = send.oldest_sent_ns()
        if oldest is not None:
            t = oldest + self.timers.rto_ns()
            if t < self.timers.hold_until:
                t = self.timers.hold_until
            if best is None or t < best:
                best = t
        t = self.probes.next_ns
        if t is not None and (best is None or t < best):
            best = t
        t = self.rate_wait_ns
        if t is not None and (best is None or t < best):
            best = t
        if self.tlp_armed:
            t = self._tail_probe_deadline()
            if t is not None and (best is None or t < best):
                best = t
        if self.no_ev_since is not None:
            t = self.no_ev_since + self._no_ev_timeout_ns
            if best is None or t < best:
                best = t
        t = self._peer_deadline()
        if t is not None and (best is None or t < best):
            self.deadline_by_peer = True
            return t
        self.deadline_by_peer = False
        return best

    def _peer_deadline(self) -> int | None:
        """When silence from the peer fails this connection: MRC, data outstanding, and at
        least one local port up (probes can ask every path)."""
        if not self.mrc or self.send.idle() or True not in self.nic.port_up:
            return None
        heard = self.nic.peer_heard_ns.get(self.peer, self.quiet_since)
        return max(heard, self.quiet_since) + self.cfg.peer_timeout_ns

    def on_timer(self, now: int, out: Outbox) -> None:
        if self.state is not QpState.READY:
            return
        if self.pace_at is not None and now >= self.pace_at:
            self.pace_at = None  # frames_to_send() sends what the free port allows
        if self.rate_wait_ns is not None and now >= self.rate_wait_ns:
            self.rate_wait_ns = None  # the DCQCN rate lets the next packet go
        self.rx.on_timer(now, out)
        self._check_timeouts(now)
        if self.state is not QpState.READY:
            return
        t = self._tail_probe_deadline()
        if t is not None and now >= t:
            self._send_tail_probe(now, out)
        t = self.probes.next_ns
        if t is not None and now >= t:
            self.probes.tick(now, out)
        t = self._peer_deadline()
        if t is not None and now >= t:
            self.fail("peer_unreachable", self._unreachable_message(now), now)
            return
        if self.no_ev_since is not None and now - self.no_ev_since >= self._no_ev_timeout_ns:
            self.fail(
                "no_usable_ev",
                f"no GOOD or SKIP EV toward {self.peer} for "
                f"{now - self.no_ev_since} ns (all ASSUMED_BAD or DENIED, or every plane down; "
                f"local ports up: {self.nic.port_up}, peer ports up: "
                f"{self.nic.peer_port_up(self.peer)}); {self.path_report()}",
                now,
            )

    def _unreachable_message(self, now: int) -> str:
        heard = self.nic.peer_heard_ns.get(self.peer)
        since = "never heard from" if heard is None else f"last heard {span(now - heard)} ago"
        return (
            f"{self.peer} is unreachable: no acknowledgement and no probe reply for "
            f"{span(now - max(self.quiet_since, heard or 0))} with data outstanding ({since}); "
            f"the peer NIC is down or every path to it is cut; {self.path_report()}"
        )

    def path_report(self) -> str:
        """Each path toward the peer: its EV states and probe answers, and the ports."""
        nic = self.nic
        parts = []
        for path, entries in self.evs.by_path.items():
            states: dict[str, int] = {}
            for e in entries:
                states[e.state.name] = states.get(e.state.name, 0) + 1
            sent = sum(e.probes_sent for e in entries)
            ok = sum(e.probes_ok for e in entries)
            plane, t1 = path if isinstance(path, tuple) else (None, path)
            label = f"plane {plane} via {t1 or 'its T0'}"
            counts = " ".join(f"{n} {k}" for k, n in sorted(states.items()))
            parts.append(f"{label}: {counts}, probes answered {ok}/{sent}")
        peer_up = nic.peer_port_up(self.peer)
        down = [p for p in range(nic.plane_count) if not nic.port_up[p]]
        peer_down = [p for p in range(nic.plane_count) if not peer_up[p]]
        return (
            "paths: "
            + "; ".join(parts)
            + f"; local ports down: {down or 'none'}; peer ports down: {peer_down or 'none'}"
        )

    def _check_timeouts(self, now: int) -> None:
        send = self.send
        while self.state is QpState.READY:
            oldest = send.oldest_sent_ns()
            if oldest is None:
                return
            rto = self.timers.rto_ns()
            if now < max(oldest + rto, self.timers.hold_until):
                return
            gbn = self.gbn
            if gbn is not None:
                failure = gbn.on_timeout(send, now, self.last_ack_ns)
                if failure is not None:
                    self.fail("max_retries", failure, now)
                return
            pkt = send.pop_expired(now - rto)
            if pkt is None:
                return
            silent = self.last_ack_ns <= pkt.sent_ns
            if silent and pkt.entry is not None:
                # Nothing came back at all: the whole path this packet took is suspect
                # (its EVs cross the same links); probes tell when it works again.
                self.evs.retire_path(pkt.entry.path, "timeout", now)
            self._lost(pkt, "timeout", now)
            if silent:
                # Every other packet past its own RTO is lost too: left in flight (one per
                # backoff) they would keep the window full, as each loss shrinks cwnd by
                # what it takes out of flight, and nothing, not even a retransmission,
                # could be sent again (a blackout longer than the RTO became max_retries).
                while self.state is QpState.READY:
                    late = send.pop_expired(now - rto)
                    if late is None:
                        break
                    self._lost(late, "timeout", now)
                self._silent_timeout(now, f"PSN {pkt.psn & PSN_MASK:#x}")
                return

    def _tail_probe_deadline(self) -> int | None:
        """When to send a tail-loss probe: in-flight data, no probe out, and nothing new can
        be sent, because nothing is queued or because the window is full (RFC 8985 section
        7.2: application- or cwnd-limited). A window full of packets lost on a cut path
        would otherwise wait for the retransmission timeout: no later packet is sent whose
        acknowledgement would let RACK see the losses."""
        if not self.mrc or not self.tlp_armed:
            return None
        send = self.send
        inflight = send.inflight_bytes
        if not inflight or send.rtx_heap:
            return None
        if (
            send.pending
            and inflight + self._mtu <= self.cc.cwnd
            and send.next_psn - send.snd_una < self._window
        ):
            return None  # new data can go: its acknowledgements drive RACK
        return self.tx.last_tx_ns + self.timers.tail_probe_timeout()

    def _send_tail_probe(self, now: int, out: Outbox) -> None:
        """A reliability probe (opcode 0xDE to the peer QP): its SACK reply shows which of
        the last packets never arrived, without waiting for the retransmission timeout."""
        self.tlp_armed = False
        entry = self.evs.pick(now)
        if entry is None:
            return  # no path at all: the retransmission timeout takes over
        self.tlp_sent_ns = now
        self.probes.send_tail_probe(entry, self.send.snd_una, now, out)

    def _silent_timeout(self, now: int, what: str) -> None:
        """A timeout with no acknowledgement since the packet left: back off, maybe fail."""
        timers = self.timers
        timers.backoff += 1
        self.counters["rto_silent"] += 1
        self.log.record(now, ev_kinds.RTO, backoff=timers.backoff, blamed=what)
        limit = self.cfg.max_retries
        if timers.backoff > limit:
            self.fail(
                "max_retries",
                f"no acknowledgement from {self.peer} QPN {self.peer_qpn:#x} after "
                f"{limit} retries (last ack {now - self.last_ack_ns} ns ago)",
                now,
            )
            return
        timers.hold_until = now + timers.rto_ns()
