"""The fault vocabulary: what can happen to the elements of a topology on a timeline.

One home for the kinds of fault every fabric is given (docs/architecture.md, "One fabric
interface, one fault vocabulary"): a scenario's timeline is made of these events
(:mod:`testbed.scenario.model` adds the incast, which is traffic), the virtual fabric
applies them (:meth:`vfabric.VirtualFabric.schedule`) and so does the process fabric
(:class:`testbed.fabric.Fabric`, through :class:`testbed.scenario.process.ProcessRun`).
No fabric has a vocabulary of its own and nothing translates between two.

An event names elements by the topology's node names (``p0-t0-0``, ``p0-t1-1``,
``nic3``); a link by its two ends in either order, a NIC port by its NIC and plane.
Times are integer nanoseconds from the start of the run. An event checks what it can
alone when it is made (types, times, ranges: :class:`EventValueError`,
:class:`EventTimeError`); :meth:`Event.check` checks its names against a topology
(:class:`UnknownEventTargetError`). A fabric checks what only it knows (a time already
past) when it is given the event.

Each event expresses itself through the one method of :class:`FaultSink` that applies
its kind (:meth:`Event.apply_to`): a fabric implements the sink, so no fabric tells
the kinds apart by their class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from topologies.addressing import EV_BITS
from topologies.exceptions import (
    EventTimeError,
    EventValueError,
    TopologyError,
    UnknownEventTargetError,
)
from topologies.model import Topology


def _check_ns(kind: str, name: str, value: object) -> None:
    """``value`` is a time: an integer number of ns, not before the run's start."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise EventValueError(f"{kind}: {name} must be an integer number of ns, got {value!r}")
    if value < 0:
        raise EventTimeError(f"{kind}: {name}={value} ns is before the start of the run")


def _check_after(kind: str, name: str, value: int | None, start: int) -> None:
    """An optional end time (``until_ns``) after the event's start."""
    if value is None:
        return
    _check_ns(kind, name, value)
    if value <= start:
        raise EventTimeError(f"{kind}: {name}={value} is not after at_ns={start}")


def _check_fraction(kind: str, name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise EventValueError(f"{kind}: {name} must be a fraction in [0, 1], got {value!r}")


def _check_name(kind: str, what: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise EventValueError(f"{kind}: {what} must be a node name, got {value!r}")


@dataclass(frozen=True, slots=True)
class LinkRef:
    """A link by its two end nodes, as the topology names them."""

    a: str
    b: str

    def __post_init__(self) -> None:
        _check_name("link", "an end", self.a)
        _check_name("link", "an end", self.b)
        if self.a == self.b:
            raise EventValueError(f"link: {self.a} -- {self.b} joins a node to itself")

    def __str__(self) -> str:
        return f"{self.a} -- {self.b}"

    def to_json(self) -> list[str]:
        return [self.a, self.b]

    def ends(self, topology: Topology) -> tuple[str, str]:
        """The two nodes of the link."""
        return self.a, self.b

    def check(self, topology: Topology) -> None:
        """UnknownEventTargetError unless ``topology`` has this link."""
        try:
            topology.link(self.a, self.b)
        except TopologyError as exc:
            raise UnknownEventTargetError(f"link {self}: {exc}") from None

    def change(self, at_ns: int, up: bool) -> LinkDownEvent | LinkUpEvent:
        """The event that sets this link down (or back up) at ``at_ns``."""
        return LinkUpEvent(at_ns=at_ns, link=self) if up else LinkDownEvent(at_ns=at_ns, link=self)


@dataclass(frozen=True, slots=True)
class PortRef:
    """One NIC port: the NIC's link to its T0 in ``plane``."""

    nic: str
    plane: int

    def __post_init__(self) -> None:
        _check_name("port", "nic", self.nic)
        if isinstance(self.plane, bool) or not isinstance(self.plane, int) or self.plane < 0:
            raise EventValueError(f"port: plane must be a plane number, got {self.plane!r}")

    def __str__(self) -> str:
        return f"{self.nic} port {self.plane}"

    def to_json(self) -> dict[str, Any]:
        return {"nic": self.nic, "plane": self.plane}

    def ends(self, topology: Topology) -> tuple[str, str]:
        """The two nodes of the port's link in ``topology``: the NIC and its T0."""
        return self.nic, topology.nic_port(self.nic, self.plane).t0

    def check(self, topology: Topology) -> None:
        """UnknownEventTargetError unless ``topology`` has this NIC and plane."""
        try:
            topology.nic_port(self.nic, self.plane)
        except TopologyError as exc:
            raise UnknownEventTargetError(f"{self}: {exc}") from None

    def change(self, at_ns: int, up: bool) -> PortDownEvent | PortUpEvent:
        """The event that sets this port down (or back up) at ``at_ns``."""
        return PortUpEvent(at_ns=at_ns, port=self) if up else PortDownEvent(at_ns=at_ns, port=self)


Target = LinkRef | PortRef | str  # a link, a NIC port or a switch (or NIC) name


def target_json(target: Target | None) -> Any:
    if target is None or isinstance(target, str):
        return target
    return target.to_json()


def _check_switch(topology: Topology, name: str) -> None:
    try:
        topology.switch(name)
    except TopologyError as exc:
        raise UnknownEventTargetError(f"switch {name}: {exc}") from None


def _check_nic(topology: Topology, name: str) -> None:
    try:
        topology.nic(name)
    except TopologyError as exc:
        raise UnknownEventTargetError(f"NIC {name}: {exc}") from None


class FaultSink(Protocol):
    """What a fabric offers to express the vocabulary's events.

    Each event calls the one method that expresses it (:meth:`Event.apply_to`), with its
    index in the caller's timeline; a fabric that cannot express a kind refuses it there
    with a specific error (docs/architecture.md, "One fabric interface")."""

    def link_state(self, index: int, event: LinkDownEvent | LinkUpEvent) -> None: ...

    def switch_state(self, index: int, event: SwitchDownEvent | SwitchUpEvent) -> None: ...

    def port_state(self, index: int, event: PortDownEvent | PortUpEvent) -> None: ...

    def flap(self, index: int, event: FlapEvent) -> None: ...

    def loss(self, index: int, event: LossEvent) -> None: ...

    def ev_drop(self, index: int, event: EvDropEvent) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Something that happens at ``at_ns`` (ns since the start of the run).

    Every fault kind below says how a fabric expresses it (:meth:`apply_to`); the base
    event changes nothing (a scenario's incast is traffic, not a change of the fabric)."""

    kind: ClassVar[str] = ""
    at_ns: int

    def __post_init__(self) -> None:
        _check_ns(self.kind or "event", "at_ns", self.at_ns)
        self._check()

    def _check(self) -> None:
        """What a kind checks of its own fields when it is made (specific errors)."""

    @property
    def target(self) -> Target | None:
        return None

    def describe(self) -> str:
        return self.kind.replace("_", " ")

    def params(self) -> dict[str, Any]:
        return {}

    def check(self, topology: Topology) -> None:
        """UnknownEventTargetError naming what ``topology`` lacks (the base event names
        nothing)."""

    def apply_to(self, fabric: FaultSink, index: int) -> None:
        """Has ``fabric`` express this event (entry ``index`` of its timeline); the base
        event changes nothing."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _LinkState(Event):
    """A link goes down or comes back (``up``): one body for both kinds."""

    up: ClassVar[bool]
    link: LinkRef

    @property
    def target(self) -> Target:
        return self.link

    def check(self, topology: Topology) -> None:
        self.link.check(topology)

    def apply_to(self, fabric: FaultSink, index: int) -> None:
        fabric.link_state(index, self)  # type: ignore[arg-type]

    def describe(self) -> str:
        return f"link {self.link} {'up' if self.up else 'down'}"


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkDownEvent(_LinkState):
    """The link goes down, both directions. A NIC on it sees its port go down; a T0-T1
    link fails silently (the NICs are not told)."""

    kind: ClassVar[str] = "link_down"
    up: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkUpEvent(_LinkState):
    """The link comes back (if nothing else keeps it down)."""

    kind: ClassVar[str] = "link_up"
    up: ClassVar[bool] = True


@dataclass(frozen=True, slots=True, kw_only=True)
class _SwitchState(Event):
    """A switch goes down or comes back (``up``): one body for both kinds."""

    up: ClassVar[bool]
    switch: str

    def _check(self) -> None:
        _check_name(self.kind, "switch", self.switch)

    @property
    def target(self) -> Target:
        return self.switch

    def check(self, topology: Topology) -> None:
        _check_switch(topology, self.switch)

    def apply_to(self, fabric: FaultSink, index: int) -> None:
        fabric.switch_state(index, self)  # type: ignore[arg-type]

    def describe(self) -> str:
        return f"switch {self.switch} {'up' if self.up else 'down'}"


@dataclass(frozen=True, slots=True, kw_only=True)
class SwitchDownEvent(_SwitchState):
    """The switch dies: every link of it goes down (its neighbours, NICs included, lose
    the signal); its tables are kept."""

    kind: ClassVar[str] = "switch_down"
    up: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SwitchUpEvent(_SwitchState):
    """The switch comes back."""

    kind: ClassVar[str] = "switch_up"
    up: ClassVar[bool] = True


@dataclass(frozen=True, slots=True, kw_only=True)
class _PortState(Event):
    """A NIC port goes down or comes back (``up``): one body for both kinds."""

    up: ClassVar[bool]
    port: PortRef

    @property
    def target(self) -> Target:
        return self.port

    def check(self, topology: Topology) -> None:
        self.port.check(topology)

    def apply_to(self, fabric: FaultSink, index: int) -> None:
        fabric.port_state(index, self)  # type: ignore[arg-type]

    def describe(self) -> str:
        return f"{self.port} {'up' if self.up else 'down'}"


@dataclass(frozen=True, slots=True, kw_only=True)
class PortDownEvent(_PortState):
    """The NIC's port goes down (the NIC knows at once)."""

    kind: ClassVar[str] = "port_down"
    up: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PortUpEvent(_PortState):
    """The NIC's port comes back."""

    kind: ClassVar[str] = "port_up"
    up: ClassVar[bool] = True


@dataclass(frozen=True, slots=True, kw_only=True)
class FlapEvent(Event):
    """``of`` goes down for ``down_ns`` at the start of every ``period_ns``, until
    ``until_ns``, and is left up after that."""

    kind: ClassVar[str] = "flap"
    of: LinkRef | PortRef
    period_ns: int
    down_ns: int
    until_ns: int

    def _check(self) -> None:
        for name in ("period_ns", "down_ns"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise EventValueError(f"flap: {name} must be a positive integer, got {value!r}")
        if self.down_ns >= self.period_ns:
            raise EventValueError(
                f"flap: down_ns={self.down_ns} must be shorter than period_ns={self.period_ns}"
            )
        _check_after(self.kind, "until_ns", self.until_ns, self.at_ns)

    @property
    def target(self) -> Target:
        return self.of

    def check(self, topology: Topology) -> None:
        self.of.check(topology)

    def apply_to(self, fabric: FaultSink, index: int) -> None:
        fabric.flap(index, self)

    def describe(self) -> str:
        return f"{self.of} flapping"

    def params(self) -> dict[str, Any]:
        return {"period_ns": self.period_ns, "down_ns": self.down_ns, "until_ns": self.until_ns}

    def edges(self) -> list[LinkDownEvent | LinkUpEvent | PortDownEvent | PortUpEvent]:
        """The flap as the down and up events it is made of, in time order: down at the
        start of each period, up ``down_ns`` later, until ``until_ns`` (left up after it)."""
        out: list[LinkDownEvent | LinkUpEvent | PortDownEvent | PortUpEvent] = []
        at = self.at_ns
        while at < self.until_ns:
            out.append(self.of.change(at, up=False))
            out.append(self.of.change(min(at + self.down_ns, self.until_ns), up=True))
            at += self.period_ns
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class LossEvent(Event):
    """Random loss of ``rate`` of the packets on ``links`` (empty: every link), both
    directions, from ``at_ns`` until ``until_ns`` (None: the end of the run)."""

    kind: ClassVar[str] = "loss"
    links: tuple[LinkRef, ...]
    rate: float
    until_ns: int | None = None

    def _check(self) -> None:
        if not isinstance(self.links, tuple) or not all(
            isinstance(link, LinkRef) for link in self.links
        ):
            raise EventValueError(f"loss: links must be a tuple of LinkRef, got {self.links!r}")
        _check_fraction(self.kind, "rate", self.rate)
        _check_after(self.kind, "until_ns", self.until_ns, self.at_ns)

    @property
    def target(self) -> Target | None:
        return self.links[0] if len(self.links) == 1 else None

    def check(self, topology: Topology) -> None:
        for link in self.links:
            link.check(topology)

    def links_in(self, topology: Topology) -> tuple[LinkRef, ...]:
        """The links the loss is on: its own, or every link of ``topology`` in its order."""
        return self.links or tuple(LinkRef(ln.a.node, ln.b.node) for ln in topology.links())

    def apply_to(self, fabric: FaultSink, index: int) -> None:
        fabric.loss(index, self)

    def describe(self) -> str:
        where = ", ".join(map(str, self.links)) if self.links else "every link"
        return f"{self.rate:.2%} loss on {where}"

    def params(self) -> dict[str, Any]:
        return {
            "rate": self.rate,
            "links": [link.to_json() for link in self.links],
            "until_ns": self.until_ns,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class EvDropEvent(Event):
    """Drop ``fraction`` of the packets ``nic`` sends on entropy value ``ev`` (on its
    uplink): one path of its connections fails partially, every other path is untouched.
    ``plane`` and ``t1`` say which path the EV was made for (the scenario file's
    fields; None when the EV was given alone)."""

    kind: ClassVar[str] = "ev_drop"
    nic: str  # the sender whose packets on ``ev`` are dropped
    ev: int
    fraction: float
    until_ns: int | None = None
    plane: int | None = None
    t1: int | None = None

    def _check(self) -> None:
        _check_name(self.kind, "nic", self.nic)
        if (
            isinstance(self.ev, bool)
            or not isinstance(self.ev, int)
            or not 0 <= self.ev < 1 << EV_BITS
        ):
            raise EventValueError(f"ev_drop: ev must be a 32-bit entropy value, got {self.ev!r}")
        _check_fraction(self.kind, "fraction", self.fraction)
        _check_after(self.kind, "until_ns", self.until_ns, self.at_ns)

    @property
    def target(self) -> Target:
        return self.nic

    def check(self, topology: Topology) -> None:
        _check_nic(topology, self.nic)

    def apply_to(self, fabric: FaultSink, index: int) -> None:
        fabric.ev_drop(index, self)

    def describe(self) -> str:
        return f"{self.fraction:.0%} drop on EV {self.ev:#010x} from {self.nic}"

    def params(self) -> dict[str, Any]:
        return {
            "nic": self.nic,
            "ev": self.ev,
            "plane": self.plane,
            "t1": self.t1,
            "fraction": self.fraction,
            "until_ns": self.until_ns,
        }


FAULT_KINDS: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        LinkDownEvent,
        LinkUpEvent,
        SwitchDownEvent,
        SwitchUpEvent,
        PortDownEvent,
        PortUpEvent,
        FlapEvent,
        LossEvent,
        EvDropEvent,
    )
}

__all__ = [
    "FAULT_KINDS",
    "EvDropEvent",
    "Event",
    "FaultSink",
    "FlapEvent",
    "LinkDownEvent",
    "LinkRef",
    "LinkUpEvent",
    "LossEvent",
    "PortDownEvent",
    "PortRef",
    "PortUpEvent",
    "SwitchDownEvent",
    "SwitchUpEvent",
    "Target",
    "target_json",
]
