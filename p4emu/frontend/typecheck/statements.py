"""Statements (one handler per kind, in a dispatch table) and l-values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.header_groups import group_struct, leaf_expr, leaf_paths
from p4emu.frontend.typecheck.core import (
    BOOL,
    CheckerCore,
    Context,
    Scope,
)


class StatementChecks(CheckerCore):
    """Statements and l-values: a part of :class:`~p4emu.frontend.typecheck.TypeChecker`."""

    # ------------------------------------------------------------------ statements

    def check_block(
        self, block: ast.BlockStmt, scope: Scope, ctx: Context, new_scope: bool = True
    ) -> None:
        inner = Scope(scope, "block") if new_scope else scope
        for statement in block.statements:
            self.check_statement(statement, inner, ctx)

    def check_statement(self, statement: ast.Statement, scope: Scope, ctx: Context) -> None:
        handler = STATEMENTS.get(type(statement))
        if handler is None:
            raise self.fail(statement.loc, f"unsupported statement {type(statement).__name__}")
        handler(self, statement, scope, ctx)

    # one handler per kind of statement (STATEMENTS below)

    def check_assign(self, statement: ast.AssignStmt, scope: Scope, ctx: Context) -> None:
        target_type = self.check_expr(statement.lhs, scope, ctx)
        self.check_lvalue(statement.lhs, "assign to")
        expected = target_type.struct if isinstance(target_type, t.HeaderGroupType) else target_type
        source_type = self.check_expr(statement.rhs, scope, ctx, expected)
        if isinstance(target_type, t.HeaderGroupType) or isinstance(source_type, t.HeaderGroupType):
            self.check_group_assign(statement, target_type, source_type, scope, ctx)
            return
        statement.rhs = self.coerce(statement.rhs, target_type, "assignment", assignment=True)

    def check_group_assign(
        self,
        statement: ast.AssignStmt,
        target_type: t.Type,
        source_type: t.Type,
        scope: Scope,
        ctx: Context,
    ) -> None:
        """A struct-typed header field assigned as a whole (``hdr.h.s = {...}``, ``= m.s``,
        ``m.s = hdr.h.s``): one assignment per leaf field, in field order, as p4c."""
        struct = group_struct(target_type)
        if struct is None or struct is not group_struct(source_type):
            raise self.fail(
                statement.rhs.loc,
                f"cannot assign a value of type {source_type} to a target of type {target_type}",
            )
        for side in (statement.lhs, statement.rhs):
            self._whole_groups.pop(id(side), None)
        if not isinstance(statement.rhs, (ast.StructExpr, ast.ListExpr, ast.PathExpr, ast.Member)):
            # a call or a '?:': the back end stores the struct value leaf by leaf
            return
        statement.leaves = []
        for path in leaf_paths(struct):
            leaf = ast.AssignStmt(
                leaf_expr(statement.lhs, path, struct),
                leaf_expr(statement.rhs, path, struct),
                loc=statement.loc,
            )
            self.check_assign(leaf, scope, ctx)
            statement.leaves.append(leaf)

    def check_call_statement(self, statement: ast.CallStmt, scope: Scope, ctx: Context) -> None:
        self.check_expr(statement.call, scope, ctx)

    def check_if(self, statement: ast.IfStmt, scope: Scope, ctx: Context) -> None:
        self.check_expr(statement.cond, scope, ctx, BOOL)
        statement.cond = self.coerce(statement.cond, BOOL, "if condition")
        self.check_statement_scoped(statement.then, scope, ctx)
        if statement.otherwise is not None:
            self.check_statement_scoped(statement.otherwise, scope, ctx)

    def check_exit(self, statement: ast.ExitStmt, scope: Scope, ctx: Context) -> None:
        if ctx.in_parser and ctx.kind != "action":
            raise self.fail(statement.loc, "exit is not allowed in a parser")
        if ctx.kind == "function":
            raise self.fail(statement.loc, "exit is not allowed in a function")

    def check_empty(self, statement: ast.EmptyStmt, scope: Scope, ctx: Context) -> None:
        return

    def check_declaration_statement(
        self, statement: ast.DeclStmt, scope: Scope, ctx: Context
    ) -> None:
        if isinstance(statement.decl, ast.ConstDecl):
            self.check_const(statement.decl, scope, ctx)
        else:
            self.check_variable(statement.decl, scope, ctx)

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


# statement class -> its handler (classes of the AST are final: exact-type lookup)
STATEMENTS: dict[type, Callable[[Any, Any, Scope, Context], None]] = {
    ast.BlockStmt: StatementChecks.check_block,
    ast.AssignStmt: StatementChecks.check_assign,
    ast.CallStmt: StatementChecks.check_call_statement,
    ast.IfStmt: StatementChecks.check_if,
    ast.SwitchStmt: StatementChecks.check_switch,
    ast.ExitStmt: StatementChecks.check_exit,
    ast.ReturnStmt: StatementChecks.check_return,
    ast.EmptyStmt: StatementChecks.check_empty,
    ast.DeclStmt: StatementChecks.check_declaration_statement,
}


def _hashable(value: Any) -> Any:
    if isinstance(value, (t.EnumMemberInfo, t.ErrorMember)):
        return ("member", id(value))
    return value
