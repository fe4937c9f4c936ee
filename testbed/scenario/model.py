"""The scenario model: what a scenario file says, validated and resolved.

A :class:`Scenario` is built by :mod:`testbed.scenario.load` from a YAML file (format:
docs/scenarios.md). Everything in it is already checked against the topology: node
names exist, links join the nodes they name, times are integer nanoseconds, sizes bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from nic_emu.config import RoceConfig
from topologies.events import FAULT_KINDS, Event
from vfabric.pfc import PfcConfig

TRANSPORTS = ("mrc", "roce")
DEFAULT_ROCE_QPS = 16  # the MRC paper compares one MRC QP with 16 RoCE QPs (sources §5.5)
PATTERNS = ("pairs", "all_to_all", "permutation", "incast")


@dataclass(frozen=True, slots=True)
class Flow:
    """One transfer: ``nbytes`` from ``src`` to ``dst`` in ``messages`` messages."""

    traffic: str  # the traffic entry (or timeline incast) it comes from
    src: str
    dst: str
    nbytes: int
    messages: int
    connections: int
    transport: str
    start_ns: int

    @property
    def name(self) -> str:
        return f"{self.traffic}:{self.src}->{self.dst}"


@dataclass(frozen=True, slots=True)
class Traffic:
    """A traffic entry; patterns are expanded to ``pairs`` when the file is loaded."""

    name: str
    pattern: str
    pairs: tuple[tuple[str, str], ...]
    nbytes: int  # per pair
    messages: int
    connections: int
    transport: str
    start_ns: int

    def flows(self) -> list[Flow]:
        return [
            Flow(
                self.name,
                src,
                dst,
                self.nbytes,
                self.messages,
                self.connections,
                self.transport,
                self.start_ns,
            )
            for src, dst in self.pairs
        ]


# ------------------------------------------------------------------ timeline events
# A timeline is made of the one fault vocabulary's events (topologies.events, where
# FaultSink, LinkRef, PortRef... live) and of the scenario's own kind, the incast.


@dataclass(frozen=True, slots=True, kw_only=True)
class IncastEvent(Event):
    """Background traffic: every sender sends ``nbytes`` to ``dst`` at once."""

    kind: ClassVar[str] = "incast"
    senders: tuple[str, ...]
    dst: str
    nbytes: int
    messages: int
    transport: str

    def describe(self) -> str:
        return f"{len(self.senders)}-to-1 incast into {self.dst}"

    def params(self) -> dict[str, Any]:
        return {"senders": list(self.senders), "dst": self.dst, "bytes": self.nbytes}

    def flows(self, index: int, roce_qps: int = 1) -> list[Flow]:
        """One flow per sender: one QP each, ``roce_qps`` for a RoCE incast."""
        return [
            Flow(
                f"incast{index}",
                s,
                self.dst,
                self.nbytes,
                self.messages,
                roce_qps if self.transport == "roce" else 1,
                self.transport,
                self.at_ns,
            )
            for s in self.senders
        ]


EVENT_KINDS: dict[str, type[Event]] = {**FAULT_KINDS, IncastEvent.kind: IncastEvent}


# ------------------------------------------------------------------ assertions

GOODPUT_REFERENCES = ("before", "baseline", "line_rate")


@dataclass(frozen=True, slots=True)
class GoodputCheck:
    """Goodput in a window after an event compared with a reference.

    The window starts ``settle_ns`` after timeline event ``event`` and lasts
    ``window_ns``. The reference (``of``) is the same-length window just before the event
    (``before``), the same window of a run without the timeline (``baseline``) or the
    line rate of the sending NIC ports (``line_rate``); all traffic together (a traffic
    entry's own goodput: :class:`TrafficGoodputCheck`).
    """

    event: int
    of: str
    min_fraction: float | None
    max_fraction: float | None
    window_ns: int
    settle_ns: int


TRAFFIC_REFERENCES = ("baseline", "line_rate")


@dataclass(frozen=True, slots=True)
class TrafficGoodputCheck:
    """Average goodput of one traffic entry (its bytes over its completion time) as a
    fraction of the same traffic's in the run without the timeline (``of: baseline``) or
    of its line rate (``of: line_rate``: its senders' or its receivers' ports, the
    smaller)."""

    traffic: str
    min_fraction: float | None
    max_fraction: float | None
    of: str = "baseline"


@dataclass(frozen=True, slots=True)
class LatencyCheck:
    """The median message latency of one traffic entry (from its start to each message's
    completion at the sender: the write's completion) is at most ``max_ns``."""

    traffic: str
    max_ns: int


@dataclass(frozen=True, slots=True)
class Assertions:
    """What must hold of a run (docs/scenarios.md); a check whose value is None or empty is not
    made. Times in ns; ``section`` is where they are in the file."""

    byte_exact: bool = True
    expect_failure_within_ns: int | None = None  # every transfer must fail by then
    completion_max_ns: int | None = None
    repath_max_ns: int | None = None
    repath_median_ns: int | None = None  # the median over every path-cutting event's repaths
    retransmit_max_fraction: float | None = None  # retransmitted / delivered bytes
    goodput: tuple[GoodputCheck, ...] = ()
    traffic_goodput: tuple[TrafficGoodputCheck, ...] = ()
    ev_retired_within_ns: int | None = None  # an ev_drop's EV leaves service by then
    revived_within_ns: int | None = None  # after a link/port up: EVs revived and data on it
    trims_min: int | None = None
    nacks_min: int | None = None
    timeouts_max: int | None = None
    roce_slower_by: float | None = None  # compare: RoCE completion >= factor x MRC's
    roce_goodput_min: float | None = None  # compare: RoCE goodput >= this x MRC's
    stall_max_ns: int | None = None  # no gap in delivery longer than this while traffic runs
    message_latency: tuple[LatencyCheck, ...] = ()
    ideal_factor_max: float | None = None  # completion <= factor x the capacity-scaled ideal
    section: str = "assertions"  # where they are in the file ("assertions" or "roce")

    def path(self, key: str, index: int | None = None) -> str:
        """The assertion's path in the scenario file (``assertions.goodput[1]``): how a
        negative control's ``caught_by`` and ``not_reproduced`` name it."""
        return f"{self.section}.{key}" + ("" if index is None else f"[{index}]")

    def paths(self) -> list[str]:
        """The path of every assertion stated here, in the order :func:`evaluate
        <testbed.scenario.checks.evaluate>` checks them."""
        out = []
        if self.expect_failure_within_ns is not None:
            out.append(self.path("expect_failure_within"))
        elif self.byte_exact:
            out.append(self.path("byte_exact"))
        for key, value in (
            ("completion_max", self.completion_max_ns),
            ("completion_vs_ideal", self.ideal_factor_max),
            ("repath_max", self.repath_max_ns),
            ("repath_median", self.repath_median_ns),
            ("retransmit_max", self.retransmit_max_fraction),
            ("stall_max", self.stall_max_ns),
        ):
            if value is not None:
                out.append(self.path(key))
        out += [self.path("goodput", i) for i in range(len(self.goodput))]
        out += [self.path("traffic_goodput", i) for i in range(len(self.traffic_goodput))]
        out += [self.path("message_latency", i) for i in range(len(self.message_latency))]
        for key, value in (
            ("ev_retired_within", self.ev_retired_within_ns),
            ("revived_within", self.revived_within_ns),
            ("trims_min", self.trims_min),
            ("nacks_min", self.nacks_min),
            ("timeouts_max", self.timeouts_max),
            ("roce_slower_by", self.roce_slower_by),
            ("roce_goodput_min", self.roce_goodput_min),
        ):
            if value is not None:
                out.append(self.path(key))
        return out

    def needs_baseline(self) -> bool:
        return bool(self.traffic_goodput) or any(c.of == "baseline" for c in self.goodput)


@dataclass(frozen=True, slots=True)
class NegativeControl:
    """A configuration under which the scenario's assertions must fail."""

    name: str
    description: str
    nic: dict[str, Any] = field(default_factory=dict)
    fabric: dict[str, Any] = field(default_factory=dict)
    caught_by: tuple[str, ...] = ()  # assertion paths that must fail under it


@dataclass(frozen=True, slots=True)
class FabricSpec:
    """The fabric's switches as a scenario sets them: packet trimming and ECN marking on or off,
    every link's rate in Gb/s (None: the topology's) and PFC (None: none)."""

    trimming: bool = True
    ecn: bool = True
    rate_gbps: float | None = None  # override of every link's rate (topology link_defaults)
    # PFC for runs with RoCE traffic (their data class lossless); MRC-only runs stay lossy.
    # None (``pfc: false``): no PFC at all.
    pfc: PfcConfig | None = field(default_factory=PfcConfig)


@dataclass(frozen=True, slots=True)
class RoceTransport:
    """The RoCE baseline's settings (the file's ``roce:`` block): ``qps`` QPs per RoCE
    flow (each on its own hashed path) and the NICs' RoCE transport."""

    qps: int = DEFAULT_ROCE_QPS
    config: RoceConfig = field(default_factory=RoceConfig)


@dataclass(frozen=True, slots=True)
class Sweep:
    """Every pair (or single) of simultaneous failures among ``of`` at ``at_ns``: one
    run each; a run whose failures leave no path between a flow's ends must fail."""

    kinds: tuple[str, ...]  # "switches", "links" (fabric links), "access_links"
    size: int  # failures per case (1 or 2)
    at_ns: int


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scenario file, validated and resolved against its topology (module docstring): what
    to run, on which fabric, what must hold and how it relates to the paper. Times in ns."""

    name: str
    description: str
    paper: str  # what the paper states, for docs/results.md ("" if beyond the paper)
    scale: str  # how it is scaled down from the paper's setup (docs/results.md)
    notes: str  # where our measurement differs from the paper, and why (docs/results.md)
    source: str  # file it came from
    topology_ref: str  # as written (name or path)
    topology: Any  # topologies.Topology (after fabric overrides)
    seed: int
    duration_ns: int  # hard stop of a run (virtual time)
    fabric: FabricSpec
    nic: dict[str, Any]  # NicConfig overrides
    traffic: tuple[Traffic, ...]
    timeline: tuple[Event, ...]
    assertions: Assertions
    negative_controls: tuple[NegativeControl, ...]
    roce: Assertions | None = None  # compare: what must hold for the RoCE run
    roce_transport: RoceTransport = field(default_factory=RoceTransport)
    sweep: Sweep | None = None
    plot_bin_ns: int = 10_000
    # assertion path -> why the model does not reach the paper's claim, with the measured
    # value (docs/scenarios.md, "Claims not reproduced")
    not_reproduced: dict[str, str] = field(default_factory=dict)

    @property
    def expected(self) -> str:
        """``reproduced``, or ``not reproduced`` when a claim of it is marked so."""
        return "not reproduced" if self.not_reproduced else "reproduced"

    def flows(self, transport: str | None = None) -> list[Flow]:
        """Every transfer of the run; ``transport`` overrides what the file says (compare)."""
        flows = [f for t in self.traffic for f in t.flows()]
        for index, event in enumerate(self.timeline):
            if isinstance(event, IncastEvent):
                flows.extend(event.flows(index, self.roce_transport.qps))
        if transport == "roce":  # compare's RoCE run: the roce block's QPs per flow
            return [
                replace(f, transport="roce", connections=self.roce_transport.qps) for f in flows
            ]
        if transport is not None:
            flows = [replace(f, transport=transport) for f in flows]
        return flows

    def pfc_for(self, flows: list[Flow]) -> PfcConfig | None:
        """PFC for a run of ``flows``: on (the lossless data class) when any is RoCE."""
        if any(f.transport == "roce" for f in flows):
            return self.fabric.pfc
        return None

    def without_timeline(self) -> Scenario:
        return replace(self, timeline=(), sweep=None)
