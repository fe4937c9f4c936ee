"""Experiment 9: every pair of simultaneous switch or link failures on ``tiny``."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest

from testbed.scenario.results import RunResult
from testbed.scenario.runner import (
    SweepCase,
    control_variant,
    run_checked,
    run_sweep,
    sweep_assertions,
    sweep_cases,
)

from .runs import OPTIONS, scenario, sweep_names

SWEEPS = sweep_names()


@cache
def swept(name: str) -> list[tuple[SweepCase, RunResult]]:
    return run_sweep(scenario(name), OPTIONS)


@pytest.mark.parametrize("name", SWEEPS)
def test_every_case_delivers_or_fails_promptly(name: str) -> None:
    results = swept(name)
    bad = [
        f"{case.name}: " + "; ".join(c.measured for c in run.checks if not c.ok)
        for case, run in results
        if not run.ok
    ]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", SWEEPS)
def test_the_sweep_has_both_kinds_of_case(name: str) -> None:
    cases = sweep_cases(scenario(name))
    assert any(c.path_left for c in cases)
    assert any(not c.path_left for c in cases)


@pytest.mark.parametrize("name", SWEEPS)
def test_no_path_cases_fail_with_a_reason(name: str) -> None:
    for case, run in swept(name):
        if not case.path_left:
            assert all(t.failure for t in run.transfers), case.name


@pytest.mark.parametrize("name", SWEEPS)
def test_negative_control_is_caught_on_the_no_path_cases(name: str) -> None:
    s = scenario(name)
    no_path = [c for c in sweep_cases(s) if not c.path_left]
    for control in s.negative_controls:
        variant = control_variant(control)
        caught = [
            not run_checked(
                s,
                replace(variant, timeline=case.timeline),
                OPTIONS,
                assertions=sweep_assertions(s, case),
            )[0].ok
            for case in no_path
        ]
        assert any(caught), f"{name}: {control.name} is not caught on any case"
