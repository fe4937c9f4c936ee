"""What a run reports: goodput timelines, counters, EV states, repaths, plots."""

from __future__ import annotations

from pathlib import Path

import pytest

from vfabric import VirtualFabric, VirtualFabricError
from vfabric.plots import PlotRun, ev_state_counts, planes_differ, write_scenario_plot

from .conftest import SIZE, cut_run


def test_goodput_timelines_add_up_to_what_was_delivered() -> None:
    fabric = VirtualFabric("tiny", seed=1, bin_ns=5_000)
    t = fabric.transfer("nic0", "nic3", SIZE)
    assert fabric.run()
    g = fabric.goodput(20_000)
    assert g["bin_ns"] == 20_000 and len(g["t_ns"]) == len(g["per_plane"][0])
    delivered = sum(sum(s) for s in g["per_plane"].values()) * 20_000 / 8
    # plus retransmissions and tail probes (data packets too), at most a few packets here
    extra = t.as_dict()["retransmitted_bytes"] + 4 * 4096
    assert SIZE <= round(delivered) <= SIZE + extra
    # nic0 -> nic3 crosses a T1 on every path: what leaves the T1s is what nic3 gets
    via_t1 = sum(sum(s) for s in g["per_t1"].values()) * 20_000 / 8
    assert round(via_t1) == round(delivered)
    with pytest.raises(VirtualFabricError, match="multiple"):
        fabric.goodput(7_000)


def test_counters_and_ev_states_of_a_cut() -> None:
    fabric = cut_run(seed=2)
    results = fabric.results()
    cut = results["links"]["p0-t0-0->p0-t1-0"]
    assert cut["drops"]["link_down"] > 0 and results["planes"][0]["wire_drops"] > 0
    assert results["planes"][1]["wire_drops"] == 0
    states = results["ev_states"]
    assert any(s["to"] == "ASSUMED_BAD" and s["nic"] == "nic0" for s in states)
    assert all(s["t_ns"] >= 20_000 for s in states if s["to"] == "ASSUMED_BAD")
    sent = results["evs"]["nic0"]["tx"]
    assert sum(row["dropped"] for row in sent.values()) == sum(cut["drops"].values())
    assert results["switches"]["p0-t1-0"]["traversals"] > 0


def test_ev_state_counts_follow_the_changes() -> None:
    changes = [
        {"t_ns": 10, "nic": "a", "qpn": 1, "ev": 5, "from": "GOOD", "to": "ASSUMED_BAD"},
        {"t_ns": 20, "nic": "a", "qpn": 1, "ev": 6, "from": "GOOD", "to": "SKIP"},
        {"t_ns": 30, "nic": "b", "qpn": 1, "ev": 7, "from": "GOOD", "to": "SKIP"},
        {"t_ns": 40, "nic": "a", "qpn": 1, "ev": 5, "from": "ASSUMED_BAD", "to": "GOOD"},
    ]
    times, series = ev_state_counts(changes, 4, nic="a")
    assert times == [0, 10, 20, 40]
    assert series == {
        "GOOD": [4, 3, 2, 3],
        "SKIP": [0, 0, 1, 1],
        "ASSUMED_BAD": [0, 1, 1, 0],
    }


def test_run_plot_is_a_png(tmp_path: Path) -> None:
    fabric = cut_run(seed=2)
    run = PlotRun("mrc", fabric.goodput(), trims={"p0-t0-0->p0-t1-0": 3})
    assert planes_differ([run])  # plane 0 lost its cut path: one small panel per plane
    path = write_scenario_plot(
        tmp_path / "p" / "run.png",
        [run, PlotRun("roce", fabric.goodput())],
        title="t",
        end_ns=fabric.now,
        events=[(20_000, "cut"), (60_000, "restore")],
        spans=[(20_000, 60_000, "down")],
        capacity_gbps=200,
        ev_changes=fabric.ev_state_changes(),
        total_evs=256,
        ev_nic="nic0",
        focus_plane=0,
    )
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_a_plot_with_a_log_time_axis_beyond_the_short_run_is_a_png(tmp_path: Path) -> None:
    fabric = cut_run(seed=2)
    path = write_scenario_plot(
        tmp_path / "log.png",
        [PlotRun("mrc", fabric.goodput()), PlotRun("roce", fabric.goodput())],
        title="t",
        end_ns=fabric.now * 100,
        events=[(20_000, "cut")],
        linear_until_ns=fabric.now,
    )
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_planes_alike_share_one_panel() -> None:
    same = {"bin_ns": 10, "t_ns": [0, 10], "per_plane": {0: [5.0, 5.0], 1: [5.0, 5.2]}}
    assert not planes_differ([PlotRun("a", same)])
    apart = {**same, "per_plane": {0: [5.0, 5.0], 1: [5.0, 0.0]}}
    assert planes_differ([PlotRun("a", apart)])


def test_background_traffic_is_not_waited_for_and_roce_messages_complete_in_order() -> None:
    fabric = VirtualFabric("tiny", seed=1)
    t = fabric.transfer("nic0", "nic3", 1 << 20, transport="roce", messages=4)
    background = fabric.transfer("nic1", "nic2", 16 << 20, background=True)
    assert fabric.run()
    assert t.intact and not background.finished
    done = t.as_dict()["message_completion_ns"]
    assert done == sorted(done) and done[-1] == t.completion_ns
    fabric.run(until_ns=fabric.now + 8_000_000)
    assert background.intact


def test_retransmitted_bytes_are_per_connection_keyed_by_both_ends() -> None:
    """Two connections of one sender whose receivers have the same QPN: only the one whose
    receiver's access link loses packets reports retransmissions."""
    from topologies.events import LinkRef, LossEvent

    fabric = VirtualFabric("tiny", seed=1)
    lossy = fabric.transfer("nic0", "nic3", SIZE // 4)
    clean = fabric.transfer("nic0", "nic2", SIZE // 4)
    fabric.schedule(LossEvent(at_ns=0, links=(LinkRef("nic3", "p0-t0-1"),), rate=0.05))
    assert fabric.run(until_ns=50_000_000)
    assert lossy.receiver is not None and clean.receiver is not None
    assert lossy.receiver.qpn == clean.receiver.qpn  # what a QPN-only key confused
    assert lossy.intact and clean.intact
    assert fabric.transfer_result(lossy)["retransmitted_bytes"] > 0
    assert fabric.transfer_result(clean)["retransmitted_bytes"] == 0
