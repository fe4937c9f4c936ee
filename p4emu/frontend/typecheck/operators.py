"""Unary, binary and ternary operators, casts, and their constant folding."""

from __future__ import annotations

from typing import Any

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.header_groups import group_struct, leaf_expr, leaf_paths
from p4emu.frontend.typecheck.core import (
    BOOL,
    INT_TYPE,
    CheckerCore,
    Context,
    ExpressionHandler,
    Scope,
)


class OperatorChecks(CheckerCore):
    """Operators, casts and constant folding: a part of
    :class:`~p4emu.frontend.typecheck.TypeChecker`."""

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
        if op in ("==", "!=") and (
            isinstance(left_type, t.HeaderGroupType) or isinstance(right_type, t.HeaderGroupType)
        ):
            return self.check_group_comparison(expr, left_type, right_type, scope, ctx)
        if op in ("==", "!="):
            aggregates = (t.StructType, t.HeaderType, t.TupleType)
            if isinstance(right_type, aggregates):
                left_type = self.list_operand(expr, "left", right_type) or left_type
            if isinstance(left_type, aggregates):
                right_type = self.list_operand(expr, "right", left_type) or right_type
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

    def check_group_comparison(
        self, expr: ast.Binary, left_type: t.Type, right_type: t.Type, scope: Scope, ctx: Context
    ) -> t.Type:
        """``hdr.h.s == m.s`` (``s`` a struct-typed header field): field by field, as p4c;
        ``expr`` becomes the ``&&`` (``||`` for ``!=``) of the leaf comparisons."""
        struct = group_struct(left_type) or group_struct(right_type)
        if struct is not None:
            left_type = self.list_operand(expr, "left", struct) or left_type
            right_type = self.list_operand(expr, "right", struct) or right_type
        if group_struct(left_type) is not struct or struct is not group_struct(right_type):
            raise self.fail(expr.loc, f"cannot compare {left_type} with {right_type}")
        if not all(
            isinstance(side, (ast.PathExpr, ast.Member)) for side in (expr.left, expr.right)
        ):
            # a call or a '?:' on one side: compared as struct values (the back end reads the
            # header field's leaves into a struct)
            expr.left = self.coerce(expr.left, struct, "operand of '=='")
            expr.right = self.coerce(expr.right, struct, "operand of '=='")
            return BOOL
        for side in (expr.left, expr.right):
            self._whole_groups.pop(id(side), None)
        leaves = [
            ast.Binary(
                expr.op,
                leaf_expr(expr.left, path, struct),
                leaf_expr(expr.right, path, struct),
                loc=expr.loc,
            )
            for path in leaf_paths(struct)
        ]
        if not leaves:
            raise self.unsupported(expr.loc, f"comparing the empty struct {struct}")
        combined = leaves[-1]
        for leaf in reversed(leaves[:-1]):
            combined = ast.Binary("&&" if expr.op == "==" else "||", leaf, combined, loc=expr.loc)
        self.check_expr(combined, scope, ctx, BOOL)
        expr.op, expr.left, expr.right = combined.op, combined.left, combined.right
        expr.const_value = combined.const_value
        return BOOL

    def list_operand(self, expr: ast.Binary, side: str, target: t.Type) -> t.Type | None:
        """``m.s == {1, 2}``, ``{x = 1, y = 2} != m.s``: a list or structure expression
        compared with a value of struct, header or tuple type ``target`` takes that type
        (its elements coerced). Returns ``target``, or None when that side is no such
        expression (or both sides are)."""
        operand = getattr(expr, side)
        other = expr.right if side == "left" else expr.left
        if not isinstance(operand, (ast.ListExpr, ast.StructExpr)) or isinstance(
            other, (ast.ListExpr, ast.StructExpr)
        ):
            return None
        self.check_compared_nesting(operand, expr.op)
        setattr(expr, side, self.coerce(operand, target, f"operand of '{expr.op}'"))
        return target

    def check_compared_nesting(self, operand: ast.ListExpr | ast.StructExpr, op: str) -> None:
        """p4c 1.2.4.8 infers the type of a compared list expression's nested list
        expressions, but not of a structure expression inside it, nor of a list expression
        inside a structure expression (both accepted in an assignment)."""
        if isinstance(operand, ast.ListExpr):
            inner = operand.elements
        else:
            inner = [named.value for named in operand.fields]
        for element in inner:
            if isinstance(element, ast.StructExpr):
                raise self.fail(
                    element.loc,
                    f"a structure expression inside an operand of '{op}' needs a cast to its "
                    "type, e.g. (T){...} (p4c: could not infer a type for expression)",
                )
            if isinstance(element, ast.ListExpr) and isinstance(operand, ast.StructExpr):
                raise self.fail(
                    element.loc,
                    f"a list expression inside a structure expression compared with '{op}' "
                    "needs a cast to its type, e.g. (T){...} (p4c: cannot extract a field "
                    "from a tuple)",
                )
            if isinstance(element, ast.ListExpr):
                self.check_compared_nesting(element, op)

    def unify_operands(
        self,
        expr: ast.Binary,
        left_type: t.Type,
        right_type: t.Type,
        numeric: bool,
        expected: t.Type | None = None,
    ) -> t.Type:
        op = expr.op
        for side_type, side in ((left_type, expr.left), (right_type, expr.right)):
            if numeric and isinstance(side_type, t.TypeVar):  # a generic function's T
                raise self.fail(
                    side.loc,
                    f"operator '{op}' cannot be applied to a value of type {side_type}, a type "
                    "variable",
                )
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
        if isinstance(then_type, t.HeaderGroupType):  # a struct-typed header field: its struct
            expr.then = self.coerce(expr.then, then_type.struct, "'?:' branch")
            then_type = then_type.struct
        if isinstance(else_type, t.HeaderGroupType):
            expr.otherwise = self.coerce(expr.otherwise, else_type.struct, "'?:' branch")
            else_type = else_type.struct
        if isinstance(then_type, t.InfIntType) and isinstance(else_type, t.InfIntType):
            # p4c 1.2.4.8 refuses this whatever the context (a cast or an assignment to a
            # bit<W> does not give the branches a width; a constant condition neither)
            raise self.fail(
                expr.loc,
                "the branches of '?:' are integers without a width; give one of them a width "
                '(p4c: "Width must be specified for at least one of" them)',
            )
        result: t.Type
        if isinstance(then_type, t.InfIntType):
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
            result = then_type if isinstance(expr.then.type, t.HeaderGroupType) else expr.then.type
            result = result or then_type
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


# expression class -> its handler, for the operators (see expressions.EXPRESSIONS)
OPERATORS: dict[type, ExpressionHandler] = {
    ast.Unary: OperatorChecks.expr_Unary,
    ast.Binary: OperatorChecks.expr_Binary,
    ast.Ternary: OperatorChecks.expr_Ternary,
    ast.Cast: OperatorChecks.expr_Cast,
}
