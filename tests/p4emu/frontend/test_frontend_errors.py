"""Rejected sources: every error names file:line:col and says what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from frontend_helpers import error_of, location, v1_source

from p4emu.exceptions import P4SourceError, P4SourceErrors, P4UnsupportedError
from p4emu.frontend import load_program, load_program_text


def expect_error(message: str, needle: str, offset: int = 0, **parts: str) -> None:
    """The v1 template filled with ``parts`` fails at ``needle`` with ``message``."""
    source = v1_source(**parts)
    error = error_of(source)
    assert str(error) == f"{location(source, needle, offset=offset)}: error: {message}"


# --------------------------------------------------------------------------- syntax


def test_syntax_error_missing_semicolon() -> None:
    source = "#include <v1model.p4>\nconst bit<8> A = 1\nconst bit<8> B = 2;\n"
    assert str(error_of(source)) == "test.p4:3:1: error: syntax error: expected ';', found 'const'"


def test_syntax_error_in_expression() -> None:
    expect_error(
        "syntax error: expected an expression, found ';'",
        "+ ;",
        offset=2,
        ingress="meta.x = meta.x + ;",
    )


def test_syntax_error_unbalanced_brace_at_end_of_file() -> None:
    source = "control C() {\n apply {\n"
    assert (
        str(error_of(source)) == "test.p4:2:8: error: syntax error: expected '}', found end of file"
    )


def test_syntax_error_spaced_angle_brackets_are_not_a_shift() -> None:
    expect_error(
        "syntax error: expected an expression, found '>'", "> 2", ingress="meta.x = meta.x > > 2;"
    )


def test_statement_that_is_not_a_call_or_assignment() -> None:
    expect_error(
        "syntax error: expected '=' or a method call, found ';'", "; /*x*/", ingress="meta.x; /*x*/"
    )


def test_unterminated_comment() -> None:
    source = "#include <v1model.p4>\nheader h_t { bit<8> a; }\n  /* dangling\n"
    assert str(error_of(source)) == "test.p4:3:3: error: unterminated comment"


def test_missing_include() -> None:
    source = '#include <core.p4>\n#include "does_not_exist.p4"\n'
    assert (
        str(error_of(source)) == 'test.p4:2:1: error: include file not found: "does_not_exist.p4"'
    )


def test_error_inside_macro_expansion_points_at_use_site() -> None:
    source = v1_source(decls="#define WIDE(x) (x + 16w1)", ingress="meta.x = WIDE(hdr.h.a);")
    error = error_of(source)
    # The expansion's tokens carry the macro invocation's location; the argument keeps its own.
    assert str(error) == (
        f"{location(source, 'hdr.h.a);')}: error: operands of '+' have different widths: bit<8> and bit<16>; cast one of them"
    )


# --------------------------------------------------------------------------- names & declarations


def test_unknown_name() -> None:
    expect_error("unknown name 'nosuch'", "nosuch", ingress="meta.x = nosuch;")


def test_unknown_type() -> None:
    expect_error("unknown type 'nosuch_t'", "nosuch_t", decls="struct s_t { nosuch_t f; }")


def test_unknown_field() -> None:
    expect_error("header h_t has no field 'zz'", "zz", ingress="meta.x = hdr.h.zz;")


def test_unknown_struct_field() -> None:
    expect_error("struct meta_t has no field 'nope'", "nope", ingress="meta.nope = 1;")


def test_unknown_enum_member() -> None:
    expect_error("enum CloneType has no member 'X2Y'", "X2Y", ingress="clone(CloneType.X2Y, 1);")


def test_unknown_error_member() -> None:
    expect_error(
        "unknown error 'error.Bogus'", "Bogus", ingress="if (sm.parser_error == error.Bogus) { }"
    )


def test_duplicate_declaration() -> None:
    source = v1_source(decls="const bit<8> K = 1;\nconst bit<8> K = 2;")
    first = location(source, "K = 1")
    assert (
        str(error_of(source))
        == f"{location(source, 'K = 2')}: error: duplicate declaration of 'K' (previous declaration at {first})"
    )


def test_duplicate_local_variable() -> None:
    source = v1_source(ingress="bit<8> v = 1; bit<8> v = 2;")
    first = location(source, "v = 1")
    assert (
        str(error_of(source))
        == f"{location(source, 'v = 2')}: error: duplicate declaration of 'v' (previous declaration at {first})"
    )


def test_duplicate_field() -> None:
    expect_error("duplicate field 'a' in x_t", "a; }", decls="header x_t { bit<8> a; bit<8> a; }")


def test_undefined_parser_state() -> None:
    states = """    state start {
        transition nowhere;
    }"""
    expect_error(
        "transition to undefined state 'nowhere' in parser P", "transition nowhere", states=states
    )


def test_undefined_state_in_select() -> None:
    states = """    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a) { 1: gone; default: accept; }
    }"""
    expect_error("transition to undefined state 'gone' in parser P", "1: gone", states=states)


def test_parser_without_start_state() -> None:
    expect_error(
        "parser P has no 'start' state",
        "P(packet_in",
        states="    state begin { transition accept; }",
    )


def test_missing_main() -> None:
    source = "#include <core.p4>\n#include <v1model.p4>\nheader h_t { bit<8> a; }\n"
    assert str(error_of(source)) == (
        "test.p4:1:1: error: program has no 'main' package instantiation (e.g. V1Switch(MyParser(), ..., MyDeparser()) main;)"
    )


# --------------------------------------------------------------------------- types


def test_width_mismatch_in_binary_operation() -> None:
    expect_error(
        "operands of '+' have different widths: bit<8> and bit<16>; cast one of them",
        "hdr.h.a + hdr.h.b",
        ingress="meta.y = (bit<16>)(hdr.h.a + hdr.h.b);",
    )


def test_signedness_mismatch() -> None:
    expect_error(
        "operands of '&' have different signedness: bit<8> and int<8>; cast one of them",
        "hdr.h.a & 8s1",
        ingress="meta.x = hdr.h.a & 8s1;",
    )


def test_assignment_width_mismatch() -> None:
    expect_error(
        "cannot assign a value of type bit<16> to a target of type bit<8>",
        "hdr.h.b;",
        ingress="meta.x = hdr.h.b;",
    )


def test_bool_and_bit_do_not_mix() -> None:
    expect_error(
        "if condition: expected a value of type bool, got bit<8>",
        "hdr.h.a)",
        ingress="if (hdr.h.a) { }",
    )


def test_concat_needs_widths() -> None:
    expect_error("operands of '++' need a width (e.g. 8w0)", "1;", ingress="meta.y = hdr.h.a ++ 1;")


def test_slice_out_of_range() -> None:
    expect_error(
        "slice [8:0] is out of range for bit<8>",
        "hdr.h.a[8:0]",
        ingress="meta.y = (bit<16>)hdr.h.a[8:0];",
    )


def test_invalid_cast() -> None:
    expect_error(
        "cannot cast a value of type bool to bit<8>",
        "(bit<8>)",
        ingress="meta.x = (bit<8>)meta.flag;",
    )


def test_stack_index_out_of_bounds() -> None:
    expect_error(
        "index 4 is out of bounds for a stack of size 2",
        "4]",
        headers="h_t[2] hs;",
        ingress="hdr.hs[4].a = 1;",
    )


def test_header_field_type_restriction() -> None:
    expect_error(
        "header bad_t field 's' has type ext_t; header fields must be bit<W>, int<W>, varbit<W>, bool or a serializable enum",
        "ext_t s",
        decls="extern ext_t { ext_t(); } header bad_t { ext_t s; }",
    )


def test_constant_must_be_compile_time() -> None:
    expect_error(
        "initializer of constant 'C' is not a compile-time constant",
        "hdr.h.a;",
        ingress="const bit<8> C = hdr.h.a;",
    )


def test_shift_of_untyped_literal_by_variable() -> None:
    expect_error(
        "the left operand of a shift by a non-constant amount needs a width (e.g. 32w1)",
        "1 <<",
        ingress="meta.z = 1 << hdr.h.a;",
    )


def test_division_by_zero() -> None:
    expect_error("division by zero", "8w1 / 0", ingress="meta.x = 8w1 / 0;")


# --------------------------------------------------------------------------- assignments & calls


def test_assign_to_in_parameter() -> None:
    source = v1_source()
    source = source.replace("apply { pkt.emit(hdr.h); }", "apply { hdr.h.a = 1; pkt.emit(hdr.h); }")
    assert (
        str(error_of(source))
        == f"{location(source, 'hdr.h.a = 1')}: error: cannot assign to in parameter 'hdr'"
    )


def test_assign_to_constant() -> None:
    expect_error(
        "cannot assign to constant 'K'", "K = 2", decls="const bit<8> K = 1;", ingress="K = 2;"
    )


def test_assign_to_action_data_parameter() -> None:
    expect_error(
        "cannot assign to directionless parameter 'v'",
        "v = 1",
        ingress_locals="action a(bit<8> v) { v = 1; }",
        ingress="a(2);",
    )


def test_set_valid_on_in_parameter() -> None:
    source = v1_source().replace("apply { pkt.emit(hdr.h); }", "apply { hdr.h.setValid(); }")
    assert (
        str(error_of(source))
        == f"{location(source, 'hdr.h.setValid')}: error: cannot modify in parameter 'hdr'"
    )


def test_wrong_argument_count_to_extern_function() -> None:
    expect_error(
        "wrong number of arguments to 'clone': expected 2, got 1",
        "clone(",
        ingress="clone(CloneType.I2E);",
    )


def test_wrong_argument_count_to_action() -> None:
    expect_error(
        "wrong number of arguments to 'a': expected 1, got 0",
        "a();",
        ingress_locals="action a(bit<8> v) { meta.x = v; }",
        ingress="a();",
    )


def test_wrong_argument_count_to_extern_method() -> None:
    expect_error(
        "wrong number of arguments to register.read: expected 2, got 1",
        "r.read",
        ingress_locals="register<bit<8>>(4) r;",
        ingress="r.read(meta.x);",
    )


def test_wrong_argument_type() -> None:
    expect_error(
        "argument 'type' of 'clone': expected a value of type CloneType, got bit<8>",
        "hdr.h.a, 1",
        ingress="clone(hdr.h.a, 1);",
    )


def test_out_argument_must_be_assignable() -> None:
    expect_error(
        "cannot pass as out argument the expression '1 + 1'",
        "1 + 1",
        ingress_locals="register<bit<8>>(4) r;",
        ingress="r.read(1 + 1, 0);",
    )


def test_calling_a_table_as_a_function() -> None:
    expect_error(
        "'t' is not a function or action and cannot be called",
        "t();",
        ingress_locals="table t { actions = { NoAction; } }",
        ingress="t();",
    )


def test_table_apply_with_arguments() -> None:
    expect_error(
        "t.apply() takes no arguments, 1 given",
        "t.apply(1)",
        ingress_locals="table t { actions = { NoAction; } }",
        ingress="t.apply(1);",
    )


def test_table_applied_inside_action() -> None:
    expect_error(
        "table t can only be applied in a control's apply block",
        "t.apply(); }",
        ingress_locals="table t { actions = { NoAction; } } action a() { t.apply(); }",
        ingress="a();",
    )


def test_action_called_from_parser() -> None:
    states = """    state start {
        NoAction();
        transition accept;
    }"""
    expect_error(
        "action 'NoAction' cannot be called from here (only from controls and actions)",
        "NoAction();",
        states=states,
    )


def test_method_not_called() -> None:
    expect_error(
        "method 'isValid' must be called: write hdr.h.isValid(...)",
        "isValid",
        ingress="meta.flag = hdr.h.isValid;",
    )


def test_unknown_extern_method() -> None:
    expect_error(
        "extern register has no method 'reset'",
        "reset",
        ingress_locals="register<bit<8>>(4) r;",
        ingress="r.reset();",
    )


def test_return_value_in_action() -> None:
    expect_error(
        "return with a value is only allowed in functions", "return 1", ingress="return 1;"
    )


def test_function_missing_return() -> None:
    expect_error(
        "function 'f' does not return a value on every path",
        "f(in",
        decls="bit<8> f(in bit<8> v) { if (v == 0) { return 1; } }",
    )


def test_exit_in_parser() -> None:
    states = """    state start {
        exit;
    }"""
    expect_error("exit is not allowed in a parser", "exit;", states=states)


def test_generic_width_cannot_be_inferred() -> None:
    expect_error(
        "cannot infer a width for argument 'data' of 'hash' (type parameter D); use a width-prefixed literal such as 32w0 or a cast",
        "{hdr.h.a, 5}",
        ingress="hash(meta.y, HashAlgorithm.crc16, 16w0, {hdr.h.a, 5}, 32w8);",
    )


# --------------------------------------------------------------------------- tables


def test_default_action_not_in_action_list() -> None:
    expect_error(
        "default action 'b' is not in the actions of table t",
        "b();",
        ingress_locals="action a() { } action b() { } table t { actions = { a; } default_action = b(); }",
    )


def test_unknown_action_in_table() -> None:
    expect_error(
        "unknown action 'nope' in table t",
        "nope;",
        ingress_locals="table t { actions = { nope; } }",
    )


def test_unknown_match_kind() -> None:
    expect_error(
        "unknown match kind 'fuzzy' in table t",
        "hdr.h.a: fuzzy",
        ingress_locals="table t { key = { hdr.h.a: fuzzy; } actions = { NoAction; } }",
    )


def test_table_without_actions() -> None:
    expect_error(
        "table t has no 'actions' property",
        "table t",
        offset=6,
        ingress_locals="table t { key = { hdr.h.a: exact; } }",
    )


def test_entry_key_count_mismatch() -> None:
    expect_error(
        "entry has 2 key value(s) but table t has 1 key field(s)",
        "(1, 2)",
        ingress_locals="table t { key = { hdr.h.a: exact; } actions = { NoAction; } const entries = { (1, 2): NoAction(); } }",
    )


def test_mask_on_exact_key() -> None:
    expect_error(
        "a mask (&&&) cannot be used for exact key 'hdr.h.a'",
        "1 &&& 3",
        ingress_locals="table t { key = { hdr.h.a: exact; } actions = { NoAction; } const entries = { 1 &&& 3: NoAction(); } }",
    )


def test_default_only_action_in_entries() -> None:
    expect_error(
        "action 'NoAction' is @defaultonly and cannot be used in entries of table t",
        "NoAction(); }",
        ingress_locals="table t { key = { hdr.h.a: exact; } actions = { @defaultonly NoAction; } const entries = { 1: NoAction(); } }",
    )


def test_switch_label_not_an_action_of_the_table() -> None:
    expect_error(
        "'a' is not an action of table t",
        "a: {",
        ingress_locals="action a() { } table t { actions = { NoAction; } }",
        ingress="switch (t.apply().action_run) { a: { } }",
    )


def test_wrong_directional_argument_count_in_action_list() -> None:
    expect_error(
        "action 'a' in the actions of table t needs 1 argument(s) for its directional parameters, 0 given",
        "a; }",
        ingress_locals="action a(inout bit<8> v) { v = 1; } table t { actions = { a; } }",
    )


# --------------------------------------------------------------------------- package binding


def test_block_in_the_wrong_v1switch_slot() -> None:
    source = v1_source().replace("V1Switch(P(), VC(), I(),", "V1Switch(P(), VC(), P(),")
    assert str(error_of(source)) == (
        f"{location(source, 'P(), E()')}: error: argument 'ig' of V1Switch must be a control (Ingress)"
    )


def test_mismatched_header_types_between_blocks() -> None:
    source = v1_source(decls="struct other_t { bit<8> v; }").replace(
        "control E(inout headers_t hdr", "control E(inout other_t hdr"
    )
    assert str(error_of(source)) == (
        f"{location(source, 'hdr, inout meta_t meta, inout standard_metadata_t sm) {{ apply {{ }} }}'.replace('{{', '{').replace('}}', '}'))}: "
        "error: parameter 'hdr' of E has type other_t but V1Switch expects headers_t"
    )


# --------------------------------------------------------------------------- unsupported


def test_unsupported_construct_is_named() -> None:
    source = v1_source(ingress="for (bit<8> i = 0; i < 4; i = i + 1) { }")
    error = error_of(source)
    assert isinstance(error, P4UnsupportedError)
    assert error.construct == "for loops"
    assert str(error) == f"{location(source, 'for (')}: error: unsupported construct: for loops"


def test_unsupported_abstract_methods() -> None:
    error = error_of("extern E { E(); abstract void f(); }\n")
    assert isinstance(error, P4UnsupportedError)
    assert str(error) == "test.p4:1:17: error: unsupported construct: abstract extern methods"


def test_unsupported_package() -> None:
    source = "#include <core.p4>\nparser Pa(packet_in b);\npackage Other(Pa p);\nparser X(packet_in b) { state start { transition accept; } }\nOther(X()) main;\n"
    error = error_of(source)
    assert isinstance(error, P4UnsupportedError)
    assert (
        str(error)
        == "test.p4:5:12: error: unsupported construct: package Other (only the v1model V1Switch package is supported)"
    )


# --------------------------------------------------------------------------- several errors


def test_independent_errors_are_all_reported() -> None:
    source = v1_source(
        ingress_locals="action a() { meta.x = nope1; } action b() { meta.x = nope2; }",
        ingress="a(); b();",
    )
    with pytest.raises(P4SourceErrors) as info:
        load_program_text(source, "test.p4")
    messages = [e.message for e in info.value.errors]
    assert messages == ["unknown name 'nope1'", "unknown name 'nope2'"]
    assert str(info.value).count("error:") == 2


def test_error_in_included_file(tmp_path: Path) -> None:
    (tmp_path / "defs.p4").write_text("header h_t {\n  bit<8> a;\n  unknown_t b;\n}\n")
    main = tmp_path / "main.p4"
    main.write_text('#include <core.p4>\n#include "defs.p4"\n')
    with pytest.raises(P4SourceError) as info:
        load_program(main)
    assert str(info.value) == f"{tmp_path / 'defs.p4'}:3:3: error: unknown type 'unknown_t'"


def test_dont_care_outside_keysets_and_out_arguments() -> None:
    expect_error(
        "'_' can only be used as a keyset wildcard or an ignored out argument",
        "_) {",
        ingress="if (_) { }",
    )


def test_dont_care_for_an_in_argument() -> None:
    expect_error(
        "'_' can only be passed to an out parameter ('session' of 'clone' is in)",
        "_);",
        ingress="clone(CloneType.I2E, _);",
    )


def test_action_run_outside_switch() -> None:
    expect_error(
        "action_run can only be used as the expression of a switch statement",
        "action_run}",
        ingress_locals="table t { actions = { NoAction; } }",
        ingress='log_msg("x", {t.apply().action_run});',
    )


def test_stack_next_outside_parser() -> None:
    expect_error(
        "'hdr.hs.next' can only be used in a parser; index the stack instead",
        "next.a",
        headers="h_t[2] hs;",
        ingress="hdr.hs.next.a = 1;",
    )


def test_struct_header_field_in_an_untyped_structure_expression_is_unsupported() -> None:
    """As an argument, a call's value, in '?:'... it works (conformance
    frontend/struct_in_header_arg); a use no rule takes stays unsupported, with its place
    (p4c 1.2.4.8 stops with a compiler bug on this one)."""
    source = v1_source(
        decls="struct pair_t { bit<8> x; bit<8> y; }",
        headers="hp_t hp;",
        ingress="digest(1, {a = hdr.hp.p, b = 8w1});",
    ).replace("struct headers_t", "header hp_t { pair_t p; }\nstruct headers_t")
    error = error_of(source)
    assert isinstance(error, P4UnsupportedError)
    assert str(error) == (
        f"{location(source, 'hdr.hp.p, b')}: error: unsupported construct: the struct-typed "
        "header field 'hdr.hp.p' used as a whole (use its fields)"
    )


def test_struct_header_field_as_an_argument_of_another_struct_type_is_an_error() -> None:
    expect_error(
        "argument 'v' of 'f': expected a value of type other_t, got pair_t",
        "hdr.hp.p);",
        decls="struct pair_t { bit<8> x; bit<8> y; } struct other_t { bit<8> x; bit<8> y; } "
        "header hp_t { pair_t p; } void f(inout other_t v) { }",
        headers="hp_t hp;",
        ingress="f(hdr.hp.p);",
    )


def test_struct_header_field_of_another_struct_type_is_an_error() -> None:
    expect_error(
        "cannot assign a value of type other_t to a target of type pair_t",
        "meta.q;",
        decls="struct pair_t { bit<8> x; bit<8> y; } struct other_t { bit<8> x; bit<8> y; } "
        "header hp_t { pair_t p; }",
        headers="hp_t hp;",
        meta="other_t q;",
        ingress="hdr.hp.p = meta.q;",
    )


def test_struct_header_field_members_must_be_bit_strings() -> None:
    expect_error(
        "header bad_t field 's.v' has type varbit<8>; a struct inside a header may hold only "
        "bit<W>, int<W>, bool, serializable enums and structs",
        "st_t s",
        decls="struct st_t { varbit<8> v; } header bad_t { st_t s; }",
    )


def test_struct_header_field_as_an_in_argument_of_another_struct_type_is_an_error() -> None:
    expect_error(
        "argument 'v' of 'f': expected a value of type other_t, got pair_t",
        "hdr.hp.p);",
        decls="struct pair_t { bit<8> x; bit<8> y; } struct other_t { bit<8> x; bit<8> y; } "
        "header hp_t { pair_t p; } bit<8> f(in other_t v) { return v.x; }",
        headers="hp_t hp;",
        ingress="hdr.hp.p.x = f(hdr.hp.p);",
    )
