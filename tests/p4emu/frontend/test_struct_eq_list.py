"""A struct compared with a list or structure expression: the errors name the place."""

from __future__ import annotations

import pytest
from frontend_helpers import check_v1, error_of, location, nodes, v1_source

from p4emu.frontend import ast
from p4emu.frontend import types as t

DECLS = "struct pair_t { bit<8> x; bit<8> y; }\nstruct nest_t { pair_t p; bool f; }"
META = "pair_t s; nest_t n;"


def comparison(condition: str) -> str:
    return v1_source(decls=DECLS, meta=META, ingress=f"if ({condition}) {{ meta.x = 1; }}")


def test_the_list_takes_the_struct_type_and_the_comparison_stays_one() -> None:
    program = check_v1(
        decls=DECLS, meta=META, ingress="if (meta.n != {{1, 2}, true}) { meta.x = 1; }"
    )
    (compared,) = [b for b in nodes(program.program, ast.Binary) if b.op == "!="]
    assert isinstance(compared.right.type, t.StructType) and compared.right.type.name == "nest_t"
    inner = compared.right.elements[0]
    assert isinstance(inner, ast.ListExpr) and inner.type.name == "pair_t"


@pytest.mark.parametrize(
    ("condition", "needle", "message"),
    [
        ("meta.s == {1, 2, 3}", "{1, 2, 3}", "operand of '==': expected 2 element(s) for pair_t, got 3"),
        ("meta.s != {1, true}", "true", "operand of '!=': expected a value of type bit<8>, got bool"),
        ("{hdr.h.b, 2} == meta.s", "hdr.h.b", "operand of '==': expected a value of type bit<8>, got bit<16>"),
        ("meta.s == {x = 1, z = 2}", "z = 2", "pair_t has no field 'z'"),
        ("meta.s == {x = 1}", "{x = 1}", "structure expression for pair_t is missing field 'y'"),
        (
            "meta.n == {{x = 5, y = 6}, true}",
            "{x = 5",
            "a structure expression inside an operand of '==' needs a cast to its type, e.g. "
            "(T){...} (p4c: could not infer a type for expression)",
        ),
        (
            "meta.n != {p = {5, 6}, f = true}",
            "{5, 6}",
            "a list expression inside a structure expression compared with '!=' needs a cast "
            "to its type, e.g. (T){...} (p4c: cannot extract a field from a tuple)",
        ),
    ],
)  # fmt: skip
def test_a_mismatch_is_named_where_it_is(condition: str, needle: str, message: str) -> None:
    source = comparison(condition)
    assert str(error_of(source)) == f"{location(source, needle)}: error: {message}"
