"""P4Runtime ids and aliases, derived exactly as p4c derives them.

Sources (p4lang/p4c): ``control-plane/p4RuntimeSymbolTable.{h,cpp}`` (symbol table, hash,
probing, aliases) and ``control-plane/p4RuntimeSerializer.cpp`` (``FieldIdAllocator``).

Top-level objects (tables, actions, externs...)
    id = ``prefix << 24 | (h & 0xffffff)`` where ``prefix`` is the resource type's
    ``P4Ids.Prefix`` (p4info.proto) and ``h`` the Jenkins one-at-a-time hash of the object's
    fully qualified control-plane name (the ``@name`` / hierarchical name with any leading
    ``.`` removed). An explicit ``@id(N)`` wins: N keeps its own low 24 bits and gets the
    resource prefix OR-ed in; N may already carry the right prefix, a different non-zero
    prefix is an error. Explicit ids are reserved first; then, per resource type in prefix
    order, the remaining names are hashed in sorted (byte) order, and a taken id is resolved
    by linear probing: the hash value is incremented until ``prefix | (value & 0xffffff)``
    is free. Adding the same name twice for one resource type is a silent no-op (global
    actions are localized into every control that uses them).

Aliases
    The shortest suffix of dot-separated components that is unique among every name in the
    symbol table (all resource types together).

Fields (match fields, action parameters, packet metadata, value-set matches)
    ``@id`` values first (0 and repeats are errors); the rest are numbered from 1 in
    declaration order, skipping taken numbers, with p4c's quirk that every explicitly
    numbered field also advances the counter.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from p4emu.p4info.exceptions import (
    FieldIdError,
    IdCollisionError,
    IdPrefixError,
    IdSpaceExhaustedError,
    ModelError,
)
from p4emu.proto import p4i

_U32 = 0xFFFF_FFFF
_LOW24 = 0xFF_FFFF


class ResourceType(IntEnum):
    """P4Runtime resource types and their 8-bit id prefixes (``p4.config.v1.P4Ids.Prefix``)."""

    ACTION = p4i.P4Ids.ACTION
    TABLE = p4i.P4Ids.TABLE
    VALUE_SET = p4i.P4Ids.VALUE_SET
    CONTROLLER_HEADER = p4i.P4Ids.CONTROLLER_HEADER
    ACTION_PROFILE = p4i.P4Ids.ACTION_PROFILE
    COUNTER = p4i.P4Ids.COUNTER
    DIRECT_COUNTER = p4i.P4Ids.DIRECT_COUNTER
    METER = p4i.P4Ids.METER
    DIRECT_METER = p4i.P4Ids.DIRECT_METER
    REGISTER = p4i.P4Ids.REGISTER
    DIGEST = p4i.P4Ids.DIGEST

    @property
    def prefix(self) -> int:
        """The prefix already shifted into the top byte of an id."""
        return int(self) << 24

    @property
    def label(self) -> str:
        """Lower-case name used in messages ("direct counter")."""
        return self.name.lower().replace("_", " ")


def jenkins_one_at_a_time(data: bytes) -> int:
    """Bob Jenkins' one-at-a-time hash over ``data`` (32-bit), as p4c computes it."""
    value = 0
    for byte in data:
        value = (value + byte) & _U32
        value = (value + (value << 10)) & _U32
        value ^= value >> 6
    value = (value + (value << 3)) & _U32
    value ^= value >> 11
    value = (value + (value << 15)) & _U32
    return value


def name_hash(name: str) -> int:
    """32-bit hash of a control-plane name (UTF-8 bytes, like p4c's ``cstring``)."""
    return jenkins_one_at_a_time(name.encode("utf-8"))


def hashed_id(resource: ResourceType, name: str) -> int:
    """The id ``name`` gets when nothing else collides with it."""
    return resource.prefix | (name_hash(name) & _LOW24)


def control_plane_name(external_name: str) -> str:
    """p4c's ``controlPlaneName()``: the external (``@name``) name minus one leading dot."""
    return external_name[1:] if external_name.startswith(".") else external_name


def explicit_id(resource: ResourceType, value: int, owner: str) -> int:
    """Validate an ``@id(value)`` of a top-level object and add the resource prefix."""
    if not 0 <= value <= _U32:
        raise IdPrefixError(f"{owner}: @id should be an unsigned 32-bit integer, got {value}")
    prefix = value & ~_LOW24 & _U32
    if prefix not in (0, resource.prefix):
        raise IdPrefixError(
            f"{owner}: @id {value:#010x} has the wrong 8-bit prefix for a {resource.label} "
            f"(expected {int(resource):#04x}, got {prefix >> 24:#04x})"
        )
    return value | resource.prefix


class SuffixSet:
    """Component-wise suffix tree giving each name its shortest unique suffix (alias)."""

    @dataclass
    class _Node:
        """A node of the suffix tree: how many added names end with the suffix that leads here,
        and the next components (right to left)."""

        instances: int = 0
        edges: dict[str, SuffixSet._Node] = field(default_factory=dict)

    def __init__(self) -> None:
        self._root = SuffixSet._Node()
        self._names: set[str] = set()

    def add(self, name: str) -> None:
        if not name:
            raise ModelError("a control-plane name must not be empty")
        if name in self._names:
            return  # counting a name twice would make its suffixes look shared
        self._names.add(name)
        node = self._root
        for component in reversed(name.split(".")):
            node = node.edges.setdefault(component, SuffixSet._Node())
            node.instances += 1

    def shortest_unique_suffix(self, name: str) -> str:
        components = name.split(".")
        needed = 0
        node = self._root
        for component in reversed(components):
            child = node.edges.get(component)
            if child is None:
                raise ModelError(f"'{name}' is not in the symbol table")
            node = child
            needed += 1
            if node.instances < 2:
                break
        return ".".join(components[len(components) - needed :])


@dataclass
class _Symbol:
    """One control-plane name: the object that declares it (for messages) and its id, None
    until :meth:`SymbolTable.assign_ids` gives one."""

    name: str
    owner: str
    id: int | None


class SymbolTable:
    """Names visible to P4Runtime, per resource type, and their ids.

    Use in two phases like p4c: :meth:`add` every symbol, then :meth:`assign_ids`; only then
    may :meth:`id` be called.
    """

    def __init__(self) -> None:
        self._symbols: dict[ResourceType, dict[str, _Symbol]] = {}
        self._taken: dict[int, str] = {}
        self._suffixes = SuffixSet()
        self._assigned = False

    def add(
        self,
        resource: ResourceType,
        name: str,
        explicit: int | None = None,
        *,
        owner: str | None = None,
    ) -> None:
        """Register ``name`` (a control-plane name, no leading dot) with an optional ``@id``."""
        if self._assigned:
            raise ModelError(f"cannot add {resource.label} '{name}' after ids were assigned")
        if not name:
            raise ModelError(f"a {resource.label} has an empty control-plane name")
        owner = owner or f"{resource.label} '{name}'"
        table = self._symbols.setdefault(resource, {})
        if name in table:
            return  # same name twice is fine: it is the same control-plane object
        symbol_id = None
        if explicit is not None:
            symbol_id = explicit_id(resource, explicit, owner)
            other = self._taken.get(symbol_id)
            if other is not None:
                raise IdCollisionError(
                    f"@id {symbol_id:#010x} ({symbol_id}) is assigned to multiple "
                    f"declarations: {other} and {owner}"
                )
            self._taken[symbol_id] = owner
        table[name] = _Symbol(name, owner, symbol_id)
        self._suffixes.add(name)

    def assign_ids(self) -> None:
        """Give every symbol without ``@id`` its hashed (and probed) id."""
        if self._assigned:
            return
        for resource in sorted(self._symbols):
            table = self._symbols[resource]
            # Sorting makes probing (and so every id) independent of declaration order.
            for name in sorted(name for name, symbol in table.items() if symbol.id is None):
                symbol = table[name]
                symbol.id = self._probe(resource, name)
                self._taken[symbol.id] = symbol.owner
        self._assigned = True

    def _probe(self, resource: ResourceType, name: str) -> int:
        value = name_hash(name)
        for _ in range(_LOW24 + 1):
            candidate = resource.prefix | (value & _LOW24)
            if candidate not in self._taken:
                return candidate
            value = (value + 1) & _U32
        raise IdSpaceExhaustedError(f"no available id to represent {resource.label} '{name}'")

    def contains(self, resource: ResourceType, name: str) -> bool:
        return name in self._symbols.get(resource, {})

    def id(self, resource: ResourceType, name: str) -> int:
        if not self._assigned:
            raise ModelError("ids are not assigned yet; call assign_ids() first")
        symbol = self._symbols.get(resource, {}).get(name)
        if symbol is None or symbol.id is None:
            raise ModelError(f"unknown {resource.label} '{name}'")
        return symbol.id

    def alias(self, name: str) -> str:
        return self._suffixes.shortest_unique_suffix(name)

    def names(self, resource: ResourceType) -> list[str]:
        return list(self._symbols.get(resource, {}))


def allocate_field_ids(explicit_ids: Sequence[int | None], owner: str) -> list[int]:
    """Ids of the fields of one object, in order; ``explicit_ids[i]`` is field i's ``@id``.

    ``owner`` names the object for error messages ("match fields of table 'c.t'").
    """
    result: list[int | None] = list(explicit_ids)
    taken: set[int] = set()
    for position, value in enumerate(explicit_ids):
        if value is None:
            continue
        if value == 0:
            raise FieldIdError(f"{owner}: 0 is not a valid @id value (field {position + 1})")
        if not 0 < value <= _U32:
            raise FieldIdError(f"{owner}: @id {value} is not an unsigned 32-bit integer")
        if value in taken:
            raise FieldIdError(f"{owner}: @id {value} is used multiple times")
        taken.add(value)
    index = 1
    for position, value in enumerate(explicit_ids):
        if value is not None:
            index += 1  # p4c advances the counter past explicitly numbered fields too
            continue
        while index in taken:
            index += 1
        result[position] = index
        taken.add(index)
    return [value for value in result if value is not None]


def sorted_names(names: Iterable[str]) -> list[str]:
    """Names in p4c's ``std::set<cstring>`` order (byte order of UTF-8 == code point order)."""
    return sorted(set(names))
