"""The project's STF tests (tests/p4emu/programs/stf, written after p4c's STF samples) get
the same verdict on BMv2 as on p4emu (``-m bmv2``): BMv2 passes them, and so does p4emu."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from bmv2_harness import tools_missing
from bmv2_stf import ERROR, PASS, compare_stfs

from p4emu.stf.runner import OPTIONS_MARKER

PROGRAMS = Path(__file__).resolve().parents[1] / "p4emu" / "programs" / "stf"
CASES = sorted(p.stem for p in PROGRAMS.glob("*.stf"))

BMV2_P4RUNTIME_REFUSES = {
    "register_counter": "Register writes are not supported yet",
}
"""STF tests with a write BMv2 1.15's P4Runtime server does not implement (its message; p4c's
runner does it over Thrift): BMv2's verdict is that error, p4emu passes."""


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
@pytest.mark.parametrize("name", CASES)
def test_stf_programs_pass_on_bmv2_and_p4emu(name: str, tmp_path: Path) -> None:
    reason = tools_missing()
    if reason is not None:
        pytest.skip(reason)
    stf = PROGRAMS / f"{name}.stf"
    [pair] = compare_stfs(PROGRAMS / f"{name}.p4", [stf], tmp_path, (), bmv2_options(stf))
    assert pair.p4emu.outcome == PASS, pair.p4emu.detail
    refused = BMV2_P4RUNTIME_REFUSES.get(name)
    if refused is None:
        assert pair.bmv2.outcome == PASS, pair.bmv2.detail
    else:
        assert pair.bmv2.outcome == ERROR and refused in pair.bmv2.detail, pair.bmv2.detail
