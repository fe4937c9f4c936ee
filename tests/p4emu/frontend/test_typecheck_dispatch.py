"""The type checker's dispatch tables cover every node class, and its parts stay separate.

The checker (p4emu/frontend/typecheck/) looks a node's handler up by the node's exact class,
so a node class without an entry would be rejected as unexpected: these tests fail when
an AST class is added without a handler, and when one part of the checker starts
importing another instead of going through the composed class.
"""

from __future__ import annotations

import ast as pyast
import inspect
from pathlib import Path

import pytest

from p4emu.frontend import ast
from p4emu.frontend.typecheck import TypeChecker
from p4emu.frontend.typecheck.declarations import TOP_LEVEL
from p4emu.frontend.typecheck.statements import STATEMENTS

TYPECHECK_DIR = Path(inspect.getfile(TypeChecker)).parent
PARTS = sorted(p.stem for p in TYPECHECK_DIR.glob("*.py") if p.stem not in ("__init__", "core"))
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


def _concrete_subclasses(base: type) -> set[type]:
    found: set[type] = set()
    for cls in base.__subclasses__():
        found.add(cls)
        found |= _concrete_subclasses(cls)
    return found


def test_every_expression_class_has_a_handler() -> None:
    missing = _concrete_subclasses(ast.Expr) - set(TypeChecker.expression_handlers)
    assert not missing, sorted(c.__name__ for c in missing)


def test_every_statement_class_has_a_handler() -> None:
    missing = _concrete_subclasses(ast.Statement) - set(STATEMENTS)
    assert not missing, sorted(c.__name__ for c in missing)


def test_every_top_level_declaration_class_has_a_handler() -> None:
    missing = _concrete_subclasses(ast.Declaration) - set(TOP_LEVEL) - NESTED_ONLY
    assert not missing, sorted(c.__name__ for c in missing)


@pytest.mark.parametrize("part", PARTS)
def test_a_part_of_the_checker_imports_only_core(part: str) -> None:
    tree = pyast.parse((TYPECHECK_DIR / f"{part}.py").read_text(encoding="utf-8"))
    imported = {
        node.module
        for node in pyast.walk(tree)
        if isinstance(node, pyast.ImportFrom) and node.module
    }
    siblings = {m for m in imported if m.startswith("p4emu.frontend.typecheck")}
    assert siblings <= {"p4emu.frontend.typecheck.core"}, siblings
