"""The address plan: every uSID, address, MAC and EV -> path rule, derived from a Topology.

Layouts (rationale and sources in docs/addressing.md):

uSID carrier (outer IPv6 destination, 128 bits; RFC 9800 "F3216" format)::

    | block (32) | uSID 1 | uSID 2 | uSID 3 | uSID 4 | uSID 5 | uSID 6 |   16 bits each
    via a T1:    | block | src T0 | T1 | dst T0 | downlink | 0 | 0 |
    same T0:     | block | T0 | downlink | 0 | 0 | 0 | 0 |

Node uSID (one per switch, unique in the whole fabric; < 0xE000)::

    bits 15..12 plane (0..13) | bits 11..10 role (01 = T0, 10 = T1) | bits 9..0 index

Downlink uSID (local to a T0, last hop to a NIC port; in the local range >= 0xE000)::

    0xE000 | plane << 9 | downlink index (0..511)

Entropy value (32 bits; UDP source port = bits 31..16, flow label = bits 15..0)::

    bits 31..28 plane | bits 27..16 T1 index | bits 15..0 salt
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from ipaddress import AddressValueError, IPv6Address, IPv6Network, NetmaskValueError
from typing import NamedTuple

from topologies.exceptions import AddressingError, UnknownNameError, UsidSpaceError
from topologies.model import Nic, NicRef, Role, SwitchRef, Topology, nic_name, switch_name

BLOCK_BITS = 32
USID_BITS = 16
USID_MASK = 0xFFFF
CARRIER_USIDS = (128 - BLOCK_BITS) // USID_BITS  # 6 uSIDs fit after the block
END_OF_CARRIER = 0x0000  # the "end of carrier" uSID (sources §2.2)
NIC_PREFIX_BITS = 48

USID_PLANE_SHIFT = 12
USID_ROLE_SHIFT = 10
USID_INDEX_BITS = 10
ROLE_CODES = {Role.T0: 0b01, Role.T1: 0b10}
_ROLE_BY_CODE = {code: role for role, code in ROLE_CODES.items()}
# RFC 9800's F3216 format splits the 16-bit space into global (GIB) and local (LIB)
# uSIDs; 0xE000 is the LIB start used by FRR ("usid-f3216") and IOS XR.
LIB_START = 0xE000
MAX_PLANES = LIB_START >> USID_PLANE_SHIFT  # 14: plane 14 would enter the local range
MAX_SWITCHES_PER_ROLE = 1 << USID_INDEX_BITS  # 1024 T0s and 1024 T1s per plane
DOWNLINK_PLANE_SHIFT = 9
MAX_DOWNLINKS = 1 << DOWNLINK_PLANE_SHIFT  # 512 NIC ports per T0

EV_BITS = 32
EV_PLANE_SHIFT = 28
EV_PLANE_BITS = 4
EV_T1_SHIFT = 16
EV_T1_BITS = 12
EV_SALT_BITS = 16
EV_SALT_MASK = (1 << EV_SALT_BITS) - 1
FLOW_LABEL_BITS = 20


class RouteKind(StrEnum):
    TO_T1 = "to_t1"  # on a T0: next uSID is a T1 of the plane -> that uplink
    TO_NIC = "to_nic"  # on a T0: next uSID is a local downlink -> the NIC port
    TO_T0 = "to_t0"  # on a T1: next uSID is a T0 of the plane -> the port toward it


class UsidRoute(NamedTuple):
    """One ``usid_route`` entry: after the shift, active uSID ``usid`` -> egress ``port``."""

    usid: int
    port: int
    kind: RouteKind


class EvFields(NamedTuple):
    """The raw bit fields of an entropy value (before reduction to the fabric's sizes)."""

    plane: int
    t1_index: int
    salt: int


class UsidInfo(NamedTuple):
    """What a 16-bit uSID names: kind is t0, t1, downlink, end or unassigned."""

    usid: int
    kind: str
    plane: int | None
    index: int | None  # switch index, or downlink index for a downlink uSID
    name: str  # switch name, ``downlink <k>`` or a short explanation

    def __str__(self) -> str:
        return f"{self.usid:04x}({self.name})"


@dataclass(frozen=True, slots=True)
class Path:
    """One path through the fabric and the carrier that steers a packet along it."""

    plane: int
    t1: str | None  # None when source and destination share a T0
    switches: tuple[str, ...]
    carrier: int  # 128-bit outer destination address

    @property
    def carrier_address(self) -> IPv6Address:
        return IPv6Address(self.carrier)

    @property
    def carrier_bytes(self) -> bytes:
        return self.carrier.to_bytes(16, "big")

    @property
    def usids(self) -> tuple[int, ...]:
        """The uSIDs of the carrier, up to (not including) the end-of-carrier."""
        return _usids_of(self.carrier)


@dataclass(frozen=True, slots=True)
class CarrierInfo:
    """A decoded outer destination address (for diagnostics)."""

    address: IPv6Address
    block: int
    in_block: bool  # the 32 high bits are this fabric's uSID block
    usids: tuple[UsidInfo, ...]  # up to the end-of-carrier
    after_end: tuple[int, ...]  # non-zero uSIDs after the end-of-carrier (malformed)

    def __str__(self) -> str:
        parts = [f"{self.block >> 16:04x}:{self.block & USID_MASK:04x}"]
        if not self.in_block:
            parts[0] += "(foreign block)"
        parts.extend(str(info) for info in self.usids)
        parts.append("end")
        if self.after_end:
            parts.append("garbage " + ",".join(f"{u:04x}" for u in self.after_end))
        return " | ".join(parts)


# ------------------------------------------------------------------ pure bit codecs


def node_usid(plane: int, role: Role, index: int) -> int:
    """The node uSID of switch ``index`` of ``role`` in ``plane``."""
    if not 0 <= plane < MAX_PLANES:
        raise UsidSpaceError(
            f"plane {plane} does not fit the uSID plane field (0..{MAX_PLANES - 1})"
        )
    if not 0 <= index < MAX_SWITCHES_PER_ROLE:
        raise UsidSpaceError(
            f"{role.value.upper()} index {index} does not fit the uSID index field "
            f"(0..{MAX_SWITCHES_PER_ROLE - 1})"
        )
    return plane << USID_PLANE_SHIFT | ROLE_CODES[role] << USID_ROLE_SHIFT | index


def downlink_usid_of(plane: int, downlink_index: int) -> int:
    """The local uSID a T0 of ``plane`` uses for its downlink ``downlink_index``."""
    if not 0 <= plane < MAX_PLANES:
        raise UsidSpaceError(
            f"plane {plane} does not fit the uSID plane field (0..{MAX_PLANES - 1})"
        )
    if not 0 <= downlink_index < MAX_DOWNLINKS:
        raise UsidSpaceError(
            f"downlink index {downlink_index} does not fit the downlink uSID (0..{MAX_DOWNLINKS - 1})"
        )
    return LIB_START | plane << DOWNLINK_PLANE_SHIFT | downlink_index


def decode_usid(usid: int) -> UsidInfo:
    """Split a uSID into its fields, without checking it against a topology."""
    if not 0 <= usid <= USID_MASK:
        raise AddressingError(f"uSID {usid:#x} is not a 16-bit value")
    if usid == END_OF_CARRIER:
        return UsidInfo(usid, "end", None, None, "end of carrier")
    if usid >= LIB_START:
        local = usid - LIB_START
        plane, index = local >> DOWNLINK_PLANE_SHIFT, local & (MAX_DOWNLINKS - 1)
        return UsidInfo(usid, "downlink", plane, index, f"p{plane} downlink {index}")
    plane = usid >> USID_PLANE_SHIFT
    role = _ROLE_BY_CODE.get(usid >> USID_ROLE_SHIFT & 0b11)
    index = usid & (MAX_SWITCHES_PER_ROLE - 1)
    if role is None:
        return UsidInfo(usid, "unassigned", plane, None, "unassigned role bits")
    return UsidInfo(usid, role.value, plane, index, switch_name(plane, role, index))


_EV_PLANE_LIMIT = 1 << EV_PLANE_BITS
_EV_T1_LIMIT = 1 << EV_T1_BITS


def encode_ev(plane: int, t1_index: int, salt: int = 0) -> int:
    """Pack EV fields (see the module docstring); checks only the field widths."""
    if 0 <= plane < _EV_PLANE_LIMIT and 0 <= t1_index < _EV_T1_LIMIT and 0 <= salt <= EV_SALT_MASK:
        return plane << EV_PLANE_SHIFT | t1_index << EV_T1_SHIFT | salt
    for label, value, bits in (
        ("plane", plane, EV_PLANE_BITS),
        ("t1_index", t1_index, EV_T1_BITS),
        ("salt", salt, EV_SALT_BITS),
    ):
        if not 0 <= value < 1 << bits:
            raise AddressingError(f"EV {label} {value} does not fit {bits} bits")
    return plane << EV_PLANE_SHIFT | t1_index << EV_T1_SHIFT | salt


def decode_ev(ev: int) -> EvFields:
    """The raw fields of a 32-bit EV."""
    _check_ev(ev)
    return EvFields(
        ev >> EV_PLANE_SHIFT,
        ev >> EV_T1_SHIFT & ((1 << EV_T1_BITS) - 1),
        ev & EV_SALT_MASK,
    )


def split_ev(ev: int) -> tuple[int, int]:
    """(UDP source port, IPv6 flow label) carrying ``ev``: high 16 bits, low 16 bits."""
    _check_ev(ev)
    return ev >> 16, ev & 0xFFFF


def join_ev(udp_source_port: int, flow_label: int) -> int:
    """The EV carried by a packet: UDP source port and the low 16 bits of the flow label."""
    if not 0 <= udp_source_port <= 0xFFFF:
        raise AddressingError(f"UDP source port {udp_source_port} is not a 16-bit value")
    if not 0 <= flow_label < 1 << FLOW_LABEL_BITS:
        raise AddressingError(f"flow label {flow_label} is not a 20-bit value")
    return udp_source_port << 16 | flow_label & 0xFFFF


def _check_ev(ev: int) -> None:
    if not isinstance(ev, int) or not 0 <= ev < 1 << EV_BITS:
        raise AddressingError(f"EV {ev!r} is not a 32-bit unsigned integer")


def _usids_of(carrier: int) -> tuple[int, ...]:
    usids = []
    for slot in range(CARRIER_USIDS):
        usid = carrier >> (128 - BLOCK_BITS - USID_BITS * (slot + 1)) & USID_MASK
        if usid == END_OF_CARRIER:
            break
        usids.append(usid)
    return tuple(usids)


def usid_space_violation(
    plane_count: int, t0_per_plane: int, t1_counts: Sequence[int], nics_per_t0: int
) -> tuple[str, int | None, str] | None:
    """First reason a fabric does not fit the uSID encoding: (field, plane or None, reason).

    ``field`` is one of planes, t0_per_plane, t1_per_plane, nics_per_t0.
    """
    if plane_count > MAX_PLANES:
        return (
            "planes",
            None,
            f"{plane_count} planes do not fit the 4-bit uSID plane field below the local range "
            f"0xE000 (at most {MAX_PLANES}, see docs/addressing.md)",
        )
    if t0_per_plane > MAX_SWITCHES_PER_ROLE:
        return (
            "t0_per_plane",
            None,
            f"{t0_per_plane} T0s per plane do not fit the 10-bit uSID index field "
            f"(at most {MAX_SWITCHES_PER_ROLE}, see docs/addressing.md)",
        )
    for plane, count in enumerate(t1_counts):
        if count > MAX_SWITCHES_PER_ROLE:
            return (
                "t1_per_plane",
                plane,
                f"{count} T1s per plane do not fit the 10-bit uSID index field "
                f"(at most {MAX_SWITCHES_PER_ROLE}, see docs/addressing.md)",
            )
    if nics_per_t0 > MAX_DOWNLINKS:
        return (
            "nics_per_t0",
            None,
            f"{nics_per_t0} NICs per T0 do not fit the 9-bit downlink uSID field "
            f"(at most {MAX_DOWNLINKS}, see docs/addressing.md)",
        )
    return None


def _network(value: str | IPv6Network, bits: int, label: str) -> IPv6Network:
    if isinstance(value, str):
        try:
            value = IPv6Network(value)
        except (AddressValueError, NetmaskValueError, ValueError) as exc:
            raise AddressingError(f"{label} {value!r} is not an IPv6 prefix: {exc}") from None
    if value.prefixlen != bits:
        raise AddressingError(f"{label} {value} must be a /{bits} prefix")
    return value


def _address_int(addr: int | bytes | str | IPv6Address) -> int:
    if isinstance(addr, IPv6Address):
        return int(addr)
    if isinstance(addr, bytes):
        if len(addr) != 16:
            raise AddressingError(f"an IPv6 address is 16 bytes, got {len(addr)}")
        return int.from_bytes(addr, "big")
    if isinstance(addr, str):
        try:
            return int(IPv6Address(addr))
        except AddressValueError as exc:
            raise AddressingError(f"{addr!r} is not an IPv6 address: {exc}") from None
    if isinstance(addr, int) and 0 <= addr < 1 << 128:
        return addr
    raise AddressingError(f"{addr!r} is not an IPv6 address (int, 16 bytes or text)")


def _mac(octets: Sequence[int]) -> str:
    return ":".join(f"{octet:02x}" for octet in octets)


def mac_bytes(mac: str) -> bytes:
    """``02:00:...`` -> 6 bytes."""
    try:
        raw = bytes.fromhex(mac.replace(":", ""))
    except ValueError:
        raw = b""
    if len(raw) != 6:
        raise AddressingError(f"{mac!r} is not a MAC address like 02:00:00:00:00:01")
    return raw


# ------------------------------------------------------------------ the plan


class AddressPlan:
    """Every address of a topology. Pure: all methods derive values, nothing is stored
    per switch or NIC, so the plan of a 131,072-NIC fabric costs nothing until used.

    ``block`` / ``nic_prefix`` default to the topology's ``addressing`` settings (the YAML
    file); pass them only to try another block on purpose.
    """

    def __init__(
        self,
        topology: Topology,
        block: str | IPv6Network | None = None,
        nic_prefix: str | IPv6Network | None = None,
    ) -> None:
        self.topology = topology
        self.block = _network(
            block if block is not None else topology.addressing.usid_block, BLOCK_BITS, "uSID block"
        )
        self.nic_prefix = _network(
            nic_prefix if nic_prefix is not None else topology.addressing.nic_prefix,
            NIC_PREFIX_BITS,
            "NIC prefix",
        )
        if self.block.overlaps(self.nic_prefix):
            raise AddressingError(
                f"NIC prefix {self.nic_prefix} overlaps the uSID block {self.block}; "
                "inner and outer addresses must be distinguishable"
            )
        violation = usid_space_violation(
            topology.plane_count,
            topology.t0_per_plane,
            [p.t1_count for p in topology.planes],
            topology.nics_per_t0,
        )
        if violation is not None:
            raise UsidSpaceError(f"{topology.name}: {violation[2]}")
        self._block_value = int(self.block.network_address) >> (128 - BLOCK_BITS)
        self._carrier_base = int(self.block.network_address)
        self._nic_base = int(self.nic_prefix.network_address)
        # path(): (plane, dst T0, dst downlink) or (plane, src T0, T1, dst T0, dst downlink)
        # -> Path; a path depends on the NICs only through these (int arguments only, so a
        # bool or other int-like argument is computed, not confused with its int value)
        self._paths_by_place: dict[tuple[int, ...], Path] = {}
        # _make_path(): (plane, index) -> (switch name, node uSID) of each T0 and T1 met,
        # int arguments only (as above); a place's miss then formats no name
        self._t0_parts: dict[tuple[int, int], tuple[str, int]] = {}
        self._t1_parts: dict[tuple[int, int], tuple[str, int]] = {}

    # ---------------------------------------------------------------- switches

    def switch_usid(self, switch: SwitchRef) -> int:
        """The node uSID of a switch (plane copied into it, see module docstring)."""
        sw = self.topology.switch(switch)
        return node_usid(sw.plane, sw.role, sw.index)

    def usid_switch(self, usid: int) -> str:
        """The switch whose node uSID is ``usid``."""
        info = self.describe_usid(usid)
        if info.kind not in ("t0", "t1"):
            raise AddressingError(
                f"uSID {usid:#06x} is not a switch of {self.topology.name}: {info.name}"
            )
        return info.name

    def downlink_usid(self, t0: SwitchRef, port: int) -> int:
        """The local uSID that makes ``t0`` send a packet out of its NIC-facing ``port``."""
        sw = self.topology.switch(t0)
        if sw.role is not Role.T0:
            raise AddressingError(f"{sw.name} is a T1; only T0s have NIC downlinks")
        if port not in sw.downlinks:
            raise UnknownNameError(
                f"{sw.name} port {port} is not a NIC downlink (downlinks: "
                f"{sw.downlinks.start}..{sw.downlinks.stop - 1})"
            )
        return downlink_usid_of(sw.plane, port - sw.downlinks.start)

    def locator(self, switch: SwitchRef) -> int:
        """48-bit ``my_usid`` match value: block | node uSID (= DA[127:80] on arrival)."""
        return self._block_value << USID_BITS | self.switch_usid(switch)

    def switch_address(self, switch: SwitchRef) -> IPv6Address:
        """The switch's loopback / SID address ``block:uSID::``."""
        return IPv6Address(self.locator(switch) << (128 - BLOCK_BITS - USID_BITS))

    def switch_mac(self, switch: SwitchRef) -> str:
        """``0a:00:00:00:UU:UU`` with the node uSID (locally administered, unicast)."""
        usid = self.switch_usid(switch)
        return _mac((0x0A, 0, 0, 0, usid >> 8, usid & 0xFF))

    def describe_usid(self, usid: int) -> UsidInfo:
        """What ``usid`` names in this fabric (``unassigned`` if nothing)."""
        info = decode_usid(usid)
        topo = self.topology
        if info.kind in ("end", "unassigned"):
            return info
        assert info.plane is not None and info.index is not None
        if info.plane >= topo.plane_count:
            return info._replace(kind="unassigned", name=f"no plane {info.plane}")
        plane = topo.planes[info.plane]
        limit = {"t0": plane.t0_count, "t1": plane.t1_count, "downlink": topo.nics_per_t0}
        if info.index >= limit[info.kind]:
            return info._replace(kind="unassigned", name=f"no {info.name}")
        return info

    # ---------------------------------------------------------------- NICs

    def nic_address(self, nic: NicRef, plane: int) -> IPv6Address:
        """Inner destination of ``nic``'s port on ``plane``: ``<prefix>:<plane>::<nic index>``."""
        index = self.topology.nic(nic).index
        self.topology.plane(plane)
        return IPv6Address(self._nic_base | plane << 64 | index)

    def nic_for_address(self, addr: int | bytes | str | IPv6Address) -> tuple[str, int]:
        """(NIC name, plane) owning an inner address made by :meth:`nic_address`."""
        value = _address_int(addr)
        shown = IPv6Address(value)
        if value >> (128 - NIC_PREFIX_BITS) != self._nic_base >> (128 - NIC_PREFIX_BITS):
            raise AddressingError(f"{shown} is outside the NIC prefix {self.nic_prefix}")
        plane, index = value >> 64 & 0xFFFF, value & (1 << 64) - 1
        if plane >= self.topology.plane_count or index >= self.topology.nic_count:
            raise UnknownNameError(
                f"{shown} is not the address of a NIC port of {self.topology.name}"
            )
        return nic_name(index), plane

    def nic_mac(self, nic: NicRef, plane: int) -> str:
        """``02:PP:NN:NN:NN:NN``: plane, then the NIC index (locally administered, unicast)."""
        index = self.topology.nic(nic).index
        self.topology.plane(plane)
        return _mac((0x02, plane, *index.to_bytes(4, "big")))

    def arrival_carrier(self, nic: NicRef, plane: int) -> int:
        """Outer destination of a packet as it reaches ``nic`` on ``plane`` (all uSIDs consumed
        but the downlink): ``block | downlink uSID | 0...``."""
        port = self.topology.nic_port(nic, plane)
        return self.carrier([self.downlink_usid(port.t0, port.t0_port)])

    def carrier(self, usids: Sequence[int]) -> int:
        """``block | usids[0] | usids[1] | ... | 0...`` as a 128-bit integer."""
        if len(usids) > CARRIER_USIDS:
            raise AddressingError(
                f"{len(usids)} uSIDs do not fit one carrier (at most {CARRIER_USIDS})"
            )
        value = self._carrier_base
        for slot, usid in enumerate(usids):
            if not 0 < usid <= USID_MASK:
                raise AddressingError(
                    f"uSID {usid:#x} at position {slot} is not a non-zero 16-bit value"
                )
            value |= usid << (128 - BLOCK_BITS - USID_BITS * (slot + 1))
        return value

    # ---------------------------------------------------------------- EVs and paths

    def make_ev(self, plane: int, t1_index: int, salt: int = 0) -> int:
        """An EV that :meth:`path_for_ev` maps to ``plane`` and T1 ``t1_index``."""
        t1_count = self.topology.plane(plane).t1_count
        if not 0 <= t1_index < t1_count:
            raise AddressingError(
                f"plane {plane} has T1s 0..{t1_count - 1}, cannot make an EV for T1 {t1_index}"
            )
        if not 0 <= salt <= EV_SALT_MASK:
            raise AddressingError(f"EV salt {salt} does not fit {EV_SALT_BITS} bits")
        return encode_ev(plane, t1_index, salt)

    def ev_plane(self, ev: int) -> int:
        """The plane an EV selects (fields beyond the fabric wrap around, see docs)."""
        return decode_ev(ev).plane % self.topology.plane_count

    def ev_t1_index(self, ev: int) -> int:
        """The T1 index an EV selects within its plane (used only between different T0s)."""
        fields = decode_ev(ev)
        plane = fields.plane % self.topology.plane_count
        return fields.t1_index % self.topology.planes[plane].t1_count

    def ev_set(
        self, count: int, *, seed: int = 0, planes: Sequence[int] | None = None
    ) -> tuple[int, ...]:
        """``count`` distinct EVs split as evenly as possible across ``planes`` (default all)
        and, within each plane, across its T1s; ordered round-robin over the planes so a
        sender rotating through the list sprays every plane equally."""
        if count < 1:
            raise AddressingError(f"an EV set needs at least 1 EV, got {count}")
        chosen = list(range(self.topology.plane_count)) if planes is None else list(planes)
        if not chosen:
            raise AddressingError("an EV set needs at least one plane")
        if len(set(chosen)) != len(chosen):
            raise AddressingError(f"planes {chosen} list a plane twice")
        for plane in chosen:
            self.topology.plane(plane)
        share, extra = divmod(count, len(chosen))
        per_plane = [share + (position < extra) for position in range(len(chosen))]
        for plane, wanted in zip(chosen, per_plane):
            t1_count = self.topology.planes[plane].t1_count
            if -(-wanted // t1_count) > EV_SALT_MASK + 1:
                raise AddressingError(
                    f"{wanted} EVs on plane {plane} need more than {EV_SALT_MASK + 1} salts per path"
                )
        evs = []
        for j in range(max(per_plane)):
            for plane, wanted in zip(chosen, per_plane):
                if j < wanted:
                    t1_count = self.topology.planes[plane].t1_count
                    salt = (seed + j // t1_count) & EV_SALT_MASK
                    evs.append(encode_ev(plane, j % t1_count, salt))
        return tuple(evs)

    def path(self, src_nic: NicRef, dst_nic: NicRef, plane: int, t1_index: int | None) -> Path:
        """The path from ``src_nic`` to ``dst_nic`` on ``plane`` through T1 ``t1_index``
        (ignored, and may be None, when both NICs share a T0)."""
        topo = self.topology
        src, dst = topo.nic(src_nic), topo.nic(dst_nic)
        if src.index == dst.index:
            raise AddressingError(f"{src.name} cannot send to itself through the fabric")
        plane_info = topo.plane(plane)
        same_t0 = src.t0_index == dst.t0_index
        if not same_t0 and (t1_index is None or not 0 <= t1_index < plane_info.t1_count):
            raise AddressingError(
                f"plane {plane} has T1s 0..{plane_info.t1_count - 1}, got T1 index {t1_index}"
            )
        key: tuple[int, ...] | None = None
        if type(plane) is int and (same_t0 or type(t1_index) is int):
            if same_t0:
                key = (plane, dst.t0_index, dst.downlink_index)
            else:
                assert t1_index is not None
                key = (plane, src.t0_index, t1_index, dst.t0_index, dst.downlink_index)
            found = self._paths_by_place.get(key)
            if found is not None:
                return found
        made = self._make_path(src.t0_index, dst, plane, t1_index)
        if key is not None:
            self._paths_by_place[key] = made
        return made

    def _make_path(self, src_t0: int, dst: Nic, plane: int, t1_index: int | None) -> Path:
        """:meth:`path` once its arguments are checked (``t1_index`` is valid unless the
        NICs share a T0)."""
        if type(plane) is int and (src_t0 == dst.t0_index or type(t1_index) is int):
            return self._make_path_from_parts(src_t0, dst, plane, t1_index)
        downlink = downlink_usid_of(plane, dst.downlink_index)
        dst_t0_usid = node_usid(plane, Role.T0, dst.t0_index)
        dst_t0 = switch_name(plane, Role.T0, dst.t0_index)
        if src_t0 == dst.t0_index:
            return Path(plane, None, (dst_t0,), self.carrier((dst_t0_usid, downlink)))
        assert t1_index is not None
        t1 = switch_name(plane, Role.T1, t1_index)
        carrier = self.carrier(
            (
                node_usid(plane, Role.T0, src_t0),
                node_usid(plane, Role.T1, t1_index),
                dst_t0_usid,
                downlink,
            )
        )
        return Path(plane, t1, (switch_name(plane, Role.T0, src_t0), t1, dst_t0), carrier)

    def _make_path_from_parts(
        self, src_t0: int, dst: Nic, plane: int, t1_index: int | None
    ) -> Path:
        """:meth:`_make_path` for an ``int`` plane (and T1 when the NICs do not share a
        T0): the same path, from each switch's (name, uSID) made once per plan (the same
        checks, in the same order, raise the same errors the first time)."""
        downlink = downlink_usid_of(plane, dst.downlink_index)
        dst_part = self._t0_parts.get((plane, dst.t0_index))
        if dst_part is None:
            dst_part = self._switch_part(self._t0_parts, plane, Role.T0, dst.t0_index)
        dst_t0, dst_t0_usid = dst_part
        if src_t0 == dst.t0_index:
            return Path(plane, None, (dst_t0,), self.carrier((dst_t0_usid, downlink)))
        assert t1_index is not None
        src_part = self._t0_parts.get((plane, src_t0))
        if src_part is None:
            src_part = self._switch_part(self._t0_parts, plane, Role.T0, src_t0)
        t1_part = self._t1_parts.get((plane, t1_index))
        if t1_part is None:
            t1_part = self._switch_part(self._t1_parts, plane, Role.T1, t1_index)
        src_name, src_usid = src_part
        t1, t1_usid = t1_part
        carrier = self.carrier((src_usid, t1_usid, dst_t0_usid, downlink))
        return Path(plane, t1, (src_name, t1, dst_t0), carrier)

    @staticmethod
    def _switch_part(
        parts: dict[tuple[int, int], tuple[str, int]], plane: int, role: Role, index: int
    ) -> tuple[str, int]:
        """(name, node uSID) of switch ``index`` of ``role`` in ``plane``, kept in
        ``parts`` (``node_usid``'s error, when it raises, is not kept)."""
        usid = node_usid(plane, role, index)
        found = parts[(plane, index)] = (switch_name(plane, role, index), usid)
        return found

    def path_for_ev(self, src_nic: NicRef, dst_nic: NicRef, ev: int) -> Path:
        """The path ``ev`` selects from ``src_nic`` to ``dst_nic`` (sources §4.2:
        plane from the EV, the uplink choice names the T1, last uSID = dst downlink)."""
        fields = decode_ev(ev)
        plane = fields.plane % self.topology.plane_count
        t1 = fields.t1_index % self.topology.planes[plane].t1_count
        return self.path(src_nic, dst_nic, plane, t1)

    # ---------------------------------------------------------------- routes

    def routes_for(self, switch: SwitchRef) -> list[UsidRoute]:
        """The ``usid_route`` entries ``switch`` needs: T0 -> each T1 of its plane (uplink)
        and each local downlink uSID (NIC port); T1 -> each T0 of its plane."""
        sw = self.topology.switch(switch)
        if sw.role is Role.T1:
            base = node_usid(sw.plane, Role.T0, 0)
            kind = RouteKind.TO_T0
            return [UsidRoute(base + i, port, kind) for i, port in enumerate(sw.downlinks)]
        t1_base = node_usid(sw.plane, Role.T1, 0)
        to_t1 = RouteKind.TO_T1
        routes = [UsidRoute(t1_base + j, port, to_t1) for j, port in enumerate(sw.uplinks)]
        downlink_base = downlink_usid_of(sw.plane, 0)
        to_nic = RouteKind.TO_NIC
        routes.extend(
            UsidRoute(downlink_base + k, port, to_nic) for k, port in enumerate(sw.downlinks)
        )
        return routes

    def route_count(self) -> int:
        """Total ``usid_route`` entries of the fabric, without building them."""
        topo = self.topology
        return sum(
            p.t0_count * (p.t1_count + topo.nics_per_t0) + p.t1_count * p.t0_count
            for p in topo.planes
        )

    # ---------------------------------------------------------------- diagnostics

    def parse_carrier(self, addr: int | bytes | str | IPv6Address) -> CarrierInfo:
        """Decode an outer destination address into its block and named uSIDs."""
        value = _address_int(addr)
        block = value >> (128 - BLOCK_BITS)
        slots = [
            value >> (128 - BLOCK_BITS - USID_BITS * (slot + 1)) & USID_MASK
            for slot in range(CARRIER_USIDS)
        ]
        end = slots.index(END_OF_CARRIER) if END_OF_CARRIER in slots else CARRIER_USIDS
        return CarrierInfo(
            IPv6Address(value),
            block,
            block == self._block_value,
            tuple(self.describe_usid(usid) for usid in slots[:end]),
            tuple(usid for usid in slots[end:] if usid != END_OF_CARRIER),
        )
