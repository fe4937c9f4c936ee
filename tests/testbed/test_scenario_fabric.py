"""The one fabric interface (testbed.scenario.fabric): the scenario's events express
themselves through it, both fabrics implement it, and a run goes through its steps."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from testbed.scenario import model
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.fabric import ScenarioFabric, Variant, run_on
from testbed.scenario.load import load, loads
from testbed.scenario.results import RunResult
from testbed.scenario.run_options import RunOptions
from testbed.scenario.virtual import VirtualRun
from vfabric import faults

EVERY_KIND = """
name: every-kind
topology: tiny
traffic: [{src: nic0, dst: nic3, bytes: 1MiB}]
timeline:
  - {at: 10us, link_down: [p0-t0-0, p0-t1-0]}
  - {at: 20us, link_up: [p0-t0-0, p0-t1-0]}
  - {at: 30us, switch_down: p1-t1-0}
  - {at: 40us, switch_up: p1-t1-0}
  - {at: 50us, port_down: [nic0, 1]}
  - {at: 60us, port_up: [nic0, 1]}
  - {at: 70us, flap: {port: [nic1, 0], period: 40us, down: 20us, until: 150us}}
  - {at: 80us, loss: {rate: 1%, links: [[p0-t0-0, p0-t1-0], [nic3, p0-t0-1]], until: 90us}}
  - {at: 90us, ev_drop: {nic: nic0, plane: 0, t1: 0, salt: 0, fraction: 20%}}
  - {at: 100us, incast: {senders: [nic1], dst: nic3, bytes: 64KiB}}
"""

VOCABULARY = ("link_state", "switch_state", "port_state", "flap", "loss", "ev_drop")


class Recorder:
    """A FaultSink that notes which method each event called."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, str]] = []

    def __getattr__(self, name: str) -> Any:
        if name not in VOCABULARY:
            raise AttributeError(name)
        return lambda index, event: self.calls.append((name, index, event.kind))


def test_each_event_calls_the_one_method_that_expresses_it() -> None:
    scenario = loads(EVERY_KIND, source="every-kind.yaml")
    sink = Recorder()
    for index, event in enumerate(scenario.timeline):
        event.apply_to(sink, index)
    assert sink.calls == [
        ("link_state", 0, "link_down"),
        ("link_state", 1, "link_up"),
        ("switch_state", 2, "switch_down"),
        ("switch_state", 3, "switch_up"),
        ("port_state", 4, "port_down"),
        ("port_state", 5, "port_up"),
        ("flap", 6, "flap"),
        ("loss", 7, "loss"),
        ("ev_drop", 8, "ev_drop"),
    ]  # the incast is traffic (Scenario.flows), not a change of the fabric
    assert {kind for _, _, kind in sink.calls} | {"incast"} == set(model.EVENT_KINDS)


def test_the_interface_is_the_vocabulary_and_the_steps_of_a_run() -> None:
    sink = {
        name
        for name, _ in inspect.getmembers(model.FaultSink, inspect.isfunction)
        if not name.startswith("_")
    }
    assert sink == set(VOCABULARY)
    assert ScenarioFabric.__abstractmethods__ == sink | {"up", "start", "run", "result", "down"}


def test_a_flap_is_made_of_its_down_and_up_events() -> None:
    flap = model.FlapEvent(
        at_ns=10, of=model.LinkRef("a", "b"), period_ns=40, down_ns=20, until_ns=70
    )
    assert [(e.kind, e.at_ns) for e in flap.edges()] == [
        ("link_down", 10),
        ("link_up", 30),
        ("link_down", 50),
        ("link_up", 70),  # cut short by until, left up
    ]
    port = model.PortRef("nic0", 1)
    assert port.change(5, up=False) == model.PortDownEvent(at_ns=5, port=port)


def test_the_virtual_fabric_expresses_every_kind_as_vfabric_faults() -> None:
    scenario = loads(EVERY_KIND, source="every-kind.yaml")
    fabric = VirtualRun(scenario, Variant(), RunOptions())
    fabric.schedule(scenario.timeline)
    assert fabric.pending == [
        (0, faults.LinkDown(10_000, "p0-t0-0", "p0-t1-0")),
        (1, faults.LinkUp(20_000, "p0-t0-0", "p0-t1-0")),
        (2, faults.SwitchDown(30_000, "p1-t1-0")),
        (3, faults.SwitchUp(40_000, "p1-t1-0")),
        (4, faults.NicPortDown(50_000, "nic0", 1)),
        (5, faults.NicPortUp(60_000, "nic0", 1)),
        (6, faults.Flap(70_000, "nic1", "p0-t0-0", 40_000, 20_000, 150_000)),
        (7, faults.LinkLoss(80_000, "p0-t0-0", "p0-t1-0", 0.01, 90_000)),
        (7, faults.LinkLoss(80_000, "nic3", "p0-t0-1", 0.01, 90_000)),
        (8, faults.EvDrop(90_000, "nic0", scenario.timeline[8].ev, 0.2, None)),
    ]


def test_the_virtual_fabric_refuses_a_time_dilation_factor() -> None:
    with pytest.raises(ScenarioRunError, match="--tdf is for the process fabric"):
        VirtualRun(load("t1-down"), Variant(), RunOptions(tdf=1024))


class Steps(ScenarioFabric):
    """A fabric that notes the steps it is taken through (``fail``: the step that raises)."""

    fail = ""

    def _note(self, step: str) -> None:
        self.steps.append(step)
        if step == self.fail:
            raise ScenarioRunError(f"{step} failed")

    def link_state(self, index: int, event: Any) -> None:
        self._note(f"link_state {index}")

    switch_state = port_state = flap = loss = ev_drop = link_state

    def up(self) -> None:
        self._note("up")

    def start(self, flows: list[model.Flow]) -> None:
        self._note(f"start {len(flows)}")

    def run(self, until_ns: int) -> None:
        self._note(f"run {until_ns}")

    def result(self) -> RunResult:
        self._note("result")
        return RunResult(
            self.scenario.name, "x", "test", "mrc", 1, "tiny", 0, 0.0, [], [], 1, {}, {}, []
        )

    def down(self) -> None:
        self._note("down")


@pytest.mark.parametrize(
    ("fail", "steps"),
    [
        ("", ["link_state 0", "up", "start 1", "run 3000000", "result", "down"]),
        ("run 3000000", ["link_state 0", "up", "start 1", "run 3000000", "down"]),
        ("up", ["link_state 0", "up"]),  # nothing up: nothing to tear down
        ("link_state 0", ["link_state 0"]),  # refused before anything starts
    ],
)
def test_a_run_goes_through_the_steps_and_is_torn_down(fail: str, steps: list[str]) -> None:
    scenario = load("t1-down")
    fabric = Steps(scenario, Variant(), RunOptions())
    fabric.steps = []
    fabric.fail = fail
    if fail:
        with pytest.raises(ScenarioRunError, match=f"{fail} failed"):
            run_on(fabric)
    else:
        assert run_on(fabric).scenario == "t1-down"
    assert fabric.steps == steps
