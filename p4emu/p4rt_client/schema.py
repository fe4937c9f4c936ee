"""Values and names of a P4Info: the bottom of p4emu's P4Runtime client stack.

The client stack (``p4emu.p4rt_client``) is layered as finsy's ``p4values`` /
``p4schema`` / ``p4entity`` / ``p4client``: values and schema here, the self-encoding
entity (:mod:`p4emu.p4rt_client.entity`) and the messages
(:mod:`p4emu.p4rt_client.messages`) above, the clients (the synchronous
``p4emu.server.client`` and the controller's asyncio ``SwitchClient``) on top.

- **values**: :func:`encode_unsigned`, the project's one canonical bytestring encoder
  (P4Runtime spec "Bytestrings"), which the switch side (``p4emu.p4rt``) uses too;
  :func:`encode_value` (the same after a width check) and :func:`decode_value`;
  :func:`encode_match` / :func:`decode_match` for one match field;
- **schema**: :class:`P4Schema` indexes a P4Info once -- tables, actions, counters,
  registers, controller packet metadata -- by name (or alias) and by id.

The switch side decodes with ``p4emu.p4rt.codec`` instead (stricter: it must refuse what
a client may not send).

Match values (``KeyFieldValue``): exact and optional an ``int``; lpm ``(value, prefix_len)``
(prefix 0 = don't care, left out as the specification requires); ternary ``(value, mask)``;
range ``(low, high)``. Every error is an :class:`EntityNameError` naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from p4emu.p4rt_client.exceptions import EntityNameError
from p4emu.proto import p4i, p4r

KeyFieldValue = int | tuple[int, int]
What = str | Callable[[], str]

# --------------------------------------------------------------------------- values


def _name(what: What) -> str:
    return what() if callable(what) else what


def encode_unsigned(value: int) -> bytes:
    """P4Runtime's canonical bytestring of a non-negative value (shortest big-endian; zero
    is one zero byte): the project's one encoder of it, for the client (``encode_value``)
    and the switch (``p4emu.p4rt.codec``) alike."""
    if value < 0:
        raise ValueError(f"encode_unsigned needs a non-negative value, got {value}")
    return value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")


def encode_value(value: int, bitwidth: int, what: What = "value") -> bytes:
    """``encode_unsigned(value)`` after checking that ``value`` fits ``bit<bitwidth>``.
    ``what`` names the value in the error; a callable is only called then (encoding is
    hot)."""
    if value < 0 or value >> bitwidth:
        raise EntityNameError(
            f"{_name(what)}: value {value} ({value:#x}) does not fit bit<{bitwidth}>"
        )
    return encode_unsigned(value)


def decode_value(data: bytes) -> int:
    """The unsigned value of a bytestring a switch sent (any width)."""
    return int.from_bytes(data, "big")


# --------------------------------------------------------------------------- schema

_KINDS = {
    p4i.MatchField.EXACT: "EXACT",
    p4i.MatchField.LPM: "LPM",
    p4i.MatchField.TERNARY: "TERNARY",
    p4i.MatchField.RANGE: "RANGE",
    p4i.MatchField.OPTIONAL: "OPTIONAL",
}


@dataclass(frozen=True, slots=True)
class FieldSchema:
    """A match field, action parameter or packet metadata field: P4Info name, id, width.

    ``kind`` is the match kind (``EXACT``, ``LPM``, ``TERNARY``, ``RANGE``, ``OPTIONAL``,
    ``OTHER``) of a match field, ``PARAM`` otherwise."""

    name: str
    id: int
    bitwidth: int
    kind: str


def _index(fields: Iterable[FieldSchema]) -> tuple[dict[str, FieldSchema], dict[int, FieldSchema]]:
    listed = list(fields)
    return {f.name: f for f in listed}, {f.id: f for f in listed}


@dataclass(frozen=True, slots=True)
class ActionSchema:
    """An action: name, alias, id and its parameters in P4Info order, also by name and by id."""

    name: str
    alias: str
    id: int
    params: tuple[FieldSchema, ...]  # P4Info order
    by_name: dict[str, FieldSchema] = field(repr=False)
    by_id: dict[int, FieldSchema] = field(repr=False)


@dataclass(frozen=True, slots=True)
class TableSchema:
    """A table: name, alias, id, its match fields in P4Info order (also by name and by id), the
    ids of its actions, its size and its P4Info message."""

    name: str
    alias: str
    id: int
    fields: tuple[FieldSchema, ...]  # P4Info order
    by_name: dict[str, FieldSchema] = field(repr=False)
    by_id: dict[int, FieldSchema] = field(repr=False)
    action_ids: frozenset[int]
    size: int
    info: p4i.Table = field(repr=False)  # initial_default_action, const entries, ...


@dataclass(frozen=True, slots=True)
class CounterSchema:
    """An indexed counter: name, alias, id, number of cells and unit (``BYTES``, ``PACKETS`` or
    ``BOTH``)."""

    name: str
    alias: str
    id: int
    size: int
    unit: str  # BYTES, PACKETS, BOTH


class P4Schema:
    """One P4Info, indexed once by name (or alias) and by id.

    ``tables``, ``actions``, ``counters`` map the fully qualified name to the schema;
    :meth:`table`, :meth:`action`, :meth:`counter` also accept the alias and raise
    :class:`EntityNameError` for an unknown name; ``*_by_id`` look ids up the same way.
    """

    def __init__(self, p4info: p4i.P4Info) -> None:
        self.p4info = p4info
        self.actions: dict[str, ActionSchema] = {}
        for action in p4info.actions:
            params = tuple(FieldSchema(p.name, p.id, p.bitwidth, "PARAM") for p in action.params)
            by_name, by_id = _index(params)
            pre = action.preamble
            self.actions[pre.name] = ActionSchema(
                pre.name, pre.alias, pre.id, params, by_name, by_id
            )
        self.tables: dict[str, TableSchema] = {}
        for table in p4info.tables:
            fields = tuple(
                FieldSchema(f.name, f.id, f.bitwidth, _KINDS.get(f.match_type, "OTHER"))
                for f in table.match_fields
            )
            by_name, by_id = _index(fields)
            pre = table.preamble
            self.tables[pre.name] = TableSchema(
                pre.name,
                pre.alias,
                pre.id,
                fields,
                by_name,
                by_id,
                frozenset(ref.id for ref in table.action_refs),
                table.size,
                table,
            )
        self.counters: dict[str, CounterSchema] = {
            c.preamble.name: CounterSchema(
                c.preamble.name,
                c.preamble.alias,
                c.preamble.id,
                c.size,
                p4i.CounterSpec.Unit.Name(c.spec.unit),
            )
            for c in p4info.counters
        }
        self._tables_by_id = {t.id: t for t in self.tables.values()}
        self._actions_by_id = {a.id: a for a in self.actions.values()}
        self._counters_by_id = {c.id: c for c in self.counters.values()}
        self._aliases: dict[str, dict[str, Any]] = {
            kind: {item.alias: item for item in items.values() if item.alias}
            for kind, items in (
                ("table", self.tables),
                ("action", self.actions),
                ("counter", self.counters),
            )
        }

    def _named(self, kind: str, items: Mapping[str, Any], name: str) -> Any:
        item = items.get(name) or self._aliases[kind].get(name)
        if item is None:
            raise EntityNameError(f"no {kind} named {name!r} in the P4Info")
        return item

    def table(self, name: str) -> TableSchema:
        return self._named("table", self.tables, name)

    def action(self, name: str) -> ActionSchema:
        return self._named("action", self.actions, name)

    def counter(self, name: str) -> CounterSchema:
        return self._named("counter", self.counters, name)

    def table_by_id(self, table_id: int) -> TableSchema:
        try:
            return self._tables_by_id[table_id]
        except KeyError:
            raise EntityNameError(f"table id {table_id:#x} is not in the P4Info") from None

    def action_by_id(self, action_id: int) -> ActionSchema:
        try:
            return self._actions_by_id[action_id]
        except KeyError:
            raise EntityNameError(f"action id {action_id:#x} is not in the P4Info") from None

    def counter_by_id(self, counter_id: int) -> CounterSchema:
        try:
            return self._counters_by_id[counter_id]
        except KeyError:
            raise EntityNameError(f"counter id {counter_id:#x} is not in the P4Info") from None

    def find(self, section: str, name: str) -> Any:
        """The raw P4Info object of ``section`` (e.g. ``"registers"``) named ``name`` or its
        alias."""
        for item in getattr(self.p4info, section):
            if name in (item.preamble.name, item.preamble.alias):
                return item
        raise EntityNameError(f"no {section[:-1].replace('_', ' ')} named {name!r} in the P4Info")

    def packet_metadata(self, kind: str) -> dict[str, FieldSchema]:
        """The ``packet_in`` / ``packet_out`` metadata fields by name (empty without one)."""
        for item in self.p4info.controller_packet_metadata:
            if item.preamble.name == kind:
                return {
                    m.name: FieldSchema(m.name, m.id, m.bitwidth, "PARAM") for m in item.metadata
                }
        return {}


# --------------------------------------------------------------------------- match fields


def encode_match(field_: FieldSchema, value: object, out: Any, what: What) -> None:
    """Appends the match of one field to ``out`` (a ``TableEntry.match`` repeated field);
    a don't-care LPM (prefix 0) is left out, as P4Runtime requires."""
    kind = field_.kind
    width = field_.bitwidth
    if kind == "EXACT" or kind == "OPTIONAL":
        if not isinstance(value, int):
            raise EntityNameError(
                f"{_name(what)}: {kind.lower()} match needs an integer, got {value!r}"
            )
        match = out.add(field_id=field_.id)
        target = match.exact if kind == "EXACT" else match.optional
        target.value = encode_value(value, width, what)
        return
    if not (isinstance(value, tuple) and len(value) == 2):
        shape = {"LPM": "(value, prefix_len)", "TERNARY": "(value, mask)", "RANGE": "(low, high)"}
        if kind not in shape:
            raise EntityNameError(f"{_name(what)}: {kind} match fields are not supported")
        raise EntityNameError(f"{_name(what)}: {kind} match needs {shape[kind]}, got {value!r}")
    first, second = value
    if kind == "LPM":
        if not 0 <= second <= width:
            raise EntityNameError(f"{_name(what)}: prefix length {second} is outside 0..{width}")
        if first & ((1 << (width - second)) - 1):
            raise EntityNameError(
                f"{_name(what)}: {first:#x}/{second} has bits set beyond the prefix"
            )
        if second == 0:
            return
        match = out.add(field_id=field_.id)
        match.lpm.value = encode_value(first, width, what)
        match.lpm.prefix_len = second
    elif kind == "TERNARY":
        match = out.add(field_id=field_.id)
        match.ternary.value = encode_value(first, width, what)
        match.ternary.mask = encode_value(second, width, what)
    elif kind == "RANGE":
        match = out.add(field_id=field_.id)
        match.range.low = encode_value(first, width, what)
        match.range.high = encode_value(second, width, what)
    else:
        raise EntityNameError(f"{_name(what)}: {kind} match fields are not supported")


#: the ``FieldMatch`` oneof of each match kind (also its name in lower case); the switch
#: side's decoder uses it too
ONEOF_OF_KIND = {
    "EXACT": "exact",
    "LPM": "lpm",
    "TERNARY": "ternary",
    "RANGE": "range",
    "OPTIONAL": "optional",
}


def decode_match(field_: FieldSchema, match: p4r.FieldMatch, where: str) -> KeyFieldValue:
    """The value of one match a switch sent (see the module docstring for the shapes)."""
    which = match.WhichOneof("field_match_type")
    if which != ONEOF_OF_KIND.get(field_.kind):
        raise EntityNameError(
            f"{where}: key {field_.name} is {field_.kind} but the entry has {which}"
        )
    if which == "exact":
        return decode_value(match.exact.value)
    if which == "lpm":
        return decode_value(match.lpm.value), match.lpm.prefix_len
    if which == "ternary":
        return decode_value(match.ternary.value), decode_value(match.ternary.mask)
    if which == "range":
        return decode_value(match.range.low), decode_value(match.range.high)
    return decode_value(match.optional.value)


__all__ = [
    "ONEOF_OF_KIND",
    "ActionSchema",
    "CounterSchema",
    "FieldSchema",
    "KeyFieldValue",
    "P4Schema",
    "TableSchema",
    "decode_match",
    "decode_value",
    "encode_match",
    "encode_unsigned",
    "encode_value",
]
