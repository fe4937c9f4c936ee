"""Tuple elements by index: the index is a compile-time constant in range, the element's
type is the tuple's at that place; errors name the place."""

from __future__ import annotations

import pytest
from frontend_helpers import check_v1, error_of, location, nodes, v1_source

from p4emu.frontend import ast
from p4emu.frontend import types as t

DECLS = "struct pair_t { bit<8> x; bit<8> y; }\nconst bit<32> ONE = 1;"
LOCALS = "tuple<bit<8>, bool> tp = {1, true};\n        tuple<pair_t, tuple<bit<16>, bool>> nt;"


def test_elements_have_their_types_and_constant_indices() -> None:
    program = check_v1(
        decls=DECLS,
        ingress=f"""{LOCALS}
        meta.x = tp[0];
        meta.flag = tp[ONE];
        nt[1][0] = hdr.h.b;
        nt[0].y = tp[2 - 2];
        tuple<bit<8>, bit<8>> k = {{3, 4}};
        meta.x = k[1];""",
    )
    indices = nodes(program.program, ast.Index)
    types = [str(index.type) for index in indices]
    assert types == [
        "bit<8>",
        "bool",
        "bit<16>",
        "tuple<bit<16>, bool>",
        "pair_t",
        "bit<8>",
        "bit<8>",
    ]
    assert isinstance(indices[-1].type, t.BitsType)
    assert [const_int(index.index) for index in indices] == [0, 1, 0, 1, 0, 0, 1]


def const_int(expr: ast.Expr) -> int:
    assert isinstance(expr.const_value, int)
    return expr.const_value


@pytest.mark.parametrize(
    ("ingress", "needle", "message"),
    [
        ("meta.x = tp[2];", "2]", "tuple index 2 is out of range for tuple<bit<8>, bool> (2 element(s))"),
        ("meta.x = tp[-1];", "-1]", "tuple index -1 is out of range for tuple<bit<8>, bool> (2 element(s))"),
        ("meta.x = tp[meta.x];", "meta.x]", "a tuple index must be a compile-time constant"),
        ("meta.x = tp[true];", "true]", "a tuple index must be a compile-time constant"),
        ("meta.x = tp[1];", "tp[1];", "cannot assign a value of type bool to a target of type bit<8>"),
        ("tp[1] = 3;", "3;", "cannot assign a value of type int to a target of type bool"),
        ("nt[1][2] = true;", "2]", "tuple index 2 is out of range for tuple<bit<16>, bool> (2 element(s))"),
        ("meta.x = tp[0][0];", "tp[0][0]", "cannot index a value of type bit<8> (only header stacks and tuples can be indexed)"),
    ],
)  # fmt: skip
def test_a_wrong_index_is_named_where_it_is(ingress: str, needle: str, message: str) -> None:
    source = v1_source(decls=DECLS, ingress=f"{LOCALS}\n        {ingress}")
    assert str(error_of(source)) == f"{location(source, needle)}: error: {message}"
