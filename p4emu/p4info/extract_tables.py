"""Tables, their actions, match fields, default actions, implementations and direct
resources -> the model (part of :mod:`p4emu.p4info.extract`).
"""

from __future__ import annotations

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.p4info.annotations import (
    documentation,
    explicit_id,
    listed_annotations,
    preamble,
)
from p4emu.p4info.exceptions import ExtractError
from p4emu.p4info.extract_base import (
    DEFAULT_TABLE_SIZE,
    Local,
    Visit,
    counter_unit,
    match_type_of,
    meter_unit,
)
from p4emu.p4info.extract_externs import ExternsExtractor
from p4emu.p4info.ids import control_plane_name
from p4emu.p4info.keys import key_name
from p4emu.p4info.model import (
    Action,
    ActionParam,
    ActionRef,
    ActionScope,
    DefaultAction,
    DirectCounter,
    DirectMeter,
    MatchField,
    MatchType,
    Preamble,
    Table,
)
from p4emu.p4info.typespecs import control_plane_width


class TablesExtractor(ExternsExtractor):
    def _control_actions(
        self,
        flat: list[Local],
        tables: list[tuple[ast.BlockInstance, ast.TableDecl]],
        visits: list[Visit],
    ) -> list[tuple[ast.ActionDecl, ast.BlockInstance | None]]:
        """Actions left in the control after the front end, in controlLocals order:
        localized top-level actions first (first-use order), then the used local ones."""
        used: set[int] = set()
        global_order: list[ast.ActionDecl] = []

        def use(action: ast.ActionDecl | None, by_table: bool = True) -> None:
            if action is None:
                return
            used.add(id(action))
            if by_table:
                self.table_actions.add(id(action))
            if self._is_global(action) and all(a is not action for a in global_order):
                global_order.append(action)

        for _, decl in tables:
            for prop in decl.properties:
                if prop.name == "actions":
                    for ref in decl.actions:
                        use(ref.action)
                    if decl.default_action is None:
                        use(self.no_action)  # CreateBuiltins appends @defaultonly NoAction
                elif prop.name == "default_action" and decl.default_action is not None:
                    use(decl.default_action.action)
                elif prop.name == "entries" and decl.entries:
                    for entry in decl.entries:
                        use(entry.action.action)
            if decl.default_action is None:
                use(self.no_action)
        for visit in visits:
            node = visit.node
            if isinstance(node, ast.Call) and isinstance(node.target, ast.ActionCall):
                use(node.target.action, by_table=False)
        result: list[tuple[ast.ActionDecl, ast.BlockInstance | None]] = [
            (action, None) for action in global_order
        ]
        for local in flat:
            if isinstance(local.decl, ast.ActionDecl) and id(local.decl) in used:
                result.append((local.decl, local.block))
        return result

    def _emit_actions(self, actions: list[tuple[ast.ActionDecl, ast.BlockInstance | None]]) -> None:
        for decl, block in actions:
            name = self._action_name(decl, block)
            params: list[ActionParam] = []
            # An action only called directly has every argument bound at its call sites:
            # p4c lists it without parameters (the control plane never supplies them).
            if id(decl) in self.table_actions:
                for param in decl.control_plane_params:
                    params.append(self._action_param(name, param))
            if params:
                self.touched_type_info = True
            self.model.actions.append(
                Action(preamble(name, decl), params, hidden=decl.has_annotation("hidden"))
            )

    def _action_param(self, action: str, param: ast.Parameter) -> ActionParam:
        type_ = param.type
        what = f"parameter '{param.name}' of action {action}"
        bitwidth: int | None
        type_name: str | None = None
        if isinstance(type_, t.EnumType) and type_.underlying is None:
            bitwidth, type_name = None, self.types.enum(type_)
        elif isinstance(type_, (t.BitsType, t.BoolType, t.NewType, t.EnumType)):
            bitwidth, type_name = control_plane_width(type_, param.loc, what)
            self._register_scalar_type(type_, param.loc)
        else:
            described = type_.describe() if type_ is not None else "?"
            raise ExtractError(
                param.loc,
                f"{what} has type {described}; P4Runtime needs bit<>, int<>, bool, a new type "
                "or an enum",
            )
        name = control_plane_name(param.name_annotation or param.name)
        return ActionParam(
            name,
            bitwidth,
            explicit_id(param.annotations),
            listed_annotations(param.annotations),
            documentation(param.annotations),
            type_name,
        )

    def _table(self, block: ast.BlockInstance, decl: ast.TableDecl) -> None:
        instance = self._table_instance(block, decl)
        name = instance.name
        self.touched_type_info = True  # p4c: getMatchFields(..., mutable_type_info())
        fields = [self._match_field(name, element) for element in decl.key]
        refs = [self._action_ref(name, block, ref) for ref in decl.actions]
        default = decl.default_action
        if default is None:
            if self.no_action is None:
                raise ExtractError(decl.loc, f"table {name} needs NoAction (include core.p4)")
            no_action = self._action_name(self.no_action, None)
            if all(ref.action is not self.no_action for ref in decl.actions):
                refs.append(ActionRef(no_action, ActionScope.DEFAULT_ONLY, ("@defaultonly",)))
            default_action = DefaultAction(no_action)
        else:
            default_action = self._default_action(name, block, default, decl.default_action_const)
        size = decl.size if decl.size else DEFAULT_TABLE_SIZE
        table = Table(
            preamble(name, decl),
            fields,
            refs,
            default_action,
            size=size,
            is_const_table=decl.entries is not None and decl.entries_const,
            has_initial_entries=decl.entries is not None,
            supports_timeout=decl.support_timeout,
            hidden=decl.has_annotation("hidden"),
        )
        if not table.hidden:  # p4c adds table properties only for tables it emits
            table.implementation = self._table_implementation(instance, decl)
        table.direct_counter = self._direct_resource(instance, decl, "counters")
        table.direct_meter = self._direct_resource(instance, decl, "meters")
        self.model.tables.append(table)

    def _match_field(self, table: str, element: ast.KeyElement) -> MatchField:
        match_type, other = match_type_of(element.match_kind)
        name = key_name(element)
        annotations = listed_annotations(element.annotations)
        doc = documentation(element.annotations)
        field_id = explicit_id(element.annotations)
        if match_type is MatchType.SELECTOR:
            return MatchField(name, 0, match_type, explicit_id=field_id)
        type_ = element.expr.type
        width, type_name = control_plane_width(type_, element.loc, f"key {name} of table {table}")
        self._register_scalar_type(type_, element.loc)
        return MatchField(name, width, match_type, other, field_id, annotations, doc, type_name)

    def _action_ref(self, table: str, block: ast.BlockInstance, ref: ast.ActionRef) -> ActionRef:
        if ref.action is None:
            raise ExtractError(ref.loc, f"table {table}: unresolved action {ref.name}")
        if ref.table_only and ref.default_only:
            raise ExtractError(
                ref.loc,
                f"table '{table}' has an action reference ('{ref.name}') which is annotated "
                "with both '@tableonly' and '@defaultonly'",
            )
        scope = ActionScope.TABLE_AND_DEFAULT
        if ref.table_only:
            scope = ActionScope.TABLE_ONLY
        elif ref.default_only:
            scope = ActionScope.DEFAULT_ONLY
        owner = None if self._is_global(ref.action) else block
        return ActionRef(
            self._action_name(ref.action, owner), scope, listed_annotations(ref.annotations)
        )

    def _default_action(
        self, table: str, block: ast.BlockInstance, ref: ast.ActionRef, is_const: bool
    ) -> DefaultAction:
        action = ref.action
        if action is None:
            raise ExtractError(ref.loc, f"table {table}: unresolved default action {ref.name}")
        owner = None if self._is_global(action) else block
        arguments: list[int | bool] = []
        for bound in ref.bound_args:
            if not bound.param.is_directionless:
                continue
            value = bound.expr.const_value if bound.expr is not None else None
            if isinstance(value, t.EnumMemberInfo) and value.value is not None:
                value = value.value
            if isinstance(value, (bool, int)):
                arguments.append(value)
                continue
            shown = ast.expr_to_source(bound.expr) if bound.expr is not None else "(missing)"
            raise ExtractError(
                ref.loc,
                f"table {table}: default action argument {shown} is not a compile-time "
                "integer, boolean or serializable enum value",
            )
        return DefaultAction(self._action_name(action, owner), tuple(arguments), is_const)

    def _table_implementation(self, instance: ast.TableInstance, decl: ast.TableDecl) -> str | None:
        target = decl.implementation
        if target is None:
            return None
        extern = instance.implementation
        if isinstance(target, ast.ConstructorCall):
            name = self._in_place_name(instance.name, decl, "implementation")
            if extern is None or extern.extern_name not in ("action_profile", "action_selector"):
                raise ExtractError(
                    target.loc, f"table {instance.name}: expected an action profile or selector"
                )
            # p4c emits a profile built inside the table right after the table is added.
            profile = self._action_profile(extern, target, Preamble(name))
            prop = decl.get_property("implementation")
            annotations = prop.annotations if prop is not None else []
            profile.preamble = Preamble(
                name,
                explicit_id(annotations),
                listed_annotations(annotations, skip=frozenset({"max_group_size"})),
                documentation(annotations),
            )
            max_annotation = ast.find_annotation(annotations, "max_group_size")
            if max_annotation is not None and profile.with_selector:
                profile.max_group_size = max_annotation.int_arg() or 0
            self.model.action_profiles.append(profile)
            return name
        if extern is None:
            raise ExtractError(target.loc, f"table {instance.name}: unknown implementation")
        return extern.name

    def _direct_resource(
        self, instance: ast.TableInstance, decl: ast.TableDecl, prop_name: str
    ) -> str | None:
        target = decl.counters if prop_name == "counters" else decl.meters
        if target is None:
            return None
        extern = instance.counters if prop_name == "counters" else instance.meters
        expected = "direct_counter" if prop_name == "counters" else "direct_meter"
        if extern is None or extern.extern_name != expected:
            raise ExtractError(target.loc, f"table {instance.name}: expected a {expected}")
        if isinstance(target, ast.ConstructorCall):
            name = self._in_place_name(instance.name, decl, prop_name)
            args = extern.constructor_args
            prop = decl.get_property(prop_name)
            annotations = prop.annotations if prop is not None else []
            pre = Preamble(
                name,
                explicit_id(annotations),
                listed_annotations(annotations),
                documentation(annotations),
            )
            if prop_name == "counters":
                self.model.direct_counters.append(DirectCounter(pre, counter_unit(args, 0)))
            else:
                self.model.direct_meters.append(DirectMeter(pre, meter_unit(args, 0)))
            return name
        return extern.name

    def _in_place_name(self, table: str, decl: ast.TableDecl, prop_name: str) -> str:
        prop = decl.get_property(prop_name)
        annotation = ast.find_annotation(prop.annotations, "name") if prop is not None else None
        external = annotation.string_arg() if annotation is not None else None
        if not external:
            raise ExtractError(
                decl.loc,
                f"table '{table}' has an anonymous table property '{prop_name}' with no name "
                "annotation, which is not supported by P4Runtime",
            )
        return control_plane_name(external)
