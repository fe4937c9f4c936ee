"""Python code of P4 expressions (one method per node class, in a dispatch table),
casts, aggregate values and initializers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from p4emu.backend.body.core import BodyCore, is_simple, writes_state
from p4emu.backend.codewriter import CodeWriter, py_attr
from p4emu.backend.compile_helpers import (
    compile_error,
    const_int,
    fit,
    from_unsigned,
    literal,
    to_unsigned,
    unsupported,
)
from p4emu.backend.pytypes import (
    bit_width,
    holds_aggregate,
    is_aggregate,
    scalar_type,
)
from p4emu.backend.wide import (
    CONSTANT_PREFIX,
    HALF_BITS,
    MASK64,
    constant,
    constant_value,
    member_split,
    split_width,
)
from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.header_groups import leaf_paths

_KEYSET_FORMS = (ast.Mask, ast.Range, ast.DefaultExpr, ast.DontCare)


class ExpressionCode(BodyCore):
    """Expressions: a part of
    :class:`~p4emu.backend.body.BodyCompiler`."""

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
        handler = EXPRESSIONS.get(type(e))
        if handler is None:
            raise unsupported(e, f"expression {type(e).__name__}")
        return handler(self, e)

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
        if isinstance(e.type, t.HeaderGroupType):
            return self.group_read(e, e.type)
        if kind == ast.MEMBER_FIELD:
            base = self.ex(e.expr)
            attr = py_attr(e.member)
            if self.hoist is not None and is_aggregate(e.type):  # type: ignore[arg-type]
                cls = self.pc.types.cls(e.type)  # type: ignore[arg-type]
                local = self.hoist.local(base, attr, cls, self.fresh)
                if local is not None:
                    return local
            return f"{base}.{attr}"
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

    def group_leaves(
        self, e: ast.Member, group: t.HeaderGroupType
    ) -> tuple[str, list[tuple[str, str, t.FieldInfo]]]:
        """The header object holding struct-typed header field ``e`` and, per leaf in field
        order, ``(attribute chain in the struct value, attribute in the header, the
        header's field)``."""
        header = self.ex(e.expr)
        if not is_simple(header):
            local = self.fresh("hd")
            self.w.line(f"{local} = {header}")
            header = local
        leaves = []
        for path in leaf_paths(group.struct):
            name = ".".join((group.prefix, *path))
            info = group.header.field(name)
            assert info is not None, name
            leaves.append((".".join(py_attr(part) for part in path), py_attr(name), info))
        return header, leaves

    def group_read(self, e: ast.Member, group: t.HeaderGroupType) -> str:
        """A struct-typed header field used as a value (an argument, an element...): a new
        struct holding its leaves (read whatever the header's validity, as BMv2 does)."""
        header, leaves = self.group_leaves(e, group)
        value = self.fresh("grp")
        self.w.line(f"{value} = {self.pc.types.new(group.struct)}")
        for inner, attr, _ in leaves:
            self.w.line(f"{value}.{inner} = {header}.{attr}")
        return value

    def group_write(self, e: ast.Member, group: t.HeaderGroupType, value: str) -> None:
        """Store the struct value ``value`` into struct-typed header field ``e``, leaf by
        leaf (written whatever the header's validity, as BMv2 writes a field)."""
        if not is_simple(value):
            local = self.fresh("grp")
            self.w.line(f"{local} = {value}")
            value = local
        header, leaves = self.group_leaves(e, group)
        for inner, attr, _ in leaves:
            self.w.line(f"{header}.{attr} = {value}.{inner}")

    def _ex_Index(self, e: ast.Index) -> str:
        stack_type = e.expr.type
        if isinstance(stack_type, t.TupleType):  # a constant index (the checker's rule)
            return f"{self.ex(e.expr)}[{const_int(e.index.const_value)}]"
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
        if hi - lo < HALF_BITS and e.expr.type is not None and split_width(e.expr.type):
            narrow = self.narrow_from_halves(e.expr, lo, hi - lo + 1)
            if narrow is not None:
                return narrow
        mask = (1 << (hi - lo + 1)) - 1
        base = self.ex(e.expr)
        source = scalar_type(e.expr.type) if e.expr.type is not None else None
        if isinstance(source, t.BitsType) and not source.signed and hi == source.width - 1:
            # the slice's top bit is the value's (every bit<W> value the generated code
            # holds is below 2**W, as p4emu.backend.cfields assumes too): the shift alone
            # leaves the slice, one Python int operation less on a wide value
            return f"({base} >> {lo})" if lo else base
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
        if isinstance(left_type, t.HeaderGroupType):  # compared as a struct value
            left_type = left_type.struct
        if (
            op in ("==", "!=", "<", ">", "<=", ">=")
            and left_type is not None
            and e.right.type is not None
            and split_width(left_type)
            and split_width(e.right.type)
        ):
            compared = self.compare_halves(e)  # on the halves of two wide values
            if compared is not None:
                return compared
        a, b = self.in_order([e.left, e.right])
        if op in ("==", "!="):
            if left_type is not None and (is_aggregate(left_type) or holds_aggregate(left_type)):
                eq = self.value_eq(a, b, left_type)
                return eq if op == "==" else f"(not {eq})"
            return f"({a} {op} {b})"
        if op in ("<", ">", "<=", ">="):
            return f"({a} {op} {b})"
        result = scalar_type(e.type)  # type: ignore[arg-type]
        if op == "++":
            right_width = bit_width(e.right.type)  # type: ignore[arg-type]
            if right_width is None:
                raise unsupported(e, "concatenation of non bit-string values")
            ua = to_unsigned(a, e.left.type)  # type: ignore[arg-type]
            if const_int(e.right.const_value) == 0:  # ``x ++ 16w0``: no ``| 0``
                return from_unsigned(f"({ua} << {right_width})", result)
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

    def value_eq(self, left: str, right: str, type_: t.Type) -> str:
        """``left == right`` of ``type_``; a tuple holding structs (or headers...) element
        by element, since their objects compare by identity in Python."""
        if not holds_aggregate(type_):
            return self.pc.types.eq(left, right, type_)
        assert isinstance(type_, t.TupleType)
        sides = []
        for code in (left, right):
            if not is_simple(code):
                local = self.fresh("tp")
                self.w.line(f"{local} = {code}")
                code = local
            sides.append(code)
        parts = [
            self.value_eq(f"{sides[0]}[{index}]", f"{sides[1]}[{index}]", element)
            for index, element in enumerate(type_.elements)
        ]
        return "(" + " and ".join(parts) + ")"

    def _ex_Ternary(self, e: ast.Ternary) -> str:
        if e.type is not None and is_aggregate(e.type):
            return self.aggregate_ternary(e, e.type)
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

    def aggregate_ternary(self, e: ast.Ternary, type_: t.Type) -> str:
        """``c ? a : b`` of a struct (or header...) type: a new value assigned the branch
        the condition chooses (only that branch is evaluated)."""
        cond = self.ex(e.cond)
        value = self.fresh("c")
        self.w.line(f"{value} = {self.pc.types.new(type_)}")
        for header, branch in ((f"if {cond}:", e.then), ("else:", e.otherwise)):
            with self.w.block(header):
                self.w.line(self.pc.types.assign(value, self.aggregate_value(branch, type_), type_))
        return value

    def in_order(self, exprs: list[ast.Expr]) -> list[str]:
        """Codes of ``exprs`` evaluated left to right: before one that may write state (a
        call with ``out``/``inout`` arguments, a table apply) is compiled, the values of
        those before it are held in locals, so its writes do not show in them."""
        codes: list[str] = []
        for e in exprs:
            if codes and writes_state(e):
                codes = [self.hold(code, done.type) for code, done in zip(codes, exprs)]
            codes.append(self.ex(e))
        return codes

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
        if target is not None and source is not None and split_width(source):
            narrow_type = scalar_type(target)
            if (
                isinstance(narrow_type, t.BitsType)
                and not narrow_type.signed
                and narrow_type.width <= HALF_BITS
            ):
                narrow = self.narrow_from_halves(e.expr, 0, narrow_type.width)
                if narrow is not None:
                    return narrow
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
            return self.emitters.extern_method_value(self, e, target)
        if isinstance(target, ast.ExternFunctionCall):
            return self.emitters.extern_function_value(self, e, target)
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
        return "(" + "".join(code + ", " for code in self.in_order(e.elements)) + ")"

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
        computed: list[tuple[t.FieldInfo, str]] = []
        for info, value in values:
            if computed and writes_state(value):
                computed = [(done, self.hold(code, done.type)) for done, code in computed]
            if is_aggregate(info.type):
                computed.append((info, self.aggregate_value(value, info.type)))
            else:
                code = self.ex(value)
                if not is_simple(code):
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

    # ------------------------------------------------------------------ wide halves

    def wide_constant(self, value: int) -> str:
        code = constant(value)
        if code.startswith(CONSTANT_PREFIX):
            self.pc.wide_constants.add(code)
        return code

    def wide_half(self, value: int) -> Half:
        return self.wide_constant(value), value.bit_length()

    def halves(self, e: ast.Expr) -> Pair | None:
        """The two halves of ``e``, an unsigned ``bit<W>`` expression with ``64 < W <=
        128``, computed on halves (C ``unsigned long long`` values in the native build,
        where proven); None when ``e`` is not lowered (it is computed as a Python
        ``int``). Only expressions that write no statement are lowered (each half's code
        may repeat an operand's)."""
        width = split_width(e.type) if e.type is not None else None
        if width is None:
            return None
        saved = self.w
        self.w = CodeWriter(saved.level)
        try:
            found = self._halves(e, width)
            wrote = bool(self.w.lines)
        finally:
            self.w = saved
        if wrote or found is None or max(len(found[0][0]), len(found[1][0])) > MAX_HALF_CODE:
            return None
        return found

    def _halves(self, e: ast.Expr, width: int) -> Pair | None:
        value = const_int(e.const_value)
        if value is not None:
            value &= (1 << width) - 1
            return self.wide_half(value >> HALF_BITS), self.wide_half(value & MASK64)
        c = self.wide_constant
        if isinstance(e, ast.Member) and e.kind == ast.MEMBER_FIELD:
            split = member_split(e)
            if split is None:
                return None
            base = self.ex(e.expr)
            if not is_simple(base):
                return None
            return (f"{base}.{split.hi}", split.hi_bits), (f"{base}.{split.lo}", HALF_BITS)
        if isinstance(e, ast.Cast):
            return self.narrow_halves(e.expr, width)
        if isinstance(e, ast.Unary) and e.op == "~":
            pair = self.halves(e.operand)
            if pair is None:
                return None
            ones = self.wide_half((1 << (width - HALF_BITS)) - 1), self.wide_half(MASK64)
            return pair_bitwise(pair, ones, "^")
        if isinstance(e, ast.Slice):
            pair = self.halves(e.expr)
            if pair is None:
                return None
            hi, lo = pair_shr(pair, e.lo_value, c)
            return half_mask(hi, width - HALF_BITS, c), lo
        if not isinstance(e, ast.Binary):
            return None
        op = e.op
        if op in ("&", "|", "^"):
            a, b = self.halves(e.left), self.halves(e.right)
            if a is None or b is None:
                return None
            return pair_bitwise(a, b, op)
        if op in (">>", "<<"):
            amount = const_int(e.right.const_value)
            pair = self.halves(e.left)
            if amount is None or amount < 0 or pair is None:
                return None
            if amount >= width:
                return ZERO, ZERO
            return pair_shr(pair, amount, c) if op == ">>" else pair_shl(pair, amount, width, c)
        if op == "++":
            right_width = bit_width(e.right.type)  # type: ignore[arg-type]
            if right_width is None or right_width >= width:
                return None
            left = self.narrow_halves(e.left, width)
            right = self.narrow_halves(e.right, width)
            if left is None or right is None:
                return None
            return pair_bitwise(pair_shl(left, right_width, width, c), right, "|")
        return None

    def narrow_halves(self, e: ast.Expr, width: int) -> Pair | None:
        """The halves of unsigned ``e`` as a ``bit<width>`` value: a value of at most 64
        bits is its low half (``bool``: 0 or 1), a wide one its halves truncated."""
        source = scalar_type(e.type) if e.type is not None else None
        if isinstance(source, t.BoolType):
            return ZERO, (f"(1 if {self.ex(e)} else 0)", 1)
        if not isinstance(source, t.BitsType) or source.signed:
            return None
        if source.width <= HALF_BITS:
            value = const_int(e.const_value)
            if value is not None:
                return ZERO, self.wide_half(value)
            return ZERO, (self.ex(e), source.width)
        pair = self.halves(e)
        if pair is None:
            return None
        if source.width <= width:
            return pair
        if width <= HALF_BITS:
            return ZERO, half_mask(pair[1], width, self.wide_constant)
        return half_mask(pair[0], width - HALF_BITS, self.wide_constant), pair[1]

    def narrow_from_halves(self, e: ast.Expr, lo_bit: int, bits: int) -> str | None:
        """Bits ``lo_bit`` to ``lo_bit + bits - 1`` (``bits <= 64``) of wide ``e``, from
        its halves; None when ``e`` is not lowered."""
        pair = self.halves(e)
        if pair is None:
            return None
        c = self.wide_constant
        return half_mask(pair_shr(pair, lo_bit, c)[1], bits, c)[0]

    def compare_halves(self, e: ast.Binary) -> str | None:
        """A comparison of two wide values on their halves (the high ones first)."""
        a, b = self.halves(e.left), self.halves(e.right)
        if a is None or b is None:
            return None
        (ah, _), (al, _) = a
        (bh, _), (bl, _) = b
        if e.op == "==":
            return f"({ah} == {bh} and {al} == {bl})"
        if e.op == "!=":
            return f"({ah} != {bh} or {al} != {bl})"
        strict = e.op[0]
        return f"({ah} {strict} {bh} or ({ah} == {bh} and {al} {e.op} {bl}))"


# expression class -> the method generating its code (classes of the AST are final: exact-type
# lookup)
EXPRESSIONS: dict[type, Callable[[Any, Any], str]] = {
    ast.IntLiteral: ExpressionCode._ex_IntLiteral,
    ast.BoolLiteral: ExpressionCode._ex_BoolLiteral,
    ast.StringLiteral: ExpressionCode._ex_StringLiteral,
    ast.PathExpr: ExpressionCode._ex_PathExpr,
    ast.Member: ExpressionCode._ex_Member,
    ast.Index: ExpressionCode._ex_Index,
    ast.Slice: ExpressionCode._ex_Slice,
    ast.Unary: ExpressionCode._ex_Unary,
    ast.Binary: ExpressionCode._ex_Binary,
    ast.Ternary: ExpressionCode._ex_Ternary,
    ast.Cast: ExpressionCode._ex_Cast,
    ast.Call: ExpressionCode._ex_Call,
    ast.ListExpr: ExpressionCode._ex_ListExpr,
    ast.StructExpr: ExpressionCode._ex_StructExpr,
}


def types_same(a: t.Type, b: t.Type) -> bool:
    return t.types_equal(a, b)


# --- wide fields as two halves (p4emu.backend.wide) -------------------------------------
#: the longest code of a half the lowering builds (a longer one is computed on Python
#: ``int`` values instead: each half's code may repeat its operands')
MAX_HALF_CODE = 600

#: a half: its code and a bound of its bits (its value is below ``2**bits``)
Half = tuple[str, int]
Pair = tuple[Half, Half]
ZERO: Half = ("0", 0)


def half_mask(half: Half, bits: int, constant: Callable[[int], str]) -> Half:
    """``half`` reduced to its low ``bits`` bits (nothing to do when it has no more)."""
    code, known = half
    if bits <= 0:
        return ZERO
    if known <= bits:
        return half
    return f"({code} & {constant((1 << bits) - 1)})", bits


def half_shr(half: Half, n: int) -> Half:
    code, known = half
    if n == 0:
        return half
    if n >= known:
        return ZERO
    return f"({code} >> {n})", known - n


def half_shl(half: Half, n: int) -> Half:
    """``half << n``: the caller masked it to at most ``64 - n`` bits (no bit is lost)."""
    code, known = half
    if known == 0:
        return ZERO
    assert known + n <= HALF_BITS, (code, known, n)
    return (f"({code} << {n})" if n else code), known + n


def half_constant(half: Half) -> int | None:
    """The value of a constant half (a literal, or a constant's name), else None."""
    code = half[0]
    return int(code) if code.isdigit() else constant_value(code)


def half_op(a: Half, b: Half, op: str) -> Half:
    if op == "&":
        if 0 in (a[1], b[1]):
            return ZERO
        for x, y in ((a, b), (b, a)):
            if half_constant(y) == (1 << y[1]) - 1 and x[1] <= y[1]:
                return x  # a mask keeping every bit ``x`` may have
        return f"({a[0]} & {b[0]})", min(a[1], b[1])
    if a[1] == 0:
        return b
    if b[1] == 0:
        return a
    return f"({a[0]} {op} {b[0]})", max(a[1], b[1])


def pair_shr(pair: Pair, n: int, constant: Callable[[int], str]) -> Pair:
    """``(hi, lo) >> n`` (``0 <= n < 128``): no bit leaves 64 bits."""
    hi, lo = pair
    if n == 0:
        return pair
    if n >= HALF_BITS:
        return ZERO, half_shr(hi, n - HALF_BITS)
    top = half_shl(half_mask(hi, n, constant), HALF_BITS - n)
    return half_shr(hi, n), half_op(top, half_shr(lo, n), "|")


def pair_shl(pair: Pair, n: int, width: int, constant: Callable[[int], str]) -> Pair:
    """``((hi, lo) << n) mod 2**width`` (``0 <= n < width <= 128``): each half masked
    before it is shifted, so no C shift loses a bit a Python one would keep."""
    hi, lo = pair
    hi_bits = width - HALF_BITS
    if n == 0:
        return pair
    if n >= HALF_BITS:
        return half_shl(half_mask(lo, width - n, constant), n - HALF_BITS), ZERO
    kept = half_shl(half_mask(hi, hi_bits - n, constant), n)
    carried = half_mask(half_shr(lo, HALF_BITS - n), hi_bits, constant)
    return half_op(kept, carried, "|"), half_shl(half_mask(lo, HALF_BITS - n, constant), n)


def pair_bitwise(a: Pair, b: Pair, op: str) -> Pair:
    return half_op(a[0], b[0], op), half_op(a[1], b[1], op)
