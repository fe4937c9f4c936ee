"""The one interface a scenario runs on, whatever the mode (docs/architecture.md, "One
fabric interface"): :class:`ScenarioFabric`.

Two implementations: :class:`testbed.scenario.virtual.VirtualRun` (vfabric, virtual time)
and :class:`testbed.scenario.process.ProcessRun` (p4emu-switch or BMv2 processes and
nic-emu processes, time-dilated); :mod:`testbed.modes` says which mode uses which. The
runner (:func:`testbed.scenario.runner.execute`) knows only this module.

A run goes through the same steps on both:

1. the fabric is made from the scenario, the variant and the options: it refuses there
   what it cannot run (a sweep, switch settings, options of the other fabric) and
   nothing starts;
2. :meth:`ScenarioFabric.schedule` hands it the timeline in the one fault vocabulary
   (:mod:`topologies.events`; a scenario's incast is traffic): each event is checked
   against the topology and calls the method of :class:`~topologies.events.FaultSink`
   that expresses it, and a fabric refuses a kind it cannot express with a specific
   error, before anything starts;
3. :meth:`~ScenarioFabric.up` brings it up, :meth:`~ScenarioFabric.start` gives it the
   traffic, :meth:`~ScenarioFabric.run` runs the timeline to the scenario's end,
   :meth:`~ScenarioFabric.result` says what happened and :meth:`~ScenarioFabric.down`
   tears it down (always, once up).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.model import Flow, Scenario
from testbed.scenario.results import RunResult
from testbed.scenario.run_options import RunOptions
from topologies.events import (
    EvDropEvent,
    Event,
    FlapEvent,
    LinkDownEvent,
    LinkUpEvent,
    LossEvent,
    PortDownEvent,
    PortUpEvent,
    SwitchDownEvent,
    SwitchUpEvent,
)
from topologies.exceptions import EventError

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Variant:
    """How one run differs from the scenario as written."""

    name: str = "mrc"
    transport: str | None = None  # override every flow's transport (None: as written)
    nic: dict[str, Any] = field(default_factory=dict)  # more NicConfig overrides
    fabric: dict[str, Any] = field(default_factory=dict)  # trimming / ecn overrides
    timeline: tuple[Event, ...] | None = None  # replaces the scenario's timeline


class ScenarioFabric(ABC):
    """A fabric one run of a scenario goes through (module docstring: the steps).

    ``scenario`` is the scenario as the variant changes it (its timeline replaced when
    the variant gives one); subclasses refuse in ``__init__`` what they cannot run."""

    def __init__(
        self,
        scenario: Scenario,
        variant: Variant,
        options: RunOptions,
        *,
        out_dir: Path | None = None,
        progress: Progress | None = None,
    ) -> None:
        if variant.timeline is not None:
            scenario = replace(scenario, timeline=variant.timeline)
        self.scenario = scenario
        self.variant = variant
        self.options = options
        self.out_dir = out_dir
        self.progress = progress

    def schedule(self, timeline: tuple[Event, ...]) -> None:
        """Every event of ``timeline``, in order, through the method that expresses it;
        an event naming what the scenario's topology lacks is refused first."""
        for index, event in enumerate(timeline):
            try:
                event.check(self.scenario.topology)
            except EventError as exc:
                raise ScenarioRunError(
                    f"{self.scenario.source}: timeline[{index}]: {exc}"
                ) from None
            event.apply_to(self, index)

    def flows(self) -> list[Flow]:
        """The run's transfers: the scenario's, with the variant's transport."""
        return self.scenario.flows(self.variant.transport)

    # ------------------------------------------------------------ the fault vocabulary

    @abstractmethod
    def link_state(self, index: int, event: LinkDownEvent | LinkUpEvent) -> None:
        """A link goes down or comes back at ``event.at_ns``."""

    @abstractmethod
    def switch_state(self, index: int, event: SwitchDownEvent | SwitchUpEvent) -> None:
        """A switch dies or comes back at ``event.at_ns``."""

    @abstractmethod
    def port_state(self, index: int, event: PortDownEvent | PortUpEvent) -> None:
        """A NIC port goes down or comes back at ``event.at_ns``."""

    @abstractmethod
    def flap(self, index: int, event: FlapEvent) -> None:
        """A link or NIC port flaps."""

    @abstractmethod
    def loss(self, index: int, event: LossEvent) -> None:
        """Random loss on links."""

    @abstractmethod
    def ev_drop(self, index: int, event: EvDropEvent) -> None:
        """A fraction of one EV's packets is dropped."""

    # ------------------------------------------------------------ the run

    @abstractmethod
    def up(self) -> None:
        """Brings the fabric up (builds it, or starts its processes)."""

    @abstractmethod
    def start(self, flows: list[Flow]) -> None:
        """The run's traffic: each flow starts at its ``start_ns``."""

    @abstractmethod
    def run(self, until_ns: int) -> None:
        """Runs the timeline until every transfer is over, or ``until_ns``."""

    @abstractmethod
    def result(self) -> RunResult:
        """What the run measured (no checks yet)."""

    @abstractmethod
    def down(self, failure: BaseException | None = None) -> None:
        """Tears the fabric down (after :meth:`up`, whatever happened). ``failure``: what
        made the run fail, if anything; a fabric with evidence beyond the run's outputs
        keeps it then and adds a note to ``failure`` saying where (the process fabric:
        its run directory, moved to ``failed/``)."""


def run_on(fabric: ScenarioFabric) -> RunResult:
    """One run of ``fabric``'s scenario: the steps of the module docstring."""
    fabric.schedule(fabric.scenario.timeline)
    fabric.up()
    failure: BaseException | None = None
    try:
        fabric.start(fabric.flows())
        fabric.run(fabric.scenario.duration_ns)
        return fabric.result()
    except BaseException as exc:
        failure = exc
        raise
    finally:
        fabric.down(failure)
