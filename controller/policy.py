"""Per-switch settings the topology does not fix: punts, CPU routes, queue thresholds.

Every default is the project's choice, explained in docs/controller.md ("Policy"). The
queue thresholds are ``mrc_wire.queues`` (docs/switch-queues.md section 6) scaled to the
queue depth of the switch's links (the topology's ``queue_packets``), so that a 64-packet
queue gets exactly the program's built-in defaults (ECN 10..38, trim 48, limit 60).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv6Network

import controller.p4names as p4names
from controller.exceptions import PlanError
from mrc_wire.queues import (
    DEFAULT_CONTROL_PRIORITY,
    ECN_MAX_PROB,
    QueueDepthError,
    queue_thresholds,
)

# Link-local multicast (ND, MLD) and link-local unicast go to the switch's controller.
DEFAULT_CPU_PREFIXES = ("ff02::/16", "fe80::/10")
PUNT_KINDS = ("end-of-carrier", "no-route", "hop-limit", "non-ipv6")
DEFAULT_PUNTS = frozenset({"end-of-carrier"})


@dataclass(frozen=True, slots=True)
class ClassParams:
    """``set_class_params`` of one port class (docs/switch-queues.md sections 4-6)."""

    ecn_enable: bool
    ecn_min_qdepth: int
    ecn_max_qdepth: int
    ecn_max_prob: int
    trim_enable: bool
    trim_qdepth: int
    queue_limit: int

    def values(self) -> tuple[int, ...]:
        """In the order of ``p4names.REQUIRED_TABLES[PORT_CLASS_PARAMS]``."""
        return (
            int(self.ecn_enable),
            self.ecn_min_qdepth,
            self.ecn_max_qdepth,
            self.ecn_max_prob,
            int(self.trim_enable),
            self.trim_qdepth,
            self.queue_limit,
        )


def class_params_for(queue_packets: int) -> dict[int, ClassParams]:
    """The three port classes' parameters for queues of ``queue_packets`` packets."""
    try:
        t = queue_thresholds(queue_packets)
    except QueueDepthError as exc:
        raise PlanError(str(exc)) from None

    def params(ecn: bool, trim_on: bool) -> ClassParams:
        return ClassParams(
            ecn,
            t.ecn_min_qdepth,
            t.ecn_max_qdepth,
            ECN_MAX_PROB,
            trim_on,
            t.trim_qdepth,
            t.queue_limit,
        )

    return {
        # No ECN on the last hop: a mark then means path imbalance, not incast [C, sources §3.2].
        p4names.PORT_CLASS_FABRIC: params(ecn=True, trim_on=True),
        p4names.PORT_CLASS_HOST: params(ecn=False, trim_on=True),
        p4names.PORT_CLASS_CPU: params(ecn=False, trim_on=False),
    }


@dataclass(frozen=True)
class SwitchPolicy:
    """What every switch gets besides routes. ``queue_packets=None`` takes the depth from the
    topology (the smallest ``queue_packets`` of the switch's links)."""

    control_priority: int = DEFAULT_CONTROL_PRIORITY
    punts: frozenset[str] = DEFAULT_PUNTS
    cpu_prefixes: tuple[IPv6Network, ...] = field(
        default_factory=lambda: tuple(IPv6Network(p) for p in DEFAULT_CPU_PREFIXES)
    )
    rewrite_macs: bool = True
    queue_packets: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.control_priority <= 7:
            raise PlanError(
                f"control priority {self.control_priority} is outside 0..7 (bit<3>, "
                "docs/switch-queues.md section 7)"
            )
        unknown = set(self.punts) - set(PUNT_KINDS)
        if unknown:
            raise PlanError(
                f"unknown punt kind {sorted(unknown)[0]!r} (known: {', '.join(PUNT_KINDS)})"
            )
        for prefix in self.cpu_prefixes:
            if not isinstance(prefix, IPv6Network):
                raise PlanError(f"CPU prefix {prefix!r} is not an IPv6 network")
        if self.queue_packets is not None:
            class_params_for(self.queue_packets)

    def punt_flags(self) -> tuple[int, int, int, int]:
        return tuple(int(kind in self.punts) for kind in PUNT_KINDS)  # type: ignore[return-value]
