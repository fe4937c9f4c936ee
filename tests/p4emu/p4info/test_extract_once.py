"""``extract_model`` extracts once per checked program; every caller gets its own copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4emu.frontend import load_program
from p4emu.p4info import extract
from p4emu.p4info.extract import extract_model

PROGRAM = Path(__file__).resolve().parents[3] / "p4src" / "mrc_switch.p4"


def test_extracted_once_per_program(monkeypatch: pytest.MonkeyPatch) -> None:
    checked = load_program(PROGRAM)
    runs = []
    original = extract._Extractor.run

    def counted(self: extract._Extractor) -> extract.ControlPlaneModel:
        runs.append(self.program)
        return original(self)

    monkeypatch.setattr(extract._Extractor, "run", counted)
    first, second = extract_model(checked), extract_model(checked)
    assert len(runs) == 1
    assert first == second and first is not second
    other = load_program(PROGRAM)
    assert extract_model(other) == first
    assert len(runs) == 2  # another program object: extracted for it


def test_a_changed_copy_changes_no_other() -> None:
    checked = load_program(PROGRAM)
    first = extract_model(checked)
    name = first.tables[0].preamble.name
    first.tables[0].preamble.name = "changed"
    first.tables.clear()
    again = extract_model(checked)
    assert again.tables and again.tables[0].preamble.name == name
