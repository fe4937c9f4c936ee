"""Tables: keys, action lists and references, default actions, const entries and their
priorities, other properties."""

from __future__ import annotations

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.typecheck.core import (
    BIT32,
    BOOL,
    Bindings,
    CheckerCore,
    Context,
    Scope,
)

# entry forms (besides a plain value) each match kind accepts in const entries
MAX_ENTRY_PRIORITY = 2**31 - 1
"""The largest explicit entry priority p4c 1.2.4.8 accepts (a signed 32-bit int)."""

MATCH_KIND_ENTRY_FORMS = {
    "exact": (),
    "lpm": (ast.Mask,),
    "ternary": (ast.Mask,),
    "range": (ast.Range,),
    "optional": (),
    "selector": (),
}


class TableChecks(CheckerCore):
    """Tables: a part of :class:`~p4emu.frontend.typecheck.TypeChecker`."""

    # ------------------------------------------------------------------ tables

    def check_table(self, table: ast.TableDecl, scope: Scope, ctx: Context) -> None:
        table_ctx = Context("table", block=ctx.block)
        seen: dict[str, ast.TableProperty] = {}
        for prop in table.properties:
            if prop.name in seen:
                raise self.fail(prop.loc, f"duplicate property '{prop.name}' in table {table.name}")
            seen[prop.name] = prop
        key_types: list[t.Type] = []
        if "key" in seen:
            for element in seen["key"].value:
                key_types.append(self.check_key_element(element, table, scope, table_ctx))
            table.key = seen["key"].value
        if "actions" not in seen:
            raise self.fail(table.loc, f"table {table.name} has no 'actions' property")
        names: set[int] = set()
        for ref in seen["actions"].value:
            self.check_action_ref(ref, scope, table_ctx, table, mode="list")
            assert ref.action is not None
            if id(ref.action) in names:
                raise self.fail(ref.loc, f"action '{ref.name}' appears twice in table {table.name}")
            names.add(id(ref.action))
        table.actions = seen["actions"].value
        if "default_action" in seen:
            prop = seen["default_action"]
            ref = prop.value
            self.check_action_ref(ref, scope, table_ctx, table, mode="default")
            table.default_action = ref
            table.default_action_const = prop.is_const
        entries: list[ast.TableProperty] = []
        for prop in table.properties:
            if prop.name in ("key", "actions", "default_action"):
                continue
            if prop.name == "entries":
                entries.append(prop)  # after priority_delta / largest_priority_wins, wherever
                continue
            self.check_table_property(table, prop, scope, table_ctx)
        for prop in entries:
            self.check_entries(table, prop, key_types, scope, table_ctx)

    def check_key_element(
        self, element: ast.KeyElement, table: ast.TableDecl, scope: Scope, ctx: Context
    ) -> t.Type:
        key_type = self.check_expr(element.expr, scope, ctx)
        if element.match_kind not in self.match_kind_type.members:
            raise self.fail(
                element.loc, f"unknown match kind '{element.match_kind}' in table {table.name}"
            )
        if not self.is_matchable(key_type) or isinstance(key_type, t.InfIntType):
            raise self.fail(
                element.expr.loc,
                f"table key '{ast.expr_to_source(element.expr)}' has type {key_type}, which cannot be matched",
            )
        name = ast.find_annotation(element.annotations, "name")
        element.name = (name.string_arg() if name else None) or ast.expr_to_source(element.expr)
        return key_type

    def check_action_ref(
        self, ref: ast.ActionRef, scope: Scope, ctx: Context, table: ast.TableDecl, mode: str
    ) -> None:
        absolute = ref.name.startswith(".")
        name = ref.name[1:] if absolute else ref.name
        found = (self.globals if absolute else scope).lookup(name)
        if not found:
            raise self.fail(ref.loc, f"unknown action '{name}' in table {table.name}")
        action = self.found(found)
        if not isinstance(action, ast.ActionDecl):
            raise self.fail(ref.loc, f"'{name}' in table {table.name} is not an action")
        ref.action = action
        if mode == "list":
            given = ref.args or []
            directional = action.directional_params
            if len(given) != len(directional):
                raise self.fail(
                    ref.loc,
                    f"action '{name}' in the actions of table {table.name} needs {len(directional)} argument(s) for its directional parameters, {len(given)} given",
                )
            ref.bound_args = self.bind_arguments(
                directional, given, ref.loc, name, scope, ctx, Bindings()
            )
            return
        listed = table.action_ref(action) if table.actions else None
        if listed is None and mode in ("default", "entry"):
            where = "default action" if mode == "default" else "entry action"
            raise self.fail(
                ref.loc, f"{where} '{name}' is not in the actions of table {table.name}"
            )
        assert listed is not None
        if mode == "default" and listed.table_only:
            raise self.fail(
                ref.loc,
                f"action '{name}' is @tableonly and cannot be the default action of table {table.name}",
            )
        if mode == "entry" and listed.default_only:
            raise self.fail(
                ref.loc,
                f"action '{name}' is @defaultonly and cannot be used in entries of table {table.name}",
            )
        if mode == "entry":
            params = action.control_plane_params
            given = ref.args or []
            if len(given) != len(params):
                raise self.fail(
                    ref.loc,
                    f"action '{name}' takes {len(params)} control-plane argument(s), {len(given)} given",
                )
            ref.bound_args = self.bind_arguments(
                params, given, ref.loc, name, scope, ctx, Bindings()
            )
        else:
            given = ref.args
            if given is None:
                if action.control_plane_params:
                    raise self.fail(
                        ref.loc, f"default_action '{name}' needs arguments: write {name}(...)"
                    )
                ref.bound_args = list(listed.bound_args)
                return
            directional = action.directional_params
            if len(given) == len(action.control_plane_params) and directional:
                ref.bound_args = list(listed.bound_args) + self.bind_arguments(
                    action.control_plane_params, given, ref.loc, name, scope, ctx, Bindings()
                )
            else:
                ref.bound_args = self.bind_arguments(
                    action.params, given, ref.loc, name, scope, ctx, Bindings()
                )
        for bound in ref.bound_args:
            if (
                bound.param.is_directionless
                and bound.expr is not None
                and bound.expr.const_value is None
            ):
                raise self.fail(
                    bound.expr.loc,
                    f"argument '{bound.param.name}' of action '{name}' must be a compile-time constant",
                )

    def check_entries(
        self,
        table: ast.TableDecl,
        prop: ast.TableProperty,
        key_types: list[t.Type],
        scope: Scope,
        ctx: Context,
    ) -> None:
        entries: list[ast.TableEntry] = prop.value
        table.entries = entries
        table.entries_const = prop.is_const
        if not table.key:
            raise self.fail(prop.loc, f"table {table.name} has entries but no key")
        for entry in entries:
            if len(entry.keyset) != len(table.key):
                raise self.fail(
                    entry.loc,
                    f"entry has {len(entry.keyset)} key value(s) but table {table.name} has {len(table.key)} key field(s)",
                )
            for index, element in enumerate(table.key):
                entry.keyset[index] = self.check_entry_key(
                    entry.keyset[index], element, key_types[index], scope, ctx
                )
            if entry.priority is not None:
                self.check_expr(entry.priority, scope, ctx, BIT32)
                self.require_const(entry.priority, "an entry priority")
                if not table.needs_priority:
                    raise self.fail(
                        entry.priority.loc,
                        f"table {table.name} has no ternary, range or optional key, so its entries cannot have priorities",
                    )
            self.check_action_ref(entry.action, scope, ctx, table, mode="entry")
        self.check_priority_rules(table, entries)
        self.assign_priorities(table, entries)

    def check_priority_rules(self, table: ast.TableDecl, entries: list[ast.TableEntry]) -> None:
        """p4c 1.2.4.8's rules for explicit entry priorities (``priority = N:``): none in
        ``const entries``; each in 1 .. 2**31-1; once one entry has one, the first entry has
        one too and every later entry without one gets the previous priority minus
        ``priority_delta`` (plus, with ``largest_priority_wins = false``), still >= 1."""
        given = [entry for entry in entries if entry.priority is not None]
        if not given:
            return
        if table.entries_const:
            raise self.fail(
                given[0].loc,
                f"table {table.name}: entries of 'const entries' cannot have priorities "
                "(p4c: \"Table with 'const' entries cannot have priorities\"); "
                "write 'entries' without 'const'",
            )
        if entries[0].priority is None:
            raise self.fail(
                entries[0].loc,
                f"table {table.name}: the first entry must have a priority when other entries "
                "have one (later entries without one follow the one before)",
            )
        largest_wins, delta = self._priority_properties(table)
        previous = 0
        seen: set[int] = set()
        for entry in entries:
            if entry.priority is not None:
                value = int(entry.priority.const_value)
                if not 1 <= value <= MAX_ENTRY_PRIORITY:
                    raise self.fail(
                        entry.priority.loc,
                        f"table {table.name}: entry priority {value} is out of range "
                        f"(1 .. {MAX_ENTRY_PRIORITY}, as p4c)",
                    )
            else:
                value = previous - delta if largest_wins else previous + delta
                if value < 1:
                    raise self.fail(
                        entry.loc,
                        f"table {table.name}: this entry's priority would be {value} (the one "
                        f"before, {previous}, {'minus' if largest_wins else 'plus'} "
                        f"priority_delta {delta}); priorities must be at least 1",
                    )
            if value in seen:
                self.warn(entry.loc, f"table {table.name}: two entries have priority {value}")
            seen.add(value)
            previous = value

    @staticmethod
    def _priority_properties(table: ast.TableDecl) -> tuple[bool, int]:
        """``largest_priority_wins`` (default true) and ``priority_delta`` (default 1)."""
        custom = {p.name: p.value for p in table.properties}
        wins, delta = custom.get("largest_priority_wins"), custom.get("priority_delta")
        largest_wins = bool(wins.const_value) if isinstance(wins, ast.Expr) else True
        step = delta.const_value if isinstance(delta, ast.Expr) else None
        return largest_wins, step if isinstance(step, int) else 1

    def assign_priorities(self, table: ast.TableDecl, entries: list[ast.TableEntry]) -> None:
        if not table.needs_priority:
            return
        largest_wins, delta = self._priority_properties(table)
        delta = max(delta, 1)
        # BMv2 as p4c (1.2.4.8) programs it: entries match in the order they are written,
        # the first one winning; explicit priorities (`priority = N:`) do not
        # reorder them, and p4c warns when they are out of that order (docs/conformance.md).
        count = len(entries)
        if any(ast.find_annotation(entry.annotations, "priority") for entry in entries):
            self._annotated_priorities(table, entries, largest_wins, delta)
            return
        previous: ast.TableEntry | None = None
        for position, entry in enumerate(entries):
            entry.priority_value = (
                (count - position) * delta if largest_wins else 1 + position * delta
            )
            if entry.priority is None:
                continue
            if previous is not None and previous.priority is not None:
                before, now = int(previous.priority.const_value), int(entry.priority.const_value)
                if (now > before) if largest_wins else (now < before):
                    self.warn(
                        entry.priority.loc,
                        f"table {table.name}: entry priority {now} is out of order after "
                        f"{before}; entries match in the order written, as on BMv2",
                    )
            previous = entry

    def _annotated_priorities(
        self, table: ast.TableDecl, entries: list[ast.TableEntry], largest_wins: bool, delta: int
    ) -> None:
        """``KEY : ACTION() @priority(N);``: p4c 1.2.4.8 writes N as the entry's BMv2
        priority, and its position plus one for an entry without the annotation; BMv2
        matches the smallest first (the one written first among equals). The entries get
        p4emu priorities in that order."""
        ranked: list[tuple[int, int, ast.TableEntry]] = []
        for position, entry in enumerate(entries):
            annotation = ast.find_annotation(entry.annotations, "priority")
            value = position + 1
            if annotation is not None:
                given = annotation.int_arg()
                if given is None or given < 0:
                    raise self.fail(
                        annotation.loc,
                        f"table {table.name}: @priority takes one non-negative integer literal",
                    )
                value = given
            ranked.append((value, position, entry))
        ranked.sort(key=lambda item: (item[0], item[1]))
        count = len(entries)
        for rank, (_, _, entry) in enumerate(ranked):
            entry.priority_value = (count - rank) * delta if largest_wins else 1 + rank * delta

    def check_entry_key(
        self,
        keyset: ast.Expr,
        element: ast.KeyElement,
        key_type: t.Type,
        scope: Scope,
        ctx: Context,
    ) -> ast.Expr:
        kind = element.match_kind
        if isinstance(keyset, (ast.DontCare, ast.DefaultExpr)):
            if kind == "exact":
                raise self.fail(
                    keyset.loc, f"exact key '{element.name}' cannot be matched with a wildcard"
                )
            keyset.type = t.SetType(key_type)
            return keyset
        allowed = MATCH_KIND_ENTRY_FORMS.get(kind, ())
        if isinstance(keyset, (ast.Mask, ast.Range)) and not isinstance(keyset, allowed):
            form = "mask (&&&)" if isinstance(keyset, ast.Mask) else "range (..)"
            raise self.fail(keyset.loc, f"a {form} cannot be used for {kind} key '{element.name}'")
        if isinstance(keyset, ast.TupleKeyset):
            raise self.fail(keyset.loc, f"unexpected tuple for key '{element.name}'")
        return self.check_keyset(keyset, key_type, [key_type], scope, ctx)

    def check_direct_meter_read(self, table: ast.TableDecl, meter: ast.Expr) -> None:
        """p4c's rule: some action of a table with a direct meter reads it (``m.read(c)``)."""
        assert isinstance(meter, ast.PathExpr)
        for ref in table.actions or []:
            if ref.action is None:
                continue
            for node in ast.walk(ref.action.body):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.callee, ast.Member)
                    and node.callee.member == "read"
                    and isinstance(node.callee.expr, ast.PathExpr)
                    and node.callee.expr.decl is meter.decl
                ):
                    return
        raise self.fail(
            meter.loc,
            f"table {table.name} has the direct meter {meter.name}, so one of its actions must "
            f"read it ({meter.name}.read(...)), as p4c requires",
        )

    def check_table_property(
        self, table: ast.TableDecl, prop: ast.TableProperty, scope: Scope, ctx: Context
    ) -> None:
        value = prop.value
        name = prop.name
        if name == "size":
            self.check_expr(value, scope, ctx)
            size = value.const_value
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise self.fail(
                    value.loc, f"size of table {table.name} must be a non-negative integer constant"
                )
            table.size = size
            return
        if name == "meters" and isinstance(value, ast.ConstructorCall):
            raise self.fail(
                value.loc,
                f"table {table.name}: 'meters' must name a direct_meter declared in the control "
                "(p4c: a direct meter is read through its name; it cannot be constructed here)",
            )
        if name in ("counters", "meters", "implementation"):
            expected = {
                "counters": ("direct_counter",),
                "meters": ("direct_meter",),
                "implementation": ("action_profile", "action_selector"),
            }[name]
            self.check_expr(value, scope, ctx)
            instance: ast.Instantiation | ast.ConstructorCall | None = None
            if isinstance(value, ast.ConstructorCall):
                instance = value
            elif isinstance(value, ast.PathExpr) and isinstance(value.decl, ast.Instantiation):
                instance = value.decl
            extern_name = None
            if instance is not None:
                instance_type = instance.type
                base = (
                    instance_type.base
                    if isinstance(instance_type, t.SpecializedType)
                    else instance_type
                )
                extern_name = base.name if isinstance(base, t.ExternType) else None
            if extern_name not in expected:
                raise self.fail(
                    value.loc,
                    f"property '{name}' of table {table.name} must be {' or '.join(expected)} instance",
                )
            setattr(table, name, instance)
            table.custom[name] = prop
            if name == "meters":
                self.check_direct_meter_read(table, value)
            return
        if name == "support_timeout":
            self.check_expr(value, scope, ctx, BOOL)
            if not isinstance(value.const_value, bool):
                raise self.fail(
                    value.loc, f"support_timeout of table {table.name} must be true or false"
                )
            table.support_timeout = value.const_value
            return
        if isinstance(value, ast.Expr):
            self.check_expr(value, scope, ctx)
        table.custom[name] = prop
