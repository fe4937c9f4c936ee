"""Window-based congestion control: NSCC and a fixed window.

NSCC (UET 1.0 section 3.6.13, as uet-htsim implements it: docs/sources.md §8.1, §8.6)
reacts to two signals per acknowledgement, the ECN echo and the queueing delay (the RTT
sample minus the base RTT):

=============  ===================  ==========================================
ECN echoed     delay vs target      reaction
=============  ===================  ==========================================
no             below                proportional increase (fast increase when clear)
no             at or above          fair (additive) increase
yes            at or above          multiplicative decrease, at most once per base RTT
yes            below                none here: the EV state machine moves the path
=============  ===================  ==========================================

With ``CcConfig.delay_md`` (the default: MRC marks no ECN on the last hop, so an incast
shows only as delay; the nic-emu process's socket buffers cannot mark at all), a delay
at or above the target is treated as a mark, and decreases are spaced by
max(base RTT, measured RTT).

A NACK for a trimmed packet moves the average delay toward one network RTT, asks for
quick adapt and, unless quick adapt runs, removes the NACKed bytes from the window; a
loss removes its bytes. Quick adapt (once per base RTT + target): after NACKs, a loss or
a delay spike, a connection that delivered little in the period sets its window to what
it delivered. Increases are accumulated and applied every ``adjust_bytes`` acknowledged
or every ``adjust_period``. The parameter defaults and their scaling to the connection's
BDP are in :class:`nic_emu.config.CcConfig` and docs/nic-emu.md section 6.
"""

from __future__ import annotations

from typing import Protocol

import cython

from nic_emu.config import CcConfig

if cython.compiled:  # times and thresholds read as C values (nic_host.pxd)
    from cython.cimports.nic_emu.nic_host import NIC_NS_INEXACT, nic_ns_ll

# UET's reference network for the scaled constants: 100 Gb/s, 12 us base RTT.
REFERENCE_BDP_BYTES = 150_000
REFERENCE_RTT_NS = 12_000

# Nscc.on_ack's C path (the native build's, _exact_ack): the times it adds (now, the
# base RTT, the target, the quick-adapt period's end) are ints of magnitude at most
# 2**60, so no sum of three overflows a C long long; a delay (an RTT sample minus the
# base RTT) and the thresholds it is compared with are numbers a C double holds exactly
# (ints of magnitude at most 2**53, or floats), so every comparison and product gives
# what Python's int and float give.
_TIME_LIMIT = 1 << 60
_EXACT_INT = 1 << 53
_NOT_EXACT = -1.0  # _exact_double's answer for anything else (every threshold is >= 0)


def _exact_double(value: object) -> float:
    """A non-negative threshold as the C double that compares as it does (the native
    build's): a float (NaN included: it compares as in Python), or an int of at most
    2**53; ``_NOT_EXACT`` for anything else (a negative number, a larger int, a bool, a
    Fraction), where the Python expressions are taken."""
    if type(value) is float:
        x: float = value  # type: ignore[assignment]
        return _NOT_EXACT if x < 0.0 else x
    n = nic_ns_ll(value, _EXACT_INT)
    if n == NIC_NS_INEXACT or n < 0:
        return _NOT_EXACT
    return cython.cast(cython.double, n)


class CongestionControl(Protocol):
    cwnd: int
    max_wnd: int

    def on_ack(self, nbytes: int, ecn: bool, rtt_ns: int, now: int, inflight: int = 0) -> None: ...

    def on_nack(self, nbytes: int, now: int, inflight: int = 0) -> None: ...

    def on_loss(self, nbytes: int, now: int) -> None: ...


class WindowControl:
    """What the window controls share (``cwnd``, ``max_wnd``, set by each): the base
    whose signals change nothing. One base class, so that the native build reads either
    control's window as one C struct and calls its methods through one table
    (``nic_emu/congestion.pxd``)."""

    def on_ack(self, nbytes: int, ecn: bool, rtt_ns: int, now: int, inflight: int = 0) -> None:
        return None

    def on_nack(self, nbytes: int, now: int, inflight: int = 0) -> None:
        return None

    def on_loss(self, nbytes: int, now: int) -> None:
        return None


class FixedWindow(WindowControl):
    """Congestion control disabled: the window stays at its maximum."""

    def __init__(self, window_bytes: int) -> None:
        self.cwnd = window_bytes
        self.max_wnd = window_bytes


class Nscc(WindowControl):
    """NSCC for one connection (UET 1.0 section 3.6.13, sources §6.2; uet-htsim's
    ``uec.cpp``, sources §6.3). ``rtt_ns`` < 0 means no RTT sample.

    The delay of an acknowledgement is its RTT sample minus the base RTT, whose estimate
    starts at the configured ``base_rtt_ns`` (the fabric's largest unloaded RTT) and
    falls to the lowest sample seen (NACKs included); the window ceiling follows it
    (``max_window_bdps`` x the connection's rate x the base RTT). ``avg_delay`` is an
    exponential average (gain ``delay_gain``) of the samples that came with an ECN echo
    or under the target; a sample over the target without ECN (delay that no queue
    marked: a slow path, a busy receiver) pulls it toward a quarter base RTT instead.
    """

    def __init__(
        self,
        cfg: CcConfig,
        mtu: int,
        bdp_bytes: int,
        base_rtt_ns: int,
        now: int,
    ) -> None:
        self.mtu = mtu
        self.network_rtt_ns = base_rtt_ns
        # Bytes per ns of the connection's ports: the ceiling follows the base RTT.
        self.rate = bdp_bytes / base_rtt_ns
        self.max_window_bdps = cfg.max_window_bdps
        scaling_a = bdp_bytes / REFERENCE_BDP_BYTES
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
        self.delay_gain = cfg.delay_gain
        self.quick_adapt = cfg.quick_adapt
        self.qa_threshold_ns = cfg.qa_threshold_targets * self.target_ns
        self.qa_gate = cfg.qa_gate
        self.max_wnd = max(mtu, int(cfg.max_window_bdps * bdp_bytes))
        self.cwnd = self.max_wnd
        self.base_rtt_ns = base_rtt_ns
        self.avg_delay = 0.0
        self.inc_bytes = 0.0
        self.acked_since_adjust = 0
        self.last_adjust_ns = now
        self.last_decrease_ns = now - (1 << 62)  # the first decrease may come at once
        self.fast_count = 0
        self.fast_mode = False
        # Quick adapt: bytes acknowledged in the current period, its end (0: none yet),
        # whether a NACK asked for it, and the acknowledgements to ignore after one.
        self.achieved = 0
        self.qa_end_ns = 0
        self.qa_trigger = False
        self.ignore_bytes = 0
        self.ignored = 0
        self.decreases = 0
        self.quick_adapts = 0
        self.delay_md = cfg.delay_md
        self.last_rtt_ns = base_rtt_ns

    def _base_rtt(self, rtt_ns: int) -> None:
        if 0 < rtt_ns < self.base_rtt_ns:
            self.base_rtt_ns = rtt_ns
            self.max_wnd = max(self.mtu, int(self.max_window_bdps * self.rate * rtt_ns))
            if self.cwnd > self.max_wnd:
                self.cwnd = self.max_wnd

    def _average(self, delay: float, ecn: bool) -> None:
        if not ecn and delay > self.target_ns:
            delay = self.base_rtt_ns / 4  # unmarked delay: not a queue NSCC can drain
        self.avg_delay += self.delay_gain * (delay - self.avg_delay)

    def on_ack(self, nbytes: int, ecn: bool, rtt_ns: int, now: int, inflight: int = 0) -> None:
        # The native build takes the same steps on C numbers when every term is exact
        # (_exact_ack); a term that is not (a float time, a Fraction gain) takes these.
        if cython.compiled and self._exact_ack(nbytes, ecn, rtt_ns, now, inflight):
            return
        self.achieved += nbytes
        self.acked_since_adjust += nbytes
        self.ignored += nbytes
        if rtt_ns >= 0:
            self._base_rtt(rtt_ns)
            delay: float = rtt_ns - self.base_rtt_ns
            if self.delay_md:
                self.last_rtt_ns = rtt_ns
                if delay >= self.target_ns:
                    ecn = True  # no switch marks here: the delay is the signal
            self._average(delay, ecn)
        else:
            delay = self.avg_delay
        if self._quick_adapt(False, ecn, delay, now, inflight):
            return
        target = self.target_ns
        if not ecn:
            if delay >= target:
                self.inc_bytes += self.fair_inc * nbytes
            elif not self._fast_increase(nbytes, delay):
                self.inc_bytes += self.alpha * nbytes * (target - delay)
        elif delay >= target:
            self._multiplicative_decrease(now)
        self._bound()
        if (
            self.acked_since_adjust > self.adjust_bytes
            or now - self.last_adjust_ns > self.adjust_period_ns
        ):
            self._adjust(now)
            self._bound()

    def _exact_ack(self, nbytes: int, ecn: bool, rtt_ns: int, now: int, inflight: int) -> bool:
        """:meth:`on_ack` on C numbers (the native build's; the pure build never calls
        it): the same steps in the same order, each number it needs checked before the
        first change. False (nothing changed) when a term is not exact: ``now``, the RTT sample, the
        base RTT or the quick-adapt period's end not an int of magnitude at most 2**60,
        a delay past 2**53, or a threshold or gain not a number a C double holds as it
        is. The rare steps (a lower base RTT, quick adapt's window, a decrease, an
        adjustment) call their methods with the same objects."""
        n = nic_ns_ll(now, _TIME_LIMIT)
        rtt = nic_ns_ll(rtt_ns, _TIME_LIMIT)
        base = nic_ns_ll(self.base_rtt_ns, _TIME_LIMIT)
        qa_end = nic_ns_ll(self.qa_end_ns, 3 * _TIME_LIMIT)
        gain = self.delay_gain
        clear = _exact_double(self.clear_delay_ns)
        qa_threshold = _exact_double(self.qa_threshold_ns)
        adjust_bytes = _exact_double(self.adjust_bytes)
        target = self.target_ns
        if (
            n == NIC_NS_INEXACT
            or rtt == NIC_NS_INEXACT
            or base == NIC_NS_INEXACT
            or qa_end == NIC_NS_INEXACT
            or type(gain) is not float
            or clear == _NOT_EXACT
            or qa_threshold == _NOT_EXACT
            or adjust_bytes == _NOT_EXACT
            or not 0 < target <= _EXACT_INT
            or not 0 <= nbytes <= _EXACT_INT
            or not 0 <= self.acked_since_adjust <= _EXACT_INT - nbytes
            or not -_TIME_LIMIT <= self.last_adjust_ns <= _TIME_LIMIT
            or not -_EXACT_INT <= rtt - base <= _EXACT_INT
        ):
            return False  # (a sample below the base RTT gives a delay of 0)
        if ecn is True:
            mark = True
        elif ecn is False:
            mark = False
        else:
            return False  # another object's truth is the Python's to ask
        self.achieved += nbytes
        self.acked_since_adjust += nbytes
        self.ignored += nbytes
        if rtt >= 0:
            if 0 < rtt < base:
                self._base_rtt(rtt_ns)
                base = rtt
            delay = cython.cast(cython.double, rtt - base)
            if self.delay_md:
                self.last_rtt_ns = rtt_ns
                if delay >= target:
                    mark = True  # no switch marks here: the delay is the signal
            # _average(delay, mark)
            sample = delay
            if not mark and sample > target:
                sample = cython.cast(cython.double, base) / 4.0
            self.avg_delay += cython.cast(cython.double, gain) * (sample - self.avg_delay)
        else:
            delay = self.avg_delay
        # _quick_adapt(False, mark, delay, now, inflight)
        if self.quick_adapt:
            done = False
            if self.ignored < self.ignore_bytes and mark:
                done = True
            elif n > qa_end:
                if (
                    qa_end != 0
                    and (self.qa_trigger or delay > qa_threshold)
                    and self.achieved < self.max_wnd >> self.qa_gate
                ):
                    self.cwnd = max(self.achieved, self.mtu)
                    self.ignore_bytes = inflight
                    self.ignored = 0
                    self.qa_trigger = False
                    self.quick_adapts += 1
                    done = True
                self.achieved = 0
                self.qa_end_ns = n + base + target
            if done:
                self.inc_bytes = 0.0
                self.acked_since_adjust = 0
                return True
        if not mark:
            if delay >= target:
                self.inc_bytes += self.fair_inc * nbytes
            elif delay < clear:  # _fast_increase(nbytes, delay)
                self.fast_count += nbytes
                if self.fast_count > self.cwnd or self.fast_mode:
                    self.cwnd += cython.cast(cython.longlong, nbytes * self.fast_scale)
                    self.fast_mode = True
                else:
                    self.fast_mode = False
                    self.inc_bytes += self.alpha * nbytes * (target - delay)
            else:
                self.fast_count = 0
                self.fast_mode = False
                self.inc_bytes += self.alpha * nbytes * (target - delay)
        elif delay >= target:
            self._multiplicative_decrease(now)
        self._bound()
        if (
            cython.cast(cython.double, self.acked_since_adjust) > adjust_bytes
            or n - self.last_adjust_ns > self.adjust_period_ns
        ):
            self._adjust(now)
            self._bound()
        return True

    def on_nack(self, nbytes: int, now: int, inflight: int = 0) -> None:
        """A trimmed packet: the queue it met was at its trim threshold, about a network
        RTT of delay; quick adapt is due at the end of the period, else the NACKed bytes
        leave the window."""
        self.ignored += nbytes
        self.avg_delay += self.delay_gain * (self.network_rtt_ns - self.avg_delay)
        self.qa_trigger = True
        if not self._quick_adapt(True, True, 0, now, inflight):
            self._shrink(nbytes)

    def on_loss(self, nbytes: int, now: int) -> None:
        self._shrink(nbytes)

    def _quick_adapt(self, loss: bool, ecn: bool, delay: float, now: int, inflight: int) -> bool:
        """Once per base RTT + target: after a burst of NACKs or a delay past the
        threshold, a connection that delivered less than 1/2^qa_gate of its ceiling in
        the period sets its window to what it delivered, then ignores the marks of what
        was in flight then (their news is old). True: the acknowledgement is consumed."""
        if not self.quick_adapt:
            return False
        done = False
        if self.ignored < self.ignore_bytes and ecn:
            done = True
        elif now > self.qa_end_ns:
            if (
                self.qa_end_ns
                and (self.qa_trigger or loss or delay > self.qa_threshold_ns)
                and self.achieved < self.max_wnd >> self.qa_gate
            ):
                self.cwnd = max(self.achieved, self.mtu)
                self.ignore_bytes = inflight
                self.ignored = 0
                self.qa_trigger = False
                self.quick_adapts += 1
                done = True
            self.achieved = 0
            self.qa_end_ns = now + self.base_rtt_ns + self.target_ns
        if done:
            self.inc_bytes = 0.0
            self.acked_since_adjust = 0
        return done

    def _fast_increase(self, nbytes: int, delay: float) -> bool:
        if delay < self.clear_delay_ns:
            self.fast_count += nbytes
            if self.fast_count > self.cwnd or self.fast_mode:
                self.cwnd += int(nbytes * self.fast_scale)
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
            self.cwnd = int(self.cwnd * factor)
            self.last_decrease_ns = now
            self.decreases += 1

    def _adjust(self, now: int) -> None:
        self.cwnd += int(self.inc_bytes / self.cwnd)
        if now - self.last_adjust_ns >= self.adjust_period_ns:
            self.last_adjust_ns = now
            self.cwnd += int(self.eta)
        self.inc_bytes = 0.0
        self.acked_since_adjust = 0

    def _bound(self) -> None:
        if self.cwnd < self.mtu:
            self.cwnd = self.mtu
        elif self.cwnd > self.max_wnd:
            self.cwnd = self.max_wnd

    def _shrink(self, nbytes: int) -> None:
        self.cwnd = self.cwnd - nbytes if self.cwnd > nbytes + self.mtu else self.mtu


def make_congestion_control(
    cfg: CcConfig, mtu: int, bdp_bytes: int, base_rtt_ns: int, now: int
) -> CongestionControl:
    if not cfg.enabled:
        return FixedWindow(max(mtu, int(cfg.max_window_bdps * bdp_bytes)))
    return Nscc(cfg, mtu, bdp_bytes, base_rtt_ns, now)
