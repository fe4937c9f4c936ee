"""The project's packages and script files as the project-wide tests read them
(tests/test_layering.py, tests/test_dataclass_docs.py): one home for which packages the
project has, which folders hold scripts and what counts as a Python script there."""

from __future__ import annotations

from pathlib import Path

#: the project's packages, lowest layer first (docs/architecture.md)
PACKAGES = (
    "clikit",
    "mrc_wire",
    "topologies",
    "p4emu",
    "controller",
    "nic_emu",
    "vfabric",
    "testbed",
)
#: folders of scripts, not packages: checked like a package above all the others
SCRIPT_FOLDERS = ("benchmarks", "scripts")


def is_python_script(path: Path) -> bool:
    """A ``.py`` file, or a file whose first line is a ``#!`` naming python."""
    if path.suffix == ".py":
        return True
    with path.open("rb") as handle:
        first = handle.readline()
    return first.startswith(b"#!") and b"python" in first


def script_files(root: Path) -> list[Path]:
    """Every Python file of :data:`SCRIPT_FOLDERS` below ``root``, each folder's sorted."""
    return [
        path
        for folder in SCRIPT_FOLDERS
        for path in sorted((root / folder).rglob("*"))
        if path.is_file() and is_python_script(path)
    ]
