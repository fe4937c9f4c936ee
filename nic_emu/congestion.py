"""Window-based congestion control: an NSCC-style controller and a fixed window.

NSCC (UET 1.0 section 3.6.13, as modelled by uet-htsim) reacts to two signals per
acknowledgement, the ECN echo and the queueing delay (RTT minus the lowest RTT seen):

=============  ===================  ==========================================
ECN echoed     delay vs target      reaction
=============  ===================  ==========================================
no             below                proportional increase (fast increase when clear)
no             at or above          fair (additive) increase
yes            at or above          multiplicative decrease, at most once per base RTT
yes            below                none here: the EV state machine moves the path
=============  ===================  ==========================================

With ``CcConfig.delay_md`` (the nic-emu process, whose Python switches cannot mark ECN
for the queues that matter: their socket buffers), a delay at or above the target is
treated as a mark, and decreases are spaced by the measured RTT.

A NACK for a trimmed packet removes the NACKed bytes from the window; so does a loss.
Increases are accumulated and applied every ``adjust_bytes`` acknowledged or every
``adjust_period``. QuickAdapt (a window reset after a trim burst) is not modelled.
The parameter defaults and their scaling to the connection's BDP are in
:class:`nic_emu.config.CcConfig` and docs/nic-emu.md.
"""

from __future__ import annotations

from typing import Protocol

from nic_emu.config import CcConfig

# UET's reference network for the scaled constants: 100 Gb/s, 12 us base RTT.
REFERENCE_BDP_BYTES = 150_000
REFERENCE_RTT_NS = 12_000


class CongestionControl(Protocol):
    cwnd: int
    max_wnd: int

    def on_ack(self, nbytes: int, ecn: bool, rtt_ns: int, now: int) -> None: ...

    def on_nack(self, nbytes: int, now: int) -> None: ...

    def on_loss(self, nbytes: int, now: int) -> None: ...


class FixedWindow:
    """Congestion control disabled: the window stays at its maximum."""

    def __init__(self, window_bytes: int) -> None:
        self.cwnd = window_bytes
        self.max_wnd = window_bytes

    def on_ack(self, nbytes: int, ecn: bool, rtt_ns: int, now: int) -> None:
        return None

    def on_nack(self, nbytes: int, now: int) -> None:
        return None

    def on_loss(self, nbytes: int, now: int) -> None:
        return None


class Nscc:
    """NSCC-style window for one connection; ``rtt_ns`` < 0 means no RTT sample."""

    def __init__(self, cfg: CcConfig, mtu: int, bdp_bytes: int, base_rtt_ns: int, now: int) -> None:
        scaling_a = bdp_bytes / REFERENCE_BDP_BYTES
        self.mtu = mtu
        self.target_ns = max(1, int(cfg.target_qdelay_rtts * base_rtt_ns))
        scaling_b = self.target_ns / REFERENCE_RTT_NS
        self.gamma = cfg.gamma
        self.max_md_jump = cfg.max_md_jump
        self.fair_inc = cfg.fair_increase_mtus * mtu * scaling_a
        self.fast_scale = cfg.fast_increase_scale * scaling_a
        self.eta = cfg.eta_mtus * mtu * scaling_a
        self.alpha = cfg.alpha * scaling_a * scaling_b * mtu / self.target_ns
        self.adjust_bytes = cfg.adjust_bytes_mtus * mtu
        self.adjust_period_ns = max(1, int(cfg.adjust_period_rtts * base_rtt_ns))
        self.clear_delay_ns = cfg.clear_delay_ns
        self.max_wnd = max(mtu, int(cfg.max_window_bdps * bdp_bytes))
        self.cwnd = self.max_wnd
        self.min_rtt_ns = 1 << 62
        self.base_rtt_ns = base_rtt_ns
        self.avg_delay = 0.0
        self.inc_bytes = 0.0
        self.acked_since_adjust = 0
        self.last_adjust_ns = now
        self.last_decrease_ns = now - base_rtt_ns - 1
        self.last_delay_ns = now
        self.fast_count = 0
        self.fast_mode = False
        self.decreases = 0
        self.delay_md = cfg.delay_md
        self.last_rtt_ns = base_rtt_ns

    def on_ack(self, nbytes: int, ecn: bool, rtt_ns: int, now: int) -> None:
        self.acked_since_adjust += nbytes
        if rtt_ns >= 0:
            if rtt_ns < self.min_rtt_ns:
                self.min_rtt_ns = rtt_ns
            delay = rtt_ns - self.min_rtt_ns
            # Average over about one base RTT, weighting samples by the time between them.
            weight = min(1.0, (now - self.last_delay_ns) / self.base_rtt_ns)
            self.avg_delay += weight * (delay - self.avg_delay)
            self.last_delay_ns = now
            target = self.target_ns
            if self.delay_md:
                self.last_rtt_ns = rtt_ns
                if delay >= target:
                    ecn = True  # no switch marks here: the delay is the signal
            if not ecn:
                if delay >= target:
                    self.inc_bytes += self.fair_inc * nbytes
                    self.fast_mode = False
                    self.fast_count = 0
                elif not self._fast_increase(nbytes, delay):
                    self.inc_bytes += self.alpha * nbytes * (target - delay)
            elif delay >= target:
                self._multiplicative_decrease(now)
        if now - self.last_adjust_ns >= self.adjust_period_ns or (
            self.acked_since_adjust > self.adjust_bytes
        ):
            self._adjust(now)

    def on_nack(self, nbytes: int, now: int) -> None:
        self._shrink(nbytes)

    def on_loss(self, nbytes: int, now: int) -> None:
        self._shrink(nbytes)

    def _fast_increase(self, nbytes: int, delay: int) -> bool:
        if delay < self.clear_delay_ns:
            self.fast_count += nbytes
            if self.fast_count > self.cwnd or self.fast_mode:
                self.cwnd = min(self.cwnd + int(nbytes * self.fast_scale), self.max_wnd)
                self.fast_mode = True
                return True
        else:
            self.fast_count = 0
        self.fast_mode = False
        return False

    def _multiplicative_decrease(self, now: int) -> None:
        self.fast_mode = False
        self.fast_count = 0
        spacing = max(self.base_rtt_ns, self.last_rtt_ns) if self.delay_md else self.base_rtt_ns
        if self.avg_delay > self.target_ns and now - self.last_decrease_ns > spacing:
            factor = max(
                1.0 - self.gamma * (self.avg_delay - self.target_ns) / self.avg_delay,
                self.max_md_jump,
            )
            self.cwnd = max(int(self.cwnd * factor), self.mtu)
            self.last_decrease_ns = now
            self.decreases += 1

    def _adjust(self, now: int) -> None:
        self.cwnd += int(self.inc_bytes / self.cwnd)
        if now - self.last_adjust_ns >= self.adjust_period_ns:
            self.last_adjust_ns = now
            self.cwnd += int(self.eta)
        if self.cwnd > self.max_wnd:
            self.cwnd = self.max_wnd
        self.inc_bytes = 0.0
        self.acked_since_adjust = 0

    def _shrink(self, nbytes: int) -> None:
        self.cwnd = self.cwnd - nbytes if self.cwnd > nbytes + self.mtu else self.mtu


def make_congestion_control(
    cfg: CcConfig, mtu: int, bdp_bytes: int, base_rtt_ns: int, now: int
) -> CongestionControl:
    if not cfg.enabled:
        return FixedWindow(max(mtu, int(cfg.max_window_bdps * bdp_bytes)))
    return Nscc(cfg, mtu, bdp_bytes, base_rtt_ns, now)
