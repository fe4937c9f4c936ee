"""The package dependency rules of docs/architecture.md, checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT_PACKAGES = {
    "clikit",
    "mrc_wire",
    "topologies",
    "p4emu",
    "controller",
    "nic_emu",
    "vfabric",
    "testbed",
}

# package -> project packages it may import (besides itself)
# clikit (the one command-line kit) is the bottom layer: every package may import it.
ALLOWED: dict[str, set[str]] = {
    "clikit": set(),
    "mrc_wire": {"clikit"},
    "topologies": {"clikit"},
    "p4emu": {"clikit"},
    "controller": {"clikit", "topologies", "mrc_wire", "p4emu"},  # p4emu: P4Info/configs
    "nic_emu": {"clikit", "topologies", "mrc_wire"},
    # the virtual-time fabric combines the P4 switches, the controller's plan and the NICs
    "vfabric": {"clikit", "topologies", "mrc_wire", "p4emu", "controller", "nic_emu"},
    "testbed": PROJECT_PACKAGES,
}


def imported_top_level_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_imported_top_level_names_sees_both_import_forms(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("import p4emu.frontend\nfrom controller.plan import x\nfrom . import y\n")
    assert imported_top_level_names(source) == {"p4emu", "controller"}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_lower_layers(package: str) -> None:
    forbidden = PROJECT_PACKAGES - ALLOWED[package] - {package}
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_top_level_names(path) & forbidden
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not offenders, "\n".join(offenders)
