"""Generic controls and parsers instantiated with type arguments: each instance's block is
a copy checked with them (shared by instances with the same ones); errors name the place."""

from __future__ import annotations

import pytest
from frontend_helpers import check_v1, error_of, location, v1_source

from p4emu.frontend import ast

DECLS = """struct pair_t { bit<8> x; bit<8> y; }
control Copy<T>(inout T x, in T y) { T tmp; apply { tmp = y; x = tmp; } }"""
META = "pair_t s; pair_t t;"


def instances(program: ast.CheckedProgram) -> dict[str, ast.BlockInstance]:
    found: dict[str, ast.BlockInstance] = {}

    def walk(block: ast.BlockInstance) -> None:
        found[block.name] = block
        for child in block.children.values():
            walk(child)

    for block in program.blocks.values():
        walk(block)
    return found


def test_each_instance_gets_the_copy_for_its_type_arguments() -> None:
    program = check_v1(
        decls=DECLS,
        meta=META,
        ingress_locals="Copy<pair_t>() a;\n    Copy<pair_t>() b;\n    Copy<bit<8>>() c;",
        ingress="a.apply(meta.s, meta.t); b.apply(meta.t, meta.s); c.apply(meta.x, 8w1);",
    )
    blocks = instances(program)
    generic = next(d for d in program.program.declarations if d.name == "Copy")
    a, b, c = (blocks[f"I.{name}"].decl for name in "abc")
    assert a is b and a is not c and generic not in (a, b, c)
    assert not a.type_params and a.params[0].type.name == "pair_t"
    assert str(c.params[0].type) == "bit<8>"
    (tmp,) = [local for local in a.locals if isinstance(local, ast.VariableDecl)]
    assert tmp.type_ref.resolved.name == "pair_t"


@pytest.mark.parametrize(
    ("locals_", "ingress", "needle", "message"),
    [
        ("Copy<pair_t, bit<8>>() a;", "", "Copy<pair_t, bit<8>>", "type 'Copy' takes 1 type argument(s), 2 given"),
        ("Copy<pair_t>() a;", "a.apply(meta.s, meta.x);", "meta.x)", "argument 'y' of 'Copy.apply': expected a value of type pair_t, got bit<8>"),
        ("Copy<bit<16>>() a;", "a.apply(meta.x, 8w1);", "meta.x,", "argument 'x' of 'Copy.apply': expected a value of type bit<16>, got bit<8>"),
        ("Copy() a;", "a.apply(meta.s, meta.t);", "Copy()", "Copy is generic: instantiate it with its type arguments (Copy<...>() a; p4c does not infer them from the apply)"),
    ],
)  # fmt: skip
def test_a_wrong_instance_is_named_where_it_is(
    locals_: str, ingress: str, needle: str, message: str
) -> None:
    source = v1_source(decls=DECLS, meta=META, ingress_locals=locals_, ingress=ingress)
    assert str(error_of(source)) == f"{location(source, needle)}: error: {message}"
