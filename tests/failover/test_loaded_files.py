"""The loaded scenarios' files, read but never run (their runs take minutes and are
``slow``: test_bundled_scenarios.py): every failure kind of the paper's experiments also
runs alone on paper-8plane under load (issue #26), and each file's claims, marks and
controls are stated so that a run can fail them.
"""

from __future__ import annotations

import pytest

from testbed.scenario.load import bundled_names
from testbed.scenario.model import Scenario

from .runs import heavy, scenario

LOADED = [n for n in bundled_names() if n.startswith("loaded-")]
RECOVERIES = frozenset({"link_up", "switch_up", "port_up"})  # what follows a failure
BACKGROUND = frozenset({"incast"})  # traffic, not a failure
LOAD_PATTERNS = frozenset({"permutation", "all_to_all"})


def failure_kinds(s: Scenario) -> set[str]:
    return {e.kind for e in s.timeline} - RECOVERIES - BACKGROUND


def claim_paths(s: Scenario) -> set[str]:
    return set(s.assertions.paths()) | (set(s.roce.paths()) if s.roce is not None else set())


def test_every_failure_kind_of_the_light_scenarios_runs_alone_under_load() -> None:
    light = {k for n in bundled_names() if not heavy(n) for k in failure_kinds(scenario(n))}
    alone = {
        kind for n in LOADED if len(kinds := failure_kinds(scenario(n))) == 1 for kind in kinds
    }
    assert light >= {"link_down", "switch_down", "flap", "ev_drop", "loss"}, light
    assert light <= alone, f"no loaded scenario for: {sorted(light - alone)}"


@pytest.mark.parametrize("name", LOADED)
def test_a_loaded_scenario_loads_the_paper_fabric_under_load_and_is_heavy(name: str) -> None:
    s = scenario(name)
    assert s.name == name
    assert s.topology.name == "paper-8plane"
    assert {t.pattern for t in s.traffic} & LOAD_PATTERNS, "no all-to-all or permutation"
    assert heavy(name), "runs on every seed only with -m slow"
    assert s.paper, "states the paper's claim"
    assert s.assertions.byte_exact


@pytest.mark.parametrize("name", LOADED)
def test_its_controls_name_assertions_it_states_that_are_not_marked(name: str) -> None:
    """A control is caught by a claim that holds in the normal run: one marked not
    reproduced may fail there too, and then catches nothing."""
    s = scenario(name)
    assert s.negative_controls
    for control in s.negative_controls:
        assert control.caught_by, control.name
        assert set(control.caught_by) <= claim_paths(s), control.name
        assert not set(control.caught_by) & set(s.not_reproduced), control.name
        assert control.nic or control.fabric, f"{control.name} changes nothing"


@pytest.mark.parametrize("name", LOADED)
def test_a_claim_marked_not_reproduced_says_what_was_measured(name: str) -> None:
    s = scenario(name)
    for path, note in s.not_reproduced.items():
        assert path in claim_paths(s)
        assert "measured" in note and "seed" in note, f"{path}: {note}"
