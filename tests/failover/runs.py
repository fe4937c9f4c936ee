"""Runs of the bundled scenarios on the virtual fabric, each made once per test session.

Every bundled assertion must hold on every seed of ``BUNDLED_SEEDS`` (or be marked
``not_reproduced``): CI runs :data:`FAST_SEEDS`, ``-m slow`` the others.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from testbed.scenario.load import bundled_names, load
from testbed.scenario.model import Scenario
from testbed.scenario.results import RunResult
from testbed.scenario.runner import (
    Comparison,
    RunOptions,
    compare,
    control_variant,
    run_checked,
)
from testbed.scenario.seeds import BUNDLED_SEEDS, is_heavy
from testbed.scenario.virtual import Variant

OPTIONS = RunOptions(mode="virtual")
FAST_SEEDS = (1, 2)
SLOW_SEEDS = tuple(s for s in BUNDLED_SEEDS if s not in FAST_SEEDS)


def compared(scenario: Scenario) -> bool:
    """Whether the scenario says something about RoCE (then it runs as a comparison)."""
    return scenario.roce is not None or scenario.assertions.roce_slower_by is not None


@cache
def scenario(name: str) -> Scenario:
    return load(name)


def options(seed: int | None) -> RunOptions:
    return OPTIONS if seed is None else replace(OPTIONS, seed=seed)


@cache
def comparison(name: str, seed: int | None = None) -> Comparison:
    return compare(scenario(name), options(seed))


@cache
def main_run(name: str, seed: int | None = None) -> RunResult:
    s = scenario(name)
    if compared(s):
        return comparison(name, seed).mrc
    return run_checked(s, Variant(), options(seed))[0]


@cache
def control_run(name: str, control: str) -> RunResult:
    s = scenario(name)
    (wanted,) = [c for c in s.negative_controls if c.name == control]
    return run_checked(s, control_variant(wanted), OPTIONS)[0]


def heavy(name: str) -> bool:
    """A scenario on a loaded fabric (minutes per run on a 2-core machine): it runs on
    every seed only with -m slow."""
    return is_heavy(scenario(name))


def plain_names() -> list[str]:
    return [n for n in bundled_names() if scenario(n).sweep is None]


def sweep_names() -> list[str]:
    return [n for n in bundled_names() if scenario(n).sweep is not None]
