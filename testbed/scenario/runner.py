"""Running scenarios: one run with its checks, its negative controls, a sweep, a compare.

``mode`` picks the fabric through the modes registry (:mod:`testbed.modes`); a run goes
through the one fabric interface (:mod:`testbed.scenario.fabric`) and nothing else.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from testbed.modes import mode
from testbed.scenario.checks import compare_checks, completion_ratio, evaluate
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.fabric import Variant, run_on
from testbed.scenario.model import Assertions, NegativeControl, Scenario
from testbed.scenario.progress import ProgressBar
from testbed.scenario.results import Check, RunResult
from testbed.scenario.run_options import RunOptions
from topologies import LinkKind, Role, Topology
from topologies.events import Event, LinkDownEvent, LinkRef, SwitchDownEvent

DEFAULT_FAILURE_BOUND_NS = 5_000_000  # a sweep case with no path left must fail by then

Say = Callable[[str], None]


def execute(
    scenario: Scenario,
    variant: Variant,
    options: RunOptions,
    out_dir: Path | None = None,
) -> RunResult:
    """One run of ``scenario`` as changed by ``variant``, without checks."""
    spec = mode(options.mode)
    bar = (
        ProgressBar(scenario.duration_ns, f"{scenario.name} ({variant.name})")
        if options.progress
        else None
    )
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    try:
        return run_on(spec.make(scenario, variant, options, out_dir=out_dir, progress=bar))
    finally:
        if bar is not None:
            bar.close()


def run_checked(
    scenario: Scenario,
    variant: Variant,
    options: RunOptions,
    *,
    assertions: Assertions | None = None,
    out_dir: Path | None = None,
) -> tuple[RunResult, RunResult | None]:
    """The run and, when an assertion compares with it, the run without the timeline;
    the run's ``checks`` hold the evaluated assertions."""
    assertions = assertions if assertions is not None else scenario.assertions
    run = execute(scenario, variant, options, out_dir)
    baseline = None
    if assertions.needs_baseline():
        baseline = execute(
            scenario,
            replace(variant, name=f"{variant.name}-baseline", timeline=()),
            options,
            out_dir / "baseline" if out_dir is not None else None,
        )
    run.checks = evaluate(scenario, assertions, run, baseline)
    return run, baseline


def control_variant(control: NegativeControl, base: Variant | None = None) -> Variant:
    base = base or Variant()
    return replace(
        base,
        name=f"control:{control.name}",
        nic={**base.nic, **control.nic},
        fabric={**base.fabric, **control.fabric},
    )


def run_controls(
    scenario: Scenario, options: RunOptions
) -> list[tuple[NegativeControl, RunResult]]:
    """Each negative control's run; the scenario's assertions must fail on every one."""
    return [
        (control, run_checked(scenario, control_variant(control), options)[0])
        for control in scenario.negative_controls
    ]


def control_caught(control: NegativeControl, run: RunResult) -> tuple[bool, str]:
    """Whether ``run`` (under ``control``) is caught, and how: every assertion the control
    names in ``caught_by`` fails (any failing check when it names none)."""
    failed = [c for c in run.checks if not c.ok]
    if not control.caught_by:
        return bool(failed), "; ".join(f"{c.assertion or c.name}: {c.measured}" for c in failed)
    missed = [path for path in control.caught_by if not run.failed(path)]
    if missed:
        return False, "still hold: " + ", ".join(missed)
    return True, "; ".join(
        f"{c.assertion}: {c.measured}" for c in failed if c.assertion in control.caught_by
    )


# ------------------------------------------------------------------ compare


@dataclass
class Comparison:
    """A scenario run with MRC and with RoCE, and the checks between the two runs."""

    scenario: Scenario
    mrc: RunResult
    roce: RunResult
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.mrc.ok and self.roce.ok and all(c.ok for c in self.checks)

    @property
    def completion_ratio(self) -> float | None:
        return completion_ratio(self.mrc, self.roce)


def compare(scenario: Scenario, options: RunOptions, out_dir: Path | None = None) -> Comparison:
    """MRC and the RoCE baseline on the same fabric, timeline and seed."""
    if scenario.sweep is not None:
        raise ScenarioRunError(
            f"{scenario.name}: a sweep runs one case per failure set; compare takes a "
            "scenario with a timeline"
        )
    mrc, _ = run_checked(
        scenario,
        Variant(name="mrc", transport="mrc"),
        options,
        out_dir=out_dir / "mrc" if out_dir is not None else None,
    )
    roce, _ = run_checked(
        scenario,
        Variant(name="roce", transport="roce"),
        options,
        assertions=scenario.roce or Assertions(byte_exact=False),
        out_dir=out_dir / "roce" if out_dir is not None else None,
    )
    return Comparison(scenario, mrc, roce, compare_checks(scenario.assertions, mrc, roce, scenario))


# ------------------------------------------------------------------ sweeps


@dataclass(frozen=True)
class SweepCase:
    """One case of a failure sweep: its name, the failures it injects and whether every flow
    still has a path."""

    name: str
    timeline: tuple[Event, ...]
    path_left: bool  # every flow still has a path between its ends


def sweep_cases(scenario: Scenario) -> list[SweepCase]:
    """Every combination of ``sweep.size`` simultaneous failures among ``sweep.of``."""
    sweep = scenario.sweep
    if sweep is None:
        return []
    topo = scenario.topology
    elements: list[Event] = []
    if "switches" in sweep.kinds:
        elements += [SwitchDownEvent(at_ns=sweep.at_ns, switch=s.name) for s in topo.switches]
    for kind, wanted in (("links", LinkKind.FABRIC), ("access_links", LinkKind.ACCESS)):
        if kind in sweep.kinds:
            elements += [
                LinkDownEvent(at_ns=sweep.at_ns, link=LinkRef(link.a.node, link.b.node))
                for link in topo.links()
                if link.kind is wanted
            ]
    flows = scenario.flows()
    cases = []
    for combo in itertools.combinations(elements, sweep.size):
        dead_switches = {e.switch for e in combo if isinstance(e, SwitchDownEvent)}
        dead_links = {
            frozenset((e.link.a, e.link.b)) for e in combo if isinstance(e, LinkDownEvent)
        }
        left = all(has_path(topo, f.src, f.dst, dead_switches, dead_links) for f in flows)
        name = " + ".join(e.describe() for e in combo)
        cases.append(SweepCase(name, tuple(combo), left))
    return cases


def has_path(
    topo: Topology,
    src: str,
    dst: str,
    dead_switches: set[str],
    dead_links: set[frozenset[str]],
) -> bool:
    """Whether some plane still joins ``src`` and ``dst`` (T0 -> [T1 -> T0])."""

    def up(a: str, b: str) -> bool:
        return frozenset((a, b)) not in dead_links and not {a, b} & dead_switches

    for plane in range(topo.plane_count):
        t0_src = topo.nic_port(src, plane).t0
        t0_dst = topo.nic_port(dst, plane).t0
        if not (up(src, t0_src) and up(dst, t0_dst)):
            continue
        if t0_src == t0_dst:
            return True
        for t1 in _t1_names(topo, plane):
            if up(t0_src, t1) and up(t1, t0_dst):
                return True
    return False


def _t1_names(topo: Topology, plane: int) -> list[str]:
    return [s.name for s in topo.switches if s.plane == plane and s.role is Role.T1]


def sweep_assertions(scenario: Scenario, case: SweepCase) -> Assertions:
    """A case with a path left keeps the scenario's assertions; one without must fail
    promptly and specifically instead."""
    if case.path_left:
        return replace(scenario.assertions, expect_failure_within_ns=None)
    bound = scenario.assertions.expect_failure_within_ns or DEFAULT_FAILURE_BOUND_NS
    return Assertions(byte_exact=False, expect_failure_within_ns=bound)


def run_sweep(
    scenario: Scenario, options: RunOptions, say: Say | None = None
) -> list[tuple[SweepCase, RunResult]]:
    out = []
    cases = sweep_cases(scenario)
    for number, case in enumerate(cases, 1):
        if say is not None:
            say(f"case {number}/{len(cases)}: {case.name}")
        variant = Variant(name=f"case:{case.name}", timeline=case.timeline)
        run, _ = run_checked(
            scenario, variant, options, assertions=sweep_assertions(scenario, case)
        )
        out.append((case, run))
    return out
