"""Code generation for P4 statements and expressions (controls, actions, functions, and
the statements of parser states).

Design (see also :mod:`p4emu.backend.pytypes` for value representation):

- Every expression compiles to a Python expression string whose value is already
  normalized to its P4 type (``bit<W>`` masked, ``int<W>`` wrapped), so operators only
  re-normalize their own result.
- Actions, sub-controls and sub-parsers are **inlined** at their call sites (as p4c's
  inliner does): their locals become Python locals of the enclosing function, control
  locals stay visible to actions without any indirection, and a table's action dispatch
  is an ``if``/``elif`` chain on the entry's action id with the action bodies inline.
  Scalar parameters are copied in and out; aggregate parameters are passed by reference
  (aggregate assignment always copies *into* the existing object, so this is safe).
- ``return`` inside an inlined unit becomes ``break`` out of a one-iteration ``for``
  loop wrapped around that unit (only when the unit contains a ``return``); ``exit``
  raises :data:`p4emu.backend.rt.EXIT`, caught by the top-level block function.
- Table applications used inside expressions (``t.apply().hit``) are hoisted into
  statements before the statement that uses them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from p4emu.backend.codewriter import CodeWriter, py_attr
from p4emu.backend.exceptions import CompileError
from p4emu.backend.pytypes import bit_width, default_scalar, is_aggregate, scalar_type
from p4emu.backend.scope import Binding, Scope
from p4emu.frontend import ast
from p4emu.frontend import types as t

if TYPE_CHECKING:
    from p4emu.backend.program import ProgramCompiler


_KEYSET_FORMS = (ast.Mask, ast.Range, ast.DefaultExpr, ast.DontCare)


def unsupported(node: ast.Node, construct: str) -> Exception:
    return node.loc.unsupported(construct)


def compile_error(node: ast.Node, message: str) -> CompileError:
    loc = node.loc
    return CompileError(message, loc.file, loc.line, loc.column)


def literal(value: Any, type_: t.Type | None) -> str:
    """Python literal of a folded constant of ``type_``."""
    if isinstance(value, bool):
        if type_ is not None and isinstance(scalar_type(type_), t.BitsType):
            return "1" if value else "0"
        return "True" if value else "False"
    if isinstance(value, int):
        if type_ is not None:
            base = scalar_type(type_)
            if isinstance(base, t.BitsType):
                return repr(base.wrap(value))
            if isinstance(base, t.BoolType):
                return "True" if value else "False"
        return repr(value)
    if isinstance(value, t.EnumMemberInfo):
        return repr(value.value if value.value is not None else value.index)
    if isinstance(value, t.ErrorMember):
        return repr(value.code)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, tuple):
        elements: list[t.Type | None] = [None] * len(value)
        if type_ is not None and isinstance(type_, t.TupleType):
            elements = list(type_.elements)
        return "(" + "".join(literal(v, et) + ", " for v, et in zip(value, elements)) + ")"
    raise CompileError(f"cannot represent constant {value!r}")


def const_int(value: Any) -> int | None:
    """Integer value of a folded constant (enum members and errors included)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, t.EnumMemberInfo):
        return value.value if value.value is not None else value.index
    if isinstance(value, t.ErrorMember):
        return value.code
    return None


def fit(code: str, type_: t.Type) -> str:
    """Reduce an arbitrary Python int expression to ``type_``'s representation."""
    base = scalar_type(type_)
    if isinstance(base, t.BitsType):
        mask = (1 << base.width) - 1
        if base.signed:
            half = 1 << (base.width - 1)
            return f"((({code}) + {half} & {mask}) - {half})"
        return f"(({code}) & {mask})"
    return code


def to_unsigned(code: str, type_: t.Type) -> str:
    """The bit pattern (non-negative int) of a value of ``type_``."""
    base = scalar_type(type_)
    if isinstance(base, t.BitsType) and base.signed:
        return f"({code} & {(1 << base.width) - 1})"
    if isinstance(base, t.BoolType):
        return f"(1 if {code} else 0)"
    return code


def from_unsigned(code: str, type_: t.Type) -> str:
    """A value of ``type_`` from its bit pattern."""
    base = scalar_type(type_)
    if isinstance(base, t.BitsType) and base.signed:
        half = 1 << (base.width - 1)
        return f"(({code} ^ {half}) - {half})"
    if isinstance(base, t.BoolType):
        return f"({code} != 0)"
    return code


def _lvalue_path(expr: ast.Expr | None) -> tuple[object, ...] | None:
    """``hdr.h.a`` -> ``(id(hdr decl), "h", "a")``; a run-time index is ``"*"``; None when
    ``expr`` is not an lvalue path."""
    if isinstance(expr, ast.PathExpr):
        return (id(expr.decl),)
    if isinstance(expr, ast.Member):
        base = _lvalue_path(expr.expr)
        step = expr.member if expr.kind == ast.MEMBER_FIELD else "*"  # stack.next / .last
        return None if base is None else (*base, step)
    if isinstance(expr, ast.Index):
        base = _lvalue_path(expr.expr)
        value = expr.index.const_value
        return None if base is None else (*base, value if isinstance(value, int) else "*")
    if isinstance(expr, ast.Slice):
        return _lvalue_path(expr.expr)
    return None


def _overlap(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return all(x == y or "*" in (x, y) for x, y in zip(a, b, strict=False))


def aliased_params(
    params: list[ast.Parameter], by_param: dict[int, ast.BoundArg], body: ast.Node | None
) -> set[int]:
    """ids of the aggregate ``inout`` parameters whose argument overlaps another directional
    argument, or whose argument's root variable ``body`` also uses directly."""
    paths: list[tuple[ast.Parameter, tuple[object, ...]]] = []
    for param in params:
        arg = by_param.get(id(param))
        if param.direction in ("out", "inout") and arg is not None:
            path = _lvalue_path(arg.expr)
            if path is not None:
                paths.append((param, path))
    candidates = [
        (param, path)
        for param, path in paths
        if param.direction == "inout" and param.type is not None and is_aggregate(param.type)
    ]
    if not candidates:
        return set()
    used = (
        {id(n.decl) for n in ast.walk(body) if isinstance(n, ast.PathExpr)}
        if body is not None
        else set()
    )
    aliased: set[int] = set()
    for param, path in candidates:
        if path[0] in used or any(
            other is not param and _overlap(path, other_path) for other, other_path in paths
        ):
            aliased.add(id(param))
    return aliased


def contains_return(node: ast.Node) -> bool:
    return any(isinstance(sub, ast.ReturnStmt) for sub in ast.walk(node))


class BodyCompiler:
    """Compiles statements/expressions into a :class:`CodeWriter` within a :class:`Scope`."""

    def __init__(
        self,
        pc: ProgramCompiler,
        w: CodeWriter,
        scope: Scope,
        *,
        where: str,
    ) -> None:
        self.pc = pc
        self.w = w
        self.scope = scope
        self.where = where  # "control" | "parser" | "deparser" | "function"
        # return handling stack: ("break",) for inlined units, ("function", outs) for
        # generated functions
        self.returns: list[tuple[Any, ...]] = []
        # name of the variable holding the direct meter color of the current table hit
        self.meter_color: str | None = None
        # parser-only: names of the data / offset / length / error locals
        self.parser_state: Any = None

    # ------------------------------------------------------------------ helpers

    def fresh(self, hint: str = "t") -> str:
        return self.pc.names.fresh(hint)

    def bind_global(self, obj: Any, hint: str) -> str:
        return self.pc.bind(obj, hint)

    # ------------------------------------------------------------------ expressions

    def ex(self, e: ast.Expr) -> str:
        """Python expression computing ``e`` (hoisting side effects before it if needed)."""
        type_ = e.type
        if (
            e.const_value is not None
            and type_ is not None
            and not is_aggregate(type_)
            and not isinstance(e, _KEYSET_FORMS)
        ):
            return literal(e.const_value, type_)
        method = getattr(self, "_ex_" + type(e).__name__, None)
        if method is None:
            raise unsupported(e, f"expression {type(e).__name__}")
        return method(e)

    def _ex_IntLiteral(self, e: ast.IntLiteral) -> str:
        return literal(e.value, e.type)

    def _ex_BoolLiteral(self, e: ast.BoolLiteral) -> str:
        return "True" if e.value else "False"

    def _ex_StringLiteral(self, e: ast.StringLiteral) -> str:
        return repr(e.value)

    def _ex_PathExpr(self, e: ast.PathExpr) -> str:
        binding = self.scope.lookup(e.decl)
        if binding is not None:
            if binding.kind in ("var", "const"):
                return binding.code
            raise unsupported(e, f"{e.name} used as a value")
        decl = e.decl
        if isinstance(decl, ast.ConstDecl):
            if decl.const_value is None:
                raise compile_error(e, f"constant {e.name} has no compile-time value")
            return literal(decl.const_value, e.type)
        if isinstance(decl, ast.Parameter) and decl.default is not None:
            return self.ex(decl.default)
        raise compile_error(e, f"'{e.name}' is not available here")

    def _ex_Member(self, e: ast.Member) -> str:
        kind = e.kind
        if kind == ast.MEMBER_FIELD:
            return f"{self.ex(e.expr)}.{py_attr(e.member)}"
        if kind in (ast.MEMBER_ENUM, ast.MEMBER_ERROR):
            return literal(e.const_value if e.const_value is not None else e.resolved, e.type)
        if kind == ast.MEMBER_STACK_SIZE:
            return repr(e.expr.type.size)  # type: ignore[union-attr]
        if kind == ast.MEMBER_STACK_LAST_INDEX:
            return f"(({self.ex(e.expr)}.nxt - 1) & 4294967295)"
        if kind == ast.MEMBER_STACK_LAST:
            stack_type = e.expr.type
            scratch = self.pc.scratch_header(stack_type.element)  # type: ignore[union-attr]
            return f"stack_last({self.ex(e.expr)}, {scratch})"
        if kind == ast.MEMBER_STACK_NEXT:
            stack_type = e.expr.type
            scratch = self.pc.scratch_header(stack_type.element)  # type: ignore[union-attr]
            stack = self.ex(e.expr)
            return f"stack_at({stack}, {stack}.nxt, {scratch})"
        if kind in (ast.MEMBER_HIT, ast.MEMBER_MISS):
            call = e.expr
            if not isinstance(call, ast.Call) or not isinstance(call.target, ast.TableApply):
                raise unsupported(e, "hit/miss of something other than a table apply")
            hit = self.table_apply(call, want_hit=True)
            return hit if kind == ast.MEMBER_HIT else f"(not {hit})"
        raise unsupported(e, f"member access .{e.member}")

    def _ex_Index(self, e: ast.Index) -> str:
        stack_type = e.expr.type
        if not isinstance(stack_type, t.HeaderStackType):
            raise unsupported(e, "indexing a non-stack value")
        stack = self.ex(e.expr)
        index_value = const_int(e.index.const_value)
        if index_value is not None and 0 <= index_value < stack_type.size:
            return f"{stack}.items[{index_value}]"
        scratch = self.pc.scratch_header(stack_type.element)
        return f"stack_at({stack}, {self.ex(e.index)}, {scratch})"

    def _ex_Slice(self, e: ast.Slice) -> str:
        hi, lo = e.hi_value, e.lo_value
        mask = (1 << (hi - lo + 1)) - 1
        base = self.ex(e.expr)
        if lo:
            return f"(({base} >> {lo}) & {mask})"
        return f"({base} & {mask})"

    def _ex_Unary(self, e: ast.Unary) -> str:
        operand = self.ex(e.operand)
        base = scalar_type(e.type)  # type: ignore[arg-type]
        if e.op == "!":
            return f"(not {operand})"
        if e.op == "+":
            return operand
        if e.op == "~":
            if isinstance(base, t.BitsType) and not base.signed:
                return f"({operand} ^ {(1 << base.width) - 1})"
            return f"(~{operand})"
        if e.op == "-":
            if isinstance(base, t.BitsType):
                return fit(f"-{operand}", base)
            return f"(-{operand})"
        raise unsupported(e, f"unary operator {e.op}")

    def _ex_Binary(self, e: ast.Binary) -> str:
        op = e.op
        if op in ("&&", "||"):
            left = self.ex(e.left)
            right, lines = self.capture(e.right)
            py = "and" if op == "&&" else "or"
            if not lines:
                return f"({left} {py} {right})"
            # the right operand has side effects (a table apply, a call): keep them
            # conditional, as P4's short-circuit evaluation requires
            tmp = self.fresh("c")
            self.w.line(f"{tmp} = {left}")
            with self.w.block(f"if {tmp}:" if op == "&&" else f"if not {tmp}:"):
                self.replay(lines)
                self.w.line(f"{tmp} = {right}")
            return tmp
        left_type = e.left.type
        if op in ("==", "!="):
            if left_type is not None and is_aggregate(left_type):
                eq = self.pc.types.eq(self.ex(e.left), self.ex(e.right), left_type)
                return eq if op == "==" else f"(not {eq})"
            return f"({self.ex(e.left)} {op} {self.ex(e.right)})"
        a = self.ex(e.left)
        if op in ("<", ">", "<=", ">="):
            return f"({a} {op} {self.ex(e.right)})"
        b = self.ex(e.right)
        result = scalar_type(e.type)  # type: ignore[arg-type]
        if op == "++":
            right_width = bit_width(e.right.type)  # type: ignore[arg-type]
            if right_width is None:
                raise unsupported(e, "concatenation of non bit-string values")
            ua = to_unsigned(a, e.left.type)  # type: ignore[arg-type]
            ub = to_unsigned(b, e.right.type)  # type: ignore[arg-type]
            return from_unsigned(f"(({ua} << {right_width}) | {ub})", result)
        if not isinstance(result, t.BitsType):
            # arbitrary-precision int (only in constant contexts the checker did not fold)
            py = {"/": "//"}.get(op, op)
            if op in ("|+|", "|-|"):
                py = op[1]
            return f"({a} {py} {b})"
        width = result.width
        mask = (1 << width) - 1
        signed = result.signed
        if op in ("+", "-", "*"):
            return fit(f"{a} {op} {b}", result)
        if op in ("&", "|", "^"):
            return f"({a} {op} {b})"
        if op == "|+|":
            if signed:
                half = 1 << (width - 1)
                return f"min(max({a} + {b}, {-half}), {half - 1})"
            return f"min({a} + {b}, {mask})"
        if op == "|-|":
            if signed:
                half = 1 << (width - 1)
                return f"min(max({a} - {b}, {-half}), {half - 1})"
            return f"max({a} - {b}, 0)"
        if op in ("/", "%"):
            divisor = const_int(e.right.const_value)
            if divisor and not signed:
                return f"({a} {'//' if op == '/' else '%'} {b})"
            helper = {
                ("/", False): "div_u",
                ("%", False): "mod_u",
                ("/", True): "div_s",
                ("%", True): "mod_s",
            }[(op, signed)]
            return fit(f"{helper}({a}, {b})", result) if signed else f"{helper}({a}, {b})"
        if op == "<<":
            amount = const_int(e.right.const_value)
            if amount is not None:
                if amount >= width:
                    return "0"
                return fit(f"{a} << {amount}", result)
            return f"({fit(f'{a} << {b}', result)} if {b} < {width} else 0)"
        if op == ">>":
            amount = const_int(e.right.const_value)
            if amount is not None and amount >= width:
                return "(-1 if " + a + " < 0 else 0)" if signed else "0"
            return f"({a} >> {b})"
        raise unsupported(e, f"binary operator {op}")

    def _ex_Ternary(self, e: ast.Ternary) -> str:
        if e.type is not None and is_aggregate(e.type):
            raise unsupported(e, "conditional expression of aggregate type")
        cond = self.ex(e.cond)
        then, then_lines = self.capture(e.then)
        otherwise, else_lines = self.capture(e.otherwise)
        if not then_lines and not else_lines:
            return f"({then} if {cond} else {otherwise})"
        tmp = self.fresh("c")
        with self.w.block(f"if {cond}:"):
            self.replay(then_lines)
            self.w.line(f"{tmp} = {then}")
        with self.w.block("else:"):
            self.replay(else_lines)
            self.w.line(f"{tmp} = {otherwise}")
        return tmp

    def capture(self, e: ast.Expr) -> tuple[str, list[str]]:
        """Compile ``e`` and return its code plus the statements it hoisted (not emitted)."""
        saved = self.w
        self.w = CodeWriter(saved.level)
        try:
            code = self.ex(e)
            return code, self.w.lines
        finally:
            self.w = saved

    def replay(self, lines: list[str]) -> None:
        """Re-emit captured lines one level deeper than where they were captured."""
        for text in lines:
            self.w.lines.append(("    " + text) if text else text)

    def _ex_Cast(self, e: ast.Cast) -> str:
        target = e.type
        source = e.expr.type
        value = self.ex(e.expr)
        if target is None or source is None:
            return value
        return self.cast(value, source, target, e)

    def cast(self, value: str, source: t.Type, target: t.Type, node: ast.Node) -> str:
        src = scalar_type(source)
        dst = scalar_type(target)
        if isinstance(dst, t.BoolType):
            if isinstance(src, t.BoolType):
                return value
            return f"({value} != 0)"
        if isinstance(dst, t.BitsType):
            if isinstance(src, t.BoolType):
                return f"(1 if {value} else 0)"
            if isinstance(src, t.BitsType):
                if src.signed == dst.signed and src.width <= dst.width:
                    return value
                if not src.signed and not dst.signed:
                    return f"({value} & {(1 << dst.width) - 1})"
                if not src.signed and dst.signed and src.width < dst.width:
                    return value
                return fit(value, dst)
            if isinstance(src, t.InfIntType):
                return fit(value, dst)
            if isinstance(src, (t.ErrorType, t.EnumType)):
                return fit(value, dst)
        if isinstance(dst, (t.InfIntType, t.EnumType, t.ErrorType)):
            return value
        if types_same(src, dst):
            return value
        if is_aggregate(target) and isinstance(source, t.TupleType):
            return value
        raise unsupported(node, f"cast from {source.describe()} to {target.describe()}")

    def _ex_Call(self, e: ast.Call) -> str:
        target = e.target
        if isinstance(target, ast.BuiltinMethodCall):
            if target.name == "isValid":
                return self.is_valid(target.object)
            if target.name in ("minSizeInBits", "minSizeInBytes") and e.const_value is not None:
                return literal(e.const_value, e.type)
            raise unsupported(e, f"{target.name}() used as a value")
        if isinstance(target, ast.FunctionCall):
            return self.call_function(e, target)
        if isinstance(target, ast.ExternMethodCall):
            from p4emu.backend import v1model_externs

            return v1model_externs.extern_method_value(self, e, target)
        if isinstance(target, ast.ExternFunctionCall):
            from p4emu.backend import v1model_externs

            return v1model_externs.extern_function_value(self, e, target)
        raise unsupported(e, "this call used as a value")

    def is_valid(self, obj: ast.Expr) -> str:
        type_ = obj.type
        code = self.ex(obj)
        if isinstance(type_, t.HeaderUnionType):
            return f"valid_{self.pc.types.cls(type_)}({code})"
        return f"{code}.valid_"

    def _ex_ListExpr(self, e: ast.ListExpr) -> str:
        type_ = e.type
        if type_ is not None and is_aggregate(type_):
            tmp = self.fresh("agg")
            self.w.line(f"{tmp} = {self.pc.types.new(type_)}")
            self.init_aggregate(tmp, type_, [(None, el) for el in e.elements], e)
            return tmp
        return "(" + "".join(self.ex(el) + ", " for el in e.elements) + ")"

    def _ex_StructExpr(self, e: ast.StructExpr) -> str:
        type_ = e.type
        if type_ is None or not is_aggregate(type_):
            raise unsupported(e, "structure expression without a struct/header type")
        tmp = self.fresh("agg")
        self.w.line(f"{tmp} = {self.pc.types.new(type_)}")
        self.init_aggregate(tmp, type_, [(f.name, f.value) for f in e.fields], e)
        return tmp

    def init_aggregate(
        self,
        target: str,
        type_: t.Type,
        elements: list[tuple[str | None, ast.Expr]],
        node: ast.Node,
    ) -> None:
        """Fill the existing aggregate object ``target`` from a list/struct expression."""
        if not isinstance(type_, t.StructLikeType):
            raise unsupported(node, f"initializer for {type_.describe()}")
        fields = type_.fields
        values: list[tuple[t.FieldInfo, ast.Expr]] = []
        for position, (name, value) in enumerate(elements):
            if name is None:
                if position >= len(fields):
                    raise compile_error(node, "too many initializer elements")
                info = fields[position]
            else:
                found = type_.field(name)
                if found is None:
                    raise compile_error(node, f"{type_.name} has no field {name}")
                info = found
            values.append((info, value))
        # evaluate everything first: the target may appear in the elements
        computed = []
        for info, value in values:
            if is_aggregate(info.type):
                computed.append((info, self.aggregate_value(value, info.type)))
            else:
                code = self.ex(value)
                if not _is_simple(code):
                    tmp = self.fresh("v")
                    self.w.line(f"{tmp} = {code}")
                    code = tmp
                computed.append((info, code))
        for info, code in computed:
            attr = f"{target}.{py_attr(info.name)}"
            self.w.line(self.pc.types.assign(attr, code, info.type))
        if isinstance(type_, t.HeaderType):
            self.w.line(f"{target}.valid_ = True")

    def aggregate_value(self, e: ast.Expr, type_: t.Type) -> str:
        """An object holding the value of aggregate expression ``e`` (may be a reference
        to an existing location; callers copy from it)."""
        if isinstance(e, (ast.ListExpr, ast.StructExpr)):
            return self.ex(e)
        if isinstance(e, ast.Cast):
            return self.aggregate_value(e.expr, type_)
        return self.ex(e)

    # ------------------------------------------------------------------ lvalues

    def assign(self, lhs: ast.Expr, rhs_code: str, type_: t.Type) -> None:
        """Store the (normalized) value ``rhs_code`` into the location ``lhs``."""
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
        for statement in statements:
            self.stmt(statement)

    def stmt(self, s: ast.Statement) -> None:
        method = getattr(self, "_st_" + type(s).__name__, None)
        if method is None:
            raise unsupported(s, f"statement {type(s).__name__}")
        method(s)

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

    def declare(self, decl: ast.Declaration) -> None:
        """A local variable or constant declaration."""
        init: ast.Expr | None
        if isinstance(decl, ast.ConstDecl):
            value = decl.const_value
            type_ = decl.type_ref.resolved
            if value is not None and type_ is not None and not is_aggregate(type_):
                self.scope.bind(decl, Binding("const", literal(value, type_), type_))
                return
            init = decl.value  # a constant the checker could not fold: compute it once
        elif isinstance(decl, ast.VariableDecl):
            init = decl.init
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
        if init is not None:
            self.w.line(f"{name} = {self.ex(init)}")
        else:
            self.w.line(f"{name} = {default_scalar(type_)}")
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
        self.assign(s.lhs, self.ex(s.rhs), type_)

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
        self.w.line("raise EXIT")

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
        if not _is_simple(value):
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
            from p4emu.backend import v1model_externs

            v1model_externs.extern_statement(self, call)
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

    # ------------------------------------------------------------------ calls

    def bind_params(
        self,
        params: list[ast.Parameter],
        bound: list[ast.BoundArg],
        scope: Scope,
        node: ast.Node,
        body: ast.Node | None = None,
    ) -> list[tuple[ast.Expr, str, t.Type]]:
        """Bind directional parameters of an inlined unit to its arguments.

        Returns the copy-back list ``(argument lvalue, local, type)`` for scalar
        ``out``/``inout`` parameters. An aggregate ``inout`` argument is bound by reference
        unless it may alias (:func:`aliased_params`; ``body`` is the unit's body): then it
        is copied in and copied out like a scalar, as BMv2 (p4c) does.
        """
        by_param = {id(b.param): b for b in bound}
        copy_back: list[tuple[ast.Expr, str, t.Type]] = []
        aliased = aliased_params(params, by_param, body)
        for param in params:
            arg = by_param.get(id(param))
            type_ = (arg.param_type if arg is not None else None) or param.type
            if type_ is None:
                raise compile_error(node, f"parameter {param.name} has no type")
            expr = arg.expr if arg is not None else None
            if expr is None:
                if param.default is not None:
                    expr = param.default
                elif param.direction != "out" and not param.is_optional:
                    # an omitted `out` or optional argument is simply left unbound
                    raise compile_error(node, f"missing argument for {param.name}")
            if isinstance(type_, t.ExternType) or (
                isinstance(type_, t.SpecializedType) and isinstance(type_.base, t.ExternType)
            ):
                # an extern object passed down (packet_in/out): same binding as the argument
                if isinstance(expr, ast.PathExpr):
                    outer = self.scope.lookup(expr.decl)
                    if outer is not None:
                        scope.bind(param, outer)
                        continue
                raise unsupported(node, f"extern argument {param.name}")
            if is_aggregate(type_):
                if param.direction == "out":
                    # out: a fresh (invalid / zero) object, copied to the argument after
                    local = self.fresh(param.name)
                    self.w.line(f"{local} = {self.pc.types.new(type_)}")
                    scope.bind(param, Binding("var", local, type_))
                    if expr is not None and not isinstance(expr, ast.DontCare):
                        copy_back.append((expr, local, type_))
                    continue
                if expr is None:
                    raise compile_error(node, f"missing argument for {param.name}")
                ref = self.aggregate_value(expr, type_)
                if id(param) in aliased:
                    local = self.fresh(param.name)
                    self.w.line(f"{local} = {self.pc.types.copy(ref, type_)}")
                    scope.bind(param, Binding("var", local, type_))
                    copy_back.append((expr, local, type_))
                    continue
                if param.direction in ("in", "") and not _is_simple(ref):
                    local = self.fresh(param.name)
                    self.w.line(f"{local} = {self.pc.types.copy(ref, type_)}")
                    ref = local
                elif not _is_simple(ref):
                    local = self.fresh(param.name)
                    self.w.line(f"{local} = {ref}")
                    ref = local
                scope.bind(param, Binding("var", ref, type_))
                continue
            local = self.fresh(param.name)
            if param.direction == "out":
                self.w.line(f"{local} = {default_scalar(type_)}")
            else:
                if expr is None or isinstance(expr, ast.DontCare):
                    self.w.line(f"{local} = {default_scalar(type_)}")
                else:
                    self.w.line(f"{local} = {self.ex(expr)}")
            scope.bind(param, Binding("var", local, type_))
            if (
                param.direction in ("out", "inout")
                and expr is not None
                and not isinstance(expr, ast.DontCare)
            ):
                copy_back.append((expr, local, type_))
        return copy_back

    def copy_back(self, copies: list[tuple[ast.Expr, str, t.Type]]) -> None:
        for target, local, type_ in copies:
            self.assign(target, local, type_)

    def run_unit(self, scope: Scope, body: ast.BlockStmt, copies: list) -> None:
        """Emit an inlined body (action / sub-control apply) in ``scope``."""
        saved = self.scope
        self.scope = scope
        try:
            if contains_return(body):
                self.returns.append(("break",))
                with self.w.block("for _ in ONCE:"):
                    self.stmts(body.statements)
                self.returns.pop()
            else:
                self.stmts(body.statements)
        finally:
            self.scope = saved
        self.copy_back(copies)

    def action_scope(self, action: ast.ActionDecl) -> Scope:
        """Scope an action body runs in: its block's scope, or the program's for top-level
        actions."""
        block_scope = self.pc.block_scope_of(action, self.scope)
        return block_scope.child()

    def inline_action_call(self, call: ast.Call, action: ast.ActionDecl) -> None:
        """A direct action call ``a(args)`` from a control body or another action."""
        scope = self.action_scope(action)
        by_param = {id(b.param): b for b in call.bound_args}
        directional = []
        bound_dir = []
        for param in action.params:
            arg = by_param.get(id(param))
            if param.is_directionless:
                if arg is None or arg.expr is None:
                    raise compile_error(call, f"missing argument for {param.name}")
                local = self.fresh(param.name)
                self.w.line(f"{local} = {self.ex(arg.expr)}")
                scope.bind(param, Binding("var", local, arg.param_type or param.type))
            else:
                directional.append(param)
                if arg is not None:
                    bound_dir.append(arg)
        copies = self.bind_params(directional, bound_dir, scope, call, action.body)
        self.run_unit(scope, action.body, copies)

    def inline_table_action(
        self,
        action: ast.ActionDecl,
        args_code: str,
        ref: ast.ActionRef | None,
        node: ast.Node,
    ) -> None:
        """An action run by a table: directionless params come from ``args_code`` (the
        entry's argument tuple), directional ones from the ``actions`` list entry."""
        scope = self.action_scope(action)
        cp_params = action.control_plane_params
        if cp_params:
            names = []
            for param in cp_params:
                names.append(self.fresh(param.name))
            self.w.line(f"{', '.join(names)}{',' if len(names) == 1 else ''} = {args_code}")
            for param, name in zip(cp_params, names):
                type_ = param.type
                if type_ is None:
                    raise compile_error(param, f"parameter {param.name} has no type")
                converted = from_unsigned(name, type_)
                if converted != name:
                    self.w.line(f"{name} = {converted}")
                scope.bind(param, Binding("var", name, type_))
        directional = action.directional_params
        copies: list = []
        if directional:
            bound = ref.bound_args if ref is not None else []
            copies = self.bind_params(
                directional, [b for b in bound if b.expr is not None], scope, node, action.body
            )
        self.run_unit(scope, action.body, copies)

    def call_function(
        self, call: ast.Call, target: ast.FunctionCall, statement: bool = False
    ) -> str:
        """Call of a P4 function; returns the value expression. Scalar ``out``/``inout``
        arguments come back in the result (see :func:`function_return`) and are written
        to their arguments after the call; aggregate ``out`` arguments get a fresh object
        copied to the argument after the call."""
        fn = target.function
        name, _ = self.pc.function(fn)
        by_param = {id(b.param): b for b in call.bound_args}
        args = ["ctx"]
        scalar_outs: list[tuple[ast.Expr | None, t.Type]] = []
        aggregate_outs: list[tuple[ast.Expr, str, t.Type]] = []
        for param in fn.params:
            arg = by_param.get(id(param))
            type_ = (arg.param_type if arg is not None else None) or param.type
            if type_ is None:
                raise compile_error(call, f"parameter {param.name} has no type")
            expr = arg.expr if arg is not None else None
            if expr is None and param.default is not None:
                expr = param.default
            if is_aggregate(type_):
                if param.direction == "out":
                    tmp = self.fresh(param.name)
                    self.w.line(f"{tmp} = {self.pc.types.new(type_)}")
                    args.append(tmp)
                    if expr is not None and not isinstance(expr, ast.DontCare):
                        aggregate_outs.append((expr, tmp, type_))
                elif expr is None:
                    args.append(self.pc.types.new(type_))
                elif param.direction == "inout":
                    args.append(self.aggregate_value(expr, type_))
                else:
                    args.append(self.pc.types.copy(self.aggregate_value(expr, type_), type_))
                continue
            if param.direction == "out" or expr is None or isinstance(expr, ast.DontCare):
                args.append(default_scalar(type_))
            else:
                args.append(self.ex(expr))
            if param.direction in ("out", "inout"):
                usable = expr if expr is not None and not isinstance(expr, ast.DontCare) else None
                scalar_outs.append((usable, type_))
        returns_value = not isinstance(fn.return_type.resolved, t.VoidType)
        invocation = f"{name}({', '.join(args)})"
        if not scalar_outs and not aggregate_outs:
            return invocation
        result = self.fresh("r")
        self.w.line(f"{result} = {invocation}")
        if returns_value:
            positions = [f"{result}[{i + 1}]" for i in range(len(scalar_outs))]
            value = f"{result}[0]" if scalar_outs else result
        elif len(scalar_outs) == 1:
            positions = [result]
            value = "None"
        else:
            positions = [f"{result}[{i}]" for i in range(len(scalar_outs))]
            value = "None"
        for (expr, type_), code in zip(scalar_outs, positions):
            if expr is not None:
                self.assign(expr, code, type_)
        for expr, tmp, type_ in aggregate_outs:
            self.assign(expr, tmp, type_)
        return "" if statement else value

    # ------------------------------------------------------------------ sub-controls

    def inline_subcontrol(self, call: ast.Call, target: ast.BlockApply) -> None:
        block = self.scope.block
        instance = self.pc.child_block(block, target)
        decl = instance.decl
        if not isinstance(decl, ast.ControlDecl):
            raise unsupported(call, "applying a parser from a control")
        scope = Scope(self.pc.global_scope, instance)
        self.pc.bind_constructor_params(scope, instance)
        copies = self.bind_params(decl.params, self.pc.apply_args(call, instance), scope, call)
        saved = self.scope
        self.scope = scope
        try:
            self.declare_locals(decl.locals)
        finally:
            self.scope = saved
        self.run_unit(scope, decl.body, copies)

    def declare_locals(self, locals_: list[ast.Declaration]) -> None:
        """Variables and constants declared among a control's locals (per packet)."""
        for decl in locals_:
            if isinstance(decl, (ast.VariableDecl, ast.ConstDecl)):
                self.declare(decl)

    # ------------------------------------------------------------------ tables

    def table_apply(
        self,
        call: ast.Call,
        *,
        want_hit: bool = False,
        switch: ast.SwitchStmt | None = None,
    ) -> str:
        """Generate a table application; returns the name of its ``hit`` variable."""
        from p4emu.backend.tables_codegen import emit_table_apply

        return emit_table_apply(self, call, want_hit=want_hit, switch=switch)

    # ------------------------------------------------------------------ field lists

    def field_list(self, data: ast.Expr) -> list[tuple[str, int | None, str | None]]:
        """Flatten a field-list argument (``{a, b}``, a struct/header value, one field) into
        ``(value code, width, validity code)`` triples, in order. ``width`` None marks a
        varbit field (``value`` is the ``(nbits, value)`` tuple); ``validity`` is the
        expression telling whether the field's header is valid (BMv2 skips fields of
        invalid headers), or None for fields that are always included."""
        out: list[tuple[str, int | None, str | None]] = []
        self._flatten(data, out)
        return out

    def _flatten(self, e: ast.Expr, out: list) -> None:
        type_ = e.type
        if isinstance(e, (ast.ListExpr,)):
            for element in e.elements:
                self._flatten(element, out)
            return
        if isinstance(e, ast.StructExpr):
            for f in e.fields:
                self._flatten(f.value, out)
            return
        if (
            type_ is not None
            and isinstance(type_, t.StructLikeType)
            and not isinstance(type_, t.HeaderUnionType)
        ):
            base = self.ex(e)
            if not _is_simple(base):
                tmp = self.fresh("fl")
                self.w.line(f"{tmp} = {base}")
                base = tmp
            validity = f"{base}.valid_" if isinstance(type_, t.HeaderType) else None
            self._flatten_object(base, type_, validity, out)
            return
        if type_ is not None and isinstance(scalar_type(type_), t.VarbitType):
            out.append((self.ex(e), None, self._validity_of(e)))
            return
        width = bit_width(type_) if type_ is not None else None
        if width is None:
            raise unsupported(
                e, f"field of type {type_.describe() if type_ else '?'} in a field list"
            )
        code = to_unsigned(self.ex(e), type_)  # type: ignore[arg-type]
        out.append((code, width, self._validity_of(e)))

    def _flatten_object(
        self, base: str, type_: t.StructLikeType, validity: str | None, out: list
    ) -> None:
        for info in type_.fields:
            code = f"{base}.{py_attr(info.name)}"
            ftype = info.type
            if isinstance(ftype, t.HeaderType):
                self._flatten_object(code, ftype, f"{code}.valid_", out)
            elif isinstance(ftype, t.StructType):
                self._flatten_object(code, ftype, validity, out)
            elif isinstance(ftype, t.HeaderStackType):
                for index in range(ftype.size):
                    item = f"{code}.items[{index}]"
                    self._flatten_object(item, ftype.element, f"{item}.valid_", out)  # type: ignore[arg-type]
            elif isinstance(scalar_type(ftype), t.VarbitType):
                out.append((code, None, validity))
            else:
                width = bit_width(ftype)
                if width is None:
                    raise CompileError(
                        f"field {info.name} of type {ftype.describe()} in a field list"
                    )
                out.append((to_unsigned(code, ftype), width, validity))

    def _validity_of(self, e: ast.Expr) -> str | None:
        """Validity expression of the header a field expression belongs to, if any."""
        if isinstance(e, ast.Member) and e.kind == ast.MEMBER_FIELD:
            base_type = e.expr.type
            if isinstance(base_type, t.HeaderType):
                return f"{self.ex(e.expr)}.valid_"
        return None

    def field_list_bytes(self, data: ast.Expr) -> str:
        """Expression: the bytes BMv2 builds from a field list (fields of invalid headers
        skipped, bits concatenated MSB first, zero-padded to a byte)."""
        fields = self.field_list(data)
        static = all(width is not None and validity is None for _, width, validity in fields)
        if static:
            total = sum(width for _, width, _ in fields)  # type: ignore[misc]
            if total == 0:
                return "b''"
            pad = -total & 7
            terms = []
            shift = total + pad
            for code, width, _ in fields:
                shift -= width  # type: ignore[operator]
                masked = code
                terms.append(f"({masked} << {shift})" if shift else masked)
            return f"({' | '.join(terms)}).to_bytes({(total + pad) // 8}, 'big')"
        acc = self.fresh("acc")
        nbits = self.fresh("nb")
        self.w.line(f"{acc} = 0")
        self.w.line(f"{nbits} = 0")
        # group consecutive fields with the same validity condition
        groups: list[tuple[str | None, list[tuple[str, int | None]]]] = []
        for code, width, validity in fields:
            if groups and groups[-1][0] == validity:
                groups[-1][1].append((code, width))
            else:
                groups.append((validity, [(code, width)]))
        for validity, members in groups:
            if validity is not None:
                ctx = self.w.block(f"if {validity}:")
                ctx.__enter__()
            for code, width in members:
                if width is None:
                    self.w.line(f"_vl, _vv = {code}")
                    self.w.line(f"{acc} = ({acc} << _vl) | _vv")
                    self.w.line(f"{nbits} += _vl")
                else:
                    self.w.line(f"{acc} = ({acc} << {width}) | {code}")
                    self.w.line(f"{nbits} += {width}")
            if validity is not None:
                ctx.__exit__(None, None, None)
        out = self.fresh("buf")
        self.w.line(f"_pad = -{nbits} & 7")
        self.w.line(f"{out} = ({acc} << _pad).to_bytes(({nbits} + _pad) >> 3, 'big')")
        return out


def function_return(value: str | None, outs: list[str], returns_value: bool) -> str:
    """The ``return`` statement of a generated P4 function: the value (if any) followed
    by the final values of its scalar out/inout parameters; a void function with a
    single such parameter returns it bare."""
    if returns_value:
        if not outs:
            return f"return {value}"
        return f"return ({value}, {', '.join(outs)},)"
    if not outs:
        return "return"
    if len(outs) == 1:
        return f"return {outs[0]}"
    return f"return ({', '.join(outs)},)"


def types_same(a: t.Type, b: t.Type) -> bool:
    return t.types_equal(a, b)


def _is_simple(code: str) -> bool:
    """True for a name or attribute chain (safe to evaluate several times)."""
    return code.replace(".", "").replace("_", "").isalnum() and not code[0].isdigit()


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
