"""Parser: the AST shape of each construct (no type checking involved)."""

from __future__ import annotations

from p4emu.frontend import ast, parse_program_text


def parse(source: str) -> ast.Program:
    program, _, _ = parse_program_text(source, "p.p4")
    return program


def decl(source: str) -> ast.Declaration:
    return parse(source).declarations[-1]


def control_body(statements: str, locals_: str = "", prelude: str = "") -> ast.ControlDecl:
    result = decl(
        f"{prelude}\nheader h_t {{ bit<8> a; }}\ncontrol C(inout h_t h) {{ {locals_} apply {{ {statements} }} }}"
    )
    assert isinstance(result, ast.ControlDecl)
    return result


def first_expr(text: str, prelude: str = "") -> ast.Expr:
    control = control_body(f"x = {text};", prelude=prelude)
    statement = control.body.statements[0]
    assert isinstance(statement, ast.AssignStmt)
    return statement.rhs


def test_header_struct_union_typedef_type() -> None:
    program = parse(
        """
        typedef bit<48> mac_t;
        type bit<32> id_t;
        header eth_t { mac_t dst; @name("s") mac_t src; bit<16> type; }
        header_union u_t { eth_t e; }
        struct s_t { eth_t[4] stack; tuple<bit<8>, bool> pair; varbit<64> v; }
        """
    )
    kinds = [type(d).__name__ for d in program.declarations]
    assert kinds == ["TypedefDecl", "NewTypeDecl", "HeaderDecl", "HeaderUnionDecl", "StructDecl"]
    header = program.declarations[2]
    assert isinstance(header, ast.HeaderDecl)
    assert [f.name for f in header.fields] == ["dst", "src", "type"]
    assert header.fields[1].annotations[0].string_arg() == "s"
    struct = program.declarations[4]
    assert isinstance(struct, ast.StructDecl)
    assert isinstance(struct.fields[0].type_ref, ast.StackTypeRef)
    assert isinstance(struct.fields[1].type_ref, ast.TupleTypeRef)
    assert isinstance(struct.fields[2].type_ref, ast.VarbitTypeRef)


def test_enums_error_match_kind() -> None:
    program = parse(
        "enum E { A, B }\nenum bit<8> S { X = 1, Y = 2, }\nerror { Oops }\nmatch_kind { fancy }"
    )
    plain, serializable, errors, kinds = program.declarations
    assert isinstance(plain, ast.EnumDecl) and plain.underlying is None
    assert [m.name for m in plain.members] == ["A", "B"]
    assert isinstance(serializable, ast.EnumDecl) and isinstance(
        serializable.underlying, ast.BitTypeRef
    )
    assert isinstance(errors, ast.ErrorDecl) and errors.members[0].name == "Oops"
    assert isinstance(kinds, ast.MatchKindDecl) and kinds.members[0].name == "fancy"


def test_extern_object_and_functions() -> None:
    program = parse(
        """
        extern Reg<T> { Reg(bit<32> size); T read(in bit<32> i); void write<U>(in U v); }
        extern void f<T>(in T x);
        extern T g<T>();
        """
    )
    extern, function, generic = program.declarations
    assert isinstance(extern, ast.ExternDecl)
    assert [m.name for m in extern.methods] == ["Reg", "read", "write"]
    assert extern.methods[0].is_constructor
    assert [p.name for p in extern.methods[2].type_params] == ["U"]
    assert isinstance(function, ast.ExternFunctionDecl) and function.type_params[0].name == "T"
    assert isinstance(generic, ast.ExternFunctionDecl) and isinstance(
        generic.return_type, ast.NamedTypeRef
    )


def test_parser_states_and_select() -> None:
    parser = decl(
        """
        header h_t { bit<8> a; bit<8> b; }
        parser P(packet_in p, out h_t h) {
            value_set<bit<8>>(4) vs;
            state start {
                p.extract(h);
                transition select(h.a, h.b) {
                    (1, 2): next;
                    (0x10 &&& 0xf0, _): accept;
                    (1 .. 5, default): reject;
                    vs: accept;
                    default: reject;
                }
            }
            state next { transition accept; }
        }
        """
    )
    assert isinstance(parser, ast.ParserDecl)
    assert isinstance(parser.locals[0], ast.ValueSetDecl)
    start = parser.states[0]
    assert start.transition is not None and start.transition.select is not None
    keysets = [case.keyset for case in start.transition.cases]
    assert isinstance(keysets[0], ast.TupleKeyset)
    assert isinstance(keysets[1], ast.TupleKeyset)
    assert isinstance(keysets[1].elements[0], ast.Mask) and isinstance(
        keysets[1].elements[1], ast.DontCare
    )
    assert isinstance(keysets[2].elements[0], ast.Range) and isinstance(
        keysets[2].elements[1], ast.DefaultExpr
    )
    assert isinstance(keysets[3], ast.PathExpr)
    assert isinstance(keysets[4], ast.DefaultExpr)
    assert parser.states[1].transition is not None and parser.states[1].transition.state == "accept"


def test_control_table_properties() -> None:
    control = control_body(
        "t.apply();",
        locals_="""
        action a(bit<8> v) { h.a = v; }
        table t {
            key = { h.a : exact @name("k"); h.a : lpm; }
            actions = { a; @defaultonly NoAction; }
            const default_action = NoAction();
            size = 64;
            counters = direct_counter(CounterType.packets);
            const entries = {
                priority = 5: (1, 2) : a(3);
                (_, 0 &&& 0) : NoAction();
            }
            custom_prop = 7;
        }
        """,
        prelude="#include <v1model.p4>",
    )
    table = control.locals[1]
    assert isinstance(table, ast.TableDecl)
    names = [p.name for p in table.properties]
    assert names == [
        "key",
        "actions",
        "default_action",
        "size",
        "counters",
        "entries",
        "custom_prop",
    ]
    keys = table.properties[0].value
    assert [k.match_kind for k in keys] == ["exact", "lpm"]
    assert keys[0].annotations[0].string_arg() == "k"
    actions = table.properties[1].value
    assert [(r.name, r.default_only) for r in actions] == [("a", False), ("NoAction", True)]
    assert table.properties[2].is_const
    assert isinstance(table.properties[4].value, ast.ConstructorCall)
    entries = table.properties[5].value
    assert isinstance(entries[0].priority, ast.IntLiteral) and len(entries[0].keyset) == 2
    assert entries[0].action.name == "a" and entries[1].priority is None


def test_statements() -> None:
    control = control_body(
        """
        bit<8> v = 1;
        const bit<8> K = 2;
        if (h.isValid()) { h.a = v; } else h.a = K;
        switch (t.apply().action_run) { a: { exit; } b: default: { return; } }
        ;
        { h.setInvalid(); }
        """,
        locals_="table t { actions = { NoAction; } }",
    )
    kinds = [type(s).__name__ for s in control.body.statements]
    assert kinds == ["DeclStmt", "DeclStmt", "IfStmt", "SwitchStmt", "EmptyStmt", "BlockStmt"]
    switch = control.body.statements[3]
    assert isinstance(switch, ast.SwitchStmt)
    assert [c.body is None for c in switch.cases] == [False, True, False]
    assert switch.cases[2].label is None


def test_operator_precedence() -> None:
    expr = first_expr("a + b * c << 2 == d & e || f && !g")
    assert isinstance(expr, ast.Binary) and expr.op == "||"
    assert isinstance(expr.right, ast.Binary) and expr.right.op == "&&"
    left = expr.left
    assert isinstance(left, ast.Binary) and left.op == "=="
    shift = left.left
    assert isinstance(shift, ast.Binary) and shift.op == "<<"
    assert isinstance(shift.left, ast.Binary) and shift.left.op == "+"
    assert isinstance(shift.left.right, ast.Binary) and shift.left.right.op == "*"


def test_shift_right_from_two_angles() -> None:
    expr = first_expr("a >> 2")
    assert isinstance(expr, ast.Binary) and expr.op == ">>"
    compare = first_expr("a > b")
    assert isinstance(compare, ast.Binary) and compare.op == ">"


def test_casts_slices_concat_ternary_saturating() -> None:
    expr = first_expr("(bit<16>)a[7:0] ++ 8w1 |+| c ? d : e")
    assert isinstance(expr, ast.Ternary)
    concat = expr.cond
    assert isinstance(concat, ast.Binary) and concat.op == "++"
    assert isinstance(concat.left, ast.Cast) and isinstance(concat.left.expr, ast.Slice)
    assert isinstance(concat.right, ast.Binary) and concat.right.op == "|+|"


def test_cast_to_named_type_vs_parenthesised_expression() -> None:
    cast = first_expr("(port_t) v", prelude="typedef bit<9> port_t;")
    assert isinstance(cast, ast.Cast)
    plain = first_expr("(v) + 1")
    assert isinstance(plain, ast.Binary)


def test_generic_call_vs_comparison() -> None:
    call = first_expr("p.lookahead<bit<8>>()")
    assert isinstance(call, ast.Call) and len(call.type_args) == 1
    compare = first_expr("a < b")
    assert isinstance(compare, ast.Binary) and compare.op == "<"


def test_list_and_struct_expressions() -> None:
    values = first_expr("{1, b, {c}}")
    assert isinstance(values, ast.ListExpr) and isinstance(values.elements[2], ast.ListExpr)
    struct = first_expr("{ f = 1, g = b }")
    assert isinstance(struct, ast.StructExpr) and [f.name for f in struct.fields] == ["f", "g"]


def test_negative_literal_and_width_prefix() -> None:
    expr = first_expr("-5")
    assert isinstance(expr, ast.IntLiteral) and expr.value == -5
    typed = first_expr("-8w5")
    assert isinstance(typed, ast.Unary) and typed.op == "-"


def test_annotations_kept_with_bodies() -> None:
    program = parse(
        """
        @my_annotation @other(1, "two") @structured[key="v", n=3]
        @pragma_like(some free form - tokens!)
        header h_t { bit<8> a; }
        """
    )
    header = program.declarations[0]
    names = [a.name for a in header.annotations]
    assert names == ["my_annotation", "other", "structured", "pragma_like"]
    other = header.annotations[1]
    assert other.args is not None and [type(a).__name__ for a in other.args] == [
        "IntLiteral",
        "StringLiteral",
    ]
    structured = header.annotations[2]
    assert structured.kv is not None and set(structured.kv) == {"key", "n"}
    free = header.annotations[3]
    assert free.args is None and free.body == "some free form - tokens!"


def test_main_instantiation_with_constructor_calls() -> None:
    program = parse(
        """
        parser Pa<H>(packet_in b, out H h);
        package Pkg<H>(Pa<H> p);
        header h_t { bit<8> a; }
        parser MyP(packet_in b, out h_t h) { state start { transition accept; } }
        Pkg(MyP()) main;
        """
    )
    main = program.declarations[-1]
    assert isinstance(main, ast.Instantiation) and main.name == "main"
    assert isinstance(main.args[0].value, ast.ConstructorCall)


def test_locations_of_nodes() -> None:
    program = parse("const bit<8> K =\n    3;")
    const = program.declarations[0]
    assert isinstance(const, ast.ConstDecl)
    assert (const.loc.line, const.loc.column) == (1, 14)
    assert (const.value.loc.line, const.value.loc.column) == (2, 5)


def test_expr_to_source_round_trip() -> None:
    for text in [
        "hdr.ipv4.dstAddr",
        "hdr.s[2].f",
        "x[7:0]",
        "h.isValid()",
        "a + b",
        "(bit<8>)x",
        "{a, b}",
    ]:
        assert ast.expr_to_source(first_expr(text)) == text
