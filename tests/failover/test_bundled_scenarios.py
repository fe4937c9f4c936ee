"""Every bundled scenario on the virtual fabric: its claims hold on every seed (or are
marked not reproduced), each negative control breaks the assertion it names, and RoCE is
worse where the paper says so (docs/results.md).

CI runs the seeds of ``FAST_SEEDS``; ``-m slow`` runs the rest of ``BUNDLED_SEEDS``.
"""

from __future__ import annotations

import pytest

from testbed.scenario.load import bundled_names
from testbed.scenario.model import Scenario
from testbed.scenario.results import Check, RunResult
from testbed.scenario.runner import control_caught
from testbed.scenario.seeds import BUNDLED_SEEDS, distributions
from topologies.events import EvDropEvent, Event, LinkRef, LossEvent, PortRef

from .runs import (
    FAST_SEEDS,
    SLOW_SEEDS,
    compared,
    comparison,
    control_run,
    heavy,
    main_run,
    plain_names,
    scenario,
)

PLAIN = plain_names()
SLOW = (pytest.mark.slow,)


def _name(n: str) -> object:
    """A scenario as a parameter: the loaded ones are ``slow`` (minutes per run)."""
    return pytest.param(n, id=n, marks=SLOW if heavy(n) else ())


CONTROLS = [
    pytest.param(n, c.name, id=f"{n}-{c.name}", marks=SLOW if heavy(n) else ())
    for n in PLAIN
    for c in scenario(n).negative_controls
]
SEEDS = [pytest.param(s, id=f"seed{s}") for s in FAST_SEEDS] + [
    pytest.param(s, id=f"seed{s}", marks=SLOW) for s in SLOW_SEEDS
]


def failed(run: RunResult) -> str:
    return "\n".join(
        f"{c.assertion}: {c.name}: {c.measured} (expected {c.expected})"
        for c in run.checks
        if not c.accepted
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
def test_every_scenario_has_assertions_and_a_negative_control_naming_its_catch(
    name: str,
) -> None:
    s = scenario(name)
    assert s.negative_controls, f"{name} has no negative control"
    assert s.assertions.byte_exact
    for control in s.negative_controls:
        assert control.caught_by, f"{name}: {control.name} does not say what catches it"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", [_name(n) for n in PLAIN])
def test_scenario_holds_on_the_virtual_fabric(name: str, seed: int) -> None:
    run = main_run(name, seed)
    assert run.checks, f"{name}: nothing was checked"
    assert run.ok, f"{name}, seed {seed}:\n{failed(run)}"
    assert all(t.intact for t in run.transfers)


@pytest.mark.parametrize(("name", "control"), CONTROLS)
def test_negative_control_is_caught_by_the_assertion_it_names(name: str, control: str) -> None:
    (wanted,) = [c for c in scenario(name).negative_controls if c.name == control]
    caught, how = control_caught(wanted, control_run(name, control))
    assert caught, f"{name}: {control}: {how}"
    # the control changes the verdict: what catches it holds without it (on the same
    # seed), even where the claim is marked not reproduced on other seeds
    held = main_run(name)
    still_failing = [path for path in wanted.caught_by if held.failed(path)]
    assert not still_failing, f"{name}: {control}: fails without the control too: {still_failing}"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", [_name(n) for n in PLAIN if compared(scenario(n))])
def test_roce_behaves_as_the_paper_says(name: str, seed: int) -> None:
    """Every comparison states a claim about the RoCE baseline (a cross-run check, or a
    check of the RoCE run beyond delivery) and it holds; where RoCE is said to be
    slower, it is."""
    result = comparison(name, seed)
    claims = [*result.checks, *(c for c in result.roce.checks if c.name != "byte-exact delivery")]
    assert claims, f"{name}: no claim about RoCE"
    assert result.ok, "\n".join(
        f"{c.assertion}: {c.name}: {c.measured} (expected {c.expected})"
        for c in [*result.roce.checks, *result.checks]
        if not c.accepted
    )
    if scenario(name).assertions.roce_slower_by is not None:
        assert result.completion_ratio is not None and result.completion_ratio > 1


@pytest.mark.parametrize("name", [_name(n) for n in PLAIN if scenario(n).assertions.repath_max_ns])
def test_a_repath_is_checked_for_every_path_cutting_event(name: str) -> None:
    run = main_run(name)
    cutting = [
        e
        for e in run.events
        if e.kind in ("link_down", "switch_down", "port_down", "flap")
        and e.params.get("affected_evs")
    ]
    checked = [c for c in run.checks if c.assertion == "assertions.repath_max"]
    assert len(checked) >= len(cutting) > 0
    for event in cutting:
        assert event.repath_ns and all(v is not None for v in event.repath_ns), event


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in PLAIN if scenario(n).not_reproduced])
def test_a_claim_marked_not_reproduced_is_not_reproduced_on_some_seed(name: str) -> None:
    """A mark that no seed needs any more hides a reproduced claim: remove it. The seeds
    run in order until every marked claim has failed on one (usually the first: a heavy
    scenario need not run all 16), else all of them."""
    per_seed: list[tuple[int, list[Check]]] = []
    for seed in BUNDLED_SEEDS:
        if compared(scenario(name)):
            c = comparison(name, seed)
            checks = [*c.mrc.checks, *c.roce.checks, *c.checks]
        else:
            checks = list(main_run(name, seed).checks)
        per_seed.append((seed, checks))
        marked = [d for d in distributions(per_seed) if d.not_reproduced is not None]
        if all(d.passes < len(d.oks) for d in marked):
            return
    for d in distributions(per_seed):
        if d.not_reproduced is not None:
            assert d.passes < len(d.oks), f"{name}: {d.assertion} now holds on every seed"


# ------------------------------------------------------------------ faults over the planes


def planes_of(s: Scenario, event: Event) -> set[int]:
    """The planes whose paths a timeline event breaks (a loss on every link: all)."""
    topo = s.topology
    if isinstance(event, EvDropEvent):
        return {event.plane}
    if isinstance(event, LossEvent):
        links = event.links or tuple(LinkRef(x.a.node, x.b.node) for x in topo.links())
        return {plane for link in links for plane in planes_of_link(s, link)}
    target = event.target
    if isinstance(target, PortRef):
        return {target.plane}
    if isinstance(target, LinkRef):
        return planes_of_link(s, target)
    if isinstance(target, str) and any(sw.name == target for sw in topo.switches):
        return {topo.switch(target).plane}
    return set()


def planes_of_link(s: Scenario, link: LinkRef) -> set[int]:
    switches = {sw.name: sw.plane for sw in s.topology.switches}
    return {switches[end] for end in (link.a, link.b) if end in switches}


def test_faults_are_spread_over_the_planes() -> None:
    """Faults in plane 0 only would let a NIC that mishandles every other plane pass."""
    per_scenario = {
        n: set().union(*(planes_of(scenario(n), e) for e in scenario(n).timeline))
        for n in PLAIN
        if scenario(n).timeline
    }
    covered = set().union(*per_scenario.values())
    assert covered >= set(range(8)), covered
    only_plane_0 = [n for n, planes in per_scenario.items() if planes == {0}]
    assert not only_plane_0, only_plane_0


def test_bundled_seeds_are_the_fast_and_the_slow_ones() -> None:
    assert sorted(FAST_SEEDS + SLOW_SEEDS) == list(BUNDLED_SEEDS)
