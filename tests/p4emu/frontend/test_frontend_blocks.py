"""Parsers, controls, tables, actions, externs and the V1Switch binding."""

from __future__ import annotations

import pytest
from frontend_helpers import check_v1, nodes

from p4emu.exceptions import P4SourceError
from p4emu.frontend import ast
from p4emu.frontend import types as t

BIT8 = t.BitsType(8)


# --------------------------------------------------------------------------- parsers


def test_parser_transitions_resolve_states() -> None:
    checked = check_v1(
        states="""
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) {
            1: second;
            2: reject;
            default: accept;
        }
    }
    state second { transition accept; }"""
    )
    parser = checked.parser.decl
    assert isinstance(parser, ast.ParserDecl)
    start, second = parser.states
    assert start.transition is not None
    targets = [(c.state, c.target) for c in start.transition.cases]
    assert targets == [("second", second), ("reject", None), ("accept", None)]
    assert start.transition.cases[0].keyset.type == BIT8
    assert isinstance(start.transition.cases[2].keyset.type, t.SetType)


def test_select_on_tuple_with_masks_ranges_and_value_set() -> None:
    checked = check_v1(
        parser_locals="value_set<bit<8>>(4) vs;",
        states="""
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a, hdr.h.b) {
            (1, 0x0800 &&& 0xff00): accept;
            (2 .. 4, _): accept;
            default: next;
        }
    }
    state next {
        transition select(hdr.h.a) { vs: accept; default: reject; }
    }""",
    )
    start, following = checked.parser.decl.states  # type: ignore[union-attr]
    first, second, _ = start.transition.cases  # type: ignore[union-attr]
    assert isinstance(first.keyset, ast.TupleKeyset)
    mask = first.keyset.elements[1]
    assert isinstance(mask, ast.Mask) and mask.const_value == (0x0800, 0xFF00)
    assert mask.value.type == t.BitsType(16)
    assert isinstance(second.keyset, ast.TupleKeyset)
    assert isinstance(second.keyset.elements[0], ast.Range) and second.keyset.elements[
        0
    ].const_value == (2, 4)
    vs_case = following.transition.cases[0]  # type: ignore[union-attr]
    assert isinstance(vs_case.keyset, ast.PathExpr) and isinstance(
        vs_case.keyset.decl, ast.ValueSetDecl
    )
    assert checked.value_sets[0].name == "P.vs" and checked.value_sets[0].decl.size_value == 4


def test_extract_and_lookahead_targets() -> None:
    checked = check_v1(
        states="""
    state start {
        bit<8> peek = pkt.lookahead<bit<8>>();
        pkt.extract<h_t>(hdr.h);
        pkt.advance(8);
        transition accept;
    }"""
    )
    calls = nodes(checked.parser.decl, ast.Call)
    lookahead, extract, advance = calls
    assert isinstance(lookahead.target, ast.ExternMethodCall)
    assert lookahead.target.method.name == "lookahead" and lookahead.target.type_args == (BIT8,)
    assert lookahead.type == BIT8
    assert isinstance(extract.target, ast.ExternMethodCall)
    assert extract.target.type_args == (checked.types["h_t"],)
    assert extract.bound_args[0].direction == "out"
    assert advance.bound_args[0].expr is not None and advance.bound_args[0].expr.type == t.BitsType(
        32
    )


def test_varbit_extract_and_stack_next() -> None:
    checked = check_v1(
        decls="header opt_t { varbit<64> data; }",
        headers="opt_t opt; h_t[2] hs;",
        states="""
    state start {
        pkt.extract(hdr.hs.next);
        pkt.extract(hdr.opt, (bit<32>)hdr.hs.last.a * 8);
        transition accept;
    }""",
    )
    extract_stack, extract_varbit = nodes(checked.parser.decl, ast.Call)[:2]
    arg = extract_stack.bound_args[0].expr
    assert isinstance(arg, ast.Member) and arg.kind == ast.MEMBER_STACK_NEXT
    assert len(extract_varbit.bound_args) == 2
    opt = checked.types["opt_t"]
    assert isinstance(opt, t.HeaderType) and opt.has_varbit and opt.width_bits is None


def test_sub_parser_instantiation_and_apply() -> None:
    checked = check_v1(
        decls="""
header h2_t { bit<8> v; }
parser Sub(packet_in pkt, out h2_t h2) {
    state start { pkt.extract(h2); transition accept; }
}""",
        headers="h2_t h2;",
        parser_locals="Sub() sub;",
        states="""
    state start {
        sub.apply(pkt, hdr.h2);
        transition accept;
    }""",
    )
    call = nodes(checked.parser.decl, ast.Call)[0]
    assert isinstance(call.target, ast.BlockApply)
    assert call.target.block.name == "Sub" and call.target.instance is not None
    assert checked.parser.children["sub"].name == "P.sub"


def test_verify_call() -> None:
    checked = check_v1(
        states="""
    state start {
        pkt.extract(hdr.h);
        verify(hdr.h.a == 4, error.NoMatch);
        transition accept;
    }"""
    )
    call = nodes(checked.parser.decl, ast.Call)[1]
    assert isinstance(call.target, ast.ExternFunctionCall) and call.target.function.name == "verify"


# --------------------------------------------------------------------------- controls & tables


TABLE_LOCALS = """
    action set(bit<8> v) { hdr.h.a = v; }
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { hdr.h.a: exact; hdr.h.c: lpm; }
        actions = { set; fwd; NoAction; }
        default_action = set(7);
        size = 512;
    }
"""


def test_table_properties_are_decoded() -> None:
    checked = check_v1(ingress_locals=TABLE_LOCALS, ingress="t.apply();")
    table = checked.table("I.t")
    decl = table.decl
    assert [k.name for k in decl.key] == ["hdr.h.a", "hdr.h.c"]
    assert [k.match_kind for k in decl.key] == ["exact", "lpm"]
    assert [r.action.name for r in decl.actions if r.action] == ["set", "fwd", "NoAction"]
    assert decl.default_action is not None and decl.default_action.action is decl.actions[0].action
    default_arg = decl.default_action.bound_args[0]
    assert (
        default_arg.param.name == "v"
        and default_arg.expr is not None
        and default_arg.expr.const_value == 7
    )
    assert decl.size == 512 and not decl.default_action_const
    assert [a.name for a in checked.actions] == ["I.set", "I.fwd", "NoAction"]
    assert all(table in a.tables for a in checked.actions)


def test_table_apply_results() -> None:
    checked = check_v1(
        ingress_locals=TABLE_LOCALS,
        ingress="""
        if (t.apply().hit) { meta.x = 1; }
        if (t.apply().miss) { meta.x = 2; }
        switch (t.apply().action_run) {
            set: { meta.x = 3; }
            fwd:
            NoAction: { meta.x = 4; }
            default: { meta.x = 5; }
        }""",
    )
    body = checked.ingress.decl.body
    members = [
        m
        for m in nodes(body, ast.Member)
        if m.kind in (ast.MEMBER_HIT, ast.MEMBER_MISS, ast.MEMBER_ACTION_RUN)
    ]
    assert [m.kind for m in members] == [ast.MEMBER_HIT, ast.MEMBER_MISS, ast.MEMBER_ACTION_RUN]
    apply_call = members[0].expr
    assert isinstance(apply_call, ast.Call) and isinstance(apply_call.target, ast.TableApply)
    assert isinstance(apply_call.type, t.ApplyResultType)
    switch = nodes(body, ast.SwitchStmt)[0]
    assert switch.on_action_run
    assert [c.action.name if c.action else None for c in switch.cases] == [
        "set",
        "fwd",
        "NoAction",
        None,
    ]
    assert [c.body is None for c in switch.cases] == [False, True, False, False]


def test_switch_on_value() -> None:
    checked = check_v1(
        ingress="switch (hdr.h.a) { 1: { meta.x = 1; } 2: 3: { meta.x = 2; } default: { } }"
    )
    switch = nodes(checked.ingress.decl.body, ast.SwitchStmt)[0]
    assert not switch.on_action_run
    assert [c.label.const_value if c.label else None for c in switch.cases] == [1, 2, 3, None]


def test_entries_with_priorities() -> None:
    checked = check_v1(
        ingress_locals="""
    action set(bit<8> v) { hdr.h.a = v; }
    table t {
        key = { hdr.h.a: ternary; hdr.h.b: range; }
        actions = { set; NoAction; }
        entries = {
            priority = 40: (1, 1 .. 10): set(1);
            (0x10 &&& 0xf0, _): set(2);
            priority = 100: (_, 5): NoAction();
            (_, _): set(3);
        }
    }""",
        ingress="t.apply();",
    )
    decl = checked.table("I.t").decl
    assert not decl.entries_const and decl.entries is not None
    # BMv2 (p4c 1.2.4.8): entries match in the order written; `priority = 100` does not
    # move the third entry ahead
    assert [e.priority_value for e in decl.entries] == [4, 3, 2, 1]
    first = decl.entries[0]
    assert first.keyset[0].type == BIT8 and first.keyset[0].const_value == 1
    assert isinstance(first.keyset[1], ast.Range)
    assert first.action.action is not None and first.action.bound_args[0].expr.const_value == 1  # type: ignore[union-attr]


def test_exact_entries_have_no_priority() -> None:
    checked = check_v1(
        ingress_locals="""
    action set(bit<8> v) { hdr.h.a = v; }
    table t {
        key = { hdr.h.a: exact; }
        actions = { set; }
        const entries = { 1: set(1); 2: set(2); }
    }""",
        ingress="t.apply();",
    )
    assert [e.priority_value for e in checked.table("I.t").decl.entries or []] == [None, None]


def test_actions_with_directional_parameters() -> None:
    checked = check_v1(
        ingress_locals="""
    action add(inout bit<8> target, bit<8> amount) { target = target + amount; }
    table t {
        key = { hdr.h.a: exact; }
        actions = { add(meta.x); }
    }""",
        ingress="t.apply(); add(meta.x, 3);",
    )
    ref = checked.table("I.t").decl.actions[0]
    assert [b.param.name for b in ref.bound_args] == ["target"]
    call = next(
        c
        for c in nodes(checked.ingress.decl.body, ast.Call)
        if isinstance(c.target, ast.ActionCall)
    )
    assert [b.direction for b in call.bound_args] == ["inout", ""]


def test_direct_counter_meter_and_selector() -> None:
    checked = check_v1(
        ingress_locals="""
    direct_counter(CounterType.packets_and_bytes) hits;
    direct_meter<bit<2>>(MeterType.bytes) rate;
    action nop() { bit<2> color; rate.read(color); }
    table t {
        key = { hdr.h.a: exact; hdr.h.b: selector; }
        actions = { nop; }
        counters = hits;
        meters = rate;
        implementation = action_selector(HashAlgorithm.crc32, 32w64, 32w10);
    }
    table u {
        key = { hdr.h.a: exact; }
        actions = { nop; }
        implementation = action_profile(128);
    }""",
        ingress="t.apply(); u.apply();",
    )
    table = checked.table("I.t")
    assert (
        table.counters is not None
        and table.counters.name == "I.hits"
        and table.counters.table is table
    )
    assert table.meters is not None and table.meters.extern_name == "direct_meter"
    assert table.meters.type_args == (t.BitsType(2),) and table.meters.name == "I.rate"
    assert (
        table.implementation is not None and table.implementation.extern_name == "action_selector"
    )
    assert table.implementation.constructor_args[1:] == [64, 10]
    profile = checked.table("I.u").implementation
    assert profile is not None and profile.constructor_args == [128]


def test_names_follow_p4c_rules() -> None:
    checked = check_v1(
        decls='@name(".top_action") action top() { }',
        ingress_locals="""
    @name("renamed") action local_action() { }
    @name(".absolute_table") table t1 { actions = { local_action; top; } }
    @name("inner_name") table t2 { actions = { NoAction; } }
    @name("reg") register<bit<8>>(4) my_register;""",
        ingress="t1.apply(); t2.apply();",
    )
    assert [t_.name for t_ in checked.tables] == ["absolute_table", "I.inner_name"]
    assert {a.name for a in checked.actions} == {"I.renamed", "top_action", "NoAction"}
    assert [e.name for e in checked.extern_instances] == ["I.reg"]


def test_sub_control_with_constructor_parameter() -> None:
    checked = check_v1(
        decls="""
control Sub(inout bit<8> v)(bit<8> step) {
    action bump() { v = v + step; }
    table t { actions = { bump; } default_action = bump(); }
    apply { t.apply(); }
}""",
        ingress_locals="Sub(2) first; Sub(5) second;",
        ingress="first.apply(meta.x); second.apply(meta.x);",
    )
    children = checked.ingress.children
    assert [c.name for c in children.values()] == ["I.first", "I.second"]
    assert children["second"].constructor_args == {"step": 5}
    assert [t_.name for t_ in checked.tables] == ["I.first.t", "I.second.t"]
    assert {a.name for a in checked.actions} == {"I.first.bump", "I.second.bump"}


def test_extern_instances_and_method_calls() -> None:
    checked = check_v1(
        ingress_locals="""
    register<bit<32>>(16) reg;
    counter(8, CounterType.packets) ctr;
    meter(8, MeterType.bytes) mtr;""",
        ingress="""
        reg.read(meta.z, 3);
        reg.write(3, meta.z + 1);
        ctr.count(2);
        mtr.execute_meter(1, meta.x);""",
    )
    externs = {e.name: e for e in checked.extern_instances}
    assert externs["I.reg"].type_args == (t.BitsType(32),) and externs[
        "I.reg"
    ].constructor_args == [16]
    assert externs["I.ctr"].constructor_args[0] == 8
    calls = nodes(checked.ingress.decl.body, ast.Call)
    read = calls[0]
    assert isinstance(read.target, ast.ExternMethodCall)
    assert read.target.extern.name == "register" and read.target.extern_type_args == (
        t.BitsType(32),
    )
    assert [b.param_type for b in read.bound_args] == [t.BitsType(32), t.BitsType(32)]
    execute = calls[-1]
    assert execute.target.type_args == (BIT8,)  # type: ignore[union-attr]


def test_generic_extern_function_inference() -> None:
    checked = check_v1(
        decls="struct digest_t { bit<8> a; bit<16> b; }",
        ingress="""
        hash(meta.y, HashAlgorithm.crc16, 16w0, {hdr.h.a, hdr.h.c}, 32w1024);
        digest<digest_t>(1, {hdr.h.a, hdr.h.b});
        update_checksum(true, {hdr.h.a, 8w0}, hdr.h.b, HashAlgorithm.csum16);
        random(meta.z, 0, 100);
        clone(CloneType.E2E, 5);
        mark_to_drop(sm);""",
    )
    calls = nodes(checked.ingress.decl.body, ast.Call)
    hash_call, digest_call, checksum_call, random_call, clone_call, drop_call = calls
    assert isinstance(hash_call.target, ast.ExternFunctionCall)
    assert hash_call.target.type_args == (
        t.BitsType(16), t.BitsType(16), t.TupleType((BIT8, t.BitsType(32))), t.BitsType(32),
    )  # fmt: skip
    digest_data = digest_call.bound_args[1].expr
    assert digest_call.target.type_args == (checked.types["digest_t"],)  # type: ignore[union-attr]
    assert digest_data is not None and digest_data.type is checked.types["digest_t"]
    assert checksum_call.target.type_args[1] == t.BitsType(16)  # type: ignore[union-attr]
    assert random_call.target.type_args == (t.BitsType(32),)  # type: ignore[union-attr]
    assert [b.expr.const_value for b in random_call.bound_args[1:]] == [0, 100]  # type: ignore[union-attr]
    assert clone_call.bound_args[1].expr.type == t.BitsType(32)  # type: ignore[union-attr]
    assert len(drop_call.bound_args) == 1


def test_v1switch_binding() -> None:
    checked = check_v1()
    assert [checked.blocks[s].name for s in ast.V1SWITCH_SLOTS] == ["P", "VC", "I", "E", "CC", "D"]
    assert checked.parser.decl.name == "P" and checked.deparser.decl.name == "D"
    assert checked.main.name == "main" and checked.package.name == "V1Switch"
    assert isinstance(checked.main.type, t.SpecializedType)
    assert checked.main.type.args == (checked.types["headers_t"], checked.types["meta_t"])


def test_standard_metadata_layout() -> None:
    checked = check_v1()
    sm = checked.types["standard_metadata_t"]
    assert isinstance(sm, t.StructType)
    names = sm.field_names()
    assert names[:5] == [
        "ingress_port",
        "egress_spec",
        "egress_port",
        "instance_type",
        "packet_length",
    ]
    assert sm.field("parser_error").type is checked.error_type  # type: ignore[union-attr]
    assert sm.field("priority").type == t.BitsType(3)  # type: ignore[union-attr]
    assert sm.field("egress_spec").type == t.BitsType(9)  # type: ignore[union-attr]


def test_v1model_version_2020_typed_indexes() -> None:
    from frontend_helpers import v1_source

    from p4emu.frontend import load_program_text

    source = v1_source(
        ingress_locals="register<bit<8>, bit<4>>(16) r; counter<bit<3>>(8, CounterType.packets) c;",
        ingress="r.write(4w1, 8w2); c.count(3w1); PortId_t p = sm.ingress_port;",
    )
    checked = load_program_text(source, "test.p4", defines={"V1MODEL_VERSION": "20200408"})
    assert checked.constants["__v1model_version"] == 20200408
    reg = checked.extern_instance("I.r")
    assert reg.type_args == (BIT8, t.BitsType(4))


def test_priority_annotation_on_entries_orders_them_as_bmv2() -> None:
    """p4c 1.2.4.8 writes ``@priority(N)`` after an entry's action as its BMv2 priority (an
    entry without it: position + 1) and BMv2 matches the smallest first."""
    checked = check_v1(
        ingress_locals="""
    table t {
        key = { hdr.h.a: ternary; }
        actions = { NoAction; }
        const entries = {
            1 &&& 0xff: NoAction() @priority(7);
            _: NoAction();
        }
    }""",
        ingress="t.apply();",
    )
    entries = checked.table("I.t").decl.entries or []
    assert entries[0].priority is None and entries[0].annotations[0].name == "priority"
    assert [e.priority_value for e in entries] == [1, 2]  # 7 after the second entry's 2
    checked = check_v1(
        ingress_locals="""
    table t {
        key = { hdr.h.a: ternary; }
        actions = { NoAction; }
        const entries = {
            1 &&& 0xff: NoAction() @priority(3);
            2 &&& 0xff: NoAction() @priority(1);
            3 &&& 0xff: NoAction();
            4 &&& 0xff: NoAction() @priority(3);
        }
    }""",
        ingress="t.apply();",
    )
    entries = checked.table("I.t").decl.entries or []
    # BMv2 priorities 3, 1, 3 (the third entry's position + 1) and 3: the smallest first,
    # the first written among equals
    assert [e.priority_value for e in entries] == [3, 4, 2, 1]


def test_a_priority_annotation_takes_one_integer() -> None:
    with pytest.raises(P4SourceError, match="@priority takes one non-negative integer literal"):
        check_v1(
            ingress_locals="""
    table t {
        key = { hdr.h.a: ternary; }
        actions = { NoAction; }
        const entries = { 1 &&& 0xff: NoAction() @priority("x"); }
    }""",
            ingress="t.apply();",
        )


def test_direct_invocation_creates_an_implicit_instance() -> None:
    checked = check_v1(
        decls="""
control Sub(inout bit<8> v) {
    table t { actions = { NoAction; } }
    apply { t.apply(); v = 1; }
}""",
        ingress="Sub.apply(meta.x);",
    )
    call = nodes(checked.ingress.decl.body, ast.Call)[0]
    assert isinstance(call.target, ast.BlockApply) and call.target.instance is None
    assert checked.ingress.children["Sub"].name == "I.Sub"
    assert [t_.name for t_ in checked.tables] == ["I.Sub.t"]


def test_optional_match_kind_entries() -> None:
    checked = check_v1(
        ingress_locals="""
    table t {
        key = { hdr.h.a: optional; hdr.h.b: exact; }
        actions = { NoAction; }
        const entries = { (5, 1): NoAction(); (_, 2): NoAction(); }
    }""",
        ingress="t.apply();",
    )
    decl = checked.table("I.t").decl
    assert decl.needs_priority
    assert [type(e.keyset[0]).__name__ for e in decl.entries or []] == ["IntLiteral", "DontCare"]


def test_value_set_of_struct_matches_tuple_select() -> None:
    checked = check_v1(
        decls="struct vs_t { bit<8> a; bit<16> b; }",
        parser_locals="value_set<vs_t>(4) pvs;",
        states="""
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a, hdr.h.b) { pvs: accept; default: reject; }
    }""",
    )
    assert checked.value_sets[0].decl.element_type.resolved is checked.types["vs_t"]


def test_lookahead_of_a_header_type() -> None:
    checked = check_v1(
        states="""
    state start {
        transition select(pkt.lookahead<h_t>().a) { 1: accept; default: reject; }
    }"""
    )
    select = checked.parser.decl.states[0].transition.select  # type: ignore[union-attr]
    assert select is not None and isinstance(select[0], ast.Member)
    assert select[0].type == BIT8 and select[0].expr.type is checked.types["h_t"]


def test_tableonly_action_cannot_be_default() -> None:
    from frontend_helpers import v1_error

    error = v1_error(
        ingress_locals="action a() { } table t { actions = { @tableonly a; } default_action = a(); }"
    )
    assert error.message == "action 'a' is @tableonly and cannot be the default action of table t"


def test_instance_lookups() -> None:
    checked = check_v1(
        decls="""
control Sub(inout bit<8> v) {
    counter(4, CounterType.packets) c;
    action hit() { c.count(0); }
    table t { actions = { hit; } }
    apply { t.apply(); }
}
register<bit<8>>(2) global_reg;""",
        ingress_locals="Sub() one; Sub() two;",
        ingress="one.apply(meta.x); two.apply(meta.x); global_reg.write(0, 1);",
    )
    assert [b.name for b in checked.block_instances()] == [
        "P",
        "VC",
        "I",
        "I.one",
        "I.two",
        "E",
        "CC",
        "D",
    ]
    two = checked.ingress.children["two"]
    sub = two.decl
    assert isinstance(sub, ast.ControlDecl)
    assert checked.table_instance_for(sub.tables[0], two).name == "I.two.t"
    assert checked.action_instance_for(sub.actions[0], two).name == "I.two.hit"
    counter_decl = next(d for d in sub.locals if isinstance(d, ast.Instantiation))
    assert checked.extern_instance_for(counter_decl, two).name == "I.two.c"
    global_decl = next(checked.declarations(ast.Instantiation))
    assert checked.extern_instance_for(global_decl, None).name == "global_reg"


def test_shared_global_action_profile() -> None:
    checked = check_v1(
        decls="action_profile(64) shared_profile;",
        ingress_locals="""
    action nop() { }
    table a { key = { hdr.h.a: exact; } actions = { nop; } implementation = shared_profile; }
    table b { key = { hdr.h.b: exact; } actions = { nop; } implementation = shared_profile; }""",
        ingress="a.apply(); b.apply();",
    )
    profile = checked.extern_instance("shared_profile")
    assert checked.table("I.a").implementation is profile
    assert checked.table("I.b").implementation is profile
    assert profile.block is None and profile.constructor_args == [64]
