"""The modes registry (testbed.modes): one table of mode -> fabric and launcher, what the
command line offers, and the docs' list of modes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from testbed.cli import build_parser
from testbed.exceptions import UnknownModeError, UsageError
from testbed.local import LocalMode
from testbed.mininet_mode import MininetMode
from testbed.modes import MODES, launcher, mode, names
from testbed.scenario.fabric import ScenarioFabric, Variant
from testbed.scenario.load import load
from testbed.scenario.process import ProcessRun
from testbed.scenario.run_options import RunOptions
from testbed.scenario.virtual import VirtualRun

ROOT = Path(__file__).resolve().parents[2]


def test_an_unknown_mode_is_refused_with_the_known_ones() -> None:
    with pytest.raises(
        UnknownModeError, match=r"unknown mode 'qemu' \(known: virtual, local, mininet\)"
    ):
        mode("qemu")
    assert issubclass(UnknownModeError, UsageError)  # exit 2 at the command line


def test_up_starts_only_the_modes_with_a_launcher() -> None:
    assert names() == ("virtual", "local", "mininet")
    assert names(standing=True) == ("local", "mininet")
    assert launcher("local") is LocalMode and launcher("mininet") is MininetMode
    with pytest.raises(UnknownModeError, match=r"no standing fabric.*local, mininet"):
        launcher("virtual")
    for spec in MODES.values():
        assert spec.launcher is None or spec.name == spec.launcher.NAME


@pytest.mark.parametrize("name", list(MODES))
def test_every_mode_makes_a_fabric_of_the_one_interface(name: str) -> None:
    scenario = load("t1-down")
    fabric = mode(name).make(scenario, Variant(), RunOptions(mode=name))
    assert isinstance(fabric, ScenarioFabric)
    assert isinstance(fabric, VirtualRun if name == "virtual" else ProcessRun)
    assert fabric.scenario is scenario  # made, nothing started


def test_the_command_line_offers_the_registrys_modes() -> None:
    parser = build_parser()
    commands = {a.dest: a for a in parser._actions}["command"].choices
    offered = {
        name: next(a.choices for a in commands[name]._actions if a.dest == "mode")
        for name in ("up", "demo", "run", "compare")
    }
    assert tuple(offered.pop("up")) == names(standing=True)
    assert all(tuple(choices) == names() for choices in offered.values())


def test_the_docs_list_every_mode_as_the_registry_does() -> None:
    text = (ROOT / "docs" / "testbed.md").read_text(encoding="utf-8")
    section = text.split("\n## Modes\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (\w+) \| (yes|no) \| (.+?) \|$", section, re.M)
    assert rows == [
        (spec.name, spec.clock, "yes" if spec.standing else "no", spec.summary)
        for spec in MODES.values()
    ]
