"""The project's STF tests (tests/p4emu/programs/stf, written after p4c's STF samples) get
the same verdict on BMv2 as on p4emu (``-m bmv2``): BMv2 passes them, and so does p4emu."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from bmv2_harness import tools_missing
from bmv2_stf import PASS, compare_stfs

from p4emu.stf.runner import OPTIONS_MARKER

PROGRAMS = Path(__file__).resolve().parents[1] / "p4emu" / "programs" / "stf"
CASES = sorted(p.stem for p in PROGRAMS.glob("*.stf"))

NOT_ON_BMV2: dict[str, str] = {}
"""STF tests whose BMv2 verdict depends on what an STF cannot fix on BMv2 (the reason)."""


def bmv2_options(stf: Path) -> list[str]:
    """``simple_switch_grpc`` options for the ``# p4emu-options:`` of an STF file (the same
    names: ``--priority-queues``, ``--cpu-port``)."""
    options: list[str] = []
    for line in stf.read_text(encoding="utf-8").splitlines():
        body = line.strip().lstrip("#").strip()
        if body.startswith(OPTIONS_MARKER):
            options += shlex.split(body[len(OPTIONS_MARKER) :])
    return options


@pytest.mark.bmv2
@pytest.mark.parametrize("name", [c for c in CASES if c not in NOT_ON_BMV2])
def test_stf_programs_pass_on_bmv2_and_p4emu(name: str, tmp_path: Path) -> None:
    reason = tools_missing()
    if reason is not None:
        pytest.skip(reason)
    stf = PROGRAMS / f"{name}.stf"
    [pair] = compare_stfs(PROGRAMS / f"{name}.p4", [stf], tmp_path, (), bmv2_options(stf))
    assert pair.bmv2.outcome == PASS, pair.bmv2.detail
    assert pair.p4emu.outcome == PASS, pair.p4emu.detail
