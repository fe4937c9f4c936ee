"""Time (:class:`Deadlines`): the deadline the host schedules for a connection
(:meth:`Deadlines.timer_deadline`) and what happens when it passes (retransmission
timeouts, tail-loss probes, EV probes, the delayed SACK, peer silence, no usable EV).
The RTO and the other timeouts are :class:`~nic_emu.connection.rtt.RttTimers`'.
"""

from __future__ import annotations

from typing import Protocol

import cython

from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.connection.common import READY, Frame, Outbox, QpStatus, span
from nic_emu.connection.feedback import Losses, TailProbe
from nic_emu.connection.gobackn import GoBackN
from nic_emu.connection.probes import PathProbes
from nic_emu.connection.receive import Receiver
from nic_emu.connection.records import ConnectionLog
from nic_emu.connection.rtt import RttTimers
from nic_emu.connection.transmit import Transmitter
from nic_emu.ev_set import EvSet
from nic_emu.sender import PSN_MASK, SendState

if cython.compiled:  # a deadline term read as a C integer (timers.pxd)
    from cython.cimports.nic_emu.connection.timers import nic_time_ll

# Deadlines on C integers (timer_deadline on the native build, exact_deadline): a term
# that is an int of magnitude below 2**60 (a time in ns: 36 years) is exact in a C long
# long, and so is the sum of two; any other (a float: a configured timeout may be one)
# makes exact_deadline answer INEXACT, and timer_deadline takes its general path.
# NO_DEADLINE stands for None (no deadline): above every time, so "t < best" reads as
# "best is None or t < best".
TIME_LIMIT = 1 << 60
NO_DEADLINE = (1 << 63) - 1
INEXACT = -NO_DEADLINE - 1
# their C values on the native build (timers.pxd)
_TIME_LIMIT = TIME_LIMIT
_NO_DEADLINE = NO_DEADLINE
_INEXACT = INEXACT


def time_key(value: object) -> int:
    """A deadline term as a C integer: itself (an int of magnitude below 2**60),
    ``NO_DEADLINE`` (None) or ``INEXACT`` (anything else)."""
    if cython.compiled:
        return nic_time_ll(value)
    if value is None:
        return _NO_DEADLINE
    if type(value) is int and -_TIME_LIMIT < value < _TIME_LIMIT:
        return value
    return _INEXACT


def _any_port_up(ports: list[bool]) -> bool:
    """``True in ports``; on the native build, an identity test of each first (the ports
    hold True and False: no comparison through Python)."""
    if cython.compiled:
        for up in ports:
            if up is True:
                return True
    return True in ports


class DeadlineHost(Protocol):
    """What the deadlines ask of the NIC: which ports are up (ours and the peer's), and
    when each peer was last heard from (its silence fails the connection)."""

    plane_count: int
    port_up: list[bool]
    peer_heard_ns: dict[str, int]

    def peer_port_up(self, peer: str) -> list[bool]: ...


class AckSchedule(Protocol):
    """What the deadlines ask of the receive side
    (:class:`~nic_emu.connection.receive.Receiver`): when a delayed SACK is owed, and
    the SACK then."""

    sack_deadline: int | None

    def on_timer(self, now: int) -> Frame | None: ...


class SendWaits(Protocol):
    """What the deadlines ask of the send turn
    (:class:`~nic_emu.connection.transmit.Transmitter`): what it waits for, and ending
    the waits that are over."""

    pace_at: int | None
    rate_wait_ns: int | None
    no_ev_since: int | None

    def on_timer(self, now: int) -> None: ...


class Deadlines:
    """The timers of one connection: the peer's silence (``quiet_since``: data
    outstanding and nothing heard from the peer since), how long it may go without a
    usable EV (``no_ev_timeout_ns``), and whether its deadline is the peer's silence
    (``by_peer``, :meth:`timer_deadline`)."""

    def __init__(
        self,
        host: DeadlineHost,
        qp: QpStatus,
        cfg: NicConfig,
        send: SendState,
        evs: EvSet,
        timers: RttTimers,
        acks: AckSchedule,
        waits: SendWaits,
        probes: PathProbes,
        tail: TailProbe,
        losses: Losses,
        *,
        peer: str,
        peer_qpn: int,
        mrc: bool,
        gbn: GoBackN | None,
        counters: dict[str, int],
        log: ConnectionLog,
        now: int,
    ) -> None:
        self.host = host
        self.qp = qp
        self.send = send
        self.evs = evs
        self.timers = timers
        self.acks = acks
        self.waits = waits
        self.probes = probes
        self.tail = tail
        self.losses = losses
        self.peer = peer
        self.peer_qpn = peer_qpn
        self.mrc = mrc
        self.gbn = gbn
        self.counters = counters
        self.log = log
        self.peer_timeout_ns = cfg.peer_timeout_ns
        self.max_retries = cfg.max_retries
        self.quiet_since = now  # data outstanding and nothing heard from the peer since
        # How long the connection may go without a usable EV (probing all along) before it
        # fails; a driver may set it per connection (the process: the transfer deadline).
        self.no_ev_timeout_ns = cfg.no_usable_ev_timeout_ns
        self.by_peer = False  # the peer's silence set the last timer_deadline()

    def next_deadline(self) -> int | None:
        """When :meth:`on_timer` must next run (None: nothing pending)."""
        best = self.timer_deadline()
        t = self.waits.pace_at
        if t is not None and (best is None or t < best):
            best = t
        return best

    def timer_deadline(self) -> int | None:
        """:meth:`next_deadline` without the pacing wait (``pace_at``), which the host
        tracks per port (NicCore.next_timer). Sets ``by_peer``: the peer's silence
        deadline (the one term that state shared with other connections moves) is the
        earliest."""
        if self.qp.state is not READY:
            return None
        if cython.compiled:  # C integers, unless a term is not an int (exact_deadline)
            exact = self.exact_deadline()
            if exact != _INEXACT:
                return None if exact == _NO_DEADLINE else exact
        # A connection's own receive side and send turn are read as C fields on the
        # native build; a test's double (the protocols above) by attribute.
        acks = self.acks
        if type(acks) is Receiver:
            best = cython.cast(Receiver, acks).sack_deadline
        else:
            best = acks.sack_deadline
        waits = self.waits
        if type(waits) is Transmitter:
            rate_wait = cython.cast(Transmitter, waits).rate_wait_ns
            no_ev_since = cython.cast(Transmitter, waits).no_ev_since
        else:
            rate_wait = waits.rate_wait_ns
            no_ev_since = waits.no_ev_since
        send = self.send
        oldest = send.oldest_sent_ns()
        if oldest is not None:
            timers = self.timers
            t = oldest + timers.rto_ns()
            if t < timers.hold_until:
                t = timers.hold_until
            if best is None or t < best:
                best = t
        t = self.probes.next_ns
        if t is not None and (best is None or t < best):
            best = t
        t = rate_wait
        if t is not None and (best is None or t < best):
            best = t
        if self.tail.armed:
            t = self.tail.deadline()
            if t is not None and (best is None or t < best):
                best = t
        t = no_ev_since
        if t is not None:
            t += self.no_ev_timeout_ns
            if best is None or t < best:
                best = t
        t = self.peer_deadline()
        if t is not None and (best is None or t < best):
            self.by_peer = True
            return t
        self.by_peer = False
        return best

    def exact_deadline(self) -> int:
        """:meth:`timer_deadline` of a READY connection on C integers (the native
        build's): the same deadline, ``NO_DEADLINE`` for None, or ``INEXACT`` when a term is
        not an int of magnitude below 2**60 (nothing set then: :meth:`timer_deadline`
        takes its general path). Sets ``by_peer`` as :meth:`timer_deadline` does."""
        acks = self.acks
        if type(acks) is Receiver:
            best = time_key(cython.cast(Receiver, acks).sack_deadline)
        else:
            best = time_key(acks.sack_deadline)
        waits = self.waits
        if type(waits) is Transmitter:
            rate_wait = time_key(cython.cast(Transmitter, waits).rate_wait_ns)
            no_ev_since = time_key(cython.cast(Transmitter, waits).no_ev_since)
        else:
            rate_wait = time_key(waits.rate_wait_ns)
            no_ev_since = time_key(waits.no_ev_since)
        if best == _INEXACT or rate_wait == _INEXACT or no_ev_since == _INEXACT:
            return _INEXACT
        pkt = self.send._front()  # oldest_sent_ns(), its send time read as a C integer
        if pkt is not None:
            sent = pkt.sent_ns
            timers = self.timers
            rto = time_key(timers.rto_ns())
            hold = time_key(timers.hold_until)
            # (a key strictly between _INEXACT and _NO_DEADLINE is a time)
            if not (
                -_TIME_LIMIT < sent < _TIME_LIMIT
                and _INEXACT < rto < _NO_DEADLINE
                and _INEXACT < hold < _NO_DEADLINE
            ):
                return _INEXACT
            t = sent + rto
            if t < hold:
                t = hold
            if t < best:
                best = t
        t = time_key(self.probes.next_ns)
        if t == _INEXACT:
            return _INEXACT
        if t < best:
            best = t
        if rate_wait < best:
            best = rate_wait
        tail = self.tail
        if tail.armed:
            t = time_key(tail.deadline())
            if t == _INEXACT:
                return _INEXACT
            if t < best:
                best = t
        if no_ev_since != _NO_DEADLINE:
            t = time_key(self.no_ev_timeout_ns)
            if not _INEXACT < t < _NO_DEADLINE:
                return _INEXACT
            t += no_ev_since
            if t < best:
                best = t
        # peer_deadline()
        host = self.host
        if self.mrc and not self.send.idle() and _any_port_up(host.port_up):
            quiet = time_key(self.quiet_since)
            heard = time_key(host.peer_heard_ns.get(self.peer, self.quiet_since))
            limit = time_key(self.peer_timeout_ns)
            if not (
                _INEXACT < quiet < _NO_DEADLINE
                and _INEXACT < heard < _NO_DEADLINE
                and _INEXACT < limit < _NO_DEADLINE
            ):
                return _INEXACT
            t = (heard if heard > quiet else quiet) + limit
            if t < best:
                self.by_peer = True
                return t
        self.by_peer = False
        return best

    def peer_deadline(self) -> int | None:
        """When silence from the peer fails this connection: MRC, data outstanding, and at
        least one local port up (probes can ask every path)."""
        host = self.host
        if not self.mrc or self.send.idle() or True not in host.port_up:
            return None
        heard = host.peer_heard_ns.get(self.peer, self.quiet_since)
        return max(heard, self.quiet_since) + self.peer_timeout_ns

    def peer_answered(self, now: int) -> None:
        """The peer answered a probe: its silence counts from ``now`` at the earliest."""
        self.quiet_since = max(self.quiet_since, now)

    def on_timer(self, now: int) -> Outbox:
        """The deadline came: run what is due. Returns the frames it makes (the delayed
        SACK, the tail-loss probe, EV probes)."""
        out: Outbox = []
        qp = self.qp
        if qp.state is not READY:
            return out
        self.waits.on_timer(now)
        sack = self.acks.on_timer(now)
        if sack is not None:
            out.append(sack)
        self.check_timeouts(now)
        if qp.state is not READY:
            return out
        t = self.tail.deadline()
        if t is not None and now >= t:
            probe = self.tail.send_probe(now)
            if probe is not None:
                out.append(probe)
        t = self.probes.next_ns
        if t is not None and now >= t:
            self.probes.tick(now, out)
        t = self.peer_deadline()
        if t is not None and now >= t:
            qp.fail("peer_unreachable", self.unreachable_message(now), now)
            return out
        since = self.waits.no_ev_since
        if since is not None and now - since >= self.no_ev_timeout_ns:
            host = self.host
            qp.fail(
                "no_usable_ev",
                f"no GOOD or SKIP EV toward {self.peer} for "
                f"{now - since} ns (all ASSUMED_BAD or DENIED, or every plane down; "
                f"local ports up: {host.port_up}, peer ports up: "
                f"{host.peer_port_up(self.peer)}); {self.path_report()}",
                now,
            )
        return out

    def unreachable_message(self, now: int) -> str:
        heard = self.host.peer_heard_ns.get(self.peer)
        since = "never heard from" if heard is None else f"last heard {span(now - heard)} ago"
        return (
            f"{self.peer} is unreachable: no acknowledgement and no probe reply for "
            f"{span(now - max(self.quiet_since, heard or 0))} with data outstanding ({since}); "
            f"the peer NIC is down or every path to it is cut; {self.path_report()}"
        )

    def path_report(self) -> str:
        """Each path toward the peer: its EV states and probe answers, and the ports."""
        host = self.host
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
        peer_up = host.peer_port_up(self.peer)
        down = [p for p in range(host.plane_count) if not host.port_up[p]]
        peer_down = [p for p in range(host.plane_count) if not peer_up[p]]
        return (
            "paths: "
            + "; ".join(parts)
            + f"; local ports down: {down or 'none'}; peer ports down: {peer_down or 'none'}"
        )

    def check_timeouts(self, now: int) -> None:
        """The retransmission timeout of the oldest packets in flight: lost (and their
        path retired if nothing at all came back since they left), or, RoCE, go-back-N."""
        send = self.send
        qp = self.qp
        timers = self.timers
        while qp.state is READY:
            oldest = send.oldest_sent_ns()
            if oldest is None:
                return
            rto = timers.rto_ns()
            if now < max(oldest + rto, timers.hold_until):
                return
            gbn = self.gbn
            if gbn is not None:
                failure = gbn.on_timeout(send, now, timers.last_ack_ns)
                if failure is not None:
                    qp.fail("max_retries", failure, now)
                return
            pkt = send.pop_expired(now - rto)
            if pkt is None:
                return
            silent = timers.last_ack_ns <= pkt.sent_ns
            if silent and pkt.entry is not None:
                # Nothing came back at all: the whole path this packet took is suspect
                # (its EVs cross the same links); probes tell when it works again.
                self.evs.retire_path(pkt.entry.path, "timeout", now)
            self.losses.lost(pkt, "timeout", now)
            if silent:
                # Every other packet past its own RTO is lost too: left in flight (one per
                # backoff) they would keep the window full, as each loss shrinks cwnd by
                # what it takes out of flight, and nothing, not even a retransmission,
                # could be sent again (a blackout longer than the RTO became max_retries).
                while qp.state is READY:
                    late = send.pop_expired(now - rto)
                    if late is None:
                        break
                    self.losses.lost(late, "timeout", now)
                self.silent_timeout(now, f"PSN {pkt.psn & PSN_MASK:#x}")
                return

    def silent_timeout(self, now: int, what: str) -> None:
        """A timeout with no acknowledgement since the packet left: back off, maybe fail."""
        timers = self.timers
        timers.backoff += 1
        self.counters["rto_silent"] += 1
        self.log.record(now, ev_kinds.RTO, backoff=timers.backoff, blamed=what)
        limit = self.max_retries
        if timers.backoff > limit:
            self.qp.fail(
                "max_retries",
                f"no acknowledgement from {self.peer} QPN {self.peer_qpn:#x} after "
                f"{limit} retries (last ack {now - timers.last_ack_ns} ns ago)",
                now,
            )
            return
        timers.hold_until = now + timers.rto_ns()
