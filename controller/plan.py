"""The static tables of every switch, derived from the topology and its address plan.

A plan is target-neutral and compact: an :class:`Entry` names its table and action (the
names of ``controller.p4names``) and holds plain integers, in the order of the table's key
and the action's parameters as ``p4names.REQUIRED_TABLES`` lists them. ``controller.entities``
turns entries into P4Runtime entities with the ids of a given P4Info, switch by switch.

Entries are immutable and equal entries are shared between switches (every T1 of a plane
has the same routes), which keeps the paper-scale plan (6,144 switches, ~9.5 million
entries) within a few hundred MB. Building it is linear in the number of entries.

Every address and uSID comes from :class:`topologies.AddressPlan`; nothing is re-derived.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

import controller.p4names as p4names
from controller.exceptions import PlanError
from controller.policy import ClassParams, SwitchPolicy, class_params_for
from topologies import (
    AddressPlan,
    Role,
    Topology,
    TopologyError,
    TopologySwitch,
    UsidRoute,
    mac_bytes,
)


class LpmPrefix(NamedTuple):
    """An LPM match value: ``value`` with its low ``128 - prefix_len`` bits zero."""

    value: int
    prefix_len: int


PlanMatch = int | LpmPrefix


class Entry(NamedTuple):
    """One table entry (or a table's default action when ``is_default``).

    ``match`` holds one value per key field and ``params`` one value per action parameter,
    both in ``p4names.REQUIRED_TABLES`` order (P4Info order for other tables).
    """

    table: str
    match: tuple[PlanMatch, ...]
    action: str
    params: tuple[int, ...] = ()
    is_default: bool = False
    priority: int = 0

    @property
    def key(self) -> tuple[str, tuple[PlanMatch, ...], int, bool]:
        """What identifies the entry in its table (P4Runtime: match + priority)."""
        return (self.table, self.match, self.priority, self.is_default)


@dataclass(frozen=True, slots=True)
class SwitchPlan:
    """Everything one switch gets."""

    name: str
    role: Role
    plane: int
    usid: int
    entries: tuple[Entry, ...]

    def count_by_table(self) -> dict[str, int]:
        return dict(Counter(entry.table for entry in self.entries))

    def entries_of(self, table: str) -> list[Entry]:
        return [entry for entry in self.entries if entry.table == table]


@dataclass(frozen=True)
class RoutePlan:
    """The plan of a fabric (or of the selected switches of it), in topology order."""

    topology: Topology
    addresses: AddressPlan
    policy: SwitchPolicy
    down_links: tuple[tuple[str, str], ...]
    switches: Mapping[str, SwitchPlan]

    def __iter__(self) -> Iterator[SwitchPlan]:
        return iter(self.switches.values())

    def __len__(self) -> int:
        return len(self.switches)

    def __getitem__(self, name: str) -> SwitchPlan:
        try:
            return self.switches[name]
        except KeyError:
            raise PlanError(f"{self.topology.name}: no switch {name!r} in this plan") from None

    def entry_count(self) -> int:
        """Every planned entry: table entries plus tables' default actions (what ``push``
        reports as ``planned``; a fresh switch takes the entries as inserts and the default
        actions as modifies)."""
        return sum(len(sw.entries) for sw in self.switches.values())

    def default_action_count(self) -> int:
        """How many of :meth:`entry_count` are tables' default actions."""
        return sum(entry.is_default for sw in self.switches.values() for entry in sw.entries)

    def count_by_table(self) -> dict[str, int]:
        totals: Counter[str] = Counter()
        for sw in self.switches.values():
            totals.update(entry.table for entry in sw.entries)
        return dict(totals)


def parse_link(text: str) -> tuple[str, str]:
    """``"p0-t0-0,p0-t1-1"`` (also ``:`` or ``--`` between the names) -> the two names."""
    for sep in (",", "--", ":"):
        if sep in text:
            a, _, b = text.partition(sep)
            if a.strip() and b.strip():
                return a.strip(), b.strip()
    raise PlanError(f"link {text!r}: expected two node names like p0-t0-0,p0-t1-1")


class _Builder:
    """Builds switch plans for one topology, sharing equal entries between switches."""

    def __init__(
        self, addresses: AddressPlan, policy: SwitchPolicy, down_links: Iterable[tuple[str, str]]
    ) -> None:
        self.addresses = addresses
        self.topology = addresses.topology
        self.policy = policy
        self.down_ports = self._down_ports(down_links)
        self._cache: dict[tuple[object, ...], Entry] = {}
        self._switch_macs: dict[str, int] = {}
        self._route_entries: dict[UsidRoute, Entry] = {}
        # Switches with the same ports (role, downlinks, uplinks, down ports) share one tuple.
        self._port_shapes: dict[tuple[object, ...], tuple[Entry, ...]] = {}
        self._plane_mac_cache: dict[int, tuple[list[int], list[int]]] = {}
        self._class_entries: dict[int, tuple[Entry, ...]] = {}
        self._cpu_entries = tuple(
            Entry(
                p4names.IPV6_ROUTE,
                (LpmPrefix(int(prefix.network_address), prefix.prefixlen),),
                p4names.TO_CPU,
            )
            for prefix in policy.cpu_prefixes
        )

    def _down_ports(self, links: Iterable[tuple[str, str]]) -> dict[str, frozenset[int]]:
        ports: dict[str, set[int]] = {}
        for a, b in links:
            try:
                link = self.topology.link(a, b)
            except TopologyError as exc:
                raise PlanError(f"link {a},{b} cannot be marked down: {exc}") from None
            for end in (link.a, link.b):
                if self.topology.has_node(end.node) and not end.node.startswith("nic"):
                    ports.setdefault(end.node, set()).add(end.port)
        return {name: frozenset(p) for name, p in ports.items()}

    def _shared(self, *key: object) -> Entry | None:
        return self._cache.get(key)

    def _entry(self, key: tuple[object, ...], entry: Entry) -> Entry:
        return self._cache.setdefault(key, entry)

    def switch_mac(self, name: str) -> int:
        mac = self._switch_macs.get(name)
        if mac is None:
            mac = int.from_bytes(mac_bytes(self.addresses.switch_mac(name)), "big")
            self._switch_macs[name] = mac
        return mac

    def queue_packets(self, sw: TopologySwitch) -> int:
        if self.policy.queue_packets is not None:
            return self.policy.queue_packets
        depth = self.topology.planes[sw.plane].link_defaults.queue_packets
        for override in self.topology.overrides:
            if override.queue_packets is not None and sw.name in override.between:
                depth = min(depth, override.queue_packets)
        return depth

    def class_entries(self, queue_packets: int) -> tuple[Entry, ...]:
        entries = self._class_entries.get(queue_packets)
        if entries is None:
            params: dict[int, ClassParams] = class_params_for(queue_packets)
            entries = tuple(
                Entry(p4names.PORT_CLASS_PARAMS, (cls,), p4names.SET_CLASS_PARAMS, p.values())
                for cls, p in sorted(params.items())
            )
            self._class_entries[queue_packets] = entries
        return entries

    def build(self, sw: TopologySwitch) -> SwitchPlan:
        addresses, policy = self.addresses, self.policy
        usid = addresses.switch_usid(sw)
        down = self.down_ports.get(sw.name, frozenset())
        entries: list[Entry] = []
        append = entries.append

        config = (sw.plane, policy.control_priority, *policy.punt_flags())
        append(
            self._shared("config", config)
            or self._entry(
                ("config", config),
                Entry(p4names.SWITCH_CONFIG, (), p4names.SET_SWITCH_CONFIG, config, True),
            )
        )
        append(Entry(p4names.MY_USID, (addresses.locator(sw),), p4names.USID_UN))

        routes = self._route_entries
        for route in addresses.routes_for(sw):
            entry = routes.get(route)
            if entry is None:
                entry = Entry(p4names.USID_ROUTE, (route.usid,), p4names.FORWARD, (route.port,))
                routes[route] = entry
            append(entry)
        entries.extend(self._cpu_entries)
        entries.extend(self._port_entries(sw, down))
        for port in sorted(down):
            append(
                self._shared("in-down", port)
                or self._entry(
                    ("in-down", port),
                    Entry(
                        p4names.INGRESS_PORT_STATUS, (port,), p4names.SET_INGRESS_PORT_STATUS, (0,)
                    ),
                )
            )
        entries.extend(self.class_entries(self.queue_packets(sw)))
        if policy.rewrite_macs:
            entries.extend(self._mac_entries(sw))
        return SwitchPlan(sw.name, sw.role, sw.plane, usid, tuple(entries))

    def _port_entries(self, sw: TopologySwitch, down: frozenset[int]) -> tuple[Entry, ...]:
        """``egress_port_config`` of every cabled port: HOST on T0 downlinks, else FABRIC."""
        shape = (sw.role, sw.downlinks, tuple(sw.uplinks), down)
        entries = self._port_shapes.get(shape)
        if entries is None:
            host_ports = sw.downlinks if sw.role is Role.T0 else range(0)
            built = []
            for port in sw.ports:
                host = port in host_ports
                port_class = p4names.PORT_CLASS_HOST if host else p4names.PORT_CLASS_FABRIC
                up = int(port not in down)
                key = ("port", port, port_class, up)
                entry = self._cache.get(key)
                if entry is None:
                    entry = Entry(
                        p4names.EGRESS_PORT_CONFIG,
                        (port,),
                        p4names.SET_EGRESS_PORT_CONFIG,
                        (port_class, up),
                    )
                    self._cache[key] = entry
                built.append(entry)
            entries = self._port_shapes[shape] = tuple(built)
        return entries

    def _plane_macs(self, plane: int) -> tuple[list[int], list[int]]:
        """MACs of the T0s and T1s of ``plane``, by index (computed once per plane)."""
        macs = self._plane_mac_cache.get(plane)
        if macs is None:
            info = self.topology.planes[plane]
            macs = (
                [self.switch_mac(name) for name in info.t0_names()],
                [self.switch_mac(name) for name in info.t1_names()],
            )
            self._plane_mac_cache[plane] = macs
        return macs

    def _mac_entries(self, sw: TopologySwitch) -> Iterator[Entry]:
        """src = this switch's MAC, dst = the MAC of whatever the port leads to."""
        own = self.switch_mac(sw.name)
        t0_macs, t1_macs = self._plane_macs(sw.plane)
        peers: list[tuple[int, int]] = []
        if sw.role is Role.T1:
            # T1 downlink i leads to T0 i of the plane (topologies.TopologySwitch).
            peers.extend(zip(sw.downlinks, t0_macs))
        else:
            # T0 downlink k leads to NIC index*N + k, uplinks[j] to T1 j (topologies.TopologySwitch).
            first_nic = sw.index * self.topology.nics_per_t0
            nic_mac = self.addresses.nic_mac
            for k, port in enumerate(sw.downlinks):
                mac = mac_bytes(nic_mac(first_nic + k, sw.plane))
                peers.append((port, int.from_bytes(mac, "big")))
            peers.extend(zip(sw.uplinks, t1_macs))
        for port, peer_mac in sorted(peers):
            yield Entry(p4names.EGRESS_PORT_MAC, (port,), p4names.SET_PORT_MACS, (own, peer_mac))


def plan_fabric(
    topology: Topology,
    *,
    policy: SwitchPolicy | None = None,
    down_links: Iterable[tuple[str, str] | str] = (),
    switches: Iterable[str] | None = None,
    addresses: AddressPlan | None = None,
) -> RoutePlan:
    """The plan of every switch of ``topology`` (or only of ``switches``).

    ``down_links`` are links to mark down on both ends (``("p0-t0-0", "p0-t1-1")`` or
    ``"p0-t0-0,p0-t1-1"``): their ports get ``up = 0`` in ``ingress_port_status`` and
    ``egress_port_config``, which is how failover tests cut a link without touching cables.
    """
    policy = policy if policy is not None else SwitchPolicy()
    try:
        addresses = addresses if addresses is not None else AddressPlan(topology)
    except TopologyError as exc:
        raise PlanError(str(exc)) from None
    links = tuple(parse_link(link) if isinstance(link, str) else tuple(link) for link in down_links)
    builder = _Builder(addresses, policy, links)  # type: ignore[arg-type]
    if switches is None:
        selected: Iterable[TopologySwitch] = topology.switches
    else:
        selected = []
        for name in switches:
            try:
                selected.append(topology.switch(name))  # type: ignore[attr-defined]
            except TopologyError as exc:
                raise PlanError(str(exc)) from None
    plans = {sw.name: builder.build(sw) for sw in selected}
    return RoutePlan(topology, addresses, policy, links, plans)  # type: ignore[arg-type]
