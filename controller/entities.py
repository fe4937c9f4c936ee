"""Plan entries <-> P4Runtime entities, by name, through a P4Info.

:class:`EntityCodec` indexes a P4Info once (``p4emu.p4rt_client.schema.P4Schema``: names
-> ids, bit widths, match kinds) and then encodes :class:`controller.plan.Entry` values as
``p4.v1.Entity`` messages and decodes what a switch returns. No id is written anywhere in
the controller: every id comes from here. A plan entry becomes a
``p4emu.p4rt_client.entity.P4TableEntry``, the project's one table-entry builder, which
encodes itself (and decodes what a switch sends); this module adds the controller's view
— key fields and parameters in ``p4names.REQUIRED_TABLES`` order, plan entries, the checks
a plan must pass (every action allowed in its table, the counts of values, table sizes),
the P4Info check.

Values are sent in P4Runtime's canonical binary form (shortest big-endian string, at least
one byte; P4Runtime spec section 8.4) and accepted back in any width.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

import controller.p4names as p4names
from controller.exceptions import DecodeError, EncodeError, P4InfoMismatchError
from controller.plan import Entry, LpmPrefix, PlanMatch, SwitchPlan
from p4emu.p4rt_client.entity import P4TableEntry, decode_action_call
from p4emu.p4rt_client.exceptions import EntityNameError
from p4emu.p4rt_client.schema import CounterSchema, FieldSchema, P4Schema, encode_value
from p4emu.proto import p4i, p4r

UPDATE_TYPES = {
    "INSERT": p4r.Update.INSERT,
    "MODIFY": p4r.Update.MODIFY,
    "DELETE": p4r.Update.DELETE,
}


@dataclass(frozen=True, slots=True)
class CodecAction:
    """An action as the codec encodes it: name, id and parameters in ``p4names`` order
    (``param_names`` are their names)."""

    name: str
    id: int
    params: tuple[FieldSchema, ...]  # in p4names order (P4Info order for other actions)
    param_names: tuple[str, ...] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "param_names", tuple(p.name for p in self.params))


@dataclass(frozen=True, slots=True)
class CodecTable:
    """A table as the codec encodes it: name, id, key fields in ``p4names`` order
    (``field_names`` are their names), the ids of its actions, its size and its initial
    default action (None: the P4Info gives none)."""

    name: str
    id: int
    fields: tuple[FieldSchema, ...]  # in p4names order (P4Info order for other tables)
    action_ids: frozenset[int]
    size: int
    initial_default: Entry | None
    field_names: tuple[str, ...] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "field_names", tuple(f.name for f in self.fields))


def canonical_bytes(value: int, bitwidth: int, what: str) -> bytes:
    """``value`` as P4Runtime's canonical binary string, after a width check."""
    try:
        return encode_value(value, bitwidth, what)
    except EntityNameError as exc:
        raise EncodeError(str(exc)) from None


class EntityCodec:
    """Name-based encoder/decoder over one P4Info.

    With ``require=True`` (the default) the P4Info must have every table, action, field and
    parameter the controller writes (``p4names.REQUIRED_TABLES``), with the expected match
    kinds; otherwise :class:`P4InfoMismatchError` lists every problem at once.
    """

    def __init__(self, p4info: p4i.P4Info, *, require: bool = True) -> None:
        self.p4info = p4info
        self.schema = schema = P4Schema(p4info)
        self.actions: dict[str, CodecAction] = {}
        for action in schema.actions.values():
            order = self._param_order(action.name, [p.name for p in action.params])
            self.actions[action.name] = CodecAction(
                action.name, action.id, tuple(action.by_name[n] for n in order)
            )
        self.tables: dict[str, CodecTable] = {}
        for table in schema.tables.values():
            order = self._field_order(table.name, [f.name for f in table.fields])
            default = None
            if table.info.HasField("initial_default_action"):
                call = table.info.initial_default_action
                try:
                    name, params = decode_action_call(
                        schema,
                        call.action_id,
                        [(arg.param_id, arg.value) for arg in call.arguments],
                    )
                except EntityNameError as exc:
                    raise DecodeError(f"{table.name}: initial default action: {exc}") from None
                default = Entry(table.name, (), name, self._ordered_params(name, params), True)
            self.tables[table.name] = CodecTable(
                table.name,
                table.id,
                tuple(table.by_name[n] for n in order),
                table.action_ids,
                table.size,
                default,
            )
        self.counters: dict[str, CounterSchema] = dict(schema.counters)
        if require:
            problems = self.missing_names()
            if problems:
                raise P4InfoMismatchError(
                    "the P4Info does not have what the controller writes "
                    "(controller/p4names.py):\n  " + "\n  ".join(problems)
                )

    # ------------------------------------------------------------------ shape

    @staticmethod
    def _field_order(table: str, names: list[str]) -> list[str]:
        shape = p4names.REQUIRED_TABLES.get(table)
        if shape is not None and {n for n, _ in shape.match} == set(names):
            return [n for n, _ in shape.match]
        return names

    @staticmethod
    def _param_order(action: str, names: list[str]) -> list[str]:
        for shape in p4names.REQUIRED_TABLES.values():
            wanted = shape.actions.get(action)
            if wanted is not None and set(wanted) == set(names):
                return list(wanted)
        return names

    def missing_names(self) -> list[str]:
        """Every way the P4Info differs from ``p4names.REQUIRED_TABLES`` (empty if none)."""
        problems: list[str] = []
        for table_name, shape in p4names.REQUIRED_TABLES.items():
            table = self.tables.get(table_name)
            if table is None:
                problems.append(f"no table {table_name}")
                continue
            have = [(f.name, f.kind) for f in table.fields]
            if sorted(have) != sorted(shape.match):
                problems.append(
                    f"table {table_name}: key is {_fmt_fields(have)}, expected "
                    f"{_fmt_fields(shape.match)}"
                )
            for action_name, params in shape.actions.items():
                action = self.actions.get(action_name)
                if action is None:
                    problems.append(f"no action {action_name} (used by {table_name})")
                    continue
                if action.id not in table.action_ids:
                    problems.append(f"table {table_name} cannot use action {action_name}")
                have_params = [p.name for p in action.params]
                if sorted(have_params) != sorted(params):
                    problems.append(
                        f"action {action_name}: parameters are ({', '.join(have_params)}), "
                        f"expected ({', '.join(params)})"
                    )
        return problems

    def check_plan(self, plan: SwitchPlan) -> None:
        """Encodes nothing but checks every entry would encode, and that no table holds more
        entries than its size; raises EncodeError naming the switch and entry."""
        counts: dict[str, int] = {}
        for entry in plan.entries:
            try:
                self.encode(entry)
            except EncodeError as exc:
                raise EncodeError(f"{plan.name}: {exc}") from None
            if not entry.is_default:
                counts[entry.table] = counts.get(entry.table, 0) + 1
        for table, count in counts.items():
            size = self.tables[table].size
            if size and count > size:
                raise EncodeError(
                    f"{plan.name}: {count} entries for {table}, which holds {size} "
                    "(its size in the P4 program)"
                )

    def table(self, name: str) -> CodecTable:
        try:
            return self.tables[name]
        except KeyError:
            raise EncodeError(f"the P4Info has no table {name}") from None

    def action(self, name: str) -> CodecAction:
        try:
            return self.actions[name]
        except KeyError:
            raise EncodeError(f"the P4Info has no action {name}") from None

    def counter_by_id(self, counter_id: int) -> CounterSchema:
        try:
            return self.schema.counter_by_id(counter_id)
        except EntityNameError as exc:
            raise DecodeError(str(exc)) from None

    def _ordered_params(self, action: str, params: dict[str, int]) -> tuple[int, ...]:
        return tuple(params[p.name] for p in self.actions[action].params)

    # ------------------------------------------------------------------ encode

    def entity_of(self, entry: Entry) -> P4TableEntry:
        """The entry by name (key fields and parameters named in the P4Info), after the
        checks P4TableEntry does not make: the number of match values and of parameters,
        and that the table may use the action."""
        table = self.table(entry.table)
        if not entry.is_default and len(entry.match) != len(table.fields):
            raise EncodeError(
                f"{entry.table}: {len(entry.match)} match values for "
                f"{len(table.fields)} key fields ({', '.join(f.name for f in table.fields)})"
            )
        action = self.action(entry.action)
        if action.id not in table.action_ids:
            raise EncodeError(f"{entry.table} cannot use action {entry.action}")
        if len(entry.params) != len(action.params):
            raise EncodeError(
                f"{entry.action}: {len(entry.params)} values for {len(action.params)} "
                f"parameters ({', '.join(p.name for p in action.params)})"
            )
        match = {} if entry.is_default else dict(zip(table.field_names, entry.match))
        params = dict(zip(action.param_names, entry.params))
        return P4TableEntry(
            table.name, match, action.name, params, entry.priority, entry.is_default
        )

    def encode_table_entry(self, entry: Entry, message: p4r.TableEntry) -> None:
        """Fills ``message`` (a fresh TableEntry) with ``entry``."""
        named = self.entity_of(entry)
        try:
            named.encode_into(self.schema, message)
        except EntityNameError as exc:
            raise EncodeError(str(exc)) from None

    def encode(self, entry: Entry) -> p4r.Entity:
        entity = p4r.Entity()
        self.encode_table_entry(entry, entity.table_entry)
        return entity

    def encode_update(self, update_type: str, entry: Entry) -> p4r.Update:
        if update_type == "DELETE" and not entry.is_default:
            # only the key travels (and is checked): table, match, priority
            table = self.table(entry.table)
            match = dict(zip(table.field_names, entry.match))
            named = P4TableEntry(table.name, match, priority=entry.priority)
        else:
            named = self.entity_of(entry)
        try:
            return named.encode_update(self.schema, UPDATE_TYPES[update_type])
        except EntityNameError as exc:
            raise EncodeError(str(exc)) from None

    # ------------------------------------------------------------------ read requests

    def read_request_entities(self, tables: Iterable[str]) -> list[p4r.Entity]:
        """Wildcard reads of every entry and of the default entry of each table."""
        entities = []
        for name in tables:
            table = self.table(name)
            entity = p4r.Entity()
            entity.table_entry.table_id = table.id
            entities.append(entity)
            default = p4r.Entity()
            default.table_entry.table_id = table.id
            default.table_entry.is_default_action = True
            entities.append(default)
        return entities

    def counter_read_entities(self, names: Iterable[str] | None = None) -> list[p4r.Entity]:
        """Wildcard reads of every cell of the named counters (default: all)."""
        entities = []
        for name in names if names is not None else self.counters:
            info = self.counters.get(name)
            if info is None:
                raise EncodeError(f"the P4Info has no counter {name}")
            entity = p4r.Entity()
            entity.counter_entry.counter_id = info.id
            entities.append(entity)
        return entities

    # ------------------------------------------------------------------ decode

    def decode(self, entity: p4r.Entity) -> Entry:
        """A table entry read from a switch, as a plan Entry."""
        try:
            named = P4TableEntry.decode(entity, self.schema)
        except EntityNameError as exc:
            raise DecodeError(str(exc)) from None
        if named.action is None:
            raise DecodeError(
                f"{named.table}: entry uses no action; the controller only reads direct actions"
            )
        table = self.tables[named.table]
        params = self._ordered_params(named.action, named.params)
        if named.is_default:
            return Entry(table.name, (), named.action, params, True)
        values: list[PlanMatch] = []
        for field in table.fields:
            value = named.match.get(field.name)
            if field.kind == "LPM":
                values.append(LpmPrefix(*value) if value is not None else LpmPrefix(0, 0))  # type: ignore[misc]
            elif field.kind == "EXACT":
                values.append(value)  # type: ignore[arg-type]
            else:
                raise DecodeError(
                    f"{table.name}: key {field.name} is {field.kind}; the controller reads "
                    "EXACT and LPM keys only"
                )
        return Entry(table.name, tuple(values), named.action, params, False, named.priority)

    # ------------------------------------------------------------------ names for display

    def field_names(self, table: str) -> tuple[str, ...]:
        info = self.tables.get(table)
        if info is not None:
            return tuple(f.name for f in info.fields)
        return field_names(table)

    def param_names(self, action: str) -> tuple[str, ...]:
        info = self.actions.get(action)
        if info is not None:
            return tuple(p.name for p in info.params)
        return param_names(action)


def field_names(table: str) -> tuple[str, ...]:
    """Key field names of a controller-owned table, without a P4Info."""
    shape = p4names.REQUIRED_TABLES.get(table)
    return tuple(name for name, _ in shape.match) if shape else ()


def param_names(action: str) -> tuple[str, ...]:
    """Parameter names of an action the controller writes, without a P4Info."""
    for shape in p4names.REQUIRED_TABLES.values():
        if action in shape.actions:
            return shape.actions[action]
    return ()


def _fmt_fields(fields: Iterable[tuple[str, str]]) -> str:
    return "(" + ", ".join(f"{name}: {kind.lower()}" for name, kind in fields) + ")"


def widen_port_fields(p4info: p4i.P4Info, bits: int) -> p4i.P4Info:
    """A copy of ``p4info`` whose port-number fields (``p4names.PORT_FIELDS``) are ``bits``
    wide. Only for sizing fabrics whose ports do not fit v1model's ``bit<9>`` (the paper's
    512-port T0s, ``topologies.paper_scale()``): no switch runs such a P4Info."""
    widened = p4i.P4Info()
    widened.CopyFrom(p4info)
    targets = set(p4names.PORT_FIELDS)
    for table in widened.tables:
        for field in table.match_fields:
            if (table.preamble.name, field.name) in targets:
                field.bitwidth = max(field.bitwidth, bits)
    for action in widened.actions:
        for param in action.params:
            if (action.preamble.name, param.name) in targets:
                param.bitwidth = max(param.bitwidth, bits)
    return widened


__all__ = [
    "UPDATE_TYPES",
    "CodecAction",
    "CodecTable",
    "EntityCodec",
    "canonical_bytes",
    "field_names",
    "param_names",
    "widen_port_fields",
]
