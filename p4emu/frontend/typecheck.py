"""Name resolution, type checking and constant folding; builds the :class:`ast.CheckedProgram`.

The checker walks declarations in source order (P4 requires declaration before use), fills
the resolved attributes of the AST in place (see :mod:`p4emu.frontend.ast`), and rejects what
p4c rejects in the common cases with ``file:line:col`` messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from p4emu.exceptions import P4SourceError, P4SourceErrors
from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.source import SourceLocation

MAX_WIDTH = 1 << 16  # refuse absurd widths early

INT_TYPE = t.InfIntType()
BOOL = t.BoolType()
STRING = t.StringType()
VOID = t.VoidType()
DONT_CARE = t.DontCareType()
BIT32 = t.BitsType(32)
STATE = t.StateType()

MATCH_KIND_ENTRY_FORMS = {
    "exact": (),
    "lpm": (ast.Mask,),
    "ternary": (ast.Mask,),
    "range": (ast.Range,),
    "optional": (),
    "selector": (),
}


class _Abort(Exception):
    """Internal: stop checking the current top-level declaration (error already recorded)."""


# --------------------------------------------------------------------------- scopes


class Scope:
    """A lexical scope; names map to lists so functions and extern functions can overload."""

    def __init__(self, parent: Scope | None = None, kind: str = "block") -> None:
        self.parent = parent
        self.kind = kind
        self.names: dict[str, list[Any]] = {}

    def lookup(self, name: str) -> list[Any] | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found:
                return found
            scope = scope.parent
        return None

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


OVERLOADABLE = (ast.ExternFunctionDecl, ast.FunctionDecl)


@dataclass
class Context:
    """Where the statement/expression being checked lives."""

    kind: str  # "global", "parser", "control", "action", "function", "apply", "table"
    block: ast.ParserDecl | ast.ControlDecl | None = None
    action: ast.ActionDecl | None = None
    function: ast.FunctionDecl | None = None

    @property
    def in_parser(self) -> bool:
        return isinstance(self.block, ast.ParserDecl)


@dataclass
class _Bindings:
    """Type-variable bindings during inference; ``from_literal`` marks vars only seen with int."""

    values: dict[t.TypeVar, t.Type] = field(default_factory=dict)


# --------------------------------------------------------------------------- checker


class TypeChecker:
    """Checks one parsed program. Use :func:`check_program`."""

    def __init__(self, program: ast.Program, source_files: list[str], main_file: str) -> None:
        self.program = program
        self.source_files = source_files
        self.main_file = main_file
        self.errors: list[P4SourceError] = []
        self.warnings: list[str] = []
        # hdr.h.s (s a struct-typed header field) not followed by a field name, by id
        self._whole_groups: dict[int, ast.Expr] = {}
        self.globals = Scope(None, "global")
        self.error_type = t.ErrorType()
        self.match_kind_type = t.MatchKindType()
        self.named_types: dict[str, t.Type] = {}
        self.constants: dict[str, t.ConstValue] = {}
        self.failed: set[int] = set()  # ids of declarations whose checking failed
        self._switch_expression = False  # checking the expression of a switch statement

    # ------------------------------------------------------------------ errors

    def fail(self, loc: SourceLocation, message: str) -> _Abort:
        self.errors.append(loc.error(message))
        return _Abort()

    def unsupported(self, loc: SourceLocation, construct: str) -> _Abort:
        """Valid P4_16 that p4emu does not implement (docs/conformance.md)."""
        self.errors.append(loc.unsupported(construct))
        return _Abort()

    def warn(self, loc: SourceLocation, message: str) -> None:
        self.warnings.append(f"{loc}: warning: {message}")

    # ------------------------------------------------------------------ driver

    def check(self) -> ast.CheckedProgram:
        for decl in self.program.declarations:
            try:
                self.check_top_declaration(decl)
            except _Abort:
                # Keep the name visible so later declarations do not cascade errors; uses of
                # a failed declaration stop silently (see found()).
                self.failed.add(id(decl))
                if decl.name and not self.globals.names.get(decl.name):
                    self.globals.names[decl.name] = [decl]
                if not isinstance(
                    decl, (ast.ControlDecl, ast.ParserDecl, ast.ActionDecl, ast.FunctionDecl)
                ):
                    break
        if self.errors:
            raise _collect(self.errors)
        try:
            checked = self.build_checked_program()
        except _Abort:
            raise _collect(self.errors) from None
        if self.errors:
            raise _collect(self.errors)
        return checked

    # ------------------------------------------------------------------ declarations

    def declare(self, scope: Scope, name: str, decl: Any, loc: SourceLocation) -> None:
        existing = scope.names.get(name)
        if existing:
            if isinstance(decl, OVERLOADABLE) and all(
                isinstance(e, OVERLOADABLE) for e in existing
            ):
                arity = len(decl.params)
                for other in existing:
                    if len(other.params) == arity and type(other) is type(decl):
                        raise self.fail(
                            loc,
                            f"duplicate declaration of '{name}' with {arity} parameter(s) (previous declaration at {other.loc})",
                        )
                existing.append(decl)
                return
            previous = existing[0]
            where = getattr(previous, "loc", None)
            suffix = f" (previous declaration at {where})" if where and where.line else ""
            raise self.fail(loc, f"duplicate declaration of '{name}'{suffix}")
        scope.names[name] = [decl]

    def check_top_declaration(self, decl: ast.Declaration) -> None:
        scope = self.globals
        ctx = Context("global")
        if isinstance(decl, ast.ErrorDecl):
            for member in decl.members:
                if member.name in self.error_type.members:
                    raise self.fail(member.loc, f"duplicate error member 'error.{member.name}'")
                self.error_type.members[member.name] = t.ErrorMember(
                    member.name, len(self.error_type.members)
                )
            return
        if isinstance(decl, ast.MatchKindDecl):
            for member in decl.members:
                if member.name in self.match_kind_type.members:
                    raise self.fail(member.loc, f"duplicate match_kind member '{member.name}'")
                self.match_kind_type.members[member.name] = t.MatchKindMember(member.name)
            return
        if isinstance(decl, (ast.HeaderDecl, ast.HeaderUnionDecl, ast.StructDecl)):
            self.declare(scope, decl.name, decl, decl.loc)
            self.check_struct_like(decl, scope)
            self.named_types[decl.name] = decl.type  # type: ignore[assignment]
            return
        if isinstance(decl, ast.EnumDecl):
            self.declare(scope, decl.name, decl, decl.loc)
            self.check_enum(decl, scope)
            self.named_types[decl.name] = decl.type  # type: ignore[assignment]
            return
        if isinstance(decl, ast.TypedefDecl):
            self.declare(scope, decl.name, decl, decl.loc)
            resolved = self.resolve_type(decl.type_ref, scope)
            self.named_types[decl.name] = resolved
            return
        if isinstance(decl, ast.NewTypeDecl):
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
            return
        if isinstance(decl, ast.ConstDecl):
            self.check_const(decl, scope, ctx)
            self.constants[decl.name] = decl.value.const_value
            return
        if isinstance(decl, ast.ExternDecl):
            self.declare(scope, decl.name, decl, decl.loc)
            self.check_extern(decl, scope)
            self.named_types[decl.name] = decl.type  # type: ignore[assignment]
            return
        if isinstance(decl, ast.ExternFunctionDecl):
            self.declare(scope, decl.name, decl, decl.loc)
            with self.type_params(decl.type_params, scope) as inner:
                self.resolve_type(decl.return_type, inner)
                self.check_params(decl.params, inner, allow_directionless=True)
            return
        if isinstance(decl, ast.FunctionDecl):
            self.declare(scope, decl.name, decl, decl.loc)
            self.check_function(decl, scope)
            return
        if isinstance(decl, ast.ActionDecl):
            self.declare(scope, decl.name, decl, decl.loc)
            self.check_action(decl, scope, Context("global"))
            return
        if isinstance(decl, (ast.ParserTypeDecl, ast.ControlTypeDecl, ast.PackageTypeDecl)):
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
            return
        if isinstance(decl, ast.ParserDecl):
            self.declare(scope, decl.name, decl, decl.loc)
            self.check_parser(decl, scope)
            self.named_types[decl.name] = decl.type  # type: ignore[assignment]
            return
        if isinstance(decl, ast.ControlDecl):
            self.declare(scope, decl.name, decl, decl.loc)
            self.check_control(decl, scope)
            self.named_types[decl.name] = decl.type  # type: ignore[assignment]
            return
        if isinstance(decl, ast.Instantiation):
            self.declare(scope, decl.name, decl, decl.loc)
            self.check_instantiation(decl, scope, ctx)
            return
        raise self.fail(decl.loc, f"unexpected declaration '{decl.name}' at the top level")

    def found(self, decls: list[Any]) -> Any:
        """First of a lookup result; abort quietly if it belongs to a failed declaration."""
        if id(decls[0]) in self.failed:
            raise _Abort()
        return decls[0]

    @contextmanager
    def type_params(self, params: list[ast.TypeParam], scope: Scope) -> Iterator[Scope]:
        inner = Scope(scope, "type_params")
        for param in params:
            if param.var is None:
                param.var = t.TypeVar(param.name)
            self.declare(inner, param.name, param, param.loc)
        yield inner

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
        if isinstance(ref, ast.BitTypeRef):
            if ref.width is None:
                return t.BitsType(1, False)
            width = self.const_int(ref.width, scope, "a bit width")
            if width < 0 or (ref.signed and width == 0) or width > MAX_WIDTH:
                raise self.fail(
                    ref.width.loc, f"invalid width {width} for {'int' if ref.signed else 'bit'}<W>"
                )
            return t.BitsType(width, ref.signed)
        if isinstance(ref, ast.VarbitTypeRef):
            width = self.const_int(ref.width, scope, "a varbit width")
            if width <= 0 or width > MAX_WIDTH:
                raise self.fail(ref.width.loc, f"invalid width {width} for varbit<W>")
            return t.VarbitType(width)
        if isinstance(ref, ast.InfIntTypeRef):
            return INT_TYPE
        if isinstance(ref, ast.BoolTypeRef):
            return BOOL
        if isinstance(ref, ast.StringTypeRef):
            return STRING
        if isinstance(ref, ast.VoidTypeRef):
            return VOID
        if isinstance(ref, ast.ErrorTypeRef):
            return self.error_type
        if isinstance(ref, ast.MatchKindTypeRef):
            return self.match_kind_type
        if isinstance(ref, ast.DontCareTypeRef):
            return DONT_CARE
        if isinstance(ref, ast.TupleTypeRef):
            return t.TupleType(tuple(self.resolve_type(element, scope) for element in ref.elements))
        if isinstance(ref, ast.StackTypeRef):
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
        if isinstance(ref, ast.NamedTypeRef):
            return self.resolve_named_type(ref, scope)
        raise self.fail(ref.loc, f"unsupported type syntax {type(ref).__name__}")

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
                except _Abort:
                    # Action bodies are independent: keep checking to report more errors.
                    if not isinstance(local, ast.ActionDecl):
                        raise
                    failed = True
            if failed:
                raise _Abort()
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
        bindings = _Bindings(
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
        bindings: _Bindings,
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
        bindings: _Bindings,
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
        for prop in table.properties:
            if prop.name in ("key", "actions", "default_action"):
                continue
            if prop.name == "entries":
                self.check_entries(table, prop, key_types, scope, table_ctx)
                continue
            self.check_table_property(table, prop, scope, table_ctx)

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
                directional, given, ref.loc, name, scope, ctx, _Bindings()
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
                params, given, ref.loc, name, scope, ctx, _Bindings()
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
                    action.control_plane_params, given, ref.loc, name, scope, ctx, _Bindings()
                )
            else:
                ref.bound_args = self.bind_arguments(
                    action.params, given, ref.loc, name, scope, ctx, _Bindings()
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
            legacy = ast.find_annotation(entry.annotations, "priority")
            if entry.priority is None and legacy is not None:
                # Older p4c programs write @priority(N) on the entry.
                if not legacy.args or len(legacy.args) != 1:
                    raise self.fail(legacy.loc, "@priority needs one integer argument")
                entry.priority = legacy.args[0]
            if entry.priority is not None:
                self.check_expr(entry.priority, scope, ctx, BIT32)
                self.require_const(entry.priority, "an entry priority")
                if not table.needs_priority:
                    raise self.fail(
                        entry.priority.loc,
                        f"table {table.name} has no ternary, range or optional key, so its entries cannot have priorities",
                    )
            self.check_action_ref(entry.action, scope, ctx, table, mode="entry")
        self.assign_priorities(table, entries)

    def assign_priorities(self, table: ast.TableDecl, entries: list[ast.TableEntry]) -> None:
        if not table.needs_priority:
            return
        largest_wins = True
        delta = 1
        custom = {p.name: p for p in table.properties}
        if "largest_priority_wins" in custom and isinstance(
            custom["largest_priority_wins"].value, ast.Expr
        ):
            largest_wins = bool(custom["largest_priority_wins"].value.const_value)
        if "priority_delta" in custom and isinstance(custom["priority_delta"].value, ast.Expr):
            value = custom["priority_delta"].value.const_value
            if isinstance(value, int) and value > 0:
                delta = value
        # BMv2 as p4c (1.2.4.8) programs it: entries match in the order they are written,
        # the first one winning; explicit priorities (`priority = N:` / @priority) do not
        # reorder them, and p4c warns when they are out of that order (docs/conformance.md).
        count = len(entries)
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

    # ------------------------------------------------------------------ statements

    def check_block(
        self, block: ast.BlockStmt, scope: Scope, ctx: Context, new_scope: bool = True
    ) -> None:
        inner = Scope(scope, "block") if new_scope else scope
        for statement in block.statements:
            self.check_statement(statement, inner, ctx)

    def check_statement(self, statement: ast.Statement, scope: Scope, ctx: Context) -> None:
        if isinstance(statement, ast.BlockStmt):
            self.check_block(statement, scope, ctx)
        elif isinstance(statement, ast.AssignStmt):
            target_type = self.check_expr(statement.lhs, scope, ctx)
            self.check_lvalue(statement.lhs, "assign to")
            self.check_expr(statement.rhs, scope, ctx, target_type)
            statement.rhs = self.coerce(statement.rhs, target_type, "assignment", assignment=True)
        elif isinstance(statement, ast.CallStmt):
            self.check_expr(statement.call, scope, ctx)
        elif isinstance(statement, ast.IfStmt):
            self.check_expr(statement.cond, scope, ctx, BOOL)
            statement.cond = self.coerce(statement.cond, BOOL, "if condition")
            self.check_statement_scoped(statement.then, scope, ctx)
            if statement.otherwise is not None:
                self.check_statement_scoped(statement.otherwise, scope, ctx)
        elif isinstance(statement, ast.SwitchStmt):
            self.check_switch(statement, scope, ctx)
        elif isinstance(statement, ast.ExitStmt):
            if ctx.in_parser and ctx.kind != "action":
                raise self.fail(statement.loc, "exit is not allowed in a parser")
            if ctx.kind == "function":
                raise self.fail(statement.loc, "exit is not allowed in a function")
        elif isinstance(statement, ast.ReturnStmt):
            self.check_return(statement, scope, ctx)
        elif isinstance(statement, ast.EmptyStmt):
            return
        elif isinstance(statement, ast.DeclStmt):
            if isinstance(statement.decl, ast.ConstDecl):
                self.check_const(statement.decl, scope, ctx)
            else:
                self.check_variable(statement.decl, scope, ctx)
        else:
            raise self.fail(statement.loc, f"unsupported statement {type(statement).__name__}")

    def check_statement_scoped(self, statement: ast.Statement, scope: Scope, ctx: Context) -> None:
        if isinstance(statement, ast.DeclStmt):
            raise self.fail(
                statement.loc, "a declaration cannot be the body of an if statement; use a block"
            )
        self.check_statement(statement, scope, ctx)

    def check_return(self, statement: ast.ReturnStmt, scope: Scope, ctx: Context) -> None:
        if ctx.in_parser and ctx.kind != "action":
            raise self.fail(statement.loc, "return is not allowed in a parser")
        if ctx.kind == "function" and ctx.function is not None:
            return_type = ctx.function.return_type.resolved
            assert return_type is not None
            if isinstance(return_type, t.VoidType):
                if statement.value is not None:
                    raise self.fail(
                        statement.loc,
                        f"function '{ctx.function.name}' returns void; return takes no value",
                    )
                return
            if statement.value is None:
                raise self.fail(
                    statement.loc,
                    f"function '{ctx.function.name}' must return a value of type {return_type}",
                )
            self.check_expr(statement.value, scope, ctx, return_type)
            statement.value = self.coerce(statement.value, return_type, "return value")
            return
        if statement.value is not None:
            raise self.fail(statement.loc, "return with a value is only allowed in functions")

    def check_switch(self, statement: ast.SwitchStmt, scope: Scope, ctx: Context) -> None:
        if ctx.kind not in ("apply",):
            raise self.fail(
                statement.loc, "switch statements are only allowed in a control's apply block"
            )
        self._switch_expression = True
        try:
            switch_type = self.check_expr(statement.expr, scope, ctx)
        finally:
            self._switch_expression = False
        if statement.cases and any(c.label is None for c in statement.cases[:-1]):
            bad = next(c for c in statement.cases if c.label is None)
            raise self.fail(bad.loc, "'default' must be the last switch label")
        if statement.cases and statement.cases[-1].body is None:
            raise self.fail(statement.cases[-1].loc, "the last switch label needs a block")
        if isinstance(switch_type, t.ActionEnumType):
            statement.on_action_run = True
            table = switch_type.table
            seen: set[int] = set()
            for case in statement.cases:
                if case.label is None:
                    continue
                label = case.label
                if not isinstance(label, ast.PathExpr):
                    raise self.fail(
                        label.loc, f"switch label must be an action name of table {table.name}"
                    )
                ref = next((r for r in table.actions if r.name.lstrip(".") == label.name), None)
                if ref is None or ref.action is None:
                    raise self.fail(
                        label.loc, f"'{label.name}' is not an action of table {table.name}"
                    )
                if id(ref.action) in seen:
                    raise self.fail(label.loc, f"duplicate switch label '{label.name}'")
                seen.add(id(ref.action))
                label.decl = ref.action
                label.type = switch_type
                label.const_value = None
                case.action = ref.action
            for case in statement.cases:
                if case.body is not None:
                    self.check_block(case.body, scope, ctx)
            return
        scalar = t.underlying_scalar(switch_type)
        if not isinstance(scalar, (t.BitsType, t.EnumType, t.ErrorType)):
            raise self.fail(statement.expr.loc, f"cannot switch on a value of type {switch_type}")
        values: set[Any] = set()
        for case in statement.cases:
            if case.label is not None:
                self.check_expr(case.label, scope, ctx, switch_type)
                case.label = self.coerce(case.label, switch_type, "switch label")
                self.require_const(case.label, "a switch label")
                key = _hashable(case.label.const_value)
                if key in values:
                    raise self.fail(case.label.loc, "duplicate switch label")
                values.add(key)
            if case.body is not None:
                self.check_block(case.body, scope, ctx)

    # ------------------------------------------------------------------ lvalues

    def check_lvalue(self, expr: ast.Expr, verb: str) -> None:
        if isinstance(expr, ast.PathExpr):
            decl = expr.decl
            if isinstance(decl, ast.VariableDecl):
                return
            if isinstance(decl, ast.Parameter):
                if decl.direction in ("out", "inout"):
                    return
                kind = "in parameter" if decl.direction == "in" else "directionless parameter"
                raise self.fail(expr.loc, f"cannot {verb} {kind} '{decl.name}'")
            if isinstance(decl, ast.ConstDecl):
                raise self.fail(expr.loc, f"cannot {verb} constant '{decl.name}'")
            raise self.fail(expr.loc, f"cannot {verb} '{expr.name}'")
        if isinstance(expr, ast.Member):
            if expr.kind in (ast.MEMBER_FIELD, ast.MEMBER_STACK_NEXT, ast.MEMBER_STACK_LAST):
                self.check_lvalue(expr.expr, verb)
                return
            raise self.fail(expr.loc, f"cannot {verb} '{ast.expr_to_source(expr)}'")
        if isinstance(expr, (ast.Index, ast.Slice)):
            self.check_lvalue(expr.expr, verb)
            return
        if isinstance(expr, ast.DontCare):
            return
        raise self.fail(expr.loc, f"cannot {verb} the expression '{ast.expr_to_source(expr)}'")

    # ------------------------------------------------------------------ expressions

    def check_expr(
        self, expr: ast.Expr, scope: Scope, ctx: Context, expected: t.Type | None = None
    ) -> t.Type:
        method = getattr(self, "expr_" + type(expr).__name__, None)
        if method is None:
            raise self.fail(expr.loc, f"unexpected expression '{ast.expr_to_source(expr)}' here")
        result = method(expr, scope, ctx, expected)
        expr.type = result
        if isinstance(result, t.HeaderGroupType):
            self._whole_groups[id(expr)] = expr
        return result

    def expr_IntLiteral(
        self, expr: ast.IntLiteral, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        if expr.width is None:
            expr.const_value = expr.value
            return INT_TYPE
        bits = t.BitsType(expr.width, expr.signed)
        wrapped = bits.wrap(expr.value)
        if wrapped != expr.value:
            low, high = (
                (-(1 << (bits.width - 1)), (1 << (bits.width - 1)) - 1)
                if bits.signed
                else (0, bits.mask)
            )
            if not (low <= expr.value <= high):
                self.warn(
                    expr.loc,
                    f"value {expr.value} does not fit in {bits}; it is truncated to {wrapped}",
                )
        expr.const_value = wrapped
        return bits

    def expr_BoolLiteral(
        self, expr: ast.BoolLiteral, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        expr.const_value = expr.value
        return BOOL

    def expr_StringLiteral(
        self, expr: ast.StringLiteral, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        expr.const_value = expr.value
        return STRING

    def expr_DontCare(
        self, expr: ast.DontCare, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        # Keysets and out arguments handle '_' before reaching here.
        raise self.fail(
            expr.loc, "'_' can only be used as a keyset wildcard or an ignored out argument"
        )

    def expr_PathExpr(
        self, expr: ast.PathExpr, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        if expr.name == "error" and not expr.absolute:
            expr.decl = None
            return t.TypeNameType(self.error_type)
        found = (self.globals if expr.absolute else scope).lookup(expr.name)
        if not found:
            raise self.fail(expr.loc, f"unknown name '{expr.name}'")
        decl = self.found(found)
        expr.decl = decl
        if isinstance(decl, ast.Parameter):
            assert decl.type is not None
            return decl.type
        if isinstance(decl, ast.VariableDecl):
            assert decl.type_ref.resolved is not None
            return decl.type_ref.resolved
        if isinstance(decl, ast.ConstDecl):
            expr.const_value = decl.value.const_value
            assert decl.type_ref.resolved is not None
            declared = decl.type_ref.resolved
            return declared
        if isinstance(decl, ast.Instantiation):
            assert decl.type is not None
            return decl.type
        if isinstance(decl, ast.TableDecl):
            return t.TableType(decl)
        if isinstance(decl, ast.ActionDecl):
            return t.ActionType(decl)
        if isinstance(decl, (ast.FunctionDecl, ast.ExternFunctionDecl)):
            return t.FunctionType(decl.name)
        if isinstance(decl, ast.ValueSetDecl):
            assert decl.element_type.resolved is not None
            return t.ValueSetType(decl.element_type.resolved, decl.size_value)
        if isinstance(decl, ast.ParserState):
            return STATE
        type_value = self.type_of_type_decl(decl)
        if type_value is not None:
            return t.TypeNameType(type_value)
        raise self.fail(expr.loc, f"'{expr.name}' cannot be used in an expression")

    def expr_Member(
        self, expr: ast.Member, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        base_type = self.check_expr(expr.expr, scope, ctx)
        result = self.member_type(expr, base_type)
        if expr.kind == ast.MEMBER_METHOD:
            raise self.fail(
                expr.member_loc or expr.loc,
                f"method '{expr.member}' must be called: write {ast.expr_to_source(expr)}(...)",
            )
        if expr.kind in (ast.MEMBER_STACK_NEXT, ast.MEMBER_STACK_LAST) and not ctx.in_parser:
            raise self.fail(
                expr.member_loc or expr.loc,
                f"'{ast.expr_to_source(expr)}' can only be used in a parser; index the stack instead",
            )
        if expr.kind == ast.MEMBER_ACTION_RUN and not self._switch_expression:
            raise self.fail(
                expr.member_loc or expr.loc,
                "action_run can only be used as the expression of a switch statement",
            )
        return result

    def member_type(self, expr: ast.Member, base_type: t.Type) -> t.Type:
        name = expr.member
        where = expr.member_loc or expr.loc
        if isinstance(base_type, t.TypeNameType):
            named = base_type.named
            if isinstance(named, t.EnumType):
                member = named.members.get(name)
                if member is None:
                    raise self.fail(where, f"enum {named.name} has no member '{name}'")
                expr.kind, expr.resolved, expr.const_value = ast.MEMBER_ENUM, member, member
                return named
            if isinstance(named, t.ErrorType):
                error_member = named.members.get(name)
                if error_member is None:
                    raise self.fail(where, f"unknown error 'error.{name}'")
                expr.kind, expr.resolved, expr.const_value = (
                    ast.MEMBER_ERROR,
                    error_member,
                    error_member,
                )
                return named
            if isinstance(named, (t.ParserType, t.ControlType)) and name == "apply":
                expr.kind = ast.MEMBER_METHOD
                return VOID
            if isinstance(named, (t.HeaderType, t.StructType, t.HeaderUnionType)) and name in (
                "minSizeInBits",
                "minSizeInBytes",
            ):
                expr.kind = ast.MEMBER_METHOD
                return INT_TYPE
            raise self.fail(where, f"type {named} has no member '{name}'")
        if isinstance(base_type, t.HeaderGroupType):
            # hdr.h.s.f: the flattened leaf "s.f" of hdr.h (the inner Member is replaced)
            inner = expr.expr
            assert isinstance(inner, ast.Member)
            self._whole_groups.pop(id(inner), None)
            path = f"{base_type.prefix}.{name}"
            expr.expr, expr.member = inner.expr, path
            return self.member_type(expr, base_type.header)
        if isinstance(base_type, t.HeaderType) and name in base_type.groups:
            expr.kind = ast.MEMBER_FIELD
            return t.HeaderGroupType(base_type, name, base_type.groups[name])
        if isinstance(base_type, (t.HeaderType, t.HeaderUnionType, t.StructType)):
            info = base_type.field(name)
            if info is not None:
                expr.kind, expr.resolved = ast.MEMBER_FIELD, info
                return info.type
            if name in ("isValid", "setValid", "setInvalid") and not isinstance(
                base_type, t.StructType
            ):
                expr.kind = ast.MEMBER_METHOD
                return VOID
            if name in ("minSizeInBits", "minSizeInBytes"):
                expr.kind = ast.MEMBER_METHOD
                return INT_TYPE
            kind = {
                t.HeaderType: "header",
                t.HeaderUnionType: "header_union",
                t.StructType: "struct",
            }[type(base_type)]
            raise self.fail(where, f"{kind} {base_type.name} has no field '{name}'")
        if isinstance(base_type, t.HeaderStackType):
            if name in ("next", "last"):
                expr.kind = ast.MEMBER_STACK_NEXT if name == "next" else ast.MEMBER_STACK_LAST
                return base_type.element
            if name == "lastIndex":
                expr.kind = ast.MEMBER_STACK_LAST_INDEX
                return BIT32
            if name == "size":
                expr.kind = ast.MEMBER_STACK_SIZE
                expr.const_value = base_type.size
                return BIT32
            if name in ("push_front", "pop_front"):
                expr.kind = ast.MEMBER_METHOD
                return VOID
            raise self.fail(where, f"header stack has no member '{name}'")
        if isinstance(base_type, t.ApplyResultType):
            if name in ("hit", "miss"):
                expr.kind = ast.MEMBER_HIT if name == "hit" else ast.MEMBER_MISS
                return BOOL
            if name == "action_run":
                expr.kind = ast.MEMBER_ACTION_RUN
                return t.ActionEnumType(base_type.table)
            raise self.fail(
                where, f"table apply result has no member '{name}' (use hit, miss or action_run)"
            )
        if isinstance(base_type, t.TableType):
            if name == "apply":
                expr.kind = ast.MEMBER_METHOD
                return VOID
            raise self.fail(
                where,
                f"table {base_type.table.name} has no member '{name}' (tables only have apply())",
            )
        extern_base = base_type.base if isinstance(base_type, t.SpecializedType) else base_type
        if isinstance(extern_base, t.ExternType):
            assert extern_base.decl is not None
            methods = extern_base.decl.methods_named(name)
            if not methods:
                raise self.fail(where, f"extern {extern_base.name} has no method '{name}'")
            expr.kind, expr.resolved = ast.MEMBER_METHOD, methods[0]
            return VOID
        if isinstance(extern_base, (t.ParserType, t.ControlType)):
            if name == "apply":
                expr.kind = ast.MEMBER_METHOD
                return VOID
            raise self.fail(where, f"{extern_base.name} instances only have an apply() method")
        raise self.fail(where, f"a value of type {base_type} has no member '{name}'")

    def expr_Index(
        self, expr: ast.Index, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        base_type = self.check_expr(expr.expr, scope, ctx)
        if not isinstance(base_type, t.HeaderStackType):
            raise self.fail(
                expr.loc,
                f"cannot index a value of type {base_type} (only header stacks can be indexed)",
            )
        index_type = self.check_expr(expr.index, scope, ctx)
        if not isinstance(index_type, (t.BitsType, t.InfIntType)):
            raise self.fail(
                expr.index.loc, f"header stack index must be an integer, not {index_type}"
            )
        if isinstance(index_type, t.InfIntType):
            expr.index = self.coerce(expr.index, BIT32, "stack index")
        value = expr.index.const_value
        if isinstance(value, int) and not (0 <= value < base_type.size):
            raise self.fail(
                expr.index.loc,
                f"index {value} is out of bounds for a stack of size {base_type.size}",
            )
        return base_type.element

    def expr_Slice(
        self, expr: ast.Slice, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        base_type = self.check_expr(expr.expr, scope, ctx)
        scalar = t.underlying_scalar(base_type)
        hi = self.const_int_in(expr.hi, scope, ctx, "slice bound")
        lo = self.const_int_in(expr.lo, scope, ctx, "slice bound")
        if isinstance(scalar, t.InfIntType):
            if not isinstance(expr.expr.const_value, int):
                raise self.fail(expr.loc, "cannot slice an integer of unknown width")
            if lo < 0 or hi < lo:
                raise self.fail(expr.loc, f"invalid slice [{hi}:{lo}]")
            expr.hi_value, expr.lo_value = hi, lo
            width = hi - lo + 1
            expr.const_value = (expr.expr.const_value >> lo) & ((1 << width) - 1)
            return t.BitsType(width)
        if not isinstance(scalar, t.BitsType):
            raise self.fail(expr.loc, f"cannot slice a value of type {base_type}")
        if not (0 <= lo <= hi < scalar.width):
            raise self.fail(expr.loc, f"slice [{hi}:{lo}] is out of range for {scalar}")
        expr.hi_value, expr.lo_value = hi, lo
        width = hi - lo + 1
        if isinstance(expr.expr.const_value, int) and not isinstance(expr.expr.const_value, bool):
            expr.const_value = ((expr.expr.const_value & scalar.mask) >> lo) & ((1 << width) - 1)
        return t.BitsType(width)

    def const_int_in(self, expr: ast.Expr, scope: Scope, ctx: Context, what: str) -> int:
        self.check_expr(expr, scope, ctx)
        value = expr.const_value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(expr.loc, f"{what} must be a compile-time integer constant")
        return value

    def expr_Unary(
        self, expr: ast.Unary, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        operand_type = self.check_expr(
            expr.operand, scope, ctx, expected if expr.op != "!" else BOOL
        )
        value = expr.operand.const_value
        if expr.op == "!":
            if not isinstance(operand_type, t.BoolType):
                raise self.fail(expr.loc, f"operator '!' needs a bool operand, not {operand_type}")
            if isinstance(value, bool):
                expr.const_value = not value
            return BOOL
        scalar = (
            t.underlying_scalar(operand_type)
            if isinstance(operand_type, t.NewType)
            else operand_type
        )
        if not isinstance(scalar, (t.BitsType, t.InfIntType)):
            raise self.fail(
                expr.loc, f"operator '{expr.op}' needs a numeric operand, not {operand_type}"
            )
        if expr.op == "~" and isinstance(scalar, t.InfIntType):
            if expected is not None and isinstance(t.underlying_scalar(expected), t.BitsType):
                expr.operand = self.coerce(expr.operand, expected, "operand of '~'")
                scalar = operand_type = expected
                value = expr.operand.const_value
            else:
                raise self.fail(expr.loc, "operator '~' needs an operand with a width (e.g. ~8w0)")
        if isinstance(value, int) and not isinstance(value, bool):
            if expr.op == "-":
                folded = -value
            elif expr.op == "+":
                folded = value
            else:
                folded = ~value
            expr.const_value = scalar.wrap(folded) if isinstance(scalar, t.BitsType) else folded
        return operand_type

    def expr_Binary(
        self, expr: ast.Binary, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        op = expr.op
        if op in ("&&", "||"):
            for side in ("left", "right"):
                operand = getattr(expr, side)
                operand_type = self.check_expr(operand, scope, ctx, BOOL)
                if not isinstance(operand_type, t.BoolType):
                    raise self.fail(
                        operand.loc, f"operator '{op}' needs bool operands, not {operand_type}"
                    )
            left, right = expr.left.const_value, expr.right.const_value
            # Fold only what short-circuit evaluation decides: the right operand may have
            # side effects, so "x && false" is not constant.
            absorbing = op == "||"
            if left is absorbing:
                expr.const_value = absorbing
            elif isinstance(left, bool) and isinstance(right, bool):
                expr.const_value = right
            return BOOL
        left_type = self.check_expr(expr.left, scope, ctx)
        right_type = self.check_expr(expr.right, scope, ctx)
        if op in ("<<", ">>"):
            return self.check_shift(expr, left_type, right_type, expected)
        if op == "++":
            return self.check_concat(expr, left_type, right_type)
        if op in ("==", "!="):
            operand_type = self.unify_operands(expr, left_type, right_type, numeric=False)
            self.fold_comparison(expr)
            del operand_type
            return BOOL
        if op in ("<", ">", "<=", ">="):
            operand_type = self.unify_operands(expr, left_type, right_type, numeric=True)
            self.fold_comparison(expr)
            del operand_type
            return BOOL
        operand_type = self.unify_operands(
            expr, left_type, right_type, numeric=True, expected=expected
        )
        if op in ("|+|", "|-|") and isinstance(operand_type, t.InfIntType):
            raise self.fail(expr.loc, f"saturating operator '{op}' needs operands with a width")
        if op in ("&", "|", "^") and isinstance(operand_type, t.BoolType):
            raise self.fail(expr.loc, f"operator '{op}' is not defined on bool; use '&&' / '||'")
        self.fold_arithmetic(expr, operand_type)
        return operand_type

    def unify_operands(
        self,
        expr: ast.Binary,
        left_type: t.Type,
        right_type: t.Type,
        numeric: bool,
        expected: t.Type | None = None,
    ) -> t.Type:
        op = expr.op
        # Serializable enums compare / combine with their underlying type.
        if (
            isinstance(left_type, t.EnumType)
            and left_type.underlying
            and not isinstance(right_type, t.EnumType)
        ):
            expr.left = self.implicit_cast(expr.left, left_type.underlying)
            left_type = left_type.underlying
        if (
            isinstance(right_type, t.EnumType)
            and right_type.underlying
            and not isinstance(left_type, t.EnumType)
        ):
            expr.right = self.implicit_cast(expr.right, right_type.underlying)
            right_type = right_type.underlying
        if isinstance(left_type, t.InfIntType) and isinstance(right_type, t.InfIntType):
            if (
                expected is not None
                and isinstance(t.underlying_scalar(expected), t.BitsType)
                and op in ("|+|", "|-|")
            ):
                expr.left = self.coerce(expr.left, expected, f"operand of '{op}'")
                expr.right = self.coerce(expr.right, expected, f"operand of '{op}'")
                return expected
            return INT_TYPE
        if isinstance(left_type, t.InfIntType):
            expr.left = self.coerce(expr.left, right_type, f"left operand of '{op}'")
            return right_type
        if isinstance(right_type, t.InfIntType):
            expr.right = self.coerce(expr.right, left_type, f"right operand of '{op}'")
            return left_type
        if numeric:
            left_scalar = left_type.underlying if isinstance(left_type, t.NewType) else left_type
            right_scalar = (
                right_type.underlying if isinstance(right_type, t.NewType) else right_type
            )
            for side_type, side in ((left_scalar, expr.left), (right_scalar, expr.right)):
                if not isinstance(side_type, (t.BitsType, t.BoolType)) or (
                    isinstance(side_type, t.BoolType) and op not in ("&", "|", "^")
                ):
                    raise self.fail(
                        side.loc,
                        f"operator '{op}' cannot be applied to a value of type {side_type}",
                    )
        if not t.types_equal(left_type, right_type):
            if isinstance(left_type, t.BitsType) and isinstance(right_type, t.BitsType):
                if left_type.width != right_type.width:
                    raise self.fail(
                        expr.loc,
                        f"operands of '{op}' have different widths: {left_type} and {right_type}; cast one of them",
                    )
                raise self.fail(
                    expr.loc,
                    f"operands of '{op}' have different signedness: {left_type} and {right_type}; cast one of them",
                )
            raise self.fail(
                expr.loc, f"operands of '{op}' have different types: {left_type} and {right_type}"
            )
        if not numeric and not self.comparable(left_type):
            raise self.fail(expr.loc, f"values of type {left_type} cannot be compared with '{op}'")
        return left_type

    def comparable(self, type_: t.Type) -> bool:
        return not isinstance(
            type_,
            (
                t.ExternType,
                t.SpecializedType,
                t.TableType,
                t.StringType,
                t.VoidType,
                t.TypeNameType,
                t.ActionType,
                t.FunctionType,
            ),
        )

    def implicit_cast(self, expr: ast.Expr, target: t.Type) -> ast.Expr:
        ref = ast.NamedTypeRef(target.describe(), loc=expr.loc)
        ref.resolved = target
        cast = ast.Cast(ref, expr, implicit=True, loc=expr.loc)
        cast.type = target
        value = expr.const_value
        if isinstance(value, t.EnumMemberInfo):
            cast.const_value = value.value
        elif (
            isinstance(value, int)
            and isinstance(target, t.BitsType)
            and not isinstance(value, bool)
        ):
            cast.const_value = target.wrap(value)
        return cast

    def fold_comparison(self, expr: ast.Binary) -> None:
        left, right = expr.left.const_value, expr.right.const_value
        if left is None or right is None:
            return
        op = expr.op
        if op == "==":
            expr.const_value = left == right
        elif op == "!=":
            expr.const_value = left != right
        elif isinstance(left, int) and isinstance(right, int):
            expr.const_value = {
                "<": left < right,
                ">": left > right,
                "<=": left <= right,
                ">=": left >= right,
            }[op]

    def fold_arithmetic(self, expr: ast.Binary, operand_type: t.Type) -> None:
        left, right = expr.left.const_value, expr.right.const_value
        if (
            not (isinstance(left, int) and isinstance(right, int))
            or isinstance(left, bool)
            or isinstance(right, bool)
        ):
            if isinstance(left, bool) and isinstance(right, bool) and expr.op in ("&", "|", "^"):
                expr.const_value = {"&": left and right, "|": left or right, "^": left != right}[
                    expr.op
                ]
            return
        op = expr.op
        scalar = t.underlying_scalar(operand_type)
        if op in ("/", "%"):
            if right == 0:
                raise self.fail(expr.loc, "division by zero")
            if left < 0 or right < 0:
                raise self.fail(expr.loc, f"operator '{op}' is only defined on non-negative values")
        if op in ("|+|", "|-|"):
            assert isinstance(scalar, t.BitsType)
            raw = left + right if op == "|+|" else left - right
            if scalar.signed:
                low, high = -(1 << (scalar.width - 1)), (1 << (scalar.width - 1)) - 1
            else:
                low, high = 0, scalar.mask
            expr.const_value = max(low, min(high, raw))
            return
        results = {
            "+": lambda: left + right,
            "-": lambda: left - right,
            "*": lambda: left * right,
            "/": lambda: left // right,
            "%": lambda: left % right,
            "&": lambda: left & right,
            "|": lambda: left | right,
            "^": lambda: left ^ right,
        }
        value = results[op]()
        expr.const_value = scalar.wrap(value) if isinstance(scalar, t.BitsType) else value

    def check_shift(
        self, expr: ast.Binary, left_type: t.Type, right_type: t.Type, expected: t.Type | None
    ) -> t.Type:
        op = expr.op
        if isinstance(right_type, t.BitsType) and right_type.signed:
            raise self.fail(expr.right.loc, f"shift amount must be unsigned, not {right_type}")
        if not isinstance(right_type, (t.BitsType, t.InfIntType)):
            raise self.fail(
                expr.right.loc, f"shift amount must be an unsigned integer, not {right_type}"
            )
        amount = expr.right.const_value
        if isinstance(amount, int) and amount < 0:
            raise self.fail(expr.right.loc, "shift amount must not be negative")
        if isinstance(left_type, t.InfIntType):
            if not isinstance(amount, int):
                raise self.fail(
                    expr.left.loc,
                    "the left operand of a shift by a non-constant amount needs a width (e.g. 32w1)",
                )
            value = expr.left.const_value
            assert isinstance(value, int)
            expr.const_value = value << amount if op == "<<" else value >> amount
            return INT_TYPE
        scalar = t.underlying_scalar(left_type) if isinstance(left_type, t.NewType) else left_type
        if not isinstance(scalar, t.BitsType):
            raise self.fail(expr.left.loc, f"cannot shift a value of type {left_type}")
        # An untyped constant shift amount keeps type int (its const_value is the amount).
        value = expr.left.const_value
        if isinstance(value, int) and isinstance(amount, int) and not isinstance(value, bool):
            expr.const_value = scalar.wrap(value << amount if op == "<<" else value >> amount)
        del expected
        return left_type

    def check_concat(self, expr: ast.Binary, left_type: t.Type, right_type: t.Type) -> t.Type:
        for side_type, side in ((left_type, expr.left), (right_type, expr.right)):
            scalar = t.underlying_scalar(side_type)
            if isinstance(scalar, t.InfIntType):
                raise self.fail(side.loc, "operands of '++' need a width (e.g. 8w0)")
            if not isinstance(scalar, t.BitsType):
                raise self.fail(
                    side.loc, f"operator '++' cannot be applied to a value of type {side_type}"
                )
        left_scalar = t.underlying_scalar(left_type)
        right_scalar = t.underlying_scalar(right_type)
        assert isinstance(left_scalar, t.BitsType) and isinstance(right_scalar, t.BitsType)
        result = t.BitsType(left_scalar.width + right_scalar.width, left_scalar.signed)
        left, right = expr.left.const_value, expr.right.const_value
        if (
            isinstance(left, int)
            and isinstance(right, int)
            and not isinstance(left, bool)
            and not isinstance(right, bool)
        ):
            expr.const_value = result.wrap(
                ((left & left_scalar.mask) << right_scalar.width) | (right & right_scalar.mask)
            )
        return result

    def expr_Ternary(
        self, expr: ast.Ternary, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        self.check_expr(expr.cond, scope, ctx, BOOL)
        expr.cond = self.coerce(expr.cond, BOOL, "condition of '?:'")
        then_type = self.check_expr(expr.then, scope, ctx, expected)
        else_type = self.check_expr(expr.otherwise, scope, ctx, expected)
        if isinstance(then_type, t.InfIntType) and isinstance(else_type, t.InfIntType):
            if (
                expected is not None
                and not isinstance(expected, t.InfIntType)
                and isinstance(t.underlying_scalar(expected), t.BitsType)
            ):
                expr.then = self.coerce(expr.then, expected, "'?:' branch")
                expr.otherwise = self.coerce(expr.otherwise, expected, "'?:' branch")
                result: t.Type = expected
            elif isinstance(expr.cond.const_value, bool):
                result = INT_TYPE
            else:
                raise self.fail(
                    expr.loc,
                    "the branches of '?:' are integers without a width; give one of them a width",
                )
        elif isinstance(then_type, t.InfIntType):
            expr.then = self.coerce(expr.then, else_type, "'?:' branch")
            result = else_type
        elif isinstance(else_type, t.InfIntType):
            expr.otherwise = self.coerce(expr.otherwise, then_type, "'?:' branch")
            result = then_type
        else:
            if not t.types_equal(then_type, else_type):
                if isinstance(expr.otherwise, (ast.ListExpr, ast.StructExpr)):
                    expr.otherwise = self.coerce(expr.otherwise, then_type, "'?:' branch")
                elif isinstance(expr.then, (ast.ListExpr, ast.StructExpr)):
                    expr.then = self.coerce(expr.then, else_type, "'?:' branch")
                else:
                    raise self.fail(
                        expr.loc,
                        f"the branches of '?:' have different types: {then_type} and {else_type}",
                    )
            result = expr.then.type or then_type
        cond = expr.cond.const_value
        if isinstance(cond, bool):
            chosen = expr.then if cond else expr.otherwise
            expr.const_value = chosen.const_value
        return result

    def expr_Cast(
        self, expr: ast.Cast, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        if expr.implicit and expr.type is not None:
            return expr.type
        target = self.resolve_type(expr.type_ref, scope)
        source = self.check_expr(expr.expr, scope, ctx, target)
        value = expr.expr.const_value
        if isinstance(expr.expr, (ast.ListExpr, ast.StructExpr)):
            expr.expr = self.coerce(expr.expr, target, "cast")
            expr.const_value = expr.expr.const_value
            return target
        if t.types_equal(source, target):
            expr.const_value = value
            return target
        if not self.cast_allowed(source, target):
            raise self.fail(expr.loc, f"cannot cast a value of type {source} to {target}")
        expr.const_value = self.fold_cast(value, source, target)
        return target

    def cast_allowed(self, source: t.Type, target: t.Type) -> bool:
        src = source
        dst = target
        if isinstance(src, t.NewType) and t.types_equal(src.underlying, dst):
            return True
        if isinstance(dst, t.NewType) and (
            t.types_equal(dst.underlying, src) or isinstance(src, t.InfIntType)
        ):
            return True
        if isinstance(dst, t.NewType):
            return self.cast_allowed(src, dst.underlying)
        if isinstance(src, t.NewType):
            return self.cast_allowed(src.underlying, dst)
        if isinstance(src, t.EnumType) and src.underlying is not None:
            return isinstance(dst, t.BitsType) or (
                isinstance(dst, t.EnumType) and dst.underlying == src.underlying
            )
        if isinstance(dst, t.EnumType) and dst.underlying is not None:
            return isinstance(src, (t.BitsType, t.InfIntType))
        if isinstance(dst, t.BitsType):
            if isinstance(src, (t.BitsType, t.InfIntType)):
                return True
            if isinstance(src, t.BoolType):
                return dst.width == 1 and not dst.signed
            return False
        if isinstance(dst, t.BoolType):
            return (
                isinstance(src, t.BitsType) and src.width == 1 and not src.signed
            ) or isinstance(src, t.InfIntType)
        if isinstance(dst, t.InfIntType):
            return isinstance(src, t.InfIntType)
        return False

    def fold_cast(self, value: Any, source: t.Type, target: t.Type) -> Any:
        if value is None:
            return None
        scalar = t.underlying_scalar(target)
        if isinstance(value, t.EnumMemberInfo):
            if isinstance(target, t.EnumType):
                return value if value.enum is target else None
            value = value.value
        if isinstance(scalar, t.BoolType):
            if isinstance(value, bool):
                return value
            if isinstance(value, int):
                return value != 0
            return None
        if isinstance(target, t.EnumType):
            if isinstance(value, int) and scalar is not None and isinstance(scalar, t.BitsType):
                wrapped = scalar.wrap(value)
                for member in target.members.values():
                    if member.value == wrapped:
                        return member
            return None
        if isinstance(scalar, t.BitsType):
            if isinstance(value, bool):
                return int(value)
            if isinstance(value, int):
                return scalar.wrap(value)
            return None
        return value

    def expr_ListExpr(
        self, expr: ast.ListExpr, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        if isinstance(expected, (t.StructType, t.HeaderType)) and len(expected.fields) == len(
            expr.elements
        ):
            for index, (element, info) in enumerate(zip(expr.elements, expected.fields)):
                self.check_expr(element, scope, ctx, info.type)
                expr.elements[index] = self.coerce(
                    element, info.type, f"field '{info.name}' of {expected.name}"
                )
            self.fold_list(expr)
            return expected
        if isinstance(expected, t.TupleType) and len(expected.elements) == len(expr.elements):
            for index, (element, element_type) in enumerate(zip(expr.elements, expected.elements)):
                self.check_expr(element, scope, ctx, element_type)
                expr.elements[index] = self.coerce(element, element_type, "tuple element")
            self.fold_list(expr)
            return expected
        element_types = tuple(self.check_expr(element, scope, ctx) for element in expr.elements)
        self.fold_list(expr)
        return t.TupleType(element_types)

    @staticmethod
    def fold_list(expr: ast.ListExpr) -> None:
        values = [element.const_value for element in expr.elements]
        if all(value is not None for value in values):
            expr.const_value = tuple(values)

    def expr_StructExpr(
        self, expr: ast.StructExpr, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        names = [named.name for named in expr.fields]
        if len(set(names)) != len(names):
            raise self.fail(expr.loc, "duplicate field in structure expression")
        if isinstance(expected, (t.StructType, t.HeaderType)):
            for named in expr.fields:
                info = expected.field(named.name)
                if info is None:
                    raise self.fail(named.loc, f"{expected.name} has no field '{named.name}'")
                self.check_expr(named.value, scope, ctx, info.type)
                named.value = self.coerce(
                    named.value, info.type, f"field '{named.name}' of {expected.name}"
                )
            missing = [f.name for f in expected.fields if f.name not in names]
            if missing:
                raise self.fail(
                    expr.loc,
                    f"structure expression for {expected.name} is missing field '{missing[0]}'",
                )
            return expected
        anonymous = t.StructType("<anonymous struct>", [], [], None)
        for named in expr.fields:
            field_type = self.check_expr(named.value, scope, ctx)
            anonymous.fields.append(t.FieldInfo(named.name, field_type))
        return anonymous

    def expr_ConstructorCall(
        self, expr: ast.ConstructorCall, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        instance_type, decl, bound = self.check_construction(
            expr.type_ref, expr.args, expr.loc, scope, ctx
        )
        expr.decl = decl
        expr.bound_args = bound
        return instance_type

    def expr_Call(
        self, expr: ast.Call, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        return self.check_call(expr, scope, ctx)

    def expr_DefaultExpr(
        self, expr: ast.DefaultExpr, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        raise self.fail(expr.loc, "'default' can only be used as a keyset or switch label")

    def expr_Mask(
        self, expr: ast.Mask, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        raise self.fail(expr.loc, "'&&&' can only be used in a keyset")

    def expr_Range(
        self, expr: ast.Range, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        raise self.fail(expr.loc, "'..' can only be used in a keyset")

    def expr_TupleKeyset(
        self, expr: ast.TupleKeyset, scope: Scope, ctx: Context, expected: t.Type | None
    ) -> t.Type:
        raise self.fail(expr.loc, "a tuple keyset can only be used in a select or an entry")

    # ------------------------------------------------------------------ coercion

    def coerce(
        self, expr: ast.Expr, target: t.Type, what: str, assignment: bool = False
    ) -> ast.Expr:
        """Check that ``expr`` can be used where ``target`` is expected, applying implicit casts.

        Returns the expression to use (a new implicit Cast node for enum -> bits)."""
        source = expr.type
        assert source is not None, f"unchecked expression {expr!r}"
        for side in (source, target):
            if isinstance(side, t.HeaderGroupType):
                raise self.unsupported(
                    expr.loc,
                    f"the struct-typed header field {side.header.name}.{side.prefix} used as "
                    "a whole (use its fields)",
                )
        if isinstance(target, (t.TypeVar, t.DontCareType)) or t.types_equal(source, target):
            return expr
        if isinstance(source, t.DontCareType):
            return expr
        target_scalar = t.underlying_scalar(target) if isinstance(target, t.NewType) else target
        if isinstance(source, t.InfIntType):
            if isinstance(target_scalar, t.BitsType):
                value = expr.const_value
                assert isinstance(value, int)
                wrapped = target_scalar.wrap(value)
                if wrapped != value:
                    self.warn(
                        expr.loc,
                        f"value {value} does not fit in {target_scalar}; it is truncated to {wrapped}",
                    )
                expr.type = target
                expr.const_value = wrapped
                return expr
            if isinstance(target, t.InfIntType):
                return expr
        if isinstance(expr, ast.ListExpr) and isinstance(
            target, (t.StructType, t.HeaderType, t.TupleType)
        ):
            count = len(target.elements) if isinstance(target, t.TupleType) else len(target.fields)
            if count != len(expr.elements):
                raise self.fail(
                    expr.loc,
                    f"{what}: expected {count} element(s) for {target}, got {len(expr.elements)}",
                )
            element_types = (
                target.elements
                if isinstance(target, t.TupleType)
                else tuple(f.type for f in target.fields)
            )
            for index, element_type in enumerate(element_types):
                expr.elements[index] = self.coerce(expr.elements[index], element_type, what)
            expr.type = target
            self.fold_list(expr)
            return expr
        if isinstance(expr, ast.StructExpr) and isinstance(target, (t.StructType, t.HeaderType)):
            names = {named.name for named in expr.fields}
            for named in expr.fields:
                info = target.field(named.name)
                if info is None:
                    raise self.fail(named.loc, f"{target.name} has no field '{named.name}'")
                named.value = self.coerce(named.value, info.type, what)
            missing = [f.name for f in target.fields if f.name not in names]
            if missing:
                raise self.fail(
                    expr.loc,
                    f"structure expression for {target.name} is missing field '{missing[0]}'",
                )
            expr.type = target
            return expr
        if (
            isinstance(source, t.EnumType)
            and source.underlying is not None
            and t.types_equal(source.underlying, target)
        ):
            return self.implicit_cast(expr, target)
        if (
            isinstance(source, t.TupleType)
            and isinstance(target, t.TupleType)
            and len(source.elements) == len(target.elements)
            and all(
                isinstance(s, t.InfIntType) or t.types_equal(s, d)
                for s, d in zip(source.elements, target.elements)
            )
        ):
            return expr
        if (
            isinstance(source, t.SpecializedType)
            and isinstance(target, (t.ExternType, t.ParserType, t.ControlType))
            and source.base is target
        ):
            return expr
        if _implements(source, target):
            return expr
        if assignment:
            raise self.fail(
                expr.loc, f"cannot assign a value of type {source} to a target of type {target}"
            )
        raise self.fail(expr.loc, f"{what}: expected a value of type {target}, got {source}")

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
            action.params, call.args, call.loc, action.name, scope, ctx, _Bindings()
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
        bindings = _Bindings()
        type_vars = [p.var for p in decl.type_params if p.var is not None]
        self.bind_explicit_type_args(call, type_vars, bindings, scope, decl.name)
        call.bound_args = self.bind_arguments(
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
        bindings: _Bindings,
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
        bindings = _Bindings()
        base_type = base.type
        if isinstance(base_type, t.SpecializedType):
            bindings.values.update(base_type.bindings())
        call.bound_args = self.bind_arguments(
            decl.params, call.args, call.loc, f"{decl.name}.apply", scope, ctx, bindings
        )
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
        if decl.type_params:
            raise self.unsupported(
                call.loc, f"applying '{param.name}' of the generic type {decl.name}"
            )
        call.bound_args = self.bind_arguments(
            decl.params, call.args, call.loc, f"{param.name}.apply", scope, ctx, _Bindings()
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
        bindings = _Bindings()
        extern_args: tuple[t.Type, ...] = ()
        if isinstance(base_type, t.SpecializedType):
            bindings.values.update(base_type.bindings())
            extern_args = base_type.args
        method_vars = [p.var for p in method.type_params if p.var is not None]
        self.bind_explicit_type_args(call, method_vars, bindings, scope, callee.member)
        call.bound_args = self.bind_arguments(
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

    def bind_arguments(
        self,
        params: list[ast.Parameter],
        args: list[ast.Argument],
        loc: SourceLocation,
        name: str,
        scope: Scope,
        ctx: Context,
        bindings: _Bindings,
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
            hint = expected if not _has_type_vars(expected) else None
            if isinstance(arg.value, ast.DontCare):
                if param.direction != "out":
                    raise self.fail(
                        arg.value.loc,
                        f"'_' can only be passed to an out parameter ('{param.name}' of '{name}' is {param.direction or 'directionless'})",
                    )
                arg.value.type = hint or DONT_CARE
                continue
            arg_type = self.check_expr(arg.value, scope, ctx, hint)
            if (
                _has_type_vars(expected)
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
            if _has_type_vars(expected):
                unresolved = _first_type_var(expected)
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
                assert arg.value.type is not None
                if not t.types_equal(arg.value.type, expected) and not isinstance(
                    expected, t.TypeVar
                ):
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

    def infer(self, pattern: t.Type, actual: t.Type, bindings: _Bindings, expr: ast.Expr) -> None:
        if not self.unify(pattern, actual, bindings):
            raise self.fail(
                expr.loc,
                f"expected a value of type {t.substitute(pattern, bindings.values)}, got {actual}",
            )

    def unify(self, pattern: t.Type, actual: t.Type, bindings: _Bindings) -> bool:
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

    # ------------------------------------------------------------------ checked program

    def build_checked_program(self) -> ast.CheckedProgram:
        for whole in self._whole_groups.values():
            raise self.unsupported(
                whole.loc,
                f"the struct-typed header field '{ast.expr_to_source(whole)}' used as a whole "
                "(use its fields)",
            )
        mains = self.globals.names.get("main")
        end = SourceLocation(self.main_file, 1, 1)
        if not mains or not isinstance(mains[0], ast.Instantiation):
            raise self.fail(
                end,
                "program has no 'main' package instantiation (e.g. V1Switch(MyParser(), ..., MyDeparser()) main;)",
            )
        main = mains[0]
        package = main.type_decl
        if not isinstance(package, ast.PackageTypeDecl):
            raise self.fail(main.loc, "'main' must be an instance of a package such as V1Switch")
        if package.name != "V1Switch":
            raise main.loc.unsupported(
                f"package {package.name} (only the v1model V1Switch package is supported)"
            )
        builder = _InstanceBuilder(self)
        # Global extern instances first: tables may use them (shared action profiles).
        builder.collect_globals(self.program)
        blocks: dict[str, ast.BlockInstance] = {}
        for bound in main.bound_args:
            value = bound.expr
            if value is None:
                raise self.fail(main.loc, f"V1Switch argument '{bound.param.name}' is missing")
            blocks[bound.param.name] = builder.top_block(value)
        for slot in ast.V1SWITCH_SLOTS:
            if slot not in blocks:
                raise self.fail(main.loc, f"V1Switch argument '{slot}' is missing")
        return ast.CheckedProgram(
            program=self.program,
            main=main,
            package=package,
            blocks=blocks,
            error_type=self.error_type,
            match_kind_type=self.match_kind_type,
            types=dict(self.named_types),
            constants=dict(self.constants),
            tables=builder.tables,
            actions=builder.actions,
            extern_instances=builder.externs,
            value_sets=builder.value_sets,
            source_files=list(self.source_files),
            warnings=list(self.warnings),
        )


def _implements(source: t.Type, target: t.Type) -> bool:
    """A parser/control implementation passed where its type declaration is expected
    (``control Step(inout bit<8> v);`` <- ``Inc``): same apply parameters, in order."""
    kinds = ((t.ControlType, ast.ControlTypeDecl), (t.ParserType, ast.ParserTypeDecl))
    for type_kind, decl_kind in kinds:
        if (
            isinstance(source, type_kind)
            and isinstance(target, type_kind)
            and isinstance(target.decl, decl_kind)
            and source.decl is not None
            and not target.decl.type_params
        ):
            mine, theirs = source.decl.params, target.decl.params
            return len(mine) == len(theirs) and all(
                a.direction == b.direction
                and a.type is not None
                and b.type is not None
                and t.types_equal(a.type, b.type)
                for a, b in zip(mine, theirs, strict=True)
            )
    return False


class _InstanceBuilder:
    """Builds the block-instance tree and the control-plane object lists."""

    def __init__(self, checker: TypeChecker) -> None:
        self.checker = checker
        self.tables: list[ast.TableInstance] = []
        self.actions: list[ast.ActionInstance] = []
        self.externs: list[ast.ExternInstance] = []
        self.value_sets: list[ast.ValueSetInstance] = []
        self._global_actions: dict[int, ast.ActionInstance] = {}

    def top_block(self, value: ast.Expr) -> ast.BlockInstance:
        if isinstance(value, ast.ConstructorCall) and isinstance(
            value.decl, (ast.ParserDecl, ast.ControlDecl)
        ):
            decl = value.decl
            name = ast.qualify_name(None, decl)
            instance = ast.BlockInstance(decl, name, value)
            instance.constructor_args = {
                b.param.name: (b.expr.const_value if b.expr else None) for b in value.bound_args
            }
            self.add_block_arguments(instance, value.bound_args, 0)
        elif (
            isinstance(value, ast.PathExpr)
            and isinstance(value.decl, ast.Instantiation)
            and isinstance(value.decl.type_decl, (ast.ParserDecl, ast.ControlDecl))
        ):
            inst = value.decl
            decl = inst.type_decl
            assert isinstance(decl, (ast.ParserDecl, ast.ControlDecl))
            instance = ast.BlockInstance(decl, ast.qualify_name(None, inst), inst)
            instance.constructor_args = {
                b.param.name: (b.expr.const_value if b.expr else None) for b in inst.bound_args
            }
            self.add_block_arguments(instance, inst.bound_args, 0)
        else:
            raise self.checker.fail(
                value.loc,
                "V1Switch arguments must be parser or control instances such as MyIngress()",
            )
        self.populate(instance, depth=0)
        return instance

    def populate(self, block: ast.BlockInstance, depth: int) -> None:
        if depth > 64:
            raise self.checker.fail(
                block.decl.loc, f"{block.decl.name} instantiates itself recursively"
            )
        decl = block.decl
        for local in decl.locals:
            if isinstance(local, ast.Instantiation):
                type_decl = local.type_decl
                if isinstance(type_decl, (ast.ParserDecl, ast.ControlDecl)):
                    child = ast.BlockInstance(type_decl, block.qualified_name(local), local, block)
                    child.constructor_args = {
                        b.param.name: (b.expr.const_value if b.expr else None)
                        for b in local.bound_args
                    }
                    block.children[local.name] = child
                    self.add_block_arguments(child, local.bound_args, depth)
                    self.populate(child, depth + 1)
                elif isinstance(type_decl, ast.ExternDecl):
                    self.externs.append(
                        self.extern_instance(block.qualified_name(local), local, block)
                    )
            elif isinstance(local, ast.ActionDecl):
                self.actions.append(ast.ActionInstance(block.qualified_name(local), local, block))
            elif isinstance(local, ast.ValueSetDecl):
                self.value_sets.append(
                    ast.ValueSetInstance(block.qualified_name(local), local, block)
                )
        for local in decl.locals:
            if isinstance(local, ast.TableDecl):
                self.add_table(block, local)
        self.add_direct_invocations(block, depth)

    def add_block_arguments(
        self, block: ast.BlockInstance, bound_args: list[ast.BoundArg], depth: int
    ) -> None:
        """Constructor arguments that are parser/control instances (``Twice(Inc())``): each
        becomes a child of ``block`` keyed by the parameter name, named ``block.param``."""
        for bound in bound_args:
            expr = bound.expr
            if isinstance(expr, ast.ConstructorCall) and isinstance(
                expr.decl, (ast.ParserDecl, ast.ControlDecl)
            ):
                name = f"{block.name}.{bound.param.name}"
                child = ast.BlockInstance(expr.decl, name, expr, block)
                child.constructor_args = {
                    b.param.name: (b.expr.const_value if b.expr else None) for b in expr.bound_args
                }
                block.children[bound.param.name] = child
                self.add_block_arguments(child, expr.bound_args, depth + 1)
                self.populate(child, depth + 1)

    def add_direct_invocations(self, block: ast.BlockInstance, depth: int) -> None:
        """``Sub.apply()`` without an instance: an implicit instance named after the type."""
        decl = block.decl
        roots: list[ast.Node] = (
            [decl.body] if isinstance(decl, ast.ControlDecl) else list(decl.states)
        )
        for root in roots:
            for node in ast.walk(root):
                if not (isinstance(node, ast.Call) and isinstance(node.target, ast.BlockApply)):
                    continue
                target = node.target
                if (
                    target.instance is not None
                    or target.ctor_param is not None
                    or target.block.name in block.children
                ):
                    continue
                child = ast.BlockInstance(
                    target.block, block.qualified_name(target.block), None, block
                )
                block.children[target.block.name] = child
                self.populate(child, depth + 1)

    def extern_instance(
        self,
        name: str,
        decl: ast.Instantiation | ast.ConstructorCall,
        block: ast.BlockInstance | None,
    ) -> ast.ExternInstance:
        instance_type = decl.type
        base = instance_type.base if isinstance(instance_type, t.SpecializedType) else instance_type
        assert isinstance(base, t.ExternType)
        type_args = instance_type.args if isinstance(instance_type, t.SpecializedType) else ()
        args = [b.expr.const_value if b.expr is not None else None for b in decl.bound_args]
        return ast.ExternInstance(name, decl, base, type_args, args, block)

    def add_table(self, block: ast.BlockInstance, table: ast.TableDecl) -> None:
        name = block.qualified_name(table)
        instance = ast.TableInstance(name, table, block)
        for prop in ("counters", "meters", "implementation"):
            bound = getattr(table, prop)
            if bound is None:
                continue
            if isinstance(bound, ast.ConstructorCall):
                extern = self.extern_instance(name, bound, block)
                extern.table = instance
                self.externs.append(extern)
            else:
                extern = next(
                    (e for e in self.externs if e.decl is bound and e.block is block), None
                )
                if extern is None:
                    extern = next((e for e in self.externs if e.decl is bound), None)
                if extern is not None and prop != "implementation":
                    extern.table = instance
            setattr(instance, prop, extern)
        self.tables.append(instance)
        for ref in table.actions:
            action = ref.action
            assert action is not None
            found = next((a for a in self.actions if a.decl is action and a.block is block), None)
            if found is None:
                found = self._global_actions.get(id(action))
            if found is None:
                found = ast.ActionInstance(ast.qualify_name(None, action), action, None)
                self._global_actions[id(action)] = found
                self.actions.append(found)
            found.tables.append(instance)

    def collect_globals(self, program: ast.Program) -> None:
        for decl in program.declarations:
            if isinstance(decl, ast.Instantiation) and isinstance(decl.type_decl, ast.ExternDecl):
                self.externs.append(self.extern_instance(ast.qualify_name(None, decl), decl, None))


# --------------------------------------------------------------------------- helpers


def _collect(errors: list[P4SourceError]) -> P4SourceError:
    return errors[0] if len(errors) == 1 else P4SourceErrors(errors)


def _has_type_vars(type_: t.Type) -> bool:
    if isinstance(type_, t.TypeVar):
        return True
    if isinstance(type_, t.TupleType):
        return any(_has_type_vars(e) for e in type_.elements)
    if isinstance(type_, t.SpecializedType):
        return any(_has_type_vars(a) for a in type_.args)
    return False


def _first_type_var(type_: t.Type) -> str:
    if isinstance(type_, t.TypeVar):
        return type_.name
    if isinstance(type_, t.TupleType):
        for element in type_.elements:
            if _has_type_vars(element):
                return _first_type_var(element)
    if isinstance(type_, t.SpecializedType):
        for arg in type_.args:
            if _has_type_vars(arg):
                return _first_type_var(arg)
    return "?"


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


def _hashable(value: Any) -> Any:
    if isinstance(value, (t.EnumMemberInfo, t.ErrorMember)):
        return ("member", id(value))
    return value


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


def check_program(
    program: ast.Program, source_files: list[str] | None = None, main_file: str = "<string>"
) -> ast.CheckedProgram:
    """Type-check a parsed program; raises P4SourceError (or P4SourceErrors) on rejection."""
    return TypeChecker(program, source_files or [], main_file).check()
