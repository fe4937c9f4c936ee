"""Parsers (states, transitions, keysets), controls, their locals, and instantiation of
parsers, controls, externs and packages."""

from __future__ import annotations

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.source import SourceLocation
from p4emu.frontend.typecheck.core import (
    DONT_CARE,
    Abort,
    Bindings,
    CheckerCore,
    Context,
    Scope,
)


class BlockChecks(CheckerCore):
    """Parsers, controls and instantiations: a part of
    :class:`~p4emu.frontend.typecheck.TypeChecker`."""

    # ------------------------------------------------------------------ parsers

    def check_parser(self, decl: ast.ParserDecl, scope: Scope) -> None:
        type_vars: list[t.TypeVar] = []
        with self.type_params(decl.type_params, scope) as inner:
            type_vars = [p.var for p in decl.type_params if p.var]
            decl.type = t.ParserType(decl.name, type_vars, decl)
            self.check_params(decl.params, inner, allow_directionless=True)
            self.check_params(decl.ctor_params, inner, allow_directionless=True)
            block_scope = Scope(inner, "parser")
            self.declare_params(decl.ctor_params, block_scope)
            self.declare_params(decl.params, block_scope)
            ctx = Context("parser", block=decl)
            for local in decl.locals:
                self.check_local(local, block_scope, ctx)
            names: dict[str, ast.ParserState] = {}
            for state in decl.states:
                if state.name in (ast.ACCEPT, ast.REJECT):
                    raise self.fail(
                        state.loc, f"state '{state.name}' is predefined and cannot be declared"
                    )
                if state.name in names:
                    raise self.fail(
                        state.loc,
                        f"duplicate parser state '{state.name}' (previous declaration at {names[state.name].loc})",
                    )
                names[state.name] = state
                self.declare(block_scope, state.name, state, state.loc)
            if "start" not in names:
                raise self.fail(decl.loc, f"parser {decl.name} has no 'start' state")
            for state in decl.states:
                self.check_state(state, decl, block_scope, ctx)

    def check_state(
        self, state: ast.ParserState, parser: ast.ParserDecl, scope: Scope, ctx: Context
    ) -> None:
        state_scope = Scope(scope, "state")
        for statement in state.statements:
            self.check_statement(statement, state_scope, ctx)
        transition = state.transition
        if transition is None:
            return
        if transition.state is not None:
            transition.target = self.resolve_state(transition.state, transition.loc, parser)
            return
        select_types: list[t.Type] = []
        for index, expr in enumerate(transition.select or []):
            select_type = self.check_expr(expr, state_scope, ctx)
            if isinstance(select_type, t.InfIntType):
                raise self.fail(
                    expr.loc, "select expression needs a type with a width (cast the integer)"
                )
            if not self.is_matchable(select_type):
                raise self.fail(expr.loc, f"cannot select on a value of type {select_type}")
            (transition.select or [])[index] = expr
            select_types.append(select_type)
        key_type: t.Type = (
            select_types[0] if len(select_types) == 1 else t.TupleType(tuple(select_types))
        )
        for case in transition.cases:
            case.keyset = self.check_keyset(case.keyset, key_type, select_types, state_scope, ctx)
            case.target = self.resolve_state(case.state, case.loc, parser)

    def resolve_state(
        self, name: str, loc: SourceLocation, parser: ast.ParserDecl
    ) -> ast.ParserState | None:
        if name in (ast.ACCEPT, ast.REJECT):
            return None
        state = parser.state(name)
        if state is None:
            raise self.fail(loc, f"transition to undefined state '{name}' in parser {parser.name}")
        return state

    def is_matchable(self, type_: t.Type) -> bool:
        scalar = t.underlying_scalar(type_)
        return isinstance(scalar, (t.BitsType, t.BoolType, t.EnumType, t.ErrorType, t.InfIntType))

    def check_keyset(
        self,
        keyset: ast.Expr,
        key_type: t.Type,
        element_types: list[t.Type],
        scope: Scope,
        ctx: Context,
    ) -> ast.Expr:
        if isinstance(keyset, (ast.DefaultExpr, ast.DontCare)):
            keyset.type = t.SetType(key_type)
            return keyset
        if isinstance(keyset, ast.TupleKeyset):
            if len(element_types) != len(keyset.elements) or len(element_types) == 1:
                raise self.fail(
                    keyset.loc,
                    f"keyset has {len(keyset.elements)} element(s) but the select has {len(element_types)} expression(s)",
                )
            for index, element in enumerate(keyset.elements):
                keyset.elements[index] = self.check_keyset(
                    element, element_types[index], [element_types[index]], scope, ctx
                )
            keyset.type = t.SetType(key_type)
            return keyset
        if isinstance(keyset, ast.Mask):
            self.check_expr(keyset.value, scope, ctx, key_type)
            keyset.value = self.coerce(keyset.value, key_type, "keyset value")
            # a serializable enum's mask is a plain value of its underlying type (p4c)
            mask_type: t.Type = key_type
            if isinstance(key_type, t.EnumType) and key_type.underlying is not None:
                mask_type = key_type.underlying
            self.check_expr(keyset.mask, scope, ctx, mask_type)
            keyset.mask = self.coerce(keyset.mask, mask_type, "keyset mask")
            self.require_const(keyset.value, "a select label")
            self.require_const(keyset.mask, "a select mask")
            keyset.type = t.SetType(key_type)
            keyset.const_value = (keyset.value.const_value, keyset.mask.const_value)
            return keyset
        if isinstance(keyset, ast.Range):
            self.check_expr(keyset.lo, scope, ctx, key_type)
            keyset.lo = self.coerce(keyset.lo, key_type, "range low bound")
            self.check_expr(keyset.hi, scope, ctx, key_type)
            keyset.hi = self.coerce(keyset.hi, key_type, "range high bound")
            self.require_const(keyset.lo, "a range bound")
            self.require_const(keyset.hi, "a range bound")
            keyset.type = t.SetType(key_type)
            keyset.const_value = (keyset.lo.const_value, keyset.hi.const_value)
            return keyset
        if len(element_types) > 1 and not isinstance(keyset, ast.PathExpr):
            raise self.fail(keyset.loc, f"keyset must be a tuple of {len(element_types)} elements")
        value_type = self.check_expr(keyset, scope, ctx, key_type)
        if isinstance(value_type, t.ValueSetType):
            if not t.types_equal(value_type.element, key_type) and not self.value_set_matches(
                value_type.element, key_type
            ):
                raise self.fail(
                    keyset.loc,
                    f"value_set of {value_type.element} cannot match a select on {key_type}",
                )
            return keyset
        keyset = self.coerce(keyset, key_type, "select label")
        self.require_const(keyset, "a select label")
        return keyset

    def value_set_matches(self, element: t.Type, key_type: t.Type) -> bool:
        if isinstance(element, t.StructType) and isinstance(key_type, t.TupleType):
            return len(element.fields) == len(key_type.elements) and all(
                t.types_equal(f.type, k) for f, k in zip(element.fields, key_type.elements)
            )
        return False

    def require_const(self, expr: ast.Expr, what: str) -> None:
        if expr.const_value is None:
            raise self.fail(expr.loc, f"{what} must be a compile-time constant")

    # ------------------------------------------------------------------ controls

    def check_control(self, decl: ast.ControlDecl, scope: Scope) -> None:
        with self.type_params(decl.type_params, scope) as inner:
            decl.type = t.ControlType(decl.name, [p.var for p in decl.type_params if p.var], decl)
            self.check_params(decl.params, inner, allow_directionless=True)
            self.check_params(decl.ctor_params, inner, allow_directionless=True)
            block_scope = Scope(inner, "control")
            self.declare_params(decl.ctor_params, block_scope)
            self.declare_params(decl.params, block_scope)
            ctx = Context("control", block=decl)
            failed = False
            for local in decl.locals:
                try:
                    self.check_local(local, block_scope, ctx)
                except Abort:
                    # Action bodies are independent: keep checking to report more errors.
                    if not isinstance(local, ast.ActionDecl):
                        raise
                    failed = True
            if failed:
                raise Abort()
            self.check_block(decl.body, block_scope, Context("apply", block=decl), new_scope=True)

    def check_local(self, local: ast.Declaration, scope: Scope, ctx: Context) -> None:
        if isinstance(local, ast.ConstDecl):
            self.check_const(local, scope, ctx)
        elif isinstance(local, ast.VariableDecl):
            self.check_variable(local, scope, ctx)
        elif isinstance(local, ast.Instantiation):
            self.check_instantiation(local, scope, ctx)
            self.declare(scope, local.name, local, local.loc)
        elif isinstance(local, ast.ActionDecl):
            self.declare(scope, local.name, local, local.loc)
            self.check_action(local, scope, ctx)
        elif isinstance(local, ast.TableDecl):
            self.declare(scope, local.name, local, local.loc)
            self.check_table(local, scope, ctx)
        elif isinstance(local, ast.ValueSetDecl):
            element = self.resolve_type(local.element_type, scope)
            if not (self.is_matchable(element) or isinstance(element, (t.StructType, t.TupleType))):
                raise self.fail(
                    local.element_type.loc, f"value_set element type {element} cannot be matched"
                )
            local.size_value = self.const_int(local.size, scope, "a value_set size")
            self.declare(scope, local.name, local, local.loc)
        else:
            raise self.fail(local.loc, f"'{local.name}' cannot be declared here")

    # ------------------------------------------------------------------ instantiations

    def check_instantiation(self, inst: ast.Instantiation, scope: Scope, ctx: Context) -> None:
        inst_type, decl, bound = self.check_construction(
            inst.type_ref, inst.args, inst.loc, scope, ctx
        )
        if (
            isinstance(decl, (ast.ParserDecl, ast.ControlDecl))
            and decl.type_params
            and not isinstance(inst_type, t.SpecializedType)
        ):
            raise self.fail(
                inst.type_ref.loc,
                f"{decl.name} is generic: instantiate it with its type arguments "
                f"({decl.name}<...>() {inst.name}; p4c does not infer them from the apply)",
            )
        inst.type = inst_type
        inst.type_decl = decl
        inst.bound_args = bound

    def check_construction(
        self,
        type_ref: ast.TypeRef,
        args: list[ast.Argument],
        loc: SourceLocation,
        scope: Scope,
        ctx: Context,
    ) -> tuple[t.Type, ast.Declaration, list[ast.BoundArg]]:
        if not isinstance(type_ref, ast.NamedTypeRef):
            raise self.fail(
                type_ref.loc, f"cannot instantiate type {ast.typeref_to_source(type_ref)}"
            )
        instance_type = self.resolve_type(type_ref, scope)
        decl = type_ref.decl
        base = instance_type.base if isinstance(instance_type, t.SpecializedType) else instance_type
        bindings = Bindings(
            dict(instance_type.bindings()) if isinstance(instance_type, t.SpecializedType) else {}
        )
        if isinstance(decl, ast.ExternDecl):
            constructors = decl.constructors
            if not constructors:
                raise self.fail(
                    loc, f"extern {decl.name} has no constructor and cannot be instantiated"
                )
            constructor = self.select_overload(
                constructors, args, loc, f"constructor of {decl.name}"
            )
            bound = self.bind_arguments(
                constructor.params, args, loc, f"{decl.name}", scope, ctx, bindings
            )
            if isinstance(base, t.ExternType) and base.type_params:
                missing = [var for var in base.type_params if var not in bindings.values]
                if missing:
                    raise self.fail(
                        loc,
                        f"cannot infer type argument '{missing[0].name}' of {decl.name}; write {decl.name}<...>(...)",
                    )
                instance_type = t.SpecializedType(
                    base, tuple(bindings.values[var] for var in base.type_params)
                )
            return instance_type, decl, bound
        if isinstance(decl, (ast.ParserDecl, ast.ControlDecl)):
            if ctx.kind in ("action", "function", "apply"):
                raise self.fail(loc, f"{decl.name} cannot be instantiated here")
            if isinstance(instance_type, t.SpecializedType):  # Copy<pair_t>(): its own copy
                decl = self.specialize(decl, instance_type.args)
            bound = self.bind_arguments(
                decl.ctor_params, args, loc, decl.name, scope, ctx, bindings
            )
            return instance_type, decl, bound
        if isinstance(decl, ast.PackageTypeDecl):
            bound = self.bind_package_arguments(decl, args, loc, scope, ctx, bindings)
            if isinstance(base, t.PackageType) and base.type_params:
                resolved_args = tuple(
                    bindings.values.get(var, DONT_CARE) for var in base.type_params
                )
                instance_type = t.SpecializedType(base, resolved_args)
            return instance_type, decl, bound
        if isinstance(decl, (ast.ParserTypeDecl, ast.ControlTypeDecl)):
            raise self.fail(
                loc, f"{decl.name} is a type declaration without a body and cannot be instantiated"
            )
        raise self.fail(loc, f"type {ast.typeref_to_source(type_ref)} cannot be instantiated")

    def bind_package_arguments(
        self,
        decl: ast.PackageTypeDecl,
        args: list[ast.Argument],
        loc: SourceLocation,
        scope: Scope,
        ctx: Context,
        bindings: Bindings,
    ) -> list[ast.BoundArg]:
        pairs = self.match_arguments(decl.params, args, loc, decl.name)
        bound: list[ast.BoundArg] = []
        for param, arg in pairs:
            if arg is None:
                bound.append(ast.BoundArg(param, None, param.type))
                continue
            value = arg.value
            arg_type = self.check_expr(value, scope, ctx)
            slot_type = param.type
            assert slot_type is not None
            slot_base = slot_type.base if isinstance(slot_type, t.SpecializedType) else slot_type
            if isinstance(slot_base, (t.ParserType, t.ControlType)):
                self.match_block_to_slot(value, arg_type, param, slot_type, decl, bindings)
            else:
                self.infer(slot_type, arg_type, bindings, value)
                arg.value = self.coerce(
                    value,
                    t.substitute(slot_type, bindings.values),
                    f"argument '{param.name}' of {decl.name}",
                )
            bound.append(ast.BoundArg(param, arg.value, t.substitute(slot_type, bindings.values)))
        return bound

    def match_block_to_slot(
        self,
        value: ast.Expr,
        arg_type: t.Type,
        param: ast.Parameter,
        slot_type: t.Type,
        package: ast.PackageTypeDecl,
        bindings: Bindings,
    ) -> None:
        slot_base = slot_type.base if isinstance(slot_type, t.SpecializedType) else slot_type
        slot_decl = slot_base.decl  # type: ignore[union-attr]
        arg_base = arg_type.base if isinstance(arg_type, t.SpecializedType) else arg_type
        block_decl = getattr(arg_base, "decl", None)
        want = "parser" if isinstance(slot_base, t.ParserType) else "control"
        if not isinstance(block_decl, (ast.ParserDecl, ast.ControlDecl)) or (
            isinstance(block_decl, ast.ParserDecl) != (want == "parser")
        ):
            raise self.fail(
                value.loc,
                f"argument '{param.name}' of {package.name} must be a {want} ({slot_base.describe()})",
            )
        slot_bindings = slot_type.bindings() if isinstance(slot_type, t.SpecializedType) else {}
        slot_params = slot_decl.params if slot_decl is not None else []
        if len(slot_params) != len(block_decl.params):
            raise self.fail(
                value.loc,
                f"{block_decl.name} has {len(block_decl.params)} parameter(s) but {package.name} argument '{param.name}' ({slot_base.describe()}) needs {len(slot_params)}",
            )
        for slot_param, block_param in zip(slot_params, block_decl.params):
            pattern = t.substitute(slot_param.type, slot_bindings)  # type: ignore[arg-type]
            actual = block_param.type
            assert actual is not None
            if slot_param.direction != block_param.direction:
                raise self.fail(
                    block_param.loc,
                    f"parameter '{block_param.name}' of {block_decl.name} must be '{slot_param.direction or 'directionless'}' to match {slot_base.describe()}",
                )
            if not self.unify(pattern, actual, bindings):
                expected = t.substitute(pattern, bindings.values)
                raise self.fail(
                    block_param.loc,
                    f"parameter '{block_param.name}' of {block_decl.name} has type {actual} but {package.name} expects {expected}",
                )
