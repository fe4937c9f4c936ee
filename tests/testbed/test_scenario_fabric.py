"""The one fabric interface (testbed.scenario.fabric): the scenario's events express
themselves through it, both fabrics implement it, and a run goes through its steps."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from testbed.exceptions import UsageError
from testbed.fabric import Fabric
from testbed.scenario import model
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.fabric import ScenarioFabric, Variant, run_on
from testbed.scenario.load import load, loads
from testbed.scenario.results import RunResult
from testbed.scenario.run_options import RunOptions
from testbed.scenario.virtual import VirtualRun
from topologies import events

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
        for name, _ in inspect.getmembers(events.FaultSink, inspect.isfunction)
        if not name.startswith("_")
    }
    assert sink == set(VOCABULARY)
    assert ScenarioFabric.__abstractmethods__ == sink | {"up", "start", "run", "result", "down"}


def test_a_flap_is_made_of_its_down_and_up_events() -> None:
    flap = events.FlapEvent(
        at_ns=10, of=events.LinkRef("a", "b"), period_ns=40, down_ns=20, until_ns=70
    )
    assert [(e.kind, e.at_ns) for e in flap.edges()] == [
        ("link_down", 10),
        ("link_up", 30),
        ("link_down", 50),
        ("link_up", 70),  # cut short by until, left up
    ]
    port = events.PortRef("nic0", 1)
    assert port.change(5, up=False) == events.PortDownEvent(at_ns=5, port=port)


def test_the_virtual_fabric_is_handed_the_events_themselves() -> None:
    """No translation: vfabric applies the vocabulary's events (vfabric.faults)."""
    scenario = loads(EVERY_KIND, source="every-kind.yaml")
    fabric = VirtualRun(scenario, Variant(), RunOptions())
    fabric.schedule(scenario.timeline)
    assert fabric.pending == list(enumerate(scenario.timeline[:9]))  # the incast is traffic


def test_the_process_fabric_applies_the_same_events() -> None:
    """testbed.fabric.Fabric is a FaultSink of the same vocabulary: an event applied to it
    is the call that makes it now; a flap is applied as its edges, loss and EV drops are
    refused with a specific error."""
    scenario = loads(EVERY_KIND, source="every-kind.yaml")
    calls: list[tuple[Any, ...]] = []
    fabric = Fabric.__new__(Fabric)  # no run directory: the calls are noted
    for name in ("link_down", "link_up", "switch_down", "switch_up", "port_down", "port_up"):
        setattr(fabric, name, lambda *args, name=name: calls.append((name, *args)))
    for index, event in enumerate(scenario.timeline[:6]):
        event.apply_to(fabric, index)
    assert calls == [
        ("link_down", "p0-t0-0", "p0-t1-0"),
        ("link_up", "p0-t0-0", "p0-t1-0"),
        ("switch_down", "p1-t1-0"),
        ("switch_up", "p1-t1-0"),
        ("port_down", "nic0", 1),
        ("port_up", "nic0", 1),
    ]
    flap, loss, ev_drop = scenario.timeline[6:9]
    for edge in flap.edges():
        edge.apply_to(fabric, 6)
    assert calls[6:8] == [("port_down", "nic1", 0), ("port_up", "nic1", 0)]
    for event, words in ((flap, "edges"), (loss, "virtual fabric"), (ev_drop, "virtual fabric")):
        with pytest.raises(UsageError, match=words):
            event.apply_to(fabric, 0)


def test_an_event_naming_what_the_topology_lacks_is_refused_before_the_run() -> None:
    scenario = loads(EVERY_KIND, source="every-kind.yaml")
    bad = (events.LinkRef("p0-t0-0", "p1-t1-0").change(10, up=False),)
    with pytest.raises(ScenarioRunError, match=r"timeline\[0\]: link p0-t0-0 -- p1-t1-0"):
        VirtualRun(scenario, Variant(timeline=bad), RunOptions()).schedule(bad)


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

    def down(self, failure: BaseException | None = None) -> None:
        self._note("down" if failure is None else f"down after {failure}")


@pytest.mark.parametrize(
    ("fail", "steps"),
    [
        ("", ["link_state 0", "up", "start 1", "run 3000000", "result", "down"]),
        (
            "run 3000000",
            ["link_state 0", "up", "start 1", "run 3000000", "down after run 3000000 failed"],
        ),  # down is told the failure (the process fabric keeps its evidence then)
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
