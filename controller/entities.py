"""Plan entries <-> P4Runtime entities, by name, through a P4Info.

:class:`EntityCodec` indexes a P4Info once (names -> ids, bit widths, match kinds) and then
encodes :class:`controller.plan.Entry` values as ``p4.v1.Entity`` messages and decodes what
a switch returns. No id is written anywhere in the controller: every id comes from here.

Values are sent in P4Runtime's canonical binary form (shortest big-endian string, at least
one byte; P4Runtime spec section 8.4) and accepted back in any width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from finsy.proto import p4i, p4r

import controller.p4names as p4names
from controller.exceptions import DecodeError, EncodeError, P4InfoMismatchError
from controller.plan import Entry, Lpm, SwitchPlan

_MATCH_KINDS = {
    p4i.MatchField.EXACT: "EXACT",
    p4i.MatchField.LPM: "LPM",
    p4i.MatchField.TERNARY: "TERNARY",
    p4i.MatchField.RANGE: "RANGE",
    p4i.MatchField.OPTIONAL: "OPTIONAL",
}
UPDATE_TYPES = {
    "INSERT": p4r.Update.INSERT,
    "MODIFY": p4r.Update.MODIFY,
    "DELETE": p4r.Update.DELETE,
}


@dataclass(frozen=True, slots=True)
class FieldInfo:
    name: str
    id: int
    bitwidth: int
    kind: str  # EXACT, LPM, ...


@dataclass(frozen=True, slots=True)
class ActionInfo:
    name: str
    id: int
    params: tuple[FieldInfo, ...]  # kind is "PARAM"
    param_index: dict[int, int]  # param id -> position


@dataclass(frozen=True, slots=True)
class TableInfo:
    name: str
    id: int
    fields: tuple[FieldInfo, ...]
    field_index: dict[int, int]  # field id -> position
    action_ids: frozenset[int]
    size: int
    initial_default: Entry | None


@dataclass(frozen=True, slots=True)
class CounterInfo:
    name: str
    id: int
    size: int
    unit: str  # BYTES, PACKETS, BOTH


def canonical_bytes(value: int, bitwidth: int, what: str | Callable[[], str]) -> bytes:
    """``value`` as P4Runtime's canonical binary string, after a width check. ``what`` names
    the value in the error (a callable is only called then: encoding is hot)."""
    if value < 0 or value >> bitwidth:
        name = what() if callable(what) else what
        raise EncodeError(f"{name}: value {value} ({value:#x}) does not fit bit<{bitwidth}>")
    return value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")


class EntityCodec:
    """Name-based encoder/decoder over one P4Info.

    With ``require=True`` (the default) the P4Info must have every table, action, field and
    parameter the controller writes (``p4names.REQUIRED_TABLES``), with the expected match
    kinds; otherwise :class:`P4InfoMismatchError` lists every problem at once.
    """

    def __init__(self, p4info: p4i.P4Info, *, require: bool = True) -> None:
        self.p4info = p4info
        self.actions: dict[str, ActionInfo] = {}
        self._actions_by_id: dict[int, ActionInfo] = {}
        for action in p4info.actions:
            name = action.preamble.name
            order = self._param_order(name, [param.name for param in action.params])
            by_name = {param.name: param for param in action.params}
            params = tuple(FieldInfo(n, by_name[n].id, by_name[n].bitwidth, "PARAM") for n in order)
            info = ActionInfo(
                name, action.preamble.id, params, {p.id: i for i, p in enumerate(params)}
            )
            self.actions[name] = info
            self._actions_by_id[info.id] = info
        self.tables: dict[str, TableInfo] = {}
        self._tables_by_id: dict[int, TableInfo] = {}
        for table in p4info.tables:
            name = table.preamble.name
            order = self._field_order(name, [field.name for field in table.match_fields])
            by_name = {field.name: field for field in table.match_fields}
            fields = tuple(
                FieldInfo(
                    n,
                    by_name[n].id,
                    by_name[n].bitwidth,
                    _MATCH_KINDS.get(by_name[n].match_type, "OTHER"),
                )
                for n in order
            )
            info = TableInfo(
                name,
                table.preamble.id,
                fields,
                {f.id: i for i, f in enumerate(fields)},
                frozenset(ref.id for ref in table.action_refs),
                table.size,
                None,
            )
            self.tables[name] = info
            self._tables_by_id[info.id] = info
        # Initial default actions need the table index complete (decode looks tables up).
        for table in p4info.tables:
            if table.HasField("initial_default_action"):
                info = self.tables[table.preamble.name]
                default = self._decode_action(
                    info.name,
                    table.initial_default_action.action_id,
                    [(arg.param_id, arg.value) for arg in table.initial_default_action.arguments],
                )
                self.tables[info.name] = _replace_default(
                    info, Entry(info.name, (), *default, True)
                )
                self._tables_by_id[info.id] = self.tables[info.name]
        self.counters: dict[str, CounterInfo] = {}
        self._counters_by_id: dict[int, CounterInfo] = {}
        for counter in p4info.counters:
            unit = p4i.CounterSpec.Unit.Name(counter.spec.unit)
            info = CounterInfo(counter.preamble.name, counter.preamble.id, counter.size, unit)
            self.counters[info.name] = info
            self._counters_by_id[info.id] = info
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

    def table(self, name: str) -> TableInfo:
        try:
            return self.tables[name]
        except KeyError:
            raise EncodeError(f"the P4Info has no table {name}") from None

    def action(self, name: str) -> ActionInfo:
        try:
            return self.actions[name]
        except KeyError:
            raise EncodeError(f"the P4Info has no action {name}") from None

    def table_by_id(self, table_id: int) -> TableInfo:
        try:
            return self._tables_by_id[table_id]
        except KeyError:
            raise DecodeError(f"table id {table_id:#x} is not in the P4Info") from None

    def counter_by_id(self, counter_id: int) -> CounterInfo:
        try:
            return self._counters_by_id[counter_id]
        except KeyError:
            raise DecodeError(f"counter id {counter_id:#x} is not in the P4Info") from None

    # ------------------------------------------------------------------ encode

    def encode_table_entry(self, entry: Entry, message: p4r.TableEntry) -> None:
        """Fills ``message`` (a fresh TableEntry) with ``entry``."""
        table = self.table(entry.table)
        message.table_id = table.id
        if entry.is_default:
            message.is_default_action = True
        elif len(entry.match) != len(table.fields):
            raise EncodeError(
                f"{entry.table}: {len(entry.match)} match values for "
                f"{len(table.fields)} key fields ({', '.join(f.name for f in table.fields)})"
            )
        else:
            for field, value in zip(table.fields, entry.match):
                self._encode_match(entry.table, field, value, message)
        if entry.priority:
            message.priority = entry.priority
        action = self.action(entry.action)
        if action.id not in table.action_ids:
            raise EncodeError(f"{entry.table} cannot use action {entry.action}")
        if len(entry.params) != len(action.params):
            raise EncodeError(
                f"{entry.action}: {len(entry.params)} values for {len(action.params)} "
                f"parameters ({', '.join(p.name for p in action.params)})"
            )
        call = message.action.action
        call.action_id = action.id
        for param, value in zip(action.params, entry.params):
            added = call.params.add()
            added.param_id = param.id
            added.value = canonical_bytes(
                value, param.bitwidth, lambda name=param.name: f"{entry.action}({name})"
            )

    @staticmethod
    def _encode_match(table: str, field: FieldInfo, value: object, message: p4r.TableEntry) -> None:
        def what() -> str:  # only built for an error message: encoding is hot
            return f"{table} key {field.name}"

        if field.kind == "EXACT":
            if not isinstance(value, int):
                raise EncodeError(f"{what()}: exact match needs an integer, got {value!r}")
            match = message.match.add()
            match.field_id = field.id
            match.exact.value = canonical_bytes(value, field.bitwidth, what)
        elif field.kind == "LPM":
            if not isinstance(value, Lpm):
                raise EncodeError(
                    f"{what()}: LPM match needs Lpm(value, prefix_len), got {value!r}"
                )
            if not 0 <= value.prefix_len <= field.bitwidth:
                raise EncodeError(
                    f"{what()}: prefix length {value.prefix_len} is outside 0..{field.bitwidth}"
                )
            host_bits = field.bitwidth - value.prefix_len
            if value.value & ((1 << host_bits) - 1):
                raise EncodeError(
                    f"{what()}: {value.value:#x}/{value.prefix_len} has bits set beyond the prefix"
                )
            if value.prefix_len == 0:
                return  # a don't-care LPM field is omitted (P4Runtime spec 9.1.1)
            match = message.match.add()
            match.field_id = field.id
            match.lpm.value = canonical_bytes(value.value, field.bitwidth, what)
            match.lpm.prefix_len = value.prefix_len
        else:
            raise EncodeError(f"{what()}: {field.kind} match fields are not supported")

    def encode(self, entry: Entry) -> p4r.Entity:
        entity = p4r.Entity()
        self.encode_table_entry(entry, entity.table_entry)
        return entity

    def encode_update(self, update_type: str, entry: Entry) -> p4r.Update:
        update = p4r.Update(type=UPDATE_TYPES[update_type])
        if update_type == "DELETE" and not entry.is_default:
            table = self.table(entry.table)
            message = update.entity.table_entry
            message.table_id = table.id
            for field, value in zip(table.fields, entry.match):
                self._encode_match(entry.table, field, value, message)
            if entry.priority:
                message.priority = entry.priority
            return update
        self.encode_table_entry(entry, update.entity.table_entry)
        return update

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
        if entity.WhichOneof("entity") != "table_entry":
            raise DecodeError(f"expected a table entry, got {entity.WhichOneof('entity')}")
        message = entity.table_entry
        table = self.table_by_id(message.table_id)
        kind = message.action.WhichOneof("type")
        if kind != "action":
            raise DecodeError(
                f"{table.name}: entry uses {kind or 'no action'}; the controller only "
                "reads direct actions"
            )
        action, params = self._decode_action(
            table.name,
            message.action.action.action_id,
            [(p.param_id, p.value) for p in message.action.action.params],
        )
        if message.is_default_action:
            return Entry(table.name, (), action, params, True)
        values: list[object] = [None] * len(table.fields)
        for match in message.match:
            position = table.field_index.get(match.field_id)
            if position is None:
                raise DecodeError(f"{table.name}: match field id {match.field_id} is unknown")
            field = table.fields[position]
            which = match.WhichOneof("field_match_type")
            if which == "exact" and field.kind == "EXACT":
                values[position] = int.from_bytes(match.exact.value, "big")
            elif which == "lpm" and field.kind == "LPM":
                values[position] = Lpm(int.from_bytes(match.lpm.value, "big"), match.lpm.prefix_len)
            else:
                raise DecodeError(
                    f"{table.name}: key {field.name} is {field.kind} but the entry has {which}"
                )
        for position, field in enumerate(table.fields):
            if values[position] is None:
                if field.kind != "LPM":
                    raise DecodeError(f"{table.name}: entry lacks key field {field.name}")
                values[position] = Lpm(0, 0)
        return Entry(table.name, tuple(values), action, params, False, message.priority)  # type: ignore[arg-type]

    def _decode_action(
        self, table: str, action_id: int, args: Sequence[tuple[int, bytes]]
    ) -> tuple[str, tuple[int, ...]]:
        action = self._actions_by_id.get(action_id)
        if action is None:
            raise DecodeError(f"{table}: action id {action_id:#x} is not in the P4Info")
        values: list[int | None] = [None] * len(action.params)
        for param_id, raw in args:
            position = action.param_index.get(param_id)
            if position is None:
                raise DecodeError(f"{action.name}: parameter id {param_id} is unknown")
            values[position] = int.from_bytes(raw, "big")
        missing = [p.name for p, v in zip(action.params, values) if v is None]
        if missing:
            raise DecodeError(f"{action.name}: parameter {missing[0]} is missing")
        return action.name, tuple(values)  # type: ignore[arg-type]

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


def _replace_default(info: TableInfo, default: Entry) -> TableInfo:
    return TableInfo(
        info.name, info.id, info.fields, info.field_index, info.action_ids, info.size, default
    )


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
    "ActionInfo",
    "CounterInfo",
    "EntityCodec",
    "FieldInfo",
    "TableInfo",
    "canonical_bytes",
    "field_names",
    "param_names",
    "widen_port_fields",
]
