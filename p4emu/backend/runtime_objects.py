"""Build the run-time objects of a checked program and the :class:`ProgramObjects` bundle.

Every table, extern instance and value set of the program gets its runtime object here,
once, with its P4Runtime id; const entries and const default actions are installed.
The code generator then refers to these objects by (block instance, declaration).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4emu.backend.exceptions import CompileError
from p4emu.backend.ids import ControlPlaneIds
from p4emu.backend.pytypes import bit_width, scalar_type
from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.p4info.ids import ResourceType
from p4emu.runtime import hashes
from p4emu.runtime.action_profiles import ActionProfile
from p4emu.runtime.clock import Clock
from p4emu.runtime.externs import (
    Counter,
    CounterType,
    DigestQueue,
    DirectCounter,
    DirectMeter,
    Meter,
    MeterType,
    Register,
)
from p4emu.runtime.objects import (
    ActionInfo,
    ActionParamInfo,
    ControllerField,
    ControllerHeader,
    DigestInfo,
    DirectResourceInfo,
    KeyFieldInfo,
    ProgramObjects,
    TableInfo,
    ValueSet,
    ValueSetField,
)
from p4emu.runtime.pre import ReplicationEngine
from p4emu.runtime.tables import (
    ActionScope,
    Exact,
    KeyField,
    Lpm,
    MatchKind,
    MatchValue,
    OptionalMatch,
    ProgramEntry,
    Range,
    Table,
    Ternary,
)

ERROR_KEY_WIDTH = 32
"""Width of an ``error`` table key: BMv2 holds error values (and ``parser_error``) in 32 bits."""

_MATCH_KINDS = {
    "exact": MatchKind.exact,
    "lpm": MatchKind.lpm,
    "ternary": MatchKind.ternary,
    "range": MatchKind.range,
    "optional": MatchKind.optional,
}


@dataclass
class TableRuntime:
    """What the code generator needs to apply one table instance."""

    name: str
    table: Table
    key_elements: list[ast.KeyElement]
    selector_elements: list[ast.KeyElement]
    action_refs: list[ast.ActionRef]
    implicit_default: ast.ActionDecl | None
    profile: ActionProfile | None
    has_direct_meter: bool
    # Python names bound by the program compiler
    table_name: str = ""
    apply_name: str = ""
    profile_name: str | None = None


@dataclass
class RuntimeObjects:
    """The bundle plus lookup tables keyed by (block instance, declaration)."""

    objects: ProgramObjects
    tables: dict[tuple[int, int], TableRuntime] = field(default_factory=dict)
    externs: dict[tuple[int | None, int], Any] = field(default_factory=dict)
    value_sets: dict[tuple[int, int], ValueSet] = field(default_factory=dict)
    action_names: dict[tuple[int, int | None], str] = field(default_factory=dict)
    custom_crcs: dict[str, hashes.CustomCrc] = field(default_factory=dict)


def to_bits(value: Any, type_: t.Type | None) -> int:
    """Unsigned bit pattern of a folded constant (for table entries / action data)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, t.EnumMemberInfo):
        value = value.value if value.value is not None else value.index
    if isinstance(value, t.ErrorMember):
        value = value.code
    if not isinstance(value, int):
        raise CompileError(f"constant {value!r} is not an integer")
    width = bit_width(type_) if type_ is not None else None
    if width is not None:
        return value & ((1 << width) - 1)
    return value


def _loc_error(node: ast.Node, message: str) -> CompileError:
    loc = node.loc
    return CompileError(message, loc.file, loc.line, loc.column)


class RuntimeBuilder:
    def __init__(
        self,
        program: ast.CheckedProgram,
        ids: ControlPlaneIds,
        clock: Clock,
        pre: ReplicationEngine,
        digest_queue: DigestQueue,
    ) -> None:
        self.program = program
        self.ids = ids
        self.clock = clock
        self.objects = ProgramObjects(
            p4info=ids.p4info, clock=clock, pre=pre, digest_queue=digest_queue
        )
        if ids.p4info is not None:
            self.objects.p4info_ids = ids.listed()
        self.result = RuntimeObjects(self.objects)
        self._no_action = self._find_no_action()

    # ------------------------------------------------------------------ entry point

    def build(self) -> RuntimeObjects:
        for action in self.program.actions:
            self._action(action)
        for instance in self.program.extern_instances:
            self._extern(instance)
        for table in self.program.tables:
            self._table(table)
        for value_set in self.program.value_sets:
            self._value_set(value_set)
        self._controller_headers()
        return self.result

    # ------------------------------------------------------------------ actions

    def _find_no_action(self) -> ast.ActionDecl | None:
        for decl in self.program.program.declarations:
            if isinstance(decl, ast.ActionDecl) and decl.name == "NoAction":
                return decl
        return None

    def _action(self, instance: ast.ActionInstance) -> None:
        key = (id(instance.decl), id(instance.block) if instance.block is not None else None)
        self.result.action_names[key] = instance.name
        if instance.name in self.objects.actions:
            return
        action_id = self.ids.id(ResourceType.ACTION, instance.name)
        known = self.ids.action_params.get(instance.name)
        params = []
        cp_params = instance.decl.control_plane_params
        if known is not None and not known:
            cp_params = []  # only called directly: P4Info lists it without parameters (p4c)
        for position, param in enumerate(cp_params):
            width = bit_width(param.type) if param.type is not None else None
            if known is not None and position < len(known):
                pid, pname, pwidth = known[position]
                params.append(ActionParamInfo(pid, pname, pwidth or (width or 0)))
            else:
                params.append(ActionParamInfo(position + 1, param.name, width or 0))
        info = ActionInfo(action_id, instance.name, tuple(params))
        self.objects.actions[instance.name] = info
        self.objects.register(instance.name, action_id)

    def action_name(self, decl: ast.ActionDecl, block: ast.BlockInstance | None) -> str:
        name = self.result.action_names.get((id(decl), id(block) if block is not None else None))
        if name is None:
            name = self.result.action_names.get((id(decl), None))
        if name is None:
            # an action p4c would drop (never used by a table): still give it an id
            name = decl.name_annotation or decl.name
            if block is not None and not (name.startswith(".")):
                name = block.qualified_name(decl)
            name = name.lstrip(".")
            self.result.action_names[(id(decl), id(block) if block is not None else None)] = name
            action_id = self.ids.id(ResourceType.ACTION, name)
            params = tuple(
                ActionParamInfo(i + 1, p.name, bit_width(p.type) or 0)  # type: ignore[arg-type]
                for i, p in enumerate(decl.control_plane_params)
            )
            self.objects.actions.setdefault(name, ActionInfo(action_id, name, params))
            self.objects.register(name, action_id)
        return name

    def action_id(self, decl: ast.ActionDecl, block: ast.BlockInstance | None) -> int:
        return self.objects.actions[self.action_name(decl, block)].id

    # ------------------------------------------------------------------ externs

    def _extern(self, instance: ast.ExternInstance) -> None:
        kind = instance.extern_name
        name = instance.name
        args = instance.constructor_args
        block_key = id(instance.block) if instance.block is not None else None
        key = (block_key, id(instance.decl))
        obj: Any
        if kind == "register":
            element = instance.type_args[0] if instance.type_args else None
            width = bit_width(element) if element is not None else None
            if width is None:
                raise _loc_error(
                    instance.decl, f"register {name}: element type must be bit<W>/int<W>/bool"
                )
            obj = Register(name, width, _int(args, 0, instance))
            self.objects.registers[name] = obj
            resource = ResourceType.REGISTER
        elif kind == "counter":
            obj = Counter(name, _int(args, 0, instance), _counter_type(args, 1))
            self.objects.counters[name] = obj
            resource = ResourceType.COUNTER
        elif kind == "meter":
            obj = Meter(name, _int(args, 0, instance), _meter_type(args, 1), self.clock)
            self.objects.meters[name] = obj
            resource = ResourceType.METER
        elif kind == "direct_counter":
            obj = DirectCounter(name, _counter_type(args, 0))
            resource = ResourceType.DIRECT_COUNTER
        elif kind == "direct_meter":
            obj = DirectMeter(name, _meter_type(args, 0))
            resource = ResourceType.DIRECT_METER
        elif kind in ("action_profile", "action_selector"):
            selector = kind == "action_selector"
            size = _int(args, 1 if selector else 0, instance)
            hash_function = None
            if selector:
                algo = args[0]
                algo_name = algo.name if isinstance(algo, t.EnumMemberInfo) else str(algo)
                hash_function = self.hash_function(algo_name, f"selector:{name}")
            obj = ActionProfile(
                name,
                id=self.ids.id(ResourceType.ACTION_PROFILE, name),
                size=size,
                with_selector=selector,
                hash_function=hash_function,
            )
            self.objects.action_profiles[name] = obj
            resource = ResourceType.ACTION_PROFILE
        else:
            # Checksum16 and other externs have no control-plane state
            self.result.externs[key] = instance
            return
        self.result.externs[key] = obj
        self.objects.register(name, self.ids.id(resource, name))

    def hash_function(self, algo_name: str, site: str):
        """A ``f(bytes) -> int`` for a v1model HashAlgorithm at one call site."""
        algo = hashes.HashAlgorithm.from_name(algo_name)
        if algo in (hashes.HashAlgorithm.crc16_custom, hashes.HashAlgorithm.crc32_custom):
            width = 16 if algo is hashes.HashAlgorithm.crc16_custom else 32
            crc = hashes.CustomCrc(width)
            self.objects.hash_crcs[site] = crc
            return crc
        if algo is hashes.HashAlgorithm.random:
            raise CompileError(
                "HashAlgorithm.random is not implemented by BMv2 simple_switch "
                '("Unknown hash algorithm: random"); p4emu refuses it too'
            )
        return hashes.hash_function(algo)

    # ------------------------------------------------------------------ tables

    def _table(self, instance: ast.TableInstance) -> None:
        decl = instance.decl
        block = instance.block
        name = instance.name
        key_elements = [k for k in decl.key if k.match_kind != "selector"]
        selector_elements = [k for k in decl.key if k.match_kind == "selector"]
        key_fields, key_infos, selector_infos = self._table_key(name, decl)

        profile: ActionProfile | None = None
        if instance.implementation is not None:
            profile = self.result.externs.get(_extern_key(instance.implementation))
            if not isinstance(profile, ActionProfile):
                raise _loc_error(decl, f"table {name}: implementation is not an action profile")
            profile.tables.append(name)
            profile.selector_widths = tuple(i.width for i in selector_infos)

        action_refs = list(decl.actions)
        implicit_default = self._no_action if decl.default_action is None else None
        actions = self._table_actions(decl, block, action_refs, implicit_default)
        allowed, widths, action_ids, default = actions

        direct_counter = None
        counter_name = None
        if instance.counters is not None:
            direct_counter = self.result.externs.get(_extern_key(instance.counters))
            counter_name = instance.counters.name
        direct_meter = None
        meter_name = None
        if instance.meters is not None:
            direct_meter = self.result.externs.get(_extern_key(instance.meters))
            meter_name = instance.meters.name
        table = Table(
            name,
            key_fields,
            decl.size if decl.size is not None else 1024,
            default_action=default,
            const_default_action=decl.default_action_const,
            const_entries=decl.entries_const,
            allowed_actions=None if profile is not None else allowed,
            action_param_widths=None if profile is not None else widths,
            direct_counter=direct_counter if isinstance(direct_counter, DirectCounter) else None,
            direct_meter=direct_meter if isinstance(direct_meter, DirectMeter) else None,
            supports_idle_timeout=decl.support_timeout,
            clock=self.clock,
        )
        if profile is not None:
            profile.action_param_widths = {**(profile.action_param_widths or {}), **widths}
        if decl.entries:
            table.install_program_entries(
                [self._entry(entry, decl, key_elements, block) for entry in decl.entries]
            )
        table_id = self.ids.id(ResourceType.TABLE, name)
        self.objects.tables[name] = table
        self.objects.table_info[name] = TableInfo(
            id=table_id,
            name=name,
            table=table,
            key=tuple(key_infos),
            selector_fields=tuple(selector_infos),
            action_ids=tuple(action_ids),
            action_profile=profile.name if profile is not None else None,
            direct_counter=counter_name,
            direct_meter=meter_name,
            is_const=decl.entries_const,
            initial_entries=bool(decl.entries) and not decl.entries_const,
        )
        self.objects.register(name, table_id)
        if isinstance(direct_counter, DirectCounter) and counter_name is not None:
            cid = self.ids.id(ResourceType.DIRECT_COUNTER, counter_name)
            self.objects.direct_counters[counter_name] = DirectResourceInfo(
                cid, counter_name, name, direct_counter
            )
            self.objects.register(counter_name, cid)
        if isinstance(direct_meter, DirectMeter) and meter_name is not None:
            mid = self.ids.id(ResourceType.DIRECT_METER, meter_name)
            self.objects.direct_meters[meter_name] = DirectResourceInfo(
                mid, meter_name, name, direct_meter
            )
            self.objects.register(meter_name, mid)
        self.result.tables[(id(block), id(decl))] = TableRuntime(
            name=name,
            table=table,
            key_elements=key_elements,
            selector_elements=selector_elements,
            action_refs=action_refs,
            implicit_default=implicit_default,
            profile=profile,
            has_direct_meter=isinstance(direct_meter, DirectMeter),
        )

    def _table_key(
        self, name: str, decl: ast.TableDecl
    ) -> tuple[list[KeyField], list[KeyFieldInfo], list[KeyFieldInfo]]:
        """The runtime key fields of a table, their P4Info view (ids from the P4Info when
        known) and its selector fields, in key order."""
        known_fields = self.ids.match_fields.get(name)
        key_fields: list[KeyField] = []
        key_infos: list[KeyFieldInfo] = []
        selector_infos: list[KeyFieldInfo] = []
        position = 0
        for element in decl.key:
            width = bit_width(element.expr.type) if element.expr.type is not None else None
            if isinstance(element.expr.type, t.ErrorType):
                width = ERROR_KEY_WIDTH
            if width is None:
                raise _loc_error(
                    element, f"table {name}: key {element.name} is not a bit-string/bool value"
                )
            if element.match_kind == "selector":
                selector_infos.append(KeyFieldInfo(0, element.name, width, "selector"))
                continue
            kind = _MATCH_KINDS.get(element.match_kind)
            if kind is None:
                raise _loc_error(element, f"match kind {element.match_kind} is not supported")
            field_id = position + 1
            if known_fields is not None and position < len(known_fields):
                field_id = known_fields[position][0]
            position += 1
            key_fields.append(KeyField(element.name, width, kind))
            key_infos.append(KeyFieldInfo(field_id, element.name, width, element.match_kind))
        return key_fields, key_infos, selector_infos

    def _table_actions(
        self,
        decl: ast.TableDecl,
        block: ast.BlockInstance | None,
        action_refs: list[ast.ActionRef],
        implicit_default: ast.ActionDecl | None,
    ) -> tuple[
        dict[int, ActionScope], dict[int, tuple[int, ...]], list[int], tuple[int, list[int]] | None
    ]:
        """A table's actions: allowed scope and parameter widths by action id, the ids in
        declaration order, and the default action with its arguments (NoAction when the
        program names none)."""
        allowed: dict[int, ActionScope] = {}
        widths: dict[int, tuple[int, ...]] = {}
        action_ids: list[int] = []
        for ref in action_refs:
            if ref.action is None:
                continue
            action_id = self.action_id(ref.action, block)
            scope = ActionScope.table_and_default
            if ref.default_only:
                scope = ActionScope.default_only
            elif ref.table_only:
                scope = ActionScope.table_only
            allowed[action_id] = scope
            action_ids.append(action_id)
            param_widths = [bit_width(p.type) for p in ref.action.control_plane_params]  # type: ignore[arg-type]
            if all(w is not None for w in param_widths):
                widths[action_id] = tuple(param_widths)  # type: ignore[arg-type]
        default: tuple[int, list[int]] | None = None
        default_ref = decl.default_action
        if default_ref is not None and default_ref.action is not None:
            default = (
                self.action_id(default_ref.action, block),
                self._action_args(default_ref),
            )
        elif implicit_default is not None:
            nid = self.action_id(implicit_default, None)
            allowed.setdefault(nid, ActionScope.default_only)
            widths.setdefault(nid, ())
            default = (nid, [])
        return allowed, widths, action_ids, default

    def _action_args(self, ref: ast.ActionRef) -> list[int]:
        out = []
        action = ref.action
        assert action is not None
        by_param = {id(b.param): b for b in ref.bound_args}
        for param in action.control_plane_params:
            bound = by_param.get(id(param))
            if bound is None or bound.expr is None or bound.expr.const_value is None:
                raise _loc_error(ref, f"argument {param.name} of {ref.name} is not a constant")
            out.append(to_bits(bound.expr.const_value, param.type))
        return out

    def _entry(
        self,
        entry: ast.TableEntry,
        decl: ast.TableDecl,
        key_elements: list[ast.KeyElement],
        block: ast.BlockInstance,
    ) -> ProgramEntry:
        keyset = entry.keyset
        if len(keyset) == 1 and isinstance(keyset[0], ast.TupleKeyset):
            keyset = keyset[0].elements
        if len(keyset) == 1 and len(key_elements) > 1 and isinstance(keyset[0], ast.DefaultExpr):
            keyset = [keyset[0]] * len(key_elements)
        if len(keyset) != len(key_elements):
            raise _loc_error(
                entry, f"entry has {len(keyset)} keys, the table has {len(key_elements)}"
            )
        match = [_match_value(expr, element) for expr, element in zip(keyset, key_elements)]
        ref = entry.action
        if ref.action is None:
            raise _loc_error(entry, f"entry action {ref.name} is not resolved")
        return ProgramEntry(
            match=match,
            action_id=self.action_id(ref.action, block),
            args=tuple(self._action_args(ref)),
            priority=entry.priority_value,
            is_const=decl.entries_const,
        )

    # ------------------------------------------------------------------ value sets

    def _value_set(self, instance: ast.ValueSetInstance) -> None:
        decl = instance.decl
        element = decl.element_type.resolved
        fields: list[ValueSetField] = []
        if isinstance(element, t.StructType):
            for position, info in enumerate(element.fields):
                width = bit_width(info.type)
                if width is None:
                    raise _loc_error(
                        decl, f"value set {instance.name}: field {info.name} is not a bit string"
                    )
                kind = MatchKind.exact
                for annotation in info.annotations:
                    if annotation.name == "match" and annotation.args:
                        kind_name = getattr(annotation.args[0], "name", None)
                        kind = _MATCH_KINDS.get(kind_name or "", MatchKind.exact)
                fields.append(ValueSetField(position + 1, info.name, width, kind))
        else:
            width = bit_width(element) if element is not None else None
            if width is None:
                raise _loc_error(
                    decl, f"value set {instance.name}: element type is not a bit string"
                )
            fields.append(ValueSetField(1, "", width))
        vs_id = self.ids.id(ResourceType.VALUE_SET, instance.name)
        value_set = ValueSet(instance.name, fields, decl.size_value, vs_id)
        self.objects.value_sets[instance.name] = value_set
        self.objects.register(instance.name, vs_id)
        self.result.value_sets[(id(instance.block), id(decl))] = value_set

    # ------------------------------------------------------------------ digests

    def digest(self, type_: t.Type) -> int:
        name = type_.describe()
        existing = self.objects.digests.get(name)
        if existing is not None:
            return existing.id
        fields: list[tuple[str, int]] = []
        if isinstance(type_, t.StructLikeType):
            for path, info in t.iter_fields_flat(type_):
                width = bit_width(info.type)
                fields.append((path, width or 0))
        else:
            fields.append(("", bit_width(type_) or 0))
        digest_id = self.ids.id(ResourceType.DIGEST, name)
        self.objects.digests[name] = DigestInfo(digest_id, name, tuple(fields))
        self.objects.register(name, digest_id)
        return digest_id

    # ------------------------------------------------------------------ packet I/O

    def _controller_headers(self) -> None:
        seen: set[int] = set()
        for type_ in _all_types(self.program):
            if not isinstance(type_, t.HeaderType) or id(type_) in seen:
                continue
            seen.add(id(type_))
            for annotation in type_.annotations:
                if annotation.name != "controller_header":
                    continue
                label = annotation.string_arg()
                if label is None:
                    continue
                known = self.ids.controller_fields.get(label)
                fields = []
                for position, info in enumerate(type_.fields):
                    width = bit_width(info.type)
                    if width is None:
                        raise CompileError(
                            f"controller header {label}: field {info.name} is not a bit string"
                        )
                    fid = position + 1
                    if known is not None and position < len(known):
                        fid = known[position][0]
                    fields.append(ControllerField(fid, info.name, width))
                header_id = self.ids.id(ResourceType.CONTROLLER_HEADER, type_.name)
                self.objects.controller_headers[label] = ControllerHeader(
                    header_id, label, type_.name, tuple(fields)
                )


def _all_types(program: ast.CheckedProgram):
    yield from program.types.values()
    for decl in program.program.declarations:
        type_ = getattr(decl, "type", None)
        if isinstance(type_, t.Type):
            yield type_


def _extern_key(instance: ast.ExternInstance) -> tuple[int | None, int]:
    return (id(instance.block) if instance.block is not None else None, id(instance.decl))


def _int(args: list[Any], index: int, instance: ast.ExternInstance) -> int:
    if index >= len(args) or not isinstance(args[index], int):
        raise _loc_error(
            instance.decl, f"{instance.name}: constructor argument {index} is not an integer"
        )
    return int(args[index])


def _counter_type(args: list[Any], index: int) -> CounterType:
    value = args[index] if index < len(args) else None
    name = value.name if isinstance(value, t.EnumMemberInfo) else "packets_and_bytes"
    return CounterType(name)


def _meter_type(args: list[Any], index: int) -> MeterType:
    value = args[index] if index < len(args) else None
    name = value.name if isinstance(value, t.EnumMemberInfo) else "packets"
    return MeterType(name)


def _match_value(expr: ast.Expr, element: ast.KeyElement) -> MatchValue:
    kind = element.match_kind
    key_type = element.expr.type
    width = bit_width(key_type) or 0  # type: ignore[arg-type]
    full = (1 << width) - 1
    if isinstance(expr, (ast.DontCare, ast.DefaultExpr)):
        if kind == "exact":
            raise _loc_error(expr, "an exact key cannot be a wildcard")
        return None
    if isinstance(expr, ast.Mask):
        value, mask = (
            expr.const_value
            if expr.const_value is not None
            else (
                expr.value.const_value,
                expr.mask.const_value,
            )
        )
        value, mask = to_bits(value, key_type), to_bits(mask, key_type)
        if kind == "lpm":
            inverted = full ^ mask
            if inverted & (inverted + 1):
                raise _loc_error(expr, f"mask {mask:#x} is not a prefix for an lpm key")
            return Lpm(value & mask, width - inverted.bit_length())
        if kind in ("ternary",):
            return Ternary(value & mask, mask)
        if kind == "exact" and mask == full:
            return Exact(value)
        raise _loc_error(expr, f"a mask is not allowed for a {kind} key")
    if isinstance(expr, ast.Range):
        low, high = (
            expr.const_value
            if expr.const_value is not None
            else (
                expr.lo.const_value,
                expr.hi.const_value,
            )
        )
        if kind != "range":
            raise _loc_error(expr, f"a range is not allowed for a {kind} key")
        return Range(to_bits(low, key_type), to_bits(high, key_type))
    if expr.const_value is None:
        raise _loc_error(expr, "table entry key is not a constant")
    value = to_bits(expr.const_value, key_type)
    if kind == "exact":
        return Exact(value)
    if kind == "lpm":
        return Lpm(value, width)
    if kind == "ternary":
        return Ternary(value, full)
    if kind == "range":
        return Range(value, value)
    if kind == "optional":
        return OptionalMatch(value)
    raise _loc_error(expr, f"match kind {kind} is not supported")


__all__ = ["RuntimeBuilder", "RuntimeObjects", "TableRuntime", "scalar_type", "to_bits"]
