"""Every dataclass of the project's packages, benchmarks and scripts has its own docstring.

Two reasons (docs/contributing.md): a dataclass is read for its fields, and the docstring
says what they hold (units, what None means); and Python 3.11's ``dataclasses`` makes a
docstring for a class that has none by computing ``inspect.signature(cls)`` (about 20 µs
a class), which every process start-up pays for every such class it imports (the virtual
fabric imports over 300). Checked on the AST: no module is imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from project_files import PACKAGES, script_files

ROOT = Path(__file__).resolve().parent.parent
WHY = (
    "every dataclass needs a docstring of its own, saying what it holds: without one, "
    "Python 3.11's dataclasses computes inspect.signature(cls) to make one, at every "
    "start-up that imports the class (docs/contributing.md)"
)


def is_dataclass_decorator(node: ast.expr) -> bool:
    """``@dataclass``, ``@dataclass(...)``, ``@dataclasses.dataclass`` or
    ``@dataclasses.dataclass(...)``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id == "dataclass"
    return isinstance(node, ast.Attribute) and node.attr == "dataclass"


def undocumented_dataclasses(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, qualified name) of every dataclass in ``tree`` without a docstring of its
    own, nested classes included."""

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[int, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = f"{prefix}{child.name}"
                if (
                    any(is_dataclass_decorator(d) for d in child.decorator_list)
                    and ast.get_docstring(child) is None
                ):
                    yield child.lineno, name
                yield from visit(child, f"{name}.")
            else:
                yield from visit(child, prefix)

    yield from visit(tree, "")


def python_files(root: Path) -> list[Path]:
    """Every ``.py`` file of :data:`PACKAGES` and :data:`project_files.SCRIPT_FOLDERS`, and every
    executable script of those folders whose first line names python."""
    files: list[Path] = []
    for folder in PACKAGES:
        files += sorted((root / folder).rglob("*.py"))
    files += script_files(root)
    return files


def offenders(root: Path, files: list[Path]) -> list[str]:
    """``path:line Class`` of every undocumented dataclass in ``files``."""
    found = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in undocumented_dataclasses(tree):
            found.append(f"{path.relative_to(root)}:{line} {name}")
    return found


def test_every_dataclass_has_a_docstring() -> None:
    files = python_files(ROOT)
    assert len(files) > 100  # the folders were found
    missing = offenders(ROOT, files)
    assert not missing, f"{WHY}; {len(missing)} without:\n" + "\n".join(missing)


def decorator_forms(doc: str) -> str:
    """A module with a dataclass of each decorator form (one nested), ``doc`` (a
    docstring line or nothing) after each of their ``class`` lines, and two other classes."""
    return (
        "import dataclasses\n"
        "from dataclasses import dataclass\n"
        "\n"
        "@dataclass\n"
        f"class Bare:\n{doc}"
        "    x: int\n"
        "\n"
        "@dataclass(frozen=True)\n"
        f"class Called:\n{doc}"
        "    x: int\n"
        "\n"
        "@dataclasses.dataclass\n"
        f"class Qualified:\n{doc}"
        "    x: int\n"
        "\n"
        "class Outer:\n"
        '    """Not a dataclass, documented or not."""\n'
        "\n"
        "    @dataclasses.dataclass(slots=True)\n"
        f"    class Inner:\n{'    ' + doc if doc else ''}"
        "        x: int\n"
        "\n"
        "class Plain:\n"
        "    x: int\n"
    )


def test_the_checker_finds_each_decorator_form(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text(decorator_forms(""), encoding="utf-8")
    assert offenders(tmp_path, [source]) == [
        "mod.py:5 Bare",
        "mod.py:9 Called",
        "mod.py:13 Qualified",
        "mod.py:20 Outer.Inner",
    ]


def test_the_checker_accepts_documented_dataclasses(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text(decorator_forms('    """Documented."""\n'), encoding="utf-8")
    assert offenders(tmp_path, [source]) == []
