"""p4emu's P4Info equals the real p4c's for every program in reference/programs.txt.

The references are p4c's own output (``scripts/regen-p4info-refs``), checked in, so the
comparison runs everywhere; only the regeneration check needs p4c.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import references
from p4lang_tools import find_tool, missing_reason

from p4emu.frontend import load_program
from p4emu.p4info import p4info_for_program, p4info_to_text, read_p4info

PROGRAMS = references.programs()


def _id(program: Path) -> str:
    return str(program.relative_to(references.ROOT))


def test_the_manifest_covers_p4src_and_the_bundled_examples() -> None:
    names = {_id(program) for program in PROGRAMS}
    assert "p4src/mrc_switch.p4" in names
    assert any(name.startswith("benchmarks/programs/") for name in names)
    assert len(names) >= 20


@pytest.mark.parametrize("program", PROGRAMS, ids=_id)
def test_p4info_equals_p4c(program: Path) -> None:
    expected = read_p4info(references.reference_path(program))
    got = p4info_for_program(load_program(program))
    if got != expected:  # show a readable difference, the comparison is on protobufs
        assert p4info_to_text(got) == p4info_to_text(expected)
    assert got == expected


def test_directly_called_actions_have_no_parameters() -> None:
    """p4c binds every argument of an action called from an apply block at the call site."""
    info = read_p4info(references.reference_path(references.ROOT / "p4src" / "mrc_switch.p4"))
    by_name = {action.preamble.name: action for action in info.actions}
    for name in ("MrcIngress.drop_packet", "MrcIngress.punt_packet", "MrcIngress.trim_to_headers"):
        assert list(by_name[name].params) == []
    got = p4info_for_program(load_program(references.ROOT / "p4src" / "mrc_switch.p4"))
    assert {a.preamble.name: list(a.params) for a in got.actions}["MrcIngress.drop_packet"] == []


@pytest.mark.integration
def test_references_are_what_p4c_writes_today() -> None:
    if find_tool("p4c") is None:
        pytest.skip(missing_reason("p4c"))
    script = references.ROOT / "scripts" / "regen-p4info-refs"
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
