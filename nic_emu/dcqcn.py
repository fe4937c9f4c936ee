"""DCQCN for the RoCE baseline (Zhu et al., SIGCOMM 2015; sources §11.2, §11.4).

Two small state machines, one per queue pair, sans-IO (fed the time):

- :class:`CnpPacer`, the notification point (receiver): a CE-marked packet asks for a
  CNP; at most one per ``cnp_interval_ns`` per QP goes out.
- :class:`DcqcnRate`, the reaction point (sender): the QP's rate ``rc`` and target rate
  ``rt``, started at line rate. A CNP cuts the rate (``rt = rc``, ``rc *= 1 - alpha/2``,
  at most once per ``rate_reduce_period_ns``, never below ``min_dec_factor`` of it) and
  raises ``alpha = (1-g) alpha + g``; ``alpha`` decays as ``(1-g) alpha`` every
  ``alpha_timer_ns`` without a CNP. After a cut, rate-increase events come from a timer
  (every ``rate_timer_ns``) and a byte counter (every ``byte_counter`` bytes sent): for
  the first ``fast_recovery_steps`` events of both kinds, fast recovery
  (``rc = (rt + rc)/2``); then additive increase (``rt += R_AI`` first); once both
  counts exceed F, hyper increase (``rt += i R_HAI``, i the events past F). The rate
  never exceeds the line rate; at line rate the QP is not limited and no timer runs.

Timers are evaluated lazily: :meth:`DcqcnRate.advance` replays, in time order, every
alpha and rate-timer expiry up to now, so no wake-up is needed while nothing is sent.
"""

from __future__ import annotations

from nic_emu.config import DcqcnConfig

_NS_PER_S = 1_000_000_000


class CnpPacer:
    """The notification point of one QP."""

    __slots__ = ("interval_ns", "last_ns", "sent")

    def __init__(self, config: DcqcnConfig) -> None:
        self.interval_ns = config.cnp_interval_ns
        self.last_ns: int | None = None
        self.sent = 0

    def on_ce(self, now: int) -> bool:
        """A CE-marked packet arrived: True if a CNP goes back now."""
        last = self.last_ns
        if last is not None and now - last < self.interval_ns:
            return False
        self.last_ns = now
        self.sent += 1
        return True


class DcqcnRate:
    """The reaction point of one QP (see the module docstring)."""

    __slots__ = (
        "_alpha_due",
        "_bytes",
        "_cfg",
        "_last_cut",
        "_rate_due",
        "alpha",
        "byte_events",
        "cnps",
        "cuts",
        "line_bps",
        "next_send_ns",
        "rc",
        "rt",
        "timer_events",
    )

    def __init__(self, config: DcqcnConfig, line_bps: int, now: int) -> None:
        self._cfg = config
        self.line_bps = line_bps
        self.rc = float(line_bps)  # current rate
        self.rt = float(line_bps)  # target rate
        self.alpha = config.initial_alpha
        self.timer_events = 0  # rate-timer events since the last cut (i_T)
        self.byte_events = 0  # byte-counter events since the last cut (i_B)
        self._bytes = 0  # bytes sent since the last byte-counter event
        self._rate_due: int | None = None  # next rate-timer expiry (None: not limited)
        self._alpha_due: int | None = None  # next alpha decay (None: no CNP yet)
        self._last_cut: int | None = None
        self.next_send_ns = now  # the rate limiter: the next packet may leave then
        self.cnps = 0
        self.cuts = 0

    @property
    def limited(self) -> bool:
        return self.rc < self.line_bps

    def on_cnp(self, now: int) -> None:
        """A CNP for this QP arrived."""
        self.advance(now)
        cfg = self._cfg
        self.cnps += 1
        g = cfg.g
        last = self._last_cut
        if last is None or now - last >= cfg.rate_reduce_period_ns:
            self._last_cut = now
            self.cuts += 1
            self.rt = self.rc
            factor = max(1 - self.alpha / 2, cfg.min_dec_factor)
            self.rc = max(self.rc * factor, float(cfg.min_rate_bps))
            self.timer_events = 0
            self.byte_events = 0
            self._bytes = 0
            self._rate_due = now + cfg.rate_timer_ns
        self.alpha = (1 - g) * self.alpha + g
        self._alpha_due = now + cfg.alpha_timer_ns

    def on_sent(self, nbytes: int, now: int) -> None:
        """A packet of ``nbytes`` left: the byte counter, and when the next may leave."""
        if self._rate_due is None:
            return  # at line rate: the port's own pacing is the limit
        self.advance(now)
        start = self.next_send_ns if self.next_send_ns > now else now
        self.next_send_ns = start + int(nbytes * 8 * _NS_PER_S / self.rc)
        self._bytes += nbytes
        if self._bytes >= self._cfg.byte_counter:
            self._bytes = 0
            self.byte_events += 1
            self._increase()

    def advance(self, now: int) -> None:
        """Apply every alpha decay and rate-timer event due by ``now``, oldest first."""
        cfg = self._cfg
        a = self._alpha_due
        if self._rate_due is None and a is not None and a <= now:
            # only alpha decays are due: all of them at once
            n = (now - a) // cfg.alpha_timer_ns + 1
            self.alpha *= (1 - cfg.g) ** n
            self._alpha_due = a + n * cfg.alpha_timer_ns
            return
        while True:
            a = self._alpha_due
            r = self._rate_due
            if a is not None and a <= now and (r is None or a <= r):
                self.alpha *= 1 - cfg.g
                self._alpha_due = a + cfg.alpha_timer_ns
            elif r is not None and r <= now:
                self._rate_due = r + cfg.rate_timer_ns
                self.timer_events += 1
                self._increase()
            else:
                return

    def _increase(self) -> None:
        cfg = self._cfg
        f = cfg.fast_recovery_steps
        i_t, i_b = self.timer_events, self.byte_events
        if max(i_t, i_b) <= f:
            pass  # fast recovery: towards the target rate only
        elif min(i_t, i_b) > f:
            self.rt += (min(i_t, i_b) - f) * cfg.rate_hai_bps  # hyper increase
        else:
            self.rt += cfg.rate_ai_bps  # additive increase
        line = float(self.line_bps)
        if self.rt > line:
            self.rt = line
        self.rc = (self.rt + self.rc) / 2
        if line - self.rc < 1.0:  # back at line rate: no longer limited
            self.rc = self.rt = line
            self._rate_due = None
