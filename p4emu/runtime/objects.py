"""What a compiled program exposes to the control plane: :class:`ProgramObjects`.

The backend compiles a checked program once (:func:`p4emu.backend.compile_program`) and
hands back, next to the packet-processing code, one :class:`ProgramObjects`. Everything
the control plane (P4Runtime server, STF runner, tests) may read or change lives here,
keyed by **fully-qualified control-plane name**, i.e. the P4Info ``preamble.name``
(``MyIngress.ipv4_lpm``, ``NoAction``). The packet path uses the very same objects, so a
change is visible to the next packet; no copying, no "commit".

Ids: every object also carries its P4Info id (``id`` attribute, and the ``by_id``
helpers). **Action ids stored in table entries, default actions, action profile members
are P4Info action ids.**

Contents (see each class for details):

``tables``          name -> :class:`p4emu.runtime.tables.Table` (entries, default action,
                    direct counter cells, direct meter cells, idle timeouts).
``table_info``      name -> :class:`TableInfo` (id, key fields with P4Info ids, action
                    profile, direct counter / meter names).
``actions``         name -> :class:`ActionInfo` (id, parameters with ids and widths).
``registers``       name -> :class:`p4emu.runtime.externs.Register`.
``counters``        name -> :class:`p4emu.runtime.externs.Counter`.
``direct_counters`` name -> :class:`DirectResourceInfo` (the table that holds the cells).
``meters``          name -> :class:`p4emu.runtime.externs.Meter`.
``direct_meters``   name -> :class:`DirectResourceInfo`.
``action_profiles`` name -> :class:`p4emu.runtime.action_profiles.ActionProfile` (profiles
                    and selectors; indirect table entries use ``MEMBER_REF``/``GROUP_REF``).
``value_sets``      name -> :class:`ValueSet` (parser ``value_set``).
``digests``         name (the digest struct type name, as P4Info) -> :class:`DigestInfo`;
                    samples go to ``digest_queue`` (one :class:`DigestQueue` per switch,
                    keyed by digest id).
``controller_headers`` ``"packet_in"`` / ``"packet_out"`` -> :class:`ControllerHeader`.
``pre``             :class:`p4emu.runtime.pre.ReplicationEngine` (multicast groups,
                    clone sessions).
``hash_crcs``       ``crc16_custom`` / ``crc32_custom`` call sites -> their reconfigurable
                    :class:`p4emu.runtime.hashes.CustomCrc`, keyed ``"<block>.<index>"``.
``p4info``          the ``p4.config.v1.P4Info`` message of the program.
``clock``           the switch clock (meters, idle timeouts, digests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from p4emu.runtime.action_profiles import ActionProfile
from p4emu.runtime.clock import Clock
from p4emu.runtime.exceptions import (
    ControllerHeaderError,
    InvalidEntryError,
    ValueSetError,
    ValueSetFullError,
)
from p4emu.runtime.externs import (
    Counter,
    DigestQueue,
    DirectCounter,
    DirectMeter,
    Meter,
    Register,
)
from p4emu.runtime.hashes import CustomCrc
from p4emu.runtime.pre import ReplicationEngine
from p4emu.runtime.tables import KeyField, MatchKind, MatchValue, Table

# --------------------------------------------------------------------------- actions


@dataclass(frozen=True)
class ActionParamInfo:
    """A control-plane (directionless) action parameter: P4Info id (1-based), name, width."""

    id: int
    name: str
    width: int


@dataclass(frozen=True)
class ActionInfo:
    """An action as the control plane sees it."""

    id: int
    name: str
    params: tuple[ActionParamInfo, ...] = ()

    @property
    def param_widths(self) -> tuple[int, ...]:
        return tuple(p.width for p in self.params)

    def param(self, key: int | str) -> ActionParamInfo:
        """Parameter by P4Info id or by name (KeyError if absent)."""
        for p in self.params:
            if p.id == key or p.name == key:
                return p
        raise KeyError(key)


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class KeyFieldInfo:
    """A table key field: P4Info match field id (1-based), name, width, match kind.

    ``selector`` fields (action selectors) are not part of the runtime table's key; they
    feed the selector hash and are listed in :attr:`TableInfo.selector_fields`.
    """

    id: int
    name: str
    width: int
    match_kind: str  # "exact" | "lpm" | "ternary" | "range" | "optional" | "selector"


@dataclass
class TableInfo:
    """Control-plane facts about one table (the runtime object is ``table``)."""

    id: int
    name: str
    table: Table
    key: tuple[KeyFieldInfo, ...]
    selector_fields: tuple[KeyFieldInfo, ...] = ()
    action_ids: tuple[int, ...] = ()
    action_profile: str | None = None  # name in ProgramObjects.action_profiles
    direct_counter: str | None = None
    direct_meter: str | None = None
    is_const: bool = False  # ``const entries``
    #: ``entries`` (not const) in the program: BMv2 makes them immutable all the same
    #: (p4emu.p4rt.table_entries)
    initial_entries: bool = False

    @property
    def is_indirect(self) -> bool:
        return self.action_profile is not None


@dataclass(frozen=True)
class DirectResourceInfo:
    """A direct counter or meter: its id and the table whose entries hold its cells."""

    id: int
    name: str
    table: str
    resource: DirectCounter | DirectMeter


# --------------------------------------------------------------------------- value sets


@dataclass(frozen=True)
class ValueSetField:
    """One field of a value set's element (``name`` empty for a ``bit<W>`` element)."""

    id: int
    name: str
    width: int
    match_kind: MatchKind = MatchKind.exact


class ValueSet:
    """A parser ``value_set<T>(size)``: up to ``size`` members matched by ``select``.

    Members are written with the same match values as table keys (``Exact``,
    ``Ternary``, ``Lpm``, ``Range``, ``OptionalMatch``; ``None`` = wildcard), validated
    and canonicalized like table keys. P4Runtime replaces the whole set in one write
    (:meth:`replace`); BMv2's CLI adds/removes one member at a time (:meth:`add` /
    :meth:`remove`). A ``select`` case on the set matches when any member matches the
    selected values (:meth:`contains`).
    """

    def __init__(self, name: str, fields: Sequence[ValueSetField], size: int, id: int = 0) -> None:
        self.name = name
        self.id = id
        self.fields = tuple(fields)
        self.size = size
        self._shape = Table(
            name,
            [KeyField(f.name or "value", f.width, f.match_kind) for f in self.fields],
            size=max(size, 1),
        )
        self._members: list[tuple[tuple[int, int], ...]] = []
        self._compiled: list[tuple[int, int, tuple[tuple[int, int, int], ...]]] = []

    def __len__(self) -> int:
        return len(self._members)

    def entries(self) -> list[list[MatchValue]]:
        """The members as caller-level match values (for P4Runtime reads)."""
        return [self._shape.match_of(_Key(key)) for key in self._members]  # type: ignore[arg-type]

    def replace(self, members: Sequence[Sequence[MatchValue]]) -> None:
        """Atomically set the members (P4Runtime ``ValueSetEntry`` MODIFY)."""
        canonical = [self._canonical(m) for m in members]
        if len(canonical) > self.size:
            raise ValueSetFullError(
                self.name, f"{len(canonical)} members exceed the size {self.size}"
            )
        unique: list[tuple[tuple[int, int], ...]] = []
        for key in canonical:
            if key not in unique:
                unique.append(key)
        self._members = unique
        self._compile()

    def add(self, match: Sequence[MatchValue]) -> None:
        """Add one member (BMv2 ``pvs_add``); adding an existing member is an error."""
        key = self._canonical(match)
        if key in self._members:
            raise ValueSetError(self.name, f"member {list(match)!r} is already in the set")
        if len(self._members) >= self.size:
            raise ValueSetFullError(self.name, f"the set is full ({self.size} members)")
        self._members.append(key)
        self._compile()

    def remove(self, match: Sequence[MatchValue]) -> None:
        key = self._canonical(match)
        if key not in self._members:
            raise ValueSetError(self.name, f"member {list(match)!r} is not in the set")
        self._members.remove(key)
        self._compile()

    def clear(self) -> None:
        self._members = []
        self._compiled = []

    def contains(self, values: Sequence[int]) -> bool:
        """Packet path: does any member match ``values`` (one int per field)?"""
        packed = 0
        for value, f in zip(values, self.fields):
            packed = (packed << f.width) | value
        for value, mask, ranges in self._compiled:
            if packed & mask == value:
                for index, low, high in ranges:
                    if not low <= values[index] <= high:
                        break
                else:
                    return True
        return False

    def _canonical(self, match: Sequence[MatchValue]) -> tuple[tuple[int, int], ...]:
        try:
            return self._shape.canonicalize(match, strict=True)
        except InvalidEntryError as error:
            raise ValueSetError(self.name, str(error).split(": ", 1)[-1]) from None

    def _compile(self) -> None:
        compiled = []
        for key in self._members:
            value = mask = 0
            ranges = []
            for index, (f, (a, b)) in enumerate(zip(self.fields, key)):
                value <<= f.width
                mask <<= f.width
                if f.match_kind is MatchKind.range:
                    ranges.append((index, a, b))
                else:
                    value |= a
                    mask |= b
            compiled.append((value, mask, tuple(ranges)))
        self._compiled = compiled


@dataclass(frozen=True)
class _Key:
    """Adapter so :meth:`Table.match_of` can print a value-set member."""

    key: tuple[tuple[int, int], ...]


# --------------------------------------------------------------------------- digests


@dataclass(frozen=True)
class DigestInfo:
    """A ``digest<T>`` type: P4Info id, name, and T's fields ``(name, width)`` in order.

    Samples pushed to :attr:`ProgramObjects.digest_queue` under ``id`` are tuples of the
    field values in this order.
    """

    id: int
    name: str
    fields: tuple[tuple[str, int], ...]


# --------------------------------------------------------------------------- controller headers


@dataclass(frozen=True)
class ControllerField:
    """A ``packet_in``/``packet_out`` metadata field: P4Info id (1-based), name, width."""

    id: int
    name: str
    width: int


@dataclass(frozen=True)
class ControllerHeader:
    """A ``@controller_header("packet_in"|"packet_out")`` header: its wire layout.

    ``name`` is the annotation string (the P4Info name), ``type_name`` the header type.
    The header sits in front of the packet exchanged with the CPU port: :meth:`decode`
    splits a frame sent to the CPU port into metadata and payload (P4Runtime
    ``PacketIn``), :meth:`encode` builds the header of a ``PacketOut``.
    """

    id: int
    name: str
    type_name: str
    fields: tuple[ControllerField, ...]

    @property
    def width_bits(self) -> int:
        return sum(f.width for f in self.fields)

    @property
    def nbytes(self) -> int:
        return (self.width_bits + 7) // 8

    def field(self, key: int | str) -> ControllerField:
        for f in self.fields:
            if f.id == key or f.name == key:
                return f
        raise ControllerHeaderError(f"{self.name}: no metadata field {key!r}")

    def encode(self, metadata: Mapping[int | str, int]) -> bytes:
        """Header bytes for ``metadata`` (by field name or id); missing fields are 0."""
        values: dict[str, int] = {}
        for key, value in metadata.items():
            f = self.field(key)
            if f.name in values:
                raise ControllerHeaderError(f"{self.name}: metadata field {f.name} given twice")
            if not 0 <= value < (1 << f.width):
                raise ControllerHeaderError(
                    f"{self.name}: value {value} does not fit metadata field {f.name} "
                    f"(bit<{f.width}>)"
                )
            values[f.name] = value
        acc = 0
        for f in self.fields:
            acc = (acc << f.width) | values.get(f.name, 0)
        pad = self.nbytes * 8 - self.width_bits
        return (acc << pad).to_bytes(self.nbytes, "big")

    def decode(self, frame: bytes) -> tuple[dict[str, int], bytes]:
        """Split ``frame`` into ``({field: value}, payload)``."""
        n = self.nbytes
        if len(frame) < n:
            raise ControllerHeaderError(
                f"{self.name}: frame of {len(frame)} bytes is shorter than the "
                f"{n}-byte controller header"
            )
        acc = int.from_bytes(frame[:n], "big") >> (n * 8 - self.width_bits)
        out: dict[str, int] = {}
        shift = self.width_bits
        for f in self.fields:
            shift -= f.width
            out[f.name] = (acc >> shift) & ((1 << f.width) - 1)
        return out, bytes(frame[n:])


# --------------------------------------------------------------------------- the bundle


@dataclass
class ProgramObjects:
    """Every control-plane-visible object of a compiled program (see the module docs)."""

    p4info: Any  # p4.config.v1.P4Info
    clock: Clock
    pre: ReplicationEngine
    digest_queue: DigestQueue
    tables: dict[str, Table] = field(default_factory=dict)
    table_info: dict[str, TableInfo] = field(default_factory=dict)
    actions: dict[str, ActionInfo] = field(default_factory=dict)
    registers: dict[str, Register] = field(default_factory=dict)
    counters: dict[str, Counter] = field(default_factory=dict)
    direct_counters: dict[str, DirectResourceInfo] = field(default_factory=dict)
    meters: dict[str, Meter] = field(default_factory=dict)
    direct_meters: dict[str, DirectResourceInfo] = field(default_factory=dict)
    action_profiles: dict[str, ActionProfile] = field(default_factory=dict)
    value_sets: dict[str, ValueSet] = field(default_factory=dict)
    digests: dict[str, DigestInfo] = field(default_factory=dict)
    controller_headers: dict[str, ControllerHeader] = field(default_factory=dict)
    hash_crcs: dict[str, CustomCrc] = field(default_factory=dict)
    #: P4Info id -> fully-qualified name, for every object above that has an id
    names_by_id: dict[int, str] = field(default_factory=dict)
    #: fully-qualified name -> P4Info id (a name may be shared only across resource types,
    #: e.g. a table and its direct counter with ``@name``; use the typed helpers then)
    ids_by_name: dict[str, int] = field(default_factory=dict)
    #: the ids the P4Info lists (objects p4c leaves out, e.g. a table never applied, have
    #: ids here but none in the P4Info, so a controller cannot name them); None: all
    p4info_ids: frozenset[int] | None = None

    # --- lookups by P4Info id ---------------------------------------------------------

    def table_by_id(self, table_id: int) -> TableInfo:
        return self._by_id(self.table_info, table_id, "table")

    def action_by_id(self, action_id: int) -> ActionInfo:
        return self._by_id(self.actions, action_id, "action")

    def action_profile_by_id(self, profile_id: int) -> ActionProfile:
        return self._by_id(self.action_profiles, profile_id, "action profile")

    def value_set_by_id(self, value_set_id: int) -> ValueSet:
        return self._by_id(self.value_sets, value_set_id, "value set")

    def digest_by_id(self, digest_id: int) -> DigestInfo:
        return self._by_id(self.digests, digest_id, "digest")

    def name_of(self, object_id: int) -> str:
        """Fully-qualified name of any object by P4Info id (KeyError if unknown)."""
        return self.names_by_id[object_id]

    def register(self, name: str, object_id: int) -> None:
        """Record an object's id (used while the backend builds the bundle)."""
        self.names_by_id[object_id] = name
        self.ids_by_name.setdefault(name, object_id)

    def _by_id(self, mapping: Mapping[str, Any], object_id: int, what: str) -> Any:
        name = self.names_by_id.get(object_id)
        if name is None or name not in mapping:
            raise KeyError(f"no {what} with id {object_id:#x}")
        return mapping[name]
