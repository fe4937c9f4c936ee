"""Python code of P4 statements (one method per statement class, in a dispatch table):
assignments, declarations, if / switch / exit / return, header and stack built-ins."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from p4emu.backend.body.core import BodyCore, is_simple
from p4emu.backend.cfields import local_name
from p4emu.backend.codewriter import py_attr
from p4emu.backend.compile_helpers import (
    compile_error,
    const_int,
    from_unsigned,
    function_return,
    literal,
    to_unsigned,
    unsupported,
)
from p4emu.backend.dead_stores import dead_stores
from p4emu.backend.pytypes import (
    bit_width,
    holds_aggregate,
    is_aggregate,
    scalar_type,
)
from p4emu.backend.scope import Binding
from p4emu.backend.wide import HALF_BITS, member_split
from p4emu.frontend import ast
from p4emu.frontend import types as t

#: the generated statement of P4's ``exit`` (caught by the block function: the program
#: generator leaves that ``try`` out of a program whose code has none, ``program.py``)
EXIT_STATEMENT = "raise EXIT"


class StatementCode(BodyCore):
    """Statements: a part of
    :class:`~p4emu.backend.body.BodyCompiler`."""

    # ------------------------------------------------------------------ lvalues

    def assign(self, lhs: ast.Expr, rhs_code: str, type_: t.Type) -> None:
        """Store the (normalized) value ``rhs_code`` into the location ``lhs``."""
        if isinstance(lhs, ast.Member) and isinstance(lhs.type, t.HeaderGroupType):
            self.group_write(lhs, lhs.type, rhs_code)
            return
        if is_aggregate(type_):
            self.w.line(self.pc.types.assign(self.ex(lhs), rhs_code, type_))
            self.after_validity_change(lhs, valid=None)
            return
        if isinstance(lhs, ast.Slice):
            base = lhs.expr
            hi, lo = lhs.hi_value, lhs.lo_value
            mask = ((1 << (hi - lo + 1)) - 1) << lo
            base_type = scalar_type(base.type)  # type: ignore[arg-type]
            current = self.ex(base)
            current_bits = to_unsigned(current, base_type)
            value = rhs_code if not lo else f"({rhs_code} << {lo})"
            merged = f"(({current_bits} & {~mask & ((1 << bit_width(base_type)) - 1)}) | ({value} & {mask}))"  # type: ignore[operator]
            self.assign(base, from_unsigned(merged, base_type), base_type)
            return
        if isinstance(lhs, ast.Index) and isinstance(lhs.expr.type, t.TupleType):
            # a tuple is an immutable Python tuple: the new one replaces it
            base, count = lhs.expr, len(lhs.expr.type.elements)
            index = const_int(lhs.index.const_value)
            current = self.ex(base)
            if not is_simple(current):
                local = self.fresh("tp")
                self.w.line(f"{local} = {current}")
                current = local
            elements = [rhs_code if i == index else f"{current}[{i}]" for i in range(count)]
            self.assign(base, "(" + "".join(f"{e}, " for e in elements) + ")", base.type)
            return
        if isinstance(lhs, ast.PathExpr):
            binding = self.scope.lookup(lhs.decl)
            if binding is None or binding.kind != "var":
                raise compile_error(lhs, f"cannot assign to {lhs.name}")
            self.w.line(f"{binding.code} = {rhs_code}")
            return
        if isinstance(lhs, ast.Member) and lhs.kind == ast.MEMBER_FIELD:
            self.w.line(f"{self.ex(lhs.expr)}.{py_attr(lhs.member)} = {rhs_code}")
            return
        if isinstance(lhs, ast.DontCare):
            return
        raise unsupported(lhs, f"assignment to {type(lhs).__name__}")

    def after_validity_change(self, target: ast.Expr, valid: bool | None) -> None:
        """A header that is a union member became valid: invalidate its siblings."""
        if not isinstance(target, ast.Member) or target.kind != ast.MEMBER_FIELD:
            return
        union_type = target.expr.type
        if not isinstance(union_type, t.HeaderUnionType):
            return
        union = self.ex(target.expr)
        siblings = [f for f in union_type.fields if f.name != target.member]
        if not siblings:
            return
        me = f"{union}.{py_attr(target.member)}"
        cond = "" if valid else f"if {me}.valid_: "
        for sibling in siblings:
            self.w.line(f"{cond}{union}.{py_attr(sibling.name)}.valid_ = False")

    # ------------------------------------------------------------------ statements

    def stmts(self, statements: list[ast.Statement]) -> None:
        dead = dead_stores(statements)
        for statement in statements:
            if dead and id(statement) in dead:
                # p4c removes this store (an extern's out argument follows): skipped, and a
                # declared variable starts as a new one
                if isinstance(statement, ast.DeclStmt):
                    self.declare(statement.decl, initialize=False)
                continue
            self.stmt(statement)

    def stmt(self, s: ast.Statement) -> None:
        handler = STATEMENTS.get(type(s))
        if handler is None:
            raise unsupported(s, f"statement {type(s).__name__}")
        handler(self, s)

    def _st_EmptyStmt(self, s: ast.EmptyStmt) -> None:
        return

    def _st_BlockStmt(self, s: ast.BlockStmt) -> None:
        saved = self.scope
        self.scope = saved.child()
        try:
            self.stmts(s.statements)
        finally:
            self.scope = saved

    def _st_DeclStmt(self, s: ast.DeclStmt) -> None:
        self.declare(s.decl)

    def declare(self, decl: ast.Declaration, *, initialize: bool = True) -> None:
        """A local variable or constant declaration (a variable's initializer left out when
        not ``initialize``)."""
        init: ast.Expr | None
        if isinstance(decl, ast.ConstDecl):
            value = decl.const_value
            type_ = decl.type_ref.resolved
            if value is not None and type_ is not None and not is_aggregate(type_):
                self.scope.bind(decl, Binding("const", literal(value, type_), type_))
                return
            init = decl.value  # a constant the checker could not fold: compute it once
        elif isinstance(decl, ast.VariableDecl):
            init = decl.init if initialize else None
        else:
            raise unsupported(decl, f"local declaration {type(decl).__name__}")
        type_ = decl.type_ref.resolved
        if type_ is None:
            raise compile_error(decl, f"variable {decl.name} has no type")
        name = self.fresh(decl.name)
        if is_aggregate(type_):
            self.w.line(f"{name} = {self.pc.types.new(type_)}")
            self.scope.bind(decl, Binding("var", name, type_))
            if init is not None:
                self.assign_expr_to(name, init, type_)
            return
        scalar = scalar_type(type_)
        if isinstance(scalar, t.BitsType):
            # named for its type: the native build may hold it in C (p4emu.backend.cfields)
            name = local_name(name, scalar.width, scalar.signed)
        if init is not None:
            self.w.line(f"{name} = {self.owned(self.ex(init), type_)}")
        else:
            self.w.line(f"{name} = {self.pc.types.new(type_)}")
        self.scope.bind(decl, Binding("var", name, type_))

    def assign_expr_to(self, target: str, value: ast.Expr, type_: t.Type) -> None:
        """``target`` (an aggregate object expression) = ``value``."""
        if isinstance(value, (ast.ListExpr, ast.StructExpr)):
            elements = (
                [(None, el) for el in value.elements]
                if isinstance(value, ast.ListExpr)
                else [(f.name, f.value) for f in value.fields]
            )
            self.init_aggregate(target, type_, elements, value)
            return
        self.w.line(self.pc.types.assign(target, self.aggregate_value(value, type_), type_))

    def _st_AssignStmt(self, s: ast.AssignStmt) -> None:
        if s.leaves is not None:  # a struct-typed header field as a whole: field by field
            self.stmts(s.leaves)
            return
        type_ = s.lhs.type
        if type_ is None:
            raise compile_error(s, "assignment target has no type")
        if is_aggregate(type_):
            if isinstance(s.rhs, (ast.ListExpr, ast.StructExpr)):
                target = self.ex(s.lhs)
                self.assign_expr_to(target, s.rhs, type_)
                self.after_validity_change(s.lhs, valid=None)
                return
            self.assign(s.lhs, self.aggregate_value(s.rhs, type_), type_)
            return
        if isinstance(s.lhs, ast.DontCare):
            self.ex(s.rhs)
            return
        if self.assign_halves(s.lhs, s.rhs):
            return
        self.assign(s.lhs, self.owned(self.ex(s.rhs), type_), type_)

    def assign_halves(self, lhs: ast.Expr, rhs: ast.Expr) -> bool:
        """Store ``rhs`` into the wide field ``lhs`` half by half (both computed before
        either is stored), when both are held as halves (:mod:`p4emu.backend.wide`)."""
        split = member_split(lhs)
        if split is None:
            return False
        pair = self.halves(rhs) or self.last_field_halves(rhs)
        if pair is None:
            return False
        base = self.ex(lhs.expr)
        self.w.line(f"{base}.{split.hi}, {base}.{split.lo} = {pair[0][0]}, {pair[1][0]}")
        return True

    def last_field_halves(self, e: ast.Expr) -> tuple[tuple[str, int], tuple[str, int]] | None:
        """The halves of ``e`` when it is a wide field of a stack's ``last`` (its halves'
        codes, as :meth:`halves` gives them), that header bound first to a local annotated
        with its class: compiled, its halves are then C reads, where the field's property
        would make one Python ``int`` of them for the store to split again (the parser's
        ``hdr.sids.last.sid``). None for any other ``e`` (nothing written)."""
        if not isinstance(e, ast.Member) or e.kind != ast.MEMBER_FIELD:
            return None
        split = member_split(e)
        last = e.expr
        if split is None or not isinstance(last, ast.Member):
            return None
        if last.kind != ast.MEMBER_STACK_LAST or not isinstance(last.type, t.HeaderType):
            return None
        local = self.fresh("last")
        self.w.line(f"{local}: {self.pc.types.cls(last.type)} = {self.ex(last)}")
        return (f"{local}.{split.hi}", split.hi_bits), (f"{local}.{split.lo}", HALF_BITS)

    def owned(self, code: str, type_: t.Type) -> str:
        """The value ``code`` of ``type_`` as stored: a tuple holding aggregates gets copies
        of their objects (it owns them; its elements are written in place)."""
        if not holds_aggregate(type_):
            return code
        if not is_simple(code):
            local = self.fresh("tp")
            self.w.line(f"{local} = {code}")
            code = local
        return self.pc.types.copy(code, type_)

    def _st_IfStmt(self, s: ast.IfStmt) -> None:
        cond = self.ex(s.cond)
        with self.w.block(f"if {cond}:"):
            self.stmt_scoped(s.then)
        if s.otherwise is not None:
            if isinstance(s.otherwise, ast.IfStmt):
                # flatten "else if" into an else block (hoisting may add statements)
                with self.w.block("else:"):
                    self.stmt_scoped(s.otherwise)
            else:
                with self.w.block("else:"):
                    self.stmt_scoped(s.otherwise)

    def stmt_scoped(self, s: ast.Statement) -> None:
        saved = self.scope
        self.scope = saved.child()
        try:
            self.stmt(s)
        finally:
            self.scope = saved

    def _st_ExitStmt(self, s: ast.ExitStmt) -> None:
        self.w.line(EXIT_STATEMENT)

    def _st_ReturnStmt(self, s: ast.ReturnStmt) -> None:
        if not self.returns:
            raise compile_error(s, "return outside of a function, action or control")
        kind = self.returns[-1]
        if kind[0] == "break":
            self.w.line("break")
            return
        value = self.ex(s.value) if s.value is not None else None
        self.w.line(function_return(value, kind[1], kind[2]))

    def _st_SwitchStmt(self, s: ast.SwitchStmt) -> None:
        if s.on_action_run:
            call = s.expr.expr if isinstance(s.expr, ast.Member) else None
            if not isinstance(call, ast.Call) or not isinstance(call.target, ast.TableApply):
                raise unsupported(s, "switch on action_run of something other than t.apply()")
            self.table_apply(call, switch=s)
            return
        value = self.ex(s.expr)
        if not is_simple(value):
            tmp = self.fresh("sw")
            self.w.line(f"{tmp} = {value}")
            value = tmp
        groups = _switch_groups(s)
        first = True
        for labels, body in groups:
            if labels is None:
                header = "else:" if not first else "if True:"
            else:
                tests = " or ".join(f"{value} == {self.ex(label)}" for label in labels)
                header = f"{'if' if first else 'elif'} {tests}:"
            with self.w.block(header):
                if body is not None:
                    self.stmt_scoped(body)
            first = False

    def _st_CallStmt(self, s: ast.CallStmt) -> None:
        call = s.call
        target = call.target
        if isinstance(target, ast.ActionCall):
            self.inline_action_call(call, target.action)
        elif isinstance(target, ast.TableApply):
            self.table_apply(call)
        elif isinstance(target, ast.BuiltinMethodCall):
            self.builtin_method(call, target)
        elif isinstance(target, ast.FunctionCall):
            code = self.call_function(call, target, statement=True)
            if code:
                self.w.line(code)
        elif isinstance(target, (ast.ExternFunctionCall, ast.ExternMethodCall)):
            self.emitters.extern_statement(self, call)
        elif isinstance(target, ast.BlockApply):
            if self.where == "parser":
                raise unsupported(call, "sub-parser apply outside a parser state")
            self.inline_subcontrol(call, target)
        else:
            raise unsupported(call, "this call")

    # ------------------------------------------------------------------ builtins

    def builtin_method(self, call: ast.Call, target: ast.BuiltinMethodCall) -> None:
        obj = target.object
        name = target.name
        if name == "isValid" or name in ("minSizeInBits", "minSizeInBytes"):
            return
        if name in ("setValid", "setInvalid"):
            type_ = obj.type
            if not isinstance(type_, t.HeaderType):
                raise unsupported(call, f"{name}() on {type_.describe() if type_ else '?'}")
            code = self.ex(obj)
            cls = self.pc.types.cls(type_)
            nbytes = (type_.width_bits or 0) // 8
            if name == "setValid":
                # BMv2 add_header: only an invalid header is zeroed and counted
                with self.w.block(f"if not {code}.valid_:"):
                    self.w.line(f"reset_{cls}({code})")
                    self.w.line(f"{code}.valid_ = True")
                    if self.where in ("control", "function"):
                        self.w.line(f"ctx.length_reg += {nbytes}")
                self.after_validity_change(obj, valid=True)
            else:
                with self.w.block(f"if {code}.valid_:"):
                    self.w.line(f"{code}.valid_ = False")
                    if self.where in ("control", "function"):
                        self.w.line(f"ctx.length_reg -= {nbytes}")
            return
        if name in ("push_front", "pop_front"):
            type_ = obj.type
            if not isinstance(type_, t.HeaderStackType):
                raise unsupported(call, f"{name}() on a non-stack")
            count = call.bound_args[0].expr if call.bound_args else call.args[0].value
            n = const_int(count.const_value) if count is not None else None
            if n is None:
                raise unsupported(call, f"{name}() with a non-constant count")
            stack = self.ex(obj)
            size = type_.size
            items = f"{stack}.items"
            if n <= 0:
                return
            if n >= size:
                self.w.line(f"for _h in {items}: _h.valid_ = False")
                self.w.line(f"{stack}.nxt = {size if name == 'push_front' else 0}")
                return
            if name == "push_front":
                # BMv2 rotates the element references, then invalidates the new front
                self.w.line(f"{items}[:] = {items}[{size - n}:] + {items}[:{size - n}]")
                self.w.line(f"for _h in {items}[:{n}]: _h.valid_ = False")
                self.w.line(f"{stack}.nxt = min({stack}.nxt + {n}, {size})")
            else:
                self.w.line(f"{items}[:] = {items}[{n}:] + {items}[:{n}]")
                self.w.line(f"for _h in {items}[{size - n}:]: _h.valid_ = False")
                self.w.line(f"{stack}.nxt = max({stack}.nxt - {n}, 0)")
            return
        raise unsupported(call, f"method {name}()")


# statement class -> the method generating its code (classes of the AST are final: exact-type
# lookup)
STATEMENTS: dict[type, Callable[[Any, Any], None]] = {
    ast.EmptyStmt: StatementCode._st_EmptyStmt,
    ast.BlockStmt: StatementCode._st_BlockStmt,
    ast.DeclStmt: StatementCode._st_DeclStmt,
    ast.AssignStmt: StatementCode._st_AssignStmt,
    ast.IfStmt: StatementCode._st_IfStmt,
    ast.ExitStmt: StatementCode._st_ExitStmt,
    ast.ReturnStmt: StatementCode._st_ReturnStmt,
    ast.SwitchStmt: StatementCode._st_SwitchStmt,
    ast.CallStmt: StatementCode._st_CallStmt,
}


def _switch_groups(
    s: ast.SwitchStmt,
) -> Iterator[tuple[list[ast.Expr] | None, ast.Statement | None]]:
    """Group fall-through labels with the body that follows them."""
    pending: list[ast.Expr] = []
    for case in s.cases:
        if case.label is None or isinstance(case.label, ast.DefaultExpr):
            yield None, case.body
            pending = []
            continue
        pending.append(case.label)
        if case.body is not None:
            yield pending, case.body
            pending = []
