"""Configuration of an emulated MRC NIC, its connections and its congestion control.

Every default that the public record does not fix is chosen here once and explained in
docs/nic-emu.md ("Defaults and their sources"). Times are integer nanoseconds, sizes
bytes, rates bits per second.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields

from nic_emu.exceptions import ConfigError

ACK_TIMEOUT_UNIT_NS = 1024  # mrc.h: ACK timeout = 1.024 us x 2^t
ACK_TIMEOUT_MAX_EXP = 24  # mrc.h: t <= 24
# RoCE (InfiniBand RC): Local ACK Timeout = 4.096 us x 2^t, t a 5-bit field (0: no
# timeout, refused here), retry_cnt 3 bits (sources §9.5, §11.3)
ROCE_ACK_TIMEOUT_UNIT_NS = 4096
ROCE_ACK_TIMEOUT_MAX_EXP = 31
ROCE_RETRY_MAX = 7


class TransportMode(enum.Enum):
    """How a connection uses the fabric."""

    MRC = "mrc"  # sprayed over an EV set, selective retransmit, EV state machine
    ROCE = "roce"  # baseline: one path by 5-tuple hash, go-back-N, no trim reaction


@dataclass(frozen=True, slots=True)
class CcConfig:
    """NSCC parameters (UET 1.0 / uet-htsim defaults, see docs/nic-emu.md)."""

    enabled: bool = True
    target_qdelay_rtts: float = 0.75  # target queueing delay, base RTTs (with trimming)
    max_window_bdps: float = 1.5  # ceiling and initial window, BDPs
    gamma: float = 0.8  # multiplicative-decrease gain
    max_md_jump: float = 0.5  # smallest factor one decrease may scale the window by
    fair_increase_mtus: float = 5.0  # additive increase per window of acks (x scaling_a)
    fast_increase_scale: float = 0.25  # bytes added per byte acked on a clear path (x scaling_a)
    eta_mtus: float = 0.15  # extra additive increase per adjust period (x scaling_a)
    alpha: float = 4.0  # proportional-increase gain (x scaling_a x scaling_b per target)
    adjust_bytes_mtus: int = 8  # apply accumulated increases after this many bytes acked
    adjust_period_rtts: float = 1.0  # ... or at least once per this many base RTTs
    clear_delay_ns: int = 1000  # queueing delay under which fast increase may start
    delay_gain: float = 0.0125  # gain of the average queueing delay (the MD's measure)
    quick_adapt: bool = True  # window := bytes delivered, after a trim burst or a delay spike
    qa_threshold_targets: float = 4.0  # delay (x target) that triggers quick adapt
    qa_gate: int = 3  # ... only when the period delivered < max window / 2^qa_gate
    # A queueing delay at or above the target counts as congestion even without an ECN
    # mark (multiplicative decrease at most once per measured RTT, no fair increase): MRC
    # marks no ECN on the last hop, so an incast shows only as delay and trims (UET 1.0
    # would fair-increase there); the nic-emu process's socket buffers cannot mark at all.
    delay_md: bool = True

    def __post_init__(self) -> None:
        _positive(self, "target_qdelay_rtts", "max_window_bdps", "adjust_period_rtts")
        _non_negative(
            self,
            "fair_increase_mtus",
            "fast_increase_scale",
            "eta_mtus",
            "alpha",
            "adjust_bytes_mtus",
            "clear_delay_ns",
        )
        _positive(self, "qa_threshold_targets")
        if (
            isinstance(self.qa_gate, bool)
            or not isinstance(self.qa_gate, int)
            or not (0 <= self.qa_gate <= 16)
        ):
            raise ConfigError(f"CcConfig.qa_gate must be an integer in 0..16, got {self.qa_gate!r}")
        if not isinstance(self.quick_adapt, bool):
            raise ConfigError(
                f"CcConfig.quick_adapt must be true or false, got {self.quick_adapt!r}"
            )
        for name in ("gamma", "max_md_jump", "delay_gain"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ConfigError(f"CcConfig.{name} must be in (0, 1), got {value!r}")


@dataclass(frozen=True, slots=True)
class DcqcnConfig:
    """DCQCN at a RoCE NIC (Zhu et al., SIGCOMM 2015; docs/nic-emu.md section 5):
    the receiver's CNPs (notification point) and the sender's rate (reaction point)."""

    enabled: bool = True
    g: float = 1 / 256  # alpha gain
    alpha_timer_ns: int = 55_000  # K: alpha decays after this long without a CNP
    rate_timer_ns: int = 55_000  # T: a rate-increase event every T after a cut
    byte_counter: int = 10 * 1024 * 1024  # B: a rate-increase event every B bytes sent
    fast_recovery_steps: int = 5  # F: increase events of fast recovery
    rate_ai_bps: int = 40_000_000  # R_AI: additive increase step
    rate_hai_bps: int = 400_000_000  # R_HAI: hyper increase step
    min_rate_bps: int = 1_000_000  # the rate never falls below this
    min_dec_factor: float = 0.5  # one cut keeps at least this share of the rate
    rate_reduce_period_ns: int = 4_000  # at most one cut per this period
    cnp_interval_ns: int = 50_000  # N: at most one CNP per QP per this period
    initial_alpha: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.enabled, bool):
            raise ConfigError(f"DcqcnConfig.enabled must be true or false, got {self.enabled!r}")
        _positive(
            self,
            "alpha_timer_ns",
            "rate_timer_ns",
            "byte_counter",
            "rate_ai_bps",
            "rate_hai_bps",
            "min_rate_bps",
        )
        _non_negative(self, "fast_recovery_steps", "rate_reduce_period_ns", "cnp_interval_ns")
        for name in ("g", "min_dec_factor", "initial_alpha"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
                raise ConfigError(f"DcqcnConfig.{name} must be in (0, 1], got {value!r}")


@dataclass(frozen=True, slots=True)
class RoceConfig:
    """The RoCE baseline's transport (``TransportMode.ROCE`` connections): go-back-N
    timers as RoCE NICs run them, and DCQCN (docs/nic-emu.md section 5)."""

    ack_timeout_exp: int = 14  # Local ACK Timeout 4.096 us x 2^14 = 67.1 ms
    retry_count: int = 7  # timeouts in a row without progress before the QP fails
    dcqcn: DcqcnConfig = field(default_factory=DcqcnConfig)

    def __post_init__(self) -> None:
        t = self.ack_timeout_exp
        if isinstance(t, bool) or not isinstance(t, int) or not 1 <= t <= ROCE_ACK_TIMEOUT_MAX_EXP:
            raise ConfigError(
                f"RoceConfig.ack_timeout_exp must be an integer in 1..{ROCE_ACK_TIMEOUT_MAX_EXP} "
                f"(InfiniBand's 5-bit Local ACK Timeout; 0 would mean no timeout), got {t!r}"
            )
        r = self.retry_count
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= ROCE_RETRY_MAX:
            raise ConfigError(
                f"RoceConfig.retry_count must be an integer in 0..{ROCE_RETRY_MAX} "
                f"(InfiniBand's 3-bit retry_cnt), got {r!r}"
            )
        if not isinstance(self.dcqcn, DcqcnConfig):
            raise ConfigError(
                f"RoceConfig.dcqcn must be a DcqcnConfig, got {type(self.dcqcn).__name__}"
            )

    @property
    def ack_timeout_ns(self) -> int:
        return ROCE_ACK_TIMEOUT_UNIT_NS << self.ack_timeout_exp


@dataclass(frozen=True, slots=True)
class NicConfig:
    """Per-NIC transport parameters, shared by all the NIC's connections."""

    mtu_payload: int = 4096  # RDMA payload bytes per data packet
    evs_per_connection: int = 256  # active EV set, split equally across planes
    backup_evs_per_connection: int = 64  # replacements, split equally across planes
    reverse_evs_per_plane: int = 2  # EVs a receiver uses for SACK/NACK, per plane
    ev_min_active: int = 0  # floor of usable EVs per plane (mrc_ctl.h); 0 = no floor
    ev_skip_ns: int = 50_000  # how long an ECN-echoed EV is skipped
    probe_interval_ns: int = 32_000  # EV probe period for ASSUMED_BAD EVs (= probe timeout,
    # so at least base_rtt_ns)
    probe_success_threshold: int = 3  # consecutive probe successes that revive an EV
    probes_per_path: int = 2  # EVs of one path probed per probe round (the probe rate limit)
    ack_timeout_exp: int = 6  # RTO = 1.024 us x 2^t (t=6: 65.5 us)
    rto_linear_retries: int = 2  # backoff grows linearly for this many retries, then doubles
    max_retries: int = 7  # consecutive timeouts without any acknowledgement before failing
    max_packet_transmissions: int = 16  # transmissions of one PSN before failing
    no_usable_ev_timeout_ns: int = 1_000_000  # no GOOD/SKIP EV for this long -> fail
    peer_timeout_ns: int = 1_000_000  # nothing heard from the peer for this long while
    # data is outstanding and a port is up -> fail as peer_unreachable
    reorder_threshold_pkts: int = 16  # a gap is a loss once this many later sends are acked
    reorder_window_ns: int = 8_000  # ... and left at least this much later (or 2x the
    # current queueing delay, if larger: see nic_emu.sender)
    receive_window_psns: int = 1024  # PSNs past the cumulative point a receiver accepts
    sack_every_pkts: int = 4  # coalesce in-order SACKs up to this many data packets
    sack_delay_ns: int = 2_000  # ... or this long
    reverse_refresh_ns: int = 50_000  # replace a reverse EV from arriving traffic this often
    reverse_plane_stale_ns: int = 200_000  # SACK only on planes heard from this recently
    port_rate_bps: int = 100_000_000_000  # per plane (one NIC port per plane)
    base_rtt_ns: int = 12_000  # configured base RTT (sizes the CC window)
    cc: CcConfig = field(default_factory=CcConfig)
    mode: TransportMode = TransportMode.MRC
    roce: RoceConfig = field(default_factory=RoceConfig)  # TransportMode.ROCE connections
    trace_packets: bool = False  # record a "tx" event for every data packet sent
    # Wall-clock modes (the nic-emu process): RTO and probe interval follow the measured
    # RTT and its variance (RFC 6298); rto_base_ns and probe_interval_ns become the
    # starting values and ceilings, the two below the floors (a floor above its ceiling
    # is the ceiling).
    adaptive_timers: bool = False
    rto_min_ns: int = 65_536  # floor of the adaptive RTO
    probe_interval_min_ns: int = 32_000  # floor of the adaptive probe interval
    # Quarantine a path at its first overdue packet (docs/nic-emu.md section 3): no new
    # data on it, a probe a quarantine window later; delivery or the probe's answer clears
    # it, no answer within a probe interval retires it. A packet is overdue once
    # quarantine_threshold_pkts later sends and one sent quarantine_window_ns (or SRTT/4)
    # after it are acknowledged: RACK's test, shorter, since a wrong hold costs little.
    path_quarantine: bool = True
    quarantine_threshold_pkts: int = 8
    quarantine_window_ns: int = 8_000
    # [P] When a connection retires a whole path (plane, T1) on its own evidence, its
    # packets in flight on the path are resent elsewhere at once, and the NIC retires the
    # path in its other connections whose paths cross the same failed element: those to
    # peers under the same far T0 at once, every connection through that T1 once it failed
    # toward two far T0s (docs/nic-emu.md section 3, "Shared path verdicts").
    path_verdicts: bool = True

    def __post_init__(self) -> None:
        _positive(
            self,
            "mtu_payload",
            "evs_per_connection",
            "reverse_evs_per_plane",
            "ev_skip_ns",
            "probe_interval_ns",
            "probe_success_threshold",
            "probes_per_path",
            "max_retries",
            "max_packet_transmissions",
            "no_usable_ev_timeout_ns",
            "peer_timeout_ns",
            "reorder_threshold_pkts",
            "quarantine_threshold_pkts",
            "receive_window_psns",
            "sack_every_pkts",
            "sack_delay_ns",
            "reverse_refresh_ns",
            "reverse_plane_stale_ns",
            "port_rate_bps",
            "base_rtt_ns",
            "rto_min_ns",
            "probe_interval_min_ns",
        )
        _non_negative(
            self,
            "backup_evs_per_connection",
            "ev_min_active",
            "rto_linear_retries",
            "reorder_window_ns",
            "quarantine_window_ns",
        )
        if not 0 <= self.ack_timeout_exp <= ACK_TIMEOUT_MAX_EXP:
            raise ConfigError(
                f"NicConfig.ack_timeout_exp must be in 0..{ACK_TIMEOUT_MAX_EXP} "
                f"(mrc.h), got {self.ack_timeout_exp!r}"
            )
        if self.receive_window_psns > 4096 or self.receive_window_psns % 128:
            raise ConfigError(
                "NicConfig.receive_window_psns must be a multiple of 128 up to 4096, "
                f"got {self.receive_window_psns!r}"
            )
        if self.probe_interval_ns < self.base_rtt_ns:
            raise ConfigError(
                f"NicConfig.probe_interval_ns ({self.probe_interval_ns}) is also the probe "
                f"timeout and must be at least base_rtt_ns ({self.base_rtt_ns})"
            )
        for name in ("adaptive_timers", "path_quarantine", "path_verdicts"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(
                    f"NicConfig.{name} must be true or false, got {getattr(self, name)!r}"
                )
        if self.mtu_payload > 9000:
            raise ConfigError(f"NicConfig.mtu_payload must be <= 9000, got {self.mtu_payload}")
        if not isinstance(self.cc, CcConfig):
            raise ConfigError(f"NicConfig.cc must be a CcConfig, got {type(self.cc).__name__}")
        if not isinstance(self.mode, TransportMode):
            raise ConfigError(f"NicConfig.mode must be a TransportMode, got {self.mode!r}")
        if not isinstance(self.roce, RoceConfig):
            raise ConfigError(
                f"NicConfig.roce must be a RoceConfig, got {type(self.roce).__name__}"
            )

    @property
    def rto_base_ns(self) -> int:
        return ACK_TIMEOUT_UNIT_NS << self.ack_timeout_exp


def _positive(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigError(f"{type(obj).__name__}.{name} must be > 0, got {value!r}")


def _non_negative(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{type(obj).__name__}.{name} must be >= 0, got {value!r}")


def config_as_dict(config: NicConfig) -> dict[str, object]:
    """The configuration as plain JSON-serialisable values (for run records)."""
    out: dict[str, object] = {}
    for f in fields(config):
        value = getattr(config, f.name)
        if isinstance(value, CcConfig):
            value = {g.name: getattr(value, g.name) for g in fields(value)}
        elif isinstance(value, RoceConfig):
            value = {g.name: getattr(value, g.name) for g in fields(value) if g.name != "dcqcn"} | {
                "dcqcn": {g.name: getattr(value.dcqcn, g.name) for g in fields(value.dcqcn)}
            }
        elif isinstance(value, enum.Enum):
            value = value.value
        out[f.name] = value
    return out
