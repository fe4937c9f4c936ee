"""Runs a scenario on the process fabric (``--mode local|mininet``): real p4emu-switch or
BMv2 processes and nic-emu processes, brought up by the mode's launcher (:mod:`testbed.modes`).

:class:`ProcessRun` is the process implementation of
:class:`testbed.scenario.fabric.ScenarioFabric`; :class:`Drive` runs it in wall-clock time.
The process fabric is run **time-dilated** (docs/testbed.md, "Time dilation"): with a
time-dilation factor TDF, every link's rate is divided by TDF and its delay multiplied
(:func:`testbed.layout.dilated_topology`), the NICs get the scenario's own µs-scale
settings (the ones the virtual fabric uses) with every time multiplied and every rate
divided (:func:`nic_emu.serve_config.dilate_transport`), the timeline is stretched by
TDF, and every time measured is divided by TDF. So a process run is the virtual run
slowed down, its results are in the same (dilated) units, and the scenario's own
assertions are checked on it. Flaps are applied as the down and up events they are made
of; random loss and EV drops are refused with a specific error.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nic_emu.exceptions import ConfigError
from nic_emu.serve_config import dilate_transport, transport_overrides
from testbed.exceptions import NicControlError, TestbedError
from testbed.scenario.checks import link_key
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.fabric import Progress, ScenarioFabric, Variant
from testbed.scenario.model import Scenario
from testbed.scenario.results import EventResult, RunResult, TransferResult
from testbed.scenario.run_options import RunOptions
from topologies import Role, Topology
from topologies.events import (
    EvDropEvent,
    Event,
    FlapEvent,
    LinkDownEvent,
    LinkRef,
    LinkUpEvent,
    LossEvent,
    PortDownEvent,
    PortRef,
    PortUpEvent,
    SwitchDownEvent,
    SwitchUpEvent,
    target_json,
)

if TYPE_CHECKING:
    from testbed.fabric import Fabric
    from testbed.local import Mode, UpResult

StateEvent = (
    LinkDownEvent | LinkUpEvent | SwitchDownEvent | SwitchUpEvent | PortDownEvent | PortUpEvent
)
TRANSFER_POLL_S = 2.0  # how often the senders are asked for their transfers (each answer carries the whole delivery timeline: asking often costs the NIC)
START_WAIT_S = 60.0  # a transfer's data must be ready (the WRITEs posted) by then


@dataclass(frozen=True)
class Action:
    """One change applied to the process fabric: a timeline event, or one edge of a flap."""

    at_ns: int  # scenario (dilated) time
    event: StateEvent  # a down/up event (a flap's edges are its own down/up events)
    origin: int  # index of the timeline event it belongs to

    @property
    def down(self) -> bool:
        """Whether it takes an element out of service (a repath may follow)."""
        return not self.event.up


def refuse(scenario: Scenario, index: int, event: Event) -> ScenarioRunError:
    """The error for a timeline event the process fabric cannot express."""
    return ScenarioRunError(
        f"{scenario.source}: timeline[{index}]: {event.kind} needs the virtual fabric "
        "(--mode virtual): the process fabric can cut and restore links, switches and "
        "NIC ports (and flap them) and send traffic, nothing else"
    )


def check_supported(scenario: Scenario) -> None:
    """Refuse, with the error a run gives before anything starts, a scenario the process
    fabric cannot run: a sweep, or a timeline event it cannot express (the verdict table
    says so without running it)."""
    from testbed.local import LocalMode

    run = ProcessRun(scenario, Variant(name="check"), RunOptions(mode="local"), launcher=LocalMode)
    run.schedule(scenario.timeline)


def dilated_nic_settings(scenario: Scenario, variant: Variant, tdf: int) -> dict[str, Any]:
    """The NICs' ``transport``: the virtual run's NicConfig (scenario ``nic:`` + variant),
    dilated by ``tdf``, every field given."""
    from testbed.scenario.virtual import nic_config

    try:
        return transport_overrides(dilate_transport(nic_config(scenario, variant), tdf))
    except ConfigError as exc:
        raise ScenarioRunError(f"{scenario.name}: NIC settings at TDF {tdf}: {exc}") from None


class ProcessRun(ScenarioFabric):
    """A scenario on the process fabric (``--mode local|mininet``), started by
    ``launcher`` (:mod:`testbed.modes` gives each mode its own): the timeline's changes
    are applied at their (dilated) time while the transfers run."""

    def __init__(
        self,
        scenario: Scenario,
        variant: Variant,
        options: RunOptions,
        *,
        launcher: type[Mode],
        out_dir: Path | None = None,
        progress: Progress | None = None,
    ) -> None:
        super().__init__(scenario, variant, options, out_dir=out_dir, progress=progress)
        self.launcher = launcher
        scenario = self.scenario
        if scenario.sweep is not None:
            raise ScenarioRunError(f"{scenario.source}: sweeps run on the virtual fabric only")
        if options.pcap:
            raise ScenarioRunError("pcaps are for the virtual fabric (--mode virtual)")
        if variant.fabric:
            raise ScenarioRunError(
                f"{scenario.name}: {variant.name} changes the switches' trimming or ECN, "
                "which the process fabric's switches do not model; it runs on the virtual "
                "fabric only"
            )
        self.tdf = options.effective_tdf(scenario.topology)
        self.seed = scenario.seed if options.seed is None else options.seed
        self.transport = dilated_nic_settings(scenario, variant, self.tdf)
        self.pending: list[Action] = []
        self.flow_list: list[Any] = []
        self.launched: UpResult | None = None
        self.load_before: tuple[float, float, float] | None = None
        self.outcome: RunResult | None = None

    # ------------------------------------------------------------ the fault vocabulary

    def link_state(self, index: int, event: LinkDownEvent | LinkUpEvent) -> None:
        self._add(index, event)

    def switch_state(self, index: int, event: SwitchDownEvent | SwitchUpEvent) -> None:
        self._add(index, event)

    def port_state(self, index: int, event: PortDownEvent | PortUpEvent) -> None:
        self._add(index, event)

    def flap(self, index: int, event: FlapEvent) -> None:
        """Applied as the down and up events it is made of."""
        for edge in event.edges():
            edge.apply_to(self, index)

    def loss(self, index: int, event: LossEvent) -> None:
        raise refuse(self.scenario, index, event)

    def ev_drop(self, index: int, event: EvDropEvent) -> None:
        raise refuse(self.scenario, index, event)

    def _add(self, index: int, event: StateEvent) -> None:
        """Kept for its time; :class:`testbed.fabric.Fabric` applies it then (it is a
        FaultSink of the same vocabulary: ``event.apply_to(fabric, index)``)."""
        self.pending.append(Action(event.at_ns, event, index))
        # in time order; stable: same-time changes keep file order
        self.pending.sort(key=lambda a: a.at_ns)

    # ------------------------------------------------------------ the run

    def up(self) -> None:
        self.load_before = os.getloadavg()
        self.launched = _bring_up(
            self.scenario, self.options, self.launcher, self.seed, self.tdf, self.transport
        )

    def _fabric(self) -> Fabric:
        if self.launched is None:
            raise ScenarioRunError(f"{self.scenario.name}: the process fabric is not up")
        return self.launched.fabric

    def start(self, flows: list[Any]) -> None:
        self.flow_list += flows  # started while the timeline runs (Drive)

    def run(self, until_ns: int) -> None:
        wall_started = time.perf_counter()
        fabric = self._fabric()
        # BMv2's runtime CLI takes seconds to start: one kept running per switch whose
        # ports the timeline changes, started before the traffic.
        fabric.hold_port_sessions(_port_switches(self.scenario.topology, self.pending))
        try:
            self.outcome = Drive(self, fabric, until_ns, wall_started).result()
        finally:
            fabric.close_port_sessions()

    def result(self) -> RunResult:
        if self.outcome is None or self.launched is None or self.load_before is None:
            raise ScenarioRunError(f"{self.scenario.name}: the process run did not run")
        run = self.outcome
        run.fabric = {
            **run.fabric,
            "load_average_before": [round(x, 2) for x in self.load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "startup_seconds": round(self.launched.seconds, 2),
        }
        return run

    def down(self, failure: BaseException | None = None) -> None:
        """Stops the processes; after a failure the run directory (logs, NIC event logs,
        state) moves to ``failed/`` and ``failure`` gets a note saying where."""
        if self.launched is not None:
            from testbed.rundir import retire_failed, teardown

            fabric = self.launched.fabric
            if failure is None:
                teardown(fabric.rundir)
            else:
                retire_failed(fabric.rundir, fabric.state, failure)


def _bring_up(
    scenario: Scenario,
    options: RunOptions,
    launcher: type[Mode],
    seed: int,
    tdf: int,
    transport: dict[str, Any],
) -> UpResult:
    from testbed import layout
    from testbed.local import up
    from testbed.options import FabricOptions

    fabric_options = FabricOptions(
        name=f"scenario-{scenario.name}",
        root=options.run_dir,
        mode=options.mode,
        target=options.target,
        seed=seed,
        transport=transport,
    )
    if options.udp_base_port is not None:
        fabric_options = replace(fabric_options, udp_base_port=options.udp_base_port)
    if options.grpc_base_port is not None:
        fabric_options = replace(fabric_options, grpc_base_port=options.grpc_base_port)
    if options.thrift_base_port is not None:
        fabric_options = replace(fabric_options, thrift_base_port=options.thrift_base_port)
    return up(layout.dilated_topology(scenario.topology, tdf), fabric_options, launcher)


def batches(due: list[Action]) -> list[list[Action]]:
    """``due`` in order, cut into batches of changes at one instant on different elements
    (which may be applied together; a late flap's down and up stay in order)."""
    out: list[list[Action]] = []
    for action in due:
        last = out[-1] if out else None
        if (
            last is None
            or last[0].at_ns != action.at_ns
            or any(a.event.target == action.event.target for a in last)
        ):
            out.append([action])
        else:
            last.append(action)
    return out


def _apply_all(
    scenario: Scenario, fabric: Fabric, due: list[Action], clock: _Clock
) -> list[tuple[Action, int, int]]:
    """Applies changes that are due together at once (one thread each: a NIC's control
    socket and a switch's CLI answer in milliseconds on an idle machine, in hundreds of
    them on a loaded one, and a flap of four ports must not be four times late); each
    with the scenario time it began and ended."""

    def one(action: Action) -> tuple[Action, int, int]:
        begun = clock.now()
        try:
            action.event.apply_to(fabric, action.origin)
        except TestbedError as exc:
            raise ScenarioRunError(
                f"{scenario.name}: timeline[{action.origin}] ({action.event.describe()}) "
                f"could not be applied: {exc}"
            ) from None
        return action, begun, clock.now()

    if len(due) == 1:
        return [one(due[0])]
    with ThreadPoolExecutor(max_workers=len(due)) as pool:
        return list(pool.map(one, due))


class _Clock:
    """Scenario time on the process fabric: dilated ns since the senders' data was posted
    (``t0``, the NICs' ``time.monotonic_ns()``, system-wide)."""

    def __init__(self, t0_ns: int, tdf: int) -> None:
        self.t0_ns = t0_ns
        self.tdf = tdf

    def now(self) -> int:
        return self.of(time.monotonic_ns())

    def of(self, monotonic_ns: float) -> int:
        return round((monotonic_ns - self.t0_ns) / self.tdf)

    def wall(self, scenario_ns: int) -> int:
        return self.t0_ns + scenario_ns * self.tdf


def _start_flows(
    fabric: Fabric, flows: list[Any], indexes: list[int], seed: int, deadline_s: float
) -> dict[int, Any]:
    from testbed.traffic import start_transfer

    return {
        index: start_transfer(
            fabric,
            flows[index].src,
            flows[index].dst,
            flows[index].nbytes,
            seed=seed + index,
            mode=flows[index].transport,
            connections=flows[index].connections,
            deadline_s=deadline_s,
        )
        for index in indexes
    }


def _wait_posted(fabric: Fabric, flows: list[Any], started: dict[int, Any]) -> dict[int, int]:
    """Each started transfer's ``started_ns`` (its data posted), waiting for it."""
    out: dict[int, int] = {}
    deadline = time.monotonic() + START_WAIT_S
    while len(out) < len(started):
        for index, transfer_id in started.items():
            if index not in out:
                info = fabric.nic(flows[index].src).transfer(transfer_id)
                if info.get("started_ns") is not None:
                    out[index] = int(info["started_ns"])
        if len(out) < len(started):
            if time.monotonic() > deadline:
                raise ScenarioRunError(
                    f"a transfer's data was not ready within {START_WAIT_S:g} s of the request"
                )
            time.sleep(0.02)
    return out


def _port_switches(topo: Topology, pending: list[Action]) -> set[str]:
    """The switches whose ports the changes set down or up."""
    out: set[str] = set()
    for action in pending:
        target = action.event.target
        if isinstance(target, LinkRef):
            out |= {n for n in (target.a, target.b) if not n.startswith("nic")}
        elif isinstance(target, PortRef):
            out.add(topo.nic_port(target.nic, target.plane).t0)
    return out


class Drive:
    """One process run in wall-clock time: starts the flows at their times, applies the
    timeline's changes when due, polls the senders until every transfer is over or the
    run's end, then turns the senders' reports into a result (:meth:`result`)."""

    def __init__(self, run: ProcessRun, fabric: Fabric, until_ns: int, wall_started: float):
        self.run = run
        self.fabric = fabric
        self.until_ns = until_ns
        self.wall_started = wall_started
        self.scenario = run.scenario
        self.flows = run.flow_list
        self.pending = list(run.pending)
        self.applied: list[tuple[Action, int, int]] = []  # action, from .. to (scenario ns)
        self.infos: dict[int, dict[str, Any]] = {}
        self.deadline_s = until_ns * run.tdf / 1e9
        flows = self.flows
        first = [i for i, f in enumerate(flows) if f.start_ns == 0]
        self.later = sorted(
            (i for i, f in enumerate(flows) if f.start_ns > 0), key=lambda i: flows[i].start_ns
        )
        self.started = self._start(first)
        posted = _wait_posted(fabric, flows, self.started)
        self.clock = _Clock(min(posted.values(), default=time.monotonic_ns()), run.tdf)
        self.end_ns = self._loop()
        self._final_state()

    def _start(self, indexes: list[int]) -> dict[int, Any]:
        return _start_flows(self.fabric, self.flows, indexes, self.run.seed, self.deadline_s)

    def _over(self, index: int) -> bool:
        info = self.infos.get(index, {})
        return bool(info.get("done") or info.get("failed"))

    def _poll(self) -> None:
        for index, transfer_id in self.started.items():
            if self._over(index):
                continue
            try:
                self.infos[index] = self.fabric.nic(self.flows[index].src).transfer(transfer_id)
            except NicControlError as exc:
                self.infos[index] = {"failed": str(exc)}
            if self.infos[index].get("failed"):
                self.infos[index]["failed_at_ns"] = self.clock.now()

    def _loop(self) -> int:
        """Until every transfer is over (and every change applied) or the run's end; the
        scenario time it stopped at."""
        clock, flows, pending, later = self.clock, self.flows, self.pending, self.later
        next_poll = 0.0
        while True:
            now = clock.now()
            while later and flows[later[0]].start_ns <= now:
                self.started.update(self._start([later.pop(0)]))
            due = []
            while pending and pending[0].at_ns <= clock.now():
                due.append(pending.pop(0))
            for batch in batches(due):
                self.applied += _apply_all(self.scenario, self.fabric, batch, clock)
            if time.monotonic() >= next_poll:
                next_poll = time.monotonic() + TRANSFER_POLL_S
                self._poll()
            finished = not later and all(self._over(i) for i in self.started)
            if (finished and not pending) or clock.now() >= self.until_ns:
                return clock.now()
            wake = [self.until_ns]
            if pending:
                wake.append(pending[0].at_ns)
            if later:
                wake.append(flows[later[0]].start_ns)
            sleep_s = (clock.wall(min(wake)) - time.monotonic_ns()) / 1e9
            time.sleep(max(0.0, min(sleep_s, next_poll - time.monotonic(), TRANSFER_POLL_S)))

    def _final_state(self) -> None:
        """The final state of every transfer not seen over."""
        for index, transfer_id in self.started.items():
            if not self._over(index):
                try:
                    self.infos[index] = self.fabric.nic(self.flows[index].src).transfer(transfer_id)
                except NicControlError as exc:
                    self.infos[index] = {"failed": str(exc), "failed_at_ns": self.end_ns}

    def _transfer(self, index: int) -> TransferResult:
        from testbed.traffic import delivered_intact

        flow, info, tdf = self.flows[index], self.infos.get(index, {}), self.run.tdf
        start_ns = self.clock.of(info["started_ns"]) if info.get("started_ns") else flow.start_ns
        done = bool(info.get("done")) and not info.get("failed")
        intact = done and delivered_intact(self.fabric, flow.src, flow.dst, info)
        completion = (
            start_ns + round(float(info.get("elapsed_s", 0.0)) * 1e9 / tdf) if done else None
        )
        return TransferResult(
            name=flow.name,
            traffic=flow.traffic,
            src=flow.src,
            dst=flow.dst,
            transport=flow.transport,
            nbytes=flow.nbytes,
            start_ns=start_ns,
            completion_ns=completion,
            bytes_delivered=int(info.get("bytes_delivered_intact", 0)),
            bytes_verified=flow.nbytes if intact else 0,
            failure=str(info["failed"])
            if info.get("failed")
            else (None if done else "not done by the end of the run"),
            retransmitted_bytes=int(info.get("retransmissions", 0)) * _mtu(info),
            nacks=int(info.get("nacks", 0)),
            timeouts=int(info.get("timeouts", 0)),
            failed_at_ns=info.get("failed_at_ns") if info.get("failed") else None,
        )

    def _fabric_record(self) -> dict[str, Any]:
        """What ran: mode, target, TDF, and when each change was applied."""
        from testbed.fabric import target_version

        options = self.run.options
        return {
            "clock": "wall",
            "mode": options.mode,
            "target": options.target,
            "target_version": target_version(options.target),
            "tdf": self.run.tdf,
            "applied": [
                {
                    "origin": action.origin,
                    "description": action.event.describe(),
                    "at_ns": action.at_ns,
                    "applied_ns": begun,
                    "done_ns": done_at,
                }
                for action, begun, done_at in self.applied
            ],
        }

    def result(self) -> RunResult:
        scenario, variant, clock = self.scenario, self.run.variant, self.clock
        rows = [self._transfer(index) for index in range(len(self.flows))]
        topo = scenario.topology
        bin_ns = scenario.plot_bin_ns
        return RunResult(
            scenario=scenario.name,
            variant=variant.name,
            mode=self.run.options.mode,
            transport=variant.transport or "as-written",
            seed=self.run.seed,
            topology=topo.name,
            end_ns=self.end_ns,
            wall_seconds=time.perf_counter() - self.wall_started,
            transfers=rows,
            events=_events(scenario, self.flows, self.infos, self.applied, clock),
            bin_ns=bin_ns,
            goodput=_goodput(topo, self.flows, self.infos, clock, bin_ns, max(self.end_ns, 1)),
            counters={
                "nacks": sum(t.nacks for t in rows),
                "timeouts": sum(t.timeouts for t in rows),
                "retransmitted_bytes": sum(t.retransmitted_bytes for t in rows),
            },
            ev_changes=_ev_changes(self.fabric, topo, clock),
            fabric=self._fabric_record(),
        )


def t1_name(topo: Topology, plane: int, t1: str | int) -> str:
    """A path's T1 as the NICs name it (the switch's name, or its index in the plane).
    A path inside one T0 has none (``None`` in the NICs' records): callers check first."""
    if isinstance(t1, str):
        return t1
    return [s.name for s in topo.switches if s.plane == plane and s.role is Role.T1][t1]


def path_hops(
    topo: Topology, src: str, dst: str, plane: int, t1: str | int | None
) -> list[tuple[str, str]]:
    """The links (lower end, upper end) a path (plane, T1) of ``src`` -> ``dst`` crosses
    (T1 ``None``: a path inside one T0)."""
    up = topo.nic_port(src, plane).t0
    down = topo.nic_port(dst, plane).t0
    hops = [(src, up)]
    if up != down and t1 is not None:
        name = t1_name(topo, plane, t1)
        hops += [(up, name), (down, name)]
    return [*hops, (dst, down)]


def path_links(topo: Topology, src: str, dst: str, plane: int, t1: str | int | None) -> list[str]:
    """Goodput keys of the links a path (plane, T1) of ``src`` -> ``dst`` crosses."""
    return [link_key(a, b) for a, b in path_hops(topo, src, dst, plane, t1)]


def path_delay_ns(topo: Topology, src: str, dst: str, plane: int, t1: str | int | None) -> int:
    """One-way delay of a path, from its links' ``delay_us`` (scenario time)."""
    hops = path_hops(topo, src, dst, plane, t1)
    return round(sum(topo.link(a, b).delay_us for a, b in hops) * 1000)


def _goodput(
    topo: Topology,
    flows: list[Any],
    infos: dict[int, dict[str, Any]],
    clock: _Clock,
    bin_ns: int,
    end_ns: int,
) -> dict[str, list[float]]:
    """Gb/s (dilated: bytes per dilated ns) per bin, from each sender's per-path delivery
    timeline: total, per plane, per T1 and per link crossed. The sender counts a packet
    when it is acknowledged; it is placed one path delay earlier, when it was delivered
    (the acknowledgement's way back), as the virtual fabric counts it."""
    bins = end_ns // bin_ns + 1
    out: dict[str, list[float]] = {"total": [0.0] * bins}
    for index, info in infos.items():
        if not info.get("started_ns"):
            continue
        flow = flows[index]
        for t_s, plane, t1, size in info.get("path_timeline", []):
            at = clock.of(info["started_ns"] + t_s * 1e9)
            at -= path_delay_ns(topo, flow.dst, flow.src, plane, t1)
            slot = min(max(at, 0) // bin_ns, bins - 1)
            keys = ["total", f"plane:{plane}"]
            if t1 is not None:  # a path inside one T0 crosses no T1
                keys.append(f"t1:{t1_name(topo, plane, t1)}")
            keys += path_links(topo, flow.src, flow.dst, plane, t1)
            for key in keys:
                series = out.setdefault(key, [0.0] * bins)
                series[slot] += size * 8 / bin_ns
    return out


def _affects(event: Event, topo: Topology, path: list[Any]) -> bool:
    """Whether a failed element lies on a path ([plane, T1]); unknown: True."""
    if len(path) < 2:
        return True
    plane = int(path[0])
    t1 = None if path[1] is None else t1_name(topo, plane, path[1])
    target = event.target
    if isinstance(target, PortRef):
        return target.plane == plane
    ends = {target.a, target.b} if isinstance(target, LinkRef) else {target}
    switches = [topo.switch(n) for n in ends if isinstance(n, str) and not n.startswith("nic")]
    t1s = [s.name for s in switches if s.role is Role.T1]
    if t1s:
        return t1s[0] == t1
    return any(s.plane == plane for s in switches)


def _events(
    scenario: Scenario,
    flows: list[Any],
    infos: dict[int, dict[str, Any]],
    applied: list[tuple[Action, int, int]],
    clock: _Clock,
) -> list[EventResult]:
    """Each timeline event as it was applied; each repath the senders measured is counted
    under every down change of an element on its path since the path's previous repath
    (the virtual fabric counts a path's repath for each fault on it, even one that came
    after the first: ``link-cuts`` cuts both ends of a T1's path 5 us apart), else under
    the latest such change before it; one on no failed path, a false alarm, is counted as
    ``repaths_elsewhere`` of the latest change."""
    downs = [(begun, action) for action, begun, _ in applied if action.down]
    repaths: dict[int, list[int | None]] = {}
    unrelated: dict[int, int] = {}
    for info in infos.values():
        if not info.get("started_ns"):
            continue
        previous: dict[tuple[Any, ...], int] = {}  # (qpn, path) -> its last repath
        timed = [
            (clock.of(info["started_ns"] + float(r.get("t_s", 0.0)) * 1e9), r)
            for r in info.get("repath_events", [])
        ]
        for at, repath in sorted(timed, key=lambda x: x[0]):
            path = list(repath.get("path", []))
            key = (repath.get("qpn"), *map(str, path))
            since = previous.get(key)
            previous[key] = at
            before = [(begun, a) for begun, a in downs if begun <= at]
            if not before:
                continue
            cause = [(b, a) for b, a in before if _affects(a.event, scenario.topology, path)]
            value = round(float(repath.get("repath_time_us", 0.0)) * 1000 / clock.tdf)
            recent = [a.origin for b, a in cause if since is None or b > since]
            for origin in dict.fromkeys(recent or [a.origin for _, a in cause[-1:]]):
                repaths.setdefault(origin, []).append(value)
            if not cause:
                origin = before[-1][1].origin
                unrelated[origin] = unrelated.get(origin, 0) + 1
    first_applied = {}
    for action, begun, _ in applied:
        first_applied.setdefault(action.origin, begun)
    out = []
    for index, event in enumerate(scenario.timeline):
        out.append(
            EventResult(
                index=index,
                kind=event.kind,
                at_ns=event.at_ns,
                description=event.describe(),
                target=target_json(event.target),
                params={
                    **event.params(),
                    "applied_ns": first_applied.get(index),
                    "repaths_elsewhere": unrelated.get(index, 0),
                },
                repath_ns=repaths.get(index, []),
            )
        )
    return out


def _ev_changes(fabric: Fabric, topo: Topology, clock: _Clock) -> list[dict[str, Any]]:
    """The NICs' EV state changes (their event logs' ``ev_state`` records) in scenario
    time; a record that stands for several EVs at one instant gives one change per EV it
    lists."""
    out: list[dict[str, Any]] = []
    for nic in topo.nics:
        base = Path(fabric.rundir.file("nics", f"{nic.name}.events.jsonl"))
        for path in (base.with_name(base.name + ".1"), base):
            if not path.is_file():
                continue
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by the process's stop
                if not isinstance(rec, dict) or rec.get("kind") != "ev_state":
                    continue
                evs = [rec["ev"]] if rec.get("ev") is not None else list(rec.get("evs", []))
                for ev in evs:
                    out.append(
                        {
                            "t_ns": clock.of(int(rec["t_ns"])),
                            "nic": rec.get("nic", nic.name),
                            "qpn": rec.get("qpn"),
                            "ev": ev,
                            "plane": rec.get("plane"),
                            "from": rec.get("old"),
                            "to": rec.get("new"),
                            "reason": rec.get("reason"),
                        }
                    )
    return sorted(out, key=lambda c: c["t_ns"])


def _mtu(info: dict[str, Any]) -> int:
    packets = int(info.get("data_packets", 0))
    total = int(info.get("bytes_total", 0))
    return max(1, total // packets) if packets else 1
