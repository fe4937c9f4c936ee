"""The dispatch tables of p4emu's type checker and body compiler, and the independence of
their parts.

Both find the handler of a node by the node's exact class (p4emu/frontend/typecheck/,
p4emu/backend/body/): these tests fail when an AST class is added without a handler, and
when one part of either starts importing another part instead of going through the class
that composes them (docs/architecture.md, "p4emu's compiler"); and when a code generator
uses something of the program compiler that ProgramContext, the one interface the code
generators have to it, does not declare (or the program compiler does not provide).
"""

from __future__ import annotations

import ast as pyast
import inspect
from pathlib import Path

import pytest

from p4emu.backend.body import BodyCompiler, ProgramContext
from p4emu.backend.body.expressions import EXPRESSIONS as BODY_EXPRESSIONS
from p4emu.backend.body.statements import STATEMENTS as BODY_STATEMENTS
from p4emu.backend.program import ProgramCompiler
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


# The code generators below program.py: what they use of ``pc`` must be in ProgramContext.
BACKEND = Path(inspect.getfile(ProgramCompiler)).parent
CODE_GENERATORS = [
    *sorted((BACKEND / "body").glob("*.py")),
    BACKEND / "parsers.py",
    BACKEND / "tables_codegen.py",
    BACKEND / "v1model_externs.py",
]


def _context_members() -> set[str]:
    return {
        name
        for klass in ProgramContext.__mro__
        if klass.__module__ == ProgramContext.__module__
        for name in (*vars(klass), *getattr(klass, "__annotations__", {}))
        if not name.startswith("_")
    }


def _program_context_uses(path: Path) -> set[str]:
    """``X`` of every ``pc.X``, ``self.pc.X`` and ``bc.pc.X`` in the module."""
    used: set[str] = set()
    for node in pyast.walk(pyast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, pyast.Attribute):
            continue
        base = node.value
        if (isinstance(base, pyast.Name) and base.id == "pc") or (
            isinstance(base, pyast.Attribute) and base.attr == "pc"
        ):
            used.add(node.attr)
    return used


@pytest.mark.parametrize("path", CODE_GENERATORS, ids=lambda p: p.stem)
def test_a_code_generator_uses_only_what_program_context_declares(path: Path) -> None:
    undeclared = _program_context_uses(path) - _context_members()
    assert not undeclared, sorted(undeclared)


def test_the_code_generators_use_the_program_context() -> None:
    # the scan above finds the uses (it would pass vacuously if it found none)
    assert {"types", "bind", "table_runtime", "extern_runtime", "error_code"} <= set().union(
        *map(_program_context_uses, CODE_GENERATORS)
    )


def test_the_program_compiler_provides_all_of_program_context() -> None:
    # its methods, and the attributes its __init__ assigns
    init = pyast.parse(inspect.getsource(ProgramCompiler.__init__).strip())
    assigned = {
        node.attr
        for node in pyast.walk(init)
        if isinstance(node, pyast.Attribute)
        and isinstance(node.ctx, pyast.Store)
        and isinstance(node.value, pyast.Name)
        and node.value.id == "self"
    }
    provided = assigned | {name for name in _context_members() if hasattr(ProgramCompiler, name)}
    assert _context_members() <= provided, sorted(_context_members() - provided)
