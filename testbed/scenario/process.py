"""Runs a scenario on the process fabric (``--mode local|mininet``): real p4emu-switch or
BMv2 processes and nic-emu processes, driven through the launcher's public functions.

The process fabric runs in wall-clock time with ms-scale NIC timers, so the scenario's
times are stretched by ``PROCESS_TIME_SCALE`` (1 us of scenario time = 1 ms of wall
time) and only the assertions that do not depend on the clock are checked (byte-exact
delivery, an expected failure). It can cut links, switches and NIC ports and send
traffic; flapping, random loss and EV drops need the virtual fabric and are refused with
a specific error. The scenario's ``nic`` settings are µs-scale and are not applied:
nic-emu keeps its process defaults (docs/nic-emu-process.md).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from testbed.exceptions import NicControlError
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.model import (
    Event,
    FlapEvent,
    IncastEvent,
    LinkDownEvent,
    LinkUpEvent,
    PortDownEvent,
    PortUpEvent,
    Scenario,
    SwitchDownEvent,
    SwitchUpEvent,
    target_json,
)
from testbed.scenario.results import EventResult, RunResult, TransferResult
from testbed.scenario.run_options import RunOptions

if TYPE_CHECKING:
    from testbed.fabric import Fabric
    from testbed.scenario.virtual import Variant

PROCESS_TIME_SCALE = 1000  # wall ns per scenario ns
POLL_S = 0.02
MIN_TIMEOUT_S = 120.0  # a process run gets at least this long, whatever the duration
SUPPORTED = (
    LinkDownEvent,
    LinkUpEvent,
    SwitchDownEvent,
    SwitchUpEvent,
    PortDownEvent,
    PortUpEvent,
    IncastEvent,
)


def check_supported(scenario: Scenario, timeline: tuple[Event, ...]) -> None:
    for index, event in enumerate(timeline):
        if not isinstance(event, SUPPORTED):
            hint = (
                "; flap it with link/port down and up events instead"
                if isinstance(event, FlapEvent)
                else ""
            )
            raise ScenarioRunError(
                f"{scenario.source}: timeline[{index}]: {event.kind} needs the virtual fabric "
                "(--mode virtual): the process fabric can cut and restore links, switches and "
                f"NIC ports and send traffic, nothing else{hint}"
            )
    if scenario.sweep is not None:
        raise ScenarioRunError(f"{scenario.source}: sweeps run on the virtual fabric only")


def run_process(scenario: Scenario, variant: Variant, options: RunOptions) -> RunResult:
    if variant.timeline is not None:
        scenario = replace(scenario, timeline=variant.timeline)
    check_supported(scenario, scenario.timeline)
    if variant.nic or variant.fabric:
        raise ScenarioRunError(
            f"{scenario.name}: negative controls change µs-scale NIC or switch settings and "
            "run on the virtual fabric only"
        )
    seed = scenario.seed if options.seed is None else options.seed
    up = _bring_up(scenario, options, seed)
    fabric = up.fabric
    try:
        return _drive(scenario, variant, fabric, seed, options.mode)
    finally:
        from testbed.rundir import teardown

        teardown(fabric.rundir)


def _bring_up(scenario: Scenario, options: RunOptions, seed: int) -> Any:
    from testbed.options import FabricOptions

    fabric_options = FabricOptions(
        name=f"scenario-{scenario.name}",
        root=options.run_dir,
        mode=options.mode,
        target=options.target,
        seed=seed,
    )
    if options.udp_base_port is not None:
        fabric_options = replace(fabric_options, udp_base_port=options.udp_base_port)
    if options.grpc_base_port is not None:
        fabric_options = replace(fabric_options, grpc_base_port=options.grpc_base_port)
    if options.mode == "local":
        from testbed.local import up_local

        return up_local(scenario.topology, fabric_options)
    from testbed.mininet_mode import up_mininet

    return up_mininet(scenario.topology, fabric_options)


def _apply(fabric: Fabric, event: Event) -> None:
    if isinstance(event, LinkDownEvent):
        fabric.link_down(event.link.a, event.link.b)
    elif isinstance(event, LinkUpEvent):
        fabric.link_up(event.link.a, event.link.b)
    elif isinstance(event, SwitchDownEvent):
        fabric.switch_down(event.switch)
    elif isinstance(event, SwitchUpEvent):
        fabric.switch_up(event.switch)
    elif isinstance(event, PortDownEvent):
        fabric.port_down(event.port.nic, event.port.plane)
    elif isinstance(event, PortUpEvent):
        fabric.port_up(event.port.nic, event.port.plane)


def _drive(scenario: Scenario, variant: Variant, fabric: Fabric, seed: int, mode: str) -> RunResult:
    from testbed.traffic import delivered_intact, start_transfer

    flows = scenario.flows(variant.transport)
    pending_flows = sorted(enumerate(flows), key=lambda item: item[1].start_ns)
    pending_events = list(enumerate(scenario.timeline))
    started: dict[int, tuple[Any, float]] = {}  # flow index -> (transfer id, wall start)
    infos: dict[int, dict[str, Any]] = {}
    applied_at: dict[int, float] = {}
    timeout = max(MIN_TIMEOUT_S, scenario.duration_ns * PROCESS_TIME_SCALE / 1e9)
    t0 = time.monotonic()
    while True:
        now_ns = (time.monotonic() - t0) * 1e9
        while pending_flows and pending_flows[0][1].start_ns * PROCESS_TIME_SCALE <= now_ns:
            index, flow = pending_flows.pop(0)
            transfer_id = start_transfer(
                fabric,
                flow.src,
                flow.dst,
                flow.nbytes,
                seed=seed + index,
                mode=flow.transport,
                connections=flow.connections,
            )
            started[index] = (transfer_id, time.monotonic() - t0)
        while pending_events and pending_events[0][1].at_ns * PROCESS_TIME_SCALE <= now_ns:
            index, event = pending_events.pop(0)
            _apply(fabric, event)
            applied_at[index] = time.monotonic() - t0
        for index, (transfer_id, _) in started.items():
            if index in infos and (infos[index].get("done") or infos[index].get("failed")):
                continue
            try:
                infos[index] = fabric.nic(flows[index].src).transfer(transfer_id)
            except NicControlError as exc:
                infos[index] = {"failed": str(exc)}
        finished = not pending_flows and all(
            infos.get(i, {}).get("done") or infos.get(i, {}).get("failed") for i in started
        )
        if (finished and not pending_events) or time.monotonic() - t0 > timeout:
            break
        time.sleep(POLL_S)
    wall = time.monotonic() - t0
    rows = []
    goodput: dict[str, list[float]] = {}
    bin_ns = scenario.plot_bin_ns * PROCESS_TIME_SCALE
    bins = int(wall * 1e9 // bin_ns) + 1
    for index, flow in enumerate(flows):
        info = infos.get(index, {})
        transfer_id, wall_start = started.get(index, (None, 0.0))
        start_ns = int(wall_start * 1e9)
        done = bool(info.get("done")) and not info.get("failed")
        intact = done and delivered_intact(fabric, flow.src, flow.dst, info)
        completion = start_ns + int(float(info.get("elapsed_s", 0.0)) * 1e9) if done else None
        rows.append(
            TransferResult(
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
                else (None if done else "not done before the time limit"),
                retransmitted_bytes=int(info.get("retransmissions", 0)) * _mtu(info),
                nacks=int(info.get("nacks", 0)),
                failed_at_ns=int(wall * 1e9) if info.get("failed") else None,
            )
        )
        for t_s, plane, size in info.get("timeline", []):
            slot = min(int((start_ns + t_s * 1e9) // bin_ns), bins - 1)
            for key in ("total", f"plane:{plane}"):
                series = goodput.setdefault(key, [0.0] * bins)
                series[slot] += size * 8 / bin_ns
    events = []
    repaths = [
        round(float(e.get("repath_time_us", 0.0)) * 1000)
        for info in infos.values()
        for e in info.get("repath_events", [])
    ]
    for index, event in enumerate(scenario.timeline):
        events.append(
            EventResult(
                index=index,
                kind=event.kind,
                at_ns=int(applied_at.get(index, 0.0) * 1e9),
                description=event.describe(),
                target=target_json(event.target),
                params=event.params(),
                repath_ns=list(repaths) if index == _first_cut(scenario.timeline) else [],
            )
        )
    return RunResult(
        scenario=scenario.name,
        variant=variant.name,
        mode=mode,
        transport=variant.transport or "as-written",
        seed=seed,
        topology=scenario.topology.name,
        end_ns=int(wall * 1e9),
        wall_seconds=wall,
        transfers=rows,
        events=events,
        bin_ns=bin_ns,
        goodput=goodput,
        counters={
            "nacks": sum(t.nacks for t in rows),
            "retransmitted_bytes": sum(t.retransmitted_bytes for t in rows),
        },
        ev_changes=[],
    )


def _first_cut(timeline: tuple[Event, ...]) -> int:
    for index, event in enumerate(timeline):
        if isinstance(event, LinkDownEvent | SwitchDownEvent | PortDownEvent):
            return index
    return -1


def _mtu(info: dict[str, Any]) -> int:
    packets = int(info.get("data_packets", 0))
    total = int(info.get("bytes_total", 0))
    return max(1, total // packets) if packets else 1
