"""Top-level declarations (one handler per kind, in a dispatch table), constants, variables,
functions and actions."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.typecheck.core import (
    CheckerCore,
    Context,
    Generic,
    Scope,
)

G = TypeVar("G", ast.FunctionDecl, ast.ParserDecl, ast.ControlDecl)


class DeclarationChecks(CheckerCore):
    """Top-level declarations, constants, variables, functions and actions: a part of
    :class:`~p4emu.frontend.typecheck.TypeChecker`."""

    def check_top_declaration(self, decl: ast.Declaration) -> None:
        handler = TOP_LEVEL.get(type(decl))
        if handler is None:
            raise self.fail(decl.loc, f"unexpected declaration '{decl.name}' at the top level")
        handler(self, decl, self.globals)

    # one handler per kind of top-level declaration (TOP_LEVEL below)

    def top_error(self, decl: ast.ErrorDecl, scope: Scope) -> None:
        for member in decl.members:
            if member.name in self.error_type.members:
                raise self.fail(member.loc, f"duplicate error member 'error.{member.name}'")
            self.error_type.members[member.name] = t.ErrorMember(
                member.name, len(self.error_type.members)
            )

    def top_match_kind(self, decl: ast.MatchKindDecl, scope: Scope) -> None:
        for member in decl.members:
            if member.name in self.match_kind_type.members:
                raise self.fail(member.loc, f"duplicate match_kind member '{member.name}'")
            self.match_kind_type.members[member.name] = t.MatchKindMember(member.name)

    def top_struct_like(
        self, decl: ast.HeaderDecl | ast.HeaderUnionDecl | ast.StructDecl, scope: Scope
    ) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        self.check_struct_like(decl, scope)
        self.named_types[decl.name] = decl.type  # type: ignore[assignment]

    def top_enum(self, decl: ast.EnumDecl, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        self.check_enum(decl, scope)
        self.named_types[decl.name] = decl.type  # type: ignore[assignment]

    def top_typedef(self, decl: ast.TypedefDecl, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        resolved = self.resolve_type(decl.type_ref, scope)
        self.named_types[decl.name] = resolved

    def top_newtype(self, decl: ast.NewTypeDecl, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        underlying = self.resolve_type(decl.type_ref, scope)
        if not isinstance(underlying, (t.BitsType, t.BoolType, t.NewType)) and not (
            isinstance(underlying, t.EnumType) and underlying.underlying is not None
        ):
            raise self.fail(
                decl.type_ref.loc,
                f"type '{decl.name}' must be based on bit<W>, int<W>, bool or another type, not {underlying}",
            )
        decl.type = t.NewType(decl.name, underlying, decl)
        self.named_types[decl.name] = decl.type

    def top_const(self, decl: ast.ConstDecl, scope: Scope) -> None:
        self.check_const(decl, scope, Context("global"))
        self.constants[decl.name] = decl.value.const_value

    def top_extern(self, decl: ast.ExternDecl, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        self.check_extern(decl, scope)
        self.named_types[decl.name] = decl.type  # type: ignore[assignment]

    def top_extern_function(self, decl: ast.ExternFunctionDecl, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        with self.type_params(decl.type_params, scope) as inner:
            self.resolve_type(decl.return_type, inner)
            self.check_params(decl.params, inner, allow_directionless=True)

    def top_function(self, decl: ast.FunctionDecl, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        self.keep_generic(decl)
        self.check_function(decl, scope)

    def keep_generic(self, decl: Generic) -> None:
        """Keep generic ``decl`` as parsed (nothing resolved yet) to specialize it."""
        if decl.type_params:
            self.generic_decls[id(decl)] = (copy.deepcopy(decl), [])

    def specialize(self, decl: G, type_args: tuple[t.Type, ...]) -> G:
        """The copy of generic ``decl`` checked with its type parameters bound to
        ``type_args``, made once per distinct type arguments: the back end compiles it as
        any other function, parser or control (p4c specializes them too). ``decl`` itself
        when it is not generic or a type argument is a type variable (in a generic body)."""
        generic = self.generic_decls.get(id(decl))
        if generic is None or any(t.has_type_vars(arg) for arg in type_args):
            return decl
        parsed, made = generic
        for args, specialized in made:
            if all(t.types_equal(mine, theirs) for mine, theirs in zip(args, type_args)):
                return specialized  # type: ignore[return-value]
        specialized = copy.deepcopy(parsed)
        bound = Scope(self.globals, "type_args")
        for param, arg in zip(specialized.type_params, type_args):
            ref = ast.NamedTypeRef(arg.describe(), loc=param.loc)
            ref.resolved = arg
            bound.names[param.name] = [ast.TypedefDecl(param.name, ref, loc=param.loc)]
        specialized.type_params = []
        made.append((type_args, specialized))
        if isinstance(specialized, ast.FunctionDecl):
            self.check_function(specialized, bound)
        elif isinstance(specialized, ast.ParserDecl):
            self.check_parser(specialized, bound)
        else:
            self.check_control(specialized, bound)
        return specialized  # type: ignore[return-value]

    def top_action(self, decl: ast.ActionDecl, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        self.check_action(decl, scope, Context("global"))

    def top_block_type(
        self, decl: ast.ParserTypeDecl | ast.ControlTypeDecl | ast.PackageTypeDecl, scope: Scope
    ) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        with self.type_params(decl.type_params, scope) as inner:
            self.check_params(decl.params, inner, allow_directionless=True)
        type_vars = [param.var for param in decl.type_params if param.var is not None]
        if isinstance(decl, ast.ParserTypeDecl):
            decl.type = t.ParserType(decl.name, type_vars, decl)
        elif isinstance(decl, ast.ControlTypeDecl):
            decl.type = t.ControlType(decl.name, type_vars, decl)
        else:
            decl.type = t.PackageType(decl.name, type_vars, decl)
        self.named_types[decl.name] = decl.type

    def top_parser(self, decl: ast.ParserDecl, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        self.keep_generic(decl)
        self.check_parser(decl, scope)
        self.named_types[decl.name] = decl.type  # type: ignore[assignment]

    def top_control(self, decl: ast.ControlDecl, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        self.keep_generic(decl)
        self.check_control(decl, scope)
        self.named_types[decl.name] = decl.type  # type: ignore[assignment]

    def top_instantiation(self, decl: ast.Instantiation, scope: Scope) -> None:
        self.declare(scope, decl.name, decl, decl.loc)
        self.check_instantiation(decl, scope, Context("global"))

    def check_const(self, decl: ast.ConstDecl, scope: Scope, ctx: Context) -> None:
        declared = self.resolve_type(decl.type_ref, scope)
        self.check_expr(decl.value, scope, ctx, declared)
        decl.value = self.coerce(decl.value, declared, f"initializer of constant '{decl.name}'")
        if decl.value.const_value is None:
            raise self.fail(
                decl.value.loc,
                f"initializer of constant '{decl.name}' is not a compile-time constant",
            )
        self.declare(scope, decl.name, decl, decl.loc)

    def check_variable(self, decl: ast.VariableDecl, scope: Scope, ctx: Context) -> None:
        declared = self.resolve_type(decl.type_ref, scope)
        if isinstance(
            declared,
            (
                t.VoidType,
                t.ExternType,
                t.SpecializedType,
                t.ParserType,
                t.ControlType,
                t.PackageType,
            ),
        ):
            raise self.fail(
                decl.type_ref.loc, f"variable '{decl.name}' cannot have type {declared}"
            )
        if decl.init is not None:
            self.check_expr(decl.init, scope, ctx, declared)
            decl.init = self.coerce(decl.init, declared, f"initializer of '{decl.name}'")
        self.declare(scope, decl.name, decl, decl.loc)

    # ------------------------------------------------------------------ functions & actions

    def check_function(self, decl: ast.FunctionDecl, scope: Scope) -> None:
        with self.type_params(decl.type_params, scope) as inner:
            return_type = self.resolve_type(decl.return_type, inner)
            self.check_params(decl.params, inner, allow_directionless=True)
            body_scope = Scope(inner, "function")
            self.declare_params(decl.params, body_scope)
            ctx = Context("function", function=decl)
            self.check_block(decl.body, body_scope, ctx, new_scope=False)
            if not isinstance(return_type, t.VoidType) and not _always_returns(decl.body):
                raise self.fail(
                    decl.loc, f"function '{decl.name}' does not return a value on every path"
                )

    def check_action(self, decl: ast.ActionDecl, scope: Scope, outer: Context) -> None:
        self.check_params(decl.params, scope, allow_directionless=True)
        seen_directionless = False
        for param in decl.params:
            if param.is_directionless:
                seen_directionless = True
            elif seen_directionless:
                raise self.fail(
                    param.loc,
                    f"action '{decl.name}': directional parameter '{param.name}' must come before directionless parameters",
                )
        body_scope = Scope(scope, "action")
        self.declare_params(decl.params, body_scope)
        ctx = Context("action", block=outer.block, action=decl)
        self.check_block(decl.body, body_scope, ctx, new_scope=False)


# top-level declaration class -> its handler (classes of the AST are final: exact-type lookup)
TOP_LEVEL: dict[type, Callable[[Any, Any, Scope], None]] = {
    ast.ErrorDecl: DeclarationChecks.top_error,
    ast.MatchKindDecl: DeclarationChecks.top_match_kind,
    ast.HeaderDecl: DeclarationChecks.top_struct_like,
    ast.HeaderUnionDecl: DeclarationChecks.top_struct_like,
    ast.StructDecl: DeclarationChecks.top_struct_like,
    ast.EnumDecl: DeclarationChecks.top_enum,
    ast.TypedefDecl: DeclarationChecks.top_typedef,
    ast.NewTypeDecl: DeclarationChecks.top_newtype,
    ast.ConstDecl: DeclarationChecks.top_const,
    ast.ExternDecl: DeclarationChecks.top_extern,
    ast.ExternFunctionDecl: DeclarationChecks.top_extern_function,
    ast.FunctionDecl: DeclarationChecks.top_function,
    ast.ActionDecl: DeclarationChecks.top_action,
    ast.ParserTypeDecl: DeclarationChecks.top_block_type,
    ast.ControlTypeDecl: DeclarationChecks.top_block_type,
    ast.PackageTypeDecl: DeclarationChecks.top_block_type,
    ast.ParserDecl: DeclarationChecks.top_parser,
    ast.ControlDecl: DeclarationChecks.top_control,
    ast.Instantiation: DeclarationChecks.top_instantiation,
}


def _always_returns(statement: ast.Statement) -> bool:
    if isinstance(statement, (ast.ReturnStmt, ast.ExitStmt)):
        return True
    if isinstance(statement, ast.BlockStmt):
        return any(_always_returns(s) for s in statement.statements)
    if isinstance(statement, ast.IfStmt):
        return (
            statement.otherwise is not None
            and _always_returns(statement.then)
            and _always_returns(statement.otherwise)
        )
    return False
