"""Type syntax resolved to :mod:`p4emu.frontend.types` (one handler per kind of syntax, in a
dispatch table); headers, structs, enums, externs and parameter lists."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.typecheck.core import (
    BOOL,
    DONT_CARE,
    INT_TYPE,
    STRING,
    VOID,
    CheckerCore,
    Context,
    Scope,
)

MAX_WIDTH = 1 << 16  # refuse absurd widths early


class TypeDeclChecks(CheckerCore):
    """Types, type declarations and parameter lists: a part of
    :class:`~p4emu.frontend.typecheck.TypeChecker`."""

    # ------------------------------------------------------------------ types

    def resolve_type(self, ref: ast.TypeRef, scope: Scope) -> t.Type:
        resolved = self._resolve_type(ref, scope)
        ref.resolved = resolved
        return resolved

    def const_int(self, expr: ast.Expr, scope: Scope, what: str) -> int:
        self.check_expr(expr, scope, Context("global"))
        value = expr.const_value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(expr.loc, f"{what} must be a compile-time integer constant")
        return value

    def _resolve_type(self, ref: ast.TypeRef, scope: Scope) -> t.Type:
        handler = TYPE_SYNTAX.get(type(ref))
        if handler is None:
            raise self.fail(ref.loc, f"unsupported type syntax {type(ref).__name__}")
        return handler(self, ref, scope)

    # one handler per kind of type syntax (TYPE_SYNTAX below)

    def resolve_bits(self, ref: ast.BitTypeRef, scope: Scope) -> t.Type:
        if ref.width is None:
            return t.BitsType(1, False)
        width = self.const_int(ref.width, scope, "a bit width")
        if width < 0 or (ref.signed and width == 0) or width > MAX_WIDTH:
            raise self.fail(
                ref.width.loc, f"invalid width {width} for {'int' if ref.signed else 'bit'}<W>"
            )
        return t.BitsType(width, ref.signed)

    def resolve_varbit(self, ref: ast.VarbitTypeRef, scope: Scope) -> t.Type:
        width = self.const_int(ref.width, scope, "a varbit width")
        if width <= 0 or width > MAX_WIDTH:
            raise self.fail(ref.width.loc, f"invalid width {width} for varbit<W>")
        return t.VarbitType(width)

    def resolve_error(self, ref: ast.ErrorTypeRef, scope: Scope) -> t.Type:
        return self.error_type

    def resolve_match_kind(self, ref: ast.MatchKindTypeRef, scope: Scope) -> t.Type:
        return self.match_kind_type

    def resolve_tuple(self, ref: ast.TupleTypeRef, scope: Scope) -> t.Type:
        return t.TupleType(tuple(self.resolve_type(element, scope) for element in ref.elements))

    def resolve_stack(self, ref: ast.StackTypeRef, scope: Scope) -> t.Type:
        element = self.resolve_type(ref.element, scope)
        if not isinstance(element, (t.HeaderType, t.HeaderUnionType)):
            raise self.fail(
                ref.loc,
                f"header stack elements must be headers or header unions, not {element}",
            )
        size = self.const_int(ref.size, scope, "a header stack size")
        if size <= 0:
            raise self.fail(ref.size.loc, f"header stack size must be positive, not {size}")
        return t.HeaderStackType(element, size)

    def resolve_named_type(self, ref: ast.NamedTypeRef, scope: Scope) -> t.Type:
        found = (self.globals if ref.absolute else scope).lookup(ref.name)
        if not found:
            raise self.fail(ref.loc, f"unknown type '{ref.name}'")
        decl = self.found(found)
        ref.decl = decl if isinstance(decl, ast.Declaration) else None
        base = self.type_of_type_decl(decl)
        if base is None:
            raise self.fail(ref.loc, f"'{ref.name}' is not a type")
        if (
            isinstance(base, (t.ExternType, t.ParserType, t.ControlType, t.PackageType))
            and base.type_params
        ):
            if not ref.type_args:
                # Generic type used without arguments: leave unspecialized (inferred later).
                return base
            if len(ref.type_args) != len(base.type_params):
                raise self.fail(
                    ref.loc,
                    f"type '{ref.name}' takes {len(base.type_params)} type argument(s), {len(ref.type_args)} given",
                )
            args = tuple(self.resolve_type(arg, scope) for arg in ref.type_args)
            return t.SpecializedType(base, args)
        if ref.type_args:
            raise self.fail(ref.loc, f"type '{ref.name}' is not generic")
        return base

    def type_of_type_decl(self, decl: Any) -> t.Type | None:
        if isinstance(decl, ast.TypeParam):
            return decl.var
        if isinstance(decl, ast.TypedefDecl):
            return decl.type_ref.resolved
        if isinstance(
            decl,
            (ast.HeaderDecl, ast.HeaderUnionDecl, ast.StructDecl, ast.EnumDecl, ast.NewTypeDecl),
        ):
            return decl.type
        if isinstance(
            decl,
            (
                ast.ExternDecl,
                ast.ParserTypeDecl,
                ast.ControlTypeDecl,
                ast.PackageTypeDecl,
                ast.ParserDecl,
                ast.ControlDecl,
            ),
        ):
            return decl.type
        return None

    def check_struct_like(
        self, decl: ast.HeaderDecl | ast.HeaderUnionDecl | ast.StructDecl, scope: Scope
    ) -> None:
        if isinstance(decl, ast.HeaderDecl):
            struct_type: t.StructLikeType = t.HeaderType(decl.name, [], decl.annotations, decl)
        elif isinstance(decl, ast.HeaderUnionDecl):
            struct_type = t.HeaderUnionType(decl.name, [], decl.annotations, decl)
        else:
            struct_type = t.StructType(decl.name, [], decl.annotations, decl)
        decl.type = struct_type
        seen: set[str] = set()
        offset: int | None = 0
        for struct_field in decl.fields:
            if struct_field.name in seen:
                raise self.fail(
                    struct_field.loc, f"duplicate field '{struct_field.name}' in {decl.name}"
                )
            seen.add(struct_field.name)
            field_type = self.resolve_type(struct_field.type_ref, scope)
            info = t.FieldInfo(
                struct_field.name, field_type, struct_field.annotations, None, struct_field
            )
            if isinstance(decl, ast.HeaderDecl) and isinstance(field_type, t.StructType):
                assert isinstance(struct_type, t.HeaderType)
                for leaf in self.header_struct_leaves(
                    decl, struct_field, struct_field.name, field_type, struct_type
                ):
                    leaf.offset_bits = offset
                    width = leaf.type.width_bits
                    offset = None if offset is None or width is None else offset + width
                    struct_type.fields.append(leaf)
                continue
            if isinstance(decl, ast.HeaderDecl):
                self.check_header_field(decl, struct_field, field_type)
                info.offset_bits = offset
                width = field_type.width_bits
                offset = (
                    None
                    if offset is None or width is None or isinstance(field_type, t.VarbitType)
                    else offset + width
                )
            elif isinstance(decl, ast.HeaderUnionDecl):
                if not isinstance(field_type, t.HeaderType):
                    raise self.fail(
                        struct_field.loc,
                        f"header_union {decl.name} field '{struct_field.name}' must be a header, not {field_type}",
                    )
            elif isinstance(
                field_type, (t.VoidType, t.StringType, t.ExternType, t.SpecializedType)
            ):
                raise self.fail(
                    struct_field.loc,
                    f"struct field '{struct_field.name}' cannot have type {field_type}",
                )
            struct_type.fields.append(info)
        if (
            isinstance(struct_type, t.HeaderType)
            and sum(isinstance(f.type, t.VarbitType) for f in struct_type.fields) > 1
        ):
            raise self.fail(decl.loc, f"header {decl.name} has more than one varbit field")

    def header_struct_leaves(
        self,
        decl: ast.HeaderDecl,
        struct_field: ast.StructField,
        prefix: str,
        struct: t.StructType,
        header: t.HeaderType,
    ) -> list[t.FieldInfo]:
        """The flattened leaves ``prefix.f`` of a struct-typed header field (p4c flattens
        such fields; their bits follow each other in declaration order)."""
        header.groups[prefix] = struct
        leaves: list[t.FieldInfo] = []
        for member in struct.fields:
            name = f"{prefix}.{member.name}"
            if isinstance(member.type, t.StructType):
                leaves += self.header_struct_leaves(decl, struct_field, name, member.type, header)
                continue
            scalar = t.underlying_scalar(member.type)
            if not isinstance(scalar, (t.BitsType, t.BoolType)):
                raise self.fail(
                    struct_field.type_ref.loc,
                    f"header {decl.name} field '{name}' has type {member.type}; a struct inside "
                    "a header may hold only bit<W>, int<W>, bool, serializable enums and structs",
                )
            leaves.append(t.FieldInfo(name, member.type, member.annotations, None, member.decl))
        return leaves

    def check_header_field(
        self, decl: ast.HeaderDecl, struct_field: ast.StructField, field_type: t.Type
    ) -> None:
        scalar = t.underlying_scalar(field_type)
        if isinstance(scalar, (t.BitsType, t.VarbitType, t.BoolType)):
            return
        raise self.fail(
            struct_field.type_ref.loc,
            f"header {decl.name} field '{struct_field.name}' has type {field_type}; header fields must be bit<W>, int<W>, varbit<W>, bool or a serializable enum",
        )

    def check_enum(self, decl: ast.EnumDecl, scope: Scope) -> None:
        underlying: t.BitsType | None = None
        if decl.underlying is not None:
            resolved = self.resolve_type(decl.underlying, scope)
            if not isinstance(resolved, t.BitsType):
                raise self.fail(
                    decl.underlying.loc,
                    f"the underlying type of enum {decl.name} must be bit<W> or int<W>, not {resolved}",
                )
            underlying = resolved
        enum_type = t.EnumType(decl.name, {}, underlying, decl)
        decl.type = enum_type
        for index, member in enumerate(decl.members):
            if member.name in enum_type.members:
                raise self.fail(member.loc, f"duplicate enum member '{member.name}' in {decl.name}")
            value: int | None = None
            if underlying is not None:
                if member.value is None:
                    raise self.fail(
                        member.loc,
                        f"member '{member.name}' of serializable enum {decl.name} needs a value",
                    )
                self.check_expr(member.value, scope, Context("global"), underlying)
                member.value = self.coerce(
                    member.value, underlying, f"value of {decl.name}.{member.name}"
                )
                if not isinstance(member.value.const_value, int) or isinstance(
                    member.value.const_value, bool
                ):
                    raise self.fail(
                        member.value.loc,
                        f"value of {decl.name}.{member.name} must be a compile-time constant",
                    )
                value = member.value.const_value
            elif member.value is not None:
                raise self.fail(
                    member.loc,
                    f"members of enum {decl.name} cannot have values; use 'enum bit<W> {decl.name}'",
                )
            enum_type.members[member.name] = t.EnumMemberInfo(member.name, enum_type, value, index)
        if not enum_type.members:
            raise self.fail(decl.loc, f"enum {decl.name} has no members")

    def check_extern(self, decl: ast.ExternDecl, scope: Scope) -> None:
        with self.type_params(decl.type_params, scope) as inner:
            decl.type = t.ExternType(decl.name, [p.var for p in decl.type_params if p.var], decl)
            for method in decl.methods:
                with self.type_params(method.type_params, inner) as method_scope:
                    if method.return_type is not None:
                        self.resolve_type(method.return_type, method_scope)
                    self.check_params(method.params, method_scope, allow_directionless=True)

    def check_params(
        self, params: list[ast.Parameter], scope: Scope, allow_directionless: bool
    ) -> None:
        seen: set[str] = set()
        for param in params:
            if param.name in seen:
                raise self.fail(param.loc, f"duplicate parameter '{param.name}'")
            seen.add(param.name)
            param_type = self.resolve_type(param.type_ref, scope)
            if isinstance(param_type, t.VoidType):
                raise self.fail(
                    param.type_ref.loc, f"parameter '{param.name}' cannot have type void"
                )
            if param.default is not None:
                self.check_expr(param.default, scope, Context("global"), param_type)
                param.default = self.coerce(
                    param.default, param_type, f"default value of parameter '{param.name}'"
                )
            if param.is_directionless and not allow_directionless:
                raise self.fail(
                    param.loc, f"parameter '{param.name}' needs a direction (in, out or inout)"
                )

    def declare_params(self, params: list[ast.Parameter], scope: Scope) -> None:
        for param in params:
            self.declare(scope, param.name, param, param.loc)


def _constant(type_: t.Type) -> Callable[[Any, ast.TypeRef, Scope], t.Type]:
    """The handler of a type syntax that always means the same type (``bool``, ``int``)."""
    return lambda checker, ref, scope: type_


# type syntax class -> its handler (classes of the AST are final: exact-type lookup)
TYPE_SYNTAX: dict[type, Callable[[Any, Any, Scope], t.Type]] = {
    ast.BitTypeRef: TypeDeclChecks.resolve_bits,
    ast.VarbitTypeRef: TypeDeclChecks.resolve_varbit,
    ast.InfIntTypeRef: _constant(INT_TYPE),
    ast.BoolTypeRef: _constant(BOOL),
    ast.StringTypeRef: _constant(STRING),
    ast.VoidTypeRef: _constant(VOID),
    ast.ErrorTypeRef: TypeDeclChecks.resolve_error,
    ast.MatchKindTypeRef: TypeDeclChecks.resolve_match_kind,
    ast.DontCareTypeRef: _constant(DONT_CARE),
    ast.TupleTypeRef: TypeDeclChecks.resolve_tuple,
    ast.StackTypeRef: TypeDeclChecks.resolve_stack,
    ast.NamedTypeRef: TypeDeclChecks.resolve_named_type,
}
