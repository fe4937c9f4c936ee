"""The process fabric's scenario runner, without processes: time dilation of the NIC
settings and the timeline, flaps as down/up edges, and how the senders' reports become a
result in dilated units (the runs themselves: tests/failover/test_process_fabric.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nic_emu.config import NicConfig
from nic_emu.serve_config import dilate_transport, transport_config
from testbed.layout import link_rate_pps
from testbed.modes import mode
from testbed.scenario import process
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.load import load, loads
from testbed.scenario.results import RunResult
from testbed.scenario.run_options import NIC_FRAMES_PER_S, RunOptions, default_tdf
from testbed.scenario.virtual import Variant, nic_config
from topologies.events import LinkDownEvent, LinkUpEvent, PortDownEvent, PortUpEvent

TDF = 65536


def scheduled(scenario: Any, variant: Variant | None = None) -> process.ProcessRun:
    """The local process fabric of ``scenario`` (nothing started) with its timeline
    handed over, as the runner does before bringing it up."""
    run = mode("local").make(scenario, variant or Variant(), RunOptions(mode="local"))
    assert isinstance(run, process.ProcessRun)
    run.schedule(run.scenario.timeline)
    return run


def actions(scenario: Any) -> list[process.Action]:
    return scheduled(scenario).pending


FLAPS = """
name: flaps
topology: tiny
traffic: [{src: nic0, dst: nic3, bytes: 1MiB}]
timeline:
  - {at: 10us, flap: {port: [nic0, 1], period: 40us, down: 20us, until: 100us}}
  - {at: 15us, flap: {link: [p0-t0-0, p0-t1-0], period: 30us, down: 10us, until: 60us}}
  - {at: 20us, incast: {senders: [nic1], dst: nic3, bytes: 64KiB}}
  - {at: 50us, switch_down: p1-t1-0}
"""


def test_the_nics_get_the_virtual_runs_settings_dilated() -> None:
    scenario = load("link-restore")
    variant = Variant(nic={"probe_interval_ns": 64_000})
    settings = process.dilated_nic_settings(scenario, variant, TDF)
    expected = dilate_transport(nic_config(scenario, variant), TDF)
    assert transport_config(settings) == expected  # what nic-emu serve will run with
    assert expected.probe_interval_ns == 64_000 * TDF
    assert not expected.adaptive_timers and expected.path_quarantine  # the virtual NIC's
    assert expected.quarantine_window_ns == NicConfig().quarantine_window_ns * TDF


def test_flaps_become_down_and_up_edges_in_time_order() -> None:
    scenario = loads(FLAPS, source="flaps.yaml")
    got = [(a.at_ns, a.origin, type(a.event).__name__) for a in actions(scenario)]
    assert got == [
        (10_000, 0, "PortDownEvent"),
        (15_000, 1, "LinkDownEvent"),
        (25_000, 1, "LinkUpEvent"),
        (30_000, 0, "PortUpEvent"),
        (45_000, 1, "LinkDownEvent"),
        (50_000, 0, "PortDownEvent"),  # same time: file order
        (50_000, 3, "SwitchDownEvent"),
        (55_000, 1, "LinkUpEvent"),
        (70_000, 0, "PortUpEvent"),
        (90_000, 0, "PortDownEvent"),
        (100_000, 0, "PortUpEvent"),  # cut short by `until`, left up
    ]
    edges = actions(scenario)
    assert isinstance(edges[0].event, PortDownEvent) and edges[0].event.port.plane == 1
    assert isinstance(edges[3].event, PortUpEvent) and edges[3].event.at_ns == 30_000
    assert isinstance(edges[1].event, LinkDownEvent) and edges[1].event.link.b == "p0-t1-0"
    assert isinstance(edges[2].event, LinkUpEvent)


@pytest.mark.parametrize(
    ("event", "kind"),
    [
        ("loss: {rate: 1%}", "loss"),
        ("ev_drop: {nic: nic0, plane: 0, t1: 0, salt: 0, fraction: 20%}", "ev_drop"),
    ],
)
def test_what_the_process_fabric_cannot_do_is_refused(event: str, kind: str) -> None:
    scenario = loads(
        f"topology: tiny\ntraffic: [{{src: nic0, dst: nic3, bytes: 1MiB}}]\n"
        f"timeline: [{{at: 5us, {event}}}]\n",
        source="x.yaml",
    )
    with pytest.raises(ScenarioRunError, match=rf"timeline\[0\]: {kind} needs the virtual fabric"):
        scheduled(scenario)


def test_switch_settings_of_a_negative_control_are_refused(tmp_path: Path) -> None:
    scenario = load("t1-down")
    options = RunOptions(mode="local", run_dir=tmp_path)
    with pytest.raises(ScenarioRunError, match="trimming or ECN"):
        mode("local").make(scenario, Variant(name="x", fabric={"trimming": False}), options)


def test_the_tdf_is_a_power_of_two_for_the_process_fabric_only() -> None:
    small_scenario = load("t1-down")
    small, eight = small_scenario.topology, load("port-flap").topology
    assert RunOptions(mode="local", tdf=1024).effective_tdf(small) == 1024
    for name, target in NIC_FRAMES_PER_S:
        options = RunOptions(mode=name, target=target)
        assert options.effective_tdf(small) == default_tdf(small, name, target)
    # 4 ports of 100 Gb/s = 11.8 M frames/s -> 65536 (180/s); 8 ports -> twice that
    assert default_tdf(small, "mininet", "bmv2") == 65536
    assert default_tdf(eight, "mininet", "bmv2") == 131072
    for topology in (small, eight, load("link-restore").topology):
        tdf = default_tdf(topology, "local", "p4emu")
        busiest = max(
            sum(link_rate_pps(ln.rate_gbps) for ln in topology.links_of(n.name))
            for n in topology.nics
        )
        assert busiest / tdf <= NIC_FRAMES_PER_S[("local", "p4emu")] < busiest / (tdf / 2)
    with pytest.raises(ScenarioRunError, match=r"--tdf: .*power of two"):
        RunOptions(mode="local", tdf=1000)
    with pytest.raises(ScenarioRunError, match="--tdf is for the process fabric"):
        mode("virtual").make(small_scenario, Variant(), RunOptions(mode="virtual", tdf=1024))


# ------------------------------------------------------------------ reports -> results


def _clock() -> Any:
    return process._Clock(t0_ns=1_000_000_000, tdf=TDF)


def test_the_clock_divides_wall_time_by_the_tdf() -> None:
    clock = _clock()
    assert clock.of(1_000_000_000 + 80_000 * TDF) == 80_000
    assert clock.wall(150_000) == 1_000_000_000 + 150_000 * TDF


def test_goodput_is_in_dilated_units_placed_when_delivered() -> None:
    scenario = load("link-restore")  # small: 1 us per link, nic0 -> nic2 through a T1
    flow = scenario.flows()[0]
    started = 1_000_000_000 + 10_000 * TDF  # the transfer began at 10 us
    # 1 MB acknowledged on (plane 0, p0-t1-0) 25 us after the start: delivered at 31 us
    infos = {0: {"started_ns": started, "path_timeline": [[25e-6 * TDF, 0, "p0-t1-0", 1e6]]}}
    series = process._goodput(scenario.topology, [flow], infos, _clock(), 10_000, 100_000)
    gbps = 1e6 * 8 / 10_000
    for key in (
        "total",
        "plane:0",
        "t1:p0-t1-0",
        "link:nic0--p0-t0-0",
        "link:p0-t0-0--p0-t1-0",
        "link:p0-t0-1--p0-t1-0",
        "link:nic2--p0-t0-1",
    ):
        assert series[key][3] == pytest.approx(gbps), key
        assert sum(series[key]) == pytest.approx(gbps), key
    assert len(series["total"]) == 11


def test_goodput_of_a_path_inside_one_t0_has_no_t1() -> None:
    """The NICs record a path that never leaves its T0 with T1 ``None`` (incast-trimming's
    neighbours): it counts on its plane and its two NIC links, under no T1."""
    scenario = load("incast-trimming")
    topo = scenario.topology
    flow = next(
        f for f in scenario.flows() if topo.nic_port(f.src, 0).t0 == topo.nic_port(f.dst, 0).t0
    )
    t0 = topo.nic_port(flow.src, 0).t0
    infos = {0: {"started_ns": 1_000_000_000, "path_timeline": [[25e-6 * TDF, 0, None, 1e6]]}}
    series = process._goodput(topo, [flow], infos, _clock(), 10_000, 100_000)
    assert not [k for k in series if k.startswith("t1:")]
    links = {k for k in series if k.startswith("link:")}
    assert links == {f"link:{flow.src}--{t0}", f"link:{flow.dst}--{t0}"}
    assert sum(series["plane:0"]) == pytest.approx(1e6 * 8 / 10_000)
    assert process.path_delay_ns(topo, flow.src, flow.dst, 0, None) > 0
    assert not process._affects(actions(load("t1-down"))[0].event, topo, [0, None])


def test_repaths_are_counted_under_the_cut_that_caused_them() -> None:
    scenario = load("link-restore")
    edges = actions(scenario)
    applied = [(edges[0], 50_100, 51_000), (edges[1], 150_000, 151_000)]
    started = 1_000_000_000
    infos = {
        0: {
            "started_ns": started,
            "repath_events": [
                # on the cut path (link-restore cuts p3-t0-0 -- p3-t1-1), 60 us in: 17 us
                # (dilated) measured
                {"t_s": 60e-6 * TDF, "repath_time_us": 17.0 * TDF, "path": [3, "p3-t1-1"]},
                # a false alarm on another plane
                {"t_s": 70e-6 * TDF, "repath_time_us": 3.0 * TDF, "path": [2, "p2-t1-1"]},
                # before any cut: no cause
                {"t_s": 20e-6 * TDF, "repath_time_us": 5.0 * TDF, "path": [3, "p3-t1-1"]},
            ],
        }
    }
    events = process._events(scenario, scenario.flows(), infos, applied, _clock())
    assert events[0].repath_ns == [17_000]
    assert events[0].params["repaths_elsewhere"] == 1
    assert events[0].params["applied_ns"] == 50_100 and events[0].at_ns == 50_000
    assert events[1].repath_ns == []


def test_a_repath_counts_for_every_cut_of_its_path_since_its_last_one() -> None:
    # link-cuts: events 0 and 1 cut both ends of (plane 0, p0-t1-0) 5 us apart, event 16
    # (120 us) p0-t1-1's sender end; the NIC reports one repath per path
    scenario = load("link-cuts")
    applied = [(a, a.at_ns + 500, a.at_ns + 900) for a in actions(scenario)]
    repath = [
        {"t_s": 58e-6 * TDF, "repath_time_us": 15.0 * TDF, "path": [0, "p0-t1-0"], "qpn": 256},
        {"t_s": 134e-6 * TDF, "repath_time_us": 12.0 * TDF, "path": [0, "p0-t1-1"], "qpn": 256},
        # the same path again, with no cut of it since its last repath: the latest cut
        {"t_s": 150e-6 * TDF, "repath_time_us": 4.0 * TDF, "path": [0, "p0-t1-1"], "qpn": 256},
    ]
    infos = {0: {"started_ns": 1_000_000_000, "repath_events": repath}}
    events = process._events(scenario, scenario.flows(), infos, applied, _clock())
    assert events[0].repath_ns == [15_000] and events[1].repath_ns == [15_000]
    assert events[16].repath_ns == [12_000, 4_000]
    assert [e.index for e in events if e.repath_ns] == [0, 1, 16]


class _RunDir:
    def __init__(self, root: Path) -> None:
        self.root = root

    def file(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)


class _Fabric:
    def __init__(self, root: Path) -> None:
        self.rundir = _RunDir(root)


def test_ev_changes_come_from_the_nics_event_logs(tmp_path: Path) -> None:
    scenario = load("link-restore")
    nics = tmp_path / "nics"
    nics.mkdir()
    t = 1_000_000_000
    rotated = [
        {
            "t_ns": t + 60_000 * TDF,
            "nic": "nic0",
            "kind": "ev_state",
            "qpn": 256,
            "plane": 0,
            "ev": 7,
            "old": "GOOD",
            "new": "ASSUMED_BAD",
            "reason": "reorder",
        }
    ]
    current = [
        {
            "t_ns": t + 61_000 * TDF,
            "nic": "nic0",
            "kind": "ev_state",
            "qpn": 256,
            "plane": 0,
            "old": "GOOD",
            "new": "ASSUMED_BAD",
            "reason": "path_reorder",
            "count": 9,
            "evs": [1, 2, 3],
        },
        {"t_ns": t + 62_000 * TDF, "nic": "nic0", "kind": "loss", "qpn": 256, "ev": 1},
        {
            "t_ns": t + 233_000 * TDF,
            "nic": "nic0",
            "kind": "ev_state",
            "qpn": 256,
            "plane": 0,
            "ev": 7,
            "old": "ASSUMED_BAD",
            "new": "GOOD",
            "reason": "probe",
        },
    ]
    (nics / "nic0.events.jsonl.1").write_text("".join(json.dumps(r) + "\n" for r in rotated))
    (nics / "nic0.events.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in current) + '{"t_ns": 5, "ki'  # cut at the stop
    )
    changes = process._ev_changes(_Fabric(tmp_path), scenario.topology, _clock())  # type: ignore[arg-type]
    assert [(c["t_ns"], c["ev"], c["from"], c["to"]) for c in changes] == [
        (60_000, 7, "GOOD", "ASSUMED_BAD"),
        (61_000, 1, "GOOD", "ASSUMED_BAD"),
        (61_000, 2, "GOOD", "ASSUMED_BAD"),
        (61_000, 3, "GOOD", "ASSUMED_BAD"),
        (233_000, 7, "ASSUMED_BAD", "GOOD"),
    ]
    assert changes[-1]["nic"] == "nic0" and changes[-1]["reason"] == "probe"


def test_a_process_result_says_what_ran_and_reads_back() -> None:
    from testbed.scenario.cli import summary_lines

    run = RunResult(
        scenario="t1-down",
        variant="mrc",
        mode="mininet",
        transport="as-written",
        seed=1,
        topology="small",
        end_ns=400_000,
        wall_seconds=30.0,
        transfers=[],
        events=[],
        bin_ns=10_000,
        goodput={},
        counters={},
        ev_changes=[],
        fabric={
            "clock": "wall",
            "mode": "mininet",
            "target": "bmv2",
            "target_version": "simple_switch_grpc 1.15.5",
            "tdf": TDF,
            "load_average_before": [3.5, 3.0, 2.0],
            "load_average_after": [4.0, 3.1, 2.0],
        },
    )
    data = json.loads(json.dumps(run.to_json()))
    assert data["fabric"]["tdf"] == TDF and data["fabric"]["target"] == "bmv2"
    assert RunResult.from_json(data).fabric == run.fabric
    text = "\n".join(summary_lines(run))
    assert "simple_switch_grpc 1.15.5, TDF 65536; load average 3.5 before, 4.0 after" in text
    assert "virtual" not in text
    virtual = RunResult.from_json({**data, "fabric": {"clock": "virtual"}})
    assert "ran on" not in "\n".join(summary_lines(virtual))


def test_changes_at_one_instant_on_different_elements_are_applied_together() -> None:
    scenario = load("port-flap")
    edges = actions(scenario)
    assert [len(b) for b in process.batches(edges[:8])] == [4, 4]  # 4 ports down, 4 up
    late = [edges[0], edges[4]]  # port 0 down at 40 us and up at 60 us, both overdue
    assert process.batches(late) == [[edges[0]], [edges[4]]]
    same = [edges[0], edges[0]]  # never two changes of one element at once
    assert process.batches(same) == [[edges[0]], [edges[0]]]


def test_every_fabric_quantity_follows_the_tdf(tmp_path: Path) -> None:
    """What each mode builds from the dilated topology: p4emu's queue rates and delays,
    tc's rates and FIFO depths, the NICs' delay lines (BMv2: the whole path's)."""
    from p4emu.server.options import parse_options
    from testbed import layout
    from testbed.fabric import switch_args
    from testbed.local import nic_ports as local_nic_ports
    from testbed.mininet_mode import interface_commands, link_rate_mbit
    from testbed.mininet_mode import nic_ports as mininet_nic_ports

    topo = load("t1-down").topology
    slow = layout.dilated_topology(topo, TDF)
    udp = layout.udp_link_ports(slow)
    switch = "p0-t0-0"
    ports = {p: udp[(switch, p)].switch_port() for p in slow.switch(switch).ports}
    args = switch_args("p4emu", slow, switch, ports, 1.0, grpc_address="127.0.0.1:9559", seed=1)
    parsed = parse_options(args)
    for link in topo.links_of(switch):
        port = link.endpoint(switch).port
        assert parsed.port_queue_rates_pps[port] == pytest.approx(
            layout.link_rate_pps(link.rate_gbps) / TDF
        )
        assert parsed.link_delays_us[port] == link.delay_us * TDF
    assert parsed.queue_depth == min(link.queue_packets for link in topo.links_of(switch))
    link = topo.links_of(switch)[0]
    mbit = link_rate_mbit(slow.links_of(switch)[0].rate_gbps, 1.0)
    assert mbit == pytest.approx(link.rate_gbps * 1000 / TDF)
    assert (
        f"pfifo limit {link.queue_packets}" in interface_commands("x", mbit, link.queue_packets)[-2]
    )
    local = local_nic_ports(slow, "nic0", udp)
    assert {p["delay_us"] for p in local.values()} == {1.0 * TDF}
    bmv2 = mininet_nic_ports(slow, "nic0", "bmv2")
    assert {p["delay_us"] for p in bmv2.values()} == {4 * 1.0 * TDF}  # 4 links of 1 us
