"""What a connection knows of time on its paths (:class:`RttTimers`): the minimum RTT,
the queueing delay and its recent peak, RFC 6298's SRTT and RTTVAR, and what they set:
the retransmission timeout with its backoff (counted since the last acknowledgement,
whose time it keeps), the EV probe interval, RACK's reorder window, the tail-loss probe
timeout and the path quarantine window.
"""

from __future__ import annotations

import cython

from nic_emu.config import NicConfig
from nic_emu.connection.common import QDELAY_PEAK_RTTS, RTO_CAP_NS

if cython.compiled:  # a floor read as a C integer (nic_host.pxd)
    from cython.cimports.nic_emu.nic_host import nic_ns_ll

NO_RTT = 1 << 62  # min_rtt_ns before the first sample
_NO_RTT = NO_RTT  # a C value on the native build (rtt.pxd)
# below this a C double holds an int exactly (the window's terms on the native build)
_EXACT_INT = 1 << 53
_EXACT_DOUBLE = float(_EXACT_INT)


class RttTimers:
    """The RTT estimates and timeouts of one connection. ``adaptive`` (the default
    ``NicConfig.adaptive_timers``) derives the RTO and probe interval from SRTT and
    RTTVAR; otherwise they are the configured values."""

    def __init__(self, cfg: NicConfig, now: int, *, adaptive: bool) -> None:
        self.cfg = cfg
        self.adaptive = adaptive
        self.min_rtt_ns = NO_RTT
        self.qdelay_ns = 0.0
        self.qdelay_peak_ns = 0.0  # recent peak of the queueing delay
        self.qdelay_peak_at = now
        self.srtt_ns = 0.0  # RFC 6298 smoothed RTT and variance (0: no sample yet)
        self.rttvar_ns = 0.0
        self.rto_ceiling = min(cfg.rto_base_ns, RTO_CAP_NS)
        self.rto_base = self.rto_ceiling  # the current RTO before backoff
        self.rtt_bound = self.rto_ceiling  # SRTT + 4 RTTVAR, before the RTO's floor
        self.last_ack_ns = now  # when an acknowledgement last made progress
        self.backoff = 0  # consecutive silent timeouts since then
        self.hold_until = 0  # no timeout fires before this (after a silent one)
        self.probe_misses = 0  # probe rounds in a row that got no answer at all
        # The configuration's terms read per acknowledgement (the base RTT, the floors of
        # the reorder window, the quarantine window and the RTO), kept as the timers' own
        # (NicConfig is frozen: they never change; the native build reads a C field, not
        # the dataclass's slot through Python attribute lookup)
        self.base_rtt_ns = cfg.base_rtt_ns
        self.reorder_floor_ns = cfg.reorder_window_ns
        self.quarantine_floor_ns = cfg.quarantine_window_ns
        self.rto_floor_ns = cfg.rto_min_ns

    def fix(self, rto_ns: int) -> None:
        """A fixed timeout (the RoCE baseline's ACK timeout): no sample moves it."""
        self.rto_base = self.rto_ceiling = self.rtt_bound = rto_ns
        self.adaptive = False

    def rto_ns(self) -> int:
        n = self.backoff
        if not n:
            return self.rto_base
        linear = self.cfg.rto_linear_retries
        factor = n + 1 if n <= linear else (linear + 1) << (n - linear)
        return min(self.rto_base * factor, RTO_CAP_NS)

    def progress(self, now: int) -> None:
        """Something was acknowledged at ``now``: the backoff starts again."""
        self.last_ack_ns = now
        self.backoff = 0
        self.hold_until = 0

    def probe_interval_ns(self) -> int:
        """The EV probe period (also the probe timeout). Adaptive: SRTT + 4 RTTVAR (the
        RTO without its floor: probes may be quicker than a retransmission timeout),
        doubled for every probe round in a row that got no answer, within its floor and
        ceiling."""
        cfg = self.cfg
        if not self.adaptive:
            return cfg.probe_interval_ns
        interval = self.rtt_bound << min(self.probe_misses, 16)
        return min(max(cfg.probe_interval_min_ns, interval), cfg.probe_interval_ns)

    def sample(self, rtt: int, now: int) -> None:
        """An RTT sample (an echoed timestamp). Smoothed queueing delay (gain 1/8, as
        TCP's SRTT) and its recent peak (up at once, back toward the samples over
        QDELAY_PEAK_RTTS base RTTs) size the reorder window: a packet sent later on an
        emptier path overtakes one queued behind it by up to the peak."""
        if rtt < self.min_rtt_ns:
            self.min_rtt_ns = rtt
        sample = rtt - self.min_rtt_ns
        self.qdelay_ns += (sample - self.qdelay_ns) / 8
        peak = self.qdelay_peak_ns
        if sample >= peak:
            self.qdelay_peak_ns = sample
        else:
            span = QDELAY_PEAK_RTTS * self.base_rtt_ns
            gain = min(1.0, (now - self.qdelay_peak_at) / span)
            self.qdelay_peak_ns = peak + (sample - peak) * gain
        self.qdelay_peak_at = now
        if self.adaptive:
            self.smooth(rtt)

    def smooth(self, rtt: int) -> None:
        """RFC 6298 section 2: SRTT, RTTVAR and RTO = SRTT + 4 RTTVAR, within the floor
        (rto_min_ns) and the ceiling (rto_base_ns). Fixed timers ignore it."""
        if not self.adaptive:
            return
        if self.srtt_ns == 0.0:
            self.srtt_ns = float(max(rtt, 1))
            self.rttvar_ns = rtt / 2
        else:
            self.rttvar_ns += (abs(self.srtt_ns - rtt) - self.rttvar_ns) / 4
            self.srtt_ns += (rtt - self.srtt_ns) / 8
        rto = int(self.srtt_ns + 4 * self.rttvar_ns)
        self.rtt_bound = rto
        self.rto_base = min(max(self.rto_floor_ns, rto), self.rto_ceiling)

    def reorder_window(self) -> int:
        """RACK's time window: how much later than a delivered packet one sent before
        it may still arrive."""
        if cython.compiled:  # C integers, when the floor is an int (_c_window)
            c_window = self._c_window()
            if c_window >= 0:
                return c_window
        window = max(self.reorder_floor_ns, int(2 * self.qdelay_ns), int(self.qdelay_peak_ns))
        if self.adaptive:  # RACK's min_RTT / 4 (RFC 8985 section 6.2)
            window = max(window, int(self.srtt_ns) >> 2)
        return window

    def tail_probe_timeout(self) -> int:
        """RACK-TLP's probe timeout (RFC 8985 section 7.2): about two round trips."""
        if cython.compiled and self.min_rtt_ns < _NO_RTT:
            # C: the window a C integer (_c_window), the round trip the C double it is
            # (an int plus a float), the sum Python's (the int made the nearest double)
            c_window = self._c_window()
            if c_window >= 0:
                rtt = self.min_rtt_ns + self.qdelay_ns
                twice = 2 * rtt
                padded = rtt + cython.cast(cython.double, c_window)
                longest = padded if padded > twice else twice  # max(): the first on a tie
                if longest < _EXACT_DOUBLE:
                    return cython.cast(cython.longlong, longest)  # int(): truncated
        srtt = self.min_rtt_ns + self.qdelay_ns if self.min_rtt_ns < NO_RTT else self.base_rtt_ns
        return int(max(2 * srtt, srtt + self.reorder_window()))

    def _c_window(self) -> int:
        """:meth:`reorder_window` on C integers (the native build's), or -1 when its floor
        is not an int below 2**53 (a float: the general path keeps its type). The other
        terms are ints (a truncated C double is ``int()`` of it); the maximum of ints is
        the same whichever is first."""
        window = nic_ns_ll(self.reorder_floor_ns, _EXACT_INT - 1)  # an exact int, read in C
        if window < 0:  # NIC_NS_INEXACT, or a negative floor
            return -1
        term = cython.cast(cython.longlong, 2 * self.qdelay_ns)
        if term > window:
            window = term
        term = cython.cast(cython.longlong, cython.cast(cython.double, self.qdelay_peak_ns))
        if term > window:
            window = term
        if self.adaptive:
            term = cython.cast(cython.longlong, self.srtt_ns) >> 2
            if term > window:
                window = term
        return window

    def hold_delay(self) -> int:
        """The quarantine window: RACK's time window without its queueing term, from
        its own floor (``quarantine_window_ns``)."""
        return max(self.quarantine_floor_ns, int(self.srtt_ns) >> 2)

    def exact_hold_delay(self) -> int:
        """:meth:`hold_delay` on C integers (the native build's), or -1 when its floor
        is not an int of 0 to 2**53 or SRTT is past 2**53 (the general path keeps its
        type then)."""
        floor = self.quarantine_floor_ns
        if cython.compiled:
            hold = nic_ns_ll(floor, _EXACT_INT - 1)  # an exact int, read in C
            if hold < 0:  # NIC_NS_INEXACT, or a negative floor
                return -1
        elif type(floor) is int and 0 <= floor < _EXACT_INT:
            hold = floor
        else:
            return -1
        if not self.srtt_ns < _EXACT_DOUBLE:
            return -1
        term = cython.cast(cython.longlong, self.srtt_ns) >> 2  # int(): truncated, >= 0
        return term if term > hold else hold
