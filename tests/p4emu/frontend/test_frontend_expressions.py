"""Expression typing, implicit casts and constant folding."""

from __future__ import annotations

import pytest
from frontend_helpers import check_v1, nodes, probe, v1_error

from p4emu.frontend import ast
from p4emu.frontend import types as t

BIT8 = t.BitsType(8)
BIT16 = t.BitsType(16)
BIT32 = t.BitsType(32)


@pytest.mark.parametrize(
    ("expr", "type_", "value"),
    [
        ("8w5", BIT8, 5),
        ("8s-1", t.BitsType(8, True), -1),
        ("8w255 + 8w1", BIT8, 0),
        ("8w3 - 8w5", BIT8, 254),
        ("8w16 * 8w17", BIT8, 16),
        ("8w200 |+| 8w100", BIT8, 255),
        ("8w5 |-| 8w10", BIT8, 0),
        ("8s100 |+| 8s100", t.BitsType(8, True), 127),
        ("8w0xF0 & 8w0x3C", BIT8, 0x30),
        ("8w0xF0 | 8w0x0F", BIT8, 0xFF),
        ("8w0xFF ^ 8w0x0F", BIT8, 0xF0),
        ("~8w0", BIT8, 255),
        ("-8w1", BIT8, 255),
        ("8w1 << 7", BIT8, 128),
        ("8w1 << 8", BIT8, 0),
        ("8w128 >> 7", BIT8, 1),
        ("8s-128 >> 7", t.BitsType(8, True), -1),
        ("8w0xAB ++ 4w0xC", t.BitsType(12), 0xABC),
        ("16w0xABCD[11:4]", BIT8, 0xBC),
        ("(bit<4>)8w0xAB", t.BitsType(4), 0xB),
        ("(int<8>)8w255", t.BitsType(8, True), -1),
        ("(bit<8>)8s-2", BIT8, 254),
        ("(bit<1>)true", t.BitsType(1), 1),
        ("(bool)1w1", t.BoolType(), True),
        ("8w7 / 8w2", BIT8, 3),
        ("8w7 % 8w2", BIT8, 1),
        ("true && !false", t.BoolType(), True),
        ("8w1 == 8w1", t.BoolType(), True),
        ("8w1 != 1", t.BoolType(), False),
        ("16w300 > 255", t.BoolType(), True),
        ("true ? 8w1 : 8w2", BIT8, 1),
    ],
)
def test_constant_expressions(expr: str, type_: t.Type, value: object) -> None:
    node = probe(expr)
    assert node.type == type_
    assert node.const_value == value


def test_untyped_literal_takes_width_of_other_operand() -> None:
    node = probe("hdr.h.b + 1")
    assert isinstance(node, ast.Binary)
    assert node.type == BIT16
    assert node.right.type == BIT16 and node.right.const_value == 1
    assert node.const_value is None


def test_int_arithmetic_is_arbitrary_precision() -> None:
    node = probe("(bit<8>)(1 << 70 >> 68)")
    assert isinstance(node, ast.Cast)
    assert node.expr.type == t.InfIntType() and node.expr.const_value == 4
    assert node.const_value == 4


def test_constant_references_fold() -> None:
    node = probe("K * 2 + W", decls="const bit<16> K = 5; const int W = 3;")
    assert node.type == BIT16 and node.const_value == 13


def test_field_and_slice_types() -> None:
    node = probe("hdr.h.c[31:24]")
    assert isinstance(node, ast.Slice)
    assert node.type == BIT8 and (node.hi_value, node.lo_value) == (31, 24)
    assert isinstance(node.expr, ast.Member) and node.expr.kind == ast.MEMBER_FIELD
    assert isinstance(node.expr.resolved, t.FieldInfo) and node.expr.resolved.offset_bits == 24


def test_concatenation_of_fields() -> None:
    node = probe("hdr.h.a ++ hdr.h.b")
    assert node.type == t.BitsType(24)


def test_comparison_and_logic_types() -> None:
    node = probe("hdr.h.a < 3 && (hdr.h.isValid() || meta.flag)")
    assert node.type == t.BoolType()
    assert isinstance(node, ast.Binary) and node.left.type == t.BoolType()


def test_is_valid_call_target() -> None:
    node = probe("hdr.h.isValid()")
    assert isinstance(node, ast.Call)
    assert isinstance(node.target, ast.BuiltinMethodCall) and node.target.name == "isValid"
    assert node.type == t.BoolType()


@pytest.mark.parametrize(
    ("expr", "value"),
    [("hdr.h.minSizeInBits()", 56), ("hdr.h.minSizeInBytes()", 7), ("h_t.minSizeInBits()", 56)],
)
def test_min_size_methods(expr: str, value: int) -> None:
    node = probe(f"(bit<32>){expr}")
    assert isinstance(node, ast.Cast) and isinstance(node.expr, ast.Call)
    assert node.expr.type == t.InfIntType() and node.expr.const_value == value
    assert isinstance(node.expr.target, ast.BuiltinMethodCall)


def test_serializable_enum_compares_with_underlying_type() -> None:
    checked = check_v1(
        decls="enum bit<16> Ty { A = 0x800, B = 0x86dd }",
        ingress="if (hdr.h.b == Ty.A) { meta.y = Ty.B; }",
    )
    ifs = nodes(checked.ingress.decl.body, ast.IfStmt)
    cond = ifs[0].cond
    assert isinstance(cond, ast.Binary)
    assert isinstance(cond.right, ast.Cast) and cond.right.implicit
    assert cond.right.type == BIT16 and cond.right.const_value == 0x800
    assign = nodes(checked.ingress.decl.body, ast.AssignStmt)[0]
    assert isinstance(assign.rhs, ast.Cast) and assign.rhs.const_value == 0x86DD


def test_enum_member_resolution() -> None:
    node = probe("En.Two", decls="enum En { One, Two }")
    assert isinstance(node, ast.Member) and node.kind == ast.MEMBER_ENUM
    member = node.resolved
    assert isinstance(member, t.EnumMemberInfo) and member.index == 1 and member.value is None
    assert node.const_value is member


def test_error_member_resolution() -> None:
    node = probe("error.PacketTooShort")
    assert isinstance(node, ast.Member) and node.kind == ast.MEMBER_ERROR
    assert isinstance(node.resolved, t.ErrorMember) and node.resolved.code == 1


def test_struct_initializers_are_typed_by_target() -> None:
    checked = check_v1(
        decls="struct pair_t { bit<8> a; bit<16> b; }",
        meta="pair_t p;",
        ingress="meta.p = { b = 2, a = 1 };\n meta.p = {3, 4};",
    )
    first, second = nodes(checked.ingress.decl.body, ast.AssignStmt)
    assert isinstance(first.rhs, ast.StructExpr) and first.rhs.type is checked.types["pair_t"]
    assert [f.value.type for f in first.rhs.fields] == [BIT16, BIT8]
    assert isinstance(second.rhs, ast.ListExpr) and second.rhs.type is checked.types["pair_t"]
    assert second.rhs.const_value == (3, 4)


def test_list_expression_without_context_is_a_tuple() -> None:
    node = probe("{hdr.h.a, 16w1}")
    assert node.type == t.TupleType((BIT8, BIT16))


def test_ternary_with_literal_branch() -> None:
    node = probe("meta.flag ? hdr.h.a : 0")
    assert node.type == BIT8
    assert isinstance(node, ast.Ternary) and node.otherwise.type == BIT8


def test_implicit_cast_on_assignment_truncates_with_warning() -> None:
    checked = check_v1(ingress="meta.x = 300;")
    assign = nodes(checked.ingress.decl.body, ast.AssignStmt)[0]
    assert assign.rhs.type == BIT8 and assign.rhs.const_value == 44
    assert any("does not fit in bit<8>" in w for w in checked.warnings)


def test_path_resolution_to_declarations() -> None:
    checked = check_v1(ingress_locals="bit<8> tmp;", ingress="tmp = hdr.h.a; meta.x = tmp;")
    paths = {p.name: p.decl for p in nodes(checked.ingress.decl.body, ast.PathExpr)}
    assert isinstance(paths["tmp"], ast.VariableDecl)
    assert isinstance(paths["hdr"], ast.Parameter) and paths["hdr"].direction == "inout"


def test_newtype_needs_casts() -> None:
    node = probe("(bit<32>)((id_t)5)", decls="type bit<32> id_t;")
    assert node.type == BIT32 and node.const_value == 5
    error = v1_error(decls="type bit<32> id_t;", meta="id_t t;", ingress="meta.z = meta.t;")
    assert "cannot assign a value of type id_t to a target of type bit<32>" in error.message


def test_stack_members() -> None:
    checked = check_v1(
        headers="h_t[3] hs;",
        states="state start { pkt.extract(hdr.hs.next); meta.z = hdr.hs.lastIndex; transition accept; }",
        ingress="meta.z = hdr.hs.size; hdr.hs[1].a = 1; hdr.hs.push_front(2);",
    )
    members = {m.member: m for m in nodes(checked.program, ast.Member)}
    assert (
        members["lastIndex"].kind == ast.MEMBER_STACK_LAST_INDEX
        and members["lastIndex"].type == BIT32
    )
    assert members["size"].const_value == 3
    index = nodes(checked.ingress.decl.body, ast.Index)[0]
    assert index.type is checked.types["h_t"] and index.index.type == BIT32
    push = [
        c
        for c in nodes(checked.ingress.decl.body, ast.Call)
        if isinstance(c.target, ast.BuiltinMethodCall)
    ]
    assert push[0].target.name == "push_front"


def test_functions_are_checked_and_called() -> None:
    checked = check_v1(
        decls="bit<8> inc(in bit<8> v) { return v + 1; }",
        ingress="meta.x = inc(hdr.h.a);",
    )
    call = nodes(checked.ingress.decl.body, ast.Call)[0]
    assert isinstance(call.target, ast.FunctionCall) and call.target.function.name == "inc"
    assert call.type == BIT8
    assert call.bound_args[0].param.name == "v" and call.bound_args[0].direction == "in"


def test_named_arguments_are_bound_by_parameter() -> None:
    checked = check_v1(
        decls="bit<8> sub(in bit<8> a, in bit<8> b) { return a - b; }",
        ingress="meta.x = sub(b = 1, a = hdr.h.a);",
    )
    call = nodes(checked.ingress.decl.body, ast.Call)[0]
    assert [b.param.name for b in call.bound_args] == ["a", "b"]
    assert isinstance(call.bound_args[0].expr, ast.Member)


@pytest.mark.parametrize(
    ("expr", "value"),
    [
        ("false && meta.flag", False),
        ("true || meta.flag", True),
        ("meta.flag && false", None),
        ("true && meta.flag", None),
        ("false || true", True),
    ],
)
def test_logical_folding_respects_short_circuit(expr: str, value: object) -> None:
    assert probe(expr).const_value is value


def test_dont_care_out_argument() -> None:
    checked = check_v1(ingress_locals="register<bit<8>>(4) r;", ingress="r.read(_, 0);")
    call = nodes(checked.ingress.decl.body, ast.Call)[0]
    assert isinstance(call.bound_args[0].expr, ast.DontCare)
    assert call.bound_args[0].expr.type == BIT8
