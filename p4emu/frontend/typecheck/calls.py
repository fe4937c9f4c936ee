"""Calls of actions, functions, extern functions and methods, block applies; overload
selection, argument binding and type-argument inference."""

from __future__ import annotations

from typing import Any

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.source import SourceLocation
from p4emu.frontend.typecheck.core import (
    BOOL,
    DONT_CARE,
    INT_TYPE,
    VOID,
    Bindings,
    CheckerCore,
    Context,
    Scope,
)


class CallChecks(CheckerCore):
    """Calls, argument binding and type inference: a part of
    :class:`~p4emu.frontend.typecheck.TypeChecker`."""

    # ------------------------------------------------------------------ calls

    def check_call(self, call: ast.Call, scope: Scope, ctx: Context) -> t.Type:
        callee = call.callee
        if isinstance(callee, ast.Member):
            return self.check_method_call(call, callee, scope, ctx)
        if isinstance(callee, ast.PathExpr):
            found = (self.globals if callee.absolute else scope).lookup(callee.name)
            if not found:
                raise self.fail(callee.loc, f"unknown name '{callee.name}'")
            decl = self.found(found)
            callee.decl = decl
            if isinstance(decl, ast.ActionDecl):
                return self.check_action_call(call, decl, scope, ctx)
            if isinstance(decl, (ast.FunctionDecl, ast.ExternFunctionDecl)):
                return self.check_function_call(call, found, scope, ctx)
            raise self.fail(
                callee.loc, f"'{callee.name}' is not a function or action and cannot be called"
            )
        raise self.fail(call.loc, f"'{ast.expr_to_source(callee)}' cannot be called")

    def check_action_call(
        self, call: ast.Call, action: ast.ActionDecl, scope: Scope, ctx: Context
    ) -> t.Type:
        callee = call.callee
        callee.type = t.ActionType(action)
        if ctx.in_parser or ctx.kind in ("function", "global"):
            raise self.fail(
                call.loc,
                f"action '{action.name}' cannot be called from here (only from controls and actions)",
            )
        if ctx.action is action:
            raise self.fail(call.loc, f"action '{action.name}' cannot call itself")
        if call.type_args:
            raise self.fail(call.loc, f"action '{action.name}' is not generic")
        call.bound_args = self.bind_arguments(
            action.params, call.args, call.loc, action.name, scope, ctx, Bindings()
        )
        call.target = ast.ActionCall(action)
        return VOID

    def check_function_call(
        self, call: ast.Call, candidates: list[Any], scope: Scope, ctx: Context
    ) -> t.Type:
        callee = call.callee
        assert isinstance(callee, ast.PathExpr)
        decl = self.select_overload(candidates, call.args, call.loc, f"'{callee.name}'")
        callee.decl = decl
        callee.type = t.FunctionType(decl.name)
        bindings = Bindings()
        type_vars = [p.var for p in decl.type_params if p.var is not None]
        caller = ctx.function  # (a generic one's copy has its name and parameters)
        if (
            caller is not None
            and decl.name == caller.name
            and len(decl.params) == len(caller.params)
        ):
            raise self.fail(
                call.loc,
                f"function '{decl.name}' cannot call itself: P4 has no recursion (p4c: "
                "declaration not found)",
            )
        if self._call_arguments and isinstance(decl, ast.FunctionDecl) and decl.type_params:
            raise self.fail(
                call.loc,
                f"a call of the generic function '{decl.name}' inside the arguments of a "
                "function or extern call: assign its value to a variable first (p4c 1.2.4.8 "
                'cannot specialize it there: "declaration not found")',
            )
        self.bind_explicit_type_args(call, type_vars, bindings, scope, decl.name)
        call.bound_args = self.bind_call_arguments(
            decl.params, call.args, call.loc, decl.name, scope, ctx, bindings
        )
        missing = [var for var in type_vars if var not in bindings.values]
        if missing:
            raise self.fail(
                call.loc,
                f"cannot infer type argument '{missing[0].name}' of '{decl.name}'; give it explicitly ({decl.name}<...>(...))",
            )
        type_args = tuple(bindings.values[var] for var in type_vars)
        if isinstance(decl, ast.FunctionDecl):
            if ctx.kind == "global":
                raise self.fail(call.loc, f"function '{decl.name}' cannot be called here")
            specialized = self.specialize(decl, type_args)
            if specialized is not decl:  # its parameters take the arguments
                call.bound_args = respecialized(call.bound_args, specialized.params)
                decl = specialized
            call.target = ast.FunctionCall(decl, type_args)
        else:
            call.target = ast.ExternFunctionCall(decl, type_args)
            if decl.name == "static_assert":
                self.check_static_assert(call)
        return_type = decl.return_type.resolved
        assert return_type is not None
        return t.substitute(return_type, bindings.values)

    def check_static_assert(self, call: ast.Call) -> None:
        condition = call.bound_args[0].expr if call.bound_args else None
        if condition is None or not isinstance(condition.const_value, bool):
            raise self.fail(call.loc, "static_assert needs a compile-time boolean condition")
        if not condition.const_value:
            message = "static assertion failed"
            if len(call.bound_args) > 1 and call.bound_args[1].expr is not None:
                message += f": {call.bound_args[1].expr.const_value}"
            raise self.fail(call.loc, message)
        call.const_value = True

    def bind_explicit_type_args(
        self,
        call: ast.Call,
        type_vars: list[t.TypeVar],
        bindings: Bindings,
        scope: Scope,
        name: str,
    ) -> None:
        if not call.type_args:
            return
        if len(call.type_args) != len(type_vars):
            raise self.fail(
                call.loc,
                f"'{name}' takes {len(type_vars)} type argument(s), {len(call.type_args)} given",
            )
        for var, ref in zip(type_vars, call.type_args):
            resolved = self.resolve_type(ref, scope)
            if not isinstance(resolved, t.DontCareType):
                bindings.values[var] = resolved

    def check_method_call(
        self, call: ast.Call, callee: ast.Member, scope: Scope, ctx: Context
    ) -> t.Type:
        base = callee.expr
        base_type = self.check_expr(base, scope, ctx)
        self.member_type(callee, base_type)
        name = callee.member
        if callee.kind != ast.MEMBER_METHOD:
            raise self.fail(
                call.loc, f"'{ast.expr_to_source(callee)}' is not a method and cannot be called"
            )
        callee.type = t.FunctionType(name)
        # Table apply
        if isinstance(base_type, t.TableType):
            self.require_no_args(call, f"{base_type.table.name}.apply")
            if ctx.kind != "apply":
                raise self.fail(
                    call.loc,
                    f"table {base_type.table.name} can only be applied in a control's apply block",
                )
            call.target = ast.TableApply(base_type.table)
            return t.ApplyResultType(base_type.table)
        # Sub-parser / sub-control apply (instance, or direct type invocation)
        block_base = base_type.base if isinstance(base_type, t.SpecializedType) else base_type
        if isinstance(base_type, t.TypeNameType) and isinstance(
            base_type.named, (t.ParserType, t.ControlType)
        ):
            block_base = base_type.named
        if isinstance(block_base, (t.ParserType, t.ControlType)) and name == "apply":
            return self.check_block_apply(call, block_base, base, scope, ctx)
        # Builtin methods
        if name in ("isValid", "setValid", "setInvalid") and isinstance(
            base_type, (t.HeaderType, t.HeaderUnionType)
        ):
            self.require_no_args(call, name)
            if name != "isValid":
                if isinstance(base_type, t.HeaderUnionType):
                    raise self.fail(
                        call.loc,
                        f"{name}() cannot be applied to a header_union; use it on a member header",
                    )
                self.check_lvalue(base, "modify")
            call.target = ast.BuiltinMethodCall(name, base)
            return BOOL if name == "isValid" else VOID
        if name in ("minSizeInBits", "minSizeInBytes"):
            self.require_no_args(call, name)
            named = base_type.named if isinstance(base_type, t.TypeNameType) else base_type
            bits = _min_size_bits(named)
            call.target = ast.BuiltinMethodCall(name, base)
            call.const_value = bits if name == "minSizeInBits" else (bits + 7) // 8
            return INT_TYPE
        if name in ("push_front", "pop_front") and isinstance(base_type, t.HeaderStackType):
            if len(call.args) != 1:
                raise self.fail(call.loc, f"{name} takes 1 argument, {len(call.args)} given")
            count = self.const_int_in(call.args[0].value, scope, ctx, f"argument of {name}")
            if count < 0:
                raise self.fail(call.args[0].value.loc, f"argument of {name} must not be negative")
            self.check_lvalue(base, "modify")
            call.bound_args = []
            call.target = ast.BuiltinMethodCall(name, base)
            return VOID
        extern_base = base_type.base if isinstance(base_type, t.SpecializedType) else base_type
        if isinstance(extern_base, t.ExternType):
            return self.check_extern_method_call(call, callee, base_type, extern_base, scope, ctx)
        raise self.fail(call.loc, f"'{ast.expr_to_source(callee)}' cannot be called")

    def require_no_args(self, call: ast.Call, name: str) -> None:
        if call.args:
            raise self.fail(call.loc, f"{name}() takes no arguments, {len(call.args)} given")
        if call.type_args:
            raise self.fail(call.loc, f"{name}() takes no type arguments")

    def check_block_apply(
        self,
        call: ast.Call,
        block_type: t.ParserType | t.ControlType,
        base: ast.Expr,
        scope: Scope,
        ctx: Context,
    ) -> t.Type:
        decl = block_type.decl
        if (
            isinstance(decl, (ast.ParserTypeDecl, ast.ControlTypeDecl))
            and isinstance(base, ast.PathExpr)
            and isinstance(base.decl, ast.Parameter)
            and base.decl.is_directionless
        ):
            return self.check_ctor_param_apply(call, decl, base.decl, scope, ctx)
        if not isinstance(decl, (ast.ParserDecl, ast.ControlDecl)):
            raise self.fail(call.loc, f"{block_type.name} has no implementation to apply")
        instance = (
            base.decl
            if isinstance(base, ast.PathExpr) and isinstance(base.decl, ast.Instantiation)
            else None
        )
        if isinstance(decl, ast.ParserDecl) and not ctx.in_parser:
            raise self.fail(call.loc, f"parser {decl.name} can only be applied from a parser state")
        if isinstance(decl, ast.ControlDecl) and ctx.kind != "apply":
            raise self.fail(
                call.loc, f"control {decl.name} can only be applied from a control's apply block"
            )
        if instance is None and decl.ctor_params:
            raise self.fail(
                call.loc,
                f"{decl.name} has constructor parameters and must be instantiated before apply",
            )
        bindings = Bindings()
        base_type = base.type
        if isinstance(base_type, t.SpecializedType):
            bindings.values.update(base_type.bindings())
        call.bound_args = self.bind_arguments(
            decl.params, call.args, call.loc, f"{decl.name}.apply", scope, ctx, bindings
        )
        if instance is not None and instance.type_decl is not decl:  # a generic's copy
            decl = instance.type_decl
            assert isinstance(decl, (ast.ParserDecl, ast.ControlDecl))
            call.bound_args = respecialized(call.bound_args, decl.params)
        call.target = ast.BlockApply(decl, instance)
        return VOID

    def check_ctor_param_apply(
        self,
        call: ast.Call,
        decl: ast.ParserTypeDecl | ast.ControlTypeDecl,
        param: ast.Parameter,
        scope: Scope,
        ctx: Context,
    ) -> t.Type:
        """``s.apply(...)`` of a constructor parameter ``s`` of a parser or control type."""
        if isinstance(decl, ast.ParserTypeDecl) and not ctx.in_parser:
            raise self.fail(
                call.loc, f"parser {param.name} can only be applied from a parser state"
            )
        if isinstance(decl, ast.ControlTypeDecl) and ctx.kind != "apply":
            raise self.fail(
                call.loc, f"control {param.name} can only be applied from a control's apply block"
            )
        bindings = Bindings()
        if isinstance(param.type, t.SpecializedType):  # Step<bit<8>> s: T is bit<8>
            bindings.values.update(param.type.bindings())
        elif decl.type_params:
            raise self.fail(
                param.loc,
                f"type parameters needed for {param.name}: its type {decl.name} is generic "
                f"(write {decl.name}<...>)",
            )
        call.bound_args = self.bind_arguments(
            decl.params, call.args, call.loc, f"{param.name}.apply", scope, ctx, bindings
        )
        call.target = ast.BlockApply(decl, None, ctor_param=param)
        return VOID

    def check_extern_method_call(
        self,
        call: ast.Call,
        callee: ast.Member,
        base_type: t.Type,
        extern: t.ExternType,
        scope: Scope,
        ctx: Context,
    ) -> t.Type:
        assert extern.decl is not None
        methods = extern.decl.methods_named(callee.member)
        method = self.select_overload(
            methods, call.args, call.loc, f"{extern.name}.{callee.member}"
        )
        callee.resolved = method
        bindings = Bindings()
        extern_args: tuple[t.Type, ...] = ()
        if isinstance(base_type, t.SpecializedType):
            bindings.values.update(base_type.bindings())
            extern_args = base_type.args
        method_vars = [p.var for p in method.type_params if p.var is not None]
        self.bind_explicit_type_args(call, method_vars, bindings, scope, callee.member)
        call.bound_args = self.bind_call_arguments(
            method.params,
            call.args,
            call.loc,
            f"{extern.name}.{callee.member}",
            scope,
            ctx,
            bindings,
        )
        missing = [var for var in method_vars if var not in bindings.values]
        if missing:
            raise self.fail(
                call.loc,
                f"cannot infer type argument '{missing[0].name}' of {extern.name}.{callee.member}; give it explicitly",
            )
        type_args = tuple(bindings.values[var] for var in method_vars)
        call.target = ast.ExternMethodCall(callee.expr, extern, method, extern_args, type_args)
        if extern.name == "packet_in" and callee.member == "extract":
            self.check_extract(call, type_args)
        lookahead = extern.name == "packet_in" and callee.member == "lookahead"
        if lookahead and type_args and type_args[0].width_bits is None:
            raise self.fail(call.loc, f"lookahead<{type_args[0]}> needs a fixed-width type")
        return_type = method.return_type.resolved if method.return_type is not None else VOID
        assert return_type is not None
        return t.substitute(return_type, bindings.values)

    def check_extract(self, call: ast.Call, type_args: tuple[t.Type, ...]) -> None:
        header = type_args[0] if type_args else None
        if not isinstance(header, t.HeaderType):
            raise self.fail(call.loc, f"extract needs a header, not {header}")
        if len(call.bound_args) == 1 and header.has_varbit:
            raise self.fail(
                call.loc, f"header {header.name} has a varbit field; use extract(hdr, size_in_bits)"
            )
        if len(call.bound_args) == 2 and not header.has_varbit:
            raise self.fail(call.loc, f"header {header.name} has no varbit field; use extract(hdr)")

    def select_overload(
        self, candidates: list[Any], args: list[ast.Argument], loc: SourceLocation, what: str
    ) -> Any:
        count = len(args)
        exact = []
        fitting = []
        for candidate in candidates:
            params = candidate.params
            required = sum(1 for p in params if p.default is None and not p.is_optional)
            if len(params) == count:
                exact.append(candidate)
            elif required <= count <= len(params):
                fitting.append(candidate)
        if exact:
            return exact[0]
        if fitting:
            return fitting[0]
        counts = sorted({len(c.params) for c in candidates})
        expected = " or ".join(str(c) for c in counts)
        raise self.fail(
            loc, f"wrong number of arguments to {what}: expected {expected}, got {count}"
        )

    def match_arguments(
        self,
        params: list[ast.Parameter],
        args: list[ast.Argument],
        loc: SourceLocation,
        name: str,
    ) -> list[tuple[ast.Parameter, ast.Argument | None]]:
        named = [arg for arg in args if arg.name is not None]
        if named and len(named) != len(args):
            raise self.fail(loc, f"call to '{name}' mixes named and positional arguments")
        pairs: list[tuple[ast.Parameter, ast.Argument | None]] = []
        if named:
            by_name = {}
            for arg in args:
                if arg.name in by_name:
                    raise self.fail(arg.loc, f"argument '{arg.name}' given twice")
                if not any(p.name == arg.name for p in params):
                    raise self.fail(arg.loc, f"'{name}' has no parameter named '{arg.name}'")
                by_name[arg.name] = arg
            for param in params:
                pairs.append((param, by_name.get(param.name)))
        else:
            if len(args) > len(params):
                raise self.fail(
                    loc,
                    f"wrong number of arguments to '{name}': expected {len(params)}, got {len(args)}",
                )
            for index, param in enumerate(params):
                pairs.append((param, args[index] if index < len(args) else None))
        for param, arg in pairs:
            if arg is None and param.default is None and not param.is_optional:
                required = sum(1 for p in params if p.default is None and not p.is_optional)
                raise self.fail(
                    loc,
                    f"wrong number of arguments to '{name}': expected {required}, got {len(args)}",
                )
        return pairs

    def bind_call_arguments(
        self,
        params: list[ast.Parameter],
        args: list[ast.Argument],
        loc: SourceLocation,
        name: str,
        scope: Scope,
        ctx: Context,
        bindings: Bindings,
    ) -> list[ast.BoundArg]:
        """:meth:`bind_arguments` of a function or extern call: a generic function's call
        among these arguments is refused (``_call_arguments``, as p4c 1.2.4.8)."""
        self._call_arguments += 1
        try:
            return self.bind_arguments(params, args, loc, name, scope, ctx, bindings)
        finally:
            self._call_arguments -= 1

    def bind_arguments(
        self,
        params: list[ast.Parameter],
        args: list[ast.Argument],
        loc: SourceLocation,
        name: str,
        scope: Scope,
        ctx: Context,
        bindings: Bindings,
    ) -> list[ast.BoundArg]:
        pairs = self.match_arguments(params, args, loc, name)
        # Pass 1: type every argument and infer type variables from typed ones.
        pending: list[tuple[ast.Parameter, ast.Argument]] = []
        for param, arg in pairs:
            if arg is None:
                continue
            pattern = param.type
            assert pattern is not None
            expected = t.substitute(pattern, bindings.values)
            hint = expected if not t.has_type_vars(expected) else None
            if isinstance(arg.value, ast.DontCare):
                if param.direction != "out":
                    raise self.fail(
                        arg.value.loc,
                        f"'_' can only be passed to an out parameter ('{param.name}' of '{name}' is {param.direction or 'directionless'})",
                    )
                arg.value.type = hint or DONT_CARE
                continue
            arg_type = self.check_expr(arg.value, scope, ctx, hint)
            if isinstance(arg_type, t.HeaderGroupType) and t.has_type_vars(expected):
                arg_type = arg_type.struct  # a struct-typed header field: its struct binds T
            if (
                t.has_type_vars(expected)
                and not _contains_inf_int(arg_type)
                and not self.unify(expected, arg_type, bindings)
            ):
                raise self.fail(
                    arg.value.loc,
                    f"argument '{param.name}' of '{name}': expected a value of type {t.substitute(expected, bindings.values)}, got {arg_type}",
                )
            pending.append((param, arg))
        # Pass 2: coerce to the (now instantiated) parameter types.
        for param, arg in pending:
            assert param.type is not None
            expected = t.substitute(param.type, bindings.values)
            # a type variable of an enclosing generic function is a type like any other
            unresolved = _unbound_type_var(param.type, bindings)
            if unresolved is not None:
                assert arg.value.type is not None
                if _contains_inf_int(arg.value.type):
                    raise self.fail(
                        arg.value.loc,
                        f"cannot infer a width for argument '{param.name}' of '{name}' (type parameter {unresolved}); use a width-prefixed literal such as 32w0 or a cast",
                    )
                raise self.fail(
                    arg.value.loc, f"cannot infer type parameter {unresolved} of '{name}'"
                )
            if param.direction in ("out", "inout"):
                self.check_lvalue(arg.value, f"pass as {param.direction} argument")
                arg_type = arg.value.type
                assert arg_type is not None
                if isinstance(arg_type, t.HeaderGroupType) and arg_type.struct is expected:
                    if t.has_type_vars(param.type):  # an extern's generic out T (register.read...)
                        raise self.fail(
                            arg.value.loc,
                            f"the struct-typed header field '{ast.expr_to_source(arg.value)}' "
                            f"cannot be the {param.direction} argument '{param.name}' of "
                            f"'{name}' (p4c: writing to a structure nested in a header is not "
                            "supported)",
                        )
                    # a struct-typed header field: copied in (inout) and out via a struct
                    self._whole_groups.pop(id(arg.value), None)
                elif not t.types_equal(arg_type, expected) and not isinstance(expected, t.TypeVar):
                    raise self.fail(
                        arg.value.loc,
                        f"argument '{param.name}' of '{name}': expected a value of type {expected}, got {arg.value.type}",
                    )
            else:
                arg.value = self.coerce(arg.value, expected, f"argument '{param.name}' of '{name}'")
        bound: list[ast.BoundArg] = []
        for param, arg in pairs:
            assert param.type is not None
            bound.append(
                ast.BoundArg(
                    param,
                    arg.value if arg is not None else None,
                    t.substitute(param.type, bindings.values),
                )
            )
        return bound

    def infer(self, pattern: t.Type, actual: t.Type, bindings: Bindings, expr: ast.Expr) -> None:
        if not self.unify(pattern, actual, bindings):
            raise self.fail(
                expr.loc,
                f"expected a value of type {t.substitute(pattern, bindings.values)}, got {actual}",
            )

    def unify(self, pattern: t.Type, actual: t.Type, bindings: Bindings) -> bool:
        if isinstance(pattern, t.TypeVar):
            bound = bindings.values.get(pattern)
            if bound is None:
                bindings.values[pattern] = actual
                return True
            return t.types_equal(bound, actual) or (
                isinstance(bound, t.TupleType)
                and isinstance(actual, t.TupleType)
                and self.unify(bound, actual, bindings)
            )
        if isinstance(pattern, t.TupleType) and isinstance(actual, t.TupleType):
            return len(pattern.elements) == len(actual.elements) and all(
                self.unify(p, a, bindings) for p, a in zip(pattern.elements, actual.elements)
            )
        if isinstance(pattern, t.SpecializedType) and isinstance(actual, t.SpecializedType):
            return pattern.base is actual.base and all(
                self.unify(p, a, bindings) for p, a in zip(pattern.args, actual.args)
            )
        if isinstance(pattern, t.SpecializedType) and isinstance(
            actual, (t.ParserType, t.ControlType)
        ):
            return True
        return t.types_equal(pattern, actual)


def respecialized(bound: list[ast.BoundArg], params: list[ast.Parameter]) -> list[ast.BoundArg]:
    """Arguments bound to a generic declaration's parameters, bound to the same parameters
    (same positions) of its specialized copy."""
    return [ast.BoundArg(param, b.expr, param.type) for param, b in zip(params, bound, strict=True)]


def _unbound_type_var(pattern: t.Type, bindings: Bindings) -> str | None:
    """The name of the first type variable of ``pattern`` that ``bindings`` leaves unbound."""
    if isinstance(pattern, t.TypeVar):
        return None if pattern in bindings.values else pattern.name
    inner: tuple[t.Type, ...] = ()
    if isinstance(pattern, t.TupleType):
        inner = pattern.elements
    elif isinstance(pattern, t.SpecializedType):
        inner = pattern.args
    for element in inner:
        name = _unbound_type_var(element, bindings)
        if name is not None:
            return name
    return None


def _contains_inf_int(type_: t.Type) -> bool:
    if isinstance(type_, t.InfIntType):
        return True
    if isinstance(type_, t.TupleType):
        return any(_contains_inf_int(e) for e in type_.elements)
    return False


def _min_size_bits(type_: t.Type) -> int:
    if isinstance(type_, t.HeaderType):
        return type_.min_width_bits
    if isinstance(type_, (t.StructType, t.HeaderUnionType)):
        sizes = [_min_size_bits(f.type) for f in type_.fields]
        if isinstance(type_, t.HeaderUnionType):
            return min(sizes) if sizes else 0
        return sum(sizes)
    if isinstance(type_, t.HeaderStackType):
        return _min_size_bits(type_.element) * type_.size
    if isinstance(type_, t.VarbitType):
        return 0
    return type_.width_bits or 0
