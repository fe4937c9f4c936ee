"""Every bundled scenario on the virtual fabric: its assertions hold, each negative
control breaks them, and RoCE is worse where the paper says so (docs/results.md)."""

from __future__ import annotations

import pytest

from testbed.scenario.load import bundled_names
from testbed.scenario.results import RunResult

from .runs import compared, comparison, control_run, main_run, plain_names, scenario

PLAIN = plain_names()
CONTROLS = [(n, c.name) for n in PLAIN for c in scenario(n).negative_controls]


def failed(run: RunResult) -> str:
    return "\n".join(
        f"{c.name}: {c.measured} (expected {c.expected})" for c in run.checks if not c.ok
    )


def test_the_paper_experiments_are_bundled() -> None:
    assert set(bundled_names()) >= {
        "link-cuts",
        "t1-down",
        "port-flap",
        "ev-drop",
        "incast-victim",
        "random-loss",
        "link-restore",
        "incast-trimming",
        "pair-failures",
    }


@pytest.mark.parametrize("name", bundled_names())
def test_every_scenario_has_assertions_and_a_negative_control(name: str) -> None:
    s = scenario(name)
    assert s.negative_controls, f"{name} has no negative control"
    assert s.assertions.byte_exact


@pytest.mark.parametrize("name", PLAIN)
def test_scenario_holds_on_the_virtual_fabric(name: str) -> None:
    run = main_run(name)
    assert run.checks, f"{name}: nothing was checked"
    assert run.ok, f"{name}:\n{failed(run)}"
    assert all(t.intact for t in run.transfers)


@pytest.mark.parametrize(("name", "control"), CONTROLS)
def test_negative_control_is_caught(name: str, control: str) -> None:
    run = control_run(name, control)
    assert not run.ok, f"{name}: the assertions still pass with {control}"


@pytest.mark.parametrize("name", [n for n in PLAIN if compared(scenario(n))])
def test_roce_behaves_as_the_paper_says(name: str) -> None:
    """Every comparison states a claim about the RoCE baseline (a cross-run check, or a
    check of the RoCE run beyond delivery) and it holds; where RoCE is said to be
    slower, it is."""
    result = comparison(name)
    claims = [*result.checks, *(c for c in result.roce.checks if c.name != "byte-exact delivery")]
    assert claims, f"{name}: no claim about RoCE"
    assert result.ok, "\n".join(
        f"{c.name}: {c.measured} (expected {c.expected})"
        for c in [*result.roce.checks, *result.checks]
        if not c.ok
    )
    if scenario(name).assertions.roce_slower_by is not None:
        assert result.completion_ratio is not None and result.completion_ratio > 1


@pytest.mark.parametrize("name", [n for n in PLAIN if scenario(n).assertions.repath_max_ns])
def test_repath_is_measured_for_every_path_cutting_event(name: str) -> None:
    run = main_run(name)
    measured = [v for e in run.events for v in e.repath_ns]
    assert measured and all(v is not None for v in measured)
