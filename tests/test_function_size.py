"""No function over 120 lines (issue 28): in every package, benchmark, script and test.

Generated code is exempt: the Python p4emu generates from a P4 program is built and
compiled in memory (docs/p4emu-backend.md) and never checked in, so every ``.py`` file
under the project's folders is read.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 120
FOLDERS = (
    "benchmarks",
    "clikit",
    "controller",
    "mrc_wire",
    "nic_emu",
    "p4emu",
    "scenarios",
    "scripts",
    "testbed",
    "tests",
    "topologies",
    "vfabric",
)


def long_functions(tree: ast.AST, limit: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length) of every function in ``tree`` longer than
    ``limit`` lines, decorators excluded, nested functions counted on their own too."""
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                if length > limit:
                    found.append((name, child.lineno, length))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def project_files() -> list[Path]:
    files = []
    for folder in FOLDERS:
        files += sorted((ROOT / folder).rglob("*.py"))
    files += sorted(ROOT.glob("*.py"))
    return files


def test_long_functions_finds_methods_nested_functions_and_ignores_short_ones() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(6))
    source = (
        f"def short():\n{body}\n"
        f"class C:\n    def method(self):\n{body.replace('    ', '        ')}\n"
        f"        def inner():\n{body.replace('    ', '            ')}\n"
    )
    found = long_functions(ast.parse(source), limit=5)
    assert [(name, length) for name, _, length in found] == [
        ("short", 7),
        ("C.method", 14),
        ("C.method.inner", 7),
    ]
    assert long_functions(ast.parse(source), limit=14) == []


def test_every_project_folder_is_read() -> None:
    assert len(project_files()) > 400
    for folder in FOLDERS:
        assert (ROOT / folder).is_dir(), folder


def test_no_function_over_120_lines() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} {name} ({length} lines)"
        for path in project_files()
        for name, line, length in long_functions(ast.parse(path.read_text("utf-8"), str(path)))
    ]
    assert offenders == [], "split these under 120 lines:\n" + "\n".join(offenders)
