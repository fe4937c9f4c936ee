"""Generic functions: each distinct set of type arguments gets its own checked copy, and a
wrong type argument, a wrong arity or an uninferable one is an error naming the place."""

from __future__ import annotations

import pytest
from frontend_helpers import check_v1, error_of, location, nodes, v1_source

from p4emu.frontend import ast
from p4emu.frontend import types as t

DECLS = """struct pair_t { bit<8> x; bit<8> y; }
T id<T>(in T x) { return x; }
void put<T>(out T o, in T v) { o = v; }
void swap<T>(inout T a, inout T b) { T tmp = a; a = b; b = tmp; }
bool same<A, B>(in A a, in A b, in B c, in B d) { return a == b && c == d; }
void twice<T>(inout T x, out T copy) { copy = id(x); swap(x, copy); }"""
META = "pair_t s; pair_t t;"


def calls_of(program: ast.CheckedProgram, name: str) -> list[ast.FunctionCall]:
    return [
        call.target
        for call in nodes(program.program, ast.Call)
        if isinstance(call.target, ast.FunctionCall) and call.target.function.name == name
    ]


def test_each_set_of_type_arguments_gets_one_checked_copy() -> None:
    program = check_v1(
        decls=DECLS,
        meta=META,
        ingress="""meta.x = id<bit<8>>(hdr.h.a);
        meta.y = id(hdr.h.b);
        meta.flag = id(meta.flag);
        meta.s = id<pair_t>(meta.t);
        bit<8> again = id(meta.x);
        swap(meta.s, meta.t);
        pair_t copy;
        twice(meta.s, copy);""",
    )
    in_generic_body, ids = [], []
    for target in calls_of(program, "id"):
        generic = isinstance(target.type_args[0], t.TypeVar)
        (in_generic_body if generic else ids).append(target)
    # id(x) in twice<T>: the generic declaration; its copy for pair_t calls id's copy
    declarations = program.program.declarations
    assert [target.function in declarations for target in in_generic_body] == [True]
    assert not any(target.function in declarations for target in ids)
    copies = {id(target.function): target.type_args for target in ids}
    assert sorted(str(args[0]) for args in copies.values()) == [
        "bit<16>",
        "bit<8>",
        "bool",
        "pair_t",
    ]
    bit8 = [target.function for target in ids if target.type_args == (t.BitsType(8),)]
    assert len(bit8) == 2 and bit8[0] is bit8[1]  # made once, used twice
    (swap,) = [
        target.function
        for target in calls_of(program, "swap")
        if target.type_args[0].name == "pair_t"
    ]
    assert not swap.type_params and swap.params[0].type.name == "pair_t"
    (local,) = [s.decl for s in nodes(swap.body, ast.DeclStmt)]
    assert local.type_ref.resolved.name == "pair_t"  # T tmp: a struct in this copy


@pytest.mark.parametrize(
    ("ingress", "needle", "message"),
    [
        ("meta.x = id<bit<16>>(hdr.h.a);", "hdr.h.a)", "argument 'x' of 'id': expected a value of type bit<16>, got bit<8>"),
        ("meta.x = id<bit<8>, bool>(hdr.h.a);", "id<bit<8>, bool>", "'id' takes 1 type argument(s), 2 given"),
        ("meta.x = id(hdr.h.a, hdr.h.a);", "id(hdr.h.a, hdr", "wrong number of arguments to 'id': expected 1, got 2"),
        ("meta.x = id(1);", "1)", "cannot infer a width for argument 'x' of 'id' (type parameter T); use a width-prefixed literal such as 32w0 or a cast"),
        ("meta.flag = id<bool>(1);", "1)", "argument 'x' of 'id': expected a value of type bool, got int"),
        ("swap(meta.x, meta.y);", "meta.y", "argument 'b' of 'swap': expected a value of type bit<8>, got bit<16>"),
        ("meta.flag = same(meta.x, meta.x, true, 8w1);", "8w1", "argument 'd' of 'same': expected a value of type bool, got bit<8>"),
        ("put(meta.x, 8w1); put<bit<8>>(meta.x, id(meta.x));", "id(meta.x)", "a call of the generic function 'id' inside the arguments of a function or extern call: assign its value to a variable first (p4c 1.2.4.8 cannot specialize it there: \"declaration not found\")"),
    ],
)  # fmt: skip
def test_a_wrong_call_is_named_where_it_is(ingress: str, needle: str, message: str) -> None:
    source = v1_source(decls=DECLS, meta=META, ingress=ingress)
    assert str(error_of(source)) == f"{location(source, needle)}: error: {message}"


def test_arithmetic_on_a_type_variable_is_refused_as_p4c() -> None:
    decls = "T inc<T>(in T v) { return v + 1; }"
    source = v1_source(decls=decls)
    assert str(error_of(source)) == (
        f"{location(source, 'v + 1')}: error: operator '+' cannot be applied to a value of "
        "type T, a type variable"
    )


def test_the_return_type_may_be_a_type_parameter_of_several() -> None:
    program = check_v1(
        decls="B second<A, B>(in A a, in B b) { return b; }",
        ingress="meta.flag = second(hdr.h.a, true); meta.y = second<bool, bit<16>>(false, hdr.h.b);",
    )
    assert sorted(str(target.type_args) for target in calls_of(program, "second")) == [
        "(BitsType(width=8, signed=False), BoolType())",
        "(BoolType(), BitsType(width=16, signed=False))",
    ]


@pytest.mark.parametrize(
    ("decls", "needle", "message"),
    [
        ("void put8<T>(out T o) { o = 8w1; }", "8w1", "cannot assign a value of type bit<8> to a target of type T, a type variable"),
        ("T ret8<T>(in T o) { return 8w1; }", "8w1", "return value: expected a value of type T (a type variable), got bit<8>"),
        ("bool isone<T>(in T o) { return o == 1; }", "1;", "right operand of '==': expected a value of type T (a type variable), got int"),
        ("void mix<A, B>(inout A a, in B b) { a = b; }", "b; }", "cannot assign a value of type B to a target of type A, a type variable"),
        ("void rec<T>(in T x) { if (true) { rec(x); } }", "rec(x)", "function 'rec' cannot call itself: P4 has no recursion (p4c: declaration not found)"),
        ("void rec(in bit<8> x) { rec<bit<8>>(x); }", "rec<bit<8>>(x)", "function 'rec' cannot call itself: P4 has no recursion (p4c: declaration not found)"),
    ],
)  # fmt: skip
def test_a_generic_body_takes_only_values_of_its_type_variables(
    decls: str, needle: str, message: str
) -> None:
    """As p4c: checked once, whatever the type arguments (even with none given)."""
    source = v1_source(decls=decls)
    assert str(error_of(source)) == f"{location(source, needle)}: error: {message}"
