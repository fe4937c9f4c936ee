"""The dispatch tables of p4emu's type checker and body compiler, and the independence of
their parts.

Both find the handler of a node by the node's exact class (p4emu/frontend/typecheck/,
p4emu/backend/body/): these tests fail when an AST class is added without a handler, and
when one part of either starts importing another part instead of going through the class
that composes them (docs/architecture.md, "p4emu's compiler").
"""

from __future__ import annotations

import ast as pyast
import inspect
from pathlib import Path

import pytest

from p4emu.backend.body import BodyCompiler
from p4emu.backend.body.expressions import EXPRESSIONS as BODY_EXPRESSIONS
from p4emu.backend.body.statements import STATEMENTS as BODY_STATEMENTS
from p4emu.frontend import ast
from p4emu.frontend.typecheck import TypeChecker
from p4emu.frontend.typecheck.declarations import TOP_LEVEL
from p4emu.frontend.typecheck.statements import STATEMENTS as CHECKED_STATEMENTS
from p4emu.frontend.typecheck.type_decls import TYPE_SYNTAX

# Declarations that only occur inside parsers, controls or externs (the parser never puts
# them at the top level); the others each have a top-level handler.
NESTED_ONLY = {
    ast.Parameter,
    ast.MethodDecl,
    ast.ParserState,
    ast.ValueSetDecl,
    ast.TableDecl,
    ast.VariableDecl,
}
# Expressions that never reach BodyCompiler.ex: keysets (select cases, table entries) and
# constructor calls (instantiations, resolved by the front end).
NOT_VALUES = {
    ast.DontCare,
    ast.DefaultExpr,
    ast.Mask,
    ast.Range,
    ast.TupleKeyset,
    ast.ConstructorCall,
}


def _subclasses(base: type) -> set[type]:
    found: set[type] = set()
    for cls in base.__subclasses__():
        found |= {cls} | _subclasses(cls)
    return found


@pytest.mark.parametrize(
    ("table", "base", "exempt"),
    [
        pytest.param(TypeChecker.expression_handlers, ast.Expr, set(), id="check-expressions"),
        pytest.param(CHECKED_STATEMENTS, ast.Statement, set(), id="check-statements"),
        pytest.param(TYPE_SYNTAX, ast.TypeRef, set(), id="check-type-syntax"),
        pytest.param(TOP_LEVEL, ast.Declaration, NESTED_ONLY, id="check-top-level"),
        pytest.param(BODY_EXPRESSIONS, ast.Expr, NOT_VALUES, id="body-expressions"),
        pytest.param(BODY_STATEMENTS, ast.Statement, set(), id="body-statements"),
    ],
)
def test_a_dispatch_table_has_a_handler_for_every_node_class(
    table: dict[type, object], base: type, exempt: set[type]
) -> None:
    expected = _subclasses(base) - exempt
    assert set(table) == expected, sorted(c.__name__ for c in set(table) ^ expected)


def _parts(composed: type) -> list[object]:
    package = composed.__module__
    return [
        pytest.param(package, path, id=f"{package.rsplit('.', 1)[-1]}.{path.stem}")
        for path in sorted(Path(inspect.getfile(composed)).parent.glob("*.py"))
        if path.stem not in ("__init__", "core")
    ]


@pytest.mark.parametrize(("package", "path"), [*_parts(TypeChecker), *_parts(BodyCompiler)])
def test_a_part_imports_no_other_part_but_core(package: str, path: Path) -> None:
    tree = pyast.parse(path.read_text(encoding="utf-8"))
    imported = {
        node.module
        for node in pyast.walk(tree)
        if isinstance(node, pyast.ImportFrom) and node.module
    }
    siblings = {m for m in imported if m.startswith(package + ".")}
    assert siblings <= {package + ".core"}, siblings
