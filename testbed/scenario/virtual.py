"""Runs a scenario on the virtual-time fabric (:mod:`vfabric`): deterministic, virtual ns.

:class:`VirtualRun` is the virtual implementation of
:class:`testbed.scenario.fabric.ScenarioFabric`. Each timeline event it is handed is
scheduled on the fabric as it is, after the traffic (:meth:`vfabric.VirtualFabric.schedule`:
vfabric applies the fault vocabulary itself, :mod:`vfabric.faults`); each flow becomes a :meth:`vfabric.VirtualFabric.transfer` (a flow with ``connections: N`` is N
transfers sharing its bytes). The fabric's measurements are turned into a
:class:`~testbed.scenario.results.RunResult`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from clikit import hotpath
from nic_emu import NicConfig
from nic_emu import event_log as ev_kinds
from testbed.scenario.checks import link_key
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.fabric import Progress, ScenarioFabric, Variant
from testbed.scenario.model import Flow, Scenario
from testbed.scenario.results import EventResult, RunResult, TransferResult
from testbed.scenario.run_options import RunOptions
from topologies import Topology
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
    target_json,
)
from vfabric import VirtualFabric, VirtualFabricError

__all__ = ["Variant", "VirtualRun", "nic_config"]


def nic_config(scenario: Scenario, variant: Variant) -> NicConfig:
    return NicConfig(**{**scenario.nic, **variant.nic}, roce=scenario.roce_transport.config)


class VirtualRun(ScenarioFabric):
    """A scenario on :class:`vfabric.VirtualFabric` (``--mode virtual``)."""

    def __init__(
        self,
        scenario: Scenario,
        variant: Variant,
        options: RunOptions,
        *,
        out_dir: Path | None = None,
        progress: Progress | None = None,
    ) -> None:
        super().__init__(scenario, variant, options, out_dir=out_dir, progress=progress)
        if options.tdf is not None:
            raise ScenarioRunError("--tdf is for the process fabric (--mode local|mininet)")
        if options.pcap and out_dir is None:
            raise ScenarioRunError("pcaps need an output directory for the run")
        self.seed = scenario.seed if options.seed is None else options.seed
        self.started = time.perf_counter()
        self.pending: list[tuple[int, Event]] = []  # (timeline index, event)
        self.fault_of_event: dict[int, list[int]] = {}  # timeline index -> fabric.faults
        self.transfers: list[tuple[Flow, Any]] = []
        self.fabric: VirtualFabric | None = None

    # ------------------------------------------------------------ the fault vocabulary
    # vfabric applies the vocabulary's events itself (VirtualFabric.schedule): each kind
    # is kept for the run, scheduled after the traffic, in timeline order.

    def link_state(self, index: int, event: LinkDownEvent | LinkUpEvent) -> None:
        self.pending.append((index, event))

    def switch_state(self, index: int, event: SwitchDownEvent | SwitchUpEvent) -> None:
        self.pending.append((index, event))

    def port_state(self, index: int, event: PortDownEvent | PortUpEvent) -> None:
        self.pending.append((index, event))

    def flap(self, index: int, event: FlapEvent) -> None:
        self.pending.append((index, event))  # a NIC port flaps as its link to the T0

    def loss(self, index: int, event: LossEvent) -> None:
        self.pending.append((index, event))  # vfabric: one fault per link

    def ev_drop(self, index: int, event: EvDropEvent) -> None:
        self.pending.append((index, event))

    # ------------------------------------------------------------ the run

    def up(self) -> None:
        scenario, variant = self.scenario, self.variant
        fabric_options = {
            "trimming": scenario.fabric.trimming,
            "ecn": scenario.fabric.ecn,
            **variant.fabric,
        }
        flows = self.flows()
        pfc = scenario.pfc_for(flows) if fabric_options.get("pfc", True) else None
        out_dir = self.out_dir
        try:
            self.fabric = VirtualFabric(
                scenario.topology,
                seed=self.seed,
                nic_config=nic_config(scenario, variant),
                trimming=fabric_options["trimming"],
                ecn=fabric_options["ecn"],
                event_log=out_dir / "events.jsonl" if out_dir is not None else None,
                pcap_dir=out_dir / "pcap" if out_dir is not None and self.options.pcap else None,
                bin_ns=scenario.plot_bin_ns,
                pfc=pfc,
            )
        except VirtualFabricError as exc:
            raise ScenarioRunError(
                f"{scenario.name}: cannot build the virtual fabric: {exc}"
            ) from None

    def _built(self) -> VirtualFabric:
        if self.fabric is None:
            raise ScenarioRunError(f"{self.scenario.name}: the virtual fabric is not up")
        return self.fabric

    def start(self, flows: list[Flow]) -> None:
        try:
            self.transfers += _start_flows(self._built(), flows)
        except VirtualFabricError as exc:
            raise ScenarioRunError(f"{self.scenario.source}: traffic: {exc}") from None

    def run(self, until_ns: int) -> None:
        fabric = self._built()
        for index, event in self.pending:  # after the traffic, in timeline order
            first = len(fabric.faults)
            try:
                fabric.schedule(event)
            except VirtualFabricError as exc:
                raise ScenarioRunError(
                    f"{self.scenario.source}: timeline[{index}]: {exc}"
                ) from None
            self.fault_of_event.setdefault(index, []).extend(range(first, len(fabric.faults)))
        self.pending = []
        fabric.run(until_ns=until_ns, progress=self.progress)

    def result(self) -> RunResult:
        return _result(
            self.scenario,
            self.variant,
            self.seed,
            self._built(),
            self.transfers,
            self.scenario.timeline,
            self.fault_of_event,
            self.started,
        )

    def down(self, failure: BaseException | None = None) -> None:
        """Closes the fabric (its outputs are in ``out_dir`` already, failed or not)."""
        if self.fabric is not None:
            self.fabric.close()


def _start_flows(fabric: VirtualFabric, flows: list[Flow]) -> list[tuple[Flow, Any]]:
    out = []
    for flow in flows:
        sizes = _split(flow.nbytes, flow.connections)
        for size in sizes:
            messages = max(1, min(flow.messages // len(sizes) or 1, size))
            transfer = fabric.transfer(
                flow.src,
                flow.dst,
                size,
                start_ns=flow.start_ns,
                messages=messages,
                transport=flow.transport,
            )
            out.append((flow, transfer))
    return out


def first_loss_sent_ns(fabric: VirtualFabric, event: EvDropEvent) -> int | None:
    """When the first packet the drop took was sent: the earliest send time of a packet
    ``event.nic`` declared lost on the EV, sent after the drop started (None: none was)."""
    sent = [
        int(rec.detail["sent_ns"])
        for rec in fabric.records()
        if rec.kind == ev_kinds.LOSS
        and rec.nic == event.nic
        and rec.ev == event.ev
        and rec.detail is not None
        and rec.detail.get("sent_ns") is not None
        and int(rec.detail["sent_ns"]) >= event.at_ns
    ]
    return min(sent) if sent else None


def _split(nbytes: int, parts: int) -> list[int]:
    base, extra = divmod(nbytes, parts)
    return [base + (1 if i < extra else 0) for i in range(parts) if base or i < extra]


def _result(
    scenario: Scenario,
    variant: Variant,
    seed: int,
    fabric: VirtualFabric,
    transfers: list[tuple[Flow, Any]],
    timeline: tuple[Event, ...],
    fault_of_event: dict[int, list[int]],
    started: float,
) -> RunResult:
    failed_at = {
        (rec.detail or {}).get("transfer"): rec.t_ns
        for rec in fabric.records()
        if rec.kind == "transfer_failed"
    }
    rows = []
    for flow, t in transfers:
        info = t.as_dict(fabric.retransmitted_bytes(t))
        sender = t.sender.counters if t.sender is not None else {}
        rows.append(
            TransferResult(
                name=flow.name,
                traffic=flow.traffic,
                src=t.src,
                dst=t.dst,
                transport=t.transport,
                nbytes=t.nbytes,
                start_ns=t.start_ns,
                completion_ns=t.completion_ns,
                bytes_delivered=t.bytes_delivered,
                bytes_verified=t.bytes_verified,
                failure=t.failure,
                message_completion_ns=list(info["message_completion_ns"]),
                retransmitted_bytes=int(info["retransmitted_bytes"]),
                nacks=int(info["nacks_received"]),
                failed_at_ns=failed_at.get(t.id) if t.failure is not None else None,
                timeouts=int(sender.get("losses_timeout", 0)),
            )
        )
    repaths = {r["fault"]: r for r in fabric.repaths()}
    events = []
    for index, event in enumerate(timeline):
        measured: list[int | None] = []
        affected = 0
        for fault_index in fault_of_event.get(index, []):
            entry = repaths.get(fault_index)
            if entry is not None:
                affected += int(entry["affected_evs"])
                measured.extend(
                    None if us is None else round(us * 1000) for us in entry["repath_us"]
                )
        params = {**event.params(), "affected_evs": affected}
        if isinstance(event, EvDropEvent):
            params["first_loss_sent_ns"] = first_loss_sent_ns(fabric, event)
        events.append(
            EventResult(
                index=index,
                kind=event.kind,
                at_ns=event.at_ns,
                description=event.describe(),
                target=target_json(event.target),
                params=params,
                repath_ns=measured,
            )
        )
    links = fabric.link_counters()
    counters: dict[str, Any] = {
        "trims": sum(int(r["trims"]) for r in links.values()),
        "ecn_marks": sum(int(r["ecn_marks"]) for r in links.values()),
        "drops": sum(
            int(r["queue_limit_drops"]) + int(r["tail_drops"]) + sum(r["drops"].values())
            for r in links.values()
        ),
        "nacks": sum(t.nacks for t in rows),
        "timeouts": sum(t.timeouts for t in rows),
        "retransmitted_bytes": sum(t.retransmitted_bytes for t in rows),
        "switch_traversals": fabric.traversals(),
        # goodput counts each byte once, as the application got it; beside it what the
        # receivers' ports took in (go-back-N and MRC duplicates, dropped out-of-order)
        "delivered_bytes": fabric.delivered_bytes(),
        "wire_data_bytes": fabric.received_data_bytes(),
        "per_plane": {str(p): c for p, c in fabric.plane_counters().items()},
        "per_link": links,
    }
    if fabric.pfc is not None:
        counters["pfc"] = fabric.pfc_results()
    goodput = fabric.goodput()
    return RunResult(
        scenario=scenario.name,
        variant=variant.name,
        mode="virtual",
        transport=variant.transport or "as-written",
        seed=seed,
        topology=scenario.topology.name,
        end_ns=fabric.now,
        wall_seconds=time.perf_counter() - started,
        transfers=rows,
        events=events,
        bin_ns=int(goodput["bin_ns"]),
        goodput=goodput_series(goodput, scenario.topology),
        counters=counters,
        ev_changes=fabric.ev_state_changes(),
        event_log_sha256=fabric.event_log_sha256,
        fabric={"clock": "virtual", "hot_path": hotpath.summary()},
    )


def goodput_series(goodput: dict[str, Any], topology: Topology) -> dict[str, list[float]]:
    """vfabric's goodput timelines as result series (see testbed.scenario.results)."""
    out: dict[str, list[float]] = {}
    planes = goodput["delivered_per_plane"]  # unique bytes placed for the application
    wire = goodput["per_plane"]  # data bytes the receiving ports took in
    count = len(goodput["t_ns"])
    out["total"] = [sum(series[i] for series in planes.values()) for i in range(count)]
    out["wire"] = [sum(series[i] for series in wire.values()) for i in range(count)]
    for plane, series in planes.items():
        out[f"plane:{plane}"] = list(series)
    for t1, series in goodput["per_t1"].items():
        out[f"t1:{t1}"] = list(series)
    for name, series in goodput["per_link"].items():
        link = topology.link(*name.split("->"))
        key = link_key(link.a.node, link.b.node)
        if key in out:
            out[key] = [a + b for a, b in zip(out[key], series)]
        else:
            out[key] = list(series)
    for key in [k for k in out if k.startswith("link:")]:
        if not any(out[key]):
            del out[key]  # links that carried no data: keep the JSON small
    return out
