"""Faults on the virtual timeline: one class per kind.

A fault is validated against the fabric when it is scheduled
(:meth:`vfabric.VirtualFabric.schedule`) and then schedules its own events on the
fabric's event list (:meth:`Fault.install`); a new kind of fault is a new class here, never
an edit to the event loop. Random faults draw from their own generator, seeded from the
fabric's seed and the fault's position in the schedule, so a run is reproducible.

Link names are the topology's node names (``p0-t0-0``, ``p0-t1-1``, ``nic3``); a link is
named by its two ends in either order. Times are virtual nanoseconds from the start of
the run.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from mrc_wire.frames import frame_ev
from vfabric.exceptions import FaultTimeError, FaultValueError
from vfabric.wires import LinkKey, PacketFilter, Wire

if TYPE_CHECKING:
    from vfabric.eventlist import EventList


class FaultTarget(Protocol):
    """What a fault needs from the fabric it acts on (:class:`vfabric.VirtualFabric` is
    one): name lookups that raise a specific error for an unknown name, the event list,
    and the two state changes. Faults know only this, never the fabric module."""

    @property
    def events(self) -> EventList: ...

    @property
    def now(self) -> int: ...

    def link_key(self, a: str, b: str) -> LinkKey: ...

    def links_of(self, node: str) -> list[LinkKey]: ...

    def nic_link(self, nic: str, plane: int) -> LinkKey: ...

    def nic_node(self, name: str) -> object: ...

    def switch_node(self, name: str) -> object: ...

    def wires_of(self, key: LinkKey) -> list[Wire]: ...

    def nic_uplinks(self, nic: str) -> list[Wire]: ...

    def set_link_state(self, key: LinkKey, cause: str, up: bool, fault: Fault | None) -> None: ...

    def set_switch_state(self, name: str, up: bool, fault: Fault | None) -> None: ...


def _check_time(kind: str, name: str, value: int, now: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FaultValueError(f"{kind}: {name} must be an integer number of ns, got {value!r}")
    if value < now:
        raise FaultTimeError(
            f"{kind}: {name}={value} ns is in the past (virtual time is already {now} ns)"
        )


def _check_probability(kind: str, name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise FaultValueError(f"{kind}: {name} must be a probability in [0, 1], got {value!r}")


def _check_end(kind: str, start: int, end: int | None) -> None:
    if end is not None:
        if isinstance(end, bool) or not isinstance(end, int):
            raise FaultValueError(f"{kind}: end_ns must be an integer number of ns, got {end!r}")
        if end <= start:
            raise FaultTimeError(f"{kind}: end_ns={end} is not after start_ns={start}")


class Fault(ABC):
    """Base class: ``validate`` names what is wrong, ``install`` schedules the events."""

    kind: ClassVar[str] = "fault"

    @property
    @abstractmethod
    def start(self) -> int:
        """The virtual time (ns) of the fault's first event."""

    @abstractmethod
    def validate(self, fabric: FaultTarget) -> None:
        """Raises a FaultError naming what does not fit ``fabric``."""

    @abstractmethod
    def install(self, fabric: FaultTarget, rng: random.Random) -> None:
        """Schedules the fault's events on ``fabric``'s event list."""

    def links(self, fabric: FaultTarget) -> list[tuple[str, str]]:
        """The links this fault takes out of service (for repath attribution)."""
        return []

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fault": self.kind}
        out.update({k: v for k, v in vars(self).items() if v is not None})
        return out


# ---------------------------------------------------------------------- link state


@dataclass(frozen=True)
class _StateChange(Fault):
    """A state change at ``at_ns`` of the links a subclass names: down (``up`` False) or
    back up. Subclasses say which links (:meth:`_links`, which also checks the names) and
    how the change is applied (:meth:`_apply`)."""

    at_ns: int
    up: ClassVar[bool] = False

    @property
    def start(self) -> int:
        return self.at_ns

    @abstractmethod
    def _links(self, fabric: FaultTarget) -> list[LinkKey]:
        """The links the change applies to (checking the names it was given)."""

    @abstractmethod
    def _apply(self, fabric: FaultTarget) -> None:
        """Applies the change to ``fabric`` at its time."""

    def validate(self, fabric: FaultTarget) -> None:
        self._links(fabric)
        _check_time(self.kind, "at_ns", self.at_ns, fabric.now)

    def install(self, fabric: FaultTarget, rng: random.Random) -> None:
        fabric.events.at(self.at_ns, lambda _: self._apply(fabric))

    def links(self, fabric: FaultTarget) -> list[tuple[str, str]]:
        return [] if self.up else self._links(fabric)


@dataclass(frozen=True)
class LinkDown(_StateChange):
    """The link a -- b goes down (both directions) at ``at_ns``. A NIC on it sees its port
    go down; a T0-T1 link fails silently (the NICs are not told)."""

    a: str
    b: str
    kind: ClassVar[str] = "link_down"

    def _links(self, fabric: FaultTarget) -> list[LinkKey]:
        return [fabric.link_key(self.a, self.b)]

    def _apply(self, fabric: FaultTarget) -> None:
        fabric.set_link_state(fabric.link_key(self.a, self.b), "link", self.up, self)


@dataclass(frozen=True)
class LinkUp(LinkDown):
    """The link a -- b comes back at ``at_ns`` (if nothing else keeps it down)."""

    kind: ClassVar[str] = "link_up"
    up: ClassVar[bool] = True


@dataclass(frozen=True)
class SwitchDown(_StateChange):
    """Switch ``name`` dies at ``at_ns``: every link of it goes down (its neighbours, NICs
    included, lose the signal); its tables are kept."""

    name: str
    kind: ClassVar[str] = "switch_down"

    def _links(self, fabric: FaultTarget) -> list[LinkKey]:
        fabric.switch_node(self.name)
        return fabric.links_of(self.name)

    def _apply(self, fabric: FaultTarget) -> None:
        fabric.set_switch_state(self.name, self.up, self)


@dataclass(frozen=True)
class SwitchUp(SwitchDown):
    """Switch ``name`` comes back at ``at_ns``."""

    kind: ClassVar[str] = "switch_up"
    up: ClassVar[bool] = True


@dataclass(frozen=True)
class NicPortDown(_StateChange):
    """The port of ``nic`` on ``plane`` goes down at ``at_ns`` (the NIC knows at once)."""

    nic: str
    plane: int
    kind: ClassVar[str] = "nic_port_down"

    def _links(self, fabric: FaultTarget) -> list[LinkKey]:
        return [fabric.nic_link(self.nic, self.plane)]

    def _apply(self, fabric: FaultTarget) -> None:
        fabric.set_link_state(fabric.nic_link(self.nic, self.plane), "port", self.up, self)


@dataclass(frozen=True)
class NicPortUp(NicPortDown):
    """The port of ``nic`` on ``plane`` comes back at ``at_ns``."""

    kind: ClassVar[str] = "nic_port_up"
    up: ClassVar[bool] = True


@dataclass(frozen=True)
class Flap(Fault):
    """The link a -- b flaps: down at ``start_ns + k * period_ns`` for ``down_ns``, for
    every k with a down time before ``until_ns``."""

    start_ns: int
    a: str
    b: str
    period_ns: int
    down_ns: int
    until_ns: int
    kind: ClassVar[str] = "flap"

    @property
    def start(self) -> int:
        return self.start_ns

    def validate(self, fabric: FaultTarget) -> None:
        fabric.link_key(self.a, self.b)
        _check_time(self.kind, "start_ns", self.start_ns, fabric.now)
        for name in ("period_ns", "down_ns"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise FaultValueError(f"flap: {name} must be a positive integer, got {value!r}")
        if self.down_ns >= self.period_ns:
            raise FaultValueError(
                f"flap: down_ns={self.down_ns} must be shorter than period_ns={self.period_ns}"
            )
        _check_end(self.kind, self.start_ns, self.until_ns)

    def install(self, fabric: FaultTarget, rng: random.Random) -> None:
        key = fabric.link_key(self.a, self.b)
        t = self.start_ns
        while t < self.until_ns:
            fabric.events.at(t, lambda _: fabric.set_link_state(key, "flap", False, self))
            fabric.events.at(
                t + self.down_ns, lambda _: fabric.set_link_state(key, "flap", True, self)
            )
            t += self.period_ns

    def links(self, fabric: FaultTarget) -> list[tuple[str, str]]:
        return [fabric.link_key(self.a, self.b)]


# ---------------------------------------------------------------------- packet loss


class _RandomLoss(PacketFilter):
    __slots__ = ("probability", "rng")

    def __init__(self, probability: float, rng: random.Random) -> None:
        self.reason = "random_loss"
        self.probability = probability
        self.rng = rng

    def drops(self, frame: bytes) -> bool:
        return self.rng.random() < self.probability


class _EvLoss(PacketFilter):
    __slots__ = ("ev", "fraction", "rng")

    def __init__(self, ev: int, fraction: float, rng: random.Random) -> None:
        self.reason = "ev_drop"
        self.ev = ev
        self.fraction = fraction
        self.rng = rng

    def drops(self, frame: bytes) -> bool:
        return frame_ev(frame) == self.ev and self.rng.random() < self.fraction


def _install_filter(
    fabric: FaultTarget, wires: list[Wire], flt: PacketFilter, start: int, end: int | None
) -> None:
    def on(_: object) -> None:
        for wire in wires:
            wire.filters = (*wire.filters, flt)

    def off(_: object) -> None:
        for wire in wires:
            wire.filters = tuple(f for f in wire.filters if f is not flt)

    fabric.events.at(start, on)
    if end is not None:
        fabric.events.at(end, off)


@dataclass(frozen=True)
class LinkLoss(Fault):
    """From ``start_ns`` (until ``end_ns``, or for ever) each packet on the link a -- b
    (both directions) is lost with ``probability``."""

    start_ns: int
    a: str
    b: str
    probability: float
    end_ns: int | None = None
    kind: ClassVar[str] = "link_loss"

    @property
    def start(self) -> int:
        return self.start_ns

    def validate(self, fabric: FaultTarget) -> None:
        fabric.link_key(self.a, self.b)
        _check_time(self.kind, "start_ns", self.start_ns, fabric.now)
        _check_probability(self.kind, "probability", self.probability)
        _check_end(self.kind, self.start_ns, self.end_ns)

    def install(self, fabric: FaultTarget, rng: random.Random) -> None:
        key = fabric.link_key(self.a, self.b)
        wires = fabric.wires_of(key)
        _install_filter(
            fabric, wires, _RandomLoss(self.probability, rng), self.start_ns, self.end_ns
        )


@dataclass(frozen=True)
class EvDrop(Fault):
    """From ``start_ns`` (until ``end_ns``) a ``fraction`` of the packets ``nic`` sends on
    entropy value ``ev`` are lost on the NIC's uplink: one path of its connections fails
    partially, every other path is untouched."""

    start_ns: int
    nic: str
    ev: int
    fraction: float
    end_ns: int | None = None
    kind: ClassVar[str] = "ev_drop"

    @property
    def start(self) -> int:
        return self.start_ns

    def validate(self, fabric: FaultTarget) -> None:
        fabric.nic_node(self.nic)
        if isinstance(self.ev, bool) or not isinstance(self.ev, int) or not 0 <= self.ev < 1 << 32:
            raise FaultValueError(f"ev_drop: ev must be a 32-bit entropy value, got {self.ev!r}")
        _check_time(self.kind, "start_ns", self.start_ns, fabric.now)
        _check_probability(self.kind, "fraction", self.fraction)
        _check_end(self.kind, self.start_ns, self.end_ns)

    def install(self, fabric: FaultTarget, rng: random.Random) -> None:
        wires = fabric.nic_uplinks(self.nic)
        _install_filter(
            fabric, wires, _EvLoss(self.ev, self.fraction, rng), self.start_ns, self.end_ns
        )


FAULT_KINDS: dict[str, type[Fault]] = {
    cls.kind: cls
    for cls in (
        LinkDown,
        LinkUp,
        SwitchDown,
        SwitchUp,
        NicPortDown,
        NicPortUp,
        Flap,
        LinkLoss,
        EvDrop,
    )
}

__all__ = [
    "FAULT_KINDS",
    "EvDrop",
    "Fault",
    "FaultTarget",
    "Flap",
    "LinkDown",
    "LinkLoss",
    "LinkUp",
    "NicPortDown",
    "NicPortUp",
    "PacketFilter",
    "SwitchDown",
    "SwitchUp",
]
