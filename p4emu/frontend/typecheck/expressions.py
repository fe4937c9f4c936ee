"""Expressions (one handler per node class, in a dispatch table): literals, names, members,
indexing, slices, lists, struct expressions, and implicit coercion to an expected type."""

from __future__ import annotations

from typing import ClassVar

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.typecheck.core import (
    BIT32,
    BOOL,
    INT_TYPE,
    STATE,
    STRING,
    VOID,
    CheckerCore,
    Context,
    ExpressionHandler,
    Scope,
)


class ExpressionChecks(CheckerCore):
    """Expressions and implicit coercion: a part of
    :class:`~p4emu.frontend.typecheck.TypeChecker`."""

    # expression class -> its handler: EXPRESSIONS below, extended by the composed checker
    # with the handlers of the other parts (operators)
    expression_handlers: ClassVar[dict[type, ExpressionHandler]]

    # ------------------------------------------------------------------ expressions

    def check_expr(
        self, expr: ast.Expr, scope: Scope, ctx: Context, expected: t.Type | None = None
    ) -> t.Type:
        handler = self.expression_handlers.get(type(expr))
        if handler is None:
            raise self.fail(expr.loc, f"unexpected expression '{ast.expr_to_source(expr)}' here")
        result = handler(self, expr, scope, ctx, expected)
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
        if expr.kind == ast.MEMBER_STACK_LAST_INDEX and not ctx.in_parser:
            raise self.fail(
                expr.member_loc or expr.loc,
                f"'{ast.expr_to_source(expr)}' can only be used in a parser (p4c 1.2.4.8: "
                "'lastIndex' for stacks can only be used in a parser)",
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
        if isinstance(base_type, t.TupleType):
            return self.tuple_element(expr, base_type, scope, ctx)
        if not isinstance(base_type, t.HeaderStackType):
            raise self.fail(
                expr.loc,
                f"cannot index a value of type {base_type} (only header stacks and tuples can "
                "be indexed)",
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

    def tuple_element(
        self, expr: ast.Index, tuple_type: t.TupleType, scope: Scope, ctx: Context
    ) -> t.Type:
        """``t[i]`` of a tuple: ``i`` a compile-time constant in range (p4c 1.2.4.8: read
        and written, element of any type)."""
        self.check_expr(expr.index, scope, ctx)
        index = expr.index.const_value
        if isinstance(index, bool) or not isinstance(index, int):
            raise self.fail(expr.index.loc, "a tuple index must be a compile-time constant")
        count = len(tuple_type.elements)
        if not 0 <= index < count:
            raise self.fail(
                expr.index.loc,
                f"tuple index {index} is out of range for {tuple_type} ({count} element(s))",
            )
        value = expr.expr.const_value
        if isinstance(value, tuple) and len(value) == count:
            expr.const_value = value[index]
        return tuple_type.elements[index]

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
        element_types = []
        for index, element in enumerate(expr.elements):
            element_type = self.check_expr(element, scope, ctx)
            if isinstance(element_type, t.HeaderGroupType):  # a struct-typed header field
                expr.elements[index] = self.coerce(element, element_type.struct, "element")
                element_type = element_type.struct
            element_types.append(element_type)
        self.fold_list(expr)
        return t.TupleType(tuple(element_types))

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
        if isinstance(source, t.HeaderGroupType) and target is source.struct:
            # a struct-typed header field as a whole where its struct is expected (an
            # argument, a return value, an element, an initializer): the back end reads
            # its leaves into a struct value
            self._whole_groups.pop(id(expr), None)
            return expr
        if isinstance(source, t.HeaderGroupType) and isinstance(target, t.StructLikeType):
            raise self.fail(expr.loc, f"{what}: expected a value of type {target}, got {source}")
        for side in (source, target):
            if isinstance(side, t.HeaderGroupType):
                raise self.unsupported(
                    expr.loc,
                    f"the struct-typed header field {side.header.name}.{side.prefix} used as "
                    "a whole (use its fields)",
                )
        if isinstance(target, t.DontCareType) or t.types_equal(source, target):
            return expr
        if isinstance(target, t.TypeVar):  # in a generic body: only a value of that type
            if assignment:
                raise self.fail(
                    expr.loc,
                    f"cannot assign a value of type {source} to a target of type {target}, a "
                    "type variable",
                )
            raise self.fail(
                expr.loc,
                f"{what}: expected a value of type {target} (a type variable), got {source}",
            )
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


# expression class -> its handler, for the expressions of this module (classes of the AST
# are final: exact-type lookup)
EXPRESSIONS: dict[type, ExpressionHandler] = {
    ast.IntLiteral: ExpressionChecks.expr_IntLiteral,
    ast.BoolLiteral: ExpressionChecks.expr_BoolLiteral,
    ast.StringLiteral: ExpressionChecks.expr_StringLiteral,
    ast.DontCare: ExpressionChecks.expr_DontCare,
    ast.PathExpr: ExpressionChecks.expr_PathExpr,
    ast.Member: ExpressionChecks.expr_Member,
    ast.Index: ExpressionChecks.expr_Index,
    ast.Slice: ExpressionChecks.expr_Slice,
    ast.ListExpr: ExpressionChecks.expr_ListExpr,
    ast.StructExpr: ExpressionChecks.expr_StructExpr,
    ast.ConstructorCall: ExpressionChecks.expr_ConstructorCall,
    ast.Call: ExpressionChecks.expr_Call,
    ast.DefaultExpr: ExpressionChecks.expr_DefaultExpr,
    ast.Mask: ExpressionChecks.expr_Mask,
    ast.Range: ExpressionChecks.expr_Range,
    ast.TupleKeyset: ExpressionChecks.expr_TupleKeyset,
}
ExpressionChecks.expression_handlers = EXPRESSIONS


def _implements(source: t.Type, target: t.Type) -> bool:
    """A parser/control implementation passed where its type declaration is expected
    (``control Step(inout bit<8> v);`` <- ``Inc``): same apply parameters, in order. A
    generic type declaration with its type arguments (``Step<bit<8>>``) is compared with
    them substituted."""
    bindings: dict[t.TypeVar, t.Type] = {}
    if isinstance(target, t.SpecializedType):
        bindings = target.bindings()
        target = target.base
    kinds = ((t.ControlType, ast.ControlTypeDecl), (t.ParserType, ast.ParserTypeDecl))
    for type_kind, decl_kind in kinds:
        if (
            isinstance(source, type_kind)
            and isinstance(target, type_kind)
            and isinstance(target.decl, decl_kind)
            and source.decl is not None
            and len(target.decl.type_params) == len(bindings)
        ):
            mine, theirs = source.decl.params, target.decl.params
            return len(mine) == len(theirs) and all(
                a.direction == b.direction
                and a.type is not None
                and b.type is not None
                and t.types_equal(a.type, t.substitute(b.type, bindings))
                for a, b in zip(mine, theirs, strict=True)
            )
    return False
