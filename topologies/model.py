"""The fabric model: planes of two-tier (T0/T1) switches and multi-port NICs.

A topology is a handful of counts plus sparse per-link overrides; everything else
(switch and NIC names, port numbers, links) is derived on demand, so a paper-scale
fabric (8 planes x 768 switches, 131,072 NICs, ~2 million links) costs a few thousand
small objects, not millions. The derivation rules are documented in
docs/topology-format.md and are the single source of truth for port numbering.

Shape rules (sources §1.1-§1.2):
- planes are disjoint, identical copies: NIC ``i`` has one port per plane, attached to
  T0 ``i // nics_per_t0`` of every plane, on that T0's downlink ``i % nics_per_t0``;
- inside a plane every T0 connects to every T1 (full bipartite two-tier fabric).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from ipaddress import IPv6Network
from typing import overload

from topologies.exceptions import TopologySpecError, UnknownNameError

# Link defaults: 100 Gb/s is one MRC NIC port per plane (sources §1.1);
# 64 packets is BMv2's default egress queue capacity (sources §7.6);
# 1 us per link is this project's choice (docs/topology-format.md).
DEFAULT_RATE_GBPS = 100.0
DEFAULT_DELAY_US = 1.0
DEFAULT_QUEUE_PACKETS = 64
# The paper's switch is a 512-port 51.2T box (sources §1.2).
DEFAULT_RADIX = 512
# v1model ports are bit<9>; 511 is BMv2's drop port (sources §7.1, §7.3).
DEFAULT_PORT_BITS = 9
# Port 0 is where an ingress that forgets to set egress_spec sends packets (sources §7.2),
# so no link uses it: a forwarding bug then drops instead of reaching a neighbour.
DEFAULT_FIRST_PORT = 1
DEFAULT_USID_BLOCK = IPv6Network("fcbb:bb00::/32")
DEFAULT_NIC_PREFIX = IPv6Network("fd6d:7263::/48")

_SWITCH_NAME = re.compile(r"p(0|[1-9][0-9]*)-(t0|t1)-(0|[1-9][0-9]*)")
_NIC_NAME = re.compile(r"nic(0|[1-9][0-9]*)")


class Role(StrEnum):
    """Tier of a switch: T0 = leaf (NICs below, T1s above), T1 = spine."""

    T0 = "t0"
    T1 = "t1"


class LinkKind(StrEnum):
    ACCESS = "access"  # NIC port <-> T0 downlink
    FABRIC = "fabric"  # T0 uplink <-> T1


def switch_name(plane: int, role: Role, index: int) -> str:
    """Derived switch name, e.g. ``p0-t0-1`` or ``p1-t1-0``."""
    return f"p{plane}-{role.value}-{index}"


def nic_name(index: int) -> str:
    """Derived NIC name, e.g. ``nic0``."""
    return f"nic{index}"


@dataclass(frozen=True, slots=True)
class LinkParams:
    """Physical properties of a link: rate (Gb/s), one-way delay (us), queue depth (packets)."""

    rate_gbps: float = DEFAULT_RATE_GBPS
    delay_us: float = DEFAULT_DELAY_US
    queue_packets: int = DEFAULT_QUEUE_PACKETS

    def merged(
        self,
        rate_gbps: float | None = None,
        delay_us: float | None = None,
        queue_packets: int | None = None,
    ) -> LinkParams:
        """These parameters with the given (non-None) values replaced."""
        return LinkParams(
            self.rate_gbps if rate_gbps is None else rate_gbps,
            self.delay_us if delay_us is None else delay_us,
            self.queue_packets if queue_packets is None else queue_packets,
        )


@dataclass(frozen=True, slots=True)
class SwitchSettings:
    """Port numbering of every switch. ``cpu_port=None`` means ``2**port_bits - 2`` (510)."""

    radix: int = DEFAULT_RADIX
    port_bits: int = DEFAULT_PORT_BITS
    first_port: int = DEFAULT_FIRST_PORT
    cpu_port: int | None = None

    def __post_init__(self) -> None:
        if self.cpu_port is None:
            object.__setattr__(self, "cpu_port", (1 << self.port_bits) - 2)

    @property
    def drop_port(self) -> int:
        """BMv2's drop port: the highest port number (511 for 9-bit ports)."""
        return (1 << self.port_bits) - 1


@dataclass(frozen=True, slots=True)
class AddressingSettings:
    """Address blocks the address plan derives everything from (docs/addressing.md)."""

    usid_block: IPv6Network = DEFAULT_USID_BLOCK
    nic_prefix: IPv6Network = DEFAULT_NIC_PREFIX


@dataclass(frozen=True, slots=True)
class Plane:
    """One plane: ``index``, its T0 and T1 counts and the link parameters its links default to."""

    index: int
    t0_count: int
    t1_count: int
    link_defaults: LinkParams = LinkParams()

    def t0_names(self) -> list[str]:
        return [switch_name(self.index, Role.T0, i) for i in range(self.t0_count)]

    def t1_names(self) -> list[str]:
        return [switch_name(self.index, Role.T1, i) for i in range(self.t1_count)]


@dataclass(frozen=True, slots=True)
class TopologySwitch:
    """One switch. Port numbering (docs/topology-format.md):

    - T0: ``downlinks[k]`` = ``first_port + k`` leads to its k-th NIC;
      ``uplinks[j]`` = ``first_port + nics_per_t0 + uplink_index`` leads to T1 ``j``.
    - T1: ``downlinks[i]`` = ``first_port + i`` leads to T0 ``i`` of its plane; no uplinks.
    """

    name: str
    role: Role
    plane: int
    index: int
    downlinks: range
    uplinks: Sequence[int]

    @property
    def ports(self) -> tuple[int, ...]:
        """Every port that has a link, ascending."""
        return tuple(sorted((*self.downlinks, *self.uplinks)))


@dataclass(frozen=True, slots=True)
class Nic:
    """A NIC: one port per plane, port number = plane number."""

    name: str
    index: int
    t0_index: int  # attached to T0 ``t0_index`` of every plane
    downlink_index: int  # ... on that T0's downlink ``downlink_index``


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One end of a link: a node (switch or NIC name) and its port."""

    node: str  # switch or NIC name
    port: int  # switch port number, or the plane number for a NIC port

    def __str__(self) -> str:
        return f"{self.node}:{self.port}"


@dataclass(frozen=True, slots=True)
class Link:
    """A point-to-point link; ``a`` is the lower tier (NIC or T0), ``b`` the upper (T0 or T1)."""

    a: Endpoint
    b: Endpoint
    kind: LinkKind
    plane: int
    rate_gbps: float
    delay_us: float
    queue_packets: int

    def endpoint(self, node: str) -> Endpoint:
        """This link's endpoint on ``node``."""
        if node == self.a.node:
            return self.a
        if node == self.b.node:
            return self.b
        raise UnknownNameError(f"link {self} does not touch {node!r}")

    def other(self, node: str) -> Endpoint:
        """The far endpoint as seen from ``node``."""
        return self.b if self.endpoint(node) is self.a else self.a

    def __str__(self) -> str:
        return f"{self.a} -- {self.b}"


@dataclass(frozen=True, slots=True)
class NicPort:
    """Where a NIC's port on one plane plugs in."""

    nic: str
    plane: int
    port: int  # the NIC's own port number (= plane)
    t0: str
    t0_port: int


@dataclass(frozen=True, slots=True)
class LinkOverride:
    """Per-link settings named by the link's two endpoints (either order)."""

    between: tuple[str, str]
    rate_gbps: float | None = None
    delay_us: float | None = None
    queue_packets: int | None = None
    uplink_index: int | None = None  # T0-T1 links only: T0 port = first + nics_per_t0 + index


class NicSequence(Sequence[Nic]):
    """All NICs of a topology, built on access (131,072 NICs cost nothing until used)."""

    def __init__(self, count: int, nics_per_t0: int) -> None:
        self._count = count
        self._nics_per_t0 = nics_per_t0

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Nic: ...
    @overload
    def __getitem__(self, index: slice) -> list[Nic]: ...
    def __getitem__(self, index: int | slice) -> Nic | list[Nic]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(f"NIC index {index} out of range (0..{self._count - 1})")
        t0, k = divmod(index, self._nics_per_t0)
        return Nic(nic_name(index), index, t0, k)


SwitchRef = str | TopologySwitch
NicRef = str | int | Nic


@dataclass(frozen=True)
class Topology:
    """A multi-plane two-tier fabric. Build it with ``topologies.load`` or a generator."""

    name: str
    planes: tuple[Plane, ...]
    t0_per_plane: int
    nics_per_t0: int
    switch_settings: SwitchSettings = SwitchSettings()
    addressing: AddressingSettings = AddressingSettings()
    overrides: tuple[LinkOverride, ...] = ()
    source: str = "<topology>"
    description: str = ""
    # Derived indexes, built once in __post_init__.
    _switches: tuple[TopologySwitch, ...] = field(init=False, repr=False, compare=False)
    _plane_offsets: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _override_params: dict[tuple[str, str], LinkOverride] = field(
        init=False, repr=False, compare=False
    )
    # (plane, t0) -> uplink index per T1 index, only for T0s whose cabling is overridden
    _uplink_indexes: dict[tuple[int, int], tuple[int, ...]] = field(
        init=False, repr=False, compare=False
    )
    _uplink_t1: dict[tuple[int, int], dict[int, int]] = field(init=False, repr=False, compare=False)
    # NIC name -> Nic, filled by nic() as names are looked up (every field above is fixed
    # after construction, so a name always resolves to the same Nic)
    _nic_by_name: dict[str, Nic] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check_counts()
        object.__setattr__(self, "_nic_by_name", {})
        override_params, uplinks = self._resolve_overrides()
        object.__setattr__(self, "_override_params", override_params)
        object.__setattr__(self, "_uplink_indexes", uplinks)
        object.__setattr__(
            self,
            "_uplink_t1",
            {key: {u: j for j, u in enumerate(idx)} for key, idx in uplinks.items()},
        )
        self._check_ports()
        offsets = []
        switches: list[TopologySwitch] = []
        for plane in self.planes:
            offsets.append(len(switches))
            switches.extend(
                self._make_switch(plane.index, Role.T0, i) for i in range(plane.t0_count)
            )
            switches.extend(
                self._make_switch(plane.index, Role.T1, i) for i in range(plane.t1_count)
            )
        object.__setattr__(self, "_switches", tuple(switches))
        object.__setattr__(self, "_plane_offsets", tuple(offsets))

    # ---------------------------------------------------------------- validation

    def _error(self, key_path: str, reason: str) -> TopologySpecError:
        return TopologySpecError(self.source, key_path, reason)

    def _check_counts(self) -> None:
        if not self.planes:
            raise self._error("planes", "a fabric needs at least one plane")
        for key, value in (("t0_per_plane", self.t0_per_plane), ("nics_per_t0", self.nics_per_t0)):
            if value < 1:
                raise self._error(key, f"must be a positive integer, got {value}")
        for position, plane in enumerate(self.planes):
            if plane.index != position:
                raise self._error(
                    f"planes[{position}]", f"plane index {plane.index} is out of order"
                )
            if plane.t0_count != self.t0_per_plane:
                raise self._error(
                    f"planes[{position}].t0_per_plane",
                    f"every plane must have the same {self.t0_per_plane} T0s (NIC i attaches to "
                    f"T0 i // nics_per_t0 in every plane), got {plane.t0_count}",
                )
            if plane.t1_count < 1:
                raise self._error(
                    f"planes[{position}].t1_per_plane",
                    f"must be a positive integer, got {plane.t1_count}",
                )
        settings = self.switch_settings
        if settings.first_port < 0:
            raise self._error(
                "switches.first_port", f"must be a non-negative integer, got {settings.first_port}"
            )

    def _resolve_overrides(
        self,
    ) -> tuple[dict[tuple[str, str], LinkOverride], dict[tuple[int, int], tuple[int, ...]]]:
        params: dict[tuple[str, str], LinkOverride] = {}
        first_seen: dict[tuple[str, str], int] = {}
        # (plane, t0) -> {t1 index: (uplink index, links[i] that set it)}
        uplink_sets: dict[tuple[int, int], dict[int, tuple[int, int]]] = {}
        for i, override in enumerate(self.overrides):
            key = self._override_key(i, override)
            if key in first_seen:
                raise self._error(
                    f"links[{i}].between",
                    f"duplicate override of link {key[0]} -- {key[1]} "
                    f"(already set by links[{first_seen[key]}])",
                )
            first_seen[key] = i
            if (
                override.rate_gbps is None
                and override.delay_us is None
                and override.queue_packets is None
                and override.uplink_index is None
            ):
                raise self._error(
                    f"links[{i}]",
                    "sets nothing: give rate_gbps, delay_us, queue_packets or uplink_index",
                )
            params[key] = override
            if override.uplink_index is not None:
                lower = _parse_name(key[0])
                upper = _parse_name(key[1])
                assert lower is not None and upper is not None  # checked by _override_key
                if lower[0] != "t0":
                    raise self._error(
                        f"links[{i}].uplink_index",
                        f"only T0-T1 links have an uplink index; {key[0]} -- {key[1]} is a NIC link",
                    )
                if override.uplink_index < 0:
                    raise self._error(
                        f"links[{i}].uplink_index",
                        f"must be a non-negative integer, got {override.uplink_index}",
                    )
                uplink_sets.setdefault((lower[1], lower[2]), {})[upper[2]] = (
                    override.uplink_index,
                    i,
                )
        uplinks: dict[tuple[int, int], tuple[int, ...]] = {}
        for (plane, t0), chosen in uplink_sets.items():
            indexes = []
            owner: dict[int, tuple[int, int | None]] = {}  # uplink index -> (t1, links[i])
            for t1 in range(self.planes[plane].t1_count):
                index, origin = chosen.get(t1, (t1, None))
                if index in owner:
                    other_t1, other_origin = owner[index]
                    culprit = origin if origin is not None else other_origin
                    assert culprit is not None  # two defaults never collide
                    t0_name = switch_name(plane, Role.T0, t0)
                    first, second = sorted((other_t1, t1))
                    raise self._error(
                        f"links[{culprit}].uplink_index",
                        f"uplink {index} of {t0_name} would lead to both "
                        f"{switch_name(plane, Role.T1, first)} and "
                        f"{switch_name(plane, Role.T1, second)}; every T1 needs its own uplink "
                        "(give the other link an uplink_index too)",
                    )
                owner[index] = (t1, origin)
                indexes.append(index)
            uplinks[(plane, t0)] = tuple(indexes)
        return params, uplinks

    def _override_key(self, i: int, override: LinkOverride) -> tuple[str, str]:
        """The (lower, upper) endpoint names of the link an override names, or an error."""
        key_path = f"links[{i}].between"
        if len(override.between) != 2:
            raise self._error(
                key_path, f"must name exactly 2 endpoints, got {len(override.between)}"
            )
        a, b = override.between
        if a == b:
            raise self._error(key_path, f"names {a!r} twice; a link joins two different nodes")
        parsed: list[tuple[str, int, int]] = []
        for name in (a, b):
            node = _parse_name(name)
            problem = self._node_problem(name, node)
            if problem or node is None:
                raise self._error(key_path, problem or f"bad name {name!r}")
            parsed.append(node)
        (ka, pa, ia), (kb, pb, ib) = parsed
        order = {"nic": 0, "t0": 1, "t1": 2}
        if order[ka] > order[kb]:
            (ka, pa, ia, a), (kb, pb, ib, b) = (kb, pb, ib, b), (ka, pa, ia, a)
        if ka == "nic" and kb == "t0":
            t0 = ia // self.nics_per_t0
            if ib != t0:
                raise self._error(
                    key_path,
                    f"there is no link {a} -- {b}: {a} attaches to T0 index {t0} "
                    f"(p{pb}-t0-{t0} in plane {pb})",
                )
            return a, b
        if ka == "t0" and kb == "t1":
            if pa != pb:
                raise self._error(
                    key_path,
                    f"{a} is in plane {pa} and {b} in plane {pb}; planes are disjoint "
                    "networks and no link joins two planes",
                )
            return a, b
        if ka == "nic" and kb == "t1":
            reason = "NICs attach only to T0 switches"
        elif ka == kb == "nic":
            reason = "NICs are never linked to each other"
        else:
            reason = f"two {ka.upper()} switches are never linked (T0s link only to T1s)"
        raise self._error(key_path, f"there is no link {a} -- {b}: {reason}")

    def _node_problem(self, name: str, node: tuple[str, int, int] | None) -> str | None:
        if node is None:
            return (
                f"no switch or NIC named {name!r} (switches are p<plane>-t0-<i> and "
                "p<plane>-t1-<i>, NICs nic<i>)"
            )
        kind, plane, index = node
        if kind == "nic":
            if index >= self.nic_count:
                return f"no NIC named {name!r} (NICs are nic0..nic{self.nic_count - 1})"
            return None
        if plane >= len(self.planes):
            return f"no switch named {name!r} (planes are 0..{len(self.planes) - 1})"
        count = self.planes[plane].t0_count if kind == "t0" else self.planes[plane].t1_count
        if index >= count:
            return (
                f"no switch named {name!r} (plane {plane} has {kind.upper()}s "
                f"p{plane}-{kind}-0..p{plane}-{kind}-{count - 1})"
            )
        return None

    def _check_ports(self) -> None:
        settings = self.switch_settings
        first, radix, n = settings.first_port, settings.radix, self.nics_per_t0
        highest: tuple[int, str] = (-1, "")
        if self.t0_per_plane > radix:
            raise self._error(
                "switches.radix",
                f"each T1 needs {self.t0_per_plane} ports (one per T0 of its plane) "
                f"but the radix is {radix}",
            )
        for plane in self.planes:
            used = n + plane.t1_count
            if used > radix:
                raise self._error(
                    "switches.radix",
                    f"each T0 of plane {plane.index} needs {used} ports ({n} NIC downlinks + "
                    f"{plane.t1_count} T1 uplinks) but the radix is {radix}",
                )
            for port, name in (
                (first + n + plane.t1_count - 1, switch_name(plane.index, Role.T0, 0)),
                (first + self.t0_per_plane - 1, switch_name(plane.index, Role.T1, 0)),
            ):
                if port > highest[0]:  # report the first switch needing the highest port
                    highest = (port, name)
        for (plane, t0), indexes in self._uplink_indexes.items():
            port = first + n + max(indexes)
            name = switch_name(plane, Role.T0, t0)
            if port >= first + radix:
                raise self._error(
                    "switches.radix",
                    f"{name} uplink index {max(indexes)} puts a port at {port}, beyond the "
                    f"radix ({radix} ports numbered {first}..{first + radix - 1})",
                )
            if port > highest[0]:
                highest = (port, name)
        drop = settings.drop_port
        if highest[0] >= drop:
            raise self._error(
                "switches.port_bits",
                f"{highest[1]} needs port {highest[0]}, but {settings.port_bits}-bit port numbers "
                f"stop at {drop - 1} ({drop} is the drop port); raise switches.port_bits",
            )
        cpu = settings.cpu_port
        assert cpu is not None  # filled in by SwitchSettings.__post_init__
        if not 0 <= cpu < drop:
            raise self._error(
                "switches.cpu_port",
                f"{cpu} is not a {settings.port_bits}-bit port number below the drop port {drop}",
            )
        user = self._data_port_user(cpu)
        if user is not None:
            raise self._error(
                "switches.cpu_port",
                f"{cpu} is also data port {cpu} of {user} (data ports are numbered from "
                f"switches.first_port={first})",
            )

    def _data_port_user(self, port: int) -> str | None:
        """Name of a switch using ``port`` for a link, if any."""
        first, n = self.switch_settings.first_port, self.nics_per_t0
        if first <= port < first + self.t0_per_plane:
            return switch_name(0, Role.T1, 0)
        for plane in self.planes:
            if first <= port < first + n + plane.t1_count:
                return switch_name(plane.index, Role.T0, 0)
        for (plane, t0), indexes in self._uplink_indexes.items():
            if port - first - n in indexes:
                return switch_name(plane, Role.T0, t0)
        return None

    # ---------------------------------------------------------------- sizes

    @property
    def plane_count(self) -> int:
        return len(self.planes)

    @property
    def nic_count(self) -> int:
        return self.t0_per_plane * self.nics_per_t0

    @property
    def switch_count(self) -> int:
        return len(self._switches)

    @property
    def link_count(self) -> int:
        """Number of links, without building them."""
        return sum(self.nic_count + p.t0_count * p.t1_count for p in self.planes)

    def summary(self) -> str:
        shapes = sorted({(p.t0_count, p.t1_count) for p in self.planes})
        shape = " / ".join(f"{t0} T0 + {t1} T1" for t0, t1 in shapes)
        return (
            f"{self.name}: {self.plane_count} planes x ({shape}), {self.nic_count} NICs "
            f"({self.nics_per_t0} per T0), {self.switch_count} switches, {self.link_count} links"
        )

    # ---------------------------------------------------------------- planes and switches

    def plane(self, index: int) -> Plane:
        if not 0 <= index < len(self.planes):
            raise UnknownNameError(
                f"{self.name}: no plane {index} (planes are 0..{len(self.planes) - 1})"
            )
        return self.planes[index]

    @property
    def switches(self) -> tuple[TopologySwitch, ...]:
        """Every switch: plane by plane, T0s then T1s, by index."""
        return self._switches

    def switch(self, name: SwitchRef) -> TopologySwitch:
        if isinstance(name, TopologySwitch):
            name = name.name
        node = _parse_name(name)
        if node is None or node[0] == "nic":
            raise UnknownNameError(
                f"{self.name}: no switch named {name!r} (switches are p<plane>-t0-<i> "
                "and p<plane>-t1-<i>)"
            )
        problem = self._node_problem(name, node)
        if problem:
            raise UnknownNameError(f"{self.name}: {problem}")
        kind, plane, index = node
        return self._switch_at(plane, Role(kind), index)

    def _switch_at(self, plane: int, role: Role, index: int) -> TopologySwitch:
        base = self._plane_offsets[plane]
        return self._switches[base + index if role is Role.T0 else base + self.t0_per_plane + index]

    def t0(self, plane: int, index: int) -> TopologySwitch:
        return self.switch(switch_name(plane, Role.T0, index))

    def t1(self, plane: int, index: int) -> TopologySwitch:
        return self.switch(switch_name(plane, Role.T1, index))

    def has_node(self, name: str) -> bool:
        """True if ``name`` is a switch or NIC of this topology."""
        node = _parse_name(name)
        return node is not None and self._node_problem(name, node) is None

    def _make_switch(self, plane: int, role: Role, index: int) -> TopologySwitch:
        first = self.switch_settings.first_port
        if role is Role.T1:
            return TopologySwitch(
                switch_name(plane, role, index),
                role,
                plane,
                index,
                range(first, first + self.t0_per_plane),
                (),
            )
        return TopologySwitch(
            switch_name(plane, role, index),
            role,
            plane,
            index,
            range(first, first + self.nics_per_t0),
            self.uplink_ports(plane, index),
        )

    # ---------------------------------------------------------------- NICs

    @property
    def nics(self) -> NicSequence:
        """Every NIC, by index (built on access)."""
        return NicSequence(self.nic_count, self.nics_per_t0)

    def nic(self, ref: NicRef) -> Nic:
        """A NIC by name (``nic3``), index (3) or Nic."""
        if type(ref) is str:
            found = self._nic_by_name.get(ref)
            if found is not None:
                return found
        if isinstance(ref, Nic):
            ref = ref.index
        if isinstance(ref, str):
            node = _parse_name(ref)
            if node is None or node[0] != "nic":
                raise UnknownNameError(f"{self.name}: no NIC named {ref!r} (NICs are nic<i>)")
            index = node[2]
        else:
            index = ref
        if not 0 <= index < self.nic_count:
            shown = f"named {ref!r}" if isinstance(ref, str) else f"with index {index}"
            raise UnknownNameError(
                f"{self.name}: no NIC {shown} (NICs are nic0..nic{self.nic_count - 1})"
            )
        t0, k = divmod(index, self.nics_per_t0)
        nic = Nic(nic_name(index), index, t0, k)
        if type(ref) is str:
            self._nic_by_name[ref] = nic
        return nic

    def nics_under(self, t0_index: int) -> range:
        """Indexes of the NICs attached to T0 ``t0_index`` (of every plane)."""
        if not 0 <= t0_index < self.t0_per_plane:
            raise UnknownNameError(
                f"{self.name}: no T0 index {t0_index} (0..{self.t0_per_plane - 1})"
            )
        return range(t0_index * self.nics_per_t0, (t0_index + 1) * self.nics_per_t0)

    def nic_port(self, nic: NicRef, plane: int) -> NicPort:
        """Where ``nic``'s port on ``plane`` attaches (its T0 and that T0's port)."""
        found = self.nic(nic)
        self.plane(plane)
        return NicPort(
            found.name,
            plane,
            plane,
            switch_name(plane, Role.T0, found.t0_index),
            self.switch_settings.first_port + found.downlink_index,
        )

    # ---------------------------------------------------------------- ports

    def uplink_index(self, plane: int, t0: int, t1: int) -> int:
        """Uplink index of T0 ``t0`` toward T1 ``t1`` (identity unless overridden)."""
        indexes = self._uplink_indexes.get((plane, t0))
        return t1 if indexes is None else indexes[t1]

    def uplink_ports(self, plane: int, t0: int) -> Sequence[int]:
        """Port of T0 ``t0`` toward each T1 of its plane, indexed by T1 index."""
        base = self.switch_settings.first_port + self.nics_per_t0
        indexes = self._uplink_indexes.get((plane, t0))
        if indexes is None:
            return range(base, base + self.planes[plane].t1_count)
        return tuple(base + u for u in indexes)

    def t1_port(self, t0: int) -> int:
        """Port of every T1 toward T0 index ``t0`` of its plane."""
        return self.switch_settings.first_port + t0

    def downlink_port(self, nic: NicRef) -> int:
        """Port of the NIC's T0 (the same in every plane) toward the NIC."""
        return self.switch_settings.first_port + self.nic(nic).downlink_index

    # ---------------------------------------------------------------- links

    def _link_params(self, plane: int, lower: str, upper: str) -> LinkParams:
        params = self.planes[plane].link_defaults
        override = self._override_params.get((lower, upper)) if self._override_params else None
        if override is None:
            return params
        return params.merged(override.rate_gbps, override.delay_us, override.queue_packets)

    def _access_link(self, plane: int, nic: int) -> Link:
        t0, k = divmod(nic, self.nics_per_t0)
        lower, upper = nic_name(nic), switch_name(plane, Role.T0, t0)
        p = self._link_params(plane, lower, upper)
        return Link(
            Endpoint(lower, plane),
            Endpoint(upper, self.switch_settings.first_port + k),
            LinkKind.ACCESS,
            plane,
            p.rate_gbps,
            p.delay_us,
            p.queue_packets,
        )

    def _fabric_link(self, plane: int, t0: int, t1: int) -> Link:
        lower, upper = switch_name(plane, Role.T0, t0), switch_name(plane, Role.T1, t1)
        p = self._link_params(plane, lower, upper)
        t0_port = self.switch_settings.first_port + self.nics_per_t0
        t0_port += self.uplink_index(plane, t0, t1)
        return Link(
            Endpoint(lower, t0_port),
            Endpoint(upper, self.t1_port(t0)),
            LinkKind.FABRIC,
            plane,
            p.rate_gbps,
            p.delay_us,
            p.queue_packets,
        )

    def links(self) -> Iterator[Link]:
        """Every link, generated lazily: per plane, per T0, its NIC links then its T1 links."""
        for plane in self.planes:
            for t0 in range(plane.t0_count):
                for nic in self.nics_under(t0):
                    yield self._access_link(plane.index, nic)
                for t1 in range(plane.t1_count):
                    yield self._fabric_link(plane.index, t0, t1)

    def links_of(self, name: str) -> list[Link]:
        """Every link of a switch or NIC, in port order (a NIC's ports are its planes)."""
        node = _parse_name(name)
        problem = self._node_problem(name, node)
        if problem:
            raise UnknownNameError(f"{self.name}: {problem}")
        assert node is not None
        kind, plane, index = node
        if kind == "nic":
            return [self._access_link(p, index) for p in range(len(self.planes))]
        if kind == "t1":
            return [self._fabric_link(plane, t0, index) for t0 in range(self.t0_per_plane)]
        links = [self._access_link(plane, nic) for nic in self.nics_under(index)]
        fabric = [self._fabric_link(plane, index, t1) for t1 in range(self.planes[plane].t1_count)]
        return links + sorted(fabric, key=lambda link: link.a.port)

    def link(self, a: str, b: str) -> Link:
        """The link between nodes ``a`` and ``b`` (either order)."""
        nodes = []
        for name in (a, b):
            node = _parse_name(name)
            problem = self._node_problem(name, node)
            if problem:
                raise UnknownNameError(f"{self.name}: {problem}")
            assert node is not None
            nodes.append(node)
        by_kind = {node[0]: node for node in nodes}
        if by_kind.keys() == {"t0", "t1"} and nodes[0][1] == nodes[1][1]:
            return self._fabric_link(nodes[0][1], by_kind["t0"][2], by_kind["t1"][2])
        if by_kind.keys() == {"nic", "t0"}:
            plane, t0 = by_kind["t0"][1], by_kind["t0"][2]
            nic = by_kind["nic"][2]
            if nic // self.nics_per_t0 == t0:
                return self._access_link(plane, nic)
        raise UnknownNameError(f"{self.name}: there is no link {a} -- {b}")

    def peer(self, node: SwitchRef, port: int) -> Endpoint:
        """The far end of the link on ``node``'s ``port`` (for a NIC, port = plane)."""
        if isinstance(node, TopologySwitch):
            node = node.name
        parsed = _parse_name(node)
        problem = self._node_problem(node, parsed)
        if problem:
            raise UnknownNameError(f"{self.name}: {problem}")
        assert parsed is not None
        kind, plane, index = parsed
        first, n = self.switch_settings.first_port, self.nics_per_t0
        if kind == "nic":
            if not 0 <= port < len(self.planes):
                raise UnknownNameError(
                    f"{self.name}: {node} has no port {port} (its ports are planes "
                    f"0..{len(self.planes) - 1})"
                )
            return self._access_link(port, index).b
        if kind == "t1":
            if first <= port < first + self.t0_per_plane:
                t0 = port - first
                return Endpoint(
                    switch_name(plane, Role.T0, t0), first + n + self.uplink_index(plane, t0, index)
                )
        elif first <= port < first + n:
            return Endpoint(nic_name(index * n + port - first), plane)
        else:
            t1 = self._uplink_to_t1(plane, index, port - first - n)
            if t1 is not None:
                return Endpoint(switch_name(plane, Role.T1, t1), self.t1_port(index))
        raise UnknownNameError(
            f"{self.name}: {node} has no link on port {port} (ports: "
            f"{_describe_ports(self._switch_at(plane, Role(kind), index).ports)})"
        )

    def _uplink_to_t1(self, plane: int, t0: int, uplink: int) -> int | None:
        reverse = self._uplink_t1.get((plane, t0))
        if reverse is not None:
            return reverse.get(uplink)
        return uplink if 0 <= uplink < self.planes[plane].t1_count else None


def _parse_name(name: str) -> tuple[str, int, int] | None:
    """('nic', -1, index) or ('t0'|'t1', plane, index); None if not a derived name."""
    if not isinstance(name, str):
        return None
    match = _SWITCH_NAME.fullmatch(name)
    if match:
        return match[2], int(match[1]), int(match[3])
    match = _NIC_NAME.fullmatch(name)
    if match:
        return "nic", -1, int(match[1])
    return None


def _describe_ports(ports: Sequence[int]) -> str:
    """Compact rendering like ``1..4, 7``."""
    runs: list[str] = []
    start = prev = None
    for port in ports:
        if prev is not None and port == prev + 1:
            prev = port
            continue
        if start is not None:
            runs.append(f"{start}..{prev}" if prev != start else f"{start}")
        start = prev = port
    if start is not None:
        runs.append(f"{start}..{prev}" if prev != start else f"{start}")
    return ", ".join(runs) or "none"
