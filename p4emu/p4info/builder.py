"""Control-plane model -> ``p4.config.v1.P4Info`` with p4c's ids, aliases and layout.

Source of the rules: p4lang/p4c ``control-plane/p4RuntimeSerializer.cpp`` (tables, actions,
controller headers, value sets, duplicate checks), ``p4RuntimeArchStandard.{h,cpp}``
(v1model externs, table properties, digests), ``p4RuntimeArchHandler.{h,cpp}``
(preambles, annotations, documentation, default table size) and ``typeSpecConverter.cpp``.
See docs/p4info.md for the full list.
"""

from __future__ import annotations

from collections.abc import Iterable

from p4emu.p4info.exceptions import DuplicateNameError, ModelError
from p4emu.p4info.ids import ResourceType, SymbolTable, allocate_field_ids, sorted_names
from p4emu.p4info.model import (
    ActionScope,
    BitstringSpec,
    BoolSpec,
    ControlPlaneModel,
    CounterUnit,
    Documentation,
    ErrorSpec,
    HeaderStackSpec,
    MatchType,
    MeterUnit,
    NamedSpec,
    Preamble,
    Table,
    TupleSpec,
    TypeInfo,
    TypeSpec,
    VarbitSpec,
)
from p4emu.proto import p4i, p4t

_MATCH_TYPES = {
    MatchType.EXACT: p4i.MatchField.EXACT,
    MatchType.LPM: p4i.MatchField.LPM,
    MatchType.TERNARY: p4i.MatchField.TERNARY,
    MatchType.RANGE: p4i.MatchField.RANGE,
    MatchType.OPTIONAL: p4i.MatchField.OPTIONAL,
}

_SCOPES = {
    ActionScope.TABLE_AND_DEFAULT: p4i.ActionRef.TABLE_AND_DEFAULT,
    ActionScope.TABLE_ONLY: p4i.ActionRef.TABLE_ONLY,
    ActionScope.DEFAULT_ONLY: p4i.ActionRef.DEFAULT_ONLY,
}

_COUNTER_UNITS = {
    CounterUnit.UNSPECIFIED: p4i.CounterSpec.UNSPECIFIED,
    CounterUnit.PACKETS: p4i.CounterSpec.PACKETS,
    CounterUnit.BYTES: p4i.CounterSpec.BYTES,
    CounterUnit.BOTH: p4i.CounterSpec.BOTH,
}

_METER_UNITS = {
    MeterUnit.UNSPECIFIED: p4i.MeterSpec.UNSPECIFIED,
    MeterUnit.PACKETS: p4i.MeterSpec.PACKETS,
    MeterUnit.BYTES: p4i.MeterSpec.BYTES,
}


def build_symbol_table(model: ControlPlaneModel) -> SymbolTable:
    """Every name p4c puts in its symbol table, with ids assigned."""
    symbols = SymbolTable()

    def add(resource: ResourceType, preamble: Preamble, name: str | None = None) -> None:
        symbols.add(resource, name or preamble.name, preamble.explicit_id)

    for action in model.actions:
        add(ResourceType.ACTION, action.preamble)
    for table in model.tables:
        add(ResourceType.TABLE, table.preamble)
    for value_set in model.value_sets:
        add(ResourceType.VALUE_SET, value_set.preamble)
    for header in model.controller_headers:
        # p4c hashes the header *type* name; the P4Info name is the annotation string.
        add(ResourceType.CONTROLLER_HEADER, header.preamble, header.type_name)
    for profile in model.action_profiles:
        add(ResourceType.ACTION_PROFILE, profile.preamble)
    for counter in model.counters:
        add(ResourceType.COUNTER, counter.preamble)
    for direct_counter in model.direct_counters:
        add(ResourceType.DIRECT_COUNTER, direct_counter.preamble)
    for meter in model.meters:
        add(ResourceType.METER, meter.preamble)
    for direct_meter in model.direct_meters:
        add(ResourceType.DIRECT_METER, direct_meter.preamble)
    for register in model.registers:
        add(ResourceType.REGISTER, register.preamble)
    for digest in model.digests:
        add(ResourceType.DIGEST, digest.preamble)
    symbols.assign_ids()
    return symbols


def build_p4info(model: ControlPlaneModel) -> p4i.P4Info:
    """Serialize ``model`` into a P4Info message identical to p4c's for the same program."""
    return _Builder(model).build()


class _Builder:
    def __init__(self, model: ControlPlaneModel) -> None:
        self.model = model
        self.symbols = build_symbol_table(model)
        self.info = p4i.P4Info()
        self.actions = {action.name: action for action in model.actions}

    def build(self) -> p4i.P4Info:
        self._check_references()
        self._add_tables()
        self._add_actions()
        self._add_action_profiles()
        self._add_counters()
        self._add_meters()
        self._add_controller_headers()
        self._add_value_sets()
        self._add_registers()
        self._add_digests()
        self._check_duplicates()
        if self.model.pkg_info is not None:
            self._add_pkg_info()
        if self.model.type_info is not None:
            self.info.type_info.CopyFrom(type_info_to_proto(self.model.type_info))
        return self.info

    # ------------------------------------------------------------------ helpers

    def _preamble(
        self,
        message: p4i.Preamble,
        resource: ResourceType,
        preamble: Preamble,
        *,
        symbol: str | None = None,
        alias: str | None = None,
    ) -> None:
        message.id = self.symbols.id(resource, symbol or preamble.name)
        message.name = preamble.name
        message.alias = alias if alias is not None else self.symbols.alias(preamble.name)
        message.annotations.extend(preamble.annotations)
        _set_doc(message, preamble.doc)

    def _check_references(self) -> None:
        profiles = {profile.preamble.name for profile in self.model.action_profiles}
        direct_counters = {counter.preamble.name for counter in self.model.direct_counters}
        direct_meters = {meter.preamble.name for meter in self.model.direct_meters}
        counter_users: dict[str, str] = {}
        meter_users: dict[str, str] = {}
        for table in self.model.tables:
            where = f"table '{table.name}'"
            for ref in table.action_refs:
                if ref.action not in self.actions:
                    raise ModelError(f"{where} refers to unknown action '{ref.action}'")
            default = table.default_action
            if default is not None and default.action not in self.actions:
                raise ModelError(f"{where} has unknown default action '{default.action}'")
            if table.implementation is not None and table.implementation not in profiles:
                raise ModelError(f"{where} uses unknown action profile '{table.implementation}'")
            _check_direct(where, table.direct_counter, direct_counters, counter_users, "counter")
            _check_direct(where, table.direct_meter, direct_meters, meter_users, "meter")

    # ------------------------------------------------------------------ tables

    def _add_tables(self) -> None:
        for table in self.model.tables:
            if table.hidden:
                continue
            self._add_table(table)

    def _add_table(self, table: Table) -> None:
        message = self.info.tables.add()
        self._preamble(message.preamble, ResourceType.TABLE, table.preamble)
        field_ids = allocate_field_ids(
            [match.explicit_id for match in table.match_fields],
            f"match fields of table '{table.name}'",
        )
        for match, field_id in zip(table.match_fields, field_ids):
            if match.match_type is MatchType.SELECTOR:
                continue  # selector inputs are not part of the P4Runtime key
            field = message.match_fields.add()
            field.id = field_id
            field.name = match.name
            field.annotations.extend(match.annotations)
            _set_doc(field, match.doc)
            field.bitwidth = match.bitwidth
            if match.match_type is MatchType.OTHER:
                field.other_match_type = match.other_match_type
            else:
                field.match_type = _MATCH_TYPES[match.match_type]
            if match.type_name:
                field.type_name.name = match.type_name
        for ref in table.action_refs:
            action_ref = message.action_refs.add()
            action_ref.id = self.symbols.id(ResourceType.ACTION, ref.action)
            action_ref.annotations.extend(ref.annotations)
            action_ref.scope = _SCOPES[ref.scope]
        default = table.default_action
        if default is not None and default.is_const:
            # p4c 1.2.4.8 writes no initial_default_action (P4Runtime 1.4): neither do we.
            message.const_default_action_id = self.symbols.id(ResourceType.ACTION, default.action)
        if table.implementation is not None:
            message.implementation_id = self.symbols.id(
                ResourceType.ACTION_PROFILE, table.implementation
            )
        if table.direct_counter is not None:
            message.direct_resource_ids.append(
                self.symbols.id(ResourceType.DIRECT_COUNTER, table.direct_counter)
            )
        if table.direct_meter is not None:
            message.direct_resource_ids.append(
                self.symbols.id(ResourceType.DIRECT_METER, table.direct_meter)
            )
        message.size = table.size
        message.idle_timeout_behavior = (
            p4i.Table.NOTIFY_CONTROL if table.supports_timeout else p4i.Table.NO_TIMEOUT
        )
        if table.is_const_table:
            message.is_const_table = True
        if table.has_initial_entries:
            message.has_initial_entries = True

    # ------------------------------------------------------------------ actions

    def _add_actions(self) -> None:
        emitted: set[str] = set()
        for action in self.model.actions:
            # The same (global) action is localized into every control using it: one entry.
            if action.hidden or action.name in emitted:
                continue
            emitted.add(action.name)
            message = self.info.actions.add()
            self._preamble(message.preamble, ResourceType.ACTION, action.preamble)
            param_ids = allocate_field_ids(
                [param.explicit_id for param in action.params],
                f"parameters of action '{action.name}'",
            )
            for param, param_id in zip(action.params, param_ids):
                entry = message.params.add()
                entry.id = param_id
                entry.name = param.name
                entry.annotations.extend(param.annotations)
                _set_doc(entry, param.doc)
                if param.bitwidth is not None:
                    entry.bitwidth = param.bitwidth
                if param.type_name:
                    entry.type_name.name = param.type_name

    # ------------------------------------------------------------------ externs

    def _add_action_profiles(self) -> None:
        users: dict[str, list[str]] = {}
        for table in self.model.tables:
            if table.implementation is not None:
                users.setdefault(table.implementation, []).append(table.name)
        for profile in self.model.action_profiles:
            message = self.info.action_profiles.add()
            self._preamble(message.preamble, ResourceType.ACTION_PROFILE, profile.preamble)
            # p4c keeps the users in a std::set of table names: sorted by name, not by id.
            for table_name in sorted_names(users.get(profile.preamble.name, ())):
                message.table_ids.append(self.symbols.id(ResourceType.TABLE, table_name))
            if profile.with_selector:
                message.with_selector = True
            message.size = profile.size
            if profile.max_group_size and profile.with_selector:
                message.max_group_size = profile.max_group_size

    def _add_counters(self) -> None:
        for counter in self.model.counters:
            message = self.info.counters.add()
            self._preamble(message.preamble, ResourceType.COUNTER, counter.preamble)
            message.spec.unit = _COUNTER_UNITS[counter.unit]
            message.size = counter.size
            if counter.index_type_name:
                message.index_type_name.name = counter.index_type_name
        by_name = {counter.preamble.name: counter for counter in self.model.direct_counters}
        for table in self._visible_tables():
            if table.direct_counter is None:
                continue
            direct = by_name[table.direct_counter]
            entry = self.info.direct_counters.add()
            self._preamble(entry.preamble, ResourceType.DIRECT_COUNTER, direct.preamble)
            entry.spec.unit = _COUNTER_UNITS[direct.unit]
            entry.direct_table_id = self.symbols.id(ResourceType.TABLE, table.name)

    def _add_meters(self) -> None:
        for meter in self.model.meters:
            message = self.info.meters.add()
            self._preamble(message.preamble, ResourceType.METER, meter.preamble)
            message.spec.unit = _METER_UNITS[meter.unit]
            message.size = meter.size
            if meter.index_type_name:
                message.index_type_name.name = meter.index_type_name
        by_name = {meter.preamble.name: meter for meter in self.model.direct_meters}
        for table in self._visible_tables():
            if table.direct_meter is None:
                continue
            direct = by_name[table.direct_meter]
            entry = self.info.direct_meters.add()
            self._preamble(entry.preamble, ResourceType.DIRECT_METER, direct.preamble)
            entry.spec.unit = _METER_UNITS[direct.unit]
            entry.direct_table_id = self.symbols.id(ResourceType.TABLE, table.name)

    def _visible_tables(self) -> Iterable[Table]:
        return (table for table in self.model.tables if not table.hidden)

    def _add_controller_headers(self) -> None:
        for header in self.model.controller_headers:
            if header.hidden:
                continue
            message = self.info.controller_packet_metadata.add()
            self._preamble(
                message.preamble,
                ResourceType.CONTROLLER_HEADER,
                header.preamble,
                symbol=header.type_name,
                alias=header.preamble.name,
            )
            field_ids = allocate_field_ids(
                [field.explicit_id for field in header.metadata],
                f"fields of controller header '{header.type_name}'",
            )
            for field, field_id in zip(header.metadata, field_ids):
                if field.hidden:
                    continue
                entry = message.metadata.add()
                entry.id = field_id
                entry.name = field.name
                entry.annotations.extend(field.annotations)
                entry.bitwidth = field.bitwidth
                if field.type_name:
                    entry.type_name.name = field.type_name

    def _add_value_sets(self) -> None:
        for value_set in self.model.value_sets:
            message = self.info.value_sets.add()
            self._preamble(message.preamble, ResourceType.VALUE_SET, value_set.preamble)
            message.size = value_set.size
            if value_set.sequential_ids:
                match_ids = list(range(1, len(value_set.match) + 1))
            else:
                match_ids = allocate_field_ids(
                    [match.explicit_id for match in value_set.match],
                    f"fields of value set '{value_set.preamble.name}'",
                )
            for match, match_id in zip(value_set.match, match_ids):
                entry = message.match.add()
                entry.id = match_id
                if match.name:
                    entry.name = match.name
                entry.annotations.extend(match.annotations)
                _set_doc(entry, match.doc)
                entry.bitwidth = match.bitwidth
                if match.match_type is MatchType.OTHER:
                    entry.other_match_type = match.other_match_type
                else:
                    entry.match_type = _MATCH_TYPES[match.match_type]

    def _add_registers(self) -> None:
        for register in self.model.registers:
            message = self.info.registers.add()
            self._preamble(message.preamble, ResourceType.REGISTER, register.preamble)
            message.size = register.size
            message.type_spec.CopyFrom(type_spec_to_proto(register.type_spec))
            if register.index_type_name:
                message.index_type_name.name = register.index_type_name

    def _add_digests(self) -> None:
        emitted: set[str] = set()
        for digest in self.model.digests:
            # Every digest<T>() call with the same T is the same P4Info digest.
            if digest.preamble.name in emitted:
                continue
            emitted.add(digest.preamble.name)
            message = self.info.digests.add()
            self._preamble(message.preamble, ResourceType.DIGEST, digest.preamble)
            message.type_spec.CopyFrom(type_spec_to_proto(digest.type_spec))

    def _add_pkg_info(self) -> None:
        pkg = self.model.pkg_info
        assert pkg is not None
        message = self.info.pkg_info
        message.arch = pkg.arch
        for attribute in ("name", "version", "organization", "contact", "url"):
            value = getattr(pkg, attribute)
            if value:
                setattr(message, attribute, value)
        message.annotations.extend(pkg.annotations)
        _set_doc(message, pkg.doc)

    def _check_duplicates(self) -> None:
        groups: list[tuple[str, Iterable[p4i.Preamble]]] = [
            ("table", (m.preamble for m in self.info.tables)),
            ("action", (m.preamble for m in self.info.actions)),
            ("action profile", (m.preamble for m in self.info.action_profiles)),
            ("counter", (m.preamble for m in self.info.counters)),
            ("direct counter", (m.preamble for m in self.info.direct_counters)),
            ("meter", (m.preamble for m in self.info.meters)),
            ("direct meter", (m.preamble for m in self.info.direct_meters)),
            (
                "controller packet metadata",
                (m.preamble for m in self.info.controller_packet_metadata),
            ),
            ("value set", (m.preamble for m in self.info.value_sets)),
            ("register", (m.preamble for m in self.info.registers)),
            ("digest", (m.preamble for m in self.info.digests)),
        ]
        duplicates = []
        for label, preambles in groups:
            seen: set[str] = set()
            for preamble in preambles:
                if preamble.name in seen:
                    duplicates.append(
                        f"name '{preamble.name}' is used for multiple {label} objects"
                    )
                seen.add(preamble.name)
        if duplicates:
            raise DuplicateNameError(
                f"found {len(duplicates)} duplicate name(s) in the P4Info: " + "; ".join(duplicates)
            )


def _check_direct(
    where: str, name: str | None, known: set[str], users: dict[str, str], kind: str
) -> None:
    if name is None:
        return
    if name not in known:
        raise ModelError(f"{where} uses unknown direct {kind} '{name}'")
    other = users.get(name)
    if other is not None:
        raise ModelError(f"direct {kind} '{name}' is used by two tables: {other} and {where}")
    users[name] = where


def _set_doc(message: object, doc: Documentation | None) -> None:
    if doc is None:
        return
    target = message.doc  # type: ignore[attr-defined]
    target.SetInParent()
    if doc.brief:
        target.brief = doc.brief
    if doc.description:
        target.description = doc.description


def encode_value(value: int, bitwidth: int) -> bytes:
    """p4c's ``stringRepr``: a constant as ``ceil(bitwidth/8)`` big-endian bytes."""
    size = (bitwidth + 7) // 8
    if value < 0:
        value &= (1 << (size * 8)) - 1
    if value >> (size * 8):
        raise ModelError(f"value {value} does not fit in {bitwidth} bits")
    return value.to_bytes(size, "big")


# --------------------------------------------------------------------------- types


def type_spec_to_proto(spec: TypeSpec) -> p4t.P4DataTypeSpec:
    message = p4t.P4DataTypeSpec()
    if isinstance(spec, BitstringSpec):
        if spec.signed:
            message.bitstring.int.bitwidth = spec.width
        else:
            message.bitstring.bit.bitwidth = spec.width
    elif isinstance(spec, VarbitSpec):
        message.bitstring.varbit.max_bitwidth = spec.max_width
    elif isinstance(spec, BoolSpec):
        message.bool.SetInParent()
    elif isinstance(spec, ErrorSpec):
        message.error.SetInParent()
    elif isinstance(spec, NamedSpec):
        getattr(message, spec.kind.value).name = spec.name
    elif isinstance(spec, TupleSpec):
        message.tuple.SetInParent()
        for member in spec.members:
            message.tuple.members.append(type_spec_to_proto(member))
    elif isinstance(spec, HeaderStackSpec):
        if spec.union:
            message.header_union_stack.header_union.name = spec.element
            message.header_union_stack.size = spec.size
        else:
            message.header_stack.header.name = spec.element
            message.header_stack.size = spec.size
    else:
        raise ModelError(f"unknown type spec {spec!r}")
    return message


def _bitstring_like(spec: BitstringSpec | VarbitSpec) -> p4t.P4BitstringLikeTypeSpec:
    message = p4t.P4BitstringLikeTypeSpec()
    if isinstance(spec, VarbitSpec):
        message.varbit.max_bitwidth = spec.max_width
    elif spec.signed:
        message.int.bitwidth = spec.width
    else:
        message.bit.bitwidth = spec.width
    return message


def type_info_to_proto(info: TypeInfo) -> p4t.P4TypeInfo:
    message = p4t.P4TypeInfo()
    for name, struct in info.structs.items():
        entry = message.structs[name]
        entry.SetInParent()
        for member_name, member_spec in struct.members:
            entry.members.add(name=member_name, type_spec=type_spec_to_proto(member_spec))
    for name, header in info.headers.items():
        entry = message.headers[name]
        entry.SetInParent()
        for member_name, member_spec in header.members:
            entry.members.add(name=member_name, type_spec=_bitstring_like(member_spec))
    for name, union in info.header_unions.items():
        entry = message.header_unions[name]
        entry.SetInParent()
        for member_name, header_name in union.members:
            entry.members.add(name=member_name, header=p4t.P4NamedType(name=header_name))
    for name, enum in info.enums.items():
        entry = message.enums[name]
        entry.SetInParent()
        for member_name in enum.members:
            entry.members.add(name=member_name)
    for name, ser_enum in info.serializable_enums.items():
        entry = message.serializable_enums[name]
        entry.underlying_type.bitwidth = ser_enum.width
        for member_name, value in ser_enum.members:
            entry.members.add(name=member_name, value=encode_value(value, ser_enum.width))
    if info.error_members is not None:
        message.error.SetInParent()
        message.error.members.extend(info.error_members)
    for name, new_type in info.new_types.items():
        entry = message.new_types[name]
        entry.SetInParent()
        entry.annotations.extend(new_type.annotations)
        if new_type.translation is not None:
            entry.translated_type.uri = new_type.translation.uri
            if new_type.translation.sdn_bitwidth is None:
                entry.translated_type.sdn_string.SetInParent()
            else:
                entry.translated_type.sdn_bitwidth = new_type.translation.sdn_bitwidth
        elif new_type.original is not None:
            entry.original_type.CopyFrom(type_spec_to_proto(new_type.original))
    return message
