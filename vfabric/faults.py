"""How the virtual fabric applies the fault vocabulary (:mod:`topologies.events`).

vfabric has no fault types of its own: :meth:`vfabric.VirtualFabric.schedule` takes an
event of the vocabulary, and :func:`plan_faults` has it express itself through
:class:`FaultPlanner` (the vocabulary's :class:`~topologies.events.FaultSink`, one method
per kind). The planner checks the event against the fabric (names: a specific
``UnknownLinkError`` / ``UnknownNodeError``; a time already past: ``FaultTimeError``) and
turns it into :class:`Fault` records, each with how it acts on the fabric: a loss event on
N links is N faults (each with its own random generator), anything else one. Nothing is
installed before the whole event is checked. A fault acts on :class:`FaultTarget`, the
narrow protocol of what it needs from the fabric (names, event list, two state changes),
and hands its PacketFilters to the wires.

Random faults draw from their own generator, seeded from the fabric's seed and the
fault's position in the schedule, so a run is reproducible. The ``fault_scheduled``
record of the event log is :meth:`Fault.describe`: vfabric's names of the kinds
(``nic_port_down``, ``link_loss``...) and its field names (``start_ns``, ``probability``,
``end_ns``), unchanged since before the vocabulary moved (the event-log hashes are).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mrc_wire.frames import frame_ev
from topologies import Topology, TopologyError
from topologies.events import (
    EvDropEvent,
    Event,
    FlapEvent,
    LinkDownEvent,
    LinkUpEvent,
    LossEvent,
    PortDownEvent,
    PortUpEvent,
    SwitchDownEvent,
    SwitchUpEvent,
)
from vfabric.exceptions import FaultTimeError, FaultValueError, UnknownNodeError
from vfabric.wires import LinkKey, PacketFilter, Wire

if TYPE_CHECKING:
    from vfabric.eventlist import EventList


class FaultTarget(Protocol):
    """What a fault needs from the fabric it acts on (:class:`vfabric.VirtualFabric` is
    one): name lookups that raise a specific error for an unknown name, the event list,
    and the two state changes. Faults know only this, never the fabric module."""

    @property
    def topology(self) -> Topology: ...

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

    def set_link_state(self, key: LinkKey, cause: str, up: bool) -> None: ...

    def set_switch_state(self, name: str, up: bool) -> None: ...


Install = Callable[[FaultTarget, random.Random], None]


@dataclass(frozen=True)
class Fault:
    """One fault on the virtual timeline: what an event (or one link of a loss event)
    became. ``kind`` and ``params`` are its ``fault_scheduled`` record; ``cuts`` the
    links it takes out of service (repath attribution); ``install`` schedules its events
    on the fabric's event list."""

    kind: str
    start: int
    params: dict[str, Any]
    cuts: tuple[LinkKey, ...] = ()
    install: Install = field(default=lambda fabric, rng: None, compare=False, repr=False)

    def links(self) -> list[LinkKey]:
        """The links this fault takes out of service (for repath attribution)."""
        return list(self.cuts)

    def describe(self) -> dict[str, Any]:
        return {"fault": self.kind, **{k: v for k, v in self.params.items() if v is not None}}


def _check_time(kind: str, name: str, value: int, now: int) -> None:
    if value < now:
        raise FaultTimeError(
            f"{kind}: {name}={value} ns is in the past (virtual time is already {now} ns)"
        )


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


# ---------------------------------------------------------------------- the planner


class FaultPlanner:
    """The virtual fabric's :class:`~topologies.events.FaultSink`: each method checks one
    kind of event against ``fabric`` and notes the faults it becomes in :attr:`faults`
    (the timeline index is the caller's; vfabric numbers faults itself)."""

    def __init__(self, fabric: FaultTarget) -> None:
        self.fabric = fabric
        self.faults: list[Fault] = []

    def _state(
        self,
        kind: str,
        at_ns: int,
        params: dict[str, Any],
        cuts: list[LinkKey],
        apply: Callable[[FaultTarget], None],
    ) -> None:
        _check_time(kind, "at_ns", at_ns, self.fabric.now)

        def install(fabric: FaultTarget, rng: random.Random) -> None:
            fabric.events.at(at_ns, lambda _: apply(fabric))

        self.faults.append(Fault(kind, at_ns, {"at_ns": at_ns, **params}, tuple(cuts), install))

    def link_state(self, index: int, event: LinkDownEvent | LinkUpEvent) -> None:
        a, b, up = event.link.a, event.link.b, event.up
        key = self.fabric.link_key(a, b)
        self._state(
            event.kind,
            event.at_ns,
            {"a": a, "b": b},
            [] if up else [key],
            lambda fabric: fabric.set_link_state(fabric.link_key(a, b), "link", up),
        )

    def switch_state(self, index: int, event: SwitchDownEvent | SwitchUpEvent) -> None:
        name, up = event.switch, event.up
        self.fabric.switch_node(name)
        cuts = [] if up else self.fabric.links_of(name)
        self._state(
            event.kind,
            event.at_ns,
            {"name": name},
            cuts,
            lambda fabric: fabric.set_switch_state(name, up),
        )

    def port_state(self, index: int, event: PortDownEvent | PortUpEvent) -> None:
        nic, plane, up = event.port.nic, event.port.plane, event.up
        key = self.fabric.nic_link(nic, plane)
        self._state(
            "nic_port_up" if up else "nic_port_down",
            event.at_ns,
            {"nic": nic, "plane": plane},
            [] if up else [key],
            lambda fabric: fabric.set_link_state(fabric.nic_link(nic, plane), "port", up),
        )

    def flap(self, index: int, event: FlapEvent) -> None:
        """A link or NIC port flaps as its link (a NIC sees its port go down), at the
        times of the down and up events it is made of (:meth:`FlapEvent.edges`: down at
        ``at_ns + k * period_ns`` for ``down_ns``, up by ``until_ns`` at the latest)."""
        try:
            a, b = event.of.ends(self.fabric.topology)
        except TopologyError as exc:
            raise UnknownNodeError(f"flap of {event.of}: {exc}") from None
        key = self.fabric.link_key(a, b)
        _check_time(event.kind, "start_ns", event.at_ns, self.fabric.now)
        changes = [(edge.at_ns, edge.up) for edge in event.edges()]

        def install(fabric: FaultTarget, rng: random.Random) -> None:
            for at_ns, up in changes:
                fabric.events.at(at_ns, lambda _, up=up: fabric.set_link_state(key, "flap", up))

        params = {"start_ns": event.at_ns, "a": a, "b": b, "period_ns": event.period_ns}
        params.update(down_ns=event.down_ns, until_ns=event.until_ns)
        self.faults.append(Fault(event.kind, event.at_ns, params, (key,), install))

    def loss(self, index: int, event: LossEvent) -> None:
        """One fault per link (its own generator): each packet on it, both directions,
        lost with the event's rate from ``at_ns`` until ``until_ns`` (or for ever)."""
        start, end, rate = event.at_ns, event.until_ns, event.rate
        for link in event.links_in(self.fabric.topology):
            key = self.fabric.link_key(link.a, link.b)
            _check_time("link_loss", "start_ns", start, self.fabric.now)

            def install(fabric: FaultTarget, rng: random.Random, key: LinkKey = key) -> None:
                flt = _RandomLoss(rate, rng)
                _install_filter(fabric, fabric.wires_of(key), flt, start, end)

            params = {"start_ns": start, "a": link.a, "b": link.b, "probability": rate}
            params["end_ns"] = end
            self.faults.append(Fault("link_loss", start, params, (), install))

    def ev_drop(self, index: int, event: EvDropEvent) -> None:
        """A fraction of what the NIC sends on the EV is lost on its uplinks."""
        nic, ev, fraction = event.nic, event.ev, event.fraction
        start, end = event.at_ns, event.until_ns
        self.fabric.nic_node(nic)
        _check_time(event.kind, "start_ns", start, self.fabric.now)

        def install(fabric: FaultTarget, rng: random.Random) -> None:
            _install_filter(fabric, fabric.nic_uplinks(nic), _EvLoss(ev, fraction, rng), start, end)

        params = {"start_ns": start, "nic": nic, "ev": ev, "fraction": fraction, "end_ns": end}
        self.faults.append(Fault(event.kind, start, params, (), install))


def plan_faults(fabric: FaultTarget, event: Event) -> list[Fault]:
    """The faults ``event`` becomes on ``fabric``, every one checked (nothing installed)."""
    planner = FaultPlanner(fabric)
    event.apply_to(planner, len(planner.faults))
    if not planner.faults:
        raise FaultValueError(
            f"{event.describe() or type(event).__name__} at {event.at_ns} ns changes nothing "
            "on the fabric (not a fault of topologies.events)"
        )
    return planner.faults


__all__ = ["Fault", "FaultPlanner", "FaultTarget", "PacketFilter", "plan_faults"]
