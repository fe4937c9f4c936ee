"""``ast.walk`` / ``ast.iter_children`` (per-class child fields, computed once) visit the
same nodes in the same order as the field-by-field definition they replaced."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import pytest
from frontend_helpers import PROGRAMS_DIR

from p4emu.frontend import ast, load_program

REPO = Path(__file__).resolve().parents[3]


def reference_children(node: ast.Node) -> Iterator[ast.Node]:
    """The definition: every field not a back-reference (``decl`` of a DeclStmt is one
    of its children), its nodes, the nodes of a list, the values of a ``kv`` dict."""
    for spec in fields(node):
        if spec.name in ast._NON_CHILD_FIELDS and not (
            spec.name == "decl" and isinstance(node, ast.DeclStmt)
        ):
            continue
        value = getattr(node, spec.name)
        if isinstance(value, ast.Node):
            yield value
        elif isinstance(value, list):
            yield from (item for item in value if isinstance(item, ast.Node))
        elif isinstance(value, dict) and spec.name == "kv":
            yield from (item for item in value.values() if isinstance(item, ast.Node))


def reference_walk(node: ast.Node) -> Iterator[ast.Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(reference_children(current))))


@pytest.mark.parametrize(
    "program", [REPO / "p4src" / "mrc_switch.p4", *sorted(PROGRAMS_DIR.glob("*.p4"))]
)
def test_walk_and_children_match_the_definition(program: Path) -> None:
    checked = load_program(program)
    root = checked.program
    expected = list(reference_walk(root))
    assert len(expected) > 100
    assert [id(n) for n in ast.walk(root)] == [id(n) for n in expected]
    for node in expected:
        assert [id(c) for c in ast.iter_children(node)] == [id(c) for c in reference_children(node)]
    kinds = {type(n) for n in expected}
    assert ast.DeclStmt in kinds or program.name != "mrc_switch.p4"


def test_walk_reads_children_after_the_parent_is_visited() -> None:
    checked = load_program(PROGRAMS_DIR / "basic.p4")
    block = next(
        n
        for n in ast.walk(checked.program)
        if isinstance(n, ast.BlockStmt) and len(n.statements) > 1
    )
    seen = []
    for node in ast.walk(block):
        seen.append(node)
        if node is block:
            block.statements = block.statements[:1]  # seen by the walk below the block
    assert seen == list(reference_walk(block))
    assert block.statements[0] in seen


def test_iter_children_of_a_non_node_is_an_error() -> None:
    with pytest.raises(TypeError):
        list(ast.iter_children(object()))  # type: ignore[arg-type]
