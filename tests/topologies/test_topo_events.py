"""The fault vocabulary (topologies.events): every kind checks its own fields when it is
made, its names against a topology, and expresses itself through one FaultSink method."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import topologies
from topologies import events
from topologies.events import (
    FAULT_KINDS,
    EvDropEvent,
    Event,
    FlapEvent,
    LinkRef,
    LossEvent,
    PortRef,
    SwitchDownEvent,
    SwitchUpEvent,
)
from topologies.exceptions import (
    EventError,
    EventTimeError,
    EventValueError,
    TopologyError,
    UnknownEventTargetError,
)

LINK = LinkRef("p0-t0-0", "p0-t1-0")
PORT = PortRef("nic0", 1)


@pytest.fixture(scope="module")
def tiny() -> topologies.Topology:
    return topologies.load("tiny")


def every_kind() -> list[Event]:
    return [
        LINK.change(1, up=False),
        LINK.change(2, up=True),
        SwitchDownEvent(at_ns=3, switch="p1-t1-0"),
        SwitchUpEvent(at_ns=4, switch="p1-t1-0"),
        PORT.change(5, up=False),
        PORT.change(6, up=True),
        FlapEvent(at_ns=7, of=PORT, period_ns=40, down_ns=20, until_ns=100),
        LossEvent(at_ns=8, links=(LINK,), rate=0.01, until_ns=9),
        EvDropEvent(at_ns=9, nic="nic0", ev=topologies.encode_ev(0, 0), fraction=0.2),
    ]


class Recorder:
    """A FaultSink that notes the method each event calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, str]] = []

    def __getattr__(self, name: str) -> Any:
        return lambda index, event: self.calls.append((name, index, event.kind))


def test_each_kind_calls_the_one_sink_method_that_expresses_it() -> None:
    sink = Recorder()
    for index, event in enumerate(every_kind()):
        event.apply_to(sink, index)
    assert [(name, kind) for name, _, kind in sink.calls] == [
        ("link_state", "link_down"),
        ("link_state", "link_up"),
        ("switch_state", "switch_down"),
        ("switch_state", "switch_up"),
        ("port_state", "port_down"),
        ("port_state", "port_up"),
        ("flap", "flap"),
        ("loss", "loss"),
        ("ev_drop", "ev_drop"),
    ]
    assert {kind for _, _, kind in sink.calls} == set(FAULT_KINDS)
    methods = {n for n, _ in inspect.getmembers(events.FaultSink, inspect.isfunction)}
    assert {name for name, _, _ in sink.calls} == {m for m in methods if not m.startswith("_")}
    Event(at_ns=0).apply_to(sink, 0)  # the base event changes nothing
    assert len(sink.calls) == len(FAULT_KINDS)


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: LINK.change(-1, up=False), EventTimeError, "before the start"),
        (lambda: LINK.change(1.5, up=False), EventValueError, "integer number of ns"),  # type: ignore[arg-type]
        (lambda: SwitchDownEvent(at_ns=True, switch="s"), EventValueError, "at_ns"),
        (lambda: SwitchDownEvent(at_ns=1, switch=""), EventValueError, "switch"),
        (lambda: LinkRef("a", "a"), EventValueError, "itself"),
        (lambda: LinkRef("a", 3), EventValueError, "node name"),  # type: ignore[arg-type]
        (lambda: PortRef("nic0", -1), EventValueError, "plane"),
        (lambda: PortRef("nic0", "1"), EventValueError, "plane"),  # type: ignore[arg-type]
        (
            lambda: FlapEvent(at_ns=0, of=LINK, period_ns=0, down_ns=0, until_ns=10),
            EventValueError,
            "period_ns must be a positive integer",
        ),
        (
            lambda: FlapEvent(at_ns=0, of=LINK, period_ns=10, down_ns=10, until_ns=100),
            EventValueError,
            "down_ns=10 must be shorter",
        ),
        (
            lambda: FlapEvent(at_ns=50, of=LINK, period_ns=10, down_ns=5, until_ns=50),
            EventTimeError,
            "until_ns=50 is not after",
        ),
        (lambda: LossEvent(at_ns=0, links=(LINK,), rate=1.5), EventValueError, "rate"),
        (lambda: LossEvent(at_ns=0, links=[LINK], rate=0.1), EventValueError, "tuple"),  # type: ignore[arg-type]
        (
            lambda: LossEvent(at_ns=10, links=(), rate=0.1, until_ns=5),
            EventTimeError,
            "until_ns=5",
        ),
        (
            lambda: EvDropEvent(at_ns=0, nic="nic0", ev=1 << 32, fraction=0.5),
            EventValueError,
            "32-bit",
        ),
        (lambda: EvDropEvent(at_ns=0, nic="nic0", ev=-1, fraction=0.5), EventValueError, "ev"),
        (
            lambda: EvDropEvent(at_ns=0, nic="nic0", ev=1, fraction=-0.1),
            EventValueError,
            "fraction",
        ),
    ],
)
def test_a_bad_event_is_refused_when_it_is_made(make: Any, error: type, words: str) -> None:
    with pytest.raises(error, match=words) as caught:
        make()
    assert isinstance(caught.value, EventError) and isinstance(caught.value, TopologyError)


@pytest.mark.parametrize(
    ("event", "words"),
    [
        (LinkRef("p0-t0-0", "p0-t1-9").change(1, up=False), "p0-t1-9"),
        (LinkRef("p0-t0-0", "p1-t1-0").change(1, up=True), "p0-t0-0 -- p1-t1-0"),
        (SwitchDownEvent(at_ns=1, switch="p9-t1-0"), "p9-t1-0"),
        (PortRef("nic9", 0).change(1, up=False), "nic9"),
        (PortRef("nic0", 7).change(1, up=True), "nic0 port 7"),
        (FlapEvent(at_ns=0, of=PortRef("nic0", 7), period_ns=2, down_ns=1, until_ns=9), "7"),
        (LossEvent(at_ns=0, links=(LINK, LinkRef("nic0", "p1-t1-0")), rate=0.1), "nic0"),
        (EvDropEvent(at_ns=0, nic="nic9", ev=1, fraction=0.5), "nic9"),
    ],
)
def test_names_the_topology_lacks_are_refused(
    tiny: topologies.Topology, event: Event, words: str
) -> None:
    with pytest.raises(UnknownEventTargetError, match=words):
        event.check(tiny)


def test_every_kind_checks_against_the_topology_it_names(tiny: topologies.Topology) -> None:
    for event in every_kind():
        event.check(tiny)


def test_a_loss_on_no_links_is_on_every_link_of_the_topology(tiny: topologies.Topology) -> None:
    every = LossEvent(at_ns=0, links=(), rate=0.1).links_in(tiny)
    assert every == tuple(LinkRef(ln.a.node, ln.b.node) for ln in tiny.links())
    assert LossEvent(at_ns=0, links=(LINK,), rate=0.1).links_in(tiny) == (LINK,)


def test_descriptions_and_params_are_the_results_record() -> None:
    flap, loss, drop = every_kind()[6:]
    assert flap.describe() == "nic0 port 1 flapping"
    assert loss.describe() == "1.00% loss on p0-t0-0 -- p0-t1-0"
    assert drop.describe() == "20% drop on EV 0x00000000 from nic0"
    assert drop.params() == {
        "nic": "nic0",
        "ev": 0,
        "plane": None,
        "t1": None,
        "fraction": 0.2,
        "until_ns": None,
    }
    assert events.target_json(PORT.change(0, up=False).target) == {"nic": "nic0", "plane": 1}
