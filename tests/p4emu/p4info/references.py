"""The checked-in P4Info references produced by the real p4c (see ``reference/programs.txt``).

Shared by ``test_references.py`` (compares p4emu's P4Info with them) and
``scripts/regen-p4info-refs`` (rewrites them with p4c).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
REFERENCE_DIR = Path(__file__).resolve().parent / "reference"
MANIFEST = REFERENCE_DIR / "programs.txt"


def programs() -> list[Path]:
    """Every program the manifest names, sorted, as absolute paths."""
    found: set[Path] = set()
    for line in MANIFEST.read_text(encoding="utf-8").splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        matches = sorted(ROOT.glob(pattern))
        if not matches:
            raise FileNotFoundError(f"{MANIFEST.name}: no program matches {pattern!r}")
        found.update(match.resolve() for match in matches)
    return sorted(found)


def reference_path(program: Path) -> Path:
    """``reference/<relative path with / -> __>.p4info.txtpb`` for ``program``."""
    relative = program.resolve().relative_to(ROOT).with_suffix("")
    return REFERENCE_DIR / ("__".join(relative.parts) + ".p4info.txtpb")
